"""Modular multiplies and additions of one CKKS bootstrap at SimFHE's default configuration,
beside SimFHE's published figures (../shared/notes/simfhe-bootstrapping.md).

The configuration, as a `fhec.BootstrapConfig`: N = 2^17, 50-bit words, 40 limbs at the start
of CoeffsToSlots (levels = 39), 20 special primes (dnum = 2 at 40 limbs), DFT factors of
log-radices [2, 2, 3, 3, 3, 3] (7, 7, 15, 15, 15, 15 diagonals; StC in the reverse order), each
a linear transform (BSGS; "full": every diagonal a baby step) followed by one rescale, EvalMod by a Chebyshev series of degree 63
plus 2 double angles. The program is `x.bootstrap()` expanded by fhec's own passes (the
bootstrap recipe, BSGS, Paterson–Stockmeyer, key-switch expansion); its counts come from the
closed forms of `fhec.analysis.he_counts`, which the tests check against the lowering, so
nothing at N = 2^17 is lowered. Rows: the DFT transforms with `BootstrapConfig(hoisting=...)`
"none" (every rotation decomposes its own input), "single" (the baby steps of each matrix
share one decomposition: SimFHE's baseline), "double" (the baby steps also stay over Q·P
and each giant step divides by P once) and "full" (every rotation of a matrix off one
decomposition, one mod-down per matrix merged with its rescale, and EvalMod's
relinearizations merged with their rescales by `fuse_mod_down_rescale`: SimFHE's "fully
hoisted").

Each row also gives the what-if of SimFHE's key-switching model, which a real key cannot
follow: fhec's count with α = ⌈l/dnum⌉ special primes recomputed at every level (the
closed forms' `OpShape.alpha` replaced per node; "α+1": SimFHE's P = α + 1 limbs as the
digit size too), where fhec's keys have one P of 20 primes. Squares take three limb products
(their cross product doubled); a product of two different ciphertexts takes four, or three by
Karatsuba where a target asks for it (``[lowering] products = "karatsuba"``; SimFHE counts
Karatsuba): the "with Karatsuba" column. docs/bootstrapping.md,
"Counts against SimFHE", derives the differences in what each counts.
"""

from __future__ import annotations

import sys
import time
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import fhec  # noqa: E402
from fhec.analysis.he_counts import OP_COUNTS, modular_ops, node_limb_counts, shape_of  # noqa: E402
from fhec.evaluate import prepare  # noqa: E402
from fhec.ir.he import HeOp  # noqa: E402
from fhec.passes.he_keyswitch import expand_key_switches  # noqa: E402

SIMFHE_G = {  # (multiplies, additions) in 10^9, per stage and total (notes/simfhe-bootstrapping.md)
    "baseline": {"cts": (20.127, 25.025), "evalmod": (26.611, 35.346), "stc": (9.625, 12.485),
                 "total": (56.363, 72.856)},
    "fully hoisted": {"cts": (8.150, 8.672), "evalmod": (23.881, 30.316), "stc": (4.004, 4.218),
                      "total": (36.034, 43.206)},
}

SIMFHE_RADICES = (2, 2, 3, 3, 3, 3)
SIMFHE_DNUM = 2


def simfhe_params(N: int = 2**17, log_radices=SIMFHE_RADICES, hoisting: str = "single") -> "fhec.CKKSParams":
    """SimFHE's default experiment as fhec parameters (module doc), with the DFT transforms'
    `hoisting`; security=None: SimFHE models cost, not security, and log QP = 2,950 bits is
    far beyond any table at 2^17."""
    config = fhec.BootstrapConfig(
        cts_log_radices=log_radices, stc_log_radices=tuple(reversed(log_radices)) if log_radices else None,
        evalmod=fhec.EvalModConfig(degree=63, double_angle=2, arcsine_degree=0), hoisting=hoisting,  # SimFHE: no arcsine
    )
    return fhec.CKKSParams(N=N, levels=39, scale_bits=40, word_bits=50, special_primes=20, security=None,
                           min_precision_bits=None, bootstrap=config)


def bootstrap_program(params) -> "fhec.Program":
    p = fhec.Program("bootstrap", params)
    p.output("y", p.input("x", level=0).bootstrap())
    return p


