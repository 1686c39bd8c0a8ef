"""Measure how far the worst CKKS slot error lies above the estimated error std.

For each ring size, op and key-switching method, runs a one-op program on the eager
evaluator for several seeds and prints, in bits:

* ``max/rms``: log2(max_i |err_i| / rms(err)), the extreme-value factor over N/2 slots;
* ``gap``: (log2 scale − noise) − (−log2 max |err|), how far the worst slot lies below
  the σ-based precision; the model `fhec.schemes.noise.worst_slot_tail_bits` must be at
  least the largest gap (printed as ``model``).

Run:  PYTHONPATH=. python benchmarks/worst_slot.py [log2 N ...] [--seeds K]
(default 6 8 10 12 13 14, 10 seeds; N = 2^14 takes a few minutes).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import fhec
from fhec.evaluate import evaluate, random_inputs
from fhec.reference import reference
from fhec.schemes.noise import worst_slot_tail_bits

OPS = {
    "fresh": lambda x: x + 0.0,
    "rotate(2)": lambda x: x.rotate(2),
    "x*x": lambda x: x * x,
}


def measure(log_n: int, op: str, keyswitch: str, base_limbs: int, seeds: int) -> dict:
    # min_precision_bits=None: BV rows are measured on purpose (they are noise at 32-bit words)
    params = fhec.CKKSParams(N=2**log_n, levels=2, base_limbs=base_limbs, keyswitch=keyswitch, security=None,
                             min_precision_bits=None)
    p = fhec.Program("worst_slot", params)
    p.output("y", OPS[op](p.input("x")))
    t = p.ir.node(p.ir.outputs["y"]).type
    sigma_bits = math.log2(t.scale) - t.noise
    ratios, gaps = [], []
    for seed in range(seeds):
        inputs = random_inputs(p, seed)
        err = np.abs(evaluate(p, inputs, seed)["y"] - reference(p, inputs)["y"])
        ratios.append(math.log2(err.max() / math.sqrt(float(np.mean(err**2)))))
        gaps.append(sigma_bits + math.log2(err.max()))
    return {"max_rms": max(ratios), "gap": max(gaps), "model": worst_slot_tail_bits(params)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("log_n", nargs="*", type=int, default=[6, 8, 10, 12, 13, 14])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    print(f"{'log2 N':>6} {'op':>9} {'ks':>6} {'base':>4} {'max/rms':>8} {'gap':>6} {'model':>6}")
    for log_n in args.log_n:
        for op in OPS:
            for ks in ("hybrid", "bv"):
                if op == "fresh" and ks == "bv":
                    continue
                for base in (1, 2):
                    r = measure(log_n, op, ks, base, args.seeds)
                    flag = "" if r["gap"] <= r["model"] else "  <-- above the model"
                    print(f"{log_n:>6} {op:>9} {ks:>6} {base:>4} {r['max_rms']:>8.2f} {r['gap']:>6.2f} "
                          f"{r['model']:>6.2f}{flag}", flush=True)


if __name__ == "__main__":
    main()
