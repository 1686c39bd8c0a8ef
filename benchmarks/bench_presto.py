"""Presto model cycles: one NTT per ring degree, and the bundled examples.

The NTT rows run one ``he.ntt`` (after the configuration prologue) through the Presto
timing model (`fhec.isa.presto.sim.Timing`) and report the NTT's own cycles (issue to
completion), next to the slides' one data point: "3.23M NTT/s peak throughput (Poly. Dim
= 512)" = 310 cycles at 1 GHz. The example rows compile each bundled example for
``presto`` and report the timing model's total, the memory port's share and the spills.
These are model cycles, not wall-clock times.
"""

from __future__ import annotations

import numpy as np

from fhec.backends.target import load_target
from fhec.isa.presto.asm import assemble
from fhec.isa.presto.backend import presto_machine
from fhec.isa.presto.sim import Memory, simulate
from fhec.ring.ntt import primitive_2n_root
from fhec.ring.primes import ntt_primes

PAPER_NTT_CYCLES = {512: round(1e9 / 3.23e6)}


def _ntt_cycles(pm, N: int) -> int:
    q = ntt_primes(N, 30, 1)[0]
    mem = Memory()
    mem.write(0x1000, np.array([N, q, primitive_2n_root(N, q)], dtype="<u8"))
    text = (
        "lui x11, 0x1\nld x7, 0(x11)\nhe.setn x7\nld x6, 8(x11)\nld x7, 16(x11)\nhe.setmod q0, x6, x7\n"
        "he.setq q0, q0\nhe.ntt v1, v0\n"
    )
    t = simulate(assemble(text), pm, 32, mem, data=False).timing
    return t.cycles - t.issue[-1]


def run(quick: bool = False) -> list[dict]:
    import fhec
    from fhec.bundled_examples import examples_dir
    from fhec.cli import load_program

    machine = load_target("presto")
    pm = presto_machine(machine)
    rows = []
    for log_n in range(9, 12 if quick else 15):
        N = 1 << log_n
        rows.append({
            "group": "Presto NTT cycles (timing model)",
            "name": f"NTT N=2^{log_n}",
            "pes": pm.chunks(N),
            "cycles": _ntt_cycles(pm, N),
            "paper": PAPER_NTT_CYCLES.get(N),
        })
    examples = ["rpu_matvec", "private_lookup"] + ([] if quick else ["lola_mnist", "logistic_regression"])
    for name in examples:
        c = fhec.compile(load_program(str(examples_dir() / f"{name}.py")), target=machine)
        r = c.report
        rows.append({
            "group": "Presto: bundled examples (timing model)",
            "name": name,
            "N": r.N,
            "limb_instructions": r.limb_instructions,
            "instructions": r.instructions,
            "cycles": r.cycles,
            "memory_busy": round(r.utilization.get("memory", 0.0), 2),
            "spills": r.spills,
        })
    return rows
