"""The Presto ISA backend (`fhec.isa.backend.IsaBackend`): select, allocate, schedule,
encode, and the tools around them (decode, assemble, disassemble, simulate, classify).

    select     limb ops -> Presto instructions over virtual registers   fhec.isa.presto.select
    allocate   the vector registers at N (64 / G, Belady spills), then   fhec.isa.regalloc,
               scalar operands into x registers                          fhec.isa.presto.materialize
    schedule   the timing model run on the encoded words                 fhec.isa.presto.sim
    encode     32-bit RISC-V words and assembly text                     fhec.isa.presto.encoding, .asm

The code keeps program order: Presto issues out of order from its 32-entry queue by
itself (`fhec.isa.presto.sim.Timing`), so the schedule is the order of the words.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.errors import TargetError
from fhec.ir.limb import RVecClass, word_bytes_for
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Allocated, Encoded, Instr, MemoryLayout, Selected, Timed
from fhec.isa.presto import asm as asm_text
from fhec.isa.presto.encoding import PrestoOp, decode, encode as encode_word
from fhec.isa.presto.machine import PrestoMachine
from fhec.isa.presto.materialize import materialize
from fhec.isa.presto.select import Pool, select as select_code
from fhec.isa.presto.sim import PIPELINE_OF, Memory, simulate as run_words
from fhec.isa.regalloc import allocate as allocate_registers

VECTOR_FILE = 0


def presto_machine(machine: IsaMachine) -> PrestoMachine:
    """The Presto numbers of an `IsaMachine` whose ``isa`` is "presto"."""
    return PrestoMachine.from_description(machine.model_dump(), tuple(machine.issue.model_fields_set))


def _pool(layout: MemoryLayout, lowered: LoweredProgram) -> Pool:
    return Pool(layout.rom[0].words, 1, 1 + 2 * len(lowered.limb.moduli))


def _words(code) -> np.ndarray:
    return np.array([encode_word(i) for i in code], dtype=np.uint32)


def memory_image(layout: MemoryLayout, N: int, word_bits: int, loaded: Mapping[int, np.ndarray]) -> Memory:
    """The memory the program expects: the ROM segments and every loaded rvec at its home."""
    mem = Memory()
    for seg in layout.rom:
        mem.write(seg.address, np.asarray(seg.words, dtype="<u8"))
    wb = word_bytes_for(word_bits)
    for r, words in loaded.items():
        mem.write_words(layout.rvec_address[int(r)], np.asarray(words, dtype=np.uint64), wb)
    return mem


class PrestoBackend:
    """Presto's `IsaBackend` (stateless)."""

    name = "presto"

    def select(self, lowered: LoweredProgram, machine: IsaMachine) -> Selected:
        return select_code(lowered, presto_machine(machine))

    def allocate(self, selected: Selected, machine: IsaMachine) -> Allocated:
        pm = presto_machine(machine)
        lowered = selected.lowered
        N = lowered.limb.N
        slot_bytes = N * word_bytes_for(lowered.limb.word_bits)
        a = allocate_registers(
            selected.code,
            selected.reg_class,
            {VECTOR_FILE: pm.registers(N)},
            selected.homes,
            make_load=lambda f, phys, addr: Instr(PrestoOp.P_VLD, (phys,), (), (addr,)),
            make_store=lambda f, phys, addr: Instr(PrestoOp.P_VST, (), (phys,), (addr,)),
            spill_base=selected.layout.spill_base,
            slot_words=slot_bytes,
        )
        code = materialize(a.code, _pool(selected.layout, lowered))
        layout = selected.layout
        end = layout.spill_base + a.spill_slots * slot_bytes
        used = dict(layout.words_used)
        used[layout.data_memory] = max(used.get(layout.data_memory, 0), end // word_bytes_for(lowered.limb.word_bits))
        layout = dataclasses.replace(layout, spill_words=a.spill_slots * slot_bytes, words_used=used)
        have = machine.memory_spec(layout.data_memory).words
        if used[layout.data_memory] > have:
            raise TargetError(
                f"the program needs {used[layout.data_memory]:,} words of [memories.{layout.data_memory}] (inputs, "
                f"keys, outputs, constants, spills) but {machine.name} has {have:,}; use a smaller N or fewer levels, "
                f"or a larger [memories.{layout.data_memory}] words"
            )
        return Allocated(lowered, code, layout, a.spills, a.reloads, a.home_loads)

    def schedule(self, allocated: Allocated, machine: IsaMachine) -> Timed:
        pm = presto_machine(machine)
        lowered = allocated.lowered
        mem = memory_image(allocated.layout, lowered.limb.N, lowered.limb.word_bits, {})
        t = run_words(_words(allocated.code), pm, lowered.limb.word_bits, mem, data=False).timing
        busy = {k: round(v) for k, v in sorted(t.busy.items())}
        return Timed(
            lowered, allocated.code, allocated.layout, np.array(t.issue, dtype=np.int64), t.cycles, busy,
            dict(t.stalls), allocated.spills, allocated.reloads,
        )

    def encode(self, timed: Timed, machine: IsaMachine) -> Encoded:
        words = _words(timed.code)
        limb = timed.lowered.limb
        header = (
            f"# fhec presto program {timed.lowered.he.name!r}: N = {limb.N}, {len(limb.moduli)} moduli, "
            f"{len(words)} instructions, {timed.cycles} cycles\n"
            f"# memory: constant pool at {timed.layout.rom[0].address:#x}; rvec homes from "
            f"{min(timed.layout.rvec_address.values(), default=0):#x}; spills from {timed.layout.spill_base:#x}\n"
        )
        return Encoded(words, header + asm_text.disassemble(words), timed)

    def decode(self, words: np.ndarray) -> tuple[Instr, ...]:
        return tuple(decode(int(w)) for w in np.asarray(words).tolist())

    def assemble(self, text: str) -> np.ndarray:
        return asm_text.assemble(text)

    def disassemble(self, words: np.ndarray) -> str:
        return asm_text.disassemble(words)

    def simulate(self, encoded: Encoded, machine: IsaMachine, loaded: Mapping[int, np.ndarray],
                 progress=None) -> dict[int, np.ndarray]:
        limb = encoded.lowered.limb
        mem = memory_image(encoded.layout, limb.N, limb.word_bits, loaded)
        state = run_words(encoded.words, presto_machine(machine), limb.word_bits, mem, progress=progress).state
        wb = word_bytes_for(limb.word_bits)
        outputs = limb.rvec_ids(RVecClass.OUTPUT).tolist()
        return {r: state.memory.read_words(encoded.layout.rvec_address[r], limb.N, wb) for r in outputs}

    def classify(self, op: int) -> str:
        return {"memory": "load_store", "core": "scalar"}.get(PIPELINE_OF[PrestoOp(op)], PIPELINE_OF[PrestoOp(op)])


BACKEND = PrestoBackend()
