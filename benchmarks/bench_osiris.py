"""Osiris Table III rows compiled for the `osiris` (1 TB/s) and `osiris-2tb` targets: the
amortized multiply T_mult,a/s, the amortized matrix-vector product T_Mv:128,a/s and the
bootstrap, each with non-hoisted (NH), single-hoisted (SH) and double-hoisted (DH) BSGS.
The programs are `fhec/examples/bootstrap.py`'s (`tuned_osiris_bootstrap`, `hmult_program`,
`mv_program`), which `fhec bench --suite osiris` compiles too; this module adds the stage
breakdown, the 2 TB/s bootstrap rows and the ablations.

Parameters ("set III", Osiris Table II and §VI): the `lattigo-n16` preset (Lattigo's
N16QP1546H192H32 shape, N = 2^16, 24 levels, 8 left after a bootstrap) with 40-bit words,
a 48-bit q0 split into two 24-bit primes, alpha = 14 special primes (dnum = 2), h = 1,024,
and ModRaise under the preset's ephemeral secret of h = 32 (sparse-secret encapsulation:
one key switch at level 0 and one at the top level per bootstrap). Deviation: fhec gives
every level one prime size, so the levels are 38-bit primes (Table II's Delta = 36 with
Osiris's double-prime scaling in bootstrapping; at 36 bits fhec's estimate of the
bootstrap's worst-slot precision is -1.4 bits, at 38 it is 0.6, measured 1.4); log QP =
1,520. Before 2026-11-24 q0 was
two 40-bit primes, whose bootstrap would have returned zeros when executed, and h was 192
without encapsulation, which leaves |I| > K = 16 on a few coefficients at N = 2^16.

Definitions (Osiris Eq. 1, after 100x's T_mult,a/s): T_mult,a/s = (T_boot + sum over
l = 1..8 of T_HMult(l)) / (9 x N/2): a bootstrap returns level L_eff = 8, so 9 residual
levels (0..8) are amortized and 8 multiplications consume them. (The paper's Table III
implies the 9: its 9.89 ns x 8 x 2^15 would be 2.59 ms, less than its own 2.82 ms SH
bootstrap.) T_Mv:128,a/s likewise with a matrix-vector product of 128 nonzero diagonals
(BSGS, `linear_transform` with the row's hoisting) in place of HMult. HMult is a
ciphertext product, relinearization and rescale.

Every row is one compile but the bootstrap rows, which compile each cap tried ("compile s"
is their sum; in the 2026-11-24 run the machine's 2 cores were shared with other full-size
compiles); the bootstrap rows' chosen streams also pass the independent checker.
"ratio" is fhec / paper. Rows "ablation" switch off one Osiris feature at a time on the SH
bootstrap (`[pipelining]`, `[lowering]`, `[ordering]`, `[keys]`). Traffic columns: key-switching
hints loaded (keys MB) and generated on chip (keys generated MB), plaintext constants (consts MB) and what was loaded more than once or
spilled (non-compulsory MB).

What fhec models of Osiris's bandwidth savings: the uniform half of every key-switching
key is generated on chip (`[keys]`, §IV-E; "keys generated MB", no off-chip traffic), so
the SH bootstrap loads 1,272 MB of keys instead of 2,491 MB (ablation "keys loaded whole");
OF-Limb generates every diagonal, the 63 level-11 DFT diagonals whose 44-bit coefficients
exceed one 40-bit limb from two stored digits (summed in coefficient form as BConv terms,
then one NTT per limb), and double hoisting's diagonals on P's limbs too, so constants are
108 / 108 / 112 MB with NH / SH / DH (they were 447 / 746 / 1,066 MB loaded when every limb
was stored, with reloads under the capacity pressure of whole keys). Every diagonal is
stored mod the widest prime of Q·P, a 40-bit special prime: with limb 0 (24 bits since
set III took Table II's q_0) or a 38-bit level prime, more of them took two digits
(138 MB, and the SH bootstrap 2.108 ms instead of 2.078, measured before the BConv array
was timed per conversion). The Mv rows
take n1 from `fhec.analysis.bsgs.best_n1` for the target (key loads against arithmetic,
with GSC's on-chip giant-step sums as a capacity limit); the bootstraps are compiled with
each of `GIANT_STEP_CAPS` (`BootstrapConfig.max_giant_steps`: the split with the fewest
rotations among those with at most n2 giant steps per DFT factor, n2 = 2..6, or no cap),
each on both DFT stages and on CoeffsToSlots alone (`max_giant_steps_stages`; §V caps the
highest-level transforms), and the row is the fastest ("n2 cap"; "-" = the fewest
rotations, "4 (CtS)" = CoeffsToSlots alone), as Osiris tunes n1/n2 per hoisting mode and
bandwidth (§VII-C: "we independently optimize the ratio ... n1/n2, at each bandwidth").
At 1 TB/s every mode is fastest at the fewest rotations (before set III took Table II's q_0:
DH 2.054 ms, 2.069 at n2 <= 6, 2.123 at n2 <= 4; SH and NH 2.128 and 2.220 at §V's n2 = 4);
CoeffsToSlots' own split already has n2 <= 4, so the CtS-only caps change nothing here. At
2 TB/s DH is fastest at n2 <= 4 (1.737 ms; before, 1.722 against 1.758 uncapped). The larger n1/n2 ratios Bossuat et al.
favour for double hoisting were slower (n2 = round(sqrt(n/r)) per factor: 2.41 ms at
r = 4, 2.95 ms at r = 8 for DH at 1 TB/s, measured before the lowering changes below and
not re-measured): on Osiris each extra baby step is a key load, digit permutations on the
one Benes network and a key product. A per-factor choice by `fhec.analysis.bsgs.n1_costs`
(the Mv rows' model, which drops splits whose GSC working set exceeds the scratchpad) was
slower in every mode (NH / SH / DH 2.11 / 2.06 / 2.26 ms before those changes): it gives
DH's CoeffsToSlots n2 = 2-3, whose extra keys cost more than the spills they avoid.

Why fhec differs. The Hadamard units run 2,048 products per cycle each (p = 512 columns
of dnum = 2 cells, two multipliers per cell for each of KeyMult and diagonal products,
§IV-E; Table IV's 32,256 multipliers agree), so the units are no longer the binding ones,
and the lower bounds order the modes as the paper does. The two MDC units are ModChange's
INTT unit and NTT unit, the INTT unit reversed for OF-Limb only (§V; docs/targets.md,
"Directions"): a mod-up's or mod-down's NTTs onto the other limbs all run on the one
forward unit. The BConv array is timed per conversion (docs/targets.md, "Conversion
arrays": a conversion of fewer than its 16 rows takes a full pass, a one-limb rescale 16
times a row's share). The schedules order the modes as the paper does at 2 TB/s and nearly
at 1 TB/s: at 1 TB/s SH 2.133 < DH 2.138 < NH 2.240 ms (paper 2.70 / 2.82 / 3.00;
0.75-0.79x: DH trails SH by 0.24%), at 2 TB/s DH 1.815 < SH 1.935 < NH 2.228 (paper
1.89 / 2.59 / 2.77); with every BConv term at the array's full rate (before 2026-11-25)
SH 2.078 < DH 2.084 < NH 2.164 (DH's key-load-bound CoeffsToSlots 973 k cycles against
962 k) and DH 1.737 < SH 1.857 < NH 2.115; before set III took Table II's
q_0 and encapsulation, 2.054 / 2.057 / 2.133 (DH first by 0.15%) and 1.722 / 1.832 /
2.095, and the figures below (but the totals of this run) are of that build. EvalMod's relinearizations are
bound by the forward unit (0.67 M cycles, 0.53 M when both units ran either direction),
and non-hoisting, with the most mod-ups and mod-downs, slows the most: with both units
running either direction the rows were DH 1.899 < SH 1.903 < NH 1.960 ms at 1 TB/s and
1.55 / 1.63 / 1.85 at 2 TB/s (0.65-0.70x of the paper at 1 TB/s). That order at 1 TB/s
came from each bootstrap stage getting its own prefetch reserve and DH's SlotsToCoeffs at
the fewest rotations (n2 = 7) running untiled and limb-major (docs/scheduling.md, "A
prefetch reserve per bootstrap stage"; before: SH 1.908 < DH 1.927 < NH 1.963). Where the
time went at 1 TB/s before those two changes (both units running either direction, DH at
its best cap then, n2 <= 6, against SH's and NH's fewest-rotations split; stage cycles
from `Report.stages`, measured 2026-11-23):

* CoeffsToSlots (levels 24-21, 23-26 limbs) is bound by its key loads at 1 TB/s in every
  mode (864 MB of keys, the same in all three), with the memory channel idle between
  factors while their giant steps compute. DH's arithmetic there is the smallest (6,152
  I/NTTs against 6,660 for SH and 8,274 for NH, 21 k BConv terms against 36 k and 49 k),
  but it keeps its n2 = 4 giant-step partial sums over Q·P: 4 x 2 x 40 = 320 of the
  scratchpad's 588 RVecs at the top level, against 4 x 2 x 26 with single hoisting, beside
  80 RVecs of hoisted digits and a 160-RVec key (half generated). Scheduled node by node,
  each baby step's key, rotated digits and key product were live before its first product,
  and 20 MB of partial sums were stored and reloaded and 12.5 MB of keys reloaded: 1.05 M
  cycles against 1.00 M (SH) and 1.01 M (NH). Two orders remove that: the GSC order runs
  a double-hoisted sum's giant-step mod-down after the last baby step's products rather
  than among them (`fhec.passes.he_gsc`; 2.020 -> 2.008 ms), and limb-major baby steps
  (`fhec.passes.limb_order`, a schedule the pipeline keeps when it is faster) run each
  baby step limb by limb, so that its key streams through a few RVecs: the stage takes
  0.96 M cycles, nothing spilled, and the bootstrap 1.927 ms.
* SlotsToCoeffs (levels 11-9, 11-13 limbs): double hoisting generates every diagonal over
  Q·P by OF-Limb, alpha = 14 special primes beside 11-13 Q limbs, so it runs 5,406
  I/NTTs against 4,623 (SH) while saving the baby-step mod-downs. With the
  fewest-rotations split (n2 = 7 at levels 11 and 10) its seven Q·P partial sums, 7 x 2 x
  27 RVecs, do not fit beside a baby step and its key (the GSC order tiles them, 4 + 3,
  and every baby step runs twice); at n2 <= 6 they fit for one more key per factor (17 MB
  more keys than SH loads), and the stage takes 0.44 M cycles against 0.42 M (SH, NH).
  Its keys are loaded after EvalMod: the scratchpad, full of EvalMod's working set, takes
  few of them ahead. Now DH runs the uncapped split: the seven sums fit beside a baby step
  run limb by limb, so the GSC order no longer tiles them, and with 1/8 of the slots kept
  from prefetches the stage takes 0.41 M cycles (SH 0.42 M, NH 0.42 M).
* EvalMod is the same in all modes (0.53 M; 0.526 M with a quarter of the slots kept from
  SlotsToCoeffs' prefetches, which otherwise delay the reuse of the slots its values need).

DH moves 1,391 MB off chip at 1 TB/s (SH 1,391, NH 1,388; before, 1,361 / 1,361 / 1,358); at its earlier cap,
n2 <= 6, 1,378 MB (the 17 MB of SlotsToCoeffs keys above); before the two orders above it
moved 1,413 MB and took 2.02 ms, 4% slower than SH. An
earlier revision removed three costs the lowering charged double and single
hoisting without need (DH bootstrap 2.12 -> 2.02 ms, SH 1.96 -> 1.94, NH 2.02 -> 1.96 at
1 TB/s): the two-digit OF-Limb diagonals took an NTT per digit and limb (now the digits
are summed first, one NTT per limb: -1,701 NTTs in DH's SlotsToCoeffs, -819 in SH's and
NH's); a hoisted rotation permuted σ_g(c1), which its key-switch sum never reads (L
AUT per baby step on the one Benes network; `c0_only`); and double hoisting held each
giant step's j = 0 product, computed with the transform's input, through every baby step
(it now joins the sum at its first product; this bootstrap's DFT factors have no j = 0
term, HELR-1024's sparse bootstrap does).

Counted as Osiris counts (N per product, N/2 log N per I/NTT), fhec's DH bootstrap does
15.8 G modular multiplies (15.6 G at n2 <= 6) against 16.5 G (SH) and 18.9 G (NH): 1.20x
fewer than NH where the paper reports 1.68x; the paper does not give its per-mode counts,
so where its larger saving comes from cannot be located. One difference from Lattigo's
`MultiplyByDiagMatrixBSGS` remains: at each of the n2 - 1 giant steps Lattigo divides
only c1 of the Q·P sum by P (c1 must be decomposed for the rotation's key switch) and
rotates c0 over Q·P, where fhec divides both parts; for this bootstrap (11 CoeffsToSlots
and 15 SlotsToCoeffs giant steps) that is about 810 I/NTTs and 6,300 BConv terms, 0.8 G
multiplies (NH/DH 1.26x without them), left for a rotation of an extended value that the
HE IR does not have. A timing estimate of it (the lowering's giant-step mod-down dividing
c1 alone, its values not computed) gave 2.020 -> 2.006 ms at 1 TB/s, measured before the
orders above: most of that arithmetic runs while the memory channel binds. fhec is faster than the paper in every mode (0.75-0.79x at 1 TB/s).
fhec's add unit at the BConv array's rate is optimistic; the key generator's rate is an estimate; one MUL kind
means KeyMult and diagonal products, simultaneous on Osiris, share the Hadamard units'
rate here (conservative).
"""

