"""Functional execution of per-unit instruction streams on real data.

`execute_streams` runs `Streams` (fhec.backends.streams) the way the machine would:
a modeled off-chip memory and scratchpad, every entry issued at its cycle, reading
its source locations at that cycle and its result landing in its destination
``latency`` cycles later (the timing contract of `fhec.backends.streams.op_timing`).
It reads only what the hardware would: op, operand locations, modulus, immediate
and cycle. The ``tag`` column (provenance) is ignored. So a schedule that reads a
slot too early, overwrites a value still needed, or names the wrong slot computes
a wrong answer, which the tests compare with `fhec.sim.functional.execute`.

Granularity: a value moves as a whole vector. A read sees the contents of its
location at its issue cycle; a write replaces them at its landing cycle
(``issue + latency``; a STORE's memory vector at ``issue + xfer``). Writes landing
at or before a cycle are visible to reads issued at that cycle. A slot or memory
vector never written reads as zeros. (Chunk-level races, such as a write landing
in the middle of a read, are what `fhec.sim.check` reports; this model does not
mix chunks.)

Every compute entry applies the op semantics of `fhec.sim.semantics`, the table
`fhec.sim.functional` uses too. A value carries the prime it is a residue of (as the
memory and scratchpad would carry it in their bank's modulus tag), so an NTT or BCONV
reading a residue of another prime lifts it centered, as the limb IR specifies.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping

import numpy as np

from fhec.backends.streams import HAS_IMM, Streams, StreamOp, op_timing
from fhec.backends.target import Target
from fhec.errors import InternalError
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import IS_LOADED, RVecClass
from fhec.ir.limb_ops import LimbOp
from fhec.ring import modarith
from fhec.sim.semantics import Operands, apply

__all__ = ["execute_streams", "PROGRESS_EVERY"]

PROGRESS_EVERY = 4096
"""Entries between two progress reports: often enough to move a bar every fraction of a
second, rarely enough to cost nothing next to the entries' arithmetic."""

