"""Numba kernels behind `fhec.ring.modarith`, `fhec.ring.ntt` and `fhec.ring.automorphism`.

Private module: the public wrappers validate shapes and dtypes, then call these on
C-contiguous ``uint64`` arrays of shape ``(limbs, n)`` with one modulus per row.

Every kernel is exact for moduli ``q < 2**62``. The one primitive that plain numba
lacks is the high half of a 64x64-bit product; `mulhi` gets it from LLVM's ``i128``
multiply, which compiles to a single ``mul`` instruction on x86-64 (the portable
alternative, four 32-bit partial products, costs about 3x more in the NTT).

Conventions used throughout:

* Shoup multiplication by a constant ``w < q``: with ``ws = floor(w * 2**64 / q)``,
  ``x * w - mulhi(x, ws) * q`` (wrapping) lies in ``[0, 2q)`` for *any* ``x < 2**64``.
* Barrett reduction of a 128-bit product for a ``k``-bit modulus (``k = q.bit_length()``)
  uses ``mu = floor(2**(2k) / q) < 2**(k+1)`` and leaves a remainder in ``[0, 3q)``.
* ``min(x, x - c)`` on unsigned words is a branch-free "subtract ``c`` if ``x >= c``"
  (valid while ``x < 2c`` and ``x + c < 2**64``); it compiles to ``cmov``/``vpminuq``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_U64 = np.uint64


@intrinsic
def _mulhi_intrinsic(typingctx, a, b):
    """High 64 bits of the 128-bit product of two uint64 (LLVM i128 multiply)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        x = builder.zext(args[0], i128)
        y = builder.zext(args[1], i128)
        prod = builder.mul(x, y)
        high = builder.lshr(prod, ir.Constant(i128, 64))
        return builder.trunc(high, ir.IntType(64))

    return sig, codegen


@njit(inline="always")
def mulhi(a, b):
    """floor(a * b / 2**64) for uint64 a, b."""
    return _mulhi_intrinsic(a, b)


@njit(inline="always")
def _cond_sub(x, c):
    # Subtract c when x >= c; x must be < 2c (see module docstring).
    return min(x, x - c)


@njit(inline="always")
def barrett_mul(a, b, q, mu, k):
    """a * b mod q for a, b < q < 2**62; `mu` = floor(2**(2k)/q), `k` = bit length of q."""
    lo = a * b
    hi = mulhi(a, b)
    # x = floor(p / 2**(k-1)) < 2**(k+1); shift amounts stay inside (0, 64) for 2 <= k <= 62.
    x = (hi << (_U64(65) - k)) | (lo >> (k - _U64(1)))
    plo = x * mu
    phi = mulhi(x, mu)
    est = (phi << (_U64(63) - k)) | (plo >> (k + _U64(1)))
    r = lo - est * q
    r = _cond_sub(r, q + q)
    return _cond_sub(r, q)


@njit(inline="always")
def shoup_mul_lazy(x, w, ws, q):
    """x * w mod q up to one extra q: result in [0, 2q) for any x < 2**64."""
    return x * w - mulhi(x, ws) * q


@njit(cache=True)
def shoup_companion(w, q):
    """floor(w * 2**64 / q) for every w < q (restoring long division, exact)."""
    out = np.empty_like(w)
    for idx in range(w.size):
        r = w[idx]
        quot = _U64(0)
        for _ in range(64):
            r = r << _U64(1)  # r < 2q < 2**64 because q < 2**63
            quot = quot << _U64(1)
            if r >= q:
                r -= q
                quot |= _U64(1)
        out[idx] = quot
    return out


@njit(cache=True)
def power_table(base, n, q, mu, k):
    """[base**0, base**1, ..., base**(n-1)] mod q."""
    out = np.empty(n, dtype=np.uint64)
    acc = _U64(1)
    for i in range(n):
        out[i] = acc
        acc = barrett_mul(acc, base, q, mu, k)
    return out


# ----------------------------------------------------------------------------------------
# Element-wise modular arithmetic on (limbs, n) arrays, one modulus per row.


