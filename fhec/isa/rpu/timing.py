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
computes it for a fixed order. Their loops run compiled (`fhec.isa.rpu.timing_kernels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from math import ceil

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.isa.code import Instr
from fhec.isa.rpu import timing_kernels as kernels
from fhec.isa.rpu.isa import CLASS_OF, OPERANDS, USES_MULTIPLIER, VECTOR_LENGTH, Mode, Op, RegFile

__all__ = ["Costs", "Prepared", "prepare", "time_code", "schedule", "WINDOW"]

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


@dataclass(frozen=True)
class _Flat:
    """Code as the kernels (`fhec.isa.rpu.timing_kernels`) read it: per instruction its
    pipeline index, occupancy and latency, and its destination and source registers as
    dense ids (CSR: ``dptr``/``dids``, ``sptr``/``sids``; ``rptr``/``rids`` both, the
    busyboard bits `issue_at` checks)."""

    pipe: np.ndarray
    occ: np.ndarray
    lat: np.ndarray
    dptr: np.ndarray
    dids: np.ndarray
    sptr: np.ndarray
    sids: np.ndarray
    rptr: np.ndarray
    rids: np.ndarray
    nregs: int

    def kernel_args(self) -> tuple:
        return (self.pipe, self.occ, self.lat, self.dptr, self.dids, self.sptr, self.sids, self.rptr, self.rids,
                self.nregs, len(PIPES))


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    ids = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(ptr[-1]))
    return ptr, ids


_FILES = {int(op): (tuple(int(k) for k in d), tuple(int(k) for k in s)) for op, (d, s, _) in OPERANDS.items()}
_GATHER_FILES = (int(RegFile.VECTOR),)  # an INDEXED VLOAD reads its index register (`_regs`)


def _flatten(code: tuple[Instr, ...], costs: Costs) -> _Flat:
    """`_Flat` of `code`: the same registers as `_regs` and costs as `Costs.of`, looked up
    once per distinct (opcode, fields) and named by dense ids."""
    pipe_index = {name: k for k, name in enumerate(PIPES)}
    cost: dict[tuple, tuple[int, int, int]] = {}
    ids: dict[int, int] = {}  # register file + 2 * number -> dense id (two files: vector, scalar)
    n = len(code)
    pipe, occ, lat = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    dst: list[list[int]] = []
    src: list[list[int]] = []
    for i, ins in enumerate(code):
        key = (ins.op, ins.fields)
        c = cost.get(key)
        if c is None:
            p, o, la = costs.of(ins)
            c = cost[key] = (pipe_index[p], o, la)
        pipe[i], occ[i], lat[i] = c
        dk, sk = _FILES[ins.op]
        if ins.op == Op.VLOAD and ins.src:
            sk = _GATHER_FILES
        dst.append([ids.setdefault(k + 2 * r, len(ids)) for k, r in zip(dk, ins.dst)])
        src.append([ids.setdefault(k + 2 * r, len(ids)) for k, r in zip(sk, ins.src)])
    dptr, dids = _csr(dst)
    sptr, sids = _csr(src)
    rptr, rids = _csr([d + s for d, s in zip(dst, src)])
    return _Flat(pipe, occ, lat, dptr, dids, sptr, sids, rptr, rids, max(len(ids), 1))


def time_code(code: tuple[Instr, ...], machine: IsaMachine) -> tuple[np.ndarray, int, dict[str, int], dict[str, int]]:
    """(issue cycle per instruction, total cycles, busy cycles per pipeline, stalls) of
    `code` issued in order: each instruction issues the cycle after the previous one or
    when the busyboard frees its registers, whichever is later, then waits for its
    pipeline (see the module docstring)."""
    issue, end, busy, stall = kernels.issue_in_order(*_flatten(code, Costs(machine)).kernel_args())
    return issue, int(end), {p: int(b) for p, b in zip(PIPES, busy)}, {"busyboard": int(stall)}


def _footprint(ins: Instr, N: int) -> tuple[int, int] | None:
    """Word interval [lo, hi) a vector load or store may touch, None for other ops."""
    if ins.op not in (Op.VLOAD, Op.VSTORE):
        return None
    address, mode, value, arf = ins.fields
    base = (arf << 20) + address
    span = {Mode.CONTIGUOUS: VECTOR_LENGTH, Mode.STRIDED: VECTOR_LENGTH << value,
            Mode.SKIP: VECTOR_LENGTH * 2, Mode.REPEATED: VECTOR_LENGTH, Mode.INDEXED: N}[Mode(mode)]
    return base, base + span


_BLOCK = 1 << 9
"""Memory dependences are tracked per block of this many words."""


def _concat_csr(ptr_a: np.ndarray, ids_a: np.ndarray, ptr_b: np.ndarray, ids_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, row a's ids then row b's (two CSR tables of the same rows)."""
    la, lb = np.diff(ptr_a), np.diff(ptr_b)
    rows = np.arange(len(la))
    ptr = np.zeros(len(la) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(la + lb)
    ids = np.empty(int(ptr[-1]), dtype=np.int64)
    own_a, own_b = np.repeat(rows, la), np.repeat(rows, lb)
    ids[ptr[own_a] + np.arange(len(ids_a)) - ptr_a[own_a]] = ids_a
    ids[ptr[own_b] + la[own_b] + np.arange(len(ids_b)) - ptr_b[own_b]] = ids_b
    return ptr, ids


def _dependence_csr(code: tuple[Instr, ...], flat: _Flat, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(predecessor count per instruction, successors in CSR form) of `code`: register
    RAW/WAR/WAW and overlapping memory accesses of which one is a store, in the given
    order. ALOAD/MLOAD (the prologue) come after everything before them and before
    everything after them. A memory block is one more location for the kernel: a load
    reads it and a store writes it, so it takes the registers' rules."""
    n = len(code)
    barrier = np.array([ins.op in (Op.ALOAD, Op.MLOAD) for ins in code], dtype=np.bool_)
    read: list[range] = []
    written: list[range] = []
    for ins in code:
        fp = _footprint(ins, N)
        blocks = range(0) if fp is None else range(fp[0] // _BLOCK, (fp[1] - 1) // _BLOCK + 1)
        read.append(blocks if ins.op != Op.VSTORE else range(0))
        written.append(blocks if ins.op == Op.VSTORE else range(0))
    rptr, rraw = _csr(read)
    wptr, wraw = _csr(written)
    names, dense = np.unique(np.concatenate([rraw, wraw]), return_inverse=True)
    block = dense.astype(np.int64) + flat.nregs  # block ids after the register ids
    dptr, dids = _concat_csr(flat.dptr, flat.dids, wptr, block[len(rraw):])
    sptr, sids = _concat_csr(flat.sptr, flat.sids, rptr, block[:len(rraw)])
    pred, succ = kernels.dependence_edges(barrier, dptr, dids, sptr, sids, flat.nregs + len(names))
    edges = np.unique(succ * n + pred)  # each distinct predecessor once
    succ, pred = edges // n, edges % n
    waiting = np.bincount(succ, minlength=n).astype(np.int64)
    order = np.argsort(pred, kind="stable")
    succ_ptr = np.zeros(n + 1, dtype=np.int64)
    succ_ptr[1:] = np.cumsum(np.bincount(pred, minlength=n))
    return waiting, succ_ptr, succ[order].astype(np.int64)


@dataclass(frozen=True)
class Prepared:
    """What `schedule` needs of one piece of code, whatever the window: its `_Flat` form
    and dependences (`_dependence_csr`). Build it once with `prepare` to schedule the same
    code with several windows."""

    code: tuple[Instr, ...]
    flat: _Flat
    waiting: np.ndarray
    succ_ptr: np.ndarray
    succ_ids: np.ndarray


def prepare(code: tuple[Instr, ...], machine: IsaMachine, N: int) -> Prepared:
    """`code` flattened and its dependences found, for `schedule`."""
    flat = _flatten(code, Costs(machine))
    return Prepared(tuple(code), flat, *_dependence_csr(code, flat, N))


def schedule(code: tuple[Instr, ...], machine: IsaMachine, N: int, window: int = WINDOW,
             prepared: Prepared | None = None) -> tuple[Instr, ...]:
    """A reordering of `code` that keeps every dependence (`_dependence_csr`) and greedily
    issues, among the ready instructions at most `window` past the oldest unscheduled
    one, the one the timing model lets issue first (ties: the earlier one). `prepared`:
    `prepare(code, machine, N)`, when the caller schedules the same code more than once."""
    if not code:
        return ()
    pre = prepared if prepared is not None else prepare(code, machine, N)
    order = kernels.list_schedule(*pre.flat.kernel_args(), pre.waiting, pre.succ_ptr, pre.succ_ids, window)
    return tuple(code[i] for i in order.tolist())
