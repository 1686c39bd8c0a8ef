"""Compile time and memory of very wide programs: HEIR's acc += x·(y + c_i) with k products.

k = 1,000, 8,000 and 32,000 are the sizes HEIR measured its own `heir-opt` on (138 s and
18 GB for 8,000, without scheduling); the optimizing-passes issue's bar is 8,000 products
compiled to F1 streams in under 10 s with peak memory under 1 GB, and 32,000 in under
40 s. The program and its parameters are `bench_passes._wide` (CKKS, N = 2^13, 2 levels,
default rescale="auto").

Each size runs in a fresh process. `trace_s` is the Python loop that builds the program
(the DSL tracing it), `compile_s` the `fhec.compile(program, "f1")` call up to the
`Compiled` object with its streams and report (default options; verification off, as
outside pytest); `total_s` is their sum (wall clock) and `cpu_s` the process's CPU time over the same
span: the machine is shared, and when it is loaded the wall clock measures the load too.
Nothing is warmed up in that process: imports
done inside `fhec.compile` and loading the numba kernels from their on-disk cache are
included; only the one-time compilation of that cache is not (the parent process runs
one small compile first so that the cache exists). `peak_rss_MB` is the process's
maximum resident set (VmHWM, `benchmarks/peak.py`), interpreter and libraries included. The
second table splits `compile_s` by pass (`Report.compile_passes`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SIZES = (1_000, 8_000, 32_000)
BAR_S = {8_000: 10.0, 32_000: 40.0}
BAR_MB = {8_000: 1024}


def measure(k: int) -> dict:
    """Build and compile the k-product program in this process; the measured numbers."""
    sys.path.insert(0, str(HERE))
    from bench_passes import _wide
    from peak import peak_mb

    import fhec

    c0, t0 = time.process_time(), time.perf_counter()
    program = _wide(k)
    t1 = time.perf_counter()
    compiled = fhec.compile(program, "f1", verify=False)
    c2, t2 = time.process_time(), time.perf_counter()
    r = compiled.report
    return {
        "k": k,
        "he_nodes": len(compiled.program.nodes),
        "limb_instructions": r.limb_instructions,
        "cycles": r.cycles,
        "trace_s": t1 - t0,
        "compile_s": t2 - t1,
        "cpu_s": c2 - c0,
        "peak_rss_MB": peak_mb(),
        "passes": {p["name"]: p["seconds"] for p in r.compile_passes},
    }


def _child(k: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("FHEC_VERIFY", None)
    out = subprocess.run([sys.executable, str(Path(__file__)), str(k)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False) -> list[dict]:
    _child(2)  # compiles the numba cache if this checkout has none yet (not measured)
    summary, passes = [], []
    for k in SIZES[:1] if quick else SIZES:
        m = _child(k)
        total = m["trace_s"] + m["compile_s"]
        summary.append({
            "group": "Compile time of wide programs (F1)",
            "name": f"wide, {k:,} products",
            "he_nodes": m["he_nodes"],
            "limb_instructions": m["limb_instructions"],
            "cycles": m["cycles"],
            "trace_s": round(m["trace_s"], 2),
            "compile_s": round(m["compile_s"], 2),
            "total_s": round(total, 2),
            "cpu_s": round(m["cpu_s"], 2),
            "bar_s": BAR_S.get(k),
            "peak_rss_MB": round(m["peak_rss_MB"]),
            "bar_MB": BAR_MB.get(k),
        })
        passes.append({"group": "Compile time of wide programs, seconds per pass (F1)", "name": f"wide, {k:,} products",
                       **{name: round(s, 2) for name, s in m["passes"].items()}})
    return summary + passes


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1].isdigit():
        print(json.dumps(measure(int(sys.argv[1]))))
    else:
        for row in run(quick="--quick" in sys.argv):
            print(json.dumps(row))