from __future__ import annotations

import time


PAPER_BOOT_MS = {("osiris", "none"): 3.00, ("osiris", "single"): 2.82, ("osiris", "double"): 2.70,
                 ("osiris-2tb", "none"): 2.77, ("osiris-2tb", "single"): 2.59, ("osiris-2tb", "double"): 1.89}
PAPER_TMULT_NS = {"none": 10.5, "single": 9.89, "double": 9.58}  # Table III(a), 1 TB/s
PAPER_TMV_NS = {"none": 18.9, "single": 17.3, "double": 17.4}  # Table III(a), 1 TB/s
LABEL = {"none": "NH", "single": "SH", "double": "DH"}


def set_iii():
    """Osiris set III as fhec builds it (see the module doc): `fhec.examples.bootstrap.osiris_set_iii`."""
    from fhec.examples.bootstrap import osiris_set_iii

    return osiris_set_iii()


def _compile(program, target, check: bool = False):
    import fhec

    t0 = time.perf_counter()
    c = fhec.compile(program, target)
    seconds = time.perf_counter() - t0
    if check:
        c.check()  # the independent checker replays the streams (a StreamHazardError fails the run)
    return c.report, seconds


def _bootstrap_program(hoisting: str, max_giant_steps: int | None = None, stages=("cts", "stc")):
    """The bootstrap row's program (`fhec.examples.bootstrap.osiris_bootstrap`, the suite's)."""
    from fhec.examples.bootstrap import osiris_bootstrap

    return osiris_bootstrap(LABEL[hoisting], max_giant_steps, stages)


