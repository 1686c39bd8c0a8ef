"""Encrypted database lookup in BGV, after HElib's BGV_country_db_lookup (F1 §7, Table 3).

HElib's example stores a key-value table of European countries and their capitals (47
entries, `COUNTRIES`), every key and every value an encrypted string, one character (byte)
per slot. For each entry it computes a per-character equality mask of key and query
(Fermat: 1 − (key − query)^(p−1) at p = 131), multiplies the masks of all slots together
(`totalProduct` of the mask rotated to every one of its 48 slots), multiplies that by the
entry's value, and sums over the entries: the ciphertext holding the matching capital
(zeros when no key matches). This module is that program at F1's N = 2^14, L = 17.

What changes at N = 2^14, and why:

* **t = 65537.** fhec's BGV batches with a prime t ≡ 1 mod 2N; 65537 is the smallest at
  N = 2^14. Fermat's x^(t−1) would be 16 squarings, which leaves no room for the product
  over the string in L = 17.
* **HElib's equality domain, 7-bit characters** (`CHAR_SPAN`). HElib's Fermat test at
  p = 131 is exact for characters below p, i.e. for 7-bit ASCII, which every key is.
  Keys and the query are 7-bit here too, so the difference d = key − query of one slot
  lies in [−127, 127], and "d = 0" is a polynomial there: 1 at 0 and 0 at every other d.
  It is even, so it is g(d²) with g of degree 127, g(y) = Π_{a=1..127} (1 − y/a²) mod t
  (`equality_coefficients`): one squaring and a degree-127 series, evaluated by fhec's
  baby-step / giant-step Paterson–Stockmeyer (`Cipher.polynomial`, ⌈log2 128⌉ = 7
  levels, 24 products). 8 levels where Fermat takes 16. A query or key with a byte above
  127 would get a wrong answer, not a refusal, so `encode` (and `lookup_inputs`) raise
  `fhec.ParameterError` for it. ``span=FULL_BYTE_SPAN`` compares any byte (UTF-8) with a
  degree-255 series: one level and 9 products more per entry (it starts at level 16; each
  hit keeps the same 8.0–8.2 bits of budget at level 0, measured at three entries). Values may hold any byte in
  either mode: they are only multiplied by the mask.
* **32-bit level primes** (`modulus_bits=32`, F1's word; fhec's default is 30 bits for
  128-bit security at N = 2^13, and this setting is not secure anyway, below). A BGV
  product multiplies the two noises (and √N), and the modulus switch after it divides by
  the level's prime, so noise stays at its floor (about 2^21 here: the rounding of a
  switch times t) only while floor + log2 √N + floor − prime bits ≤ floor, i.e. for primes
  of at least floor + 7 bits. 30-bit primes leave two bits of margin, which the series'
  chain of squarings (u^16 → u^128) overruns: measured with `fhec.evaluate` (with the
  degree-255 series; not re-measured), the budget is gone three products into the window
  (fhec's average-case estimate, which said +34 bits at the 47-entry output, misses it);
  with 32-bit primes measured and estimated budgets agree within a bit at every stage.
* **One modulus switch after the series.** Its coefficients are integers up to t/2 =
  2^16, and multiplying by them multiplies the noise (the series' result is 16 bits above
  the floor; fhec folds each plaintext-factor alignment into its coefficient, so it is one
  such product per term, not two); the window's products then square that excess. One
  more modulus switch takes the mask back to the floor.
* **A window of W = 32 slots** (`WINDOW`): the longest key, "Bosnia and Herzegovina", has
  22 bytes, padded to a power of two for the rotate-and-multiply product (below). HElib
  uses all 48 of its slots; here a row has 8192 slots, and a product over all of them
  would take 13 levels.
* **The product over the window by doubling**: m ← m · rot(m, 2^s) for s = 0..4 leaves in
  slot j the product of slots j..j+31. Each string is stored with a copy of itself in the
  next W slots (`encode`), so slots j..j+31 are the W characters in a cyclic order, and
  every slot of the window holds the whole product, as every slot does after HElib's
  cyclic `totalProduct`: no mask-and-broadcast step. Doubling takes log2 W = 5 rotations
  and 5 products, where HElib's product of W rotated copies (`total_product=True`) takes
  W − 1 = 31 of each for the same depth 5 and the same result.
* **The value product** is the last level; values are stored at that level (the server
  mod-switches its encrypted table down once, not per query), their bytes once, in slots
  0..W−1, where the mask is the entry's match bit. Beyond the window the mask is a partial
  product (a suffix of the string matching), so a value's slots there must be, and are, 0.

Depth (`lookup_depth`): 1 (d²) + 7 (series) + 1 (modulus switch) + 5 (window) + 1 (value)
= 15 of F1's L = 17. **The lookup starts no higher than it needs**: the query and the keys
are encrypted at level 15 and the output lands on level 0 (`OUTPUT_LEVEL`), as a BGV
library that modulus-switches as early as noise allows (HElib) would run it: fresh
ciphertexts at a lower level are ones with fewer primes, and every key switch and hint
there is smaller (a key switch with F1's one-special-prime hints costs about L(L+1) limb
products; the relinearization hint is 34 MiB at level 15 against 43 MiB at level 17, of a
64 MiB scratchpad). The keys, like the values, are the server's table, stored at the
level where the lookup meets them. The query is not encrypted at the top and switched
down, because a switched ciphertext's plaintext factor is q^−1 mod t, and aligning it
with the keys' factor 1 multiplies its noise by up to t/2 before the squaring: the series
then outgrows the floor. Noise at level 0, measured over all 47 entries (each entry's hit
by the 1-entry program with one key set and one query ciphertext, the 47 summed with the
evaluator's add): 8.0–8.2 bits per hit, 5.2 bits left after the sum, with the right
capital on every slot for "Andorra" and zeros for "Andorr" (fhec's estimate: 4.3 bits).

F1's setting is not 128-bit secure by the HE standard: 17 levels of 32-bit primes make
log Q·P 608 bits, beyond the 438 the standard allows at N = 2^14 (F1 states no
security level for it), so the paper-size program passes security=None, as fhec's
f1-ckks-bootstrap preset does for F1's CKKS bootstrapping.

The module's program is the same lookup, small: 3 entries at N = 2^10 with t = 12289 (the
smallest batching prime there; INSECURE, security=None) so that `fhec check` is quick.
`lookup_inputs` encodes a query and a table for `fhec.evaluate`.

Run:  fhec examples copy ex && fhec check ex/db_lookup.py
"""

