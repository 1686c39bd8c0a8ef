"""The load-aware lower bound (`fhec.analysis.bounds.load_aware_bound`): hand counts, the
load order it assumes, and that no schedule ever beats it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fhec.analysis.bounds import load_aware_bound, load_tails, lower_bounds, transfers_in_flight
from fhec.backends.streams import StreamOp, op_timing
from fhec.backends.target import load_target
from fhec.ir.limb import LimbOp, LimbProgramBuilder, RVecClass
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.ring.primes import ntt_primes
from fhec.sim.check import check_streams

from tests.passes.test_offchip import he_program, random_program

F1 = load_target("f1")
TINY = load_target("tiny")
N = 2**10


def _builder():
    b = LimbProgramBuilder(N, 32, ntt_primes(N, 30, 1))
    return b, b.add_name(RVecClass.INPUT, "x"), b.add_name(RVecClass.OUTPUT, "y")


def _independent_ntts(k: int):
    """k inputs, each transformed once into its own output."""
    b, x, y = _builder()
    for i in range(k):
        src = b.new_rvecs(RVecClass.INPUT, 0, [x, 0, i])
        b.emit(LimbOp.NTT, b.new_rvecs(RVecClass.OUTPUT, 0, [y, 0, i]), src)
    return b.build()


def _one_long_chain(k: int, depth: int):
    """Input 0 starts a chain of `depth` NTTs; inputs 1..k-1 are each added to it once at
    the end, so they have short tails and input 0 a long one."""
    b, x, y = _builder()
    xs = [int(b.new_rvecs(RVecClass.INPUT, 0, [x, 0, i])[0]) for i in range(k)]
    v = xs[0]
    for _ in range(depth):
        v = int(b.emit_new(LimbOp.NTT, v, mod=0)[0])
    for i in range(1, k):
        dst = b.new_rvecs(RVecClass.OUTPUT, 0, [y, 0, i]) if i == k - 1 else None
        if dst is None:
            v = int(b.emit_new(LimbOp.ADD, v, xs[i], mod=0)[0])
        else:
            b.emit(LimbOp.ADD, dst, v, xs[i])
    return b.build()


def _schedule(prog, target, **kw):
    s = schedule_cycles(schedule_offchip(prog, target, **kw), target)
    check_streams(s, target, prog)
    return s


def test_hand_count_independent_transforms():
    """k loads with equal tails: the last starts after k-1 transfers; then its NTT and
    the NTT's output store (the longer of the NTT's write and the store) remain."""
    k = 12
    prog = _independent_ntts(k)
    tm = op_timing(F1, N)
    assert transfers_in_flight(F1, N) == 1
    ntt = int(LimbOp.NTT)
    tail = tm.latency[ntt] + max(tm.write_cycles[ntt], tm.latency[StreamOp.STORE])
    assert load_aware_bound(prog, F1) == (k - 1) * tm.xfer + tm.latency[StreamOp.LOAD] + tail
    assert _schedule(prog, F1).total_cycles >= load_aware_bound(prog, F1)


def test_longest_tail_is_loaded_first():
    """Jackson's rule: the value with the long chain behind it goes first, so the bound
    is its load plus its chain, not the last load plus the chain (which a schedule
    beats by loading input 0 first)."""
    k, depth = 40, 30
    prog = _one_long_chain(k, depth)
    tm = op_timing(F1, N)
    _, tails = load_tails(prog, F1)
    long_tail = tails.max()
    bound = load_aware_bound(prog, F1)
    assert bound == max(tm.latency[StreamOp.LOAD] + long_tail,
                        (k - 1) * tm.xfer + tm.latency[StreamOp.LOAD] + np.sort(tails)[0])
    s = _schedule(prog, F1)
    assert s.total_cycles >= bound
    assert s.total_cycles < (k - 1) * tm.xfer + tm.latency[StreamOp.LOAD] + long_tail


def test_serial_chain_is_load_aware_bound():
    """A chain of relinearized products whose hint is loaded before its first key switch
    can finish: the load-aware bound exceeds the compute, bandwidth and dependency bounds,
    and the schedule respects it."""
    prog = he_program(N=2**12, L=6, method="bv", ops=("mul",) * 5, chains=1)
    b = lower_bounds(prog, F1)
    assert b.load_aware_cycles > max(b.compute_cycles, b.bandwidth_cycles, b.dependency_cycles)
    assert b.binding == "load-aware"
    assert _schedule(prog, F1).total_cycles >= b.cycles


@given(prog=random_program(), slots=st.integers(3, 40), policy=st.sampled_from(["belady", "lru"]))
def test_no_tiny_schedule_beats_the_load_aware_bound(prog, slots, policy):
    s = _schedule(prog, TINY, policy=policy, capacity_bytes=slots * prog.rvec_bytes)
    assert s.total_cycles >= load_aware_bound(prog, TINY)


@given(prog=random_program(N=1024, max_instructions=40), reserve=st.sampled_from([0.0, 0.25]))
def test_no_f1_schedule_beats_the_load_aware_bound(prog, reserve):
    s = _schedule(prog, F1, prefetch_reserve=reserve)
    assert s.total_cycles >= load_aware_bound(prog, F1)


def test_a_capped_count_gives_a_weaker_bound(monkeypatch):
    """Past `DESCENDANT_SWEEP_STEPS`, sources keep only their critical-path tail: the bound
    can only drop, so it stays a lower bound."""
    import fhec.analysis.bounds as bounds

    b, x, y = _builder()
    src = b.new_rvecs(RVecClass.INPUT, 0, [x, 0, 0])
    for i in range(400):  # one input, 400 transforms of it, 400 output stores behind it
        b.emit(LimbOp.NTT, b.new_rvecs(RVecClass.OUTPUT, 0, [y, 0, i]), src)
    prog = b.build()
    full = load_aware_bound(prog, F1)
    monkeypatch.setattr(bounds, "DESCENDANT_SWEEP_STEPS", -1)  # not even the first 64 sources
    capped = load_aware_bound(prog, F1)
    assert 0 < capped < full


def test_a_slow_key_generator_is_a_bound_the_schedule_meets():
    # f1 generating its key halves on chip at 16 words per cycle: the generator, not the
    # memory channel, sets the time, and the report names it (QA: "5.83x the load-aware bound")
    f1 = load_target("f1")
    slow = f1.model_copy(update={"keys": f1.keys.model_copy(update={"uniform_half": "generated",
                                                                     "generator_words_per_cycle": 16}),
                                 "register_file": None, "network": None,
                                 "scratchpad": f1.scratchpad.model_copy(update={"banks": None,
                                                                                "port_bytes_per_cycle": None})})
    prog = he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    limb = prog.limb if hasattr(prog, "limb") else prog
    b = lower_bounds(limb, slow)
    generated = slow.generated_rvecs(limb)
    read = np.zeros(limb.num_rvecs, dtype=bool)
    read[limb.src0[limb.src0 >= 0]] = True
    read[limb.src1[limb.src1 >= 0]] = True
    assert b.generator_cycles == np.count_nonzero(read & generated) * slow.generator_cycles(limb.N) > 0
    assert b.binding == "generator"
    s = schedule_cycles(schedule_offchip(limb, slow), slow)
    assert s.total_cycles >= b.generator_cycles
    assert lower_bounds(limb, f1).generator_cycles == 0.0