def _simfhe_alpha_counts(expanded, node, extra: int) -> Counter:
    """The node's limb instructions with SimFHE's per-level digit size ⌈L/dnum⌉ (+ `extra`)
    as the special-prime count: a what-if of its model (module doc), not fhec's count."""
    shape = shape_of(expanded, node, "hybrid")
    if shape.L:
        shape = replace(shape, alpha=math.ceil(shape.L / SIMFHE_DNUM) + extra)
    return OP_COUNTS[node.op](shape)


def count(params) -> dict:
    """(multiplies, additions) per stage and in total, rotations, mod-downs (separate and
    merged with a rescale), the total multiplies under SimFHE's per-level α (and α + 1),
    and the seconds it took, with the hoisting of `params.bootstrap`."""
    t0 = time.perf_counter()
    prepared = prepare(bootstrap_program(params))
    expanded = expand_key_switches(prepared, "hybrid", "auto")
    by_stage: dict[str, Counter] = {}
    for node in expanded.nodes:  # the recipe tags every node, key-switch pieces included, with its stage
        by_stage.setdefault(node.attr("stage", None) or "(untagged)", Counter()).update(node_limb_counts(expanded, node))
    out = {st: modular_ops(c, params.N) for st, c in by_stage.items()}
    out["total"] = modular_ops(sum(by_stage.values(), Counter()), params.N)
    # SimFHE's tensor product: Karatsuba, a target's lowering choice ([lowering] products)
    out["karatsuba"] = modular_ops(sum((node_limb_counts(expanded, n, karatsuba=True) for n in expanded.nodes),
                                       Counter()), params.N)[0]
    for extra in (0, 1):
        what_if = Counter()
        for node in expanded.nodes:
            what_if.update(_simfhe_alpha_counts(expanded, node, extra))
        out[f"simfhe_alpha+{extra}"] = modular_ops(what_if, params.N)[0]
    out["rotations"] = sum(1 for n in expanded.nodes if n.op is HeOp.KEY_MULT and n.attr("source") != "relin")
    out["mod_downs"] = sum(1 for n in expanded.nodes if n.op in (HeOp.MOD_DOWN, HeOp.MOD_DOWN_EXT))
    out["merged"] = sum(1 for n in expanded.nodes if n.op is HeOp.RESCALE_EXT)
    out["limbs_out"] = params.limbs_at(expanded.node(expanded.outputs["y"]).type.level)
    out["seconds"] = time.perf_counter() - t0
    return out


def run(quick: bool = False) -> list[dict]:
    group = "Bootstrap modular operations against SimFHE (N = 2^17, dnum = 2, 40 limbs at CtS)"
    N, radices, scale = (2**12, None, 2**12 / 2**17) if quick else (2**17, SIMFHE_RADICES, 1.0)
    # SimFHE's baseline shares one ModUp among each matrix's baby steps: fhec's "single".
    # Its "fully hoisted" takes every rotation off one ModUp, accumulates in Q·P with one
    # ModDown per matrix and merges ModDowns with rescales: fhec's "full" ("double" keeps giant steps).
    pairs = [("none", "baseline"), ("single", "baseline"), ("double", "fully hoisted"), ("full", "fully hoisted")]
    counted = {h: count(simfhe_params(N, radices, h)) for h, _ in pairs}
    rows = []
    for hoisting, simfhe in pairs:
        got = counted[hoisting]
        ref = SIMFHE_G[simfhe]
        row = {"group": group, "name": f"fhec hoisting={hoisting} / SimFHE {simfhe}", "rotations": got["rotations"],
               "mod-downs": got["mod_downs"], "merged with rescale": got["merged"], "limbs after": got["limbs_out"]}
        for st, label in (("cts", "CtS"), ("evalmod", "EvalMod"), ("stc", "StC")):
            row[f"{label} mult G"] = got.get(st, (0, 0))[0] / 1e9
            row[f"{label} SimFHE G"] = ref[st][0] * scale
        mul, add = got["total"]
        row.update({"mult G": mul / 1e9, "SimFHE mult G": ref["total"][0] * scale,
                    "mult ratio": mul / 1e9 / (ref["total"][0] * scale),
                    "add G": add / 1e9, "SimFHE add G": ref["total"][1] * scale,
                    "add ratio": add / 1e9 / (ref["total"][1] * scale),
                    "mult G at SimFHE's α": got["simfhe_alpha+0"] / 1e9,
                    "mult G at SimFHE's α+1": got["simfhe_alpha+1"] / 1e9,
                    "mult G with Karatsuba": got["karatsuba"] / 1e9, "count s": got["seconds"]})
        rows.append(row)
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
