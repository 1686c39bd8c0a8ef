"""The baby-step count of a BSGS linear transform, estimated for a target (Osiris Fig. 11).

A transform with n1 baby steps needs about n1 − 1 baby-step and D/n1 − 1 giant-step
rotations. Fewer, larger baby steps mean fewer rotation keys to load; the hoisting mode
sets what each kind of rotation costs in arithmetic (single hoisting makes baby steps
cheap, double hoisting makes them cheaper still and giant steps dearer). Which n1 is
fastest therefore depends on the machine's bandwidth against its arithmetic, which is
what Osiris Fig. 11 shows.

`n1_costs` estimates, for each candidate n1, the transform's cycles on a target as the
larger of two times:

* arithmetic: the limb instructions of `fhec.analysis.counts.bsgs_counts` on the
  effective grid (baby steps + 1) × (giant steps + 1) of the actual diagonals, each
  kind of instruction on its units as in `fhec.analysis.bounds.compute_bound`;
* loads: one rotation key per distinct rotation (2·d·(L + α) limbs, half of them when the
  target generates the uniform half on chip, ``[keys]``) plus every diagonal (L limbs, or
  L + α when double hoisting multiplies it over Q·P; one coefficient-form limb under
  OF-Limb, ``[lowering] plaintexts = "of-limb"``, which adds an NTT per generated limb to
  the arithmetic), at the target's off-chip bandwidth.

On a target with the giant-step-centric order (``[ordering]``, Osiris §V) the n2 giant
steps' partial sums stay on chip while the baby steps stream; Osiris "simply reduce[s]
the number of giant steps" rather than spill them, so `n1_costs` leaves out the splits
whose working set does not fit the scratchpad (`gsc_working_set`: n2 running sums of 2
parts, the hoisted digits, two keys in flight (one used, the next loading) and the n2
diagonals of one baby step), unless none fits. With double hoisting a split also fits
when the compiler would run it limb-major (`gsc_fits`): where a baby step's room beside
its key leaves fewer than `MIN_TILE_SUMS` sums (high levels, large α), the GSC order does
not tile and `fhec.passes.limb_order` streams each baby step limb by limb, so only the
sums and the hoisted digits must stay on chip. Counting the whole key and n2 diagonals
there excluded the split every schedule runs best: ResNet-20's first convolution (level
17, α = 14, 144 diagonals) double hoisted on `osiris` took n1 = 6144, 1.255 ms, where
n1 = 3072 (6 sums of 2 x 33 limbs and 66 of digits, 462 of 588 RVecs) takes 0.752 ms with
no spilled sum; n1 = 2048's 8 sums (594 RVecs) do spill (1.241 ms).

It is a model for choosing, not a schedule: the grid approximation counts a ragged last
giant step as full. `best_n1` is its argmin; pass it to
``linear_transform(M, n1=...)``. fhec does not choose n1 per target by itself, because the
split changes the computed ciphertext and every driver must agree on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fhec.analysis.counts import bsgs_counts
from fhec.backends.target import Target, UnitKind, load_target
from fhec.ir.he_recipes import bsgs_groups, signed_step
from fhec.ir.he_types import row_length


@dataclass(frozen=True)
class N1Cost:
    """The estimate for one baby-step count."""

    n1: int
    rotations: int
    compute_cycles: float
    load_cycles: float

    @property
    def cycles(self) -> float:
        return max(self.compute_cycles, self.load_cycles)


def _compute_cycles(ops: dict[str, int], target: Target, N: int) -> float:
    from fhec.ir.limb import LimbOp

    per_kind: dict[UnitKind, float] = {}
    for name, count in ops.items():
        if count:
            op = LimbOp[name]
            kind = target.unit_for(op).kind
            per_kind[kind] = per_kind.get(kind, 0.0) + count * target.occupancy_cycles(op, N)
    return max(cycles / target.total_units(kind) for kind, cycles in per_kind.items())


def gsc_working_set(L: int, alpha: int, n2: int, hoisting: str, key_halves: int = 2) -> int:
    """RVecs live at once in a giant-step-centric BSGS (see the module doc): n2 partial sums
    (2 parts over Q·P when double hoisting, else over Q), the d·K hoisted digits, two keys
    of d·K limbs per loaded half (`key_halves`) and n2 diagonals."""
    d, K = -(-L // alpha), L + alpha
    limbs = K if hoisting == "double" else L
    return n2 * 2 * limbs + d * K + 2 * key_halves * d * K + n2 * limbs


MIN_TILE_SUMS = 4
"""`fhec.passes.he_gsc.MIN_TILE_SUMS`, restated (analysis does not import passes; a test
checks they agree): below it, the GSC order leaves a transform's sums untiled."""


