"""A CKKS computation deeper than the modulus chain: three bootstraps refresh it.

y <- y²/2 + 1/4, four times from x in [-1, 1]: a contraction (|f'(y)| = |y| <= 3/4 after
the first step) towards 1 − √2/2, so each bootstrap's error is damped, not amplified, by
the steps after it, and the value bound stays below 1 (|a| + |b| <= 1 for a·y² + b).
Each step uses two levels (the square, then the multiply by 1/2); the parameter set
leaves 3 levels after a bootstrap and ModRaise needs its input at level 1 or more
(docs/bootstrapping.md), so the program bootstraps before every step but the first:
three bootstraps for a depth of 8.

The parameters are the INSECURE test set of tests/test_bootstrap.py at N = 2^12
(security=None, a sparse secret of Hamming weight 8): for experiments only.

    fhec check fhec/examples/bootstrap.py  # a few minutes: three bootstraps at N = 2^12
    fhec stats fhec/examples/bootstrap.py  # limb instructions per bootstrap stage

`f1_bootstrap()` and `osiris_bootstrap(variant)` are the papers' bootstrap rows at full size
(F1 Table 3's CKKS bootstrapping; Osiris Table III's at its set III with non-, single- or
double-hoisted DFTs), which `fhec bench --suite f1|osiris` compiles (`suite_rows`).
"""

import fhec

CONFIG = fhec.BootstrapConfig(
    hamming_weight=8,
    evalmod=fhec.EvalModConfig(K=6, message_ratio_bits=2, arcsine_degree=7, double_angle=2),
)
PARAMS = fhec.CKKSParams(N=2**12, levels=CONFIG.depth(2**12) + 3, scale_bits=30, word_bits=32,
                         security=None, bootstrap=CONFIG)

p = fhec.Program("deep", PARAMS)
y = p.input("x", level=3)
for step in range(4):
    if y.level < 2:
        y = y.bootstrap()
    y = (y * y) * 0.5 + 0.25
p.output("y", y)


def f1_bootstrap() -> fhec.Program:
    """One bootstrap at F1's CKKS setting (preset "f1-ckks-bootstrap": N = 2^14, L_max = 24
    limbs of 32-bit words): a ciphertext at level 1, as F1 §7 bootstraps it, refreshed."""
    params = fhec.CKKSParams.preset("f1-ckks-bootstrap")
    q = fhec.Program("f1_ckks_bootstrap", params)
    q.output("y", q.input("x", level=1).bootstrap())
    return q


OSIRIS_BOOTSTRAP_MS = {"NH": 3.00, "SH": 2.82, "DH": 2.70}
"""Osiris Table III(a), Bootstrap (set III, 1 TB/s), per BSGS variant."""

OSIRIS_Q0_BITS = (24, 24)
"""Osiris Table II's q_0 for sets III and IV: 48 bits "split into two primes". Not two
word-sized primes: with q_0 = 2^80 against a 38-bit scale, the bootstrap's scale-down by
S/(2·q_0·K) over one level is the integer 0 and the bootstrap returned zeros
(`fhec.ir.he_bootstrap.scale_down_problem`); at 48 bits it is about 2^23."""

OSIRIS_SET_III = dict(word_bits=40, scale_bits=38, base_limbs=2, special_primes=14,
                      q_bits=OSIRIS_Q0_BITS + (38,) * 24)
"""Osiris Table II set III on the lattigo-n16 preset (24 levels): 40-bit words, q_0 of 48
bits in two primes (`OSIRIS_Q0_BITS`), alpha = 14 special primes, 38-bit level primes
(benchmarks/bench_osiris.py says why not 36)."""

OSIRIS_HAMMING_WEIGHT = 1024
"""Osiris Table II's secret for sets III and IV ("h = 1024 for 128-bit security"); ModRaise
runs under the lattigo-n16 preset's ephemeral secret of weight 32 (Lattigo v5.2's default
bootstrapping, which Osiris adopts), so K = 16 holds its overflow."""

HOISTING = {"NH": "none", "SH": "single", "DH": "double"}
"""Osiris's BSGS variants: the DFT transforms' hoisting."""

GIANT_STEP_CAPS = (None, 2, 3, 4, 5, 6)
"""The DFT splits `tuned_osiris_bootstrap` (and `resnet20.tuned_giant_steps`) try: the
fewest rotations (None) and n2 capped at 2..6 per factor, each on both DFT stages and on
CoeffsToSlots alone (`CAP_STAGES`)."""

