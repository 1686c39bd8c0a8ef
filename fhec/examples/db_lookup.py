"""Encrypted database lookup in BGV, after HElib's BGV_country_db_lookup (F1 §7, Table 3).

HElib's example stores a key-value table of European countries and their capitals (47
entries), every key and every value encrypted, one ciphertext each. An encrypted query
is compared with every key by Fermat's little theorem: for a prime t,

    mask_i = 1 - (key_i - query)^(t-1)      (1 where the key matches, 0 elsewhere)

then each mask multiplies its value and the masked values are summed: the ciphertext
holding the matching capital (zero when no key matches). Depth: log2(t-1) squarings for
the power, plus one ciphertext product with the value.

F1 runs it at N = 16K and L = 17. fhec's BGV batches with a prime t ≡ 1 mod 2N, and the
smallest such prime at N = 2^14 is 65537: x^(t-1) = x^65536 is 16 squarings, and the
value product the 17th level, which is F1's L = 17 exactly. HElib's example (t = 131,
48 slots) compares the query with a key character by character and multiplies the
per-character masks together (a product over the slots, log2(slots) more levels); at
t = 65537 that product does not fit in L = 17, so here a key is one number mod t (say
the country's index or a 16-bit hash of its name) replicated in every slot, and the
value is the capital's name, one character per slot. The values are stored one level
above the last (level 1), where the mask meets them: the server mod-switches its
encrypted table down once, not per query.

F1's setting is not 128-bit secure by the HE standard: 17 levels of ~30-bit primes make
log Q·P about 555 bits, beyond the 438 the standard allows at N = 2^14 (F1 states no
security level for it), so the paper-size program passes security=None, as fhec's
f1-ckks-bootstrap preset does for F1's CKKS bootstrapping.

The module's program is the same lookup, small: 4 entries at N = 2^10 with t = 12289
(x^12288 in 14 levels; INSECURE, security=None) so that `fhec check` is quick.

Run:  fhec examples copy ex && fhec check ex/db_lookup.py
"""

from __future__ import annotations

import fhec

COUNTRIES = 47
"""Entries of HElib's countries_dataset.csv (European countries and their capitals)."""


def db_lookup(entries: int = COUNTRIES, N: int = 2**14, plain_modulus: int = 65537, levels: int = 17,
              security: int | None = None) -> fhec.Program:
    """The lookup (module doc) over `entries` encrypted key-value pairs: inputs ``query``,
    ``key_i`` and ``value_i`` (values at level 1); output ``value``."""
    params = fhec.BGVParams(N=N, levels=levels, plain_modulus=plain_modulus, security=security)
    t = params.plain_modulus
    p = fhec.Program(f"db_lookup_{entries}_N{N}", params)
    query = p.input("query")
    found = None
    for i in range(entries):
        key, value = p.input(f"key_{i}"), p.input(f"value_{i}", level=1)
        mask = 1 - (key - query) ** (t - 1)  # Fermat: 1 unless key = query; log2(t - 1) levels
        hit = mask * value
        found = hit if found is None else found + hit
    p.output("value", found)
    return p


def suite_rows() -> list[dict]:
    """F1 Table 3's DB lookup row (`fhec.suites`)."""
    return [{
        "suite": "f1", "name": "DB lookup", "variant": None, "target": "f1", "paper_ms": 4.36,
        "paper_source": "F1 Table 3", "build": db_lookup, "needs": None,
        "note": "HElib's 47 countries, t = 65537 (16 squarings + the value product = L 17); a key is one "
                "number per slot, not HElib's per-character compare and product over slots",
    }]


p = db_lookup(entries=4, N=2**10, plain_modulus=12289, levels=15, security=None)
