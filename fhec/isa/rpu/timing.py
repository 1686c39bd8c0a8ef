"""The RPU timing model and the instruction scheduler built on it (paper §IV-A/B, Figs. 7-8).

The front end issues one instruction per cycle, in order. A busyboard holds one bit per
vector and scalar register: an instruction marks its destinations busy until its result
is written and its sources until its last lane group has read them; a decoded
instruction that names a busy register stalls the whole front end (no renaming). Issued
instructions go to one of three decoupled in-order pipelines by class (`CLASS_OF`):

- compute (the HPLEs): a vector takes ceil(512 / HPLEs) lane groups, one every II cycles
  for the instructions that use the modular multiplier (VMUL, VMULS, both butterflies),
  one per cycle for the others; the result follows after the multiplier latency;
- shuffle (the SBAR): ceil(512 / lanes) groups at its interval, then its latency;
- load/store (the VBAR and VDM banks): ceil(512 / lanes) groups, or more when the
  access puts more words on one VDM bank than that (bank = word address mod banks); a
  gather (INDEXED) counts ``gather_factor`` times a contiguous access; scalar loads take
  one cycle.

Every number comes from the machine TOML (``[pipelines.*]``, ``[memories.vdm] banks``,
``[params] gather_factor``), so the paper's sensitivity studies (multiplier latency and
II, shuffle and load/store latency, HPLE and bank counts) re-run by editing it.

`schedule` reorders the allocated code (a list scheduler over a window, keeping every
register and memory dependence) to shorten the time this model computes; `time_code`
computes it for a fixed order.
"""

from __future__ import annotations

import bisect
from functools import lru_cache
from math import ceil

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.isa.code import Instr
from fhec.isa.rpu.isa import CLASS_OF, OPERANDS, USES_MULTIPLIER, VECTOR_LENGTH, Mode, Op, RegFile

__all__ = ["Costs", "time_code", "schedule", "WINDOW"]

WINDOW = 48
"""Instructions ahead of the oldest unscheduled one the scheduler may pick from."""

PIPES = ("load_store", "compute", "shuffle")


@lru_cache(maxsize=4096)
def _bank_cycles(banks: int, first: int, mode: int, value: int) -> int:
    e = np.arange(VECTOR_LENGTH, dtype=np.int64)
    offsets = {
        Mode.CONTIGUOUS: e,
        Mode.STRIDED: e << value,
        Mode.SKIP: ((e >> value) << (value + 1)) + (e & ((1 << value) - 1)),
        Mode.REPEATED: e >> value,
    }[Mode(mode)]
    words = np.unique(first + offsets)  # a repeated word is read once
    return int(np.bincount(words % banks, minlength=banks).max())


class Costs:
    """Per-instruction occupancy and latency on one machine."""

    def __init__(self, machine: IsaMachine) -> None:
        self.pipes = {name: machine.pipeline(name) for name in PIPES}
        self.banks = machine.memory_spec("vdm").banks
        self.gather = int(machine.param("gather_factor", 2))

    def of(self, ins: Instr) -> tuple[str, int, int]:
        """(pipeline, occupancy cycles, latency cycles) of `ins`."""
        op = Op(ins.op)
        pipe = CLASS_OF[op]
        spec = self.pipes[pipe]
        groups = ceil(VECTOR_LENGTH / spec.lanes)
        if pipe == "compute":
            occ = groups * (spec.interval if op in USES_MULTIPLIER else 1)
        elif pipe == "shuffle":
            occ = groups * spec.interval
        elif op in (Op.VLOAD, Op.VSTORE):
            address, mode, value, arf = ins.fields
            if mode == Mode.INDEXED:
                occ = groups * self.gather * spec.interval
            else:
                occ = max(groups, _bank_cycles(self.banks, address % self.banks, mode, value)) * spec.interval
        else:
            occ = 1
        return pipe, occ, spec.latency


