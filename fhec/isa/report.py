"""The report of a program compiled for an ISA machine: instruction counts by class,
cycles from the ISA's timing model, pipeline busy cycles, front-end stalls, spills."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fhec.backends.machine import IsaMachine, clock_inconsistency
from fhec.isa.code import Encoded

__all__ = ["IsaReport", "make_isa_report", "load_isa_report"]

class IsaReport(BaseModel):
    """Cycles and instruction counts of one program on one ISA machine.

    Attributes:
        program, target, isa, scheme, N: what was compiled for what.
        limb_instructions: size of the limb program; instructions: machine instructions.
        by_class: instruction class -> count (the ISA's classes, e.g. load_store, compute, shuffle).
        cycles, time_us: the timing model's total (at the machine's clock).
        busy: pipeline -> cycles busy; utilization: pipeline -> busy / cycles.
        stalls: cause -> front-end stall cycles.
        spills, reloads: register spills to and reloads from the data memory.
        data_memory_words: words of the data memory the program uses (of `data_memory_capacity`).
        instruction_memory_words: the machine's instruction memory (``[memories.imem]``), when
            given; a longer program would be loaded in parts by the host (not modeled).
        keyswitch: key-switching method -> key switches using it.
        compile_seconds, compile_passes: as in `fhec.sim.timing.Report`.
    """

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    program: str
    target: str
    isa: str
    scheme: str
    N: int
    limb_instructions: int = Field(ge=0)
    instructions: int = Field(ge=0)
    by_class: dict[str, int]
    cycles: int = Field(ge=0)
    time_us: float = Field(ge=0)
    busy: dict[str, int]
    utilization: dict[str, float]
    stalls: dict[str, int]
    spills: int = Field(ge=0)
    reloads: int = Field(ge=0)
    data_memory_words: int = Field(ge=0)
    data_memory_capacity: int = Field(ge=0)
    instruction_memory_words: int | None = Field(None, ge=0)
    keyswitch: dict[str, int] = {}
    compile_seconds: dict[str, float] = {}
    compile_passes: list[dict[str, float | int | str]] = []

    @model_validator(mode="after")
    def _consistent(self) -> IsaReport:
        # an edited report.json would print figures no run can give
        problem = clock_inconsistency(self.cycles, self.time_us)
        wrong = sorted(k for k, v in self.utilization.items()
                       if abs(v - (self.busy.get(k, 0) / self.cycles if self.cycles else 0.0)) > 1e-9)
        if wrong:
            problem = f"utilization of {', '.join(wrong)} is not busy / cycles"
        if problem:
            raise ValueError(problem)
        return self

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (``IsaReport.model_validate_json`` reads it back)."""
        return self.model_dump_json(indent=indent)

    def rich_table(self):
        """A `rich.table.Table` of the summary (what the CLI prints)."""
        from rich.table import Table

        t = Table(title=f"{self.program} on {self.target} ({self.isa})")
        t.add_column("metric")
        t.add_column("value", justify="right")
        t.add_row("N", f"{self.N:,}")
        t.add_row("limb instructions", f"{self.limb_instructions:,}")
        t.add_row("machine instructions", f"{self.instructions:,}")
        for k, v in self.by_class.items():
            t.add_row(f"  {k}", f"{v:,}")
        t.add_row("cycles", f"{self.cycles:,}")
        t.add_row("time", f"{self.time_us:.3f} µs")
        for k, v in self.utilization.items():
            t.add_row(f"  {k} busy", f"{v:.0%}")
        for k, v in self.stalls.items():
            t.add_row(f"  stall: {k}", f"{v:,}")
        t.add_row("spills / reloads", f"{self.spills:,} / {self.reloads:,}")
        t.add_row("data memory", f"{self.data_memory_words:,} of {self.data_memory_capacity:,} words")
        if self.instruction_memory_words is not None:
            fits = "fits" if self.instructions <= self.instruction_memory_words else "does not fit: loaded in parts"
            t.add_row("instruction memory", f"{self.instructions:,} of {self.instruction_memory_words:,} words ({fits})")
        return t

    def _repr_html_(self) -> str:
        return f"<pre>{self.to_json()}</pre>"


def make_isa_report(*, program_name: str, scheme: str, machine: IsaMachine, encoded: Encoded, classify,
                    data_memory: str, keyswitch: dict[str, int], compile_seconds: dict[str, float],
                    compile_passes: list[dict]) -> IsaReport:
    """The `IsaReport` of `encoded` (the timing its schedule computed)."""
    timed = encoded.timed
    cycles = max(int(timed.cycles), 0)
    return IsaReport(
        program=program_name,
        target=machine.name,
        isa=machine.isa,
        scheme=scheme,
        N=encoded.lowered.limb.N,
        limb_instructions=len(encoded.lowered.limb),
        instructions=len(encoded),
        by_class=encoded.counts(classify),
        cycles=cycles,
        time_us=machine.seconds(cycles) * 1e6,
        busy=dict(timed.busy),
        utilization={k: (v / cycles if cycles else 0.0) for k, v in timed.busy.items()},
        stalls=dict(timed.stalls),
        spills=timed.spills,
        reloads=timed.reloads,
        data_memory_words=encoded.layout.words_used.get(data_memory, 0),
        data_memory_capacity=machine.memory_spec(data_memory).words,
        instruction_memory_words=machine.memories["imem"].words if "imem" in machine.memories else None,
        keyswitch=keyswitch,
        compile_seconds=compile_seconds,
        compile_passes=compile_passes,
    )


def load_isa_report(path) -> IsaReport:
    """Read a ``report.json`` that `IsaCompiled.write` wrote. Raises `ReportFormatError`
    naming the file for an unreadable file or one that is not an ISA report."""
    from pydantic import ValidationError

    from fhec.errors import ReportFormatError

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ReportFormatError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        return IsaReport.model_validate_json(text)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        at = f"field '{field}': " if field else ""
        msg = first["msg"].removeprefix("Value error, ")
        raise ReportFormatError(f"{path} is not an fhec ISA report (or a corrupt one): {at}{msg}") from None
