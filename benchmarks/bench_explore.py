"""Plots, traces and sweeps: wall-clock seconds of what docs/plots-and-traces.md and
docs/explore.md describe, best of a few runs after a warm-up (the sweep: one run each).

Plots and the trace are drawn for F1's matrix-vector example (fhec/examples/matvec.py, N = 2^14,
L = 16) compiled for f1. The sweep compiles a small program (N = 2^10, a square, a
plaintext product and a 4-slot sum) for 12 variants of f1 (4 scratchpad capacities x 3
bandwidths, as tests/test_explore.py): serially in one process, and on a local Dask
cluster of 2 worker processes, including the cluster's start-up and shutdown. Both give
the same table. There is no reference column: no peer tool does these.
"""

from __future__ import annotations

import runpy
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARY = {"scratchpad.capacity_bytes": ["64KiB", "128KiB", "256KiB", "1MiB"], "memory.bandwidth_gb_s": [256, 512, 1024]}


def _best(fn, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _sweep_program():
    import fhec

    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("swept", params)
    x, w = p.input("x"), p.plain("w")
    p.output("y", ((x * x) * w).sum_slots(4) + x)
    return p


def run(quick: bool = False) -> list[dict]:
    import tempfile

    import fhec

    rows = []
    group = "Plots, traces and sweeps"
    if not quick:
        p = runpy.run_path(str(ROOT / "fhec" / "examples" / "matvec.py"))["p"]
        compiled = fhec.compile(p, "f1", progress=False)
        r = compiled.report
        entries = len(compiled.streams)
        out = tempfile.mkdtemp()
        for name in ("plot_utilization", "plot_traffic", "plot_scratchpad", "plot_roofline"):
            seconds = _best(lambda: getattr(r, name)().savefig(Path(out) / "plot.png"), 3)
            rows.append({"group": group, "name": f"matvec on f1: report.{name}() + savefig", "seconds": seconds,
                         "stream_entries": entries})
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "trace.json"
            seconds = _best(lambda: compiled.to_chrome_trace(path), 3)
            rows.append({"group": group, "name": "matvec on f1: to_chrome_trace", "seconds": seconds,
                         "stream_entries": entries, "trace_mb": path.stat().st_size / 1e6})
    prog = _sweep_program()
    serial_s = _best(lambda: fhec.explore(prog, "f1", VARY, scheduler="serial"), 1)
    rows.append({"group": group, "name": "explore: 12 f1 variants, serial", "seconds": serial_s})
    dask_s = _best(lambda: fhec.explore(prog, "f1", VARY, workers=2), 1)
    rows.append({"group": group, "name": "explore: 12 f1 variants, LocalCluster of 2 processes", "seconds": dask_s})
    return rows
