"""The independent stream checker: emitted schedules are clean, hand-broken ones are caught
with the right kind of hazard."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fhec.backends.streams import MEMORY_KIND, StreamOp, Unit, op_timing
from fhec.backends.target import load_target
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import HazardKind, StreamHazardError, check_streams, find_hazards

from tests.passes.test_offchip import he_program

def slots_only(target):
    """`target` without its on-chip data path: units read and write scratchpad slots, the
    semantics these hand-broken schedules break (the register plan's own hazards are in
    tests/sim/test_check_onchip.py)."""
    data = target.model_dump()
    data.update(register_file=None, network=None,
                scratchpad={"capacity_bytes": target.scratchpad.capacity_bytes})
    return type(target).model_validate(data)


TINY = slots_only(load_target("tiny"))
F1 = load_target("f1")


@pytest.fixture(scope="module")
def spilled():
    """A BV multiply + rotation on tiny at N = 1024: 16 slots, so it spills and fills."""
    prog = he_program(N=2**10, L=4, method="bv", ops=("mul", "rot"), chains=2)
    s = schedule_cycles(schedule_offchip(prog, TINY), TINY)
    assert find_hazards(s, TINY, prog) == []
    return prog, s


@pytest.fixture(scope="module")
def roomy():
    prog = he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    s = schedule_cycles(schedule_offchip(prog, F1), F1)
    assert find_hazards(s, F1, prog) == []
    return prog, s


def kinds(streams, target, program):
    return {h.kind for h in find_hazards(streams, target, program, limit=None)}


def fu_reader_of_fu_value(prog, s):
    """(reader entry, writer entry) with the reader reading the writer's result."""
    fu = np.flatnonzero(s.op < StreamOp.LOAD)
    writer_of = {int(prog.dst[s.tag[e]]): int(e) for e in fu}
    for e in fu:
        w = writer_of.get(int(prog.src0[s.tag[e]]))
        if w is not None and s.cycle[e] > s.cycle[w] + 5:
            return int(e), w
    raise AssertionError("no FU-to-FU dependence")


def test_clean_schedules(spilled, roomy):
    for (prog, s), target in ((spilled, TINY), (roomy, F1)):
        check_streams(s, target, prog)


def test_read_moved_before_its_producer(roomy):
    prog, s = roomy
    e, w = fu_reader_of_fu_value(prog, s)
    cycle = s.cycle.copy()
    cycle[e] = cycle[w]  # same cycle as its producer: the result has not landed
    assert HazardKind.READ_BEFORE_READY in kinds(s.replace_columns(cycle=cycle), F1, prog)


def test_read_one_cycle_too_early_is_caught(roomy):
    """Issued exactly when the chaining rule allows: clean; one cycle earlier: caught."""
    prog, s = roomy
    tm = op_timing(F1, prog.N)
    fu = np.flatnonzero(s.op < StreamOp.LOAD)
    writer_of = {int(prog.dst[s.tag[e]]): int(e) for e in fu}
    writer_of.update({int(s.tag[e]): int(e) for e in np.flatnonzero(s.op == StreamOp.LOAD)})
    for e in fu.tolist():
        i = int(s.tag[e])
        srcs = [int(r) for r in (prog.src0[i], prog.src1[i]) if r >= 0]
        earliest = max(s.cycle[writer_of[r]] + tm.ready_after(s.op[writer_of[r]], s.op[e]) for r in srcs)
        if earliest > 0:
            break
    # move it alone onto an extra unit of its kind, so that only its timing changes
    u = s.units[s.unit[e]]
    extra = dataclasses.replace(s, units=s.units + (Unit("extra", u.kind, u.cluster, 99),))

    def early_reads(cycle_e):
        cycle, unit = s.cycle.copy(), s.unit.copy()
        cycle[e], unit[e] = cycle_e, len(extra.units) - 1
        moved = extra.replace_columns(cycle=cycle, unit=unit)
        return [h for h in find_hazards(moved, F1, prog, limit=None)
                if h.kind == HazardKind.READ_BEFORE_READY and moved.tag[h.entry] == i
                and moved.op[h.entry] < StreamOp.LOAD]

    assert early_reads(earliest) == []
    assert early_reads(earliest - 1)


