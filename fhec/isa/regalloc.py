"""Register allocation on architectural register files, with spills by Belady's rule.

Generic over the ISA: the code is `Instr`s over virtual registers (each written at most
once), every virtual register belongs to one register file (`reg_class`), and each file
has a number of physical registers. Values that start in memory (`homes`: loaded data,
ROM) are loaded where they are needed. When a file is full, the register whose value is
next used farthest in the future is evicted (Belady's MIN rule, as F1 does for its
scratchpad, F1 §4.3); a value with a copy in memory (its home, or an earlier spill) is
simply dropped, any other is first stored to a spill slot. The ISA supplies its own load
and store instructions (`make_load`, `make_store`) and the spill region's base address
and slot size (one register's words, e.g. a 512-element vector).

Freed registers are reused in first-freed-first-reused order, so a register is not
written again right after it was read: the in-order machines this serves stall on such
write-after-read reuse.

Preserves: every instruction, in order, reading the values it read and writing the
values it wrote.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fhec.errors import InternalError, TargetError
from fhec.isa.code import Instr

__all__ = ["Allocation", "allocate"]

_NEVER = 1 << 62


@dataclass(frozen=True)
class Allocation:
    """The allocated code and what it cost.

    Attributes:
        code: instructions over physical registers, with the loads and stores added.
        spills: stores to spill slots; reloads: loads from spill slots;
        home_loads: loads of values from their home address.
        spill_slots: the most spill slots in use at once.
    """

    code: tuple[Instr, ...]
    spills: int
    reloads: int
    home_loads: int
    spill_slots: int


def allocate(
    code: Sequence[Instr],
    reg_class: np.ndarray,
    registers: Mapping[int, int],
    homes: Mapping[int, Any],
    *,
    make_load: Callable[[int, int, Any], Instr],
    make_store: Callable[[int, int, int], Instr],
    spill_base: int,
    slot_words: int,
    pinned: Mapping[int, int] | None = None,
    file_names: Mapping[int, str] | None = None,
) -> Allocation:
    """Allocate `code` onto `registers` (file -> count).

    Args:
        reg_class: file of each virtual register.
        homes: virtual register -> where its initial value is (an address, or any
            description the ISA's `make_load` understands).
        make_load(file, phys, home), make_store(file, phys, address): the ISA's
            instructions moving one register from or to memory (spill slots are plain
            addresses).
        spill_base, slot_words: spill slot s is at ``spill_base + s * slot_words``.
        pinned: physical registers each file keeps out of allocation (reserved).
        file_names: how the machine file names each register file (for errors), e.g.
            ``"[registers.vector]"``.

    Raises `TargetError` when one instruction needs more registers of a file than it
    has, `InternalError` when a register is read before any value reaches it.
    """
    uses: dict[int, list[int]] = {}
    for i, ins in enumerate(code):
        for v in ins.src:
            uses.setdefault(v, []).append(i)
    ptr = {v: 0 for v in uses}

    def next_use(v: int, after: int) -> int:
        lst = uses.get(v)
        if lst is None:
            return _NEVER
        k = ptr[v]
        while k < len(lst) and lst[k] <= after:
            k += 1
        ptr[v] = k
        return lst[k] if k < len(lst) else _NEVER

    files = {c: _File(c, count - (pinned or {}).get(c, 0)) for c, count in registers.items()}
    for f in files.values():
        if f.count <= 0:
            raise TargetError(f"register file {f.cls} has no allocatable register")
    where: dict[int, int] = {}  # virtual -> physical
    memory: dict[int, Any] = dict(homes)  # virtual -> where a copy is
    slot_of: dict[int, int] = {}
    nu: dict[int, int] = {}  # held virtual register -> its next use (see `evict`)
    free_slots: list[int] = []
    slots_used = 0
    peak_slots = 0
    out: list[Instr] = []
    spills = reloads = home_loads = 0

    def evict(f: _File, now: int, keep: set[int]) -> int:
        nonlocal spills, slots_used, peak_slots
        # farthest next use, then a clean value (one with a copy in memory): the key
        # next use * 2 + clean. `nu` is each held value's next use at or after `now`:
        # nothing reads a held value between its last use or definition and `now`
        best, best_key = -1, -1
        for phys, v in enumerate(f.holds):
            if v < 0 or phys in keep:
                continue
            key = 2 * nu[v] + (v in memory)
            if key > best_key:
                best, best_key = phys, key
        if best < 0:
            name = (file_names or {}).get(f.cls, f"register file {f.cls}")
            raise TargetError(
                f"an instruction needs more than the {f.count} allocatable registers of {name} at once "
                f"({len(keep) + 1} or more); raise its count"
            )
        v = f.holds[best]
        if v not in memory and best_key // 2 < _NEVER:
            if free_slots:
                slot = free_slots.pop()
            else:
                slot = slots_used
                slots_used += 1
                peak_slots = max(peak_slots, slots_used)
            slot_of[v] = slot
            memory[v] = spill_base + slot * slot_words
            out.append(make_store(f.cls, best, memory[v]))
            spills += 1
        del where[v]
        f.holds[best] = -1
        return best

    def take(f: _File, now: int, keep: set[int]) -> int:
        while f.free:
            phys = f.free.popleft()
            if f.holds[phys] < 0:
                return phys
        return evict(f, now, keep)

    def release(v: int) -> None:
        phys = where.pop(v, None)
        if phys is not None:
            f = files[int(reg_class[v])]
            f.holds[phys] = -1
            f.free.append(phys)
        slot = slot_of.pop(v, None)
        if slot is not None:
            free_slots.append(slot)

    for i, ins in enumerate(code):
        keep: set[int] = set()
        src_phys = []
        for v in ins.src:
            f = files[int(reg_class[v])]
            if v not in where:
                if v not in memory:
                    raise InternalError(f"register allocation: virtual register {v} read at {i} before it is written")
                phys = take(f, i, keep)
                f.holds[phys] = v
                where[v] = phys
                nu[v] = i
                out.append(make_load(f.cls, phys, memory[v]))
                if v in slot_of:
                    reloads += 1
                else:
                    home_loads += 1
            keep.add(where[v])
            src_phys.append(where[v])
        for v in set(ins.src):
            nu[v] = next_use(v, i)
            if nu[v] == _NEVER:
                release(v)
        dst_phys = []
        for v in ins.dst:
            f = files[int(reg_class[v])]
            phys = take(f, i + 1, set(dst_phys))
            f.holds[phys] = v
            where[v] = phys
            nu[v] = next_use(v, i)
            dst_phys.append(phys)
        out.append(Instr(ins.op, tuple(dst_phys), tuple(src_phys), ins.fields, ins.origin))
        for v in ins.dst:
            if nu[v] == _NEVER:
                release(v)
    return Allocation(tuple(out), spills, reloads, home_loads, peak_slots)


class _File:
    """The physical registers of one file: what each holds, and the free ones in the
    order they were freed."""

    def __init__(self, cls: int, count: int) -> None:
        self.cls = cls
        self.count = count
        self.holds = [-1] * count
        self.free: deque[int] = deque(range(count))