from __future__ import annotations

import fhec
from fhec.ir.he import HeOp
from fhec.ir.he_polynomial import degree

COUNTRIES = (
    ("Albania", "Tirana"), ("Andorra", "Andorra la Vella"), ("Austria", "Vienna"), ("Belarus", "Minsk"),
    ("Belgium", "Brussels"), ("Bosnia and Herzegovina", "Sarajevo"), ("Bulgaria", "Sofia"), ("Croatia", "Zagreb"),
    ("Czech Republic", "Prague"), ("Denmark", "Copenhagen"), ("England", "London"), ("Estonia", "Tallinn"),
    ("Finland", "Helsinki"), ("France", "Paris"), ("Germany", "Berlin"), ("Greece", "Athens"),
    ("Hungary", "Budapest"), ("Iceland", "Reykjavík"), ("Ireland", "Dublin"), ("Italy", "Rome"),
    ("Latvia", "Riga"), ("Liechtenstein", "Vaduz"), ("Lithuania", "Vilnius"), ("Luxembourg", "Luxembourg"),
    ("Malta", "Valletta"), ("Moldova", "Chisinau"), ("Monaco", "Monaco"), ("Montenegro", "Podgorica"),
    ("Netherlands", "Amsterdam"), ("Northern Ireland", "Belfast"), ("Norway", "Oslo"), ("Poland", "Warsaw"),
    ("Portugal", "Lisbon"), ("Romania", "Bucharest"), ("Russia", "Moscow"), ("San Marino", "San Marino"),
    ("Scotland", "Edinburgh"), ("Serbia", "Belgrade"), ("Slovakia", "Bratislava"), ("Slovenia", "Ljubljana"),
    ("Spain", "Madrid"), ("Sweden", "Stockholm"), ("Switzerland", "Bern"), ("Turkey", "Ankara"),
    ("Ukraine", "Kiev"), ("Vatican City", "Vatican City"), ("Wales", "Cardiff"),
)
"""The key-value pairs of HElib's countries_dataset.csv (European countries and their
capitals, in its order): the table's size, 47 entries, is the suite row's."""

