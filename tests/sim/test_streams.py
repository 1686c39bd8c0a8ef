"""Executing the emitted per-unit streams gives OUTPUT words bit-identical to the limb-level
executor (and so to the eager evaluator), on tiny (which spills) and f1; a wrong schedule
gives a wrong answer."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fhec
from fhec.backends.streams import StreamOp, Unit
from fhec.backends.target import load_target
from fhec.errors import InternalError
from fhec.ir.limb_ops import IS_LOADED
from fhec.passes.cycle import schedule_cycles
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.passes.offchip import schedule_offchip
from fhec.schemes.keys import RELIN, galois_for_rotation
from fhec.sim.bind import loaded_values
from fhec.sim.check import StreamHazardError, find_hazards
from fhec.sim.functional import execute
from fhec.sim.streams import execute_streams

from tests.passes.test_offchip import random_program
from tests.sim.test_check import slots_only

TINY = load_target("tiny")
TINY_SLOTS = slots_only(TINY)  # units read and write slots: the mutations below break slots
F1 = load_target("f1")
TARGETS = {"tiny": TINY, "f1": F1, "f1-datapath": load_target("f1-datapath")}  # plain and on-chip kernels


def random_loaded(prog, seed):
    rng = np.random.default_rng(seed)
    q = prog.moduli_array[prog.rvec_mod]
    return {int(r): rng.integers(0, q[r], prog.N, dtype=np.uint64) for r in np.flatnonzero(IS_LOADED[prog.rvec_class])}


def run(prog, target, loaded, **kw):
    ds = schedule_offchip(prog, target, **kw)
    s = schedule_cycles(ds, target)
    return s, execute_streams(s, target, prog, loaded)


def assert_same(got, want):
    assert got.keys() == want.keys()
    for r in want:
        assert np.array_equal(got[r], want[r]), f"output %{r} differs"


@given(prog=random_program(), slots=st.integers(3, 24), policy=st.sampled_from(["belady", "lru"]),
       seed=st.integers(0, 2**32 - 1))
def test_random_programs_on_tiny(prog, slots, policy, seed):
    loaded = random_loaded(prog, seed)
    _, got = run(prog, TINY, loaded, policy=policy, capacity_bytes=slots * prog.rvec_bytes)
    assert_same(got, execute(prog, loaded))


@given(prog=random_program(N=1024, max_instructions=30), seed=st.integers(0, 2**32 - 1))
def test_random_programs_on_f1(prog, seed):
    loaded = random_loaded(prog, seed)
    _, got = run(prog, F1, loaded)
    assert_same(got, execute(prog, loaded))


# --- HE programs on real ciphertexts --------------------------------------------------------------

N_HE = 2**10  # the smallest N f1 supports; tiny's scratchpad holds 16 RVecs at this N


@functools.lru_cache(maxsize=None)
def he_setup():
    params = fhec.CKKSParams(N=N_HE, levels=3, scale_bits=28, word_bits=32, special_primes=2, security=None)
    keys = fhec.keygen(params, rotations=[1], seed=3, keyswitch="both")
    rng = np.random.default_rng(1)
    cts = {n: fhec.encrypt(keys, rng.uniform(-1, 1, params.slots), seed=s) for n, s in (("x", 5), ("y", 6))}
    pt = fhec.encode(params, rng.uniform(-1, 1, params.slots))
    g = galois_for_rotation(params, 1)
    sources = {f"relin-{m}": (RELIN, m) for m in ("bv", "hybrid")} | {f"rot-{m}": (g, m) for m in ("bv", "hybrid")}
    return params, keys, cts, pt, g, sources


OPS = ("add", "sub", "mul-bv", "mul-hybrid", "rot-bv", "rot-hybrid", "rescale", "mul_plain", "neg")


def build_he(ops):
    """A program of HE ops over x, y and their results (each op picks two pool entries at
    the same level); returns the program and its loaded values."""
    params, keys, cts, pt, g, sources = he_setup()
    em = LimbEmitter(params)
    L = params.max_limbs
    pool = [(em.input_rvecs(n, 2, L), params.top_level) for n in ("x", "y")]
    for op, i, j in ops:
        a, level = pool[i % len(pool)]
        b, level_b = pool[j % len(pool)]
        if level_b != level:
            b = a
        if op in ("add", "sub"):
            r = em.add(a, b, subtract=op == "sub")
        elif op == "neg":
            r = em.negate(a)
        elif op.startswith("mul-"):
            method = op[4:]
            r = em.relinearize(em.multiply(a, b), f"relin-{method}", level, method)
        elif op.startswith("rot-"):
            method = op[4:]
            r = em.rotate(a, g, f"rot-{method}", level, method)
        elif op == "mul_plain":
            r = em.mul_plain(a, em.const_rvecs("w", L)[: a.shape[1]])
        else:  # rescale
            if level == 0:
                continue
            r, level = em.divide_last(a, None), level - 1
        pool.append((r, level))
    prog, _ = finalize_outputs(em, {"last": pool[-1][0], "first": pool[2][0] if len(pool) > 2 else pool[0][0]})
    loaded = loaded_values(prog, cts, keys, sources, {"w": pt})
    return prog, loaded


@settings(max_examples=10)
@given(ops=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=4),
       target=st.sampled_from(sorted(TARGETS)), policy=st.sampled_from(["belady", "lru"]))
def test_he_programs_are_bit_identical(ops, target, policy):
    prog, loaded = build_he(ops)
    s, got = run(prog, TARGETS[target], loaded, policy=policy)
    assert find_hazards(s, TARGETS[target], prog) == []
    assert_same(got, execute(prog, loaded))


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("method", ["bv", "hybrid"])
def test_multiply_and_rotate_match_the_eager_evaluator(target, method):
    params, keys, cts, pt, g, sources = he_setup()
    em = LimbEmitter(params)
    x = em.input_rvecs("x", 2, params.max_limbs)
    y = em.input_rvecs("y", 2, params.max_limbs)
    z = em.relinearize(em.multiply(x, y), f"relin-{method}", params.top_level, method)
    r = em.rotate(z, g, f"rot-{method}", params.top_level, method)
    prog, final = finalize_outputs(em, {"r": r})
    s, got = run(prog, TARGETS[target], loaded_values(prog, cts, keys, sources, {}))
    ev = fhec.Evaluator(keys, keyswitch=method)
    want = ev.rotate(ev.multiply(cts["x"], cts["y"]), 1)
    words = np.stack([[got[int(v)] for v in row] for row in final["r"]])
    assert np.array_equal(words, want.data)


# --- wrong schedules, wrong answers ------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_schedule():
    prog, loaded = build_he([("mul-bv", 0, 1), ("rot-hybrid", 2, 0)])
    s, got = run(prog, TINY_SLOTS, loaded)
    want = execute(prog, loaded)
    assert_same(got, want)
    return prog, loaded, s, want


def test_a_register_plan_read_from_the_wrong_register_gives_a_wrong_answer():
    prog, loaded = build_he([("mul-bv", 0, 1), ("rot-hybrid", 2, 0)])
    s, got = run(prog, TINY, loaded)
    want = execute(prog, loaded)
    assert_same(got, want)
    oc = s.onchip
    e = np.flatnonzero(oc.reg0 >= 0)
    reg0 = oc.reg0.copy()
    K = oc.registers
    reg0[e] = (reg0[e] // K) * K + (reg0[e] % K + 1) % K  # every such read from the next register
    broken = dataclasses.replace(s, onchip=dataclasses.replace(oc, reg0=reg0))
    assert differs(execute_streams(broken, TINY, prog, loaded, checked=True), want)


def differs(got, want):
    return any(not np.array_equal(got[r], want[r]) for r in want)


def on_extra_unit(s, e, cycle_e):
    """Streams with entry e alone on an extra unit of its kind, issued at cycle_e."""
    u = s.units[s.unit[e]]
    extra = dataclasses.replace(s, units=s.units + (Unit("extra", u.kind, u.cluster, 99),))
    unit, cycle = s.unit.copy(), s.cycle.copy()
    unit[e], cycle[e] = len(extra.units) - 1, cycle_e
    return extra.replace_columns(unit=unit, cycle=cycle)


def test_reading_before_the_producer_lands_gives_a_wrong_answer(tiny_schedule):
    prog, loaded, s, want = tiny_schedule
    fu = np.flatnonzero(s.op < StreamOp.LOAD)
    writer = {int(prog.dst[s.tag[e]]): int(e) for e in fu}
    e = next(int(e) for e in fu[::-1] if int(prog.src0[s.tag[e]]) in writer)
    broken = on_extra_unit(s, e, int(s.cycle[writer[int(prog.src0[s.tag[e]])]]))
    assert differs(execute_streams(broken, TINY_SLOTS, prog, loaded, checked=True), want)


def test_swapped_source_slots_give_a_wrong_answer(tiny_schedule):
    prog, loaded, s, want = tiny_schedule
    e = int(np.flatnonzero(s.op == StreamOp.SUB)[0] if np.any(s.op == StreamOp.SUB)
            else np.flatnonzero(s.op == StreamOp.MUL)[0])
    src0, src1 = s.src0.copy(), s.src1.copy()
    src0[e], src1[e] = src1[e], src0[e]
    if s.op[e] == StreamOp.MUL:  # commutative: point it at another slot instead
        src1[e] = (src1[e] + 1) % s.slots
    assert differs(execute_streams(s.replace_columns(src0=src0, src1=src1), TINY_SLOTS, prog, loaded, checked=True), want)


def test_dropped_store_is_an_error(tiny_schedule):
    prog, loaded, s, _ = tiny_schedule
    out = int(prog.rvec_ids(fhec.ir.limb.RVecClass.OUTPUT)[0])
    keep = ~((s.op == StreamOp.STORE) & (s.dst == out))
    with pytest.raises(InternalError, match="never stored"):
        execute_streams(s.select(keep), TINY, prog, loaded, checked=True)


@given(data=st.data())
def test_clean_mutations_compute_the_right_answer(tiny_schedule, data):
    """Soundness of the checker: a hand-moved entry that the checker accepts still
    computes the right outputs."""
    prog, loaded, s, want = tiny_schedule
    e = data.draw(st.integers(0, len(s) - 1))
    shift = data.draw(st.integers(-300, 300))
    moved = on_extra_unit(s, e, max(0, int(s.cycle[e]) + shift))
    hazards = [h for h in find_hazards(moved, TINY, prog, limit=None) if h.kind.value != "wrong-unit"]
    if not hazards:
        assert_same(execute_streams(moved, TINY, prog, loaded), want)


def test_hazardous_streams_are_refused_before_they_run(tiny_schedule):
    # the executor replays the streams in the checker first: streams edited by hand or read
    # from altered files never run to a silently wrong result (a FhecError, not a crash)
    prog, loaded, s, _ = tiny_schedule
    e = int(np.flatnonzero(s.op == StreamOp.MUL)[0])
    src0, src1 = s.src0.copy(), s.src1.copy()
    src0[e], src1[e] = src1[e], (src1[e] + 1) % s.slots
    with pytest.raises(StreamHazardError) as info:
        execute_streams(s.replace_columns(src0=src0, src1=src1), TINY_SLOTS, prog, loaded)
    assert isinstance(info.value, fhec.FhecError)