def bootstrap_ms(target, hoisting: str, max_giant_steps: int | None = None) -> tuple[float, object, float]:
    report, seconds = _compile(_bootstrap_program(hoisting, max_giant_steps), target, check=True)
    return report.time_us / 1000, report, seconds


def tuned_bootstrap_ms(target, hoisting: str) -> tuple[float, object, float, str]:
    """The fastest of `GIANT_STEP_CAPS` (each on the stages of `CAP_STAGES`; both in
    `fhec/examples/bootstrap.py`: the fewest rotations, None, and n2 capped at 2..6, on both DFT
    stages or on CoeffsToSlots alone; this bootstrap's DFT factors have at most 7 giant steps,
    so larger caps change nothing) for this mode and target, as Osiris tunes n1/n2 per hoisting
    mode and bandwidth (§VII-C); only the chosen schedule is replayed by the checker. Returns
    (ms, report, seconds of all the compiles, the cap as `cap_label` writes it)."""
    import fhec
    from fhec.examples.bootstrap import CAP_STAGES, GIANT_STEP_CAPS, cap_label

    best, total = None, 0.0
    for cap in GIANT_STEP_CAPS:
        for stages in CAP_STAGES if cap is not None else CAP_STAGES[:1]:
            t0 = time.perf_counter()
            c = fhec.compile(_bootstrap_program(hoisting, cap, stages), target)
            total += time.perf_counter() - t0
            if best is None or c.report.cycles < best[0].report.cycles:
                best = (c, cap_label(cap, stages))
    compiled, cap = best
    compiled.check()  # the independent checker replays the chosen streams
    return compiled.report.time_us / 1000, compiled.report, total, cap