CAP_STAGES = (("cts", "stc"), ("cts",))
"""Where a cap applies (`fhec.BootstrapConfig.max_giant_steps_stages`): both DFT stages, or
CoeffsToSlots alone, as Osiris §V caps n2 = 4 "in the highest multiplicative level
matrix-vector products in bootstrapping" (its sums over Q·P are the widest)."""


def cap_label(cap: int | None, stages: tuple[str, ...] = ("cts", "stc")) -> str:
    """A cap as the benchmark tables show it: "-" (the fewest rotations), "4", "4 (CtS)"."""
    if cap is None:
        return "-"
    return str(cap) if set(stages) >= {"cts", "stc"} else f"{cap} ({'CtS' if stages == ('cts',) else 'StC'})"


def osiris_set_iii(hoisting: str | None = None, max_giant_steps: int | None = None,
                   max_giant_steps_stages: tuple[str, ...] = ("cts", "stc")) -> fhec.CKKSParams:
    """Osiris set III (`OSIRIS_SET_III` on the lattigo-n16 preset, as `helr.osiris_params`
    builds it): `hoisting` for the bootstrap's DFTs (None: the compile option), the DFT
    giant-step cap and the stages it applies to (`fhec.BootstrapConfig`)."""
    literal = fhec.CKKSParams.preset("lattigo-n16").bootstrap
    config = fhec.BootstrapConfig(**{**literal.model_dump(), "hoisting": hoisting,
                                     "hamming_weight": OSIRIS_HAMMING_WEIGHT, "max_giant_steps": max_giant_steps,
                                     "max_giant_steps_stages": max_giant_steps_stages})
    return fhec.CKKSParams.preset("lattigo-n16", bootstrap=config, **OSIRIS_SET_III)


def osiris_bootstrap(variant: str, max_giant_steps: int | None = None,
                     max_giant_steps_stages: tuple[str, ...] = ("cts", "stc")) -> fhec.Program:
    """Osiris Table III's bootstrap row: one fully packed bootstrap of a level-1 ciphertext at
    set III (`osiris_set_iii`) with the variant's ("NH", "SH", "DH") DFT hoisting and
    giant-step cap."""
    params = osiris_set_iii(HOISTING[variant], max_giant_steps, max_giant_steps_stages)
    q = fhec.Program(f"osiris_bootstrap_{variant}", params)
    q.output("y", q.input("x", level=1).bootstrap())
    return q


def fastest_cap(build, target: str) -> tuple[int | None, tuple[str, ...]]:
    """(cap, stages): the giant-step cap of `GIANT_STEP_CAPS` and the DFT stages of
    `CAP_STAGES` it applies to whose program `build(cap, stages)` runs fastest on `target`
    (the first of equals), as Osiris tunes n1/n2 per hoisting mode and bandwidth (§VII-C).
    The bootstrap, ResNet-20 and Sorting rows each tune on their own program."""
    best = None
    for cap in GIANT_STEP_CAPS:
        for stages in CAP_STAGES if cap is not None else CAP_STAGES[:1]:
            cycles = fhec.compile(build(cap, stages), target).report.cycles
            if best is None or cycles < best[0]:
                best = (cycles, cap, stages)
    return best[1], best[2]


def table_iii_rows(name: str, paper_ms: dict[str, dict[str, float]], build, note: str) -> list[dict]:
    """Osiris Table III rows of `name` in the suite-row convention: per target of `paper_ms`
    (``"osiris"``: Table III(a), 1 TB/s; ``"osiris-2tb"``: Table III(b)) and per variant of its
    times, the program `build(variant, target)`."""
    source = {"osiris": "Osiris Table III(a)", "osiris-2tb": "Osiris Table III(b)"}
    return [{"suite": "osiris", "name": name, "variant": variant, "target": target, "paper_ms": ms,
             "paper_source": source[target], "build": (lambda v=variant, t=target: build(v, t)), "needs": None,
             "note": note}
            for target, times in paper_ms.items() for variant, ms in times.items()]


def tuned_osiris_bootstrap(variant: str, target: str = "osiris") -> fhec.Program:
    """`osiris_bootstrap(variant)` at the cap `fastest_cap` picks for it on `target`."""
    return osiris_bootstrap(variant, *fastest_cap(lambda cap, stages: osiris_bootstrap(variant, cap, stages), target))