def execute_streams(
    streams: Streams,
    target: Target,
    program: LimbProgram,
    loaded: Mapping[int, np.ndarray],
    progress: Callable[[int], None] | None = None,
    *,
    checked: bool = False,
) -> dict[int, np.ndarray]:
    """Execute `streams` on `target` and return ``{OUTPUT rvec id: N words}`` as read
    from off-chip memory after the last entry (the OUTPUT rvec's memory vector).

    The streams are replayed by the independent checker first (`fhec.sim.check.check_streams`,
    `StreamHazardError` on any hazard) unless the caller has just done so (`checked`): this
    model moves whole vectors at their landing cycles, so streams edited by hand or read
    from altered files would otherwise run to a silently wrong result; the replay costs a
    small fraction of the execution.

    `program` supplies N, the moduli, the constant table and which rvecs are
    outputs; `loaded` maps every INPUT, KSH and CONST rvec id to its words (placed
    in off-chip memory at the rvec's memory vector before cycle 0), as for
    `fhec.sim.functional.execute`. `progress`, when given, is called with the number of
    entries executed every `PROGRESS_EVERY` entries and at the end.

    Raises InternalError if a loaded value is missing or malformed, an entry names a
    slot outside the scratchpad, a modulus or constant that does not exist, or an
    OUTPUT is never stored.
    """
    N = program.N
    if streams.N != N:
        from fhec.errors import InvalidArgumentError

        raise InvalidArgumentError(f"the streams are for N = {streams.N} and the program has N = {N}: execute "
                                   f"streams with the limb program they were compiled from.")
    if not checked:
        from fhec.sim.check import check_streams

        check_streams(streams, target, program)
    tm = op_timing(target, N)
    slots = target.scratchpad_rvecs(N)
    memory = _initial_memory(program, loaded)
    scratch: list[tuple[np.ndarray, int] | None] = [None] * slots
    zeros = np.zeros(N, dtype=np.uint64)
    moduli = program.moduli
    consts = program.constants

    order = np.lexsort((streams.unit, streams.cycle))
    cycle = streams.cycle[order].tolist()
    op = streams.op[order].tolist()
    dst = streams.dst[order].tolist()
    src0 = streams.src0[order].tolist()
    src1 = streams.src1[order].tolist()
    mod = streams.mod[order].tolist()
    imm = streams.imm[order].tolist()
    latency = tm.latency.tolist()

    # A location holds (words, prime they are residues of); never written: zeros.
    pending: list[tuple[int, int, bool, int, tuple[np.ndarray, int]]] = []  # (lands, seq, to_memory, location, value)
    seq = 0
    # with registers (fhec.backends.onchip): FU entries read and write registers, and the
    # network transfers move values between registers and slots; registers follow the
    # slots in the location space, so `scratch` holds both
    plan = streams.onchip
    regs = 0 if plan is None else target.cluster.count * plan.registers
    scratch += [None] * regs
    if plan is not None:
        reg = plan.reg[order].tolist()
        reg0 = plan.reg0[order].tolist()
        reg1 = plan.reg1[order].tolist()
        entry_of = order.tolist()
        moves = _transfer_moves(plan, slots, target.network.latency)
        streamed: dict[tuple[int, int], tuple[np.ndarray, int]] = {}  # (entry, operand) -> value on its way
        mi = 0

    def slot(loc: int) -> int:
        if not 0 <= loc < slots:
            raise InternalError(f"stream entry names slot {loc}, outside the scratchpad's {slots} slots")
        return loc

    def read(loc: int, q: int) -> tuple[np.ndarray, int]:
        if not 0 <= loc < len(scratch):
            raise InternalError(f"stream entry names location {loc}, outside the scratchpad and registers")
        held = scratch[loc]
        return (zeros, q) if held is None else held

    def land_until(t: int) -> None:
        while pending and pending[0][0] <= t:
            _, _, to_memory, loc, value = heapq.heappop(pending)
            if to_memory:
                memory[loc] = value
            else:
                scratch[loc] = value

    for e in range(len(order)):
        if progress is not None and e % PROGRESS_EVERY == 0:
            progress(e)
        t = cycle[e]
        if plan is not None:  # the transfers issued up to this entry's cycle, in cycle order
            while mi < len(moves) and moves[mi][0] <= t:
                seq = _move(moves[mi], scratch, streamed, pending, seq, zeros, land_until)
                mi += 1
        land_until(t)
        o = StreamOp(op[e])
        if o in (StreamOp.LOAD, StreamOp.GEN):  # GEN: the key half its seed expands to
            value, to_memory, loc = memory.get(src0[e], (zeros, 1)), False, slot(dst[e])
        elif o == StreamOp.STORE:
            value, to_memory, loc = read(src0[e], 1), True, dst[e]
        else:
            m = mod[e]
            if not 0 <= m < len(moduli):
                raise InternalError(f"stream entry uses modulus index {m}; the program has {len(moduli)}")
            q = moduli[m]
            if plan is None:
                a, p = read(src0[e], q)
                b = read(src1[e], q) if src1[e] >= 0 else None
            else:  # a register of the cluster, or the value a transfer streams to the unit
                a, p = _operand(e, 0, reg0, entry_of, streamed, read, slots, q)
                b = _operand(e, 1, reg1, entry_of, streamed, read, slots, q) if src1[e] >= 0 else None
            if b is not None:
                b, pb = b
                b = b if pb == q else modarith.reduce_mod(b, q)
            c = 0
            if HAS_IMM[o] and o != StreamOp.AUT:  # a constant-table index
                if not 0 <= imm[e] < len(consts):
                    raise InternalError(f"stream entry uses constant {imm[e]}; the table has {len(consts)}")
                c = int(consts[imm[e]]) % q
            operands = Operands(
                a=a[None], b=None if b is None else b[None], moduli=(q,), src_moduli=(p,),
                consts=np.array([c], dtype=np.uint64), galois=imm[e], N=N,
            )
            loc = slot(dst[e]) if plan is None else slots + reg[e]
            value, to_memory = (apply(LimbOp(int(o)), operands)[0], q), False
        heapq.heappush(pending, (t + latency[o], seq, to_memory, loc, value))
        seq += 1
    if plan is not None:
        for move in moves[mi:]:
            seq = _move(move, scratch, streamed, pending, seq, zeros, land_until)
    if progress is not None:
        progress(len(order))
    for _, _, to_memory, loc, value in sorted(pending, key=lambda p: (p[0], p[1])):
        if to_memory:
            memory[loc] = value
        else:
            scratch[loc] = value

    out = {}
    for r in program.rvec_ids(RVecClass.OUTPUT).tolist():
        if r not in memory:
            raise InternalError(f"output {program.rvec_label(r)} was never stored to memory")
        out[r] = memory[r][0]
    return out


