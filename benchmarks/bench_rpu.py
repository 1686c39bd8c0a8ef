"""RPU (B512) NTT cycles, reproduced by fhec's rpu backend (RPU paper Figs. 7-9).

Forward negacyclic NTTs of one 60-bit prime, N = 1K..64K, memory to memory, compiled by
the rpu backend's passes (select, allocate, schedule, encode) for ``rpu.toml`` - the
paper's (128 HPLEs, 128 VDM banks) configuration - and timed by its model (in-order
issue with the busyboard, three decoupled pipelines). "ratio" is cycles over the
paper's theoretical minimum N log2 N / HPLEs (§VI-G); "paper" is the ratio Fig. 9
labels (given in the text for 1K and 64K only). The sensitivity rows re-run the 64K NTT
with one machine number changed, as Figs. 7-8 do; "paper" there is the change the text
reports (II = 2: +16 %; load/store latency 10 vs 4: +1.7 %; shuffle latency 7: no
change). These are model cycles, not wall-clock times.
"""

from __future__ import annotations

from fhec.backends.machine import PipelineSpec
from fhec.backends.target import load_target
from fhec.isa.rpu import BACKEND
from fhec.isa.rpu.kernels import compile_transform, theoretical_cycles
from fhec.ring.primes import ntt_primes

PAPER_RATIO = {1 << 10: 3.86, 1 << 16: 1.38}
SENSITIVITY = (
    ("multiplier latency 1", "compute", {"latency": 1}, None),
    ("multiplier latency 12", "compute", {"latency": 12}, None),
    ("multiplier II 2", "compute", {"interval": 2}, "+16%"),
    ("shuffle latency 7", "shuffle", {"latency": 7}, "+0%"),
    ("shuffle latency 10", "shuffle", {"latency": 10}, None),
    ("load/store latency 10", "load_store", {"latency": 10}, "+1.7%"),
)


def _changed(machine, pipe: str, change: dict):
    pipes = dict(machine.pipelines)
    pipes[pipe] = PipelineSpec(**{**pipes[pipe].model_dump(), **change})
    return machine.model_copy(update={"pipelines": pipes})


def run(quick: bool = False) -> list[dict]:
    rpu = load_target("rpu")
    hples = rpu.pipeline("compute").lanes
    rows = []
    sizes = range(10, 14 if quick else 17)
    base = None
    for log_n in sizes:
        N = 1 << log_n
        q = ntt_primes(N, 60, 1)[0]
        enc = compile_transform(rpu, N, q)
        counts = enc.counts(BACKEND.classify)
        ideal = theoretical_cycles(N, hples)
        rows.append({
            "group": "RPU NTT cycles (paper Fig. 9)",
            "name": f"NTT N=2^{log_n}",
            "cycles": enc.timed.cycles,
            "ideal_cycles": round(ideal),
            "ratio": round(enc.timed.cycles / ideal, 2),
            "paper": PAPER_RATIO.get(N),
            "compute": counts.get("compute", 0),
            "shuffle": counts.get("shuffle", 0),
            "load_store": counts.get("load_store", 0),
            "spills": enc.timed.spills,
        })
        if N == 1 << 16:
            base = (N, q, enc.timed.cycles)
    if base is not None:
        N, q, cycles = base
        for name, pipe, change, paper in SENSITIVITY:
            c = compile_transform(_changed(rpu, pipe, change), N, q).timed.cycles
            rows.append({
                "group": "RPU 64K NTT sensitivity (paper Figs. 7-8)",
                "name": name,
                "cycles": c,
                "change": f"{(c / cycles - 1) * 100:+.1f}%",
                "paper": paper,
            })
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