def residual_levels() -> int:
    """The level a bootstrap returns: the residual levels (8 for set III)."""
    from fhec.examples.bootstrap import residual_levels as levels

    return levels(set_iii())


def hmult_us(target, level: int) -> float:
    from fhec.examples.bootstrap import hmult_program

    return _compile(hmult_program(level, set_iii()), target)[0].time_us


def mv_us(target, level: int, hoisting: str) -> float:
    """One Mv:128 at `level`, n1 by `fhec.analysis.bsgs.best_n1` for `target`
    (`fhec.examples.bootstrap.mv_program`, the suite's)."""
    from fhec.examples.bootstrap import mv_program

    return _compile(mv_program(level, LABEL[hoisting], target, set_iii()), target)[0].time_us


def _traffic(report) -> dict[str, float]:
    t = {k: v / 2**20 for k, v in report.offchip_bytes.items()}
    return {"off-chip MB": t["total"], "keys MB": t["ksh_compulsory"] + t["ksh_noncompulsory"],
            "keys generated MB": t.get("ksh_generated", 0.0),
            "consts MB": t["const_compulsory"] + t["const_noncompulsory"], "non-compulsory MB": t["noncompulsory"]}


def _ablations():
    from fhec.backends.target import load_target

    osiris = load_target("osiris")

    def off(table: str, field: str, value: str):
        return osiris.model_copy(update={table: getattr(osiris, table).model_copy(update={field: value})})

    return (("no limb interleaving", off("pipelining", "mode", "whole-limb")),
            ("no OF-Limb", off("lowering", "plaintexts", "stored")),
            ("no GSC order", off("ordering", "linear_transforms", "program")),
            ("keys loaded whole", off("keys", "uniform_half", "loaded")))


