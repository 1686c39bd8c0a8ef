"""The checker re-verifies the on-chip data path on its own: register files, network
transfers, bank and register-file ports (fhec.sim.check_onchip). Emitted schedules are
clean; hand-broken register plans are caught with the right kind of hazard."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fhec
from fhec.backends.onchip import TransferKind
from fhec.backends.streams import StreamOp, op_timing
from fhec.backends.target import load_target
from fhec.ir.limb_ops import RVecClass
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import HazardKind, find_hazards
from fhec.verify_run import run_compiled_checked

from tests.passes.test_offchip import he_program

TINY = load_target("tiny")


@pytest.fixture(scope="module")
def pressed():
    """A BV multiply + rotation on tiny at N = 4096: 3 registers per cluster, so values are
    written back and filled again."""
    prog = he_program(N=2**12, L=3, method="bv", ops=("mul", "rot"), chains=2)
    s = schedule_cycles(schedule_offchip(prog, TINY), TINY)
    assert find_hazards(s, TINY, prog) == []
    return prog, s


def kinds(streams, program):
    return {h.kind for h in find_hazards(streams, TINY, program, limit=None)}


def with_transfers(s, **columns):
    tr = dataclasses.replace(s.onchip.transfers, **columns)
    return dataclasses.replace(s, onchip=dataclasses.replace(s.onchip, transfers=tr))


def test_register_pressure_forces_write_backs_on_tiny(pressed):
    prog, s = pressed
    counts = s.onchip.transfers.counts()
    outputs = int(np.count_nonzero(prog.rvec_class == RVecClass.OUTPUT))
    # more write-backs than the outputs' own (one each, before their store): evictions
    assert counts["writeback"] > outputs
    assert counts["fill"] > 0 and s.onchip.registers == 3


def test_register_pressure_still_computes_the_right_answer():
    params = fhec.CKKSParams(N=2**12, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("pressed", params)
    x, y = p.input("x"), p.input("y")
    p.output("z", (x * y + x).rotate(1) * y)
    c = fhec.compile(p, "tiny")
    assert c.streams.onchip.transfers.counts()["writeback"] > 2
    rng = np.random.default_rng(1)
    run_compiled_checked(c, {"x": rng.uniform(-1, 1, 2048), "y": rng.uniform(-1, 1, 2048)}, seed=3, check=True)


def test_register_outside_the_register_file(pressed):
    prog, s = pressed
    fu = np.flatnonzero(s.onchip.reg >= 0)
    reg = s.onchip.reg.copy()
    reg[fu[0]] = s.onchip.registers * TINY.cluster.count  # past the last register of the chip
    broken = dataclasses.replace(s, onchip=dataclasses.replace(s.onchip, reg=reg))
    assert HazardKind.CAPACITY in kinds(broken, prog)


def test_result_into_a_register_still_being_read(pressed):
    prog, s = pressed
    oc = s.onchip
    tm = op_timing(TINY, prog.N)
    fu = np.flatnonzero(oc.reg >= 0)
    land = s.cycle[fu] + tm.latency[s.op[fu]]
    for e in fu[oc.reg0[fu] >= 0]:
        # another result of the same cluster landing while e still reads its register
        same = fu[(oc.reg[fu] // oc.registers == oc.reg0[e] // oc.registers) & (land >= s.cycle[e])
                  & (land < s.cycle[e] + tm.read_cycles[s.op[e]]) & (fu != e) & (oc.reg[fu] != oc.reg0[e])]
        if len(same):
            reg = oc.reg.copy()
            reg[same[0]] = oc.reg0[e]
            broken = dataclasses.replace(s, onchip=dataclasses.replace(oc, reg=reg))
            assert HazardKind.CLOBBER in kinds(broken, prog)
            return
    raise AssertionError("no register read with another result of its cluster landing during it")


def test_streamed_operand_too_early_or_too_late(pressed):
    prog, s = pressed
    tr = s.onchip.transfers
    j = int(np.flatnonzero((tr.kind == TransferKind.FILL) & (tr.entry >= 0))[0])
    cycle = tr.cycle.copy()
    cycle[j] = s.cycle[tr.entry[j]]  # issued when its reader starts: the unit reads ahead of it
    assert HazardKind.READ_BEFORE_READY in kinds(with_transfers(s, cycle=cycle), prog)
    entry = tr.entry.copy()
    entry[j] = -1  # the operand is streamed by nothing
    assert HazardKind.MISMATCH in kinds(with_transfers(s, entry=entry), prog)


def test_network_port_over_subscribed(pressed):
    prog, s = pressed
    tr = s.onchip.transfers
    fills = np.flatnonzero(tr.kind == TransferKind.FILL)
    # two fills into one cluster at the same cycle: one scratchpad->cluster port
    a, b = fills[0], next(f for f in fills[1:] if tr.cluster[f] == tr.cluster[fills[0]])
    cycle = tr.cycle.copy()
    cycle[b] = cycle[a]
    assert HazardKind.PORT in kinds(with_transfers(s, cycle=cycle), prog)


def test_write_back_of_a_value_not_in_its_register(pressed):
    prog, s = pressed
    tr = s.onchip.transfers
    wb = np.flatnonzero(tr.kind == TransferKind.WRITEBACK)
    value = tr.value.copy()
    other = int(prog.dst[0])
    value[wb[0]] = other if other != value[wb[0]] else int(prog.dst[1])
    assert kinds(with_transfers(s, value=value), prog) & {HazardKind.CLOBBER, HazardKind.MISSING,
                                                            HazardKind.READ_BEFORE_READY}


def test_plan_missing_on_a_target_that_models_registers(pressed):
    prog, s = pressed
    assert HazardKind.MISMATCH in kinds(dataclasses.replace(s, onchip=None), prog)


def test_f1_datapath_fu_reads_come_from_registers_or_streams():
    f1 = load_target("f1-datapath")
    prog = he_program(N=2**12, L=4, method="bv", ops=("mul", "rot"), chains=4)
    s = schedule_cycles(schedule_offchip(prog, f1), f1)
    assert find_hazards(s, f1, prog) == []
    fu = s.op < StreamOp.LOAD
    tr = s.onchip.transfers
    streamed = np.zeros(len(s), dtype=np.int64)
    np.add.at(streamed, tr.entry[tr.entry >= 0], 1)
    # some operands chain through a register file, some cross the network
    assert (s.onchip.reg0[fu] >= 0).any() and streamed[fu].any()
