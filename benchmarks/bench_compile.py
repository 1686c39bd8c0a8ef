"""Compile throughput: limb instructions per second through both schedulers, on F1.

Programs: the rotate-and-accumulate chains of `bench_lowering` (N=2^14, 17 limbs, one
hybrid key switch per step), from about 2·10^3 to 10^6 limb instructions. Each row gives
the time of the off-chip (Belady) scheduler and of the cycle-level scheduler, and the
combined throughput; the bar is 10^6 instructions through both in under 60 s.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def run(quick: bool = False) -> list[dict]:
    from bench_lowering import chain_program

    from fhec.backends.target import load_target
    from fhec.passes.cycle import schedule_cycles
    from fhec.passes.offchip import schedule_offchip
    from fhec.compiler import lower as lower_program

    f1 = load_target("f1")
    rows = []
    # warm the numba kernels up so the first row does not include compilation
    warm = lower_program(chain_program(1)).limb
    schedule_cycles(schedule_offchip(warm, f1), f1)
    for steps in ([1, 10, 100] if quick else [1, 10, 100, 500]):
        limb = lower_program(chain_program(steps)).limb
        t0 = time.perf_counter()
        data = schedule_offchip(limb, f1, verify=False)
        t1 = time.perf_counter()
        streams = schedule_cycles(data, f1)
        t2 = time.perf_counter()
        rows.append(
            {
                "group": "compile (scheduling)",
                "name": f"rotate-accumulate chain, {steps} steps, f1",
                "instructions": len(limb),
                "offchip_s": round(t1 - t0, 2),
                "cycle_s": round(t2 - t1, 2),
                "instr_per_s": round(len(limb) / (t2 - t0)),
                "cycles": streams.total_cycles,
            }
        )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
