"""Galois automorphisms ``sigma_k: a(X) -> a(X**k)`` of ``Z_q[X]/(X^N + 1)``, ``k`` odd.

In the coefficient domain, coefficient ``i`` moves to ``i*k mod 2N``; landing at or
past ``N`` wraps around with a sign flip because ``X^N = -1``.

In the NTT domain (slot ``i`` holds ``a(psi**e[i])``, ``e = ntt_eval_exponents(N)``),
``sigma_k(a)(psi**e[i]) = a(psi**(e[i]*k))``, so the map is a pure permutation of
slots, independent of the modulus and of psi: no arithmetic at all. That permutation
is what an accelerator's automorphism unit implements (F1 §3), so
`automorphism_ntt_permutation` exposes it for the compiler to emit as an immediate.

The automorphisms compose as ``sigma_a ∘ sigma_b = sigma_{a*b mod 2N}``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fhec.ring.modarith import neg_mod
from fhec.ring.ntt import _check_ring_degree, ntt_eval_exponents

__all__ = [
    "automorphism_coeff",
    "automorphism_ntt",
    "automorphism_ntt_permutation",
    "automorphism_coeff_map",
]


def _check_galois_element(k: int, N: int) -> int:
    _check_ring_degree(N)
    k = int(k)
    if k % 2 == 0 or not 0 < k < 2 * N:
        raise ValueError(f"Galois element k={k} must be odd and in [1, {2 * N})")
    return k


@lru_cache(maxsize=512)
def automorphism_coeff_map(N: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(dest, negate)`` for ``sigma_k`` on coefficients: coefficient ``i`` goes to
    ``dest[i]`` (int64), negated where ``negate[i]`` (bool). Read-only arrays.

    Raises ValueError if k is even or outside ``[1, 2N)``.
    """
    k = _check_galois_element(k, N)
    pos = (np.arange(N, dtype=np.int64) * k) % (2 * N)
    dest = pos % N
    negate = pos >= N
    dest.setflags(write=False)
    negate.setflags(write=False)
    return dest, negate


@lru_cache(maxsize=512)
def automorphism_ntt_permutation(N: int, k: int) -> np.ndarray:
    """Permutation ``perm`` (int64, read-only) with ``sigma_k(a)_ntt = a_ntt[..., perm]``.

    Raises ValueError if k is even or outside ``[1, 2N)``.
    """
    k = _check_galois_element(k, N)
    e = ntt_eval_exponents(N)
    slot_of_exponent = np.empty(2 * N, dtype=np.int64)
    slot_of_exponent[e] = np.arange(N, dtype=np.int64)
    perm = slot_of_exponent[(e * k) % (2 * N)]
    perm.setflags(write=False)
    return perm


def automorphism_coeff(a: np.ndarray, k: int, moduli) -> np.ndarray:
    """``sigma_k`` of coefficient-domain polynomials ``a`` (uint64, (limbs, N), entries < q).

    ``moduli`` has one modulus per limb (needed for the sign flips). Returns a new array.
    Raises ValueError if k is even or outside ``[1, 2N)``.
    """
    a = np.asarray(a, dtype=np.uint64)
    N = a.shape[-1]
    dest, negate = automorphism_coeff_map(N, int(k))
    flipped = neg_mod(a, moduli)
    out = np.empty_like(a)
    out[..., dest] = np.where(negate, flipped, a)
    return out


def automorphism_ntt(a: np.ndarray, k: int, N: int) -> np.ndarray:
    """``sigma_k`` of NTT-domain polynomials ``a`` (last axis of length N). Returns a new array.

    Raises ValueError if k is even or outside ``[1, 2N)``, or if ``a.shape[-1] != N``.
    """
    a = np.asarray(a)
    if a.shape[-1] != N:
        raise ValueError(f"array of shape {a.shape} is not a degree-{N} polynomial")
    return np.ascontiguousarray(a[..., automorphism_ntt_permutation(N, int(k))])
