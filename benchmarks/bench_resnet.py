"""ResNet-20 at N = 2^16 (`fhec/examples/resnet20.py`, Osiris Table II set IV) compiled
whole: compile seconds, peak resident memory and limb instructions (issue 12's bar: under
10 minutes and 8 GB on this 2-core machine), and the simulated time of the NH / SH / DH
variants beside Osiris Table III. The program (its module doc) is Lee et al.'s network with
36 sparse bootstraps of 2^14 slots (two per ReLU but the first: set IV leaves 9 levels and
the ReLU needs 14), convolutions at level 2, and the variant's hoisting in both the
convolutions and the bootstraps' DFTs (the NH / SH / DH rows vary the transforms Osiris's do).

Each row compiles in a fresh process (as bench_bootstrap_compile does), which reports its
wall-clock and CPU seconds (the machine is shared: the wall clock includes waiting for a
core) and peak RSS, then replays the streams in the independent checker (its seconds are
reported apart). Targets: `osiris` and `osiris-2tb` (40-bit words, set
IV as Osiris states it) when they load; otherwise `f1-64k` (F1 scaled to N = 2^16) with
the same limb counts in F1's 32-bit words (scale 2^28), whose times are not Osiris's and
are shown without a paper column. ``--quick`` compiles the SH variant only.

Each row's program is `resnet20.tuned(variant, target)`: the convolutions' baby-step counts
by the `fhec.analysis.bsgs.best_n1` cost model on the target (`resnet20.split_for`), and the
bootstraps' giant-step cap ("n2 cap", "-" = the fewest rotations, "4 (CtS)" = n2 <= 4 on
CoeffsToSlots alone) the fastest of `resnet20.GIANT_STEP_CAPS`, each on both DFT stages or
on CoeffsToSlots alone (`resnet20.CAP_STAGES`), on the program's two-bootstrap segment
(`resnet20.tuned_giant_steps`, "tune s", not in the compile seconds), as Osiris tunes
n1/n2 per hoisting mode and bandwidth (§VII-C) and `bench_osiris` does for its bootstrap
row. Peak RSS covers the tuning compiles too (each well under 1 GB; they leave the
process 0.3-0.5 GB larger when the full compile starts).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, resource, sys, time
import fhec
from benchmarks.peak import peak_mb
from fhec.examples import resnet20
variant, target, word_bits = sys.argv[1], sys.argv[2], int(sys.argv[3])
def cpu_s():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime
t_tune = time.perf_counter()
cap, stages = resnet20.tuned_giant_steps(variant, target, word_bits)
tune_s, tune_cpu = time.perf_counter() - t_tune, cpu_s()
t0 = time.perf_counter()
p = resnet20.full(variant, word_bits, max_giant_steps=cap, target=target, max_giant_steps_stages=stages)
traced = time.perf_counter() - t0
c = fhec.compile(p, target)
seconds = time.perf_counter() - t0
peak, cpu = peak_mb(), cpu_s() - tune_cpu
t1 = time.perf_counter()
c.check()
r = c.report
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "cap": resnet20.cap_label(cap, stages), "tune_s": tune_s, "trace_s": traced, "check_s": time.perf_counter() - t1, "peak_mb": peak,
                  "instructions": r.limb_instructions, "time_ms": r.time_us / 1000, "bound_ratio": r.bound_ratio,
                  "binding": r.binding_bound, "offchip_gb": r.offchip_bytes["total"] / 1e9,
                  "passes": {k["name"]: round(k["seconds"], 1) for k in r.compile_passes}}))
"""


def _available(target: str) -> bool:
    from fhec.backends.target import load_target
    from fhec.errors import FhecError

    try:
        load_target(target)
    except FhecError:
        return False
    return True


def _compile(variant: str, target: str, word_bits: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, variant, target, str(word_bits)], capture_output=True,
                         text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    if out.returncode:
        raise RuntimeError(f"ResNet-20 {variant} on {target} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cases(quick: bool = False) -> list[tuple[str, str, int, float | None]]:
    """(variant, target, word_bits, Osiris's ms) of each row."""
    from fhec.examples.resnet20 import OSIRIS_MS

    variants = ("SH",) if quick else ("NH", "SH", "DH")
    osiris = [t for t in OSIRIS_MS if _available(t)]
    if not osiris:
        return [(v, "f1-64k", 32, None) for v in variants]
    return [(v, t, 40, OSIRIS_MS[t][v]) for t in (osiris[:1] if quick else osiris) for v in variants]


def run(quick: bool = False) -> list[dict]:
    group = "ResNet-20 at N = 2^16 (Osiris set IV), whole-program compiles (checker passes on every row)"
    rows = []
    for variant, target, word_bits, paper_ms in cases(quick):
        got = _compile(variant, target, word_bits)
        rows.append({
            "group": group, "name": f"ResNet-20 {variant}", "target": target, "instructions": got["instructions"],
            "fhec ms": got["time_ms"], "Osiris ms": paper_ms,
            "ratio": None if paper_ms is None else got["time_ms"] / paper_ms,
            "cycles/bound": got["bound_ratio"], "binding": got["binding"], "off-chip GB": got["offchip_gb"],
            "n2 cap": got["cap"], "compile s": got["seconds"], "compile CPU s": got["cpu_s"],
            "tune s": got["tune_s"], "trace s": got["trace_s"],
            "peak MB": got["peak_mb"],
            "check s": got["check_s"],
        })
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(row)