def _transfer_moves(plan, slots: int, latency: int) -> list[tuple[int, int, int, int, int]]:
    """(issue cycle, source location, landing cycle, destination location or -1, (entry,
    operand) it streams to or None) of every network transfer, in issue order; registers
    are locations ``slots + flat register``."""
    from fhec.backends.onchip import TransferKind

    tr = plan.transfers
    wb = tr.kind == TransferKind.WRITEBACK
    src = np.where(tr.kind == TransferKind.FILL, tr.slot, slots + np.where(wb, tr.reg, tr.src_reg))
    # a write-back lands in its slot, a staged fill or copy in its register, a streamed one in the unit
    dst = np.where(wb, tr.slot, np.where(tr.reg >= 0, slots + tr.reg, -1))
    order = np.argsort(tr.cycle, kind="stable")
    if len(order) and src[order].min() < 0:
        raise InternalError("a network transfer names no source")
    return list(zip(tr.cycle[order].tolist(), src[order].tolist(), (tr.cycle[order] + latency).tolist(),
                    dst[order].tolist(), tr.entry[order].tolist(), tr.operand[order].tolist()))


def _move(move, scratch, streamed, pending, seq, zeros, land_until) -> int:
    """Issue one transfer: read its source now; a streamed one is held for the entry and
    operand(s) it feeds; a write-back lands in its slot, and a fill or copy that names a
    register in that register, later."""
    t, src, lands, dst, entry, operand = move
    land_until(t)
    held = scratch[src]
    value = (zeros, 1) if held is None else held
    if entry >= 0:
        for k in ((0, 1) if operand == 2 else (operand,)):
            streamed[(entry, k)] = value
    if dst >= 0:
        heapq.heappush(pending, (lands, seq, False, dst, value))
        return seq + 1
    return seq


def _operand(e, k, regs, entry_of, streamed, read, slots, q):
    if regs[e] >= 0:
        return read(slots + regs[e], q)
    value = streamed.pop((entry_of[e], k), None)
    if value is None:
        raise InternalError(f"stream entry {entry_of[e]} reads source {k} from neither a register nor a transfer")
    return value


def _initial_memory(program: LimbProgram, loaded: Mapping[int, np.ndarray]) -> dict[int, tuple[np.ndarray, int]]:
    ids = np.flatnonzero(IS_LOADED[program.rvec_class]).tolist()
    missing = [r for r in ids if r not in loaded]
    if missing:
        raise InternalError(f"execute_streams: no value for {len(missing)} loaded rvec(s), e.g. "
                            f"{program.rvec_label(missing[0])}")
    memory = {}
    for r in ids:
        arr = np.asarray(loaded[r])
        if arr.shape != (program.N,) or arr.dtype.kind not in "ui":
            raise InternalError(f"execute_streams: {program.rvec_label(r)} must be {program.N} integer words")
        memory[r] = (arr.astype(np.uint64), program.moduli[int(program.rvec_mod[r])])
    return memory
