"""The ``rpu`` ISA backend: B512 code for the Ring Processing Unit (issue 13).

`BACKEND` implements `fhec.isa.backend.IsaBackend`:

- ``select``: `fhec.isa.rpu.select` (limb ops -> B512 over virtual registers; NTTs by
  `fhec.isa.rpu.ntt`);
- ``allocate``: `fhec.isa.regalloc.allocate` on the 64 vector and 64 scalar registers,
  spilling vectors to the VDM by Belady's rule;
- ``schedule``: `fhec.isa.rpu.timing` (list scheduling under the busyboard model, then
  the model's cycle count);
- ``encode``/``decode``/``assemble``/``disassemble``: `fhec.isa.rpu.isa` (Table I);
- ``simulate``: `fhec.isa.rpu.simulate` (numpy, executes the words).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.errors import InternalError, TargetError
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Allocated, Encoded, Instr, Selected, Timed
from fhec.isa.regalloc import allocate
from fhec.isa.rpu import isa, select, simulate, timing
from fhec.isa.rpu.isa import VECTOR_LENGTH, Mode, Op, RegFile
from fhec.isa.rpu.select import split_address

__all__ = ["BACKEND", "RpuBackend"]

PRESCHEDULE_WINDOWS = (48, 1024)
"""Scheduling windows tried before register allocation; `schedule` keeps the fastest
result. A narrow window keeps the NTT's register-sized groups apart (64K NTT: 8,631
cycles, against 10,660 at 256); a wide one interleaves independent limb ops of whole
programs (fhec/examples/rpu_matvec.py: 73,747 cycles, against 111,753 at 48). Scheduling
only after allocation gave 157,436 and 13,753."""


def _load(cls: int, phys: int, home) -> Instr:
    if cls == RegFile.SCALAR:
        return Instr(Op.SLOAD, (phys,), (), (int(home),))
    address, mode, value = (home, Mode.CONTIGUOUS, 0) if isinstance(home, int) else home
    field, arf = split_address(address)
    return Instr(Op.VLOAD, (phys,), (), (field, int(mode), value, arf))


def _store(cls: int, phys: int, address: int) -> Instr:
    if cls != RegFile.VECTOR:
        raise InternalError("B512: only vector registers are ever spilled (scalars are reloaded from the SDM)")
    field, arf = split_address(address)
    return Instr(Op.VSTORE, (), (phys,), (field, int(Mode.CONTIGUOUS), 0, arf))


_MODELED_ISSUE = {"width": 1, "in_order": True, "busyboard": True}
"""The [issue] rules `fhec.isa.rpu.timing` implements (paper §IV-A)."""

_FILE_TABLES = {RegFile.VECTOR: "[registers.vector]", RegFile.SCALAR: "[registers.scalar]"}


def _refuse_vdm(need: int, vdm: int, machine: IsaMachine) -> None:
    raise TargetError(
        f"the program needs {need:,} words of vector data memory (inputs, keys, outputs, twiddles, spills) "
        f"but {machine.name} has {vdm:,}; use a smaller N or fewer levels, or a larger [memories.vdm]"
    )


class RpuBackend:
    """B512 for the RPU (see the package docstring)."""

    name = "rpu"

    def select(self, lowered: LoweredProgram, machine: IsaMachine) -> Selected:
        vlen = machine.register_file("vector").elements
        if vlen != VECTOR_LENGTH:
            raise TargetError(f"{machine.name}: B512 vectors have 512 elements, not {vlen} ([registers.vector])")
        issue = machine.issue.model_dump()
        if issue != _MODELED_ISSUE:  # the timing model would ignore other rules, not model them
            raise TargetError(f"{machine.name}: [issue] {issue} is not what the RPU model does: its front end "
                              f"issues one instruction per cycle, in order, and stalls on a busy register "
                              f"(paper §IV-A). Set [issue] to {_MODELED_ISSUE} or leave it out")
        for name in ("vector", "scalar", "address", "modulus"):
            count = machine.register_file(name).count
            if count > 64:
                raise TargetError(f"{machine.name}: B512 register fields have 6 bits, so at most 64 {name} "
                                  f"registers, not {count} ([registers.{name}])")
        return select.select(lowered, machine)

    def allocate(self, selected: Selected, machine: IsaMachine) -> Allocated:
        layout = selected.layout
        vdm = machine.memory_spec("vdm").words
        if layout.words_used.get("vdm", 0) > vdm:  # no allocation can fit: refuse before the search
            _refuse_vdm(layout.words_used["vdm"], vdm, machine)
        spill_base = -(-layout.words_used.get("vdm", 0) // VECTOR_LENGTH) * VECTOR_LENGTH
        files = {RegFile.VECTOR: machine.register_file("vector").count,
                 RegFile.SCALAR: machine.register_file("scalar").count}
        N = selected.lowered.limb.N
        out = []
        # Order on virtual registers first (after allocation, reused physical registers
        # add false dependences that keep independent work apart), once per window.
        prepared = timing.prepare(selected.code, machine, N)  # the same code under every window
        for window in PRESCHEDULE_WINDOWS:
            code = timing.schedule(selected.code, machine, N, window, prepared)
            a = allocate(code, selected.reg_class, files, selected.homes, make_load=_load, make_store=_store,
                         spill_base=spill_base, slot_words=VECTOR_LENGTH, file_names=_FILE_TABLES)
            out.append(Allocated(selected.lowered, a.code, layout.with_spills(spill_base, a.spill_slots * VECTOR_LENGTH),
                                 a.spills, a.reloads, a.home_loads))
        fits = [a for a in out if a.layout.words_used["vdm"] <= vdm]
        if not fits:
            _refuse_vdm(min(a.layout.words_used["vdm"] for a in out), vdm, machine)
        first, *rest = fits
        return dataclasses.replace(first, alternatives=tuple(rest))

    def schedule(self, allocated: Allocated, machine: IsaMachine) -> Timed:
        """The fastest of the allocation and its alternatives, list-scheduled and timed."""
        best = None
        for a in (allocated, *allocated.alternatives):
            code = timing.schedule(a.code, machine, a.lowered.limb.N)
            issue, cycles, busy, stalls = timing.time_code(code, machine)
            if best is None or cycles < best.cycles:
                best = Timed(a.lowered, code, a.layout, issue, cycles, busy, stalls, a.spills, a.reloads)
        return best

    def encode(self, timed: Timed, machine: IsaMachine) -> Encoded:
        words = isa.words_of(timed.code)
        return Encoded(words, self.disassemble(words), timed)

    def decode(self, words: np.ndarray) -> tuple[Instr, ...]:
        return tuple(isa.decode_word(w) for w in np.asarray(words, dtype=np.uint64).tolist())

    def disassemble(self, words: np.ndarray) -> str:
        return "".join(isa.format_instr(i) + "\n" for i in self.decode(words))

    def assemble(self, text: str) -> np.ndarray:
        lines = [ln.split(";", 1)[0].strip() for ln in text.splitlines()]
        return isa.words_of(tuple(isa.parse_instr(ln) for ln in lines if ln))

    def simulate(self, encoded: Encoded, machine: IsaMachine, loaded: Mapping[int, np.ndarray],
                 progress=None) -> dict[int, np.ndarray]:
        return simulate.run(encoded, loaded, progress)

    def classify(self, op: int) -> str:
        return isa.CLASS_OF[Op(op)]


BACKEND = RpuBackend()