CHAR_SPAN = 127
"""Keys and queries are 7-bit ASCII, HElib's exactness domain (module doc), so a slot's
difference key − query lies in [−127, 127]; `FULL_BYTE_SPAN` is the byte mode."""

FULL_BYTE_SPAN = 255
"""Any byte (UTF-8) in keys and queries: differences in [−255, 255], a degree-255 series."""


def _window(strings) -> int:
    longest = max(len(s.encode()) for s in strings)
    return 1 << (longest - 1).bit_length()


WINDOW = _window(s for pair in COUNTRIES for s in pair)
"""Slots a string occupies: the longest key or value (22 bytes) padded to a power of two, 32."""


OUTPUT_LEVEL = 0
"""The level the lookup's result lands on: the levels above it are the lookup's own,
started no higher (module doc). Level 0 leaves the 47-entry sum 5.2 bits of noise budget,
measured (docs/suites.md); the estimate says 4.3."""


def equality_coefficients(t: int, span: int = CHAR_SPAN) -> list[int]:
    """Power-basis coefficients mod t of g(y) = Π_{a=1..span} (1 − y/a²): g(d²) is 1 for
    d = 0 and 0 for every other d in [−span, span]. Needs t > 2·span (then the squares a²
    are distinct and nonzero mod t)."""
    if t <= 2 * span:
        raise fhec.ParameterError(f"t = {t} must exceed 2·{span} for the squares 1..{span}² to be distinct mod t; "
                                  f"use a larger plain_modulus or a smaller character span.")
    coeffs = [1]
    for a in range(1, span + 1):
        root = pow(a * a, -1, t)  # (1 − y/a²) = 1 − root·y
        coeffs = [(c - root * prev) % t for c, prev in zip(coeffs + [0], [0] + coeffs)]
    return coeffs


def encode(s: str, slots: int, window: int = WINDOW, copies: int = 2, span: int | None = None) -> list[int]:
    """A string's bytes in slots 0.., zero-padded to `window`, `copies` times (keys and the
    query twice: the copy makes the window's rotations cyclic, module doc; values once),
    then zeros: `slots` values in all. `span`: the largest byte the equality test is exact
    for (keys and the query; values take any byte): a larger one raises
    `fhec.ParameterError`, since the lookup would return garbage for it, not refuse it."""
    b = s.encode()
    if len(b) > window:
        raise fhec.ParameterError(f"{s!r} has {len(b)} bytes, more than the {window}-slot window; "
                                  f"build db_lookup with a larger window (a power of two).")
    if span is not None and max(b, default=0) > span:
        raise fhec.ParameterError(
            f"{s!r} has byte {max(b)}, outside the lookup's equality domain 0..{span} (7-bit ASCII, as HElib's p = 131 "
            f"makes it); build db_lookup(span=FULL_BYTE_SPAN) to compare any byte.")
    block = list(b) + [0] * (window - len(b))
    return (block * copies + [0] * slots)[:slots]


def decode(values) -> str:
    """The string in a lookup's output slots (bytes up to the first zero)."""
    out = bytearray()
    for v in values:
        if int(v) == 0:
            break
        out.append(int(v))
    return out.decode(errors="replace")


def lookup_depth(span: int = CHAR_SPAN, window: int = WINDOW) -> int:
    """Levels one entry's lookup consumes: d² (1), the series in d² of degree `span`
    (⌈log2(span + 1)⌉), the modulus switch after it (1), the window product
    (log2 `window`) and the value product (1)."""
    return 1 + span.bit_length() + 1 + (window.bit_length() - 1) + 1


