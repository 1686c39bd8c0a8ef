"""Cryptographic randomness for key generation, encryption and decryption flooding.

Every random value fhec draws comes from a `Sampler`: SHAKE-256 (FIPS 202, from
`hashlib`) used as a keyed stream in counter mode. Block i of a sampler with key K is

    SHAKE-256(encode("fhec/block", K, i)), truncated to the bytes requested,

where ``encode`` length-prefixes every part, so no two (label, key, counter) triples
hash the same input. The 256-bit key K is either fresh from the operating system
(``seed=None``: `secrets.token_bytes`, i.e. ``getrandom``) or derived from a user seed
and a label (``seed=7``): ``K = SHAKE-256(encode("fhec/seed", seed, label))[:32]``.
This is how SEAL expands the seed of its PRNG (BLAKE2xb or SHAKE-256), and every
value of a seeded run can be reproduced from the seed alone.

`Sampler.child(label)` derives an independent stream for a sub-task (the secret, one
key-switching key, one input), so what one part draws never depends on how much
another part drew, nor on the order in which they run.

Bytes become values with vectorized numpy, without bias:

* uniform mod q: per prime, the cheaper of two exact plans (`_uniform_plan`): words
  masked to bits(q) and kept below q, or words with at least 6 spare bits kept below
  the largest multiple of q that fits, then reduced mod q;
* ternary: one byte per coefficient, 255 rejected, then ``byte mod 3 − 1``;
* Gaussian: the discrete Gaussian ``P(x) ∝ exp(−x²/2σ²)`` on ``|x| ≤ ceil(6σ)`` (the HE
  standard's truncation), by inversion of a 64-bit cumulative distribution table (CDT):
  one uniform 64-bit word per coefficient. A guide table indexed by the word's top 16
  bits settles almost every word; the rest take a binary search. Table entries are
  exact to 2^-64 (computed with `decimal`), so every probability is within 2^-64 of the
  truncated distribution's. (A CDT rather than Box–Muller: it samples the discrete
  distribution the HE standard specifies, with integer comparisons only.)

Rejection draws a little more than the expected need in one block; the rare shortfall
is made up from the next block, so results stay deterministic for a seed.

Seeds (`check_seed`): a non-negative int (numpy ints too; not bool), bytes, None, or a
`Sampler` (a stream the caller manages). Anything else raises `SeedError`.
"""

from __future__ import annotations

import decimal
import functools
import hashlib
import math
import secrets
import threading
from typing import Union

import numpy as np

from fhec.errors import ParameterError, SeedError
from fhec.ring.ntt import ntt
from fhec.ring.rns import to_rns
from fhec.schemes.params import ERROR_STDDEV

_KEY_BYTES = 32
_SPARE_BITS = 6  # uniform mod q: the rejection probability stays below 2^-_SPARE_BITS
_BYTE_LIMIT = 255  # ternary: bytes 0..254 are 85 whole periods of 3; 255 is rejected
_STRAGGLER_SIGMAS = 8  # rejection: draw this many standard deviations above the expected need
_TAIL_SIGMAS = 6  # Gaussian truncation, as in the HE standard
_PAD = 8  # extra bytes after the candidates, so that the last k-byte word can be read as 8 bytes
_GUIDE_BITS = 16  # Gaussian: the index of a 64-bit word's top bits into the guide table
_MOD_COST_BYTES = 1  # a uint64 `%` costs about as much time as hashing one more byte

Seed = Union[int, bytes, "Sampler", None]


def _encode(*parts: bytes) -> bytes:
    """Length-prefixed concatenation: distinct part lists never give the same bytes."""
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def _describe(seed) -> str:
    text = repr(seed)
    return text if len(text) <= 40 else text[:37] + "..."


_SEED_FIX = (
    "pass a non-negative int (e.g. seed=7) or non-empty bytes for a reproducible experiment, or seed=None "
    "(the default) for fresh randomness from the operating system"
)


def check_seed(seed) -> Seed:
    """`seed` as fhec uses it: a non-negative Python int, bytes, None, or a `Sampler`.

    numpy integers are accepted (converted to int); bool, negative ints, empty bytes,
    floats, strings and numpy Generators (not a cryptographic source) raise `SeedError`.
    """
    if seed is None or isinstance(seed, Sampler):
        return seed
    if isinstance(seed, (bool, np.bool_)):
        raise SeedError(f"seed={seed!r} is a bool, not a seed: {_SEED_FIX}.")
    if isinstance(seed, (int, np.integer)):
        if seed < 0:
            raise SeedError(f"seed={int(seed)} is negative: {_SEED_FIX}.")
        return int(seed)
    if isinstance(seed, (bytes, bytearray, memoryview)):
        if not len(seed):  # no bytes to key the stream with: a constant, not a seed
            raise SeedError(f"seed={bytes(seed)!r} is empty, so it seeds nothing: {_SEED_FIX}.")
        return bytes(seed)
    if isinstance(seed, np.random.Generator):
        raise SeedError(
            f"seed={_describe(seed)} is a numpy Generator, which is not a cryptographic source: {_SEED_FIX}."
        )
    raise SeedError(f"seed={_describe(seed)} ({type(seed).__name__}) is not a valid seed: {_SEED_FIX}.")


