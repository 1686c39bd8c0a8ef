"""Compile time for the ISA machines: every bundled example that fits compiled for `rpu`
and `presto`, whole (`fhec.compile` up to machine words and the timing model's report).

`cpu_s` is the process CPU time of the compile and `wall_s` its wall clock (the machine
is shared; when it is loaded the wall clock measures the load too, so compare `cpu_s`).
The other columns split `wall_s` by ISA pass (`Report.compile_passes`: instruction
selection, register allocation, scheduling, encoding); `limb_instructions` is the size of
the program the ISA passes start from and `instructions` the machine code's. One compile
of the smallest example runs first so that imports and the numba kernels' on-disk cache
are loaded before anything is timed; each row is one compile. A row the machine cannot
hold says so (`status`).
"""

from __future__ import annotations

import time

PASSES = ("select_instructions", "allocate_registers", "schedule_instructions", "encode")
EXAMPLES = ("rpu_matvec", "private_lookup", "lola_mnist", "logistic_regression")


def _row(machine: str, name: str) -> dict:
    import fhec
    from fhec.bundled_examples import examples_dir
    from fhec.cli import load_program
    from fhec.errors import FhecError

    row = {"group": "Compile time for the ISA machines", "name": f"{name} for {machine}"}
    program = load_program(str(examples_dir() / f"{name}.py"))
    c0, t0 = time.process_time(), time.perf_counter()
    try:
        compiled = fhec.compile(program, machine, verify=False)
    except FhecError as e:
        return {**row, "status": f"refused: {str(e).split(';')[0]}"}
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    r = compiled.report
    seconds = {p["name"]: p["seconds"] for p in r.compile_passes}
    return {**row, "N": r.N, "limb_instructions": r.limb_instructions, "instructions": r.instructions,
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), **{f"{p}_s": round(seconds.get(p, 0.0), 2) for p in PASSES},
            "status": "ok"}


def run(quick: bool = False) -> list[dict]:
    import warnings

    import fhec

    warnings.simplefilter("ignore", fhec.PrecisionWarning)  # the examples' own precision is not what this measures
    _row("rpu", EXAMPLES[0])  # warm-up: imports, numba cache
    examples = EXAMPLES[:2] if quick else EXAMPLES
    return [_row(machine, name) for machine in ("rpu", "presto") for name in examples]


if __name__ == "__main__":
    import json
    import sys

    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
