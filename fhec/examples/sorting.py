"""Bitonic sorting of encrypted values (CKKS), as Osiris evaluates it (Table III, Sorting).

Osiris §VI: "Sorting performs bitonic sorting [31] on 2^14 elements in the range (0, 1).
Each comparison is made by compositing twelve 7-degree polynomials", at its Table II set
IV (N = 2^16, L_eff = 9), bootstrapping sparsely ("sparsely-packed bootstrapping ... is
performed in sorting").

The network is Batcher's bitonic sort of n = 2^m values, all in one ciphertext (slots
0..n-1, repeated with period n over the slots, as a sparse bootstrap of n slots needs):
for blocks of 2, 4, ..., n values and, inside each, distances of half the block down to
1, every value is compared with the one `dist` away (slot i XOR dist) and keeps the
smaller or the larger. That is m(m + 1)/2 stages (105 for 2^14), each a compare-and-swap
of all n values at once. One stage (`stage`), on x:

* **Partners.** u = (x + p)/2, d = (x - p)/2 and σ·d, where p_i = x_{i XOR dist} and
  σ_i = +1 where slot i keeps the larger value, -1 where it keeps the smaller (the larger
  in an ascending block's upper half and in a descending block's lower half): three
  matrix-vector products of x with diagonals at steps 0, +dist and -dist, evaluated with
  the variant's BSGS hoisting (Osiris's NH / SH / DH apply to every matrix-vector
  product). Every row of each matrix has absolute sum 1, so the compiler proves them
  within the input's bound. One level.
* **The comparison.** s = sign(d) as twelve compositions of Cheon, Kim and Kim's f_3
  (Asiacrypt 2020, "Efficient homomorphic comparison methods with optimal complexity"),
  the odd degree-7 polynomial sum_{i<=3} 4^-i C(2i, i) x (1 - x^2)^i = (35x - 35x^3 +
  21x^5 - 5x^7)/16 (`comparison_polynomial`): each composition takes 3 levels and pushes
  values away from 0 towards ±1, by a factor 35/16 near 0. Twelve leave every |d| above
  about 2^-12 within a few percent of ±1.
* **The swap.** y = u + (σ·d)·s, which is max(x, p) where σ = +1 and min(x, p) where
  σ = -1 when s = sign(d). One level.

Bootstraps go where a value runs out of levels (`_refresh`, as `resnet20.py` places
them). Set IV leaves 9 levels after one, and its bootstrap takes a level-0 input
(`_modraise_floor`: q_0/scale = 2^12 against a message ratio of 2^8, so ModRaise's scale
is reached by an exact integer multiply), so all 9 carry work: three compositions per
bootstrap. The stages enter at levels 9 (the first), 5, 2 and 0 in turn; each
bootstraps its comparison four times and, entering at 0, its input once: 489 bootstraps
for the network, 4.7 per stage.

**Windows.** The whole network at 2^14 values is 489 bootstraps, about 10^8 limb
instructions: more than this machine's memory holds in one compile (ResNet-20's 36
bootstraps are 10^7). And the compiler's value bounds cannot follow a sorting network: it
proves |u| + |σ·d|·|s| <= 2 for a stage whose true values stay in [0, 1] (that a swap
returns one of its two inputs is beyond interval reasoning), so its bounds would double
at every stage. So the suite compiles the network as **stage windows**
(`sorting_windows`): each stage is its own program, whose input (the previous stage's
output, values in [0, 1]) is declared with bound 1 at the level the previous stage left
it. A stage's program depends on the network position only through its rotation steps
and masks, which change its instructions and cycles negligibly (0.008% measured across
four positions), so stages entering at the same level are compiled once and counted as
many times as they occur (`fhec.suites.Windows`). The windows run back to back: the
suite's time is their sum, without the prefetching of one stage's keys during the
previous one that a single compile could schedule (a small conservative error: a stage
runs for 11-14 ms).

Deviations from the paper's formulation:

* the stage's level structure is fhec's (Osiris does not state its bootstrap count or
  where its comparisons are split): 4.7 bootstraps per stage. Until 2026-11-24 this
  program left every bootstrap's input a level (8 of set IV's 9 levels carried work),
  which took 6 per stage, 629 in all, and 1.73-1.84 s at 1 TB/s;
* set IV's bootstrap is fhec's (`resnet20.set_iv`, Lattigo's default shape with 2^14
  sparse slots);
* the time is the sum of stage windows (above).

`sort_program(n, ...)` gives the whole network as one program (its bounds double with
every stage, so only networks of a few stages fit a bootstrap's range: fhec refuses the
rest at the bootstrap that would decrypt to garbage). The module-level program `p`
(`small`) is one stage window at N = 2^12 with 2 compositions per comparison, what
`fhec check fhec/examples/sorting.py` runs.
`suite_rows()` lists the Osiris Table III rows (NH/SH/DH at 1 and 2 TB/s).
"""

from __future__ import annotations

