"""`fhec.compile`: a program in, per-unit instruction streams and a report out.

The pipeline is a visible recipe of named, pure steps (ARCHITECTURE.md):

    prepare (expand, CSE, DCE, rotation planning)        fhec.evaluate.prepare
    → key-switch-hint reuse ordering (F1 §4.2)           fhec.passes.he_order
    → key-switch method choice                           fhec.passes.keyswitch_choice
    → key-switch expansion                               fhec.passes.he_keyswitch
    → lowering to limb instructions                      fhec.passes.lower
    → off-chip data-movement schedule (Belady)           fhec.passes.offchip
    → cycle-level schedule into per-unit streams         fhec.passes.cycle
    → report (cycles, bounds, utilization, traffic)      fhec.sim.timing

Every intermediate result is kept on the `Compiled` object, so a user can stop at any
stage and look at it.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from fhec.backends.streams import Streams
from fhec.backends.target import Target, load_target
from fhec.ir.he import HeProgram
from fhec.passes.cycle import Bounds, lower_bounds, schedule_cycles
from fhec.passes.he_keyswitch import expand_key_switches
from fhec.passes.he_rewrite import as_he
from fhec.passes.lower import LoweredProgram, lower
from fhec.passes.offchip import DataSchedule, schedule_offchip
from fhec.sim.timing import Report, make_report

STAGES = ("prepare", "lower", "schedule", "report")
"""The stages of `compile`, in order (names of `Report.compile_seconds`; "schedule"
runs the off-chip and cycle-level schedulers, once per prefetch reserve tried)."""

RESERVES = (0.0, 0.125, 0.25)
"""Prefetch reserves `compile` tries by default (see `schedule_offchip`)."""


@dataclass(frozen=True, eq=False)
class Compiled:
    """A program compiled for a target.

    Attributes:
        program: the prepared HE program (primitives only).
        lowered: the limb-level program with its bindings (`LoweredProgram`).
        target: the `Target`.
        data_schedule: the off-chip data-movement schedule (`DataSchedule`).
        streams: the per-unit instruction streams (`Streams`).
        bounds: compute- and bandwidth-bound cycles (`Bounds`).
        report: the `Report`.
        keyswitch: the policy used to choose key-switching methods.
    """

    program: HeProgram
    lowered: LoweredProgram
    target: Target
    data_schedule: DataSchedule
    streams: Streams
    bounds: Bounds
    report: Report
    keyswitch: str

    def run(self, inputs: Mapping[str, Any], seed: int = 0, *, check: bool = False) -> dict[str, np.ndarray]:
        """Execute the streams on real ciphertexts: keygen and encrypt (as `fhec.evaluate`
        does for this seed), run every unit's stream in the functional model of the
        target's scratchpad and memory, decrypt. Returns output name -> slot vector.

        With `check`, the streams are first replayed by the independent hazard checker.
        """
        return self.run_detailed(inputs, seed, check=check)["outputs"]

    def run_detailed(self, inputs: Mapping[str, Any], seed: int = 0, *, check: bool = False) -> dict[str, Any]:
        """`run`, returning also the output ciphertexts, keys and input ciphertexts."""
        from fhec.evaluate import decrypt_outputs, encrypt_inputs, make_keys, plain_inputs
        from fhec.run import _keygen_methods
        from fhec.sim.streams import execute_streams

        if check:
            self.check()
        keys = make_keys(self.program, seed, keyswitch=_keygen_methods(self.lowered.methods, self.keyswitch))
        cts = encrypt_inputs(self.program, keys, inputs, seed)
        plains = plain_inputs(self.program, inputs)
        words = execute_streams(self.streams, self.target, self.lowered.limb, self.lowered.loaded_values(cts, keys, plains))
        outs = self.lowered.output_ciphertexts(words, keys.key_id)
        return {"outputs": decrypt_outputs(keys, outs), "ciphertexts": outs, "keys": keys, "inputs": cts, "plains": plains}

    def check(self) -> None:
        """Replay the streams in the independent checker; raises `StreamHazardError` on any hazard."""
        from fhec.sim.check import check_streams

        check_streams(self.streams, self.target, self.lowered.limb)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write every unit's stream (text and binary) and ``report.json`` into `out_dir`."""
        from fhec.backends.stream_files import write_streams

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = write_streams(self.streams, out)
        (out / "report.json").write_text(self.report.to_json())
        return [*files, out / "report.json"]

    def _repr_html_(self) -> str:
        return self.report._repr_html_()

    def __repr__(self) -> str:
        r = self.report
        return f"<Compiled {r.program!r} for {r.target}: {r.limb_instructions:,} instructions, {r.cycles:,} cycles>"


def compile(  # noqa: A001  (the public name the API promises: fhec.compile)
    program,
    target: str | Path | Target = "f1",
    *,
    keyswitch: str | None = None,
    policy: str = "belady",
    prefetch_reserve: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> Compiled:
    """Compile `program` for an accelerator.

    Args:
        program: a `fhec.Program`, a traced `@fhec.program` function or an `HeProgram`.
        target: a shipped target name ("f1", "tiny"), a path to a target TOML file, or a `Target`.
        keyswitch: "bv", "hybrid", "auto" (per key switch, by noise and cost) or None
            (the parameters' method).
        policy: off-chip eviction policy, "belady" (F1) or "lru".
        prefetch_reserve: fraction of the scratchpad prefetches leave free (see
            `schedule_offchip`); None tries `RESERVES` and keeps the schedule with the
            fewest cycles (then the least traffic).
        progress: called with each stage's name as it starts (the CLI's progress bar).

    Returns a `Compiled` with `.streams`, `.report` and `.run(inputs, seed=...)`.
    Raises `TargetError` for a bad target or one that does not support the program's N
    or word size, and what tracing and the passes raise.
    """
    from fhec.run import compile_he

    tgt = target if isinstance(target, Target) else load_target(str(target))
    marks: list[tuple[str, float]] = []

    def stage(name: str) -> None:
        marks.append((name, time.perf_counter()))
        if progress is not None:
            progress(name)

    stage("prepare")
    tgt.check_ring_degree(as_he(program).params.N)
    prepared, ks, methods = compile_he(program, keyswitch)
    stage("lower")
    lowered = lower(expand_key_switches(prepared, methods))
    stage("schedule")
    candidates = []
    for reserve in RESERVES if prefetch_reserve is None else (prefetch_reserve,):
        data = schedule_offchip(lowered.limb, tgt, policy=policy, prefetch_reserve=reserve, verify=False)
        candidates.append((data, schedule_cycles(data, tgt), reserve))
        if data.traffic.noncompulsory == 0 and reserve == 0:
            break  # everything stays on chip: a reserve cannot help
    data, streams, reserve = min(candidates, key=lambda c: (c[1].total_cycles, c[0].traffic.total))
    stage("report")
    bounds = lower_bounds(lowered.limb, tgt)
    marks.append(("end", time.perf_counter()))
    seconds = {a: round(tb - ta, 4) for (a, ta), (_, tb) in zip(marks, marks[1:])}
    report = make_report(
        program_name=prepared.name,
        scheme=prepared.params.scheme,
        target=tgt,
        data=data,
        streams=streams,
        bounds=bounds,
        keyswitch=dict(Counter(lowered.methods.values())),
        prefetch_reserve=reserve,
        compile_seconds=seconds,
    )
    return Compiled(prepared, lowered, tgt, data, streams, bounds, report, ks)
