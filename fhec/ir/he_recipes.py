"""How each high-level HE op decomposes into primitives (one recipe per op).

A recipe takes a `HeBuilder`, the operand's value id, the node's attributes and its
source location, emits primitives and returns the id of the result. The same recipe
serves two purposes, which is what keeps them consistent:

* typing: `dry_run` replays it on a scratch builder and the high-level node's type is
  the type of the recipe's result (plus every key the recipe needs);
* expansion: `fhec.passes.he_expand.expand` replays it into the program being rebuilt.

Recipes (default algorithms; later passes may choose others, e.g. BSGS or hoisting):

* SUM_SLOTS(n): slot i <- sum_{j<n} x[i+j] (cyclic within a CKKS vector / a BGV row).
  Doubling S_2m = S_m + rot(S_m, m) and S_2m+1 = x + rot(S_2m, 1), read from the bits
  of n: log2(n) rotate-and-adds for a power of two. BGV n = N also adds the swapped rows.
* LINEAR_TRANSFORM: baby-step giant-step (Halevi–Shoup; Bossuat et al. 2021 §3) over the
  generalized diagonals y = sum_k diag_k ⊙ rot(x, k), k = g + j with g a multiple of n1:
  y = sum_g rot( sum_j rot(diag_{g+j}, -g) ⊙ rot(x, j), g ), the diagonals pre-rotated
  by -g. `bsgs_split` picks n1 to minimize the distinct rotations (baby steps j plus
  giant steps g), which is also the number of rotation keys; an n1 spanning every step
  is the diagonal method (one rotation of the input per diagonal), chosen when nothing
  is saved. Each plaintext
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

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from fhec.ir.he import Const, HeOp, HeType, attrs_of, sorted_keys
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
    acc, width = x, 1
    for bit in bin(m)[3:]:  # the bits after the leading one, most significant first
        acc = b.emit(HeOp.ADD, (acc, b.emit(HeOp.ROTATE, (acc,), attrs_of(step=width), loc)), (), loc)
        width *= 2
        if bit == "1":
            acc = b.emit(HeOp.ADD, (x, b.emit(HeOp.ROTATE, (acc,), attrs_of(step=1), loc)), (), loc)
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


def _signed_step(step: int, row: int) -> int:
    """A rotation step in (-row/2, row/2]: the diagonals of a matrix smaller than the row
    sit at both ends of [0, row), and reading them as signed makes them one range."""
    return step - row if step > row // 2 else step


def bsgs_split(steps, row: int) -> int:
    """The baby-step count n1 that minimizes the distinct nonzero rotations (baby steps
    j = lo + (k - lo) mod n1 and giant steps k - j) of the signed `steps`; ties go to the
    larger n1. An n1 spanning every step is the diagonal method (every rotation a baby
    step of the input, which hoisting can share)."""
    signed = sorted({_signed_step(int(k), row) for k in steps})
    lo, span = signed[0], signed[-1] - signed[0] + 1
    best, best_cost = span, None
    for n1 in range(span, 0, -1):
        babies = {(k - lo) % n1 + lo for k in signed}
        giants = {k - ((k - lo) % n1 + lo) for k in signed}
        cost = len(babies - {0}) + len(giants - {0})
        if best_cost is None or cost < best_cost:
            best, best_cost = n1, cost
    return best


def _rotate_slots(params, vec, step: int):
    """rot(vec, step) on plaintext slots: slot t receives slot t + step, cyclically within
    a CKKS vector or within each BGV row."""
    row = row_length(params)
    rows = vec.reshape(-1, row)
    return np.roll(rows, -step, axis=1).reshape(-1)


def linear_transform_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    params = b.params
    check_diagonals(params, attrs["diagonals"])
    ps, row = attrs["plain_scale"], row_length(params)
    # a per-transform hoisting choice travels on its baby-step rotations to the key-switch expansion
    hoisting = {"hoisting": attrs["hoisting"]} if attrs.get("hoisting") else {}
    x_bound = b.type_of(x).bound

    def sum_hint(abs_sum) -> tuple:
        # The ADD rule alone (the sum of each operand's max) would be looser than the
        # row sums of |M|; see `he_types._additive`.
        return attrs_of() if x_bound is None else attrs_of(bound=float(abs_sum.max()) * x_bound)

    acc, total = None, None
    for swap in (False, True):
        diagonals = [(step, vec) for step, sw, vec in attrs["diagonals"] if sw is swap]
        if not diagonals:
            continue
        source = b.emit(HeOp.SWAP_ROWS, (x,), (), loc) if swap else x
        n1 = bsgs_split([step for step, _ in diagonals], row)
        lo = min(_signed_step(step, row) for step, _ in diagonals)
        babies: dict[int, int] = {}
        giants: dict[int, list[tuple[int, Const]]] = {}
        for step, vec in diagonals:
            k = _signed_step(step, row)
            j = (k - lo) % n1 + lo
            giants.setdefault(k - j, []).append((j, vec))
        for g in sorted(giants):
            inner, inner_abs = None, None
            for j, vec in sorted(giants[g], key=lambda t: t[0]):
                if j % row not in babies:
                    baby_attrs = attrs_of(step=j % row, **hoisting)
                    babies[j % row] = b.emit(HeOp.ROTATE, (source,), baby_attrs, loc) if j % row else source
                diag = Const(_rotate_slots(params, vec.array, -g)) if g % row else vec
                term = b.emit(HeOp.MUL_CONST, (babies[j % row],), attrs_of(value=diag, plain_scale=ps), loc)
                if x_bound is not None:
                    inner_abs = abs(vec.array) if inner_abs is None else inner_abs + abs(vec.array)
                inner = term if inner is None else b.emit(HeOp.ADD, (inner, term), sum_hint(inner_abs), loc)
            if g % row:
                inner = b.emit(HeOp.ROTATE, (inner,), attrs_of(step=g % row), loc)
            if x_bound is not None:
                total = inner_abs if total is None else total + inner_abs
            acc = inner if acc is None else b.emit(HeOp.ADD, (acc, inner), sum_hint(total), loc)
    return acc


RECIPES: dict[HeOp, Recipe] = {
    HeOp.SUM_SLOTS: sum_slots_recipe,
    HeOp.LINEAR_TRANSFORM: linear_transform_recipe,
    HeOp.POLYNOMIAL: polynomial_recipe,
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