def run(quick: bool = False) -> list[dict]:
    group = "Osiris Table III (set III) on the osiris targets"
    rows = []
    modes = ("single",) if quick else ("none", "single", "double")
    boot: dict[tuple[str, str], float] = {}
    for target in ("osiris",) if quick else ("osiris", "osiris-2tb"):
        for h in modes:
            ms, r, s, cap = tuned_bootstrap_ms(target, h)
            boot[(target, h)] = ms
            paper = PAPER_BOOT_MS[(target, h)]
            rows.append({"group": group, "name": f"Bootstrap {LABEL[h]}", "target": target, "fhec": ms,
                         "paper": paper, "unit": "ms", "ratio": ms / paper, "cycles/bound": r.bound_ratio,
                         "binding": r.binding_bound, "n2 cap": cap, **_traffic(r),
                         "compile s": s})
    R = residual_levels()
    levels = (1, R) if quick else tuple(range(1, R + 1))
    slots_levels = (R + 1) * set_iii().slots  # levels 0..R are amortized (module doc)
    hmult = {lvl: hmult_us("osiris", lvl) for lvl in levels}
    for h in modes:
        # quick: the two end levels stand for the average of the R multiplications
        total = sum(hmult.values()) * (R / len(levels))
        ns = (boot[("osiris", h)] * 1e3 + total) * 1e3 / slots_levels
        rows.append({"group": group, "name": f"T_mult,a/s {LABEL[h]}", "target": "osiris", "fhec": ns,
                     "paper": PAPER_TMULT_NS[h], "unit": "ns", "ratio": ns / PAPER_TMULT_NS[h],
                     "binding": f"HMult l=1..{R}: {min(hmult.values()):.1f}..{max(hmult.values()):.1f} us"})
    for h in modes:
        mv = {lvl: mv_us("osiris", lvl, h) for lvl in levels}
        total = sum(mv.values()) * (R / len(levels))
        ns = (boot[("osiris", h)] * 1e3 + total) * 1e3 / slots_levels
        rows.append({"group": group, "name": f"T_Mv:128,a/s {LABEL[h]}", "target": "osiris", "fhec": ns,
                     "paper": PAPER_TMV_NS[h], "unit": "ns", "ratio": ns / PAPER_TMV_NS[h],
                     "binding": f"Mv l=1..{R}: {min(mv.values()):.0f}..{max(mv.values()):.0f} us"})
    if not quick:
        for label, target in _ablations():
            ms, r, s = bootstrap_ms(target, "single")
            rows.append({"group": group, "name": f"Bootstrap SH, ablation: {label}", "target": "osiris", "fhec": ms,
                         "paper": PAPER_BOOT_MS[("osiris", "single")], "unit": "ms",
                         "ratio": ms / PAPER_BOOT_MS[("osiris", "single")], "cycles/bound": r.bound_ratio,
                         "binding": r.binding_bound, **_traffic(r), "compile s": s})
    return rows


if __name__ == "__main__":
    import sys

    for row in run(quick="--quick" in sys.argv):
        print(row)