def _regs(ins: Instr) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(destination, source) registers as (file, number)."""
    dst_k, src_k, _ = OPERANDS[Op(ins.op)]
    if ins.op == Op.VLOAD and ins.src:
        src_k = (RegFile.VECTOR,)
    return [(int(k), r) for k, r in zip(dst_k, ins.dst)], [(int(k), r) for k, r in zip(src_k, ins.src)]


class _State:
    """The front end, busyboard and pipelines while instructions issue in order."""

    def __init__(self, costs: Costs) -> None:
        self.costs = costs
        self.busy: dict[tuple[int, int], int] = {}
        self.free = dict.fromkeys(PIPES, 0)
        self.busy_cycles = dict.fromkeys(PIPES, 0)
        self.last_issue = -1
        self.end = 0
        self.stall = 0

    def issue_at(self, ins: Instr, regs) -> int:
        dst, src = regs
        ready = max((self.busy.get(r, 0) for r in (*dst, *src)), default=0)
        return max(self.last_issue + 1, ready)

    def commit(self, ins: Instr, regs) -> int:
        dst, src = regs
        t = self.issue_at(ins, regs)
        self.stall += t - (self.last_issue + 1)
        pipe, occ, lat = self.costs.of(ins)
        start = max(t + 1, self.free[pipe])
        self.free[pipe] = start + occ
        self.busy_cycles[pipe] += occ
        done = start + occ + lat
        for r in src:
            self.busy[r] = max(self.busy.get(r, 0), start + occ)
        for r in dst:
            self.busy[r] = max(self.busy.get(r, 0), done)
        self.end = max(self.end, done)
        self.last_issue = t
        return t


def time_code(code: tuple[Instr, ...], machine: IsaMachine) -> tuple[np.ndarray, int, dict[str, int], dict[str, int]]:
    """(issue cycle per instruction, total cycles, busy cycles per pipeline, stalls) of
    `code` issued in order."""
    st = _State(Costs(machine))
    issue = np.array([st.commit(ins, _regs(ins)) for ins in code], dtype=np.int64)
    return issue, st.end, dict(st.busy_cycles), {"busyboard": st.stall}


def _footprint(ins: Instr, N: int) -> tuple[int, int] | None:
    """Word interval [lo, hi) a vector load or store may touch, None for other ops."""
    if ins.op not in (Op.VLOAD, Op.VSTORE):
        return None
    address, mode, value, arf = ins.fields
    base = (arf << 20) + address
    span = {Mode.CONTIGUOUS: VECTOR_LENGTH, Mode.STRIDED: VECTOR_LENGTH << value,
            Mode.SKIP: VECTOR_LENGTH * 2, Mode.REPEATED: VECTOR_LENGTH, Mode.INDEXED: N}[Mode(mode)]
    return base, base + span


def _dependences(code: tuple[Instr, ...], N: int) -> list[list[int]]:
    """Predecessors of each instruction: register RAW/WAR/WAW and overlapping memory
    accesses of which one is a store, in the given order. ALOAD/MLOAD (the prologue)
    precede everything after them."""
    preds: list[list[int]] = [[] for _ in code]
    writer: dict[tuple[int, int], int] = {}
    readers: dict[tuple[int, int], list[int]] = {}
    block = 1 << 9
    mem_writer: dict[int, int] = {}
    mem_readers: dict[int, list[int]] = {}
    barrier = -1
    for i, ins in enumerate(code):
        p = preds[i]
        if barrier >= 0:
            p.append(barrier)
        if ins.op in (Op.ALOAD, Op.MLOAD):
            p.extend(range(barrier + 1, i))
            barrier = i
            continue
        dst, src = _regs(ins)
        for r in src:
            if r in writer:
                p.append(writer[r])
        for r in dst:
            if r in writer:
                p.append(writer[r])
            p.extend(readers.get(r, ()))
        for r in src:
            readers.setdefault(r, []).append(i)
        for r in dst:
            writer[r] = i
            readers[r] = []
        fp = _footprint(ins, N)
        if fp is not None:
            blocks = range(fp[0] // block, (fp[1] - 1) // block + 1)
            if ins.op == Op.VSTORE:
                for b in blocks:
                    if b in mem_writer:
                        p.append(mem_writer[b])
                    p.extend(mem_readers.get(b, ()))
                    mem_writer[b] = i
                    mem_readers[b] = []
            else:
                for b in blocks:
                    if b in mem_writer:
                        p.append(mem_writer[b])
                    mem_readers.setdefault(b, []).append(i)
    return [sorted(set(x)) for x in preds]


def schedule(code: tuple[Instr, ...], machine: IsaMachine, N: int, window: int = WINDOW) -> tuple[Instr, ...]:
    """A reordering of `code` that keeps every dependence (`_dependences`) and greedily
    issues, among the ready instructions at most `window` past the oldest unscheduled
    one, the one the timing model lets issue first (ties: the earlier one)."""
    n = len(code)
    preds = _dependences(code, N)
    waiting = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in code]
    for i, p in enumerate(preds):
        for j in p:
            succs[j].append(i)
    regs = [_regs(ins) for ins in code]
    st = _State(Costs(machine))
    ready = [i for i in range(n) if waiting[i] == 0]  # sorted
    done = [False] * n
    oldest = 0
    order: list[int] = []
    while len(order) < n:
        while done[oldest]:
            oldest += 1
        best, best_t = -1, None
        for i in ready:
            if i >= oldest + window:
                break
            t = st.issue_at(code[i], regs[i])
            if best_t is None or t < best_t:
                best, best_t = i, t
                if t <= st.last_issue + 1:
                    break
        del ready[bisect.bisect_left(ready, best)]
        st.commit(code[best], regs[best])
        done[best] = True
        order.append(best)
        for s in succs[best]:
            waiting[s] -= 1
            if waiting[s] == 0:
                bisect.insort(ready, s)
    return tuple(code[i] for i in order)
