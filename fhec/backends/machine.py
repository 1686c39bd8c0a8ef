"""ISA machine descriptions: a programmable vector processor is data, loaded from TOML.

F1-like targets (`fhec.backends.target.Target`) are fixed-function machines fed per-unit
streams. An *ISA machine* executes encoded instructions: it has architectural register
files, named memories, decoupled pipelines with a lane count, a latency and an
initiation interval each, and issue rules. `IsaMachine` holds exactly that; the ISA
backend named by its ``isa`` field (`fhec.isa.backend.BACKENDS`) reads it for register
allocation, scheduling, encoding and simulation, and raises `TargetError` for a field
it needs and does not find (`IsaMachine.pipeline`, `IsaMachine.memory`,
`IsaMachine.registers`).

A TOML file is an ISA machine when it has a top-level ``isa = "<backend>"`` key
(`fhec.backends.target.load_target` dispatches on it). Shipped: ``rpu.toml`` (B512 /
RPU). The generic layout, every table keyed by the names the backend documents:

    isa = "rpu"; name; description; clock_ghz; word_bits; n_min; n_max
    [registers.<file>]   count, elements       (e.g. vector: 64 x 512; scalar: 64 x 1)
    [memories.<name>]    words, banks           (e.g. vdm, sdm)
    [pipelines.<name>]   lanes, latency, interval   (e.g. compute, shuffle, load_store)
    [issue]              width, in_order, busyboard
    [params]             backend-specific numbers (documented by the backend)
    [memory]             off-chip bandwidth and latency (optional, for reports)

Which names each ISA takes is `ISA_LAYOUTS`; any other table or parameter is refused at
load, as an unknown key of a stream target is.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from fhec.errors import TargetError
from fhec.ir.limb import word_bytes_for

__all__ = ["RegisterFileSpec", "MemorySpec", "PipelineSpec", "IssueRules", "OffChip", "IsaMachine", "IsaLayout",
           "ISA_LAYOUTS"]

MAX_N = 2**17
MAX_COUNT = 1 << 20
MAX_WORDS = 1 << 40
MAX_CYCLES = 10**6
MIN_GHZ_OR_GB_S = 10.0**-3  # 1 MHz, 1 MB/s: below, the cycle counts overflow int64 (and it is a unit typo)


MAX_CLOCK_GHZ = 100.0
"""The fastest clock a target file may give (`fhec.backends.target.MAX_CLOCK_GHZ`)."""


def clock_inconsistency(cycles: int, time_us: float) -> str | None:
    """Why `time_us` cannot be `cycles` at a machine's clock, or None. A report read from
    JSON keeps no clock, so the clock its time implies must be one a target may have
    (1 MHz .. 100 GHz)."""
    if cycles == 0 or time_us == 0:
        return None if cycles == time_us == 0 else f"time_us = {time_us:g} for {cycles:,} cycles"
    ghz = cycles / (time_us * 1e3)
    if not MIN_GHZ_OR_GB_S <= ghz <= MAX_CLOCK_GHZ:
        return (f"time_us = {time_us:g} for {cycles:,} cycles implies a {ghz:.3g} GHz clock; "
                f"targets run at {MIN_GHZ_OR_GB_S:g} .. {MAX_CLOCK_GHZ:g} GHz")
    return None


def one_word_name(name: str) -> str:
    """`name` if it is one word of printable characters (no whitespace; at most 512, as
    `fhec explore` names its variants ``f1[scratchpad.capacity_bytes=65536,...]``): the
    stream files' text headers (``target=NAME``) carry it, and a space would split it."""
    if not (0 < len(name) <= 512 and name.isprintable() and not any(c.isspace() for c in name)):
        raise ValueError(f"{name!r:.80} is not one word; a target's name has no spaces (e.g. 'osiris-tiny-v2')")
    return name


def numeric_field(annotation: Any) -> bool:
    """Whether a model field's type is a number (int, float, or one of them or None)."""
    import types
    import typing

    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = set(typing.get_args(annotation)) - {type(None)}
        return bool(args) and args <= {int, float}
    return False


def expected_value(annotation: Any) -> str:
    """What a field of type `annotation` takes, for a message: "a number", "one of 'a',
    'b'" (a Literal, or an optional one), or "a value of its kind"."""
    import typing

    if numeric_field(annotation):
        return "a number"
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    literal = annotation if typing.get_origin(annotation) is typing.Literal else next(
        (a for a in args if typing.get_origin(a) is typing.Literal), None)
    if literal is not None:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(literal))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in annotation)
    return "a string" if annotation is str else "a value of its kind (docs/targets.md)"


