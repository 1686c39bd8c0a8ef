"""Lowering throughput and functional execution of compiled programs.

Lowering: DSL programs at N=2^14 with 17 limbs (F1's matrix-vector parameters) of growing
size, rotate-and-accumulate chains, from about 10^3 to 10^6 limb instructions. Each size runs in a fresh process so that its peak resident
memory (the bar: under 1 GB at 10^6) is its own; the time covers `lower` alone
(tracing and HE passes are reported separately).

Execution: the same programs' limb instructions run by the functional model
(`fhec.run`) beside the eager evaluator (`fhec.evaluate`) on the same inputs, for F1's
4×16K matrix-vector multiply and for one key switch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench_dir!r})
from bench_lowering import chain_program
from peak import peak_mb
from fhec.evaluate import prepare
from fhec.passes.lower import lower
t0 = time.perf_counter()
prog = chain_program({steps})
prepared = prepare(prog)
t1 = time.perf_counter()
lowered = lower(prepared, "hybrid")
t2 = time.perf_counter()
print(json.dumps({{"instructions": len(lowered.limb), "trace_s": t1 - t0, "lower_s": t2 - t1,
                  "peak_mb": peak_mb()}}))
"""


def chain_program(steps: int):
    """x rotated and accumulated `steps` times at the top level (17 limbs): each step is
    one hybrid key switch, about 2,000 limb instructions."""
    import fhec

    params = fhec.CKKSParams(N=2**14, levels=16, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program(f"chain{steps}", params)
    x = p.input("x")
    acc = x
    for i in range(steps):
        acc = acc.rotate(1 + i % 7) + x
    p.output("y", acc)
    return p


def _lowering_rows(quick: bool) -> list[dict]:
    from pathlib import Path

    rows = []
    sizes = [1, 10, 100] if quick else [1, 10, 100, 500]
    for steps in sizes:
        code = _CHILD.format(bench_dir=str(Path(__file__).parent), steps=steps)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(
            {
                "group": "lowering",
                "name": f"rotate-accumulate chain, {steps} steps",
                "instructions": r["instructions"],
                "lower_s": round(r["lower_s"], 2),
                "instr_per_s": round(r["instructions"] / r["lower_s"]),
                "trace+passes_s": round(r["trace_s"], 2),
                "peak_rss_mb": round(r["peak_mb"]),
            }
        )
    return rows


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _execution_rows(quick: bool) -> list[dict]:
    import fhec

    rows = []
    programs = []
    params = fhec.CKKSParams(N=2**14, levels=16, scale_bits=30, word_bits=32, security=None)
    ks = fhec.Program("one key switch", params)
    ks.output("y", ks.input("x").rotate(1))
    programs.append(ks)
    if not quick:
        sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent.parent / "fhec" / "examples"))
        import matvec  # noqa: E402  (the bundled F1 example)

        programs.append(matvec.p)
    for prog in programs:
        from fhec.evaluate import random_inputs
        from fhec.run import run_detailed

        inputs = random_inputs(prog, 0)
        fhec.run(ks, random_inputs(ks, 0), seed=0)  # warm the kernels up
        t_eager = _time(lambda: fhec.evaluate(prog, inputs, seed=1))
        res = {}
        t_run = _time(lambda: res.setdefault("r", run_detailed(prog, inputs, seed=1)))
        rows.append(
            {
                "group": "functional execution",
                "name": prog.name,
                "instructions": len(res["r"].lowered.limb),
                "compiled_run_s": round(t_run, 2),
                "eager_evaluate_s": round(t_eager, 2),
                "ratio": round(t_run / t_eager, 2),
            }
        )
    return rows


def run(quick: bool = False) -> list[dict]:
    return _lowering_rows(quick) + _execution_rows(quick)


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
