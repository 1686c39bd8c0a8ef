"""How each high-level HE op decomposes into primitives (one recipe per op).

A recipe takes a `HeBuilder`, the operand's value id, the node's attributes and its
source location, emits primitives and returns the id of the result. The same recipe
serves two purposes, which is what keeps them consistent:

* typing: `dry_run` replays it on a scratch builder and the high-level node's type is
  the type of the recipe's result (plus every key the recipe needs);
* expansion: `fhec.passes.he_expand.expand` replays it into the program being rebuilt.

Recipes (default algorithms; later passes may choose others, e.g. BSGS or hoisting):

* SUM_SLOTS(n, stride): slot i <- sum_{j<n} x[i + j·stride] (cyclic within a CKKS
  vector / a BGV row; stride 1 when absent; a replicate is a stride taken mod the row).
  Doubling S_2m = S_m + rot(S_m, m·stride) and S_2m+1 = x + rot(S_2m, stride), read from
  the bits of n: log2(n) rotate-and-adds for a power of two. A rotation by a multiple of
  the row is the identity and is not emitted. BGV n = N also adds the swapped rows.
* LINEAR_TRANSFORM: baby-step giant-step (Halevi–Shoup; Bossuat et al. 2021 §3) over the
  generalized diagonals y = sum_k diag_k ⊙ rot(x, k), k = g + j with g a multiple of n1:
  y = sum_g rot( sum_j rot(diag_{g+j}, -g) ⊙ rot(x, j), g ), the diagonals pre-rotated
  by -g. `bsgs_split` picks n1 to minimize the distinct rotations (baby steps j plus
  giant steps g), which is also the number of rotation keys, unless the node gives
  ``n1``; an n1 spanning every step is the diagonal method (one rotation of the input
  per diagonal), chosen when nothing is saved. ``hoisting="double"`` keeps the baby
  steps over Q·P (`_bsgs_double`). Each plaintext
  multiply uses one common encoding scale, so the products add without alignment; the
  giant-step rotations act on the unrescaled sums (their key-switch error lands at the
  larger scale) and one rescale follows. BGV cross-row diagonals get a row swap first
  and their own BSGS. CKKS adds carry the bound of their partial sum as a hint: slot i of
  sum_{k in K} rot(diag_k ⊙ ...) is bounded by sum_{k in K} |diag_k[i]| · B, the row
  sums of |M| over the diagonals included so far (rotations move slots, not maxima),
  and their error as a ``noise`` hint (`_ErrorModel`): the operand's error times the
  largest absolute row sum of the diagonals so far, plus the fresh errors of the
  rotations and encodings, where the per-op rules charged every diagonal as 1.
* POLYNOMIAL: a power or Chebyshev series, optionally on a domain, by baby-step /
  giant-step Paterson–Stockmeyer (`fhec.ir.he_polynomial`): depth ceil(log2(d+1)), plus
  one for a non-integer domain map; its result's error is hinted from the series' largest
  slope (`polynomial_node_recipe`). It always applies the auto rescaling policy
  internally: inside the op there is no place where a manual-mode program could rescale.
"""

from __future__ import annotations

import functools
import math

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from fhec.ir.he import Const, HeOp, HeType, RotatedConst, attrs_of, sorted_keys
from fhec.ir.he_polynomial import polynomial_node_recipe
from fhec.ir.he_types import NOISE_SATURATION_BITS, IRTypeError, row_length

Recipe = Callable[["HeBuilder", int, dict[str, Any], "str | None"], int]  # noqa: F821


def sum_slots_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    params = b.params
    n, row = attrs["n"], row_length(params)
    whole_bgv = params.scheme == "bgv" and n == params.N
    m = row if whole_bgv else n
    if not (isinstance(m, int) and 1 <= m <= row):
        raise IRTypeError(f"sum_slots n={n!r} out of range for {params.slots} slots")
    stride = attrs.get("stride", 1)

    def rot(v: int, k: int) -> int:
        k = (k * stride) % row
        return b.emit(HeOp.ROTATE, (v,), attrs_of(step=k), loc) if k else v

    acc, width = x, 1
    for bit in bin(m)[3:]:  # the bits after the leading one, most significant first
        acc = b.emit(HeOp.ADD, (acc, rot(acc, width)), (), loc)
        width *= 2
        if bit == "1":
            acc = b.emit(HeOp.ADD, (x, rot(acc, 1)), (), loc)
            width += 1
    if whole_bgv:
        acc = b.emit(HeOp.ADD, (acc, b.emit(HeOp.SWAP_ROWS, (acc,), (), loc)), (), loc)
    return acc


