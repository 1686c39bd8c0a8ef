"""F1 Table 4 microbenchmarks, reproduced by fhec's schedules of the F1 targets.

Reciprocal throughput in ns per ciphertext operation, as in F1 Table 4: NTT and
automorphism of one ciphertext (2L RVecs), homomorphic multiply (tensor product +
relinearization) and homomorphic permutation (automorphism + key switch), at F1's three
parameter sets N=2^12/log Q=109, 2^13/218, 2^14/438 (L = 4, 7, 14 limbs of 32-bit words),
with F1's BV key switching (Listing 1). Each figure is the steady-state growth in
scheduled cycles per added operation, over independent ciphertexts whose hints stay on
chip: (cycles(depth 48) − cycles(depth 24)) / (24 · chains), at F1's 1 GHz; the long
chains make the start (loading inputs and hints) negligible. The "paper" column is
Table 4's F1 figure; "cycles/bound" is the depth-48 schedule's cycles over the largest
of its lower bounds (`fhec.analysis.bounds`). Each row is measured on two targets:
`f1`, F1's functional-unit model (every unit reads and writes the scratchpad at its own
rate), and `f1-datapath`, the same machine with its register files, crossbars and bank
ports modeled (docs/scheduling.md, "The on-chip data path").

On `f1` the key-switching rows (multiply, permutation) are within 7% of the paper and
NTT and automorphism about 1.25x (F1 §3's 128 lanes are slower than the 160 elements per
cycle Table 4 implies, docs/targets.md). On `f1-datapath` (512 KB register files, 8 RVecs
at N = 2^14 per cluster; one 512 B port per cluster on each of three crossbars) NTT and
automorphism hardly move, since each op streams one source over its cluster's port at
the rate it consumes it, but key switching is several times the paper and grows with L:
every hint limb a multiplier reads crosses a 512 B port in N/E cycles, as long as the NTT
of a limb, and the digits cross between clusters. With F1's stated port width the hint
reads alone are 2x Table 4's key-switch time at L = 14 (docs/scheduling.md), and fhec's
greedy cluster and register choices keep too few operands in the register files to
close the rest.

Workloads: each is `chains` independent ciphertexts, each run through `depth`
dependent operations of one kind, written directly with the limb emitters (the same
ones the lowering uses), all sharing one key. Chains: 16 at N = 2^12 and 8 at N = 2^13
and 2^14. Why: Table 4 is a throughput figure, so the machine must have enough
independent work to fill F1's 16 clusters. One BV key switch at L limbs starts with L
INTTs, each feeding the L − 1 NTTs of its digit; at L = 4, 8 chains give only 32
independent INTTs per step, which leaves NTT units idle across that dependence, while
16 chains (64) keep all 16 NTT units busy. At L = 7 and 14, 8 chains already offer 56
and 112. More chains would not change the throughput but would, at N = 2^14, overflow
the 64 MB scratchpad: 8 ciphertexts of 2 × 14 limbs (14.7 MB) plus the key's 2L² = 392
hint limbs (25.7 MB) fit; 16 would spill and measure the memory system instead.
"""

from __future__ import annotations

import json
import sys

import fhec
from fhec.backends.target import load_target
from fhec.ir.limb import LimbOp
from fhec.analysis.bounds import lower_bounds
from fhec.passes.cycle import schedule_cycles
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.passes.offchip import schedule_offchip

PAPER_NS = {
    "NTT": (12.8, 44.8, 179.2),
    "automorphism": (12.8, 44.8, 179.2),
    "homomorphic multiply": (60.0, 300.0, 2000.0),
    "homomorphic permutation": (40.0, 224.0, 1680.0),
}
SIZES = ((2**12, 4), (2**13, 7), (2**14, 14))
CHAINS = {2**12: 16, 2**13: 8, 2**14: 8}
SHORT = 24


def _program(kind: str, N: int, L: int, chains: int, depth: int):
    params = fhec.CKKSParams(N=N, levels=L - 1, scale_bits=28, word_bits=32, security=None)
    em = LimbEmitter(params)
    mods = list(range(L))
    xs = [em.input_rvecs(f"x{i}", 2, L) for i in range(chains)]
    y = em.input_rvecs("y", 2, L)
    for step in range(depth):
        if kind == "NTT":  # alternate directions so each step depends on the last
            op = LimbOp.NTT if step % 2 else LimbOp.INTT
            xs = [em.builder.emit_new(op, x.ravel(), mod=mods * 2).reshape(2, L) for x in xs]
        elif kind == "automorphism":
            xs = [em.automorphism(x, 5) for x in xs]
        elif kind == "homomorphic multiply":
            xs = [em.relinearize(em.multiply(x, y), "relin", params.top_level, "bv") for x in xs]
        else:
            xs = [em.rotate(x, 5, "rot", params.top_level, "bv") for x in xs]
    return finalize_outputs(em, {f"z{i}": x for i, x in enumerate(xs)})[0]


def _cycles(prog, target):
    data = schedule_offchip(prog, target)
    return schedule_cycles(data, target).total_cycles


def _measure(kind: str, N: int, L: int, target) -> tuple[float, float]:
    """(ns per operation, depth-48 cycles over its largest lower bound) on `target`."""
    chains = CHAINS[N]
    c_short = _cycles(_program(kind, N, L, chains, SHORT), target)
    deep = _program(kind, N, L, chains, 2 * SHORT)
    c_deep = _cycles(deep, target)
    ns = (c_deep - c_short) / (SHORT * chains) / target.clock_ghz
    return ns, c_deep / lower_bounds(deep, target).cycles


def run(quick: bool = False) -> list[dict]:
    f1, datapath = load_target("f1"), load_target("f1-datapath")
    rows = []
    for kind, paper in PAPER_NS.items():
        for (N, L), p_ns in zip(SIZES, paper):
            if quick and N > 2**13:
                continue
            ns, ratio = _measure(kind, N, L, f1)
            dp_ns, dp_ratio = _measure(kind, N, L, datapath)
            rows.append(
                {
                    "group": "F1 Table 4 (reciprocal throughput, ns)",
                    "name": f"{kind}, N=2^{N.bit_length() - 1}, L={L}",
                    "paper_ns": p_ns,
                    "f1_ns": round(ns, 1),
                    "f1/paper": round(ns / p_ns, 2),
                    "f1 cycles/bound": round(ratio, 2),
                    "f1-datapath_ns": round(dp_ns, 1),
                    "f1-datapath/paper": round(dp_ns / p_ns, 2),
                    "f1-datapath cycles/bound": round(dp_ratio, 2),
                }
            )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
