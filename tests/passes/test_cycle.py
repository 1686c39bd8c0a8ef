"""Cycle-level scheduling (F1 §4.4): every emitted schedule passes the independent
checker, never beats the lower bounds, stays close to them on compute-bound
microbenchmarks, and reproduces F1 Table 4's homomorphic-permutation row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fhec
from fhec.backends.streams import StreamOp, op_timing
from fhec.backends.target import load_target
from fhec.ir.limb import LimbOp, LimbProgramBuilder, RVecClass
from fhec.analysis.bounds import lower_bounds
from fhec.passes.cycle import schedule_cycles
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.analysis.traffic import compulsory_traffic
from fhec.ir.schedule import Event
from fhec.passes.offchip import schedule_offchip
from fhec.ring.primes import ntt_primes
from fhec.sim.check import check_streams

from tests.passes.test_offchip import he_program, random_program

TINY = load_target("tiny")
F1 = load_target("f1")  # the functional-unit model: every unit fed at its rate
F1_DATAPATH = load_target("f1-datapath")  # plus register files, crossbars and bank ports


def schedule(prog, target, **kw):
    ds = schedule_offchip(prog, target, **kw)
    return ds, schedule_cycles(ds, target)


def assert_within_bounds(prog, target, streams):
    b = lower_bounds(prog, target)
    assert streams.total_cycles >= b.cycles  # every bound: compute, bandwidth, dependency, load-aware


@given(prog=random_program(), slots=st.integers(3, 40), policy=st.sampled_from(["belady", "lru"]))
def test_tiny_schedules_pass_the_checker(prog, slots, policy):
    ds, s = schedule(prog, TINY, policy=policy, capacity_bytes=slots * prog.rvec_bytes)
    check_streams(s, TINY, prog)
    assert_within_bounds(prog, TINY, s)
    # the cycle scheduler adds no transfers
    assert int(np.count_nonzero(s.op == StreamOp.LOAD)) == ds.counts()["LOAD"]
    assert int(np.count_nonzero(s.op == StreamOp.STORE)) == ds.counts()["STORE"]


@given(prog=random_program(N=1024, max_instructions=30))
def test_f1_schedules_pass_the_checker(prog):
    _, s = schedule(prog, F1)
    check_streams(s, F1, prog)
    assert_within_bounds(prog, F1, s)


@pytest.mark.parametrize("target", [TINY, F1], ids=["tiny", "f1"])
@pytest.mark.parametrize("method", ["bv", "hybrid"])
def test_he_programs_pass_the_checker(target, method):
    prog = he_program(N=2**10, L=4, method=method, ops=("mul", "rot", "add"), chains=2)
    for policy in ("belady", "lru"):
        _, s = schedule(prog, target, policy=policy)
        check_streams(s, target, prog)
        assert_within_bounds(prog, target, s)


def test_lower_bounds_hand_count():
    prog = he_program(N=2**12, L=4, method="bv", ops=("rot",))
    b = lower_bounds(prog, F1)
    # BV rotation at L = 4: 4 INTT + 12 NTT on 16 NTT units, 32 cycles each at N = 4096
    assert b.per_kind["ntt"] == 16 * 32 / 16
    assert b.per_kind["aut"] == 8 * 32 / 16
    assert b.busiest_kind in ("ntt", "mul")
    assert b.bandwidth_cycles == compulsory_traffic(prog).total / 1024
    assert b.cycles == max(b.compute_cycles, b.bandwidth_cycles, b.dependency_cycles, b.load_aware_cycles)


def test_independent_work_spreads_over_clusters():
    N = 2**10
    b = LimbProgramBuilder(N, 32, ntt_primes(N, 30, 1))
    x = b.new_rvecs(RVecClass.INPUT, 0, [b.add_name(RVecClass.INPUT, "x"), 0, 0])
    out = b.add_name(RVecClass.OUTPUT, "y")
    for i in range(16):
        b.emit(LimbOp.NTT, b.new_rvecs(RVecClass.OUTPUT, 0, [out, 0, i]), x)
    prog = b.build()
    _, s = schedule(prog, F1)  # with the data path, the 16 reads of x share its bank's port
    check_streams(s, F1, prog)
    ntt_units = {int(u) for u, o in zip(s.unit, s.op) if o == StreamOp.NTT}
    assert {s.units[u].cluster for u in ntt_units} == set(range(16))
    assert len(set(s.cycle[s.op == StreamOp.NTT].tolist())) == 1  # all at once


def test_loads_move_as_early_as_capacity_allows():
    """With room on chip, the memory controller streams every load back to back from cycle 0."""
    prog = he_program(N=2**12, L=4, method="bv", ops=("rot", "rot"), chains=4)
    _, s = schedule(prog, F1)
    xfer = op_timing(F1, prog.N).xfer
    loads = np.sort(s.cycle[s.op == StreamOp.LOAD])
    assert np.array_equal(loads, xfer * np.arange(len(loads)))


def rotation_chains(N, L, chains, depth, method="bv"):
    params = fhec.CKKSParams(N=N, levels=L - 1, scale_bits=28, word_bits=32, security=None)
    em = LimbEmitter(params)
    xs = [em.input_rvecs(f"x{i}", 2, L) for i in range(chains)]
    for _ in range(depth):
        xs = [em.rotate(x, 5, "rot", params.top_level, method) for x in xs]
    return finalize_outputs(em, {f"z{i}": x for i, x in enumerate(xs)})[0]


def multiply_chains(N, L, chains, depth, method="bv"):
    params = fhec.CKKSParams(N=N, levels=L - 1, scale_bits=28, word_bits=32, security=None)
    em = LimbEmitter(params)
    xs = [em.input_rvecs(f"x{i}", 2, L) for i in range(chains)]
    y = em.input_rvecs("y", 2, L)
    for _ in range(depth):
        xs = [em.relinearize(em.multiply(x, y), "relin", params.top_level, method) for x in xs]
    return finalize_outputs(em, {f"z{i}": x for i, x in enumerate(xs)})[0]


def ratio_to_bound(prog, target=F1):
    ds, s = schedule(prog, target)
    assert ds.traffic.noncompulsory == 0  # everything on chip
    check_streams(s, target, prog)
    b = lower_bounds(prog, target)
    assert s.total_cycles >= b.cycles
    return s.total_cycles / b.cycles


@pytest.mark.parametrize("build", [rotation_chains, multiply_chains], ids=["rotate", "multiply"])
def test_compute_bound_n8192_within_1_3x_of_the_bound(build):
    # the functional units alone (docs/scheduling.md: on f1-datapath the ports bind)
    assert ratio_to_bound(build(2**13, 7, chains=8, depth=24)) <= 1.3


@pytest.mark.parametrize("build", [rotation_chains, multiply_chains], ids=["rotate", "multiply"])
def test_compute_bound_n16384_within_1_3x_of_the_bound(build):
    """A homomorphic rotation / multiply at N = 2^14, L = 14 (F1 Table 4's largest set),
    8 independent ciphertexts x 24 repetitions so the hints are reused from the scratchpad."""
    assert ratio_to_bound(build(2**14, 14, chains=8, depth=24)) <= 1.3


def reciprocal_throughput_ns(N, L, chains, d1=4, d2=8, target=F1):
    """Steady-state cycles per rotation: the growth in total cycles per added rotation."""
    cycles = {}
    for d in (d1, d2):
        prog = rotation_chains(N, L, chains, d)
        _, s = schedule(prog, target)
        cycles[d] = s.total_cycles
    return (cycles[d2] - cycles[d1]) / (chains * (d2 - d1)) / target.clock_ghz


# F1 Table 4, homomorphic permutation, ns: (N, log Q -> L 32-bit limbs, independent ciphertexts)
TABLE4_PERMUTATION = [(2**12, 4, 40.0, 16), (2**13, 7, 224.0, 8), (2**14, 14, 1680.0, 8)]


@pytest.mark.parametrize("N,L,paper,chains", TABLE4_PERMUTATION, ids=["N4096", "N8192", "N16384"])
def test_table4_homomorphic_permutation(N, L, paper, chains):
    """F1's functional units alone (f1) reproduce Table 4 (f1-datapath does not: docs/scheduling.md)."""
    assert abs(reciprocal_throughput_ns(N, L, chains) - paper) <= 0.25 * paper


@pytest.mark.parametrize("build", [rotation_chains, multiply_chains], ids=["rotate", "multiply"])
def test_f1_network_schedules_pass_the_checker_and_the_network_bound(build):
    prog = build(2**12, 4, chains=4, depth=3)
    ds, s = schedule(prog, F1_DATAPATH)
    check_streams(s, F1_DATAPATH, prog)
    b = lower_bounds(prog, F1_DATAPATH)
    assert b.network_cycles > 0 and s.total_cycles >= b.cycles


def test_bandwidth_bound_program_is_near_its_bound():
    """Many independent additions of fresh inputs: the off-chip channel is the bottleneck."""
    prog = he_program(N=2**12, L=4, method="bv", ops=("add",), chains=32)
    _, s = schedule(prog, F1)
    b = lower_bounds(prog, F1)
    assert b.bandwidth_cycles > b.compute_cycles
    assert b.cycles <= s.total_cycles <= 1.1 * b.cycles + op_timing(F1, prog.N).latency[StreamOp.LOAD] * 2


def test_streams_columns_describe_the_program():
    prog = he_program(N=2**10, L=2, method="bv", ops=("mul",))
    ds, s = schedule(prog, TINY)
    fu = s.op < StreamOp.LOAD
    assert np.array_equal(np.sort(s.tag[fu]), np.arange(len(prog)))
    assert np.array_equal(s.op[fu], prog.op[s.tag[fu]])
    assert np.array_equal(s.mod[fu], prog.mod[s.tag[fu]])
    assert (s.waits() >= 0).all()
    assert s.total_cycles > s.cycle.max()
    comp = ds.kind == Event.COMPUTE
    assert comp.sum() == fu.sum()
