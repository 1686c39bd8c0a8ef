"""Key switching, the dominant kernel of FHE (F1 §2.4), in its two methods.

Both take a polynomial x (NTT domain, at some level) and a `SwitchingKey` from s' to s,
and return (u0, u1) with u0 + u1·s ≈ x·s' (error a multiple of t for BGV). Each is
written as the three steps the compiler later expands and schedules separately
(ARCHITECTURE.md, "Key switching is not atomic after expansion"):

* `decompose` (mod_up): the digits of x, each extended to the key-switching basis;
* `key_mult`: the inner product of the digits with the key;
* `mod_down`: hybrid only, division by P back to Q.

The limb-level lowering in `fhec/passes/lower` computes exactly the same residues,
which is what keeps "compile → execute → decrypt" bit-identical to this evaluator.
"""

from __future__ import annotations

import numpy as np

from fhec.ring.modarith import add_mod, mul_mod
from fhec.ring.ntt import intt, ntt
from fhec.ring.rns import divide_by_dropped, fast_base_convert, lift_centered
from fhec.schemes.keys import SwitchingKey
from fhec.schemes.params import Params


def ks_basis(params: Params, level: int, method: str) -> tuple[int, ...]:
    """The moduli over which digits and the key product live at `level`."""
    q = params.moduli_at(level)
    return q if method == "bv" else q + params.special_moduli_at(level)


def key_rows(params: Params, level: int, method: str) -> np.ndarray:
    """Indices of the key's limbs used at `level` (a prefix of Q, then the level's basis's
    prefix of P: a key's rows are Q's limbs, then its basis's special primes)."""
    L = params.limbs_at(level)
    if method == "bv":
        return np.arange(L)
    return np.concatenate([np.arange(L), params.max_limbs + np.arange(params.alpha_at(level))])


def digit_sources(params: Params, level: int, method: str) -> tuple[tuple[int, ...], ...]:
    """Limb indices of Q forming each digit at `level`: single limbs (BV) or groups of alpha (hybrid)."""
    if method == "bv":
        return tuple((i,) for i in range(params.limbs_at(level)))
    return params.digit_groups(level)


def decompose(params: Params, x: np.ndarray, level: int, method: str) -> list[np.ndarray]:
    """Mod-up: the digits of x, each as an NTT-domain polynomial over `ks_basis`.

    Digit d takes x's residues on its source limbs (kept as they are, in NTT form) and
    extends them to every other modulus of the basis: by the centered lift of the single
    coefficient-domain limb (BV: F1 Listing 1, ``NTT(y[i], q_j)``), or by fast base
    conversion from the group's primes (hybrid), whose terms are lifted centered too
    (`fhec.ring.rns.lift_centered`).
    """
    basis = ks_basis(params, level, method)
    digits = []
    for group in digit_sources(params, level, method):
        src = tuple(basis[i] for i in group)
        others = [m for m in range(len(basis)) if m not in group]
        dst = tuple(basis[m] for m in others)
        y = intt(x[list(group)], src)
        if method == "bv":
            ext = lift_centered(np.broadcast_to(y[0], (len(dst), y.shape[1])), (src[0],) * len(dst), dst)
        else:
            ext = fast_base_convert(y, src, dst)
        d = np.empty((len(basis), x.shape[1]), dtype=np.uint64)
        d[list(group)] = x[list(group)]
        d[others] = ntt(ext, dst)
        digits.append(d)
    return digits


def key_mult(
    params: Params, digits: list[np.ndarray], key: SwitchingKey, level: int
) -> tuple[np.ndarray, np.ndarray]:
    """Inner product Σ_d digit_d · (b_d, a_d) over the key-switching basis."""
    basis = ks_basis(params, level, key.method)
    q = np.array(basis, dtype=np.uint64)
    rows = key_rows(params, level, key.method)
    acc0 = acc1 = None
    for d, digit in zip(range(len(digits)), digits):
        t0 = mul_mod(digit, key.b[d][rows], q)
        t1 = mul_mod(digit, key.a[d][rows], q)
        acc0 = t0 if acc0 is None else add_mod(acc0, t0, q)
        acc1 = t1 if acc1 is None else add_mod(acc1, t1, q)
    return acc0, acc1


def mod_down(params: Params, u: np.ndarray, level: int) -> np.ndarray:
    """Divide a hybrid key-switch result by P, from Q_l·P back to Q_l (BGV-safe rounding)."""
    t = params.plain_modulus if params.scheme == "bgv" else None
    return divide_by_dropped(u, params.moduli_at(level), params.special_moduli_at(level), t)


def key_switch(params: Params, x: np.ndarray, key: SwitchingKey, level: int) -> tuple[np.ndarray, np.ndarray]:
    """(u0, u1) with u0 + u1·s ≈ x·s', over Q at `level` (NTT domain). `key` is of the
    level's basis (`KeySet.key_at`)."""
    u0, u1 = key_mult(params, decompose(params, x, level, key.method), key, level)
    if key.method == "hybrid":
        u0, u1 = mod_down(params, u0, level), mod_down(params, u1, level)
    return u0, u1
