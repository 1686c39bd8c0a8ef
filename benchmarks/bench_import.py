"""Start-up time: `python -c "import fhec"` and `fhec --help`, wall clock in a fresh
process, best of 7 runs with the numba cache warm (what a user waits for before the
first line of a notebook cell or the CLI's help appears). Reference: the bare
interpreter start-up, `python -c "pass"`, in the same run. Targets: under 0.5 s for the
import and 0.7 s for the help.

`import fhec` loads only `fhec.errors`; every other public name loads on first use, so
numba, sympy and the numeric kernels are imported when a program needs them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

RUNS = 7


def _best(cmd: list[str]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return best


def run(quick: bool = False) -> list[dict]:
    py = sys.executable
    base = _best([py, "-c", "pass"])
    script = Path(sys.executable).parent / "fhec"  # the console script pip installed beside python
    fhec_cli = str(script) if script.exists() else None
    rows = [
        {"group": "Start-up time", "name": 'python -c "import fhec"', "seconds": _best([py, "-c", "import fhec"]),
         "target_s": 0.5, "interpreter_s": base},
        {"group": "Start-up time", "name": "fhec --help",
         "seconds": _best([fhec_cli, "--help"] if fhec_cli else [py, "-m", "fhec.cli", "--help"]),
         "target_s": 0.7, "interpreter_s": base},
    ]
    return rows
