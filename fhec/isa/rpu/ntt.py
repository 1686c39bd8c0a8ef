"""Negacyclic NTTs of N = 1K..64K as B512 butterfly and shuffle sequences (RPU paper §V).

Data layout. An rvec of N words is V = N / 512 vectors; vector c holds words
512c .. 512c+511 in the limb IR's order (coefficients in natural order, NTT values in
fhec's bit-reversed order, `fhec.ring.ntt`). Nothing is permuted in memory.

Algorithm: the constant-geometry (Pease) form of fhec's own transform. fhec's forward
NTT is the in-place Cooley-Tukey network with twiddles psi^bitrev(m+i); every one of its
log2 N stages pairs the words at *positions* p and p + N/2 and writes the two results to
positions 2p and 2p + 1 (a perfect shuffle), so the pairs of a stage are vector j with
vector j + V/2, element by element - one BFLY_CT per vector pair - and the shuffle is
UNPKLO/UNPKHI of the two results. After log2 N perfect shuffles every word is back at its
in-place position, which is exactly fhec's output order. Which in-place butterfly a
position holds at each stage (and so its twiddle) is tracked here (`stage_twiddles`),
so the twiddle vectors are generated, not derived by hand.

The inverse runs the stages backwards: PKLO/PKHI undo the shuffle, BFLY_GS with the
inverse twiddles undoes the butterfly (up to a factor 2 per stage), and a final VMULS by
N^-1 mod q scales. When the NTT's input or output is in the data memory, the first
inverse un-shuffle or the last forward shuffle is folded into STRIDED loads or stores
(the paper's 64K NTT: 1,024 compute and 1,920 = 15 x 128 shuffle instructions).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fhec.ring.modarith import inv_mod
from fhec.ring.ntt import bit_reverse_permutation, primitive_2n_root

__all__ = ["stage_twiddles", "stage_count"]


def stage_count(N: int) -> int:
    return N.bit_length() - 1


@lru_cache(maxsize=64)
def _positions(N: int) -> np.ndarray:
    """(log2 N, N) int64: row s maps each position before stage s to the in-place index
    it holds; checks that every stage pairs in-place butterflies and that the last shuffle
    restores the in-place order."""
    logn = stage_count(N)
    half = N // 2
    pos = np.arange(N, dtype=np.int64)
    rows = np.empty((logn, N), dtype=np.int64)
    for s in range(logn):
        rows[s] = pos
        h = N >> (s + 1)
        lo, hi = pos[:half], pos[half:]
        if not (np.array_equal(hi, lo + h) and np.all((lo // h) % 2 == 0)):
            raise AssertionError(f"Pease stage {s} of N={N} does not pair in-place butterflies")  # pragma: no cover
        nxt = np.empty_like(pos)
        nxt[0::2], nxt[1::2] = lo, hi
        pos = nxt
    if not np.array_equal(pos, np.arange(N)):
        raise AssertionError("Pease network does not return to the in-place order")  # pragma: no cover
    rows.setflags(write=False)
    return rows


@lru_cache(maxsize=256)
def _psi_powers(N: int, q: int) -> np.ndarray:
    """psi^k mod q for k < N (object ints are avoided: q < 2^62 and Python ints multiply)."""
    psi = primitive_2n_root(N, q)
    out = [1] * N
    for k in range(1, N):
        out[k] = out[k - 1] * psi % q
    return np.array(out, dtype=np.uint64)


@lru_cache(maxsize=256)
def stage_twiddles(N: int, q: int, inverse: bool) -> np.ndarray:
    """(log2 N, N/2) uint64: the twiddle of each lower position p < N/2 at each stage.

    Forward stage s (m = 2^s butterfly groups of half-size h = N/2m): the butterfly
    whose lower in-place index is x uses psi^bitrev(m + x // 2h); inverse: its inverse
    (for BFLY_GS, which undoes it up to a factor 2)."""
    logn = stage_count(N)
    rows = _positions(N)
    brv = bit_reverse_permutation(N)
    powers = _psi_powers(N, q)
    out = np.empty((logn, N // 2), dtype=np.uint64)
    for s in range(logn):
        m = 1 << s
        h = N >> (s + 1)
        x = rows[s][: N // 2]
        w = powers[brv[m + x // (2 * h)]]
        if inverse:
            # psi^-e = psi^(2N - e) = -psi^(N - e); computed once per distinct value
            uniq, inv_idx = np.unique(w, return_inverse=True)
            w = np.array([inv_mod(int(u), q) for u in uniq], dtype=np.uint64)[inv_idx]
        out[s] = w
    out.setflags(write=False)
    return out


def n_inverse(N: int, q: int) -> int:
    return inv_mod(N, q)


def reference_pease(a: np.ndarray, q: int, inverse: bool = False) -> np.ndarray:
    """The Pease network on one polynomial with Python ints (a test oracle for the
    vector code; equals `fhec.ring.ntt.ntt` / `intt`)."""
    N = len(a)
    logn = stage_count(N)
    tw = stage_twiddles(N, q, inverse)
    x = [int(v) for v in a]
    half = N // 2
    if not inverse:
        for s in range(logn):
            nxt = [0] * N
            for p in range(half):
                u, v = x[p], x[p + half] * int(tw[s, p]) % q
                nxt[2 * p], nxt[2 * p + 1] = (u + v) % q, (u - v) % q
            x = nxt
        return np.array(x, dtype=np.uint64)
    for s in reversed(range(logn)):
        nxt = [0] * N
        for p in range(half):
            u, v = x[2 * p], x[2 * p + 1]
            nxt[p], nxt[p + half] = (u + v) % q, (u - v) * int(tw[s, p]) % q
        x = nxt
    ninv = n_inverse(N, q)
    return np.array([v * ninv % q for v in x], dtype=np.uint64)