def gsc_fits(L: int, alpha: int, n2: int, hoisting: str, key_halves: int, slots: int) -> bool:
    """Whether a giant-step-centric BSGS of n2 giant-step sums runs without spilling them
    in a scratchpad of `slots` RVecs (see the module doc): node-major, its
    `gsc_working_set` fits; or, double hoisted, the compiler runs its baby steps limb-major
    and the sums over Q·P and the hoisted digits fit. Limb-major is the compiler's rule
    (`fhec.passes.limb_order._spilling`): the sums do not fit beside one baby step's room
    (2 hints of 2·d·K and 2 products of 2·K, as `fhec.passes.he_gsc.sums_per_tile` counts)
    and fewer than `MIN_TILE_SUMS` would, so the GSC order does not tile them. A
    limb-major baby step reads its key, its diagonals and its products a few limbs at a
    time, so they are left out beside the sums."""
    if gsc_working_set(L, alpha, n2, hoisting, key_halves) <= slots:
        return True
    if hoisting != "double":
        return False
    d, K = -(-L // alpha), L + alpha
    product = 2 * K
    per_tile = max(1, (slots - 2 * (2 * d * K) - 2 * product) // product)
    return per_tile < MIN_TILE_SUMS and n2 * product + d * K <= slots


def diagonal_steps(matrix, row: int) -> list[int]:
    """The rotation amounts k of the nonzero generalized diagonals of a 2-D matrix
    (entries M[i, (i + k) mod row], the matrix zero-padded to the row), or the given
    steps when `matrix` is 1-D."""
    m = np.asarray(matrix)
    if m.ndim == 1:
        return sorted({int(k) % row for k in m})
    rows, cols = np.nonzero(m)
    return sorted({int(k) for k in (cols - rows) % row})


def n1_costs(matrix_or_steps, params, *, level: int | None = None, hoisting: str = "single",
             target: Target | str = "f1", candidates=None) -> list[N1Cost]:
    """Estimated cycles of a transform (a 2-D matrix, or the rotation amounts of its
    diagonals) for each candidate n1 (default: 2 .. the span of the steps), at `level`
    (default: top) with `hoisting` "none", "single" or "double", on `target` (a `Target`
    or shipped name)."""
    target = load_target(target) if isinstance(target, str) else target
    row = row_length(params)
    steps = diagonal_steps(matrix_or_steps, row)
    level = params.top_level if level is None else level
    L, alpha = params.limbs_at(level), params.alpha_at(level)
    d, K = -(-L // alpha), L + alpha
    signed = sorted({signed_step(s % row, row) for s in steps})
    span = signed[-1] - signed[0] + 1
    rvec = target.rvec_bytes(params.N)
    key_halves = 1 if target.keys.generated else 2
    of_limb = target.lowering.plaintexts == "of-limb" and params.scheme == "ckks"
    out = []
    for n1 in candidates or range(2, span + 1):
        n1, lo, groups = bsgs_groups(steps, row, n1)
        babies = len({j for js in groups.values() for j in js} - {0})
        giants = len(set(groups) - {0})
        if babies < 1 or giants < 1:
            continue
        ops = bsgs_counts(L, alpha, babies + 1, giants + 1, hoisting=hoisting, bgv=params.scheme == "bgv")
        diag_limbs = K if hoisting == "double" else L
        if of_limb:  # one stored limb per diagonal, every limb generated by an NTT
            ops = {**ops, "NTT": ops.get("NTT", 0) + len(steps) * diag_limbs}
            diag_limbs = 1
        load_bytes = ((babies + giants) * key_halves * d * K + len(steps) * diag_limbs) * rvec
        out.append(N1Cost(n1, babies + giants, _compute_cycles(ops, target, params.N),
                          load_bytes / target.offchip_bytes_per_cycle))
    if target.ordering.linear_transforms == "giant-step-centric":
        slots = target.scratchpad_rvecs(params.N)
        fits = [c for c in out
                if gsc_fits(L, alpha, c.rotations - _babies(c.n1, steps, row) + 1, hoisting, key_halves, slots)]
        out = fits or out
    return out


def _babies(n1: int, steps, row: int) -> int:
    _, _, groups = bsgs_groups(steps, row, n1)
    return len({j for js in groups.values() for j in js} - {0})


def best_n1(matrix_or_steps, params, **kw) -> int:
    """The n1 of `n1_costs` with the fewest estimated cycles (ties: fewer rotations)."""
    costs = n1_costs(matrix_or_steps, params, **kw)
    return min(costs, key=lambda c: (c.cycles, c.rotations)).n1
