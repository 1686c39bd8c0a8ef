"""Off-chip data-movement scheduling (F1 §4.3): validity of every DataSchedule, traffic
classification, compulsory traffic when data fits, Belady vs LRU.

`random_program` and `he_program` are reused by the other scheduling tests.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fhec
from fhec.backends.target import load_target
from fhec.errors import InvalidArgumentError, TargetError
from fhec.ir.limb import LimbOp, LimbProgramBuilder, RVecClass
from fhec.ir.limb_ops import ARITY, IS_LOADED
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.analysis.traffic import compulsory_traffic
from fhec.ir.schedule import Event, Traffic
from fhec.passes.offchip import schedule_offchip
from fhec.ring.primes import ntt_primes

TINY = load_target("tiny")
F1 = load_target("f1")


# --- programs -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _moduli(N: int, count: int) -> tuple[int, ...]:
    return ntt_primes(N, 30, count)


@st.composite
def random_program(draw, N: int | None = None, max_instructions: int = 60, shuffle_prio: bool | None = None):
    """A random valid limb program: loaded rvecs of every class, random ops over them,
    a few OUTPUT rvecs, and (optionally) priorities that differ from array order."""
    N = N or draw(st.sampled_from([16, 64, 256]))
    nmod = draw(st.integers(1, 3))
    b = LimbProgramBuilder(N, 32, _moduli(N, nmod))
    pool: list[int] = []
    for cls in (RVecClass.INPUT, RVecClass.KSH, RVecClass.CONST):
        name = b.add_name(cls, cls.name.lower())
        for j in range(draw(st.integers(1 if cls == RVecClass.INPUT else 0, 4))):
            tag = {RVecClass.INPUT: [name, 0, j], RVecClass.KSH: [name, 0, 0, j], RVecClass.CONST: [name, j]}[cls]
            pool += b.new_rvecs(cls, draw(st.integers(0, nmod - 1)), tag).tolist()
    consts = b.add_constants([1, 3]).tolist()
    n = draw(st.integers(1, max_instructions))
    outs = draw(st.integers(1, 3))
    out_name = b.add_name(RVecClass.OUTPUT, "out")
    for i in range(n):
        op = LimbOp(draw(st.sampled_from(list(LimbOp))))
        s0 = draw(st.sampled_from(pool))
        m = int(b.rvec_mod([s0])[0])
        if op in (LimbOp.NTT, LimbOp.BCONV):
            m = draw(st.integers(0, nmod - 1))
        s1 = -1
        if ARITY[op] == 2:
            same = [r for r in pool if int(b.rvec_mod([r])[0]) == m]
            s1 = draw(st.sampled_from(same))
        imm = -1
        if op == LimbOp.AUT:
            imm = 2 * draw(st.integers(0, N - 1)) + 1
        elif op in (LimbOp.MUL_CONST, LimbOp.BCONV, LimbOp.ADD_CONST):
            imm = consts[draw(st.integers(0, 1))]
        if i >= n - outs:
            dst = int(b.new_rvecs(RVecClass.OUTPUT, m, [out_name, 0, i])[0])
            b.emit(op, dst, s0, s1, mod=m, imm=imm)
        else:
            dst = int(b.emit_new(op, s0, s1, mod=m, imm=imm)[0])
            pool.append(dst)
    prog = b.build()
    if shuffle_prio is None:
        shuffle_prio = draw(st.booleans())
    if shuffle_prio:
        prio = np.array(draw(st.permutations(range(len(prog)))), dtype=np.int32)
        prog = dataclasses.replace(prog, prio=prio)
    return prog


def he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=1):
    """A realistic program from the lowering: multiplies / rotations of `chains` ciphertexts."""
    params = fhec.CKKSParams(N=N, levels=L - 1, scale_bits=28, word_bits=32, special_primes=2, security=None)
    em = LimbEmitter(params)
    xs = [em.input_rvecs(f"x{i}", 2, L) for i in range(chains)]
    y = em.input_rvecs("y", 2, L)
    for op in ops:
        if op == "mul":
            xs = [em.relinearize(em.multiply(x, y), "relin", params.top_level, method) for x in xs]
        elif op == "rot":
            xs = [em.rotate(x, 5, "rot", params.top_level, method) for x in xs]
        elif op == "add":
            xs = [em.add(x, y) for x in xs]
    prog, _ = finalize_outputs(em, {f"z{i}": x for i, x in enumerate(xs)})
    return prog


# --- an independent replay of a DataSchedule ----------------------------------------------------


def replay(ds) -> None:
    """Assert that `ds` is a valid data schedule of its program: slots in range, every
    operand resident in the slot named when read, dependences respected, loads only of
    values that exist off chip, every instruction once, every OUTPUT stored once."""
    p = ds.program
    holds = {}  # slot -> rvec
    where = {}  # rvec -> slot
    offchip = set(np.flatnonzero(IS_LOADED[p.rvec_class]).tolist())
    computed = set()
    done = np.zeros(len(p), dtype=int)
    stores = {}
    for k, a, s, s0, s1 in zip(ds.kind.tolist(), ds.arg.tolist(), ds.slot.tolist(),
                              ds.src0_slot.tolist(), ds.src1_slot.tolist()):
        assert 0 <= s < ds.slots
        if k == Event.LOAD:
            assert a in offchip, f"load of %{a}, which is not off chip"
            holds[s] = a
            where[a] = s
        elif k == Event.STORE:
            assert holds.get(s) == a, f"store of %{a} from slot {s}, which holds {holds.get(s)}"
            offchip.add(a)
            stores[a] = stores.get(a, 0) + 1
        else:
            i = a
            for src, slot in ((p.src0[i], s0), (p.src1[i], s1)):
                if src < 0:
                    assert slot == -1
                    continue
                assert holds.get(slot) == src, f"instruction {i} reads %{src} from slot {slot} holding {holds.get(slot)}"
                assert src in offchip or src in computed
            assert s not in (s0, s1)
            holds[s] = int(p.dst[i])
            where[int(p.dst[i])] = s
            computed.add(int(p.dst[i]))
            done[i] += 1
    assert (done == 1).all()
    outputs = p.rvec_ids(RVecClass.OUTPUT).tolist()
    assert all(stores.get(r, 0) == 1 for r in outputs)
    # only outputs and intermediates are stored, each at most once (SSA)
    assert all(p.rvec_class[r] in (RVecClass.OUTPUT, RVecClass.INTERMEDIATE) and c == 1 for r, c in stores.items())
    # bytes add up
    counts = ds.counts()
    assert ds.traffic.total == (counts["LOAD"] + counts["STORE"]) * p.rvec_bytes


# --- tests ----------------------------------------------------------------------------------------


@given(prog=random_program(), slots=st.integers(3, 40), policy=st.sampled_from(["belady", "lru"]))
def test_every_schedule_is_valid(prog, slots, policy):
    ds = schedule_offchip(prog, TINY, policy=policy, capacity_bytes=slots * prog.rvec_bytes)
    replay(ds)
    assert ds.peak_slots <= slots
    comp = compulsory_traffic(prog)
    assert ds.traffic.compulsory == comp.total
    assert ds.traffic.total >= comp.total


@given(prog=random_program(), policy=st.sampled_from(["belady", "lru"]))
def test_traffic_is_compulsory_when_everything_fits(prog, policy):
    ds = schedule_offchip(prog, TINY, policy=policy, capacity_bytes=(prog.num_rvecs + 3) * prog.rvec_bytes)
    replay(ds)
    assert ds.traffic == compulsory_traffic(prog)
    assert ds.traffic.noncompulsory == 0


@pytest.mark.parametrize("method", ["bv", "hybrid"])
def test_he_program_fits_f1_with_compulsory_traffic(method):
    prog = he_program(N=2**10, L=4, method=method, ops=("mul", "rot", "add"), chains=2)
    ds = schedule_offchip(prog, F1)
    replay(ds)
    assert ds.traffic == compulsory_traffic(prog)


def test_compulsory_traffic_hand_count():
    """BV multiply + relinearize at L limbs: inputs 2 x 2L rvecs, KSH 2 L^2, output 2L."""
    L, N = 4, 2**10
    prog = he_program(N=N, L=L, method="bv", ops=("mul",))
    b = N * 4
    assert compulsory_traffic(prog) == Traffic(
        ksh_compulsory=2 * L * L * b, input_compulsory=4 * L * b, output_compulsory=2 * L * b
    )


def test_spills_are_classified():
    prog = he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    ds = schedule_offchip(prog, TINY)  # 16 slots
    replay(ds)
    t = ds.traffic
    assert t.compulsory == compulsory_traffic(prog).total
    assert t.intermediate_stores > 0 and t.intermediate_loads > 0
    # replay() checked that every fill reads a value spilled before; one spill may feed several fills
    assert t.as_dict()["total"] == t.total == t.compulsory + t.noncompulsory


@pytest.mark.parametrize("N", [512, 1024, 2048])
@pytest.mark.parametrize("ops", [("mul", "mul"), ("rot", "mul")])
def test_belady_moves_less_than_lru(N, ops):
    prog = he_program(N=N, L=4, method="bv", ops=ops, chains=2)
    bel = schedule_offchip(prog, TINY, policy="belady")
    lru = schedule_offchip(prog, TINY, policy="lru")
    replay(bel)
    replay(lru)
    assert bel.traffic.total < lru.traffic.total


def test_priorities_order_the_schedule():
    """With room for everything, instructions issue in priority order."""
    prog = he_program(N=2**10, L=3, method="bv", ops=("mul",))
    ds = schedule_offchip(prog, F1)
    issued = ds.arg[ds.kind == Event.COMPUTE]
    assert np.array_equal(issued, np.arange(len(prog)))


def test_errors():
    prog = he_program(N=2**10, L=2, method="bv", ops=("add",))
    with pytest.raises(InvalidArgumentError, match="policy"):
        schedule_offchip(prog, TINY, policy="fifo")
    with pytest.raises(TargetError, match="at least 3"):
        schedule_offchip(prog, TINY, capacity_bytes=2 * prog.rvec_bytes)
    big = he_program(N=2**13, L=2, method="bv", ops=("add",))
    with pytest.raises(TargetError, match="N = 8192"):
        schedule_offchip(big, TINY)


def test_text_and_repr():
    prog = he_program(N=2**10, L=2, method="bv", ops=("mul",))
    ds = schedule_offchip(prog, TINY)
    text = ds.text(limit=5)
    assert "LOAD" in text and "more" in text
    assert "belady" in repr(ds)


def _swings_with_late_hint(blocks: int):
    """From one input s, `blocks` times: a = s+s, b = s·a, c = a+b, d = c·s, e = a·b,
    f = c+d, s = e·f; then out = s·k. Each block needs 4 slots at its peak (s, a, b, c)
    and 1 between blocks, and the hint limb k is read only at the end."""
    N = 64
    b = LimbProgramBuilder(N, 32, _moduli(N, 1))
    x, kname, o = (b.add_name(c, c.name.lower()) for c in (RVecClass.INPUT, RVecClass.KSH, RVecClass.OUTPUT))
    k = int(b.new_rvecs(RVecClass.KSH, 0, [kname, 0, 0, 0])[0])
    s = int(b.new_rvecs(RVecClass.INPUT, 0, [x, 0, 0])[0])

    def op(code, u, v):
        return int(b.emit_new(code, u, v, mod=0)[0])

    for _ in range(blocks):
        a = op(LimbOp.ADD, s, s)
        bb = op(LimbOp.MUL, s, a)
        c = op(LimbOp.ADD, a, bb)
        d = op(LimbOp.MUL, c, s)
        e = op(LimbOp.MUL, a, bb)
        f = op(LimbOp.ADD, c, d)
        s = op(LimbOp.MUL, e, f)
    out = int(b.new_rvecs(RVecClass.OUTPUT, 0, [o, 0, 0])[0])
    b.emit(LimbOp.MUL, out, s, k, mod=0)
    return b.build(), k


def test_prefetch_does_no_harm():
    """A value whose prefetch was wasted (evicted unread) is prefetched again only if that
    does no harm: the hint, read last, is not loaded into the slots every block frees and
    evicted at every block's peak (as filling every free slot did: once per block), but at
    most twice."""
    prog, k = _swings_with_late_hint(blocks=20)
    for reserve in (0.0, 0.25):
        ds = schedule_offchip(prog, TINY, capacity_bytes=4 * prog.rvec_bytes, prefetch_reserve=reserve)
        replay(ds)
        assert int(np.count_nonzero((ds.kind == Event.LOAD) & (ds.arg == k))) <= 2


@given(prog=random_program(), slots=st.integers(3, 40), seed=st.integers(0, 2**16))
def test_a_reserve_per_instruction_gives_valid_schedules_and_a_uniform_one_the_float_schedule(prog, slots, seed):
    """`prefetch_reserve` may give each instruction its own fraction (the pipeline gives a
    bootstrap's stages their own): every such schedule is valid, and an array of one value
    schedules exactly as that value does."""
    cap = slots * prog.rvec_bytes
    fractions = np.random.default_rng(seed).choice([0.0, 0.125, 0.25, 0.5], size=len(prog))
    replay(schedule_offchip(prog, TINY, capacity_bytes=cap, prefetch_reserve=fractions))
    one = schedule_offchip(prog, TINY, capacity_bytes=cap, prefetch_reserve=0.25)
    many = schedule_offchip(prog, TINY, capacity_bytes=cap, prefetch_reserve=np.full(len(prog), 0.25))
    for col in ("kind", "arg", "slot"):
        assert np.array_equal(getattr(one, col), getattr(many, col)), col


def test_a_reserve_per_instruction_is_checked():
    prog = he_program(N=2**10, L=2, method="bv", ops=("add",))
    with pytest.raises(InvalidArgumentError, match="one per instruction"):
        schedule_offchip(prog, TINY, prefetch_reserve=np.zeros(len(prog) + 1))
    with pytest.raises(InvalidArgumentError, match=r"\[0, 1\)"):
        schedule_offchip(prog, TINY, prefetch_reserve=np.full(len(prog), 1.0))
    with pytest.raises(InvalidArgumentError, match=r"\[0, 1\)"):
        schedule_offchip(prog, TINY, prefetch_reserve=-0.1)


def test_the_schedulers_name_what_they_take():
    import fhec
    from fhec.passes.cycle import schedule_cycles

    p = fhec.Program("a", fhec.CKKSParams(N=2**10, levels=1, security=None))
    x = p.input("x")
    p.output("y", x + x)
    with pytest.raises(InvalidArgumentError, match=r"fhec.lower\(p\).limb"):
        schedule_offchip(fhec.lower(p), TINY)
    with pytest.raises(InvalidArgumentError, match="DataSchedule"):
        schedule_cycles(fhec.lower(p).limb, TINY)
