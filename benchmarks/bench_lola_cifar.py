"""LoLa-CIFAR (F1 Table 3: 241 ms) under two hint-reuse orders and two models of F1.

The suite row (`fhec bench --suite f1`, docs/suites.md) compiles LoLa's CIFAR network with
fhec's default order for `f1` and lands at 0.6x the paper. This module measures what the
difference comes from, on the same program at the paper's size (N = 2^14, 9 limbs where F1 has 8, 26.9 M
limb instructions), each compile in a fresh process:

- the **order**: fhec's "bounded" hint-reuse order (key switches sharing a hint are
  clustered while the live values fit half the scratchpad left by the kept hints) against
  F1 §4.2's "unbounded" one (`fhec.compile(hint_order="unbounded")`: every independent
  operation on one hint clustered, whatever the scratchpad holds). F1 §8.2 reports that
  75% of its LoLa-CIFAR traffic is intermediates, spilled to reuse the hints, and the
  "intermediates %" column is the same measure for fhec's schedules;

- the **machine model**: `f1`, F1's functional-unit model (every unit reads and writes the
  scratchpad at its own rate, as F1's data-movement scheduler assumes), against
  `f1-datapath`, the same machine with its register files, three crossbars of 512 B ports
  and bank ports (docs/targets.md), where the on-chip network can bind.

No row is tuned to the paper: each is the compiler's default schedule search (prefetch
reserves, pairing) under the named order and target. --quick compiles the first 400 of
the 7,987 rows of the second convolution instead (a scaling probe, not the network).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PAPER_MS = 241.0  # F1 (MICRO 2021) Table 3, LoLa-CIFAR with unencrypted weights
PAPER_INTERMEDIATE_SHARE = 0.75  # F1 §8.2: "intermediates consume 75% of traffic"

_CHILD = r"""
import json, sys, time, warnings
from benchmarks.peak import peak_mb
sys.path.insert(0, "fhec/examples")
warnings.simplefilter("ignore")
import fhec, lola_cifar
target, order, rows = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
p = lola_cifar.lola_cifar(rows=None if rows == "-" else int(rows))
r = fhec.compile(p, target, hint_order=order, progress=False).report
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_gib": peak_mb() / 1024,
                  "report": r.model_dump(include={"time_us", "bound_ratio", "binding_resources", "offchip_bytes",
                                                  "onchip_bytes", "limb_instructions", "hint_order"})}))
"""

ROWS = (("f1", "bounded"), ("f1", "unbounded"), ("f1-datapath", "bounded"), ("f1-datapath", "unbounded"))
"""(target, hint order) of each row: the suite's row first, then each change alone, then both."""


def _compile(target: str, order: str, rows: int | None) -> dict:
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", _CHILD, target, order, "-" if rows is None else str(rows)],
                         capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""},
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(target: str, order: str, got: dict, rows: int | None) -> dict:
    r, gib = got["report"], 1 / 2**30
    off = r["offchip_bytes"]
    intermediates = off["intermediate_loads"] + off["intermediate_stores"]
    ms = r["time_us"] / 1000
    return {
        "group": "LoLa-CIFAR: hint-reuse order and F1 model" + ("" if rows is None else f" (first {rows} rows, --quick)"),
        "name": f"{order} order on {target}", "target": target, "hint order": r["hint_order"],
        "instructions": r["limb_instructions"], "fhec ms": ms, "paper ms": PAPER_MS, "fhec / paper": ms / PAPER_MS,
        "cycles/bound": r["bound_ratio"], "binding": r["binding_resources"].get("program", ""),
        "off-chip GiB": off["total"] * gib, "intermediates %": 100 * intermediates / max(off["total"], 1),
        "paper intermediates %": 100 * PAPER_INTERMEDIATE_SHARE,
        "keys GiB": (off["ksh_compulsory"] + off["ksh_noncompulsory"]) * gib,
        "on-chip TiB": r["onchip_bytes"] / 2**40, "compile s": got["seconds"], "peak GiB": got["peak_gib"],
    }


def run(quick: bool = False) -> list[dict]:
    rows = 400 if quick else None
    return [_row(target, order, _compile(target, order, rows), rows) for target, order in ROWS]


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
