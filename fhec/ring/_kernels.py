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
from numba import njit, prange, types
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
def shoup_companion(w, q, bits):
    """floor(w * 2**bits / q) for every w < q, bits <= 64 (restoring long division, exact)."""
    out = np.empty_like(w)
    for idx in range(w.size):
        r = w[idx]
        quot = _U64(0)
        for _ in range(bits):
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
# Rows are passed to per-row functions and indexed with uint64 so that LLVM vectorizes
# (see the NTT notes below).

_FLOAT_PATH_LIMIT = np.uint64(1 << 50)


@njit(cache=True)
def _add_row(a, b, m, out):
    for j in range(_U64(a.size)):
        out[j] = _cond_sub(a[j] + b[j], m)


@njit(cache=True)
def add_mod_2d(a, b, q, out):
    for r in range(a.shape[0]):
        _add_row(a[r], b[r], q[r], out[r])


@njit(cache=True)
def _sub_row(a, b, m, out):
    for j in range(_U64(a.size)):
        d = a[j] - b[j]
        out[j] = min(d, d + m)  # d wrapped negative -> d + m is the small one


@njit(cache=True)
def sub_mod_2d(a, b, q, out):
    for r in range(a.shape[0]):
        _sub_row(a[r], b[r], q[r], out[r])


@njit(cache=True)
def _neg_row(a, m, out):
    for j in range(_U64(a.size)):
        out[j] = _cond_sub(m - a[j], m)  # a == 0 gives m, folded back to 0


@njit(cache=True)
def neg_mod_2d(a, q, out):
    for r in range(a.shape[0]):
        _neg_row(a[r], q[r], out[r])


@njit(cache=True)
def _mul_row_float(a, b, m, out):
    # q < 2**50: the double-precision quotient estimate trunc(a*b/q) is off by at most
    # one (relative error <= 3 * 2**-53 on a value < q < 2**50), so the wrapped 64-bit
    # difference a*b - qhat*q is the true remainder plus one of {-q, 0, q}.
    qinv = 1.0 / np.float64(m)
    for j in range(_U64(a.size)):
        x = a[j]
        y = b[j]
        qhat = np.uint64(np.float64(x) * np.float64(y) * qinv)
        r = x * y - qhat * m
        r = min(r, r + m)  # a wrapped negative r becomes r + q
        out[j] = _cond_sub(r, m)


@njit(cache=True)
def _mul_row_barrett(a, b, m, mu, k, out):
    for j in range(_U64(a.size)):
        out[j] = barrett_mul(a[j], b[j], m, mu, k)


@njit(cache=True)
def mul_mod_2d(a, b, q, mu, k, out):
    for r in range(a.shape[0]):
        if q[r] < _FLOAT_PATH_LIMIT:
            _mul_row_float(a[r], b[r], q[r], out[r])
        else:
            _mul_row_barrett(a[r], b[r], q[r], mu[r], k[r], out[r])


@njit(cache=True)
def _mul_const_row(a, w, ws, m, out):
    for j in range(_U64(a.size)):
        out[j] = _cond_sub(shoup_mul_lazy(a[j], w, ws, m), m)


@njit(cache=True)
def mul_const_mod_2d(a, c, cs, q, out):
    for r in range(a.shape[0]):
        _mul_const_row(a[r], c[r], cs[r], q[r], out[r])


@njit(cache=True)
def _reduce_row(a, m, mu, out):
    for j in range(_U64(a.size)):
        x = a[j]
        out[j] = _cond_sub(x - mulhi(x, mu) * m, m)


@njit(cache=True)
def reduce_mod_2d(a, q, mu64, out):
    """a mod q for any uint64 a; mu64 = floor(2**64 / q) per row."""
    for r in range(a.shape[0]):
        _reduce_row(a[r], q[r], mu64[r], out[r])


# Negacyclic NTT (Harvey lazy butterflies, twiddles in bit-reversed order).
#
# Performance notes (measured at N = 2**16; each change was worth 1.5x-3x):
# * every index is a uint64: numba wraps negative signed indices (an extra select per
#   access), which keeps LLVM from vectorizing the butterfly loops;
# * inner loops run ``for jj in range(t)`` from zero; ``range(j1, j1 + t)`` is not
#   vectorized;
# * the kernels call each other as separate njit functions rather than with numba's
#   inline="always", which produced slower code here;
# * stages with butterfly span t < 4 unroll the span and loop over twiddles instead.


@njit(cache=True)
def _ct_butterfly(a, j, k, wi, wsi, q, two_q):
    # (x, y) in [0, 4q) -> (x + w*y, x - w*y) in [0, 4q)
    x = _cond_sub(a[j], two_q)
    y = shoup_mul_lazy(a[k], wi, wsi, q)
    a[j] = x + y
    a[k] = x - y + two_q