def test_swapped_slots(spilled):
    prog, s = spilled
    fu = np.flatnonzero(s.op < StreamOp.LOAD)
    a, b = fu[len(fu) // 3], fu[2 * len(fu) // 3]
    dst = s.dst.copy()
    dst[a], dst[b] = dst[b], dst[a]
    assert dst[a] != dst[b]
    found = kinds(s.replace_columns(dst=dst), TINY, prog)
    assert found & {HazardKind.CLOBBER, HazardKind.MISSING, HazardKind.READ_BEFORE_READY}


def test_overwrite_of_a_value_still_to_be_read(roomy):
    prog, s = roomy
    e, w = fu_reader_of_fu_value(prog, s)
    tm = op_timing(F1, prog.N)
    land_w = s.cycle[w] + tm.latency[s.op[w]]
    # another FU result landing while the reader's value is live: redirect it into that slot
    fu = np.flatnonzero(s.op < StreamOp.LOAD)
    lands = s.cycle[fu] + tm.latency[s.op[fu]]
    cand = fu[(lands > land_w) & (lands < s.cycle[e]) & (fu != w) & (fu != e)]
    assert len(cand)
    dst = s.dst.copy()
    dst[cand[0]] = s.src0[e]
    assert HazardKind.CLOBBER in kinds(s.replace_columns(dst=dst), F1, prog)


def test_capacity_overflow(spilled):
    prog, s = spilled
    used = int(max(s.dst[s.op < StreamOp.STORE].max(), s.src0[s.op == StreamOp.STORE].max())) + 1
    small = TINY.model_copy(update={"scratchpad": TINY.scratchpad.model_copy(
        update={"capacity_bytes": (used - 1) * prog.rvec_bytes})})
    assert HazardKind.CAPACITY in kinds(s, small, prog)
    dst = s.dst.copy()
    e = int(np.flatnonzero(s.op < StreamOp.LOAD)[0])
    dst[e] = TINY.scratchpad_rvecs(prog.N)  # one past the last slot
    assert HazardKind.CAPACITY in kinds(s.replace_columns(dst=dst), TINY, prog)


def test_unit_booked_twice(roomy):
    prog, s = roomy
    start = s.unit_start
    busy = [u for u in range(len(s.units)) if start[u + 1] - start[u] >= 2 and s.units[u].kind != MEMORY_KIND]
    e = int(start[busy[0]] + 1)
    cycle = s.cycle.copy()
    cycle[e] = cycle[e - 1] + 1  # while the previous op still occupies the unit
    assert HazardKind.UNIT_BUSY in kinds(s.replace_columns(cycle=cycle), F1, prog)


def test_bandwidth_oversubscribed(spilled):
    """A second memory controller running a transfer alongside mem0 is not a double
    booking, but together they exceed the off-chip bandwidth."""
    prog, s = spilled
    units = s.units + (Unit("mem1", MEMORY_KIND, -1, 1),)
    mem = np.flatnonzero(s.op == StreamOp.LOAD)
    e = int(mem[1])
    unit = s.unit.copy()
    cycle = s.cycle.copy()
    unit[e] = len(units) - 1
    cycle[e] = s.cycle[mem[0]]  # overlaps the first load on mem0
    moved = dataclasses.replace(s, units=units).replace_columns(unit=unit, cycle=cycle)
    found = kinds(moved, TINY, prog)
    assert HazardKind.BANDWIDTH in found
    assert HazardKind.UNIT_BUSY not in found
    assert HazardKind.WRONG_UNIT in found  # tiny has one memory controller


def test_load_before_its_spill_lands(spilled):
    prog, s = spilled
    stores = {int(s.tag[e]): int(e) for e in np.flatnonzero(s.op == StreamOp.STORE)}
    fills = [int(e) for e in np.flatnonzero(s.op == StreamOp.LOAD) if int(s.tag[e]) in stores]
    assert fills, "the tiny schedule should fill a spilled value"
    e = fills[0]
    cycle = s.cycle.copy()
    cycle[e] = s.cycle[stores[int(s.tag[e])]]  # the store has not finished
    found = find_hazards(s.replace_columns(cycle=cycle), TINY, prog, limit=None)
    assert any(h.kind == HazardKind.READ_BEFORE_READY and "memory" in h.message for h in found)


def test_wrong_unit_and_mismatched_fields(roomy):
    prog, s = roomy
    ntt = int(np.flatnonzero(s.op == StreamOp.NTT)[0])
    mul_unit = next(i for i, u in enumerate(s.units) if u.kind == "mul")
    unit = s.unit.copy()
    unit[ntt] = mul_unit
    assert HazardKind.WRONG_UNIT in kinds(s.replace_columns(unit=unit), F1, prog)
    mod = s.mod.copy()
    mod[ntt] = (mod[ntt] + 1) % len(prog.moduli)
    assert HazardKind.MISMATCH in kinds(s.replace_columns(mod=mod), F1, prog)
    aut = int(np.flatnonzero(s.op == StreamOp.AUT)[0])
    imm = s.imm.copy()
    imm[aut] += 2
    assert HazardKind.MISMATCH in kinds(s.replace_columns(imm=imm), F1, prog)


def test_missing_entries(roomy):
    prog, s = roomy
    keep = np.ones(len(s), dtype=bool)
    keep[int(np.flatnonzero(s.op == StreamOp.MUL)[0])] = False
    found = find_hazards(s.select(keep), F1, prog, limit=None)
    assert any(h.kind == HazardKind.MISSING and "never executed" in h.message for h in found)
    keep = s.op != StreamOp.STORE
    found = find_hazards(s.select(keep), F1, prog, limit=None)
    assert any(h.kind == HazardKind.MISSING and "never stored" in h.message for h in found)


def test_understated_total_cycles(roomy):
    prog, s = roomy
    short = dataclasses.replace(s, total_cycles=s.total_cycles - 1)
    assert HazardKind.MISMATCH in kinds(short, F1, prog)


def test_check_streams_raises_with_a_summary(roomy):
    prog, s = roomy
    cycle = s.cycle.copy()
    cycle[:] = 0  # everything at once: many hazards
    with pytest.raises(StreamHazardError) as info:
        check_streams(s.replace_columns(cycle=cycle), F1, prog)
    err = info.value
    assert err.hazards and "hazard" in str(err)
    assert str(err.hazards[0]).startswith(err.hazards[0].kind.value)


def test_value_reads_past_2_to_the_23_locations():
    """The read check keys (location, cycle) in one int64: with 11 M memory vectors
    (ResNet-20 at N = 2^16) a fixed 2^40-cycle stride overflowed and reported loaded data
    as clobbered. Writes and reads at locations around 2^23..2^30 and late cycles are
    matched exactly: correct reads pass, a read of the wrong value is caught."""
    from fhec.sim.check import HazardKind, _check_reads, _Collector

    locs = np.array([5, 2**23 + 7, 2**30 + 3], dtype=np.int64)
    w_land = np.array([-1, 10**9, -1], dtype=np.int64)  # loaded data, a late store, loaded data
    vals = np.array([100, 200, 300], dtype=np.int64)
    col = _Collector(None, None)
    _check_reads(col, "m", locs, w_land, np.zeros(3, np.int64), vals, np.full(3, -1, np.int64),
                 locs, np.array([0, 10**9 + 5, 2**31], dtype=np.int64), np.zeros(3, np.int64), vals,
                 np.full(3, -1, np.int64))
    assert col.total == 0
    wrong = vals.copy()
    wrong[2] = 999
    _check_reads(col, "m", locs, w_land, np.zeros(3, np.int64), vals, np.full(3, -1, np.int64),
                 locs, np.array([0, 10**9 + 5, 2**31], dtype=np.int64), np.zeros(3, np.int64), wrong,
                 np.full(3, -1, np.int64))
    assert col.total == 1 and col.hazards[0].kind == HazardKind.MISSING


def test_streams_checked_against_another_target_are_a_mismatch(roomy):
    prog, s = roomy
    hazards = find_hazards(dataclasses.replace(s, target="tiny"), F1, prog)
    assert any(h.kind == HazardKind.MISMATCH and "scheduled for target 'tiny'" in h.message for h in hazards)