def seed_bytes(seed: int | bytes) -> bytes:
    """The canonical byte string of a checked int or bytes seed (``7`` and ``b"7"`` differ)."""
    if isinstance(seed, int):
        return b"int:" + str(seed).encode()
    return b"bytes:" + seed


def numpy_seed(seed) -> int | None:
    """A seed for `numpy.random.default_rng` (test data, never key material): the int
    itself, a 128-bit digest of bytes, None as is. Raises `SeedError` like `check_seed`."""
    seed = check_seed(seed)
    if seed is None or isinstance(seed, int):
        return seed
    if isinstance(seed, Sampler):
        return int.from_bytes(seed.random_bytes(16), "little")
    return int.from_bytes(hashlib.shake_256(_encode(b"fhec/numpy", seed)).digest(16), "little")


class SeedCounters:
    """How many streams each explicit seed has given out: ``next(seed)`` is 0, 1, 2...

    A `KeySet` owns one, so that two encryptions under the same keys and seed draw
    different streams while a rerun of the same script (fresh keys) draws the same ones.
    Thread-safe; pickles with its counts, so an unpickled copy continues the count.
    """

    def __init__(self) -> None:
        self._counts: dict[bytes, int] = {}
        self._lock = threading.Lock()

    def next(self, seed: int | bytes) -> int:
        # Count under a digest, not the seed itself: the counts pickle with the key set.
        key = hashlib.shake_256(_encode(b"fhec/counter", seed_bytes(seed))).digest(16)
        with self._lock:
            n = self._counts.get(key, 0)
            self._counts[key] = n + 1
        return n

    def __getstate__(self) -> dict:
        with self._lock:
            return {"counts": dict(self._counts)}

    def __setstate__(self, state: dict) -> None:
        self._counts = dict(state["counts"])
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SeedCounters({len(self._counts)} seeds)"


