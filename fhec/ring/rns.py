"""RNS bases: CRT composition, fast base conversion, and exact division by dropped primes.

Polynomials are ``uint64`` arrays of shape ``(limbs, N)`` whose row i is reduced mod
``moduli[i]``. Big integers (CRT composition) are numpy object arrays of Python ints:
they appear only at the edges (encoding, decryption), never inside evaluation.

The division by dropped primes implements, with one formula, three operations that
every RNS scheme needs (see `divide_by_dropped`):

* CKKS rescale:     x' = round(x / q_last)            (drop one prime, divide)
* BGV mod switch:   x' = (x + δ) / q_last, δ ≡ -x mod q_last, δ ≡ 0 mod t
* key-switch mod-down by P (hybrid): the same with the special primes dropped.
"""

from __future__ import annotations

from functools import lru_cache, reduce
from operator import mul

import numpy as np

from fhec.ring import _kernels as K
from fhec.ring.modarith import add_mod, barrett_constants, mul_const_mod, reduce_mod
from fhec.ring.ntt import intt, ntt


def product(moduli: tuple[int, ...]) -> int:
    """The product of the moduli as a Python int."""
    return reduce(mul, moduli, 1)


@lru_cache(maxsize=256)
def _crt_constants(moduli: tuple[int, ...]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    Q = product(moduli)
    hats = tuple(Q // q for q in moduli)
    inv_hats = tuple(pow(h % q, -1, q) for h, q in zip(hats, moduli))
    return Q, hats, inv_hats


def crt_compose(residues: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """The integers in [0, Q) with the given residues (object array of Python ints, shape (N,))."""
    Q, hats, inv_hats = _crt_constants(moduli)
    y = mul_const_mod(residues, np.array(inv_hats, dtype=np.uint64), moduli)
    acc = np.zeros(residues.shape[1], dtype=object)
    for row, h in zip(y, hats):
        acc = acc + row.astype(object) * h
    return acc % Q


def centered(values: np.ndarray, Q: int) -> np.ndarray:
    """Map integers in [0, Q) to the centered range (-Q/2, Q/2] (object array)."""
    return np.where(values > Q // 2, values - Q, values)


def lift_centered(x: np.ndarray, src: tuple[int, ...], dst: tuple[int, ...]) -> np.ndarray:
    """Row i of `x` (residues mod ``src[i]``, shape (k, N)) as residues mod ``dst[i]`` of
    their centered representatives in (-src[i]/2, src[i]/2].

    This is how one modulus's residue is read under another (a key-switch digit extended
    to the other primes, a term of a base conversion): one comparison and one conditional
    subtraction of src[i] per element, which an accelerator's BConv or NTT unit can do on
    the fly. Against the plain lift from [0, src[i]) it halves the digit's magnitude and
    removes its bias, so key-switching error no longer concentrates on a few slots, and it
    makes the division by dropped primes round to nearest instead of down.
    """
    x = np.ascontiguousarray(x, dtype=np.uint64)
    s = np.array(src, dtype=np.uint64)
    d = np.array(dst, dtype=np.uint64)
    qs, _, _, mu64 = barrett_constants(tuple(int(m) for m in dst))
    out = np.empty_like(x)
    K.lift_centered_2d(x, s, s // np.uint64(2), (d - s % d) % d, qs, mu64, out)
    return out


def to_rns(coeffs: np.ndarray, moduli: tuple[int, ...]) -> np.ndarray:
    """Reduce signed integer coefficients (int64 or object array) mod each modulus.

    Returns a ``uint64`` array of shape (len(moduli), N).
    """
    out = np.empty((len(moduli), len(coeffs)), dtype=np.uint64)
    if coeffs.dtype == object:
        for i, q in enumerate(moduli):
            out[i] = np.array([int(c) % q for c in coeffs], dtype=np.uint64)
    else:
        c = coeffs.astype(np.int64)
        for i, q in enumerate(moduli):
            out[i] = np.mod(c, np.int64(q)).astype(np.uint64)
    return out


@lru_cache(maxsize=1024)
def _bconv_constants(
    src: tuple[int, ...], dst: tuple[int, ...], pre: tuple[int, ...], post: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Constants of a fast base conversion src -> dst.

    first[i]  = pre[i] · (B/b_i)^{-1} mod b_i      (one per source prime)
    second[j, i] = post[j] · (B/b_i) mod d_j         (one per target and source prime)
    """
    B = product(src)
    first = np.array([(p * pow(B // b % b, -1, b)) % b for p, b in zip(pre, src)], dtype=np.uint64)
    second = np.array([[(s * (B // b)) % d for b in src] for s, d in zip(post, dst)], dtype=np.uint64)
    return first, second


def bconv_constants(
    src: tuple[int, ...], dst: tuple[int, ...], pre: tuple[int, ...] | None = None, post: tuple[int, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-source and per-(target, source) constants of `fast_base_convert` (cached).

    `pre` (per source) and `post` (per target) are extra factors folded into the
    constants; the lowering emits exactly these constants, which is what keeps the
    compiled program bit-identical to the evaluator.
    """
    pre = pre if pre is not None else (1,) * len(src)
    post = post if post is not None else (1,) * len(dst)
    return _bconv_constants(tuple(src), tuple(dst), tuple(pre), tuple(post))


def fast_base_convert(
    x: np.ndarray,
    src: tuple[int, ...],
    dst: tuple[int, ...],
    pre: tuple[int, ...] | None = None,
    post: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Approximate (HPS-style) conversion of coefficient-domain residues from basis `src` to `dst`.

    For x with residues x_i mod b_i, returns, modulo every d_j::

        post_j · Σ_i [x_i · pre_i · (B/b_i)^{-1}]_{b_i} · (B/b_i)  =  post_j · (x·pre + u·B),  |u| <= len(src)/2

    where each bracket is the *centered* representative (`lift_centered`): the value of
    the integer representative plus a small multiple u of B (no correction of u: callers
    choose gadgets and divisions under which u·B vanishes).
    """
    first, second = bconv_constants(src, dst, pre, post)
    y = mul_const_mod(x, first, src)
    n = x.shape[1]
    out = None
    # One source prime at a time, every target prime at once; the sum is exact modular
    # arithmetic, so its order does not change a single residue.
    for i in range(len(src)):
        lifted = lift_centered(np.broadcast_to(y[i], (len(dst), n)), (src[i],) * len(dst), dst)
        term = mul_const_mod(lifted, second[:, i], dst)
        out = term if out is None else add_mod(out, term, dst)
    return out


def divide_by_dropped(
    x_ntt: np.ndarray, keep: tuple[int, ...], drop: tuple[int, ...], t: int | None = None
) -> np.ndarray:
    """Divide an NTT-domain polynomial over basis keep ∪ drop by D = Π drop, returning it over `keep`.

    With ``t=None`` (CKKS rescale, CKKS mod-down) the result is (x − v)/D where
    v ≡ x (mod D) is reconstructed by fast base conversion from centered residues: x/D
    rounded to nearest, up to a small additive error of at most len(drop)/2.
    With a plaintext modulus t (BGV) the result is (x + t·v)/D with v ≡ −x·t^{-1} (mod D),
    so the numerator is divisible by D and the change is a multiple of t: the plaintext
    is preserved up to the factor D^{-1} mod t, which the caller tracks.

    `x_ntt` rows are ordered keep first, then drop. Raises nothing for valid input.
    """
    k = len(keep)
    dropped = intt(x_ntt[k:], drop)
    # v's pre-factor: 1 (CKKS) or −t^{-1} mod d (BGV); the post-factor λ·D^{-1} mod q with
    # λ = −1 (CKKS) or t (BGV). Folding both into the conversion constants costs nothing.
    D = product(drop)
    if t is None:
        pre = None
        post = tuple((-pow(D % q, -1, q)) % q for q in keep)
    else:
        pre = tuple((-pow(t, -1, d)) % d for d in drop)
        post = tuple((t * pow(D % q, -1, q)) % q for q in keep)
    conv = ntt(fast_base_convert(dropped, drop, keep, pre, post), keep)
    inv_D = np.array([pow(D % q, -1, q) for q in keep], dtype=np.uint64)
    return add_mod(mul_const_mod(x_ntt[:k], inv_D, keep), conv, keep)


def lift_limb(x: np.ndarray, dst: tuple[int, ...]) -> np.ndarray:
    """Reduce one coefficient-domain limb (shape (N,), values < 2**62) mod each of `dst`."""
    return reduce_mod(np.broadcast_to(x, (len(dst), x.shape[-1])).copy(), dst)
