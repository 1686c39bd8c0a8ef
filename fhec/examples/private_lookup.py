"""Private lookup in BGV: the server returns the value stored under an encrypted key
without learning the key.

The table (keys and values, integers mod t) is plaintext on the server, one entry per
slot. The client's query q is encrypted, replicated in every slot. Equality is tested
with Fermat's little theorem: for a prime t, (q - k)^(t-1) ≡ 1 mod t unless q = k, so

    eq_i = 1 - (q - k_i)^(t-1)      (1 where the key matches, 0 elsewhere)

and the answer is the masked sum  sum_i eq_i * v_i,  which `sum_slots()` leaves in every
slot (rotations within each row, then the row swap).

t = 257 keeps the exponent small: x^256 is 8 squarings (depth 8), plus one level for
the plaintext mask: levels = 9. Batching needs t ≡ 1 mod 2N, so N <= 128: far below the
HE standard's smallest ring (N = 1024), hence `security=None` — a functional toy; a
real deployment needs N >= 2^13 with a t ≡ 1 mod 2N such as 65537 (16 squarings).

Run:  fhec examples copy ex && fhec check ex/private_lookup.py
"""

import fhec

params = fhec.BGVParams(N=2**7, levels=9, plain_modulus=257, security=None)
t = params.plain_modulus

p = fhec.Program("private_lookup", params)
query = p.input("query")
keys = p.plain("keys")
values = p.plain("values")
diff = query - keys
eq = 1 - diff.polynomial([0] * (t - 1) + [1])  # (q - k)^(t-1) by 8 squarings
p.output("value", (eq * values).sum_slots())
