"""Numba kernels behind `fhec.ring.modarith`, `fhec.ring.ntt` and `fhec.ring.automorphism`.

Private module: the public wrappers validate shapes and dtypes, then call these on
C-contiguous ``uint64`` arrays of shape ``(limbs, n)`` with one modulus per row.

Every kernel is exact for moduli ``q < 2**62``. The one primitive that plain numba
lacks is the high half of a 64x64-bit product; `mulhi` gets it from LLVM's ``i128``
multiply (a single ``mul`` on x86-64). Loops whose products need it do not vectorize,
so moduli below 2**50 take a double-precision quotient estimate instead (`lazy_mul`,
`_mul_row_float`), which does.

Conventions used throughout:

* Shoup multiplication by a constant ``w < q``: with ``ws = floor(w * 2**64 / q)``,
  ``x * w - mulhi(x, ws) * q`` (wrapping) lies in ``[0, 2q)`` for *any* ``x < 2**64``.
* Float estimate for ``q < 2**50``: ``qhat = trunc(x * fl(w / q))`` is within one of
  ``floor(x * w / q)`` while ``x < 4q``, so ``x * w - qhat * q`` (wrapping) is in ``[-q, 2q)``.
* Barrett reduction of a 128-bit product for a ``k``-bit modulus (``k = q.bit_length()``)
  uses ``mu = floor(2**(2k) / q) < 2**(k+1)`` and leaves a remainder in ``[0, 3q)``.
* ``min(x, x - c)`` on unsigned words is a branch-free "subtract ``c`` if ``x >= c``"
  (valid while ``x < 2c`` and ``x + c < 2**64``); it compiles to ``cmov``/``vpminuq``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic, overload

from fhec._jit import announce_compile

announce_compile(__file__)

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


def lazy_mul(x, w, c, q):
    """x * w mod q up to one extra q, in [0, 2q), for x < 4q; `c` is w's companion.

    Chosen by the companion's type when numba compiles the caller:

    * uint64 ``c = floor(w * 2**64 / q)``: Shoup (any q < 2**62, any x < 2**64);
    * float64 ``c = fl(w / q)`` for ``q < 2**50``: ``trunc(x * c)`` is the quotient to
      within one (x < 4q < 2**52 is exact in a double, the relative error of the
      estimate is below 2**-52, so the absolute error is below 4q * 2**-52 < 1), and the
      wrapped difference ``x*w - qhat*q`` lies in [-q, 2q). Unlike the 128-bit high
      product, this vectorizes (AVX-512 converts uint64 <-> double), ~1.8x faster.
    """
    raise NotImplementedError("only callable from numba-compiled code")


@overload(lazy_mul, inline="always")
def _lazy_mul_overload(x, w, c, q):
    if isinstance(c, types.Float):

        def float_estimate(x, w, c, q):
            qhat = np.uint64(np.float64(x) * c)
            r = x * w - qhat * q
            return min(r, r + q)  # a wrapped negative r becomes r + q

        return float_estimate

    def shoup(x, w, c, q):
        return x * w - mulhi(x, c) * q

    return shoup


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


_FLOAT_REDUCE_MIN = np.uint64(1 << 14)


@njit(cache=True)
def _reduce_row(a, m, mu, out):
    for j in range(_U64(a.size)):
        x = a[j]
        out[j] = _cond_sub(x - mulhi(x, mu) * m, m)


@njit(cache=True)
def _reduce_row_float(a, m, out):
    # q >= 2**14 keeps x / q below 2**50, so the double estimate of the quotient (three
    # roundings of 2**-53 each) is within 3/8 of the truth: off by at most one.
    qinv = 1.0 / np.float64(m)
    for j in range(_U64(a.size)):
        x = a[j]
        r = x - np.uint64(np.float64(x) * qinv) * m
        r = min(r, r + m)  # a wrapped negative r becomes r + q
        out[j] = _cond_sub(r, m)


@njit(cache=True)
def reduce_mod_2d(a, q, mu64, out):
    """a mod q for any uint64 a; mu64 = floor(2**64 / q) per row."""
    for r in range(a.shape[0]):
        if q[r] >= _FLOAT_REDUCE_MIN:
            _reduce_row_float(a[r], q[r], out[r])
        else:
            _reduce_row(a[r], q[r], mu64[r], out[r])


@njit(cache=True)
def lift_centered_2d(a, src, src_half, neg, q, mu64, out):
    """Row r of `a` (residues mod src[r]) as residues mod q[r] of their centered
    representatives: a mod q, plus (-src mod q) where a > src // 2 (src_half)."""
    reduce_mod_2d(a, q, mu64, out)
    for r in range(a.shape[0]):
        h, n, m = src_half[r], neg[r], q[r]
        row, o = a[r], out[r]
        for k in range(row.shape[0]):
            if row[k] > h:
                v = o[k] + n
                o[k] = v - m if v >= m else v