import math
from math import comb

import numpy as np

import fhec
from fhec.examples.bootstrap import cap_label, fastest_cap, table_iii_rows
from fhec.examples.resnet20 import L_EFF, set_iv, small_params

ELEMENTS = 2**14
"""Osiris §VI: bitonic sorting of 2^14 elements."""

COMPOSITIONS = 12
"""Osiris §VI: each comparison composites twelve degree-7 polynomials."""

PAPER_S = {  # Osiris Table III, Sorting (set IV), seconds: (a) 1 TB/s, (b) 2 TB/s
    "osiris": {"NH": 1.26, "SH": 1.20, "DH": 1.14},
    "osiris-2tb": {"NH": 1.20, "SH": 1.13, "DH": 0.84},
}

HOISTING = {"NH": "none", "SH": "single", "DH": "double"}
"""Table III's BSGS variants as `linear_transform` hoisting modes (the stages' partner
products and the bootstraps' DFTs)."""


def comparison_polynomial() -> np.ndarray:
    """Power-basis coefficients of Cheon, Kim and Kim's f_3 (degree 7, odd): the sum
    over i <= 3 of 4^-i C(2i, i) x (1 - x^2)^i."""
    P = np.polynomial.Polynomial
    f = sum(P([0.0, 1.0]) * P([1.0, 0.0, -1.0]) ** i * (comb(2 * i, i) / 4**i) for i in range(4))
    return f.coef


def stages(n: int) -> list[tuple[int, int]]:
    """The bitonic network's stages in order, as (block, dist): blocks of 2..n values,
    distances from half the block down to 1. A `ProgramError` for an n that is not a power
    of two of at least 2: the network would leave such a list unsorted."""
    if not (isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 2 and n & (n - 1) == 0):
        raise fhec.errors.ProgramError(f"bitonic sort of n = {n!r} values: n must be a power of two >= 2 "
                                       f"(pad the values to the next power of two with 1s, above (0, 1)).")
    out = []
    block = 2
    while block <= n:
        dist = block // 2
        while dist >= 1:
            out.append((block, dist))
            dist //= 2
        block *= 2
    return out


def stage_diagonals(n: int, slots: int, block: int, dist: int) -> tuple[dict, dict, dict]:
    """The diagonals of u = (x + p)/2, d = (x - p)/2 and σ·d (module doc), on one period
    of n slots repeated over `slots` (a `ProgramError` unless n divides the slots)."""
    if n > slots or slots % n:
        raise fhec.errors.ProgramError(f"bitonic sort of {n} values in {slots} slots: the values repeat with period "
                                       f"n over the slots, so n must divide them; sort at most {slots} values.")
    i = np.arange(n)
    up = (i & dist) == 0  # the partner is dist ahead
    larger = ((i & dist) != 0) ^ ((i & block) != 0)  # the slot keeps the larger value
    sigma = np.where(larger, 1.0, -1.0)
    reps = slots // n

    def diagonals(centre, partner):
        if 2 * dist == slots:  # +dist and -dist are one rotation: one diagonal holds both halves
            return {0: np.tile(centre, reps), dist: np.tile(partner, reps)}
        return {0: np.tile(centre, reps), dist: np.tile(np.where(up, partner, 0.0), reps),
                -dist: np.tile(np.where(up, 0.0, partner), reps)}

    half = np.full(n, 0.5)
    return diagonals(half, half), diagonals(half, -half), diagonals(sigma * half, -sigma * half)


def _refresh(x, need: int):
    """`x`, bootstrapped first unless it has `need` levels to spend and, where the bootstrap
    cannot take a level-0 input, one more left (`_modraise_floor`)."""
    return x.bootstrap() if x.level < need + _modraise_floor(x.program.params) else x


def _modraise_floor(params: fhec.CKKSParams) -> int:
    """The lowest level a bootstrap takes its input at: 0 when the level-0 scale leaves
    q_0/scale >= 2^R (the bootstrap then brings it to q_0/2^R by an exact integer multiply,
    no level: docs/bootstrapping.md, ModRaise), else 1 (a rescale to level 0 at that
    scale). Set IV: q_0/scale = 2^12 against R = 8, so all 9 levels after a bootstrap
    carry work, as Table II's L_eff = 9 says."""
    q0 = math.prod(params.moduli_at(0))
    return 0 if q0 / params.scale_at(0) >= 2**params.bootstrap.evalmod.message_ratio_bits else 1


def stage(x, n: int, block: int, dist: int, compositions: int = COMPOSITIONS, hoisting: str | None = None):
    """One compare-and-swap stage of the network on x (module doc)."""
    f3 = comparison_polynomial()
    x = _refresh(x, 2)  # the partner products, then the swap's product
    u_diag, d_diag, sd_diag = stage_diagonals(n, x.program.params.slots, block, dist)
    u = x.linear_transform(u_diag, hoisting=hoisting)
    d = x.linear_transform(d_diag, hoisting=hoisting)
    sd = x.linear_transform(sd_diag, hoisting=hoisting)
    s = d
    for _ in range(compositions):
        s = _refresh(s, 3).polynomial(f3)
    return u + sd * _refresh(s, 1)