OSIRIS_AMORTIZED_NS = {"T_mult,a/s": {"NH": 10.5, "SH": 9.89, "DH": 9.58},
                       "T_Mv:128,a/s": {"NH": 18.9, "SH": 17.3, "DH": 17.4}}
"""Osiris Table III(a), 1 TB/s, nanoseconds: the amortized multiply and matrix-vector product."""

MV_DIAGONALS = 128
"""T_Mv:128: a matrix-vector product with 128 nonzero diagonals."""


def residual_levels(params: fhec.CKKSParams) -> int:
    """The level a bootstrap of a level-1 input returns (8 for set III)."""
    return fhec.Program("levels", params).input("x", level=1).bootstrap().level


def hmult_program(level: int, params: fhec.CKKSParams | None = None) -> fhec.Program:
    """Osiris's HMult at `level`: a ciphertext product, relinearization and rescale."""
    p = fhec.Program(f"hmult_at_{level}", params or osiris_set_iii())
    p.output("y", p.input("x", level=level) * p.input("z", level=level))
    return p


def mv_program(level: int, variant: str, target: str = "osiris",
               params: fhec.CKKSParams | None = None) -> fhec.Program:
    """One Mv:128 at `level` with the variant's hoisting, n1 by `fhec.analysis.bsgs.best_n1`
    for `target` (Osiris tunes n1/n2 per machine, §V, §VII Fig. 11)."""
    import numpy as np

    from fhec.analysis.bsgs import best_n1

    params = params or osiris_set_iii()
    rng = np.random.default_rng(level)
    diagonals = {k: rng.uniform(-1, 1, params.slots) for k in range(MV_DIAGONALS)}
    hoisting = HOISTING[variant]
    n1 = best_n1(sorted(diagonals), params, level=level, hoisting=hoisting, target=target)
    p = fhec.Program(f"mv128_at_{level}", params)
    p.output("y", p.input("x", level=level).linear_transform(diagonals, hoisting=hoisting, n1=n1))
    return p


def amortized_windows(name: str, variant: str, target: str = "osiris"):
    """Osiris Eq. 1 (after 100x's T_mult,a/s) as `fhec.suites.Windows`: (T_boot + the sum over
    l = 1..R of T_op(l)) / ((R + 1)·N/2), the bootstrap (`tuned_osiris_bootstrap`) and one
    HMult or Mv:128 at each of the R = 8 levels it returns, over the R + 1 levels and the
    slots they serve (`benchmarks/bench_osiris.py` gives why R + 1)."""
    from fhec.suites import Windows

    boot = tuned_osiris_bootstrap(variant, target)
    R = residual_levels(boot.params)
    ops = [hmult_program(lvl) if name == "T_mult,a/s" else mv_program(lvl, variant, target)
           for lvl in range(1, R + 1)]
    return Windows(name=f"{name} {variant}", parts=((boot, 1), *((op, 1) for op in ops)),
                   note=f"a bootstrap and {R} operations, one per level, over {R + 1} levels x "
                        f"{boot.params.slots} slots", per=(R + 1) * boot.params.slots)


def suite_rows() -> list[dict]:
    """F1 Table 3's CKKS bootstrapping row and Osiris Table III's bootstrap rows (`fhec.suites`)."""
    rows = [{
        "suite": "f1", "name": "CKKS bootstrapping", "variant": None, "target": "f1", "paper_ms": 1.30,
        "paper_source": "F1 Table 3", "build": f1_bootstrap, "needs": None,
        "note": "the f1-ckks-bootstrap preset: non-packed (one slot) bootstrapping as HEAAN's and F1's; its "
                "parameters and their sources are in docs/bootstrapping.md",
    }]
    rows += table_iii_rows(
        "Bootstrap", {"osiris": OSIRIS_BOOTSTRAP_MS}, tuned_osiris_bootstrap,
        "set III (lattigo-n16 on 40-bit words, 38-bit level primes, alpha = 14), fully packed, the variant's DFT "
        "hoisting, the giant-step cap tuned per variant (compile s includes the tuning); benchmarks/bench_osiris.py "
        "gives the stage breakdown")
    for name, paper in OSIRIS_AMORTIZED_NS.items():
        rows += table_iii_rows(
            name, {"osiris": {v: ns * 1e-6 for v, ns in paper.items()}},
            lambda v, t, n=name: amortized_windows(n, v, t),
            "Osiris Eq. 1: (bootstrap + one HMult or Mv:128 per level it returns) / (levels x slots), set III; "
            "the times are per slot (ms, as every row)")
    return rows
