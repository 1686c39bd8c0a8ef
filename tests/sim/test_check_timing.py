"""The checker derives the timing contract itself (`fhec.sim.check_timing`), so that a
bug in the schedulers' `op_timing` cannot hide from it: both derivations agree on
every shipped target, and a scheduler fed wrong timing is caught."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest

import fhec.backends.streams as streams_mod
from fhec.backends.streams import OpTiming, StreamOp, op_timing
from fhec.backends.target import Target, list_targets, load_target
from fhec.ir.limb_ops import LimbOp
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import StreamHazardError, check_streams, find_hazards
from fhec.sim.check_timing import checker_timing

from tests.passes.test_offchip import he_program

TINY = load_target("tiny")
FIELDS = ("occupancy", "latency", "read_cycles", "write_cycles")


def _odd_target() -> Target:
    """tiny with numbers that do not divide evenly: a non-power-of-two throughput,
    a clock and bandwidth that make the transfer time and memory latency round up."""
    data = TINY.model_dump()
    data["name"] = "odd"
    data["clock_ghz"] = 1.1
    data["memory"] = {"bandwidth_gb_s": 30.0, "latency_ns": 123.4}
    data["cluster"]["units"][2]["throughput"] = 24  # mul
    data["cluster"]["units"][0]["latency"] = 7  # ntt
    return Target.model_validate(data)


def _assert_same(a: OpTiming, b: OpTiming, where: str) -> None:
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f"{where}: {f} {getattr(a, f)} != {getattr(b, f)}"
    assert a.xfer == b.xfer, where
    assert a.unit_kind == b.unit_kind, where


@pytest.mark.parametrize("target", list_targets() + [_odd_target()], ids=lambda t: t.name)
def test_both_derivations_agree(target):
    N = target.n_min
    while N <= target.n_max:
        _assert_same(checker_timing(target, N), op_timing(target, N), f"{target.name} N={N}")
        N *= 2


def test_checker_timing_hand_values():
    """F1 at N = 2^14 (docs/isa.md): 128-cycle occupancy, NTT latency 15 + 128,
    AUT 14 + 2*128, 64-cycle transfers, 200-cycle memory latency."""
    tm = checker_timing(load_target("f1"), 2**14)
    assert tm.occupancy[LimbOp.MUL] == 128
    assert tm.latency[LimbOp.NTT] == 15 + 128
    assert tm.latency[LimbOp.AUT] == 14 + 2 * 128
    assert tm.xfer == 64
    assert (tm.latency[StreamOp.LOAD], tm.write_cycles[StreamOp.LOAD], tm.read_cycles[StreamOp.LOAD]) == (200, 64, 0)
    assert (tm.latency[StreamOp.STORE], tm.read_cycles[StreamOp.STORE], tm.write_cycles[StreamOp.STORE]) == (64, 64, 0)


def _edit(tm: OpTiming, field: str, ops, delta: int) -> OpTiming:
    a = getattr(tm, field).copy()
    a[list(ops)] += delta
    changes = {field: a}
    if field == "occupancy" and StreamOp.LOAD in ops:
        changes["xfer"] = tm.xfer + delta
    return dataclasses.replace(tm, **changes)


FU = [int(op) for op in LimbOp]
MEM = [int(StreamOp.LOAD), int(StreamOp.STORE)]
BUGS = {
    "occupancy one short": ("occupancy", FU, -1),
    "latency one short": ("latency", FU, -1),
    "memory latency halved": ("latency", [int(StreamOp.LOAD)], -100),
    "transfers one short": ("occupancy", MEM, -1),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_wrong_scheduler_timing_is_caught(monkeypatch, bug):
    """Every binding of `op_timing` in fhec (the schedulers', the simulators') returns a
    wrong table; the streams then break the true contract and the checker must say so."""
    field, ops, delta = BUGS[bug]
    real = streams_mod.op_timing

    def wrong(target, N):
        return _edit(real(target, N), field, ops, delta)

    for name, mod in list(sys.modules.items()):
        if name.startswith("fhec") and getattr(mod, "op_timing", None) is real:
            monkeypatch.setattr(mod, "op_timing", wrong)
    prog = he_program(N=2**10, L=4, method="bv", ops=("mul", "rot"), chains=2)
    streams = schedule_cycles(schedule_offchip(prog, TINY), TINY)
    assert find_hazards(streams, TINY, prog)
    with pytest.raises(StreamHazardError):
        check_streams(streams, TINY, prog)


def test_right_scheduler_timing_is_clean():
    """The control for the test above: the same program with the true timing."""
    prog = he_program(N=2**10, L=4, method="bv", ops=("mul", "rot"), chains=2)
    check_streams(schedule_cycles(schedule_offchip(prog, TINY), TINY), TINY, prog)