@njit(cache=True)
def _gs_butterfly(a, j, k, wi, wsi, q, two_q):
    # (x, y) in [0, 2q) -> (x + y, (x - y) * w) in [0, 2q)
    x = a[j]
    y = a[k]
    a[j] = _cond_sub(x + y, two_q)
    a[k] = shoup_mul_lazy(x - y + two_q, wi, wsi, q)


@njit(cache=True)
def _ct_stage_small(a, q, two_q, w, ws, m, span):
    t = _U64(span)
    for i in range(m):
        j1 = _U64(2) * i * t
        wi = w[m + i]
        wsi = ws[m + i]
        for k in range(span):
            j = j1 + _U64(k)
            _ct_butterfly(a, j, j + t, wi, wsi, q, two_q)


@njit(cache=True)
def _gs_stage_small(a, q, two_q, winv, winvs, h, span):
    t = _U64(span)
    for i in range(h):
        j1 = _U64(2) * i * t
        wi = winv[h + i]
        wsi = winvs[h + i]
        for k in range(span):
            j = j1 + _U64(k)
            _gs_butterfly(a, j, j + t, wi, wsi, q, two_q)


@njit(cache=True)
def _ntt_forward_row(a, q, w, ws):
    """In-place forward NTT of one row; input in [0, 4q), output in [0, q).

    Cooley-Tukey, natural-order input, bit-reversed output; `w[m + i]` is the twiddle
    of block i in the stage with m blocks. Values stay in [0, 4q) between stages,
    which needs q < 2**62; the last stage also does the final reduction.
    """
    one = _U64(1)
    n = _U64(a.size)
    half = n >> one
    two_q = q + q
    t = n
    m = one
    while m < half:
        t >>= one
        if t >= _U64(4):
            for i in range(m):
                j1 = _U64(2) * i * t
                wi = w[m + i]
                wsi = ws[m + i]
                for jj in range(t):
                    j = j1 + jj
                    _ct_butterfly(a, j, j + t, wi, wsi, q, two_q)
        else:
            _ct_stage_small(a, q, two_q, w, ws, m, 2)
        m <<= one
    if n == one:
        a[0] = _cond_sub(_cond_sub(a[0], two_q), q)
        return
    for i in range(half):
        j = _U64(2) * i
        x = _cond_sub(a[j], two_q)
        y = shoup_mul_lazy(a[j + one], w[half + i], ws[half + i], q)
        a[j] = _cond_sub(_cond_sub(x + y, two_q), q)
        a[j + one] = _cond_sub(_cond_sub(x - y + two_q, two_q), q)


@njit(cache=True)
def _ntt_inverse_row(a, q, winv, winvs, ninv, ninvs, wn, wns):
    """In-place inverse NTT of one row, times n**-1; input in [0, 2q), output in [0, q).

    Gentleman-Sande, bit-reversed input, natural-order output; values stay in [0, 2q).
    The last stage folds in n**-1: `ninv` scales the sums, `wn = winv[1] * ninv` the
    differences.
    """
    one = _U64(1)
    n = _U64(a.size)
    two_q = q + q
    t = one
    m = n
    while m > _U64(2):
        h = m >> one
        if t >= _U64(4):
            for i in range(h):
                j1 = _U64(2) * i * t
                wi = winv[h + i]
                wsi = winvs[h + i]
                for jj in range(t):
                    j = j1 + jj
                    _gs_butterfly(a, j, j + t, wi, wsi, q, two_q)
        elif t == _U64(2):
            _gs_stage_small(a, q, two_q, winv, winvs, h, 2)
        else:
            _gs_stage_small(a, q, two_q, winv, winvs, h, 1)
        t <<= one
        m = h
    if n == one:
        a[0] = _cond_sub(shoup_mul_lazy(a[0], ninv, ninvs, q), q)
        return
    for j in range(t):  # t == n / 2 here
        x = a[j]
        y = a[j + t]
        a[j] = _cond_sub(shoup_mul_lazy(x + y, ninv, ninvs, q), q)
        a[j + t] = _cond_sub(shoup_mul_lazy(x - y + two_q, wn, wns, q), q)


# ----------------------------------------------------------------------------------------
# 32-bit fast path of the NTT, for moduli q < 2**32 (F1's word size).
#
# Values are kept fully reduced in [0, q) and Shoup companions are taken with respect
# to 2**32 (`ws = floor(w * 2**32 / q)`), so every product has two operands below 2**32
# and fits a 64-bit lane: the butterflies vectorize completely (no i128), ~1.8x faster
# per stage than the 64-bit path.

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


@njit(inline="always")
def shoup32_mul(x, w, ws32, q):
    """x * w mod q in [0, q) for x, w < q < 2**32, ws32 = floor(w * 2**32 / q)."""
    x = x & _M32  # a no-op for valid input; lets LLVM use 32x32->64-bit multiplies
    return _cond_sub(x * w - ((x * ws32) >> _S32) * q, q)


@njit(cache=True)
def _ct_butterfly32(a, j, k, wi, wsi, q):
    x = a[j]
    y = shoup32_mul(a[k], wi, wsi, q)
    d = x - y
    a[j] = _cond_sub(x + y, q)
    a[k] = min(d, d + q)