def check_diagonals(params, diagonals: Any) -> None:
    """Raise IRTypeError unless `diagonals` is a non-empty tuple of distinct
    (step in [0, row), swap: bool, Const of `slots` values) triples."""
    row = row_length(params)
    if not isinstance(diagonals, tuple) or not diagonals:
        raise IRTypeError("linear_transform needs at least one diagonal")
    seen = set()
    for d in diagonals:
        if not (isinstance(d, tuple) and len(d) == 3):
            raise IRTypeError(f"bad diagonal {d!r}")
        step, swap, vec = d
        ok = isinstance(step, int) and 0 <= step < row and isinstance(swap, bool) and isinstance(vec, Const)
        if not ok or vec.array.shape != (params.slots,) or (swap and params.scheme != "bgv") or (step, swap) in seen:
            raise IRTypeError(f"bad diagonal ({step!r}, {swap!r}, ...)")
        seen.add((step, swap))


def signed_step(step: int, row: int) -> int:
    """A rotation step in (-row/2, row/2]: the diagonals of a matrix smaller than the row
    sit at both ends of [0, row), and reading them as signed makes them one range."""
    return step - row if step > row // 2 else step


def bsgs_split(steps, row: int, max_giants: int | None = None) -> int:
    """The baby-step count n1 that minimizes the distinct nonzero rotations (baby steps
    j = lo + (k - lo) mod n1 and giant steps k - j) of the signed `steps`; ties go to the
    larger n1. An n1 spanning every step is the diagonal method (every rotation a baby
    step of the input, which hoisting can share). `max_giants`: only splits with at most
    that many giant steps (the zero step counted) compete (a machine that keeps the giant
    steps' partial sums on chip, Osiris §V); the diagonal method always qualifies."""
    return _best_split(tuple(sorted({signed_step(int(k), row) for k in steps})), max_giants)


_SPLIT_CHUNK = 1 << 21
"""Elements (candidate n1 x steps) `_best_split` scores at once."""


