"""Negacyclic number-theoretic transform over RNS limbs.

For a prime ``q ≡ 1 (mod 2N)`` and ``psi`` a primitive 2N-th root of unity mod ``q``,
the forward transform maps the coefficients of ``a(X)`` in ``Z_q[X]/(X^N + 1)`` to its
values at the N odd powers of ``psi``:

    ntt(a)[i] = a(psi ** e[i]) mod q,   e = ntt_eval_exponents(N),  e[i] = 2*bitrev(i) + 1

where ``bitrev`` reverses the ``log2 N`` bits of ``i``: the output is in bit-reversed
order, exactly as Microsoft SEAL lays it out. Products of polynomials become
element-wise products: ``intt(ntt(a) * ntt(b) mod q)`` is the product mod ``X^N + 1``.

``psi`` defaults to `primitive_2n_root` (the smallest primitive 2N-th root, SEAL's
choice), so transforms agree bit-for-bit with SEAL.

Implementation (Harvey, "Faster arithmetic for number-theoretic transforms", 2014):
Cooley-Tukey forward and Gentleman-Sande inverse butterflies with Shoup-precomputed
twiddles stored in bit-reversed order; values are kept lazily in ``[0, 4q)`` /
``[0, 2q)`` between stages and fully reduced at the end. Needs ``q < 2**62``. Moduli
below 2**50 (which includes 32-bit words) replace Shoup's 128-bit high product with a
double-precision quotient estimate, which vectorizes: see `companions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy

from fhec.errors import InvalidModulusError, InvalidRingDegreeError
from fhec.ring import _kernels as K
from fhec.ring.modarith import MAX_MODULUS_BITS, barrett_constants

__all__ = [
    "NTTTables",
    "ntt",
    "intt",
    "ntt_inplace",
    "intt_inplace",
    "ntt_eval_exponents",
    "bit_reverse_permutation",
    "primitive_2n_root",
]


def _check_ring_degree(N: int) -> None:
    if N < 1 or N & (N - 1):
        raise InvalidRingDegreeError(f"ring degree N={N} is not a power of two")


def _check_ntt_modulus(N: int, q: int) -> None:
    if not 2 < q < (1 << MAX_MODULUS_BITS):
        raise InvalidModulusError(f"NTT modulus {q} must be an odd prime below 2**{MAX_MODULUS_BITS}")
    if (q - 1) % (2 * N):
        raise InvalidModulusError(f"modulus {q} is not congruent to 1 mod 2N = {2 * N}; it has no NTT")
    if not sympy.isprime(q):
        raise InvalidModulusError(f"NTT modulus {q} is not prime")


@lru_cache(maxsize=64)
def bit_reverse_permutation(N: int) -> np.ndarray:
    """Indices ``bitrev(i)`` for ``i < N`` (``log2 N`` bits), int64, read-only."""
    _check_ring_degree(N)
    logn = N.bit_length() - 1
    idx = np.arange(N, dtype=np.int64)
    rev = np.zeros(N, dtype=np.int64)
    for bit in range(logn):
        rev |= ((idx >> bit) & 1) << (logn - 1 - bit)
    rev.setflags(write=False)
    return rev


@lru_cache(maxsize=64)
def ntt_eval_exponents(N: int) -> np.ndarray:
    """Exponents ``e`` (int64, read-only): slot ``i`` of `ntt` output holds ``a(psi**e[i])``.

    ``e[i] = 2 * bitrev(i) + 1`` — bit-reversed Cooley-Tukey order, as in SEAL.
    """
    e = 2 * bit_reverse_permutation(N) + 1
    e.setflags(write=False)
    return e


@lru_cache(maxsize=1024)
def primitive_2n_root(N: int, q: int) -> int:
    """The smallest primitive 2N-th root of unity modulo the prime ``q`` (SEAL's choice).

    Deterministic. Raises `InvalidRingDegreeError` if N is not a power of two and
    `InvalidModulusError` if q is not a prime ≡ 1 (mod 2N) below 2**62.
    """
    _check_ring_degree(N)
    _check_ntt_modulus(N, q)
    # y has order exactly 2N iff y**N == -1 (2N is a power of two), so no factoring is needed.
    cofactor = (q - 1) // (2 * N)
    root = None
    for x in range(2, q):
        y = pow(x, cofactor, q)
        if pow(y, N, q) == q - 1:
            root = y
            break
    assert root is not None  # some x is a generator of Z_q^*, so the loop always finds one
    # The primitive 2N-th roots are exactly root**j for odd j.
    best = root
    step = root * root % q
    cur = root
    for _ in range(N - 1):
        cur = cur * step % q
        if cur < best:
            best = cur
    return best


FLOAT_COMPANION_LIMIT = int(K._FLOAT_PATH_LIMIT)  # 2**50, where the kernels switch paths


def companions(values: np.ndarray, q: int) -> np.ndarray:
    """The precomputed companions of twiddles `values` (uint64, each < q) used by the kernels.

    Their form depends on the size of q, one per kernel path: for ``q < 2**50`` the bits
    of the double ``v / q`` (quotient estimate in floating point, the fast path that
    vectorizes), otherwise ``floor(v * 2**64 / q)`` (Shoup, with a 128-bit high product).
    """
    values = np.asarray(values, dtype=np.uint64)
    if q < FLOAT_COMPANION_LIMIT:
        return (values.astype(np.float64) / float(q)).view(np.uint64)  # v < 2**50: exact in a double
    return K.shoup_companion(values, np.uint64(q))


@dataclass(frozen=True, eq=False)
class _PrimeTables:
    """Twiddles for one prime: psi**bitrev(k) and psi**-bitrev(k) with Shoup companions."""

    w: np.ndarray
    ws: np.ndarray
    winv: np.ndarray
    winvs: np.ndarray
    ninv: int
    ninvs: int
    wn: int
    wns: int


@lru_cache(maxsize=256)
def _prime_tables(N: int, q: int, psi: int) -> _PrimeTables:
    _check_ring_degree(N)
    _check_ntt_modulus(N, q)
    if pow(psi, N, q) != q - 1:
        raise InvalidModulusError(f"psi={psi} is not a primitive {2 * N}-th root of unity mod {q}")
    qs, mu, k, _ = barrett_constants((q,))
    q64, mu64, k64 = qs[0], mu[0], k[0]
    rev = bit_reverse_permutation(N)
    w = K.power_table(np.uint64(psi), N, q64, mu64, k64)[rev]
    winv = K.power_table(np.uint64(pow(psi, -1, q)), N, q64, mu64, k64)[rev]
    ninv = pow(N, -1, q)
    wn = int(winv[1]) * ninv % q if N > 1 else ninv
    return _PrimeTables(
        w=w,
        ws=companions(w, q),
        winv=winv,
        winvs=companions(winv, q),
        ninv=ninv,
        ninvs=int(companions([ninv], q)[0]),
        wn=wn,
        wns=int(companions([wn], q)[0]),
    )


@dataclass(frozen=True, eq=False)
class NTTTables:
    """Precomputed twiddles for one ring degree ``N`` and one tuple of moduli.

    Arrays have shape ``(limbs, N)`` (``q``, ``ninv``, ``wn`` and their Shoup companions:
    ``(limbs,)``) and are read-only. ``w[i, k] = psi_i**bitrev(k)``, ``winv[i, k] =
    psi_i**-bitrev(k)``; ``wn = winv[:, 1] * N**-1`` is folded into the last inverse stage.
    ``ws, winvs, ninvs, wns`` hold the `companions` of ``w, winv, ninv, wn``, whose form
    depends on the size of ``q_i`` (one per kernel path). Build with `NTTTables.get`, which caches.
    """

    N: int
    moduli: tuple[int, ...]
    psis: tuple[int, ...]
    q: np.ndarray
    w: np.ndarray
    ws: np.ndarray
    winv: np.ndarray
    winvs: np.ndarray
    ninv: np.ndarray
    ninvs: np.ndarray
    wn: np.ndarray
    wns: np.ndarray

    @staticmethod
    def get(N: int, moduli: tuple[int, ...], psis: tuple[int, ...] | None = None) -> "NTTTables":
        """Tables for ``(N, moduli)``; ``psis`` overrides the roots (default: the minimal ones).

        Raises `InvalidRingDegreeError` / `InvalidModulusError` for a bad N, a modulus that
        is not a prime ≡ 1 (mod 2N) below 2**62, or a psi that is not a primitive 2N-th root.
        """
        moduli = tuple(int(m) for m in moduli)
        psis = None if psis is None else tuple(int(p) for p in psis)
        return _build_tables(int(N), moduli, psis)


@lru_cache(maxsize=32)
def _build_tables(N: int, moduli: tuple[int, ...], psis: tuple[int, ...] | None) -> NTTTables:
    _check_ring_degree(N)
    if psis is None:
        psis = tuple(primitive_2n_root(N, m) for m in moduli)
    if len(psis) != len(moduli):
        raise InvalidModulusError(f"{len(psis)} roots given for {len(moduli)} moduli")
    per_prime = [_prime_tables(N, m, p) for m, p in zip(moduli, psis)]

    def stack(field: str) -> np.ndarray:
        arr = np.ascontiguousarray(np.array([getattr(t, field) for t in per_prime], dtype=np.uint64))
        arr.setflags(write=False)
        return arr

    q = np.array(moduli, dtype=np.uint64)
    q.setflags(write=False)
    return NTTTables(
        N=N,
        moduli=moduli,
        psis=psis,
        q=q,
        w=stack("w"),
        ws=stack("ws"),
        winv=stack("winv"),
        winvs=stack("winvs"),
        ninv=stack("ninv"),
        ninvs=stack("ninvs"),
        wn=stack("wn"),
        wns=stack("wns"),
    )


# Batches of at least this many words (and two or more limbs) use the row-parallel
# kernels; below it a possible scheduler stall on a busy machine would cost more than
# the second core saves.
PARALLEL_MIN_WORDS = 1 << 17


def _parallel(a: np.ndarray) -> bool:
    return a.shape[0] > 1 and a.size >= PARALLEL_MIN_WORDS


def _check_operand(a: np.ndarray, moduli: tuple[int, ...]) -> None:
    if not isinstance(a, np.ndarray) or a.dtype != np.uint64 or a.ndim != 2:
        raise ValueError("NTT operands are uint64 arrays of shape (limbs, N)")
    if a.shape[0] != len(moduli):
        raise ValueError(f"{len(moduli)} moduli for an array with {a.shape[0]} limbs")
    if not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError("in-place NTT needs a writable C-contiguous array")


def ntt_inplace(a: np.ndarray, moduli: tuple[int, ...], psis: tuple[int, ...] | None = None) -> None:
    """Forward negacyclic NTT of every limb of ``a`` (uint64, (limbs, N), C-contiguous), in place.

    Inputs must be reduced (``< q``); outputs are in ``[0, q)``.
    """
    moduli = tuple(moduli)
    _check_operand(a, moduli)
    t = NTTTables.get(a.shape[1], moduli, psis)
    kernel = K.ntt_forward_2d_parallel if _parallel(a) else K.ntt_forward_2d
    kernel(a, t.q, t.w, t.ws)


def intt_inplace(a: np.ndarray, moduli: tuple[int, ...], psis: tuple[int, ...] | None = None) -> None:
    """Inverse of `ntt_inplace` (including the ``N**-1`` scaling), in place.

    Inputs must be reduced (``< q``); outputs are in ``[0, q)``.
    """
    moduli = tuple(moduli)
    _check_operand(a, moduli)
    t = NTTTables.get(a.shape[1], moduli, psis)
    kernel = K.ntt_inverse_2d_parallel if _parallel(a) else K.ntt_inverse_2d
    kernel(a, t.q, t.winv, t.winvs, t.ninv, t.ninvs, t.wn, t.wns)


def _fresh_copy(a: np.ndarray) -> tuple[np.ndarray, bool]:
    a = np.asarray(a)
    one_d = a.ndim == 1
    out = np.array(a.reshape(1, -1) if one_d else a, dtype=np.uint64, order="C", copy=True)
    return out, one_d


def ntt(a: np.ndarray, moduli: tuple[int, ...], psis: tuple[int, ...] | None = None) -> np.ndarray:
    """Forward negacyclic NTT of every limb; returns a new array (see module docstring).

    ``a`` has shape ``(limbs, N)`` (or ``(N,)`` with one modulus) with entries ``< q``.
    """
    out, one_d = _fresh_copy(a)
    ntt_inplace(out, moduli, psis)
    return out[0] if one_d else out


def intt(a: np.ndarray, moduli: tuple[int, ...], psis: tuple[int, ...] | None = None) -> np.ndarray:
    """Inverse negacyclic NTT (with ``N**-1`` scaling); returns a new array."""
    out, one_d = _fresh_copy(a)
    intt_inplace(out, moduli, psis)
    return out[0] if one_d else out
