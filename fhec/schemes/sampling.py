"""Random polynomials for key generation and encryption.

All randomness comes from a `numpy.random.Generator`: pass an integer seed for a
reproducible experiment (same seed, same keys and ciphertexts), or ``seed=None`` to
draw fresh entropy from the operating system (what a real deployment must do).
"""

from __future__ import annotations

import numpy as np

from fhec.ring.ntt import ntt
from fhec.ring.rns import to_rns
from fhec.schemes.params import ERROR_STDDEV


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A Generator from a seed, an existing Generator (used as is), or None (OS entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def ternary(rng: np.random.Generator, N: int) -> np.ndarray:
    """A uniform ternary polynomial (coefficients in {-1, 0, 1}), int64."""
    return rng.integers(-1, 2, size=N, dtype=np.int64)


def gaussian(rng: np.random.Generator, N: int, stddev: float = ERROR_STDDEV) -> np.ndarray:
    """A rounded Gaussian error polynomial, int64, truncated at 6σ as the HE standard allows."""
    e = np.rint(rng.normal(0.0, stddev, size=N))
    bound = np.ceil(6 * stddev)
    return np.clip(e, -bound, bound).astype(np.int64)


def uniform_ntt(rng: np.random.Generator, moduli: tuple[int, ...], N: int) -> np.ndarray:
    """A uniformly random polynomial mod each prime; uniform in either domain, so sampled in NTT form."""
    out = np.empty((len(moduli), N), dtype=np.uint64)
    for i, q in enumerate(moduli):
        out[i] = rng.integers(0, q, size=N, dtype=np.uint64)
    return out


def small_ntt(coeffs: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """NTT-domain RNS form of a small signed polynomial."""
    return ntt(to_rns(coeffs, moduli), moduli)