@functools.lru_cache(maxsize=256)
def _best_split(signed: tuple[int, ...], max_giants: int | None = None) -> int:
    """`bsgs_split` of sorted distinct signed steps, scoring every n1 at once in numpy (a
    bootstrap's transforms repeat in every bootstrap, hence the cache). With d = k − lo,
    the baby step of k is lo + d mod n1 and its giant step n1·floor(d / n1), so the cost
    of n1 is the distinct remainders (less one when the baby step 0 occurs, i.e. some
    remainder equals −lo) plus the distinct quotients less one (quotient 0 always occurs:
    the smallest step has d = 0)."""
    d = np.asarray(signed, dtype=np.int64) - signed[0]
    lo, span = signed[0], int(d[-1]) + 1
    candidates = np.arange(span, 0, -1, dtype=np.int64)  # ties go to the larger n1: first in this order
    costs = np.empty(span, dtype=np.int64)
    step = max(1, _SPLIT_CHUNK // len(d))
    for start in range(0, span, step):
        n1 = candidates[start:start + step, None]
        q = d[None, :] // n1  # non-decreasing along each row, since d is sorted
        r = np.sort(d[None, :] - q * n1, axis=1)
        giants = np.count_nonzero(np.diff(q, axis=1), axis=1)
        babies = 1 + np.count_nonzero(np.diff(r, axis=1), axis=1) - np.any(r == -lo, axis=1)
        costs[start:start + step] = babies + giants
        if max_giants is not None:  # 1 + giants distinct giant steps, the zero step included
            costs[start:start + step][1 + giants > max_giants] = np.iinfo(np.int64).max
    return int(candidates[int(np.argmin(costs))])


def bsgs_groups(steps, row: int, n1: int | None = None) -> tuple[int, int, dict[int, list[int]]]:
    """(n1, lo, giant step g -> baby steps j) of the signed diagonal `steps`: k = g + j
    with j = lo + (k − lo) mod n1 (lo the smallest signed step), n1 by `bsgs_split`
    unless given (at most the span of the steps)."""
    signed = sorted({signed_step(int(k), row) for k in steps})
    lo, span = signed[0], signed[-1] - signed[0] + 1
    n1 = bsgs_split(steps, row) if n1 is None else min(int(n1), span)
    groups: dict[int, list[int]] = {}
    for k in signed:
        j = (k - lo) % n1 + lo
        groups.setdefault(k - j, []).append(j)
    return n1, lo, groups


def _giant_groups(params, diagonals, n1: int | None) -> dict[int, list[tuple[int, Const, Const]]]:
    """BSGS grouping of one set of diagonals: giant step g -> [(baby step j, diagonal
    pre-rotated by -g, original diagonal)], sorted by j (`bsgs_groups`)."""
    row = row_length(params)
    n1, _, _ = bsgs_groups([step for step, _ in diagonals], row, n1)
    lo = min(signed_step(step, row) for step, _ in diagonals)
    giants: dict[int, list[tuple[int, Const, Const]]] = {}
    for step, vec in diagonals:
        k = signed_step(step, row)
        j = (k - lo) % n1 + lo
        g = k - j
        diag = RotatedConst(vec, -g, row) if g % row else vec
        giants.setdefault(g, []).append((j, diag, vec))
    return {g: sorted(terms, key=lambda t: t[0]) for g, terms in sorted(giants.items())}


class _Part:
    """What a sum of diagonal products owes to each source of error, per output slot
    (`_ErrorModel`): `abs` = Σ_k |diag_k|, `sq` = Σ_k diag_k² over the terms whose baby
    step is a rotation (None when none is), `ks_var` the largest fresh key-switch
    variance among those rotations (one per level and method in practice), and `var`
    the variance of the slot-independent errors (encoding roundings, giant-step key
    switches), in the product's scaled units."""

    def __init__(self, abs_diag, sq, ks_var: float, var: float):
        self.abs, self.sq, self.ks_var, self.var = abs_diag, sq, ks_var, var

    @staticmethod
    def _sum(a, b):
        return b if a is None else a if b is None else a + b

    def __add__(self, other: "_Part") -> "_Part":
        return _Part(self.abs + other.abs, self._sum(self.sq, other.sq), max(self.ks_var, other.ks_var),
                     self.var + other.var)

    def accumulate(self, other: "_Part") -> None:
        """self += other, in place (a running sum's own arrays)."""
        self.abs += other.abs
        if other.sq is not None:
            if self.sq is None:
                self.sq = other.sq.copy()
            else:
                self.sq += other.sq
        self.ks_var, self.var = max(self.ks_var, other.ks_var), self.var + other.var

    def plus_var(self, var: float) -> "_Part":
        return _Part(self.abs, self.sq, self.ks_var, self.var + var)


class _ErrorModel:
    """The error of y = Σ_k diag_k ⊙ rot(x, k) at the products' scale S = s·ps (x at
    scale s with error std σ_x = 2^noise, |x| <= B), as the sum of three independent
    parts, each bounded per output slot i:

    * x's own error, Σ_k diag_k[i]·e_x[i + k]: by Minkowski's inequality its std is at
      most Σ_k |diag_k[i]|·σ_x whatever the correlation between x's slot errors (a
      replicated sum has the same error in every slot), so ps·σ_x·max_i Σ_k |diag_k[i]|,
      the matrix's largest absolute row sum. The generic rules charged every product as
      if its diagonal were 1 and added the k copies in variance (√k·σ_x): 2.3 bits for
      27 diagonals whatever their size, and too little for a matrix of large entries;
    * the baby-step rotations' key-switching errors f_j: fresh and independent between
      rotations (different keys) and between slots (independent coefficients), so their
      variance is ps²·Σ_k diag_k[i]²·Var f_{j(k)} <= ps²·max_j Var f_j·Σ_k diag_k[i]²
      (one variance per sum keeps the bookkeeping to one array product per diagonal);
    * per product the diagonal's encoding rounding r (slot std √(N/12)) times the
      message, s·x[i + k]·r_k[i] (std <= s·B·√(N/12)), and per giant step its rotation's
      key switch (and mod-down) at scale S; all independent.

    The fresh key-switch variance of a rotation is read from the types: what its rule
    added to its operand's (4^noise_rot − 4^noise_operand). CKKS only (BGV keeps the
    generic rules)."""

    def __init__(self, b, x: int, ps):
        self.b = b
        t = b.type_of(x)
        self.enabled = b.ckks
        if not self.enabled:
            return
        self.x_var = 4.0 ** t.noise
        self.ps = float(ps)
        self.log_scale = math.log2(t.scale * self.ps)
        bound = 1.0 if t.bound is None else t.bound
        self.rounding_var = (t.scale * bound) ** 2 * b.params.N / 12.0

    def fresh_var(self, rotated: int, source: int) -> float:
        """The variance a rotation (or any key switch) added to its operand's error."""
        if rotated == source or not self.enabled:
            return 0.0
        return max(0.0, 4.0 ** self.b.type_of(rotated).noise - 4.0 ** self.b.type_of(source).noise)

    def term(self, vec, baby_var: float) -> _Part:
        a = np.abs(vec.array)
        return _Part(a, a * a if baby_var > 0 else None, baby_var, self.rounding_var if self.enabled else 0.0)

    def noise(self, part: _Part) -> float | None:
        """log2 of the bound on the sum's error std at scale S (None for BGV)."""
        if not self.enabled:
            return None
        fresh = 0.0 if part.sq is None else part.ks_var * float(part.sq.max())
        var = self.ps**2 * (self.x_var * float(part.abs.max()) ** 2 + fresh) + part.var
        log_std = 0.5 * math.log2(var) if var > 0 else -math.inf
        return min(log_std, self.log_scale + NOISE_SATURATION_BITS)


class _Sums:
    """A running sum of terms, emitted with `add_op`, whose nodes carry the bound hint
    Σ|diag_k|·B of the diagonals included so far (see the module doc) and the error
    hint of `_ErrorModel`."""

    def __init__(self, b, add_op: HeOp, x_bound: float | None, loc, model: _ErrorModel):
        self.b, self.add_op, self.x_bound, self.loc, self.model = b, add_op, x_bound, loc, model
        self.value, self.part = None, None

    @property
    def abs(self):
        return self.part.abs

    def add(self, term: int, part: _Part) -> None:
        if self.part is None:  # a copy: the sum accumulates into its own arrays
            self.part = _Part(part.abs.copy(), None if part.sq is None else part.sq.copy(), part.ks_var, part.var)
        else:
            self.part.accumulate(part)
        if self.value is None:
            self.value = term
            return
        hints = {} if self.x_bound is None else {"bound": float(self.part.abs.max()) * self.x_bound}
        noise = self.model.noise(self.part)
        if noise is not None:
            hints["noise"] = noise
        self.value = self.b.emit(self.add_op, (self.value, term), attrs_of(**hints), self.loc)


def _bsgs_single(b, source: int, giants, ps, hoisting: dict, x_bound, loc, out: _Sums) -> None:
    """Σ_g rot_g(Σ_j diag'_{g,j} ⊙ rot_j(source)) with each rotation a whole key switch
    (its mod-up shared by the baby steps when the key-switch expansion hoists it)."""
    row = row_length(b.params)
    babies: dict[int, int] = {}
    model = out.model
    for g, terms in giants.items():
        inner = _Sums(b, HeOp.ADD, x_bound, loc, model)
        for j, diag, vec in terms:
            if j % row not in babies:
                baby_attrs = attrs_of(step=j % row, **hoisting)
                babies[j % row] = b.emit(HeOp.ROTATE, (source,), baby_attrs, loc) if j % row else source
            term = b.emit(HeOp.MUL_CONST, (babies[j % row],), attrs_of(value=diag, plain_scale=ps), loc)
            inner.add(term, model.term(vec, model.fresh_var(babies[j % row], source)))
        value, part = inner.value, inner.part
        if g % row:
            value = b.emit(HeOp.ROTATE, (value,), attrs_of(step=g % row), loc)
            part = part.plus_var(model.fresh_var(value, inner.value))
        out.add(value, part)


def _bsgs_double(b, source: int, giants, ps, x_bound, loc, out: _Sums) -> None:
    """Double hoisting (Bossuat et al. 2021, §3.3): the baby-step rotations stay over Q·P
    (no mod-down), are multiplied by diagonals encoded over Q·P and summed there, and
    each giant step's sum is divided by P once before its own rotation; the giant-step
    rotations are summed over Q·P too, with one final mod-down.

    The j = 0 terms (the source itself) are computed over Q and join their giant step's
    sum as P·term (``add_ext_q``: P·term vanishes mod every special prime, so it costs a
    multiply by P on Q's limbs, and mod_down(A + P·B) = mod_down(A) + B exactly), at the
    sum's first product, as Lattigo lifts the source by P once
    (`MultiplyByDiagMatrixBSGS`). Added after the mod-down instead, each giant step's
    term would be computed with the source, before the first baby step, and held through
    all of them: n2 ciphertexts over Q beside the n2 sums over Q·P in the
    giant-step-centric order (Osiris set III's CoeffsToSlots: 4 x 2 x 26 RVecs, which the
    scratchpad spilled)."""
    row = row_length(b.params)
    babies: dict[int, int] = {}
    model = out.model
    total = _Sums(b, HeOp.ADD_EXT, x_bound, loc, model)
    direct = None  # the j = 0 term of the g = 0 group when it has no other term, over Q
    for g, terms in giants.items():
        plain = [(j, diag, vec) for j, diag, vec in terms if j % row == 0]
        plain_term = None
        if plain:
            _, diag, vec = plain[0]
            plain_term = (b.emit(HeOp.MUL_CONST, (source,), attrs_of(value=diag, plain_scale=ps), loc),
                          model.term(vec, 0.0))
        ext = _Sums(b, HeOp.ADD_EXT, x_bound, loc, model)
        for j, diag, vec in terms:
            if j % row == 0:
                continue
            if j % row not in babies:
                babies[j % row] = b.emit(HeOp.ROTATE_EXT, (source,), attrs_of(step=j % row, keyswitch="hybrid"), loc)
            term = b.emit(HeOp.MUL_CONST_EXT, (babies[j % row],), attrs_of(value=diag, plain_scale=ps), loc)
            part = model.term(vec, model.fresh_var(babies[j % row], source))
            if plain_term is not None:  # the sum's first product takes the j = 0 term in (see the doc)
                part = plain_term[1] + part
                hints = {} if x_bound is None else {"bound": float(part.abs.max()) * x_bound}
                if model.noise(part) is not None:
                    hints["noise"] = model.noise(part)
                term = b.emit(HeOp.ADD_EXT_Q, (term, plain_term[0]), attrs_of(**hints), loc)
                ext.add(term, part)
                plain_term = None
                continue
            ext.add(term, part)
        if ext.value is None:  # the j = 0 term alone: no sum over Q·P to join
            if g % row == 0:
                direct = plain_term
                continue
            rotated = b.emit(HeOp.ROTATE_EXT, (plain_term[0],), attrs_of(step=g % row, keyswitch="hybrid"), loc)
            part = plain_term[1]
            total.add(rotated, part.plus_var(model.fresh_var(rotated, plain_term[0])))
            continue
        if g % row == 0:
            total.add(ext.value, ext.part)
            continue
        inner = b.emit(HeOp.MOD_DOWN_EXT, (ext.value,), (), loc)
        rotated = b.emit(HeOp.ROTATE_EXT, (inner,), attrs_of(step=g % row, keyswitch="hybrid"), loc)
        total.add(rotated, ext.part.plus_var(model.fresh_var(rotated, inner)))
    if total.value is not None:
        out.add(b.emit(HeOp.MOD_DOWN_EXT, (total.value,), (), loc), total.part)
    if direct is not None:
        out.add(*direct)


def linear_transform_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    params = b.params
    check_diagonals(params, attrs["diagonals"])
    ps, mode = attrs["plain_scale"], attrs.get("hoisting")
    x_bound = b.type_of(x).bound
    out = _Sums(b, HeOp.ADD, x_bound, loc, _ErrorModel(b, x, ps))
    for swap in (False, True):
        diagonals = [(step, vec) for step, sw, vec in attrs["diagonals"] if sw is swap]
        if not diagonals:
            continue
        source = b.emit(HeOp.SWAP_ROWS, (x,), (), loc) if swap else x
        giants = _giant_groups(params, diagonals, attrs.get("n1"))
        if mode == "double":
            _bsgs_double(b, source, giants, ps, x_bound, loc, out)
        else:
            # a per-transform hoisting choice travels on its baby-step rotations to the key-switch expansion
            _bsgs_single(b, source, giants, ps, {"hoisting": mode} if mode else {}, x_bound, loc, out)
    noise = out.model.noise(out.part)
    if noise is not None and out.value == b.nodes[-1].id:  # a lone product (or mod-down) has no add to carry it
        b.hint_noise(out.value, noise)
    return out.value


def _bootstrap_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    from fhec.ir.he_bootstrap import bootstrap_recipe  # it uses linear_transform_recipe above

    return bootstrap_recipe(b, x, attrs, loc)


RECIPES: dict[HeOp, Recipe] = {
    HeOp.SUM_SLOTS: sum_slots_recipe,
    HeOp.LINEAR_TRANSFORM: linear_transform_recipe,
    HeOp.POLYNOMIAL: polynomial_node_recipe,
    HeOp.BOOTSTRAP: _bootstrap_recipe,
}


def dry_run(params, op: HeOp, attrs: dict[str, Any], arg_type: HeType, loc: str | None) -> HeType:
    """Type of a high-level node: replay its recipe on a scratch builder."""
    from fhec.ir.he_build import HeBuilder

    b = HeBuilder(params)
    x = b.external(arg_type)
    if not arg_type.is_cipher:
        raise IRTypeError(f"{op.value}: operand must be a ciphertext")
    out = RECIPES[op](b, x, attrs, loc)
    keys = sorted_keys(k for n in b.nodes for k in n.type.keys)
    return replace(b.type_of(out), keys=keys)