def sort_program(n: int, params: fhec.CKKSParams, compositions: int = COMPOSITIONS,
                 hoisting: str | None = None, name: str | None = None) -> fhec.Program:
    """The whole network on n values (input ``x``, output ``sorted``) as one program."""
    p = fhec.Program(name or f"bitonic_sort_{n}", params)
    x = p.input("x", level=min(params.levels, L_EFF))
    for block, dist in stages(n):
        x = stage(x, n, block, dist, compositions, hoisting)
    p.output("sorted", x)
    return p


def stage_program(level: int, params: fhec.CKKSParams, n: int, block: int, dist: int,
                  compositions: int = COMPOSITIONS, hoisting: str | None = None) -> tuple[fhec.Program, int]:
    """One stage as its own program: input ``x`` (values in [0, 1], bound 1) at `level`,
    output ``y``; and the level it leaves ``y`` at."""
    p = fhec.Program(f"bitonic_stage_{n}_{block}_{dist}_at_{level}", params)
    y = stage(p.input("x", level=level), n, block, dist, compositions, hoisting)
    p.output("y", y)
    return p, y.level


def sorting_windows(variant: str = "SH", n: int = ELEMENTS, compositions: int = COMPOSITIONS,
                    params: fhec.CKKSParams | None = None, note: str = ""):
    """The network as `fhec.suites.Windows`: one stage program per distinct entry level,
    counted as often as a stage enters at that level (module doc, "Windows"). The entry
    levels are followed from the network's input at L_eff through each stage's output
    level, which depends only on its entry level (traced once per level)."""
    from fhec.suites import Windows

    hoisting = HOISTING[variant]
    params = params or set_iv(hoisting=hoisting)
    network = stages(n)
    exits: dict[int, int] = {}
    counts: dict[int, int] = {}
    programs: dict[int, fhec.Program] = {}
    level = min(params.levels, L_EFF)
    for block, dist in network:
        if level not in exits:
            programs[level], exits[level] = stage_program(level, params, n, block, dist, compositions, hoisting)
        counts[level] = counts.get(level, 0) + 1
        level = exits[level]
    parts = tuple((programs[lv], counts[lv]) for lv in programs)
    return Windows(name=f"bitonic sort of {n} values, {variant}", parts=parts,
                   note=f"{len(network)} stages as {len(parts)} distinct stage windows (by entry level){note}")


def tuned_windows(variant: str, target: str = "osiris", n: int = ELEMENTS) -> "fhec.suites.Windows":
    """`sorting_windows(variant)` with the bootstraps' giant-step cap (`fastest_cap`) that
    runs the network's most frequent window fastest on `target`, as `resnet20.tuned_giant_steps`
    tunes ResNet-20's on two consecutive bootstraps (uncapped, the DH window took 20.6 ms on
    `osiris`; capped at n2 <= 4 on CoeffsToSlots, 16.5)."""
    def window(cap, stages):
        params = set_iv(hoisting=HOISTING[variant], max_giant_steps=cap, max_giant_steps_stages=stages)
        return max(sorting_windows(variant, n, params=params).parts, key=lambda part: part[1])[0]

    cap, stages = fastest_cap(window, target)
    params = set_iv(hoisting=HOISTING[variant], max_giant_steps=cap, max_giant_steps_stages=stages)
    return sorting_windows(variant, n, params=params, note=f"; bootstraps' n2 cap {cap_label(cap, stages)}")


def suite_rows() -> list[dict]:
    """Osiris Table III's Sorting rows (suite-row convention): the network as stage windows
    (module doc), NH/SH/DH at 1 and 2 TB/s."""
    return table_iii_rows(
        "Sorting", {t: {v: sec * 1000 for v, sec in paper.items()} for t, paper in PAPER_S.items()}, tuned_windows,
        "bitonic sort of 2^14 values, each comparison twelve compositions of Cheon-Kim-Kim's degree-7 f_3; set IV "
        "with sparse bootstraps placed where a value runs out of levels; compiled as stage windows by entry level, "
        "their times summed (no prefetch across stages); the bootstraps' giant-step cap tuned per variant (compile "
        "s includes the tuning)")


def small(n: int = 8, compositions: int = 2) -> fhec.Program:
    """The CI-sized window: the stage (block 8, dist 2) of a network on 8 values (every
    group of 8 slots of the 256-slot period sorts on its own) at N = 2^12, the
    bootstrap-toy configuration of `resnet20.small_params` (10 levels after a bootstrap,
    256 sparse slots), entering at level 4 so that the comparison's first composition
    ends at level 0 and the bootstrap takes it there, with 2 compositions per comparison."""
    return stage_program(4, small_params(), n, 8, 2, compositions)[0]


p = small()
