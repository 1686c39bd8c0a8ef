"""Private lookup in BGV: the server returns the value stored under an encrypted key
without learning the key.

The table (keys and values, integers mod t) is plaintext on the server, one entry per
slot. The client's query q is encrypted, replicated in every slot. Equality is tested
with Fermat's little theorem: for a prime t, (q - k)^(t-1) ≡ 1 mod t unless q = k, so

    eq_i = 1 - (q - k_i)^(t-1)      (1 where the key matches, 0 elsewhere)

and the answer is the masked sum  sum_i eq_i * v_i,  which `sum_slots()` leaves in every
slot (rotations within each row, then the row swap).

Batching needs a prime t ≡ 1 mod 2N; at N = 2^10, the smallest ring accelerators such as
F1 accept, t = 12289 (= 6·2048 + 1) is the smallest, so x^12288 takes 14 levels (13
squarings and one product, `x ** k`), plus one for the plaintext mask: levels = 15. Its
modulus is beyond the HE standard's bound for N = 1024, hence `security=None` — a
functional toy; a deployment needs N >= 2^14 with t = 65537 (16 squarings), the size
of `db_lookup.py` (F1's DB lookup).

Run:  fhec examples copy ex && fhec check ex/private_lookup.py
"""

import fhec

params = fhec.BGVParams(N=2**10, levels=15, plain_modulus=12289, security=None)
t = params.plain_modulus

p = fhec.Program("private_lookup", params)
query = p.input("query")
keys = p.plain("keys")
values = p.plain("values")
diff = query - keys
eq = 1 - diff ** (t - 1)  # Fermat: (q - k)^(t-1) is 1 unless q = k
p.output("value", (eq * values).sum_slots())
