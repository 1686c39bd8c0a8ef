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
) -> dict[int, np.ndarray]:
    """Execute `streams` on `target` and return ``{OUTPUT rvec id: N words}`` as read
    from off-chip memory after the last entry (the OUTPUT rvec's memory vector).

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
        raise InternalError(f"streams are for N = {streams.N}, the program has N = {N}")
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

    def slot(loc: int) -> int:
        if not 0 <= loc < slots:
            raise InternalError(f"stream entry names slot {loc}, outside the scratchpad's {slots} slots")
        return loc

    def read(loc: int, q: int) -> tuple[np.ndarray, int]:
        held = scratch[slot(loc)]
        return (zeros, q) if held is None else held

    for e in range(len(order)):
        if progress is not None and e % PROGRESS_EVERY == 0:
            progress(e)
        t = cycle[e]
        while pending and pending[0][0] <= t:
            _, _, to_memory, loc, value = heapq.heappop(pending)
            if to_memory:
                memory[loc] = value
            else:
                scratch[loc] = value
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
            a, p = read(src0[e], q)
            b = None
            if src1[e] >= 0:
                b, pb = read(src1[e], q)
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
            value, to_memory, loc = (apply(LimbOp(int(o)), operands)[0], q), False, slot(dst[e])
        heapq.heappush(pending, (t + latency[o], seq, to_memory, loc, value))
        seq += 1
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