def refuse_quoted_number(value: Any, annotation: Any) -> Any:
    """`value` unless it is text given for a number: pydantic would read ``count = "16"`` as
    16, but a quoted number in a target file is a typo for a string field or a number."""
    if isinstance(value, str) and numeric_field(annotation):
        raise ValueError(f"{value!r} is text; give a number without quotes")
    return value


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bools(cls, value: Any, info: ValidationInfo) -> Any:
        # `count = true` is a typo, not 1; only the fields declared bool take booleans
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool) and annotation not in (bool, "bool"):
            raise ValueError(f"{str(value).lower()} is a boolean; give a number")
        if annotation in (bool, "bool") and not isinstance(value, bool):
            # pydantic would read "no", "off" or 1 as a flag: a TOML flag is true or false
            raise ValueError(f"{value!r} is not a boolean; give true or false")
        return refuse_quoted_number(value, annotation)


class RegisterFileSpec(_Frozen):
    """One architectural register file: `count` registers of `elements` words each."""

    count: int = Field(gt=0, le=MAX_COUNT)
    elements: int = Field(1, gt=0, le=MAX_N, description="words per register (the vector length)")

    @field_validator("elements")
    @classmethod
    def _whole_chunks(cls, n: int) -> int:
        # a limb of N (a power of two) words is laid out in whole registers, or in the first
        # N words of one: any other length leaves a partial chunk (presto's simulator crashed on 1000)
        if not _power_of_two(n):
            raise ValueError(f"{n} is not a power of two; a limb of N words (a power of two) must split into "
                             f"whole registers (1 for scalars; 512 on the shipped rpu and presto)")
        return n


class MemorySpec(_Frozen):
    """One addressable on-chip memory of `words` machine words in `banks` banks."""

    words: int = Field(gt=0, le=MAX_WORDS)
    banks: int = Field(1, gt=0, le=MAX_COUNT)


class PipelineSpec(_Frozen):
    """One decoupled execution pipeline: it processes `lanes` elements per cycle, accepts
    a new lane group every `interval` cycles (the initiation interval, II) and delivers
    its first result `latency` cycles after it starts."""

    lanes: int = Field(gt=0, le=MAX_N)
    latency: int = Field(ge=0, le=MAX_CYCLES)
    interval: int = Field(1, gt=0, le=MAX_CYCLES)


class IssueRules(_Frozen):
    """How the front end issues: `width` instructions per cycle, in order or not, and
    whether a busyboard (a bit per register, set while any in-flight instruction uses
    it) stalls the front end on a busy register."""

    width: int = Field(1, gt=0, le=64)
    in_order: bool = True
    busyboard: bool = True


class OffChip(_Frozen):
    """Off-chip memory (HBM) feeding the machine's data memory (reports only)."""

    bandwidth_gb_s: float = Field(ge=MIN_GHZ_OR_GB_S, le=1e7)
    latency_ns: float = Field(0.0, ge=0, le=1e9)


@dataclass(frozen=True)
class IsaLayout:
    """The tables and ``[params]`` keys one ISA backend (`fhec.isa.<isa>`) reads. A machine
    file may name only these, so that a typo or a table meant for another ISA is an error
    instead of being ignored (docs/targets.md: "Unknown keys are errors"). Every parameter
    is a count or a number of cycles, so it must be a positive integer."""

    registers: tuple[str, ...]
    memories: tuple[str, ...]
    pipelines: tuple[str, ...]
    params: tuple[str, ...]


ISA_LAYOUTS: dict[str, IsaLayout] = {
    # fhec/isa/rpu: B512's four register files (§III), the VDM, SDM and instruction memory
    "rpu": IsaLayout(registers=("vector", "scalar", "address", "modulus"), memories=("vdm", "sdm", "imem"),
                     pipelines=("compute", "shuffle", "load_store"), params=("gather_factor",)),
    # fhec/isa/presto: the PE vectors, the RISC-V core's x registers, the modulus registers
    "presto": IsaLayout(registers=("vector", "scalar", "modulus"), memories=("pbuf", "dram"),
                        pipelines=("add", "mul", "ntt", "aut", "config"),
                        params=("pe_count", "pe_vectors", "queue_depth", "dispatch_cycles", "wide_word_factor")),
}
"""ISA key -> what its backend reads. The backends themselves are `fhec.isa.backend.BACKENDS`
(this layer may not import fhec.isa; tests/isa/test_machine_layout.py checks the two agree)."""


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _unknown_keys(table: str, given: dict, known: tuple[str, ...], isa: str) -> str | None:
    """The error for keys of `table` that the `isa` backend does not read, or None."""
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return None
    if table == "params":
        named, kind, reads = f"[params] {', '.join(unknown)}", "parameter", ", ".join(known)
    else:
        named, kind = ", ".join(f"[{table}.{k}]" for k in unknown), "table"
        reads = ", ".join(f"[{table}.{k}]" for k in known)
    return (f"{named}: the {isa} backend reads no such {kind} (it reads {reads}); a typo, or meant for "
            f"another ISA? Remove or rename it (docs/targets.md)")