def db_lookup(entries: int = len(COUNTRIES), N: int = 2**14, plain_modulus: int = 65537, levels: int = 17,
              window: int = WINDOW, total_product: bool = False, modulus_bits: int = 32,
              security: int | None = None, span: int = CHAR_SPAN, output_level: int = OUTPUT_LEVEL) -> fhec.Program:
    """The lookup (module doc) over `entries` encrypted key-value pairs: inputs ``query``,
    ``key_i`` and ``value_i``, each at the level where the lookup meets it (module doc);
    output ``value`` at `output_level`. `span`: the largest character the
    equality test is exact for (`CHAR_SPAN`, 7-bit; `FULL_BYTE_SPAN` for any byte).
    `total_product` takes the window's product as HElib does (W − 1 rotated copies
    multiplied in a balanced tree) instead of by doubling. Raises `fhec.ParameterError`
    for a window that is not a power of two or a lookup deeper than the levels."""
    if window < 1 or window & (window - 1):
        raise fhec.ParameterError(f"window = {window} must be a power of two (the product over it doubles); "
                                  f"use {1 << max(0, window - 1).bit_length()}.")
    params = fhec.BGVParams(N=N, levels=levels, plain_modulus=plain_modulus, modulus_bits=modulus_bits,
                            security=security)
    g = equality_coefficients(params.plain_modulus, span)
    start = output_level + lookup_depth(span, window)
    if output_level < 0 or start > params.top_level:
        raise fhec.ParameterError(
            f"the lookup takes {lookup_depth(span, window)} levels above output_level = {output_level}, but the "
            f"parameters have {params.top_level}; give more levels or a lower output_level (>= 0).")
    p = fhec.Program(f"db_lookup_{entries}_N{N}", params)
    query = p.input("query", level=start)  # encrypted where the lookup starts (module doc)
    found = None
    for i in range(entries):
        d = p.input(f"key_{i}", level=start) - query
        mask = (d * d).polynomial(g).mod_switch()  # 1 where the characters agree; noise back to the floor
        mask = _rotated_product(mask, window) if total_product else _doubling_product(mask, window)
        hit = mask * p.input(f"value_{i}", level=mask.level)
        found = hit if found is None else found + hit
    p.output("value", found)
    return p


def _doubling_product(m, window: int):
    """Slot j ← Π of slots j..j+window−1: log2(window) rotations and products."""
    step = 1
    while step < window:
        m = m * m.rotate(step)
        step *= 2
    return m


def _rotated_product(m, window: int):
    """The same product as HElib's totalProduct of the rotated copies: window − 1 rotations,
    multiplied in a balanced tree (depth log2(window))."""
    factors = [m] + [m.rotate(k) for k in range(1, window)]
    while len(factors) > 1:
        factors = [a * b for a, b in zip(factors[::2], factors[1::2])] + factors[len(factors) & ~1:]
    return factors[0]


def lookup_inputs(p: fhec.Program, query: str, table=COUNTRIES, window: int = WINDOW) -> dict:
    """`fhec.evaluate` inputs of a `db_lookup` program: the query and the first entries of
    `table`, encoded (`encode`); decode the output's slots with `decode`. A query or key
    with a character outside the program's equality domain (the degree of its series)
    raises `fhec.ParameterError`."""
    n = p.params.slots
    entries = sum(name.startswith("key_") for name in p.ir.inputs)
    span = degree(next(p.ir.nodes_of(HeOp.POLYNOMIAL)).attr("coeffs"))
    inputs = {"query": encode(query, n, window, span=span)}
    for i, (key, value) in enumerate(table[:entries]):
        inputs[f"key_{i}"] = encode(key, n, window, span=span)
        inputs[f"value_{i}"] = encode(value, n, window, copies=1)
    return inputs


def suite_rows() -> list[dict]:
    """F1 Table 3's DB lookup row (`fhec.suites`)."""
    return [{
        "suite": "f1", "name": "DB lookup", "variant": None, "target": "f1", "paper_ms": 4.36,
        "paper_source": "F1 Table 3", "build": db_lookup, "needs": None,
        "note": "HElib's 47 countries, per-character compare of 7-bit keys as HElib's p = 131 (degree-127 equality "
                "series in d² at t = 65537), product over a 32-slot window by doubling, value product: depth 15 of "
                "L 17, levels 15 to 0, 32-bit level primes",
    }]


p = db_lookup(entries=3, N=2**10, plain_modulus=12289, levels=16, security=None)