@njit(cache=True)
def add_mod_2d(a, b, q, out):
    for r in range(a.shape[0]):
        m = q[r]
        for j in range(a.shape[1]):
            out[r, j] = _cond_sub(a[r, j] + b[r, j], m)


@njit(cache=True)
def sub_mod_2d(a, b, q, out):
    for r in range(a.shape[0]):
        m = q[r]
        for j in range(a.shape[1]):
            d = a[r, j] - b[r, j]
            out[r, j] = min(d, d + m)  # d wrapped negative -> d + m is the small one


@njit(cache=True)
def neg_mod_2d(a, q, out):
    for r in range(a.shape[0]):
        m = q[r]
        for j in range(a.shape[1]):
            x = a[r, j]
            out[r, j] = _cond_sub(m - x, m)  # x == 0 gives m, folded back to 0


@njit(cache=True)
def mul_mod_2d(a, b, q, mu, k, out):
    for r in range(a.shape[0]):
        m = q[r]
        mr = mu[r]
        kr = k[r]
        for j in range(a.shape[1]):
            out[r, j] = barrett_mul(a[r, j], b[r, j], m, mr, kr)


@njit(cache=True)
def mul_const_mod_2d(a, c, cs, q, out):
    for r in range(a.shape[0]):
        m = q[r]
        w = c[r]
        ws = cs[r]
        for j in range(a.shape[1]):
            out[r, j] = _cond_sub(shoup_mul_lazy(a[r, j], w, ws, m), m)


@njit(cache=True)
def reduce_mod_2d(a, q, mu64, out):
    """a mod q for any uint64 a; mu64 = floor(2**64 / q) per row."""
    for r in range(a.shape[0]):
        m = q[r]
        mu = mu64[r]
        for j in range(a.shape[1]):
            x = a[r, j]
            out[r, j] = _cond_sub(x - mulhi(x, mu) * m, m)


# ----------------------------------------------------------------------------------------
# Negacyclic NTT (Harvey lazy butterflies, twiddles in bit-reversed order).


@njit(inline="always")
def _ntt_forward_row(a, q, w, ws):
    """In-place forward NTT of one row; input in [0, 4q), output in [0, q).

    Cooley-Tukey, natural-order input, bit-reversed output. Values stay in [0, 4q)
    between stages, which needs q < 2**62.
    """
    n = a.size
    two_q = q + q
    t = n
    m = 1
    while m < n:
        t >>= 1
        for i in range(m):
            j1 = 2 * i * t
            wi = w[m + i]
            wsi = ws[m + i]
            for j in range(j1, j1 + t):
                x = _cond_sub(a[j], two_q)
                y = shoup_mul_lazy(a[j + t], wi, wsi, q)
                a[j] = x + y
                a[j + t] = x - y + two_q
        m <<= 1
    for j in range(n):
        a[j] = _cond_sub(_cond_sub(a[j], two_q), q)


@njit(inline="always")
def _ntt_inverse_row(a, q, winv, winvs, ninv, ninvs):
    """In-place inverse NTT of one row, times n**-1; input in [0, 2q), output in [0, q).

    Gentleman-Sande, bit-reversed input, natural-order output; values stay in [0, 2q).
    """
    n = a.size
    two_q = q + q
    t = 1
    m = n
    while m > 1:
        h = m >> 1
        j1 = 0
        for i in range(h):
            wi = winv[h + i]
            wsi = winvs[h + i]
            for j in range(j1, j1 + t):
                x = a[j]
                y = a[j + t]
                a[j] = _cond_sub(x + y, two_q)
                a[j + t] = shoup_mul_lazy(x - y + two_q, wi, wsi, q)
            j1 += 2 * t
        t <<= 1
        m = h
    for j in range(n):
        a[j] = _cond_sub(shoup_mul_lazy(a[j], ninv, ninvs, q), q)


@njit(cache=True)
def ntt_forward_2d(a, q, w, ws):
    for r in range(a.shape[0]):
        _ntt_forward_row(a[r], q[r], w[r], ws[r])


@njit(cache=True)
def ntt_inverse_2d(a, q, winv, winvs, ninv, ninvs):
    for r in range(a.shape[0]):
        _ntt_inverse_row(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r])