@njit(cache=True)
def _gs_butterfly32(a, j, k, wi, wsi, q):
    x = a[j]
    y = a[k]
    d = x - y
    a[j] = _cond_sub(x + y, q)
    a[k] = shoup32_mul(min(d, d + q), wi, wsi, q)


@njit(cache=True)
def _ct_stage_small32(a, q, w, ws, m, span):
    t = _U64(span)
    for i in range(m):
        j1 = _U64(2) * i * t
        wi = w[m + i]
        wsi = ws[m + i]
        for k in range(span):
            j = j1 + _U64(k)
            _ct_butterfly32(a, j, j + t, wi, wsi, q)


@njit(cache=True)
def _gs_stage_small32(a, q, winv, winvs, h, span):
    t = _U64(span)
    for i in range(h):
        j1 = _U64(2) * i * t
        wi = winv[h + i]
        wsi = winvs[h + i]
        for k in range(span):
            j = j1 + _U64(k)
            _gs_butterfly32(a, j, j + t, wi, wsi, q)


@njit(cache=True)
def _ntt_forward_row32(a, q, w, ws):
    """Forward NTT of one row for q < 2**32; input and output in [0, q)."""
    one = _U64(1)
    n = _U64(a.size)
    t = n
    m = one
    while m < n:
        t >>= one
        if t >= _U64(4):
            for i in range(m):
                j1 = _U64(2) * i * t
                wi = w[m + i]
                wsi = ws[m + i]
                for jj in range(t):
                    j = j1 + jj
                    _ct_butterfly32(a, j, j + t, wi, wsi, q)
        elif t == _U64(2):
            _ct_stage_small32(a, q, w, ws, m, 2)
        else:
            _ct_stage_small32(a, q, w, ws, m, 1)
        m <<= one


@njit(cache=True)
def _ntt_inverse_row32(a, q, winv, winvs, ninv, ninvs, wn, wns):
    """Inverse NTT (times n**-1) of one row for q < 2**32; input and output in [0, q)."""
    one = _U64(1)
    n = _U64(a.size)
    t = one
    m = n
    while m > _U64(2):
        h = m >> one
        if t >= _U64(4):
            for i in range(h):
                j1 = _U64(2) * i * t
                wi = winv[h + i]
                wsi = winvs[h + i]
                for jj in range(t):
                    j = j1 + jj
                    _gs_butterfly32(a, j, j + t, wi, wsi, q)
        elif t == _U64(2):
            _gs_stage_small32(a, q, winv, winvs, h, 2)
        else:
            _gs_stage_small32(a, q, winv, winvs, h, 1)
        t <<= one
        m = h
    if n == one:
        a[0] = shoup32_mul(a[0], ninv, ninvs, q)
        return
    for j in range(t):  # t == n / 2 here
        x = a[j]
        y = a[j + t]
        d = x - y
        a[j] = shoup32_mul(_cond_sub(x + y, q), ninv, ninvs, q)
        a[j + t] = shoup32_mul(min(d, d + q), wn, wns, q)


_TWO32 = np.uint64(1 << 32)


@njit(cache=True)
def ntt_forward_2d(a, q, w, ws):
    """Forward NTT of every row in place; `ws` holds 32-bit Shoup companions for q < 2**32."""
    for r in range(a.shape[0]):
        if q[r] < _TWO32:
            _ntt_forward_row32(a[r], q[r], w[r], ws[r])
        else:
            _ntt_forward_row(a[r], q[r], w[r], ws[r])


@njit(cache=True)
def ntt_inverse_2d(a, q, winv, winvs, ninv, ninvs, wn, wns):
    """Inverse NTT of every row in place (Shoup companions as in `ntt_forward_2d`)."""
    for r in range(a.shape[0]):
        if q[r] < _TWO32:
            _ntt_inverse_row32(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r], wn[r], wns[r])
        else:
            _ntt_inverse_row(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r], wn[r], wns[r])


# Row-parallel twins of the two kernels above: 2x faster on two idle cores, but a
# parallel launch waits for a free core, which on a busy machine costs a scheduler tick
# (~4 ms). The wrappers in fhec.ring.ntt use them only for batches large enough to pay
# for that risk.


@njit(cache=True, parallel=True)
def ntt_forward_2d_parallel(a, q, w, ws):
    for r in prange(a.shape[0]):
        if q[r] < _TWO32:
            _ntt_forward_row32(a[r], q[r], w[r], ws[r])
        else:
            _ntt_forward_row(a[r], q[r], w[r], ws[r])


@njit(cache=True, parallel=True)
def ntt_inverse_2d_parallel(a, q, winv, winvs, ninv, ninvs, wn, wns):
    for r in prange(a.shape[0]):
        if q[r] < _TWO32:
            _ntt_inverse_row32(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r], wn[r], wns[r])
        else:
            _ntt_inverse_row(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r], wn[r], wns[r])
