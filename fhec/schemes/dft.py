"""The CKKS decoding DFT as a product of sparse factors in rotation-diagonal form.

Decoding (`fhec.schemes.encoding`) maps the real coefficients t_0..t_{N-1} to the N/2
slots z_j = sum_k t_k ζ_j^k with ζ_j = ζ^(5^j mod 2N), ζ = exp(iπ/N). Since
ζ_j^(N/2) = i for every j, z = U·w with w_k = t_k + i·t_{k+N/2} and U[j, k] = ζ_j^k.

Sparse packing with n slots (a power of two, n <= N/2) uses the same transform at a
smaller size: a polynomial in Y = X^(N/2n) (the subring) has 2n coefficients s_l, and
its slots are periodic with period n, z_j = sum_l s_l ζ_j^(l·N/2n) with
ζ_j^(N/2n) = exp(iπ·5^j/(2n)): the decoding of a ring of degree 2n. So z = U_n·w with
w_l = s_l + i·s_{l+n} (n × n). U_n is the "special FFT" of HEAAN:
U_n = S_n ··· S_4 · S_2 · P with P the bit-reversal permutation and S_len the
butterfly stage of block length `len`:

    out[b+j]        = v[b+j] + w_j · v[b+j+len/2]
    out[b+j+len/2]  = v[b+j] − w_j · v[b+j+len/2],   w_j = exp(2πi·(5^j mod 4len)/(4len))

for every block start b (a multiple of len) and j < len/2 (the twiddles depend on len
only, so the stages of U_n are those of U_{N/2} restricted to n slots). Each stage reads
slot p and slot p ± len/2 only: three rotation diagonals (two at len = n, where ±n/2
coincide). Bootstrapping leaves P out on both sides (CoeffsToSlots yields the
coefficients in bit-reversed order, EvalMod is slot-wise, SlotsToCoeffs consumes that
order), so the transforms are products of butterfly stages only (Chen–Chillotti–Song
2019, §3). For n = 1 there is no stage: U_1 = 1.

A transform is a dict {k: diagonal} meaning y = Σ_k diag_k ⊙ rot(x, k) with rot(x, k)[p] =
x[p + k] (as `linear_transform`); `compose` multiplies two such dicts, `merged` groups
consecutive stages into one factor per level. A transform on period-m vectors acts on
every N/2-slot vector that repeats with period m by tiling its diagonals (`tiled`).
`split_halves` and `join_halves` move the real and imaginary halves of the coefficients
into (and out of) the two halves of a period-2n vector, so that sparse bootstrapping
runs EvalMod once.
"""

from __future__ import annotations

import functools

import numpy as np

Diagonals = dict[int, np.ndarray]


def _stage_twiddles(length: int) -> np.ndarray:
    """w_j for j < length/2 of the stage of block length `length`."""
    j = np.arange(length // 2)
    quarter = 4 * length
    powers = np.array([pow(5, int(k), quarter) for k in j], dtype=np.int64)
    return np.exp(2j * np.pi * powers / quarter)


def _stage(n: int, length: int, inverse: bool) -> Diagonals:
    """The butterfly stage S_len (or its inverse) on n slots as rotation diagonals."""
    half = length // 2
    w = _stage_twiddles(length)
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
def dft_factors(n: int, log_radices: tuple[int, ...], inverse: bool) -> tuple[Diagonals, ...]:
    """The factors of U_n·P (SlotsToCoeffs, inverse=False) or of P·U_n^{-1}
    (CoeffsToSlots, inverse=True) on n slots, in the order they are applied, factor f
    merging log_radices[f] consecutive butterfly stages. Read-only diagonals
    (complex128, length n); none for n = 1.

    SlotsToCoeffs applies S_2 first and S_n last; CoeffsToSlots the inverses from S_n
    down to S_2."""
    lengths = [2 << s for s in range(int(np.log2(n)))]  # 2, 4, ..., n
    if inverse:
        lengths = lengths[::-1]
    stages = [_stage(n, length, inverse) for length in lengths]
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


@functools.lru_cache(maxsize=16)
def bootstrap_transforms(n: int, cts_log_radices: tuple[int, ...], stc_log_radices: tuple[int, ...],
                         halves: str) -> tuple[tuple[Diagonals, ...], tuple[Diagonals, ...]]:
    """The CoeffsToSlots and SlotsToCoeffs factors of a bootstrap on n slots
    (`dft_factors`), for `BootstrapConfig.halves`: "two" as they are; "packed"
    (2 <= n <= N/4) with `split_halves` folded into the last CoeffsToSlots factor and
    `join_halves` into the first SlotsToCoeffs factor, whose diagonals then have period
    2n; "real" (n = 1): no CoeffsToSlots factor, and one SlotsToCoeffs factor {0: 1} that
    carries the bootstrap's output scaling. Read-only."""
    cts, stc = list(dft_factors(n, cts_log_radices, True)), list(dft_factors(n, stc_log_radices, False))
    if halves == "packed":
        split = split_halves(n)
        cts.append(_prune({k: v * split for k, v in tiled(cts.pop(), 2 * n).items()}))
        stc.insert(0, _prune(compose(tiled(stc.pop(0), 2 * n), join_halves(n), 2 * n)))
    elif halves == "real":
        stc = [{0: np.ones(1, dtype=np.complex128)}]
    for factor in cts + stc:
        for v in factor.values():
            v.setflags(write=False)
    return tuple(cts), tuple(stc)


def tiled(d: Diagonals, total: int) -> Diagonals:
    """The transform `d` on period-m vectors (m = its diagonals' length) as one on `total`
    slots: each diagonal repeated, the rotations unchanged (rotating a period-m vector by
    k reads the same slots as rotating one period)."""
    return {k: np.tile(v, total // len(v)) for k, v in d.items()}


def split_halves(n: int) -> np.ndarray:
    """A on 2n slots: 1 on the first n, −i on the last n. With w_l = s_l + i·s_{l+n} in
    slot l (l < n, repeating with period n), A⊙w + conj(A⊙w) = 2·Re(A⊙w) holds 2·s_l in
    slot l and 2·s_{l+n} in slot l + n: both real halves in one period-2n vector."""
    return np.concatenate([np.ones(n), np.full(n, -1j)]).astype(np.complex128)


def join_halves(n: int) -> Diagonals:
    """The inverse of `split_halves` on 2n slots, re + i·im: from v with the real half
    in slots l < n and the imaginary half in slots l + n, the period-n vector
    z_l = v_l + i·v_{l+n} (slot p >= n reads v_{p−n} + i·v_p, the same z)."""
    ones, units = np.ones(n, dtype=np.complex128), np.full(n, 1j)
    return {0: np.concatenate([ones, units]), n: np.concatenate([units, ones])}


def dense(d: Diagonals, n: int) -> np.ndarray:
    """The n × n matrix of a diagonal dict (for tests)."""
    m = np.zeros((n, n), dtype=np.complex128)
    p = np.arange(n)
    for k, v in d.items():
        m[p, (p + k) % n] += v
    return m