def _bad_param(key: str, value: Any) -> str | None:
    """The error for a ``[params]`` value that is no count or cycle number, or None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"[params] {key} = {value!r}: must be a positive integer (a count or a number of cycles)"
    return None


class IsaMachine(_Frozen):
    """A validated ISA machine description (immutable). Build it with
    `fhec.backends.target.load_target`."""

    isa: str = Field(min_length=1, description="the ISA backend (fhec.isa.backend.BACKENDS key)")
    name: str = Field(min_length=1, description="one word (reports and file names carry it)")

    _one_word = field_validator("name")(classmethod(lambda cls, v: one_word_name(v)))
    description: str = ""
    clock_ghz: float = Field(ge=MIN_GHZ_OR_GB_S, le=100.0)
    word_bits: int = Field(ge=8, le=64)
    n_min: int = Field(ge=2, le=MAX_N)
    n_max: int = Field(ge=2, le=MAX_N)
    registers: dict[str, RegisterFileSpec] = Field(min_length=1)
    memories: dict[str, MemorySpec] = Field(min_length=1)
    pipelines: dict[str, PipelineSpec] = Field(min_length=1)
    issue: IssueRules = IssueRules()
    params: dict[str, int | float | bool | str] = Field(default_factory=dict)
    memory: OffChip | None = None

    @field_validator("params")
    @classmethod
    def _plausible_params(cls, params: dict) -> dict:
        # backend numbers are counts and cycles: one beyond 2^40 is a typo, and overflowed int64 in the schedulers
        for key, value in params.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > MAX_WORDS:
                raise ValueError(f"[params] {key} = {value} is out of range: at most {MAX_WORDS:,} in magnitude")
        return params

    @field_validator("n_min", "n_max")
    @classmethod
    def _pow2(cls, n: int) -> int:
        if not _power_of_two(n):
            raise ValueError(f"{n} is not a power of two")
        return n

    @model_validator(mode="after")
    def _consistent(self) -> IsaMachine:
        if self.n_min > self.n_max:
            raise ValueError(f"n_min ({self.n_min}) exceeds n_max ({self.n_max})")
        return self

    @model_validator(mode="after")
    def _read_by_backend(self) -> IsaMachine:
        layout = ISA_LAYOUTS.get(self.isa)
        if layout is None:
            raise ValueError(f"isa = {self.isa!r} has no backend; known ISAs: {', '.join(sorted(ISA_LAYOUTS))}")
        problems = [_unknown_keys(table, getattr(self, table), getattr(layout, table), self.isa)
                    for table in ("registers", "memories", "pipelines", "params")]
        problems += [_bad_param(key, value) for key, value in self.params.items()]
        problems = [p for p in problems if p]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # --- lookups that name the missing field ------------------------------------------

    def _need(self, table: str, key: str) -> Any:
        entries = getattr(self, table)
        if key not in entries:
            raise TargetError(
                f"ISA machine {self.name!r} ({self.isa}): no [{table}.{key}] table; the {self.isa} backend needs "
                f"one (have: {', '.join(sorted(entries)) or 'none'}); see docs/targets.md"
            )
        return entries[key]

    def pipeline(self, name: str) -> PipelineSpec:
        """The pipeline `name`; TargetError if the file has none."""
        return self._need("pipelines", name)

    def memory_spec(self, name: str) -> MemorySpec:
        """The memory `name`; TargetError if the file has none."""
        return self._need("memories", name)

    def register_file(self, name: str) -> RegisterFileSpec:
        """The register file `name`; TargetError if the file has none."""
        return self._need("registers", name)

    def param(self, name: str, default: Any = None) -> Any:
        """A backend-specific number from ``[params]`` (`default` when absent; TargetError
        when absent and no default)."""
        if name in self.params:
            return self.params[name]
        if default is None:
            raise TargetError(f"ISA machine {self.name!r}: [params] needs {name!r} for the {self.isa} backend")
        return default

    # --- what the shared passes read --------------------------------------------------

    @property
    def word_bytes(self) -> int:
        """Bytes per stored word: 4 up to 32-bit words, else ceil(word_bits / 8)."""
        return word_bytes_for(self.word_bits)

    @property
    def onchip_bytes(self) -> int:
        """Bytes of the largest on-chip memory, the data memory (the working-set budget of
        `order_for_hint_reuse`)."""
        return max(m.words for m in self.memories.values()) * self.word_bytes

    def supports(self, n: int) -> bool:
        """True if ring degree `n` is a power of two in [n_min, n_max]."""
        return _power_of_two(n) and self.n_min <= n <= self.n_max

    def check_ring_degree(self, n: int) -> None:
        """Raise TargetError unless `supports(n)`."""
        if not self.supports(n):
            raise TargetError(
                f"target {self.name!r} supports ring degrees N = {self.n_min}..{self.n_max} "
                f"(powers of two), not N = {n}; pick parameters in that range or another target"
            )

    def seconds(self, cycles: float) -> float:
        """Wall-clock seconds of `cycles` clock cycles."""
        return cycles / (self.clock_ghz * 1e9)
