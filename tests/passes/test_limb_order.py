"""Limb-major baby steps for double-hoisted transforms whose sums do not fit
(fhec/passes/limb_order.py): priorities change, nothing else, and values do not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fhec
from fhec.backends.target import load_target
from fhec.passes.limb_order import _baby_steps, limb_major_baby_steps
from fhec.pipeline import options_for, run_prefix
from fhec.verify_run import run_compiled_checked

OSIRIS_TINY = load_target("osiris-tiny")  # 128 KB: the matvec's 4 sums over Q·P do not fit
ROOMY = OSIRIS_TINY.model_copy(update={"scratchpad": OSIRIS_TINY.scratchpad.model_copy(
    update={"capacity_bytes": 2**24})})
COLUMNS = ("op", "dst", "src0", "src1", "mod", "imm", "he_node")


def _matvec(hoisting):
    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("mv", params)
    rng = np.random.default_rng(5)
    diagonals = {k: rng.uniform(-0.5, 0.5, params.slots) for k in range(16)}  # n1 = n2 = 4
    p.output("y", p.input("x").linear_transform(diagonals, hoisting=hoisting))
    return p, diagonals


def _lowered(hoisting, target):
    p, _ = _matvec(hoisting)
    return run_prefix("lower", p, options_for(target)).last


def test_spilling_double_hoisted_baby_steps_run_limb_by_limb_and_only_priorities_change():
    lowered = _lowered("double", OSIRIS_TINY)
    limb, he = lowered.limb, lowered.he
    out = limb_major_baby_steps(limb, he, OSIRIS_TINY.onchip_bytes)
    assert out is not limb
    for col in COLUMNS:
        assert np.array_equal(getattr(out, col), getattr(limb, col)), col
    assert sorted(out.prio.tolist()) == sorted(limb.prio.tolist())
    (steps,) = _baby_steps(he).values()  # one hoisted source, three baby steps (j = 1, 2, 3)
    assert len(steps) == 3
    he_node = np.asarray(limb.he_node)
    for step in steps:
        mine = np.flatnonzero(np.isin(he_node, list(step)))
        mods = lambda prio: np.asarray(limb.mod, dtype=np.int64)[mine[np.argsort(prio[mine], kind="stable")]]
        assert np.all(np.diff(mods(out.prio)) >= 0)  # limb-major: moduli never decrease
        assert not np.all(np.diff(mods(limb.prio)) >= 0)  # the lowering's node-major order was not
        # each baby step keeps its own priority values (its place among the other instructions)
        assert sorted(out.prio[mine].tolist()) == sorted(limb.prio[mine].tolist())


def test_untiled_transforms_whose_sums_fit_run_limb_major_too_tiled_ones_and_single_hoisting_do_not(monkeypatch):
    """Every double-hoisted transform the GSC order left untiled is limb-major in the
    variant (its streamed key leaves room to prefetch the next ones); a tiled transform and
    a single-hoisted program keep their priorities."""
    from fhec.passes import limb_order

    lowered = _lowered("double", ROOMY)
    assert limb_major_baby_steps(lowered.limb, lowered.he, ROOMY.onchip_bytes) is not lowered.limb
    monkeypatch.setattr(limb_order, "is_tiled", lambda *a, **k: True)
    assert limb_major_baby_steps(lowered.limb, lowered.he, ROOMY.onchip_bytes) is lowered.limb
    single = _lowered("single", OSIRIS_TINY)
    assert limb_major_baby_steps(single.limb, single.he, OSIRIS_TINY.onchip_bytes) is single.limb


def test_spilling_only_selects_the_transforms_whose_sums_do_not_fit_beside_a_node_major_baby_step():
    """The pipeline's second selection: a transform whose sums fit keeps its priorities;
    one whose sums spill is limb-major exactly as in the first selection."""
    roomy = _lowered("double", ROOMY)
    assert limb_major_baby_steps(roomy.limb, roomy.he, ROOMY.onchip_bytes, spilling_only=True) is roomy.limb
    tight = _lowered("double", OSIRIS_TINY)
    every = limb_major_baby_steps(tight.limb, tight.he, OSIRIS_TINY.onchip_bytes)
    spilling = limb_major_baby_steps(tight.limb, tight.he, OSIRIS_TINY.onchip_bytes, spilling_only=True)
    assert spilling is not tight.limb
    assert np.array_equal(spilling.prio, every.prio)


@pytest.mark.parametrize("hoisting, reorder", [("double", "limb_major_baby_steps"),
                                               ("single", "limb_major_single_baby_steps")])
def test_the_limb_major_schedule_replays_and_its_streams_equal_the_evaluator_on_every_limb(hoisting, reorder):
    """The schedulers take any priorities: the limb-major program, scheduled and run on the
    target model, gives every limb the evaluator gives."""
    from fhec.passes import limb_order
    from fhec.passes.cycle import schedule_cycles
    from fhec.passes.offchip import schedule_offchip

    p, diagonals = _matvec(hoisting)
    c = fhec.compile(p, OSIRIS_TINY)
    limb = getattr(limb_order, reorder)(c.lowered.limb, c.lowered.he, OSIRIS_TINY.onchip_bytes)
    assert limb is not c.lowered.limb
    data = schedule_offchip(limb, OSIRIS_TINY)
    lm = dataclasses.replace(c, lowered=dataclasses.replace(c.lowered, limb=limb), data_schedule=data,
                             streams=schedule_cycles(data, OSIRIS_TINY))
    x = np.random.default_rng(2).uniform(-1, 1, p.params.slots)
    out = run_compiled_checked(lm, {"x": x}, seed=4, check=True)
    want = sum(d * np.roll(x, -k) for k, d in diagonals.items())
    assert np.allclose(out["outputs"]["y"], want, atol=1e-2)


@pytest.mark.parametrize("ordering, tried", [("giant-step-centric", True), ("program", False)])
def test_the_pipeline_tries_it_only_with_the_giant_step_centric_order(ordering, tried, monkeypatch):
    from fhec.passes import limb_order

    calls = []

    def spy(limb, he, capacity_bytes, **kw):
        calls.append(capacity_bytes)
        return limb_order_original(limb, he, capacity_bytes, **kw)

    limb_order_original = limb_order.limb_major_baby_steps
    monkeypatch.setattr(limb_order, "limb_major_baby_steps", spy)
    target = OSIRIS_TINY.model_copy(update={"ordering": OSIRIS_TINY.ordering.model_copy(
        update={"linear_transforms": ordering})})
    p, _ = _matvec("double")
    c = fhec.compile(p, target)
    assert calls == ([target.onchip_bytes] * 2 if tried else [])  # every untiled transform; the spilling ones
    kept = c.lowered.limb.prio
    assert sorted(kept.tolist()) == list(range(len(kept)))  # either way a priority order


# -- single hoisting ------------------------------------------------------------------------


def test_spilling_single_hoisted_baby_steps_run_as_blocks_special_primes_first_in_dependence_order():
    from fhec.passes.limb_order import _single_baby_steps, limb_major_single_baby_steps

    lowered = _lowered("single", OSIRIS_TINY)
    limb, he = lowered.limb, lowered.he
    out = limb_major_single_baby_steps(limb, he, OSIRIS_TINY.onchip_bytes)
    assert out is not limb
    for col in COLUMNS:
        assert np.array_equal(getattr(out, col), getattr(limb, col)), col
    assert sorted(out.prio.tolist()) == list(range(len(limb.prio)))  # a priority order
    # no instruction ranks before a producer of its sources (the offchip scheduler's Belady
    # choice reads priorities as the order of use)
    producer = np.full(int(np.max(limb.dst)) + 1, -1)
    producer[np.asarray(limb.dst)] = np.arange(len(limb.dst))
    prio = np.asarray(out.prio)
    for src in (np.asarray(limb.src0), np.asarray(limb.src1)):
        has = (src >= 0) & (producer[np.maximum(src, 0)] >= 0)
        assert np.all(prio[producer[src[has]]] < prio[has])
    (steps,) = _single_baby_steps(he).values()
    assert len(steps) == 3
    he_node, mod = np.asarray(limb.he_node), np.asarray(limb.mod, dtype=np.int64)
    special = he.params.max_limbs
    for step in steps:
        mine = np.flatnonzero(np.isin(he_node, list(step)))
        ranks = np.sort(prio[mine])
        assert ranks[-1] - ranks[0] == len(mine) - 1  # one block
        mods = mod[mine[np.argsort(prio[mine])]]
        rank = np.where(mods >= special, mods - 10**6, mods)
        assert np.all(np.diff(rank) >= 0)  # the special primes' limbs, then Q's, limb by limb
        assert not np.all(np.diff(np.where((m := mod[mine[np.argsort(np.asarray(limb.prio)[mine])]]) >= special,
                                           m - 10**6, m)) >= 0)  # the lowering's order was not


def test_single_hoisted_transforms_whose_sums_fit_and_double_hoisting_keep_their_priorities():
    from fhec.passes.limb_order import limb_major_single_baby_steps

    roomy = _lowered("single", ROOMY)
    assert limb_major_single_baby_steps(roomy.limb, roomy.he, ROOMY.onchip_bytes) is roomy.limb
    double = _lowered("double", OSIRIS_TINY)
    assert limb_major_single_baby_steps(double.limb, double.he, OSIRIS_TINY.onchip_bytes) is double.limb
