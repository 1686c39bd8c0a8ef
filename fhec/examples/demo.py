"""The `make demo` job: F1's matrix-vector example, compiled for F1 and run.

1. Compile `matvec.py` (F1 Listing 2: a 4 × 16K matrix times a 16K vector) for
   the F1 target: per-unit instruction streams and a report of cycles, utilization and
   off-chip traffic.
2. Replay the streams in the independent hazard checker.
3. Encrypt random inputs, execute the streams in the functional model on real
   ciphertexts, decrypt, and compare with plain numpy.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import fhec  # noqa: E402
from matvec import p  # noqa: E402  (the program; `fhec check demo.py` finds it too)


def main() -> None:
    from rich.console import Console

    console = Console()
    t0 = time.perf_counter()
    compiled = fhec.compile(p, target="f1")
    console.print(f"compiled {p.name!r} for F1 in {time.perf_counter() - t0:.1f} s")
    console.print(compiled.report.rich_table())
    compiled.check()
    console.print("stream checker: no hazards")

    rng = np.random.default_rng(0)
    inputs = {name: rng.uniform(-1, 1, p.params.slots) for name in p.ir.inputs}
    t0 = time.perf_counter()
    out = compiled.run(inputs, seed=1)
    console.print(f"executed {len(compiled.streams):,} stream entries on real ciphertexts in {time.perf_counter() - t0:.1f} s")
    for i in range(4):
        expected = float(np.dot(inputs[f"row{i}"], inputs["v"]))
        got = out[f"y{i}"]
        console.print(f"  y{i} = {got[0]:+.5f}   numpy {expected:+.5f}   max |error| over slots "
                      f"{np.abs(got - expected).max():.1e}")


if __name__ == "__main__":
    main()
