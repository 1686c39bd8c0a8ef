"""An independent checker of per-unit instruction streams (F1 §4.4 and §7: schedules are
validated "by simulating it forward to ensure that no clobbers or resource usage
violations occur").

`find_hazards` replays `Streams` using only the streams themselves, the target
(through its own derivation of the timing contract, `fhec.sim.check_timing`, not
the schedulers' `fhec.backends.streams.op_timing`) and the program
they claim to implement; it never sees the schedulers' internal state. Each entry's
``tag`` names the program instruction (or, for a LOAD/STORE, the rvec) it
implements, which fixes the values it is meant to read and write. The checker then
tracks which value every scratchpad slot and memory vector holds over time and
reports:

``read-before-ready``  a source read before its value has landed (or before it
                       would stay ahead of the writer, see the chaining rule)
``clobber``            a source whose value was overwritten before or while it was read
``capacity``           a slot outside the target's scratchpad
``unit-busy``          an entry issued before the previous entry of its unit freed it
``bandwidth``          off-chip transfers in flight exceeding the memory bandwidth
``wrong-unit``         an op issued on a unit of a kind that does not execute it, a
                       transform on an NTT unit of the other direction (``directions``;
                       OF-Limb's generating NTTs run on either), or a stream for a unit
                       the target does not have
``mismatch``           an entry whose op, modulus, immediate, operand count or
                       memory address disagrees with the program, or a wrong
                       ``total_cycles``
``missing``            a value read from a location it was never written to, an
                       instruction never executed, an OUTPUT never stored
``port``               more transfers on a network port, a scratchpad bank port or a
                       register file's read or write ports than it has

On a target that models the on-chip data path (`fhec.backends.onchip`), functional
units read and write registers and the network transfers move values between
registers and slots: the checker tracks registers like slots (so a register read
before its value landed, or after another value replaced it, is a hazard; a register
beyond the cluster's register file is ``capacity``), and books every port itself
(`fhec.sim.check_onchip`).

`check_streams` raises `StreamHazardError` if there is any hazard.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from fhec.backends.streams import HAS_IMM, STREAM_ARITY, Streams, StreamOp, on_functional_units, unit_layout
from fhec.backends.target import Target
from fhec.errors import FhecError, InternalError
from fhec.sim.check_onchip import OnChipFacts, check_onchip, onchip_facts
from fhec.sim.check_timing import checker_timing
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import ARITY, IS_LOADED, LimbOp, RVecClass

__all__ = ["HazardKind", "Hazard", "StreamHazardError", "find_hazards", "check_streams"]


class HazardKind(str, enum.Enum):
    READ_BEFORE_READY = "read-before-ready"
    CLOBBER = "clobber"
    CAPACITY = "capacity"
    UNIT_BUSY = "unit-busy"
    BANDWIDTH = "bandwidth"
    WRONG_UNIT = "wrong-unit"
    MISMATCH = "mismatch"
    MISSING = "missing"
    PORT = "port"


@dataclasses.dataclass(frozen=True)
class Hazard:
    """One violation: its kind, where (unit name, issue cycle, entry index into the
    streams; -1 when not tied to an entry) and a readable explanation."""

    kind: HazardKind
    unit: str
    cycle: int
    entry: int
    message: str

    def __str__(self) -> str:
        where = f"{self.unit} @{self.cycle}" if self.entry >= 0 else "program"
        return f"{self.kind.value}: {where}: {self.message}"


class StreamHazardError(FhecError):
    """Streams violate the timing contract or the program: streams edited by hand or read
    from altered files (a user's error, hence a `FhecError`), or a compiler bug (the
    pipeline's own verification reports that as an `InternalError`). ``hazards`` lists
    what `find_hazards` found."""

    def __init__(self, hazards: list[Hazard], total: int):
        self.hazards = hazards
        counts: dict[str, int] = {}
        for h in hazards:
            counts[h.kind.value] = counts.get(h.kind.value, 0) + 1
        shown = "\n  ".join(str(h) for h in hazards[:5])
        super().__init__(f"{total} hazard(s) in the streams {counts}; first:\n  {shown}")


class _Collector:
    def __init__(self, streams: Streams, limit: int | None):
        self.streams = streams
        self.limit = limit
        self.hazards: list[Hazard] = []
        self.total = 0

    def add(self, kind: HazardKind, entry: int, message: str) -> None:
        self.total += 1
        if self.limit is not None and len(self.hazards) >= self.limit:
            return
        s = self.streams
        if entry >= 0:
            self.hazards.append(Hazard(kind, s.units[int(s.unit[entry])].name, int(s.cycle[entry]), int(entry), message))
        else:
            self.hazards.append(Hazard(kind, "", -1, -1, message))

    def sorted(self) -> list[Hazard]:
        order = {k: i for i, k in enumerate(HazardKind)}
        return sorted(self.hazards, key=lambda h: (order[h.kind], h.cycle, h.entry))

    def many(self, kind: HazardKind, entries: np.ndarray, message) -> None:
        """Add one hazard per entry; `message(entry)` builds the text lazily."""
        entries = np.asarray(entries, dtype=np.int64)
        for e in entries.tolist():
            if self.limit is not None and len(self.hazards) >= self.limit:
                self.total += len(entries) - entries.tolist().index(e)
                return
            self.add(kind, e, message(e))


def find_hazards(streams: Streams, target: Target, program: LimbProgram, *, limit: int | None = 1000) -> list[Hazard]:
    """Replay `streams` of `program` on `target` and return the hazards found (the
    first `limit` collected, None for all), sorted by kind then cycle. An empty list
    means the streams respect the timing contract and compute the program."""
    return _replay(streams, target, program, limit).sorted()


def check_streams(streams: Streams, target: Target, program: LimbProgram) -> None:
    """Raise `StreamHazardError` (naming the first hazards and counting all) if
    `find_hazards` reports anything."""
    col = _replay(streams, target, program, 50)
    if col.total:
        raise StreamHazardError(col.sorted(), col.total)


def _replay(streams: Streams, target: Target, program: LimbProgram, limit: int | None) -> _Collector:
    col = _Collector(streams, limit)
    s = streams
    if s.target != target.name:
        col.add(HazardKind.MISMATCH, -1, f"the streams were scheduled for target {s.target!r}, not {target.name!r}")
    tm = checker_timing(target, s.N)
    op = s.op.astype(np.int64)
    known_op = np.isin(op, [int(o) for o in StreamOp])
    bad = np.flatnonzero(~known_op)
    col.many(HazardKind.MISMATCH, bad, lambda e: f"unknown opcode {int(s.op[e])}")
    op = np.where(known_op, op, 0)

    occ = _entry_occupancy(s, tm, target, program, op)
    _check_units(s, occ, target, op, col, tm)
    _check_directions(s, target, program, op, col)
    _check_bandwidth(s, tm, target, op, col)
    slot_ok = _check_capacity(s, target, op, col)
    fu = _check_fields(s, program, op, _generated(target, program), col)
    facts = onchip_facts(target, s.N)
    if (facts is None) != (s.onchip is None):
        col.add(HazardKind.MISMATCH, -1, f"target {target.name!r} {'models' if facts else 'does not model'} "
                                         f"register files, but the streams {'lack' if facts else 'carry'} a register plan")
        facts = None
    if facts is None or s.onchip is None:
        _check_values(s, tm, occ, program, op, fu, slot_ok, col)
    else:
        reg_ok = check_onchip(s, tm, facts, program, op, fu, col, HazardKind)
        _check_values_onchip(s, tm, facts, program, op, fu & reg_ok, slot_ok, col)
    _check_complete(s, program, op, fu, col)
    _check_total(s, tm, occ, op, col)
    return col


def _generated(target: Target, program: LimbProgram) -> np.ndarray:
    """Per rvec: may a GEN entry write it? The uniform half (component 1) of every key-switching
    key when the target generates key halves (``[keys]``); derived here from the raw tags."""
    gen = np.zeros(program.num_rvecs, dtype=bool)
    if target.keys.generated:
        for r, tag in zip(program.tagged.tolist(), program.tags.tolist()):
            gen[r] = program.rvec_class[r] == RVecClass.KSH and tag[2] == 1
    return gen


def _fills(op: np.ndarray) -> np.ndarray:
    """Entries that write a slot from outside the scratchpad: LOAD and GEN."""
    return (op == StreamOp.LOAD) | (op == StreamOp.GEN)


def _moves(op: np.ndarray) -> np.ndarray:
    """Entries of the memory controller or the key generator (no functional unit)."""
    return _fills(op) | (op == StreamOp.STORE)


# --- structural checks -----------------------------------------------------------------------


def _check_directions(s: Streams, target: Target, program: LimbProgram, op: np.ndarray, col: _Collector) -> None:
    """On a target whose NTT units each run one direction (``directions``): an INTT on a
    "forward" unit, or an NTT that does not generate a plaintext's limbs on an "inverse"
    one, is ``wrong-unit``. Read from the target file's own lists, not the schedulers' codes."""
    given = {u.kind.value: u.directions for u in target.cluster.units if u.directions is not None}
    if not given:
        return
    direction = np.array([given[u.kind][u.index] if u.kind in given and u.index < len(given[u.kind]) else "both"
                          for u in s.units], dtype=object)[s.unit]
    tag = np.asarray(s.tag, dtype=np.int64)
    fu = (op == LimbOp.NTT) | (op == LimbOp.INTT)
    valid = fu & (tag >= 0) & (tag < len(program))
    generating = np.zeros(len(op), dtype=bool)
    generating[valid] = program.generation_ntts()[tag[valid]]
    wrong = ((op == LimbOp.INTT) & (direction == "forward")) | \
            ((op == LimbOp.NTT) & ~generating & (direction == "inverse"))
    col.many(HazardKind.WRONG_UNIT, np.flatnonzero(wrong),
             lambda e: f"{StreamOp(int(op[e])).name} cannot run on {direction[e]!r} unit {s.units[s.unit[e]].name}")


def _entry_occupancy(s: Streams, tm, target: Target, program: LimbProgram, op: np.ndarray) -> np.ndarray:
    """int64 per entry: the cycles it keeps its unit busy and, on a functional unit, reads
    and writes: the op's, but for a BCONV term on a conversion array (`FunctionalUnit.rows`)
    its share of its conversion's passes, derived here from the program through the entry's
    tag (`fhec.ir.limb_conversions`, `Target.conversion_term_cycles`); the entries'
    recorded `Streams.occupancy` is not trusted."""
    occ = np.asarray(tm.occupancy[op], dtype=np.int64).copy()
    if not target.times_conversions or not len(program):
        return occ
    from fhec.backends.streams import instruction_occupancy

    tag = np.asarray(s.tag, dtype=np.int64)
    terms = np.flatnonzero((op == LimbOp.BCONV) & (tag >= 0) & (tag < len(program)))
    terms = terms[np.asarray(program.op)[tag[terms]] == LimbOp.BCONV]  # a wrong tag is _check_fields' to report
    occ[terms] = instruction_occupancy(target, program)[tag[terms]]
    return occ


def _check_units(s: Streams, occ: np.ndarray, target: Target, op: np.ndarray, col: _Collector, tm) -> None:
    layout = {u.name: u.kind for u in unit_layout(target)}
    used = np.bincount(s.unit, minlength=len(s.units))
    start = s.unit_start
    for i, u in enumerate(s.units):
        if used[i] and layout.get(u.name) != u.kind:
            col.add(HazardKind.WRONG_UNIT, int(start[i]),
                    f"target {target.name!r} has no {u.kind} unit called {u.name!r}")
    kinds = np.array([u.kind for u in s.units], dtype=object)
    want = np.array(tm.unit_kind, dtype=object)[op]
    wrong = np.flatnonzero(kinds[s.unit] != want)
    col.many(HazardKind.WRONG_UNIT, wrong,
             lambda e: f"{StreamOp(int(op[e])).name} cannot run on a unit of kind {kinds[s.unit[e]]!r}")
    order = np.lexsort((s.cycle, s.unit))
    u, c, o = s.unit[order], s.cycle[order], op[order]
    same = u[1:] == u[:-1]
    early = same & (c[1:] < c[:-1] + occ[order][:-1])
    col.many(HazardKind.UNIT_BUSY, order[1:][early],
             lambda e: "issued while the unit is still busy with its previous entry")


def _check_bandwidth(s: Streams, tm, target: Target, op: np.ndarray, col: _Collector) -> None:
    mem = np.flatnonzero((op == StreamOp.LOAD) | (op == StreamOp.STORE))
    if not len(mem):
        return
    rate = target.rvec_bytes(s.N) / tm.xfer  # bytes per cycle of one transfer
    allowed = max(1, int(np.floor(target.offchip_bytes_per_cycle / rate + 1e-9)))
    start = s.cycle[mem]
    end = start + tm.xfer
    times = np.concatenate([start, end])
    delta = np.concatenate([np.ones(len(mem), np.int64), -np.ones(len(mem), np.int64)])
    # at equal times an ending transfer frees the channel before a starting one uses it
    order = np.lexsort((delta, times))
    level = np.cumsum(delta[order])
    over = (delta[order] > 0) & (level > allowed)
    offenders = np.concatenate([mem, mem])[order][over]
    col.many(HazardKind.BANDWIDTH, offenders,
             lambda e: f"more than {allowed} off-chip transfer(s) in flight exceed "
                       f"{target.offchip_bytes_per_cycle:g} bytes/cycle")


def _slot_operands(s: Streams, op: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(entries, slot) pairs of every slot operand: FU dst/src0/src1, LOAD/GEN dst, STORE src0."""
    fu = ~_moves(op)
    out = []
    for col, sel in ((s.dst, fu | _fills(op)), (s.src0, fu | (op == StreamOp.STORE)), (s.src1, fu)):
        idx = np.flatnonzero(sel & (col >= 0))
        out.append((idx, col[idx]))
    return out


def _check_capacity(s: Streams, target: Target, op: np.ndarray, col: _Collector) -> np.ndarray:
    """Flag slots beyond the scratchpad; returns a per-entry mask of entries whose slots are in range."""
    slots = target.scratchpad_rvecs(s.N)
    ok = np.ones(len(s), dtype=bool)
    for idx, loc in _slot_operands(s, op):
        bad = idx[loc >= slots]
        ok[bad] = False
    col.many(HazardKind.CAPACITY, np.flatnonzero(~ok),
             lambda e: f"uses a slot beyond the scratchpad's {slots} RVec slots at N = {s.N}")
    return ok


def _check_fields(s: Streams, program: LimbProgram, op: np.ndarray, generated: np.ndarray,
                  col: _Collector) -> np.ndarray:
    """Compare every entry with the instruction / rvec its tag names; returns the mask
    of FU entries whose tag is a valid instruction with matching fields."""
    n_instr = len(program)
    is_mem = _moves(op)
    tag = s.tag.astype(np.int64)
    fu_tag_ok = ~is_mem & (tag >= 0) & (tag < n_instr)
    bad = np.flatnonzero(~is_mem & ~fu_tag_ok)
    col.many(HazardKind.MISMATCH, bad, lambda e: f"tag {int(s.tag[e])} names no instruction of the program")
    ti = np.where(fu_tag_ok, tag, 0)
    arity2 = STREAM_ARITY[op] == 2
    wrong = fu_tag_ok & (
        (program.op[ti] != op)
        | (program.mod[ti].astype(np.int64) != s.mod)
        | (HAS_IMM[op] & (program.imm[ti] != s.imm))
        | (s.src0 < 0)
        | (arity2 != (s.src1 >= 0))
        | (s.dst < 0)
    )
    def expected(e: int) -> str:
        i = int(s.tag[e])
        want = f"{LimbOp(int(program.op[i])).name} q{int(program.mod[i])} imm={int(program.imm[i])}"
        got = f"{StreamOp(int(op[e])).name} q{int(s.mod[e])} imm={int(s.imm[e])} dst={int(s.dst[e])} " \
              f"src={int(s.src0[e])},{int(s.src1[e])}"
        return f"entry ({got}) does not match instruction {i} ({want}, {ARITY[program.op[i]]} source(s))"

    col.many(HazardKind.MISMATCH, np.flatnonzero(wrong), expected)
    R = program.num_rvecs
    mem_bad = is_mem & (
        (tag < 0) | (tag >= R)
        | np.where(_fills(op), (s.src0 != tag) | (s.dst < 0), (s.dst != tag) | (s.src0 < 0))
    )
    col.many(HazardKind.MISMATCH, np.flatnonzero(mem_bad),
             lambda e: f"memory operand does not match the rvec it moves (tag {int(s.tag[e])})")
    # the key generator makes the uniform halves of keys and nothing else
    not_generated = (op == StreamOp.GEN) & ~mem_bad & ~generated[np.clip(tag, 0, max(R - 1, 0))]
    col.many(HazardKind.MISMATCH, np.flatnonzero(not_generated),
             lambda e: f"GEN writes %{int(s.tag[e])}, which is not a key half the target generates")
    return fu_tag_ok & ~wrong


# --- values ----------------------------------------------------------------------------------


def _check_values(s: Streams, tm, occ: np.ndarray, program: LimbProgram, op: np.ndarray, fu_ok: np.ndarray,
                  slot_ok: np.ndarray, col: _Collector) -> None:
    """Track which value every slot / memory vector holds over time and check every read
    (a functional unit reads and writes for its entry's occupancy, `occ`)."""
    tag = s.tag.astype(np.int64)
    t = s.cycle
    load = _fills(op) & slot_ok & (tag >= 0) & (tag < program.num_rvecs)
    store = (op == StreamOp.STORE) & slot_ok & (tag >= 0) & (tag < program.num_rvecs)
    fu = fu_ok & slot_ok
    fe = np.flatnonzero(fu)
    le = np.flatnonzero(load)
    se = np.flatnonzero(store)
    ti = tag[fe]

    # slot writes: (location, landing cycle, duration, value, entry)
    w_loc = np.concatenate([s.dst[fe], s.dst[le]]).astype(np.int64)
    w_land = np.concatenate([t[fe] + tm.latency[op[fe]], t[le] + tm.latency[op[le]]])
    w_dur = np.concatenate([occ[fe], tm.write_cycles[op[le]]])
    w_val = np.concatenate([program.dst[ti].astype(np.int64), tag[le]])
    w_ent = np.concatenate([fe, le])
    # slot reads: (location, start cycle, duration, value, entry)
    two = fe[program.src1[ti] >= 0]
    r_loc = np.concatenate([s.src0[fe], s.src1[two], s.src0[se]]).astype(np.int64)
    r_start = np.concatenate([t[fe], t[two], t[se]])
    r_dur = np.concatenate([occ[fe], occ[two], np.full(len(se), tm.read_cycles[StreamOp.STORE])])
    r_val = np.concatenate([program.src0[ti].astype(np.int64), program.src1[tag[two]].astype(np.int64), tag[se]])
    r_ent = np.concatenate([fe, two, se])
    _check_reads(col, "slot s", w_loc, w_land, w_dur, w_val, w_ent, r_loc, r_start, r_dur, r_val, r_ent)

    _check_memory_vectors(s, tm, program, t, tag, se, le, col)


def _check_values_onchip(s: Streams, tm, facts: OnChipFacts, program: LimbProgram, op: np.ndarray,
                         fu_ok: np.ndarray, slot_ok: np.ndarray, col: _Collector) -> None:
    """`_check_values` with registers: an FU writes a register and reads each source from
    a register or from the transfer that streams it (a FILL reads a slot, an XFER another
    cluster's register); a staged FILL or XFER writes a register instead; a WRITEBACK
    copies a register to a slot; LOAD and STORE move between slots and memory as before."""
    from fhec.backends.onchip import TransferKind

    tag = s.tag.astype(np.int64)
    t = s.cycle
    load = (op == StreamOp.LOAD) & slot_ok & (tag >= 0) & (tag < program.num_rvecs)
    store = (op == StreamOp.STORE) & slot_ok & (tag >= 0) & (tag < program.num_rvecs)
    fe = np.flatnonzero(fu_ok & slot_ok)
    le = np.flatnonzero(load)
    se = np.flatnonzero(store)
    ti = tag[fe]
    oc = s.onchip
    tr = oc.transfers
    ok = (tr.value >= 0) & (tr.value < program.num_rvecs)
    fill = np.flatnonzero(ok & (tr.kind == TransferKind.FILL))
    wb = np.flatnonzero(ok & (tr.kind == TransferKind.WRITEBACK))
    xf = np.flatnonzero(ok & (tr.kind == TransferKind.XFER))
    none = lambda n: np.full(n, -1, np.int64)  # noqa: E731  (a transfer is no stream entry)
    xo, lat = facts.xo, facts.latency

    # registers: written by FUs; read by FUs, write-backs and cluster-to-cluster streams
    r0 = fe[oc.reg0[fe] >= 0]
    two = fe[(program.src1[ti] >= 0) & (oc.reg1[fe] >= 0)]
    staged = np.concatenate([fill, xf])
    staged = staged[tr.reg[staged] >= 0]
    w_loc = np.concatenate([oc.reg[fe], tr.reg[staged]])
    w_land = np.concatenate([t[fe] + tm.latency[op[fe]], tr.cycle[staged] + lat])
    w_dur = np.concatenate([tm.write_cycles[op[fe]], np.full(len(staged), xo)])
    w_val = np.concatenate([program.dst[ti].astype(np.int64), tr.value[staged]])
    w_ent = np.concatenate([fe, none(len(staged))])
    r_loc = np.concatenate([oc.reg0[r0], oc.reg1[two], tr.reg[wb], tr.src_reg[xf]])
    r_start = np.concatenate([t[r0], t[two], tr.cycle[wb], tr.cycle[xf]])
    r_dur = np.concatenate([tm.read_cycles[op[r0]], tm.read_cycles[op[two]], np.full(len(wb) + len(xf), xo)])
    r_val = np.concatenate([program.src0[tag[r0]].astype(np.int64), program.src1[tag[two]].astype(np.int64),
                            tr.value[wb], tr.value[xf]])
    r_ent = np.concatenate([r0, two, none(len(wb) + len(xf))])
    _check_reads(col, "register r", w_loc, w_land, w_dur, w_val, w_ent, r_loc, r_start, r_dur, r_val, r_ent)

    # slots: written by loads and write-backs, read by fills and stores
    w_loc = np.concatenate([s.dst[le].astype(np.int64), tr.slot[wb]])
    w_land = np.concatenate([t[le] + tm.latency[StreamOp.LOAD], tr.cycle[wb] + lat])
    w_dur = np.concatenate([np.full(len(le), tm.write_cycles[StreamOp.LOAD]), np.full(len(wb), xo)])
    w_val = np.concatenate([tag[le], tr.value[wb]])
    w_ent = np.concatenate([le, none(len(wb))])
    r_loc = np.concatenate([tr.slot[fill], s.src0[se].astype(np.int64)])
    r_start = np.concatenate([tr.cycle[fill], t[se]])
    r_dur = np.concatenate([np.full(len(fill), xo), np.full(len(se), tm.read_cycles[StreamOp.STORE])])
    r_val = np.concatenate([tr.value[fill], tag[se]])
    r_ent = np.concatenate([none(len(fill)), se])
    _check_reads(col, "slot s", w_loc, w_land, w_dur, w_val, w_ent, r_loc, r_start, r_dur, r_val, r_ent)

    # streamed operands: exactly one transfer per source not read from a register, carrying
    # that source's value, early enough that the unit never reads ahead of it
    streams_ = np.flatnonzero(ok & ((tr.kind == TransferKind.FILL) | (tr.kind == TransferKind.XFER))
                              & (tr.entry >= 0) & (tr.entry < len(s)) & (tr.operand >= 0) & (tr.operand <= 2))
    got = np.zeros((len(s), 2), dtype=np.int64)
    for k in (0, 1):
        mine = streams_[(tr.operand[streams_] == k) | (tr.operand[streams_] == 2)]
        np.add.at(got[:, k], tr.entry[mine], 1)
    srcs = (program.src0, program.src1)
    regs = (oc.reg0, oc.reg1)
    for k in (0, 1):
        need = np.zeros(len(s), dtype=bool)
        need[fe] = (srcs[k][ti] >= 0) & (regs[k][fe] < 0)
        wrong = np.flatnonzero((need & (got[:, k] != 1)) | (~need & (got[:, k] > 0)))
        col.many(HazardKind.MISMATCH, wrong,
                 lambda e, k=k: f"source {k} is streamed by {int(got[e, k])} network transfer(s); it needs "
                                f"{'exactly one' if need[e] else 'none (it names a register)'}")
    e_of = tr.entry[streams_]
    for k in (0, 1):
        mine = (tr.operand[streams_] == k) | (tr.operand[streams_] == 2)
        j, e = streams_[mine], e_of[mine]
        valid = fu_ok[e] & slot_ok[e]
        j, e = j[valid], e[valid]
        want = srcs[k][tag[e]].astype(np.int64)
        bad_val = np.flatnonzero(tr.value[j] != want)
        for q in bad_val[:20].tolist():
            col.add(HazardKind.MISMATCH, int(e[q]), f"source {k} is streamed %{int(tr.value[j[q]])}; the instruction "
                                                   f"reads %{int(want[q])}")
        early = t[e] < tr.cycle[j] + lat + np.maximum(0, xo - tm.read_cycles[op[e]])
        for q in np.flatnonzero(early)[:20].tolist():
            col.add(HazardKind.READ_BEFORE_READY, int(e[q]),
                    f"reads source {k} from a transfer issued at cycle {int(tr.cycle[j[q]])}, which only stays ahead "
                    f"from cycle {int(tr.cycle[j[q]] + lat + max(0, xo - tm.read_cycles[op[e[q]]]))}")
        cl = np.array([u.cluster for u in s.units], dtype=np.int64)[s.unit[e]]
        away = np.flatnonzero(cl != tr.cluster[j])
        for q in away[:20].tolist():
            col.add(HazardKind.MISMATCH, int(e[q]), f"source {k} is streamed to cluster {int(tr.cluster[j[q]])}, "
                                                   f"not the entry's cluster {int(cl[q])}")

    _check_memory_vectors(s, tm, program, t, tag, se, le, col)


def _check_memory_vectors(s: Streams, tm, program: LimbProgram, t, tag, se, le, col: _Collector) -> None:
    """Every LOAD (entries `le`) reads a memory vector holding its value: loaded classes are
    present from the start, a STORE (entries `se`) lands whole at t + its latency. Shared
    by both data paths: off chip, the register plan changes nothing."""
    initial = np.flatnonzero(IS_LOADED[program.rvec_class]).astype(np.int64)
    m_loc = np.concatenate([initial, s.dst[se].astype(np.int64)])
    m_land = np.concatenate([np.full(len(initial), -1, np.int64), t[se] + tm.latency[StreamOp.STORE]])
    m_val = np.concatenate([initial, tag[se]])
    m_ent = np.concatenate([np.full(len(initial), -1, np.int64), se])
    _check_reads(col, "memory vector m", m_loc, m_land, np.zeros(len(m_loc), np.int64), m_val, m_ent,
                 s.src0[le].astype(np.int64), t[le], np.zeros(len(le), np.int64), tag[le], le)


def _check_reads(col, space, w_loc, w_land, w_dur, w_val, w_ent, r_loc, r_start, r_dur, r_val, r_ent) -> None:
    if not len(r_loc):
        return
    # (location, cycle) as one int64 key: cycles from -1 (loaded data) up to `span`. A fixed
    # 2^40 cycles overflowed past 2^23 locations (ResNet-20 at N = 2^16 has 11 M rvecs, so as
    # many memory vectors), which broke the keys' order and reported false clobbers.
    span = int(max(w_land.max(), r_start.max())) + 2
    if int(max(w_loc.max(), r_loc.max()) + 1) * span >= 2**63:
        raise InternalError(f"the checker's (location, cycle) keys overflow: {span} cycles")
    order = np.lexsort((w_land, w_loc))
    w_loc, w_land, w_dur, w_val, w_ent = (a[order] for a in (w_loc, w_land, w_dur, w_val, w_ent))
    wkey = w_loc * span + (w_land + 1)
    rkey = r_loc * span + (r_start + 1)
    idx = np.searchsorted(wkey, rkey, side="right") - 1
    has = idx >= 0
    has[has] = w_loc[idx[has]] == r_loc[has]
    ic = np.maximum(idx, 0)
    good_value = has & (w_val[ic] == r_val)
    # chaining: the reader must stay behind the writer chunk by chunk
    early = good_value & (r_start < w_land[ic] + np.maximum(0, w_dur[ic] - r_dur))
    for k in np.flatnonzero(early).tolist():
        col.add(HazardKind.READ_BEFORE_READY, int(r_ent[k]),
                f"reads %{r_val[k]} from {space}{r_loc[k]} at cycle {r_start[k]}, but its writer "
                f"(entry {w_ent[ic[k]]}) only stays ahead from cycle {w_land[ic[k]] + max(0, w_dur[ic[k]] - r_dur[k])}")
    # a later write landing before the read finished overwrites chunks not yet read
    nxt = ic + 1
    nxt_ok = good_value & (nxt < len(w_loc))
    nxt_c = np.minimum(nxt, len(w_loc) - 1)
    nxt_ok &= w_loc[nxt_c] == r_loc
    clob = nxt_ok & (w_land[nxt_c] < r_start + r_dur)
    for k in np.flatnonzero(clob).tolist():
        col.add(HazardKind.CLOBBER, int(r_ent[k]),
                f"reads %{r_val[k]} from {space}{r_loc[k]} during [{r_start[k]}, {r_start[k] + r_dur[k]}), "
                f"but entry {w_ent[nxt_c[k]]} overwrites it from cycle {w_land[nxt_c[k]]}")
    # the location does not hold the value: not yet, no longer, or never
    wrong = np.flatnonzero(~good_value)
    if not len(wrong):
        return
    vorder = np.lexsort((w_land, w_val, w_loc))
    vl, vv, vt, ve = w_loc[vorder], w_val[vorder], w_land[vorder], w_ent[vorder]
    for k in wrong.tolist():
        lo = np.searchsorted(vl, r_loc[k], side="left")
        hi = np.searchsorted(vl, r_loc[k], side="right")
        sub_v = vv[lo:hi]
        a = lo + np.searchsorted(sub_v, r_val[k], side="left")
        b = lo + np.searchsorted(sub_v, r_val[k], side="right")
        lands = vt[a:b]
        later = lands[lands > r_start[k]]
        if len(later):
            col.add(HazardKind.READ_BEFORE_READY, int(r_ent[k]),
                    f"reads %{r_val[k]} from {space}{r_loc[k]} at cycle {r_start[k]}, before it lands at "
                    f"cycle {later.min()}")
        elif len(lands):
            over = w_ent[ic[k]] if has[k] else -1
            col.add(HazardKind.CLOBBER, int(r_ent[k]),
                    f"reads %{r_val[k]} from {space}{r_loc[k]} at cycle {r_start[k]}, but entry {over} "
                    f"overwrote it (with %{w_val[ic[k]] if has[k] else '?'})")
        else:
            col.add(HazardKind.MISSING, int(r_ent[k]),
                    f"reads %{r_val[k]} from {space}{r_loc[k]}, where it is never written")


def _check_complete(s: Streams, program: LimbProgram, op: np.ndarray, fu_ok: np.ndarray, col: _Collector) -> None:
    done = np.zeros(len(program), dtype=bool)
    done[s.tag[fu_ok]] = True
    missing = np.flatnonzero(~done)
    for i in missing[:20].tolist():
        col.add(HazardKind.MISSING, -1, f"instruction {i} is never executed")
    if len(missing) > 20:
        col.total += len(missing) - 20
    outputs = program.rvec_ids(RVecClass.OUTPUT)
    stored = np.zeros(program.num_rvecs, dtype=bool)
    st = (op == StreamOp.STORE) & (s.tag >= 0) & (s.tag < program.num_rvecs)
    stored[s.tag[st]] = True
    for r in outputs[~stored[outputs]][:20].tolist():
        col.add(HazardKind.MISSING, -1, f"output {program.rvec_label(r)} is never stored")


def _check_total(s: Streams, tm, occ: np.ndarray, op: np.ndarray, col: _Collector) -> None:
    if not len(s):
        return
    is_store = op == StreamOp.STORE
    writes = np.where(on_functional_units(op), occ, tm.write_cycles[op])
    end = s.cycle + np.where(is_store, tm.latency[op], tm.latency[op] + writes)
    last = int(end.max())
    if s.total_cycles < last:
        col.add(HazardKind.MISMATCH, int(np.argmax(end)),
                f"total_cycles = {s.total_cycles}, but the last result completes at cycle {last}")
