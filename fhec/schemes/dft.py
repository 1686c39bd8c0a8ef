"""The CKKS decoding DFT as a product of sparse factors in rotation-diagonal form.

Decoding (`fhec.schemes.encoding`) maps the real coefficients t_0..t_{N-1} to the n = N/2
slots z_j = sum_k t_k ζ_j^k with ζ_j = ζ^(5^j mod 2N), ζ = exp(iπ/N). Since
ζ_j^(N/2) = i for every j, z = U·w with w_k = t_k + i·t_{k+n} and U[j, k] = ζ_j^k
(n × n). U is the "special FFT" of HEAAN: U = S_n ··· S_4 · S_2 · P with P the
bit-reversal permutation and S_len the butterfly stage of block length `len`:

    out[b+j]        = v[b+j] + w_j · v[b+j+len/2]
    out[b+j+len/2]  = v[b+j] − w_j · v[b+j+len/2],   w_j = exp(2πi·(5^j mod 4len)/(4len))

for every block start b (a multiple of len) and j < len/2. Each stage reads slot p and
slot p ± len/2 only: three rotation diagonals (two at len = n, where ±n/2 coincide).
Bootstrapping leaves P out on both sides (CoeffsToSlots yields the coefficients in
bit-reversed order, EvalMod is slot-wise, SlotsToCoeffs consumes that order), so the
transforms are products of butterfly stages only (Chen–Chillotti–Song 2019, §3).

A transform is a dict {k: diagonal} meaning y = Σ_k diag_k ⊙ rot(x, k) with rot(x, k)[p] =
x[p + k] (as `linear_transform`); `compose` multiplies two such dicts, `merged` groups
consecutive stages into one factor per level.
"""

from __future__ import annotations

import functools

import numpy as np

Diagonals = dict[int, np.ndarray]


def _stage_twiddles(N: int, length: int) -> np.ndarray:
    """w_j for j < length/2 of the stage of block length `length`."""
    j = np.arange(length // 2)
    quarter = 4 * length
    powers = np.array([pow(5, int(k), quarter) for k in j], dtype=np.int64)
    return np.exp(2j * np.pi * powers / quarter)


def _stage(N: int, length: int, inverse: bool) -> Diagonals:
    """The butterfly stage S_len (or its inverse) as rotation diagonals."""
    n = N // 2
    half = length // 2
    w = _stage_twiddles(N, length)
    p = np.arange(n)
    j = p % length
    top = j < half
    wj = w[np.where(top, j, j - half)]
    if not inverse:
        diags = {0: np.where(top, 1.0, -wj), half: np.where(top, wj, 0.0), -half: np.where(top, 0.0, 1.0)}
    else:
        # top: v = (y_top + y_bottom)/2; bottom: v = (y_top − y_bottom)/(2w)
        diags = {0: np.where(top, 0.5, -0.5 / wj), half: np.where(top, 0.5, 0.0), -half: np.where(top, 0.0, 0.5 / wj)}
    out: Diagonals = {}
    for k, d in diags.items():
        key = k % n
        out[key] = out.get(key, 0) + d.astype(np.complex128)
    return out


def compose(a: Diagonals, b: Diagonals, n: int) -> Diagonals:
    """Diagonals of A·B (B applied first): (A·B)_{a+b}[p] = Σ A_a[p] · B_b[p + a]."""
    out: Diagonals = {}
    for ka, da in a.items():
        for kb, db in b.items():
            k = (ka + kb) % n
            out[k] = out.get(k, 0) + da * np.roll(db, -ka)
    return out


def _prune(d: Diagonals, tol: float = 1e-12) -> Diagonals:
    top = max(float(np.abs(v).max()) for v in d.values())
    return {k: v for k, v in sorted(d.items()) if float(np.abs(v).max()) > tol * top}


@functools.lru_cache(maxsize=16)
def dft_factors(N: int, log_radices: tuple[int, ...], inverse: bool) -> tuple[Diagonals, ...]:
    """The factors of U·P (SlotsToCoeffs, inverse=False) or of P·U^{-1} (CoeffsToSlots,
    inverse=True), in the order they are applied, factor f merging log_radices[f]
    consecutive butterfly stages. Read-only diagonals (complex128, length N/2).

    SlotsToCoeffs applies S_2 first and S_n last; CoeffsToSlots the inverses from S_n
    down to S_2."""
    n = N // 2
    lengths = [2 << s for s in range(int(np.log2(n)))]  # 2, 4, ..., n
    if inverse:
        lengths = lengths[::-1]
    stages = [_stage(N, length, inverse) for length in lengths]
    factors, at = [], 0
    for r in log_radices:
        acc = stages[at]
        for s in stages[at + 1 : at + r]:
            acc = compose(s, acc, n)
        at += r
        acc = _prune(acc)
        for v in acc.values():
            v.setflags(write=False)
        factors.append(acc)
    return tuple(factors)


def dense(d: Diagonals, n: int) -> np.ndarray:
    """The n × n matrix of a diagonal dict (for tests)."""
    m = np.zeros((n, n), dtype=np.complex128)
    p = np.arange(n)
    for k, v in d.items():
        m[p, (p + k) % n] += v
    return m
