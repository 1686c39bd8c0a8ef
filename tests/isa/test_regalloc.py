"""`fhec.isa.regalloc.allocate`, on a toy ISA: Belady's choice, spills of dirty values
only, reloads, and a register file too small for one instruction."""

from __future__ import annotations

import enum

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fhec.errors import TargetError
from fhec.isa.code import Instr
from fhec.isa.regalloc import allocate


class T(enum.IntEnum):
    LOAD = 0
    STORE = 1
    ADD = 2
    USE = 3


def _load(cls, phys, address):
    return Instr(T.LOAD, (phys,), (), (address,))


def _store(cls, phys, address):
    return Instr(T.STORE, (), (phys,), (address,))


def _run(code, homes, regs, n_values):
    return allocate(code, np.zeros(n_values, dtype=np.int8), {0: regs}, homes, make_load=_load, make_store=_store,
                    spill_base=1000, slot_words=10)


def _replay(alloc_code, homes, code):
    """Execute the allocated code symbolically; return the value each original
    instruction read, in order (must equal the virtual registers it named)."""
    regs: dict[int, int] = {}
    mem = {addr: v for v, addr in homes.items()}
    seen = []
    for ins in alloc_code:
        if ins.op == T.LOAD:
            regs[ins.dst[0]] = mem[ins.fields[0]]
        elif ins.op == T.STORE:
            mem[ins.fields[0]] = regs[ins.src[0]]
        else:
            seen.append(tuple(regs[r] for r in ins.src))
            for r, v in zip(ins.dst, ins.fields):
                regs[r] = v
    return seen


def test_belady_evicts_the_value_used_farthest():
    # values 0, 1, 2 live in memory; two registers. Computing 3 evicts 0 (next used at
    # 3), not 1 (next used at 1): four loads in all; evicting 1 would cost a fifth.
    homes = {0: 100, 1: 101, 2: 102}
    code = [
        Instr(T.ADD, (3,), (0, 1), (3,)),
        Instr(T.USE, (), (1,)),
        Instr(T.USE, (), (3, 2)),
        Instr(T.USE, (), (0,)),
        Instr(T.USE, (), (3,)),
    ]
    a = _run(code, homes, 2, 4)
    assert _replay(a.code, homes, code) == [(0, 1), (1,), (3, 2), (0,), (3,)]
    assert (a.home_loads, a.spills, a.reloads) == (4, 0, 0)


def test_a_dirty_live_value_is_stored_once_and_reloaded():
    homes = {0: 100, 1: 101, 2: 102}
    code = [
        Instr(T.ADD, (3,), (0, 1), (3,)),  # 3 is computed: no copy in memory
        Instr(T.USE, (), (1, 2)),          # both registers needed: 3 must go, to a spill slot
        Instr(T.USE, (), (3,)),
    ]
    a = _run(code, homes, 2, 4)
    assert _replay(a.code, homes, code) == [(0, 1), (1, 2), (3,)]
    assert (a.spills, a.reloads, a.spill_slots) == (1, 1, 1)
    assert [i.fields for i in a.code if i.op == T.STORE] == [(1000,)]


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=40), st.integers(2, 6))
def test_any_program_reads_the_values_it_named(pairs, regs):
    """Random SSA programs over 5 loaded values: after allocation onto `regs`
    registers, every instruction still reads exactly the values it named."""
    homes = {v: 100 + v for v in range(5)}
    code, defined = [], list(range(5))
    for a, b in pairs:
        x, y = defined[a % len(defined)], defined[b % len(defined)]
        d = len(defined)
        code.append(Instr(T.ADD, (d,), (x, y), (d,)))
        defined.append(d)
    code.append(Instr(T.USE, (), (defined[-1],)))
    a = _run(code, homes, regs, len(defined))
    assert _replay(a.code, homes, code) == [ins.src for ins in code]


def test_too_few_registers_for_one_instruction_is_a_target_error():
    homes = {0: 1, 1: 2, 2: 3}
    with pytest.raises(TargetError, match="more than the 2 allocatable registers of register file 0"):
        _run([Instr(T.USE, (), (0, 1, 2))], homes, 2, 3)
