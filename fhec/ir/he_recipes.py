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
  sums of |M| over the diagonals included so far (rotations move slots, not maxima).
* POLYNOMIAL: a power or Chebyshev series, optionally on a domain, by baby-step /
  giant-step Paterson–Stockmeyer (`fhec.ir.he_polynomial`): depth ceil(log2(d+1)), plus
  one for a non-integer domain map. It always applies the auto rescaling policy
  internally: inside the op there is no place where a manual-mode program could rescale.
"""

from __future__ import annotations

import functools

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from fhec.ir.he import Const, HeOp, HeType, RotatedConst, attrs_of, sorted_keys
from fhec.ir.he_polynomial import polynomial_recipe
from fhec.ir.he_types import IRTypeError, row_length

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


class _Sums:
    """A running sum of terms, emitted with `add_op`, whose nodes carry the bound hint
    Σ|diag_k|·B of the diagonals included so far (see the module doc)."""

    def __init__(self, b, add_op: HeOp, x_bound: float | None, loc):
        self.b, self.add_op, self.x_bound, self.loc = b, add_op, x_bound, loc
        self.value, self.abs = None, None

    def add(self, term: int, abs_diag) -> None:
        self.abs = abs_diag if self.abs is None else self.abs + abs_diag
        if self.value is None:
            self.value = term
            return
        hint = attrs_of() if self.x_bound is None else attrs_of(bound=float(self.abs.max()) * self.x_bound)
        self.value = self.b.emit(self.add_op, (self.value, term), hint, self.loc)


def _bsgs_single(b, source: int, giants, ps, hoisting: dict, x_bound, loc, out: _Sums) -> None:
    """Σ_g rot_g(Σ_j diag'_{g,j} ⊙ rot_j(source)) with each rotation a whole key switch
    (its mod-up shared by the baby steps when the key-switch expansion hoists it)."""
    row = row_length(b.params)
    babies: dict[int, int] = {}
    for g, terms in giants.items():
        inner = _Sums(b, HeOp.ADD, x_bound, loc)
        for j, diag, vec in terms:
            if j % row not in babies:
                baby_attrs = attrs_of(step=j % row, **hoisting)
                babies[j % row] = b.emit(HeOp.ROTATE, (source,), baby_attrs, loc) if j % row else source
            term = b.emit(HeOp.MUL_CONST, (babies[j % row],), attrs_of(value=diag, plain_scale=ps), loc)
            inner.add(term, abs(vec.array))
        value = inner.value
        if g % row:
            value = b.emit(HeOp.ROTATE, (value,), attrs_of(step=g % row), loc)
        out.add(value, inner.abs)


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
    total = _Sums(b, HeOp.ADD_EXT, x_bound, loc)
    direct = None  # the j = 0 term of the g = 0 group when it has no other term, over Q
    for g, terms in giants.items():
        plain = [(j, diag, vec) for j, diag, vec in terms if j % row == 0]
        plain_term = None
        if plain:
            _, diag, vec = plain[0]
            plain_term = (b.emit(HeOp.MUL_CONST, (source,), attrs_of(value=diag, plain_scale=ps), loc), abs(vec.array))
        ext = _Sums(b, HeOp.ADD_EXT, x_bound, loc)
        for j, diag, vec in terms:
            if j % row == 0:
                continue
            if j % row not in babies:
                babies[j % row] = b.emit(HeOp.ROTATE_EXT, (source,), attrs_of(step=j % row, keyswitch="hybrid"), loc)
            term = b.emit(HeOp.MUL_CONST_EXT, (babies[j % row],), attrs_of(value=diag, plain_scale=ps), loc)
            if plain_term is not None:  # the sum's first product takes the j = 0 term in (see the doc)
                abs_sum = plain_term[1] + abs(vec.array)
                hint = attrs_of() if x_bound is None else attrs_of(bound=float(abs_sum.max()) * x_bound)
                term = b.emit(HeOp.ADD_EXT_Q, (term, plain_term[0]), hint, loc)
                ext.add(term, abs_sum)
                plain_term = None
                continue
            ext.add(term, abs(vec.array))
        if ext.value is None:  # the j = 0 term alone: no sum over Q·P to join
            if g % row == 0:
                direct = plain_term
                continue
            total.add(b.emit(HeOp.ROTATE_EXT, (plain_term[0],), attrs_of(step=g % row, keyswitch="hybrid"), loc),
                      plain_term[1])
            continue
        if g % row == 0:
            total.add(ext.value, ext.abs)
            continue
        inner = b.emit(HeOp.MOD_DOWN_EXT, (ext.value,), (), loc)
        total.add(b.emit(HeOp.ROTATE_EXT, (inner,), attrs_of(step=g % row, keyswitch="hybrid"), loc), ext.abs)
    if total.value is not None:
        out.add(b.emit(HeOp.MOD_DOWN_EXT, (total.value,), (), loc), total.abs)
    if direct is not None:
        out.add(*direct)


def linear_transform_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    params = b.params
    check_diagonals(params, attrs["diagonals"])
    ps, mode = attrs["plain_scale"], attrs.get("hoisting")
    x_bound = b.type_of(x).bound
    out = _Sums(b, HeOp.ADD, x_bound, loc)
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
    return out.value


def _bootstrap_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    from fhec.ir.he_bootstrap import bootstrap_recipe  # it uses linear_transform_recipe above

    return bootstrap_recipe(b, x, attrs, loc)


RECIPES: dict[HeOp, Recipe] = {
    HeOp.SUM_SLOTS: sum_slots_recipe,
    HeOp.LINEAR_TRANSFORM: linear_transform_recipe,
    HeOp.POLYNOMIAL: polynomial_recipe,
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