class Sampler:
    """A cryptographic random stream (see the module doc). Not thread-safe: give each
    thread its own `child`.

    `seeded` tells whether the stream is reproducible from a user seed. The key never
    appears in `repr`.
    """

    __slots__ = ("_key", "_blocks", "seeded")

    def __init__(self, key: bytes, seeded: bool):
        if not isinstance(key, bytes) or len(key) != _KEY_BYTES:
            raise SeedError(
                f"a Sampler key is {_KEY_BYTES} bytes, not {_describe(key)}; build one with "
                f"Sampler.from_seed(seed, label) or Sampler.fresh()."
            )
        self._key = key
        self._blocks = 0
        self.seeded = seeded

    @classmethod
    def fresh(cls) -> "Sampler":
        """A stream keyed with 256 bits from the operating system's CSPRNG."""
        return cls(secrets.token_bytes(_KEY_BYTES), seeded=False)

    @classmethod
    def from_seed(cls, seed, label: str) -> "Sampler":
        """The stream of (`seed`, `label`); `seed=None` gives a `fresh` one, a `Sampler`
        gives its `child(label)`. Raises `SeedError` for an invalid seed."""
        seed = check_seed(seed)
        if seed is None:
            return cls.fresh()
        if isinstance(seed, Sampler):
            return seed.child(label)
        key = hashlib.shake_256(_encode(b"fhec/seed", seed_bytes(seed), label.encode())).digest(_KEY_BYTES)
        return cls(key, seeded=True)

    def child(self, label: str) -> "Sampler":
        """An independent stream for the sub-task `label` (same label, same stream)."""
        key = hashlib.shake_256(_encode(b"fhec/child", self._key, label.encode())).digest(_KEY_BYTES)
        return Sampler(key, self.seeded)

    def __repr__(self) -> str:
        return f"Sampler({'seeded' if self.seeded else 'OS entropy'}, {self._blocks} blocks drawn)"

    # -- bytes ---------------------------------------------------------------------------

    def random_bytes(self, n: int) -> bytes:
        """The next block of the stream, `n` bytes long."""
        block = hashlib.shake_256(_encode(b"fhec/block", self._key, self._blocks.to_bytes(8, "little"))).digest(n)
        self._blocks += 1
        return block

    def integer(self, bits: int) -> int:
        """A uniform integer in [0, 2^bits)."""
        raw = int.from_bytes(self.random_bytes((bits + 7) // 8), "little")
        return raw & ((1 << bits) - 1)

    def _collect(self, count: int, nbytes: int, accept: float, convert) -> np.ndarray:
        """`count` values by rejection: candidates of `nbytes` bytes each, a fraction
        `accept` of which survive `convert(raw uint8 array) -> accepted values`.
        The raw array holds ``candidates · nbytes`` bytes plus 8 of padding (`_le_words`)."""
        if count <= 0:
            return convert(np.zeros(_PAD, dtype=np.uint8))[:0]  # empty, with the values' dtype
        parts, have = [], 0
        while have < count:
            need = count - have
            sd = math.sqrt(need * (1.0 - accept)) / accept
            candidates = math.ceil(need / accept + _STRAGGLER_SIGMAS * sd) + 16
            raw = np.frombuffer(self.random_bytes(candidates * nbytes + _PAD), dtype=np.uint8)
            got = convert(raw)
            parts.append(got)
            have += got.size
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return out[:count]

    # -- distributions -------------------------------------------------------------------

    def uniform_mod(self, q: int, count: int) -> np.ndarray:
        """`count` integers uniform in [0, q), uint64 (1 < q < 2^64)."""
        k, mask, limit, reduce = _uniform_plan(q)
        qq, mm, ll = np.uint64(q), np.uint64(mask), np.uint64(limit)

        def convert(raw: np.ndarray) -> np.ndarray:
            words = _le_words(raw, k)  # a fresh array: the steps below work in place
            np.bitwise_and(words, mm, out=words)
            words = words[words < ll]
            if reduce:
                np.remainder(words, qq, out=words)
            return words

        return self._collect(count, k, limit / (mask + 1), convert)

    def uniform(self, moduli: tuple[int, ...], N: int, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random polynomial mod each prime, shape (len(moduli), N), uint64,
        written into `out` when given (a uint64 array of that shape).

        Uniform in either domain, so callers use it directly as an NTT-domain polynomial."""
        if out is None:
            out = np.empty((len(moduli), N), dtype=np.uint64)
        for i, q in enumerate(moduli):
            out[i] = self.uniform_mod(q, N)
        return out

    def uniform_symmetric(self, bits: int, N: int) -> np.ndarray:
        """N integers uniform in [−2^bits, 2^bits], int64 (0 ≤ bits ≤ 62)."""
        half = 1 << bits
        return (self.uniform_mod(2 * half + 1, N).astype(np.int64)) - np.int64(half)

    def ternary(self, N: int) -> np.ndarray:
        """A uniform ternary polynomial (coefficients in {−1, 0, 1}), int64."""

        def convert(raw: np.ndarray) -> np.ndarray:
            raw = raw[: raw.size - _PAD]
            return raw[raw < _BYTE_LIMIT]

        kept = self._collect(N, 1, _BYTE_LIMIT / 256, convert)
        return (kept % 3).astype(np.int64) - 1

    def sparse_ternary(self, N: int, h: int) -> np.ndarray:
        """A ternary polynomial with exactly `h` nonzero coefficients (each ±1), int64: the
        positions by a partial Fisher–Yates shuffle (each uniform among those left), the
        signs uniform. The sparse secret of bootstrappable CKKS (its ModRaise overflow I
        is a sum of about h terms)."""
        positions = np.arange(N, dtype=np.int64)
        for i in range(h):
            j = i + int(self.uniform_mod(N - i, 1)[0]) if N - i > 1 else i
            positions[i], positions[j] = positions[j], positions[i]
        out = np.zeros(N, dtype=np.int64)
        out[positions[:h]] = 2 * self.uniform_mod(2, h).astype(np.int64) - 1
        return out

    def gaussian(self, N: int, stddev: float = ERROR_STDDEV) -> np.ndarray:
        """A discrete Gaussian polynomial of parameter `stddev`, truncated at ceil(6σ), int64."""
        table, guide = _gaussian_cdt(float(stddev))
        u = np.frombuffer(self.random_bytes(8 * N), dtype="<u8").astype(np.uint64)
        # The top 16 bits settle the value of all but ~B/2^15 of the words; binary-search the rest.
        index = guide[u >> np.uint64(64 - _GUIDE_BITS)].astype(np.int64)
        unsettled = index < 0
        index[unsettled] = np.searchsorted(table, u[unsettled], side="right")
        return index - table.size // 2


def _uniform_plan(q: int) -> tuple[int, int, int, bool]:
    """How to turn bytes into uniform values mod q: (k, mask, limit, reduce).

    Each candidate is a k-byte little-endian word w, masked to ``w & mask``; it is kept
    when below `limit`, then reduced mod q when `reduce`. Two unbiased plans, and the
    one drawing fewer bytes per kept value (a `%` counted as `_MOD_COST_BYTES`) wins:

    * mask to bits(q), keep w < q (no reduction): best for primes just below a power
      of two, which almost every word hits;
    * k = min(8, ceil((bits(q) + 6) / 8)) bytes, keep w below the largest multiple of q
      not above 2^(8k), reduce mod q: best for primes just above a power of two, where
      the first plan would reject half the words.
    """
    bits = q.bit_length()
    k_mask = -(-bits // 8)
    cost_mask = k_mask * (1 << bits) / q
    k_mod = min(8, -(-(bits + _SPARE_BITS) // 8))
    span = 1 << (8 * k_mod)
    limit_mod = (span // q) * q
    cost_mod = k_mod * span / limit_mod + _MOD_COST_BYTES
    if cost_mask <= cost_mod:
        return k_mask, (1 << bits) - 1, q, False
    return k_mod, span - 1, limit_mod, True


def _le_words(raw: np.ndarray, k: int) -> np.ndarray:
    """The little-endian 8-byte words starting every k bytes of `raw` (k ≤ 8), as uint64:
    word i holds bytes i·k .. i·k + 7, so its low 8k bits are candidate i. `raw` carries
    `_PAD` bytes after the last candidate, so every word lies inside it."""
    count = (raw.size - _PAD) // k
    words = np.ndarray((count,), dtype="<u8", buffer=raw, strides=(k,))
    return words.astype(np.uint64)


@functools.lru_cache(maxsize=8)  # a pure function of σ; keygen samples hundreds of error polynomials
def _gaussian_cdt(stddev: float) -> tuple[np.ndarray, np.ndarray]:
    """(T, guide) for the discrete Gaussian of parameter σ, B = ceil(6σ).

    T (uint64, length 2B): a uniform 64-bit word u gives ``x = #{j : T[j] ≤ u} − B``, so
    ``P(x ≤ j − B) = T[j] / 2^64`` to within 2^-64. guide[p] (int16) is that count for
    every word whose top `_GUIDE_BITS` bits are p, or −1 where a threshold falls inside
    the prefix's range and the count depends on the lower bits."""
    if not (stddev > 0 and math.isfinite(stddev)):
        raise ParameterError(f"stddev={stddev}: a Gaussian needs a positive finite standard deviation.")
    bound = math.ceil(_TAIL_SIGMAS * stddev)
    with decimal.localcontext() as ctx:
        ctx.prec = 40  # 2^-64 needs 20 digits; the rest absorbs rounding of exp and the sums
        two_var = 2 * decimal.Decimal(stddev) ** 2
        weights = [(-decimal.Decimal(x * x) / two_var).exp() for x in range(-bound, bound + 1)]
        total = sum(weights, decimal.Decimal(0))
        thresholds, acc = [], decimal.Decimal(0)
        for w in weights[:-1]:
            acc += w
            thresholds.append(int(acc / total * 2**64))  # int() truncates: floor of a positive value
    table = np.array(thresholds, dtype=np.uint64)
    shift = np.uint64(64 - _GUIDE_BITS)
    starts = np.arange(1 << _GUIDE_BITS, dtype=np.uint64) << shift
    ends = starts | ((np.uint64(1) << shift) - np.uint64(1))
    first, last = np.searchsorted(table, starts, side="right"), np.searchsorted(table, ends, side="right")
    guide = np.where(first == last, first, -1).astype(np.int16)
    for arr in (table, guide):
        arr.setflags(write=False)
    return table, guide


def small_ntt(coeffs: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """NTT-domain RNS form of a small signed polynomial (int64 coefficients)."""
    return ntt(small_rns(coeffs, moduli), moduli)


def small_rns(coeffs: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """Residues (uint64, shape (len(moduli), N)) of signed coefficients; `to_rns` in one
    broadcast step when every |c| is below every modulus (errors, secrets, u)."""
    c = np.asarray(coeffs)
    if c.dtype != np.int64 or int(np.max(np.abs(c), initial=0)) >= min(moduli):
        return to_rns(c, moduli)
    q = np.array(moduli, dtype=np.uint64)[:, None]
    # A negative c is 2^64 + c as uint64; adding q wraps around to q + c, its residue.
    u = c.view(np.uint64)[None, :]
    return np.where(c[None, :] < 0, u + q, np.broadcast_to(u, (len(moduli), c.size)))
