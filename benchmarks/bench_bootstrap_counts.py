"""Modular multiplies and additions of one CKKS bootstrap at SimFHE's default configuration,
beside SimFHE's published figures (../shared/notes/simfhe-bootstrapping.md).

The configuration: N = 2^17, 50-bit words, dnum = 2 (alpha = 20 special primes at 40 limbs),
40 limbs at the start of CoeffsToSlots, 6 DFT matrices of log-radices [2, 2, 3, 3, 3, 3]
(7, 7, 15, 15, 15, 15 diagonals) in each direction, each by baby-step giant-step and followed
by one rescale; one conjugation splits the real and imaginary parts; EvalMod on each part
(a Chebyshev series of degree 63 on [-K, K], then 2 double-angle squarings: 9 levels, 34 to 25
limbs); SlotsToCoeffs from 25 to 19 limbs. The program is traced through fhec's DSL with that
shape and expanded by fhec's own passes (BSGS split, Paterson–Stockmeyer, key-switch
expansion); its counts come from the closed forms of `fhec.analysis.he_counts`, which the
tests check against the lowering, so nothing at N = 2^17 is lowered. Rows: fhec with hoisting
"none" (every rotation decomposes its own input) and "single" (the baby steps of each matrix
share one decomposition, as SimFHE's baseline does); SimFHE's "fully hoisted" figure also
hoists the mod-down, which fhec does not build yet. docs/bootstrapping.md derives the
differences in what each counts.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import fhec  # noqa: E402
from fhec.analysis.he_counts import modular_ops, node_limb_counts  # noqa: E402
from fhec.evaluate import prepare  # noqa: E402
from fhec.passes.he_keyswitch import expand_key_switches  # noqa: E402
from fhec.passes.keyswitch_choice import choose_methods  # noqa: E402

SIMFHE_G = {  # (multiplies, additions) in 10^9, per stage and total (notes/simfhe-bootstrapping.md)
    "baseline": {"CoeffsToSlots": (20.127, 25.025), "EvalMod": (26.611, 35.346), "SlotsToCoeffs": (9.625, 12.485),
                 "total": (56.363, 72.856)},
    "fully hoisted": {"CoeffsToSlots": (8.150, 8.672), "EvalMod": (23.881, 30.316),
                      "SlotsToCoeffs": (4.004, 4.218), "total": (36.034, 43.206)},
}

SIMFHE_CONFIG = dict(N=2**17, word_bits=50, start_limbs=40, dnum=2, log_radices=(2, 2, 3, 3, 3, 3),
                     chebyshev_degree=63, double_angles=2, K=16)


def _params(N: int, word_bits: int, start_limbs: int, dnum: int):
    alpha = -(-start_limbs // dnum)
    return fhec.CKKSParams(N=N, levels=start_limbs - 1, scale_bits=word_bits - 10, word_bits=word_bits,
                           special_primes=alpha, security=None, min_precision_bits=None)


def _dft(x, slots: int, log_radices, hoisting: str, reverse: bool):
    """The homomorphic DFT's factor matrices: matrix i has 2^(r+1) - 1 diagonals at multiples
    of its stride (the product of the radices before it). Values are placeholders of the
    right size: counts depend on which diagonals are nonzero, not on their values."""
    strides, s = [], 1
    for r in log_radices:
        strides.append(s)
        s <<= r
    order = list(zip(log_radices, strides))
    for r, stride in (reversed(order) if reverse else order):
        width = 2**r - 1
        diags = {(k * stride) % slots: np.full(slots, 0.5 / (2 * width + 1)) for k in range(-width, width + 1)}
        x = x.linear_transform(diags, hoisting=hoisting)
    return x


def _evalmod(y, degree: int, K: int, double_angles: int):
    coeffs = np.random.default_rng(degree).uniform(0.1, 0.2, degree + 1) / (degree + 1)
    y = y.polynomial(np.polynomial.Chebyshev(coeffs, domain=[-K, K]))
    for _ in range(double_angles):
        y = y * y * 2 - 0.5
    return y


def stage_programs(N, word_bits, start_limbs, dnum, log_radices, chebyshev_degree, double_angles, K,
                   hoisting: str) -> dict[str, "fhec.Program"]:
    """One bootstrap with SimFHE's stage structure (module doc), traced as one program per
    stage, each with its input at the level where the stage starts (no hoisting or other
    sharing crosses a stage boundary, so the stages' counts add up to the bootstrap's)."""
    params = _params(N, word_bits, start_limbs, dnum)
    top = params.top_level
    cts_out = top - len(log_radices)                  # 34 limbs
    stc_in = cts_out - (7 + double_angles)            # 25 limbs: 6 + 1 (domain map) + double angles
    programs = {}
    p = fhec.Program("CoeffsToSlots", params)
    cts = _dft(p.input("x", bound=1.0), params.slots, log_radices, hoisting, reverse=False)
    conj = cts.conjugate()
    p.output("re", cts + conj)
    p.output("im", cts - conj)
    programs["CoeffsToSlots"] = p
    p = fhec.Program("EvalMod", params)
    for part in ("re", "im"):
        p.output(part, _evalmod(p.input(part, level=cts_out, bound=1.0), chebyshev_degree, K, double_angles))
    programs["EvalMod"] = p
    p = fhec.Program("SlotsToCoeffs", params)
    p.output("y", _dft(p.input("x", level=stc_in, bound=1.0), params.slots, log_radices, hoisting, reverse=True))
    programs["SlotsToCoeffs"] = p
    return programs


def count(hoisting: str, **config) -> dict:
    """(multiplies, additions) per stage and in total, the rotations, the limbs each stage
    ends at, and the seconds the count took."""
    t0 = time.perf_counter()
    out: dict = {"rotations": 0, "limbs": {}}
    total = Counter()
    for stage, program in stage_programs(hoisting=hoisting, **config).items():
        prepared = prepare(program)
        expanded = expand_key_switches(prepared, choose_methods(prepared, "hybrid"), hoisting)
        counts = sum((node_limb_counts(expanded, n) for n in expanded.nodes), Counter())
        out[stage] = modular_ops(counts, expanded.params.N)
        total += counts
        out["rotations"] += sum(1 for n in expanded.nodes if n.op.value == "key_mult" and n.attr("source") != "relin")
        out["limbs"][stage] = sorted({expanded.params.limbs_at(expanded.node(v).type.level)
                                      for v in expanded.outputs.values()})
    out["total"] = modular_ops(total, config["N"])
    out["seconds"] = time.perf_counter() - t0
    return out


def run(quick: bool = False) -> list[dict]:
    config = dict(SIMFHE_CONFIG)
    if quick:
        config["N"] = 2**12
    group = "Bootstrap modular operations against SimFHE (N = 2^17, dnum = 2)"
    rows = []
    for hoisting, simfhe in (("none", "baseline"), ("single", "baseline"), ("single", "fully hoisted")):
        got = count(hoisting, **config)
        mul, add = got["total"]
        ref_mul, ref_add = SIMFHE_G[simfhe]["total"]
        scale = config["N"] / SIMFHE_CONFIG["N"] if quick else 1.0
        rows.append({
            "group": group, "name": f"fhec hoisting={hoisting} vs SimFHE {simfhe}",
            "rotations": got["rotations"],
            **{f"{st} mult G": got[st][0] / 1e9 for st in ("CoeffsToSlots", "EvalMod", "SlotsToCoeffs")},
            "fhec mult G": mul / 1e9, "SimFHE mult G": ref_mul * scale, "mult ratio": mul / 1e9 / (ref_mul * scale),
            "fhec add G": add / 1e9, "SimFHE add G": ref_add * scale, "add ratio": add / 1e9 / (ref_add * scale),
            "count s": got["seconds"],
        })
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
