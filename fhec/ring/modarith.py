"""Exact element-wise modular arithmetic on RNS polynomials.

A polynomial in RNS form is a ``uint64`` array of shape ``(limbs, N)``; row ``i`` is
reduced modulo ``q[i]``. Every function here takes ``q`` either as a 1-D sequence of
per-limb moduli (``len(q) == a.shape[0]``; arrays with more than two dimensions are
treated as ``(a.shape[0], -1)``) or as one python int / numpy scalar when ``a`` is 1-D.
Moduli may have any size up to 62 bits; results are exact (no floating point), and
always fully reduced into ``[0, q)``. Each function returns a new array.

Preconditions (not checked, for speed): operands of `add_mod`, `sub_mod`, `neg_mod` and
`mul_mod` are already reduced (``< q``). `mul_const_mod` and `reduce_mod` accept any
``uint64`` input.

Raises `fhec.errors.InvalidModulusError` for a modulus outside ``[2, 2**62)`` and
``ValueError`` for shape mismatches (a programming error, not a user error).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fhec.errors import InvalidModulusError
from fhec.ring import _kernels as K

MAX_MODULUS_BITS = 62

__all__ = [
    "MAX_MODULUS_BITS",
    "add_mod",
    "sub_mod",
    "neg_mod",
    "mul_mod",
    "mul_const_mod",
    "reduce_mod",
    "pow_mod",
    "inv_mod",
    "barrett_constants",
]


def pow_mod(x: int, e: int, q: int) -> int:
    """x**e mod q on python ints (negative e means a modular inverse power)."""
    return pow(int(x), int(e), int(q))


def inv_mod(x: int, q: int) -> int:
    """x**-1 mod q; raises ValueError when x is not invertible."""
    return pow(int(x), -1, int(q))


@lru_cache(maxsize=256)
def barrett_constants(moduli: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-modulus constants ``(q, mu, k, mu64)`` used by the kernels (read-only arrays).

    ``k = q.bit_length()``, ``mu = floor(2**(2k) / q)``, ``mu64 = floor(2**64 / q)``.
    Raises `InvalidModulusError` for a modulus outside ``[2, 2**62)`` — the kernels'
    lazy reductions need two spare bits in a 64-bit word.
    """
    for m in moduli:
        if not 2 <= m < (1 << MAX_MODULUS_BITS):
            raise InvalidModulusError(
                f"modulus {m} is outside [2, 2**{MAX_MODULUS_BITS}); use primes of at most "
                f"{MAX_MODULUS_BITS} bits"
            )
    ks = [m.bit_length() for m in moduli]  # q >= 2 keeps barrett_mul's shifts in (0, 64)
    arrays = (
        np.array(moduli, dtype=np.uint64),
        np.array([(1 << (2 * k)) // m for k, m in zip(ks, moduli)], dtype=np.uint64),
        np.array(ks, dtype=np.uint64),
        np.array([((1 << 64) - 1) // m for m in moduli], dtype=np.uint64),
    )
    for arr in arrays:
        arr.setflags(write=False)
    return arrays


def _as_rows(a: np.ndarray, q) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """View `a` as a C-contiguous uint64 (limbs, n) array; return it, the original shape
    and the moduli as a tuple of python ints."""
    a = np.asarray(a)
    shape = a.shape
    if np.ndim(q) == 0:
        if a.ndim != 1:
            raise ValueError(f"a scalar modulus needs a 1-D array, got shape {shape}")
        moduli = (int(q),)
        rows = a.reshape(1, -1)
    else:
        moduli = tuple(int(m) for m in np.asarray(q).ravel())
        if a.ndim < 2 or a.shape[0] != len(moduli):
            raise ValueError(f"{len(moduli)} moduli do not match an array of shape {shape}")
        rows = a.reshape(a.shape[0], -1)
    if rows.dtype != np.uint64:
        rows = rows.astype(np.uint64)
    return np.ascontiguousarray(rows), shape, moduli


def _check_same_shape(a: np.ndarray, b: np.ndarray) -> None:
    if np.shape(a) != np.shape(b):
        raise ValueError(f"operand shapes differ: {np.shape(a)} vs {np.shape(b)}")


def add_mod(a: np.ndarray, b: np.ndarray, q) -> np.ndarray:
    """(a + b) mod q, element-wise; a, b < q."""
    _check_same_shape(a, b)
    ra, shape, moduli = _as_rows(a, q)
    rb, _, _ = _as_rows(b, q)
    out = np.empty_like(ra)
    K.add_mod_2d(ra, rb, barrett_constants(moduli)[0], out)
    return out.reshape(shape)


def sub_mod(a: np.ndarray, b: np.ndarray, q) -> np.ndarray:
    """(a - b) mod q, element-wise; a, b < q."""
    _check_same_shape(a, b)
    ra, shape, moduli = _as_rows(a, q)
    rb, _, _ = _as_rows(b, q)
    out = np.empty_like(ra)
    K.sub_mod_2d(ra, rb, barrett_constants(moduli)[0], out)
    return out.reshape(shape)


def neg_mod(a: np.ndarray, q) -> np.ndarray:
    """(-a) mod q, element-wise; a < q."""
    ra, shape, moduli = _as_rows(a, q)
    out = np.empty_like(ra)
    K.neg_mod_2d(ra, barrett_constants(moduli)[0], out)
    return out.reshape(shape)


def mul_mod(a: np.ndarray, b: np.ndarray, q) -> np.ndarray:
    """(a * b) mod q, element-wise, exact for moduli up to 62 bits; a, b < q."""
    _check_same_shape(a, b)
    ra, shape, moduli = _as_rows(a, q)
    rb, _, _ = _as_rows(b, q)
    qs, mu, k, _ = barrett_constants(moduli)
    out = np.empty_like(ra)
    K.mul_mod_2d(ra, rb, qs, mu, k, out)
    return out.reshape(shape)


@lru_cache(maxsize=1024)
def _shoup_constants(consts: tuple[int, ...], moduli: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    c = np.array(consts, dtype=np.uint64)
    cs = np.array([(ci << 64) // m for ci, m in zip(consts, moduli)], dtype=np.uint64)
    c.setflags(write=False)
    cs.setflags(write=False)
    return c, cs


def mul_const_mod(a: np.ndarray, c, q) -> np.ndarray:
    """(a * c[i]) mod q[i] for every limb i; c[i] < q[i], a may be any uint64 value.

    `c` is a sequence of per-limb constants (or a scalar when `a` is 1-D).
    Raises ValueError if some c[i] >= q[i].
    """
    ra, shape, moduli = _as_rows(a, q)
    consts = tuple(int(x) for x in np.ravel(c))
    if len(consts) != len(moduli):
        raise ValueError(f"{len(consts)} constants for {len(moduli)} limbs")
    if any(ci >= m or ci < 0 for ci, m in zip(consts, moduli)):
        raise ValueError("every constant must be reduced modulo its limb's modulus")
    qs = barrett_constants(moduli)[0]
    cw, cs = _shoup_constants(consts, moduli)
    out = np.empty_like(ra)
    K.mul_const_mod_2d(ra, cw, cs, qs, out)
    return out.reshape(shape)


def reduce_mod(a: np.ndarray, q) -> np.ndarray:
    """a mod q for arbitrary uint64 values a."""
    ra, shape, moduli = _as_rows(a, q)
    qs, _, _, mu64 = barrett_constants(moduli)
    out = np.empty_like(ra)
    K.reduce_mod_2d(ra, qs, mu64, out)
    return out.reshape(shape)
