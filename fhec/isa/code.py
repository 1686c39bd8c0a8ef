"""The representations every ISA backend shares, from instruction selection to encoding.

An ISA backend (`fhec.isa.backend.IsaBackend`) turns the limb program into machine code
in four passes, each producing one of these immutable results:

``select_instructions``   `LoweredProgram` -> `Selected`: machine instructions over
                          *virtual* registers (SSA: each written once), plus the data
                          memory layout (`MemoryLayout`) and the read-only data the
                          program needs (twiddles, constants, moduli: ``rom``).
``allocate_registers``    `Selected` -> `Allocated`: *physical* registers; values that do
                          not fit are spilled to the data memory by Belady's rule
                          (`fhec.isa.regalloc`), adding the ISA's own stores and loads.
``schedule_instructions`` `Allocated` -> `Timed`: the issue order under the machine's
                          issue rules, each instruction's issue cycle and the total.
``encode``                `Timed` -> `Encoded`: binary machine words and assembly text.

`Instr` is one instruction in the ISA's own terms: its opcode (the ISA's `IntEnum`),
the registers it writes and reads (virtual ids before allocation, physical numbers
within their register file after), and every other operand field as integers in the
order the ISA documents. Which register file each register operand belongs to is the
ISA's rule (per opcode and operand position), given to the allocator as `Selected.reg_class`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fhec.ir.lowered import LoweredProgram

PROGRESS_EVERY = 4096
"""Machine words a simulator executes between two progress reports (as
`fhec.sim.streams.PROGRESS_EVERY` for stream entries, which this layer may not import)."""

__all__ = ["Instr", "RomSegment", "MemoryLayout", "Selected", "Allocated", "Timed", "Encoded", "format_code", "without_origins"]


@dataclass(frozen=True, slots=True)
class Instr:
    """One machine instruction.

    Attributes:
        op: the ISA's opcode (a member of its own `IntEnum`).
        dst: registers written (virtual before allocation, physical after).
        src: registers read.
        fields: every other operand field (addresses, modes, immediates, modulus
            registers), in the order the ISA documents for `op`.
        origin: index of the limb instruction it implements; -1 for prologue code,
            spills and reloads.
    """

    op: int
    dst: tuple[int, ...] = ()
    src: tuple[int, ...] = ()
    fields: tuple[int, ...] = ()
    origin: int = field(default=-1, compare=False)  # provenance, not part of the instruction


@dataclass(frozen=True, eq=False)
class RomSegment:
    """Read-only data placed in a memory before the program runs (twiddle vectors,
    scalar constants, moduli, index vectors). `words` is uint64."""

    memory: str
    address: int
    words: np.ndarray
    what: str = ""


@dataclass(frozen=True, eq=False)
class MemoryLayout:
    """Where the program's data lives in the machine's memories.

    Attributes:
        data_memory: name of the vector data memory (e.g. "vdm").
        rvec_address: loaded and output rvec id -> word address of its first word in
            `data_memory` (an rvec's N words are contiguous, in the limb IR's order).
        rom: the read-only segments loaded before the program runs.
        spill_base, spill_words: the region register spills use (set by allocation).
        words_used: memory name -> highest word address used + 1.
    """

    data_memory: str
    rvec_address: dict[int, int]
    rom: tuple[RomSegment, ...]
    spill_base: int = 0
    spill_words: int = 0
    words_used: dict[str, int] = field(default_factory=dict)

    def with_spills(self, base: int, words: int) -> MemoryLayout:
        used = dict(self.words_used)
        used[self.data_memory] = max(used.get(self.data_memory, 0), base + words)
        return dataclasses.replace(self, spill_base=base, spill_words=words, words_used=used)


@dataclass(frozen=True, eq=False)
class Selected:
    """Machine code over virtual registers (`select_instructions`).

    Attributes:
        lowered: the limb program it implements.
        code: the instructions, in a valid execution order.
        reg_class: per virtual register, the index of its register file (the ISA's
            numbering, e.g. 0 = vector, 1 = scalar).
        homes: virtual register -> where its value is before the program runs (loaded
            rvec chunks, ROM), in the ISA's terms: what the allocator hands its
            ``make_load`` (rpu: a word address of the file's memory, or an
            (address, mode, value) triple for a strided view). Such a register is never
            written by `code`; the allocator loads it where it is needed.
        layout: the memory layout.
    """

    lowered: LoweredProgram
    code: tuple[Instr, ...]
    reg_class: np.ndarray
    homes: dict[int, Any]
    layout: MemoryLayout

    def __len__(self) -> int:
        return len(self.code)


@dataclass(frozen=True, eq=False)
class Allocated:
    """Machine code over physical registers (`allocate_registers`).

    Attributes:
        spills, reloads: stores to and loads from the spill region the allocator added.
        home_loads: loads of values from their home address (loaded data, ROM).
        alternatives: other allocations of the same program (e.g. from other orders
            before allocation); the scheduling pass may keep the fastest.
    """

    lowered: LoweredProgram
    code: tuple[Instr, ...]
    layout: MemoryLayout
    spills: int
    reloads: int
    home_loads: int
    alternatives: tuple[Allocated, ...] = ()

    def __len__(self) -> int:
        return len(self.code)


@dataclass(frozen=True, eq=False)
class Timed:
    """Code in issue order with its timing (`schedule_instructions`).

    Attributes:
        issue: per instruction, the cycle it issues.
        cycles: cycle the last instruction completes.
        busy: pipeline name -> cycles it was busy.
        stalls: cause -> front-end stall cycles.
    """

    lowered: LoweredProgram
    code: tuple[Instr, ...]
    layout: MemoryLayout
    issue: np.ndarray
    cycles: int
    busy: dict[str, int]
    stalls: dict[str, int]
    spills: int = 0
    reloads: int = 0

    def __len__(self) -> int:
        return len(self.code)


@dataclass(frozen=True, eq=False)
class Encoded:
    """The program as machine words (`encode`): what the functional simulator executes.

    Attributes:
        words: uint64 machine words, one per instruction, in issue order.
        asm: the assembly text (one instruction per line; `IsaBackend.assemble` reads it).
        timed: the schedule the words encode (timing and layout).
    """

    words: np.ndarray
    asm: str
    timed: Timed

    @property
    def layout(self) -> MemoryLayout:
        return self.timed.layout

    @property
    def lowered(self) -> LoweredProgram:
        return self.timed.lowered

    def __len__(self) -> int:
        return len(self.words)

    def counts(self, classify: Any) -> dict[str, int]:
        """Instructions per class name (`classify(op) -> name`)."""
        out: dict[str, int] = {}
        for ins in self.timed.code:
            k = classify(ins.op)
            out[k] = out.get(k, 0) + 1
        return out


def without_origins(code) -> tuple[Instr, ...]:
    """`code` with every `Instr.origin` set to -1: what decoding machine words can give
    back (the words do not record which limb instruction each implements)."""
    return tuple(dataclasses.replace(i, origin=-1) if i.origin != -1 else i for i in code)


def format_code(code: tuple[Instr, ...], limit: int | None = 200) -> str:
    """One line per instruction: index, opcode name, dst <- src, fields, origin (the IR
    dump of the ISA passes before encoding; the encoded form prints as assembly)."""
    lines = []
    for i, ins in enumerate(code if limit is None else code[:limit]):
        name = getattr(ins.op, "name", str(ins.op))
        dst = ",".join(f"r{r}" for r in ins.dst)
        src = ",".join(f"r{r}" for r in ins.src)
        extra = " " + ",".join(str(f) for f in ins.fields) if ins.fields else ""
        origin = f"  ; i{ins.origin}" if ins.origin >= 0 else ""
        lines.append(f"{i:>7}  {name:<8} {dst} <- {src}{extra}{origin}")
    if limit is not None and len(code) > limit:
        lines.append(f"... {len(code) - limit} more")
    return "\n".join(lines)