# Negacyclic NTT (Harvey lazy butterflies, twiddles in bit-reversed order).
#
# Performance notes (measured at N = 2**16; each change was worth 1.5x-3x):
# * every index is a uint64: numba wraps negative signed indices (an extra select per
#   access), which keeps LLVM from vectorizing the butterfly loops;
# * inner loops run ``for jj in range(t)`` from zero; ``range(j1, j1 + t)`` is not
#   vectorized;
# * the kernels call each other as separate njit functions rather than with numba's
#   inline="always", which produced slower code here;
# * stages with butterfly span t < 4 unroll the span and loop over twiddles instead;
# * for q < 2**50 the twiddle products use a double-precision quotient estimate
#   (`lazy_mul` with float64 companions), which vectorizes, where LLVM scalarizes the
#   128-bit high product: ~1.8x faster. This path is also faster than a dedicated
#   32-bit-word path (fully reduced values, 32x32-bit products) that was measured
#   against it (e.g. 2^16 forward, 32-bit prime: 218 us vs 241 us), so it serves F1's
#   32-bit words too.


@njit(cache=True)
def _ct_butterfly(a, j, k, wi, wsi, q, two_q):
    # (x, y) in [0, 4q) -> (x + w*y, x - w*y) in [0, 4q)
    x = _cond_sub(a[j], two_q)
    y = lazy_mul(a[k], wi, wsi, q)
    a[j] = x + y
    a[k] = x - y + two_q


@njit(cache=True)
def _gs_butterfly(a, j, k, wi, wsi, q, two_q):
    # (x, y) in [0, 2q) -> (x + y, (x - y) * w) in [0, 2q)
    x = a[j]
    y = a[k]
    a[j] = _cond_sub(x + y, two_q)
    a[k] = lazy_mul(x - y + two_q, wi, wsi, q)


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
        y = lazy_mul(a[j + one], w[half + i], ws[half + i], q)
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
        a[0] = _cond_sub(lazy_mul(a[0], ninv, ninvs, q), q)
        return
    for j in range(t):  # t == n / 2 here
        x = a[j]
        y = a[j + t]
        a[j] = _cond_sub(lazy_mul(x + y, ninv, ninvs, q), q)
        a[j + t] = _cond_sub(lazy_mul(x - y + two_q, wn, wns, q), q)


@njit(cache=True)
def _forward_row_any(a, q, w, ws):
    # The companion table's meaning depends on the modulus size (see fhec.ring.ntt).
    if q < _FLOAT_PATH_LIMIT:
        _ntt_forward_row(a, q, w, ws.view(np.float64))
    else:
        _ntt_forward_row(a, q, w, ws)


@njit(cache=True)
def _inverse_row_any(a, q, winv, winvs, ninv, ninvs, wn, wns):
    # ninvs and wns are one-element arrays so that their bits can be viewed as doubles.
    if q < _FLOAT_PATH_LIMIT:
        _ntt_inverse_row(
            a, q, winv, winvs.view(np.float64), ninv, ninvs.view(np.float64)[0], wn, wns.view(np.float64)[0]
        )
    else:
        _ntt_inverse_row(a, q, winv, winvs, ninv, ninvs[0], wn, wns[0])


@njit(cache=True)
def ntt_forward_2d(a, q, w, ws):
    """Forward NTT of every row in place (companion tables as built by fhec.ring.ntt)."""
    for r in range(a.shape[0]):
        _forward_row_any(a[r], q[r], w[r], ws[r])


@njit(cache=True)
def ntt_inverse_2d(a, q, winv, winvs, ninv, ninvs, wn, wns):
    """Inverse NTT (with n**-1) of every row in place."""
    for r in range(a.shape[0]):
        _inverse_row_any(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r : r + 1], wn[r], wns[r : r + 1])


# Row-parallel twins of the two kernels above: 2x faster on two idle cores, but a
# parallel launch waits for a free core, which on a busy machine costs a scheduler tick
# (~4 ms). The wrappers in fhec.ring.ntt use them only for batches large enough to pay
# for that risk.


@njit(cache=True, parallel=True)
def ntt_forward_2d_parallel(a, q, w, ws):
    for r in prange(a.shape[0]):
        _forward_row_any(a[r], q[r], w[r], ws[r])


@njit(cache=True, parallel=True)
def ntt_inverse_2d_parallel(a, q, winv, winvs, ninv, ninvs, wn, wns):
    for r in prange(a.shape[0]):
        _inverse_row_any(a[r], q[r], winv[r], winvs[r], ninv[r], ninvs[r : r + 1], wn[r], wns[r : r + 1])
