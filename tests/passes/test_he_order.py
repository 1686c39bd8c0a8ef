"""Key-switch-hint reuse ordering (F1 §4.2)."""

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, strategies as st

import fhec
import fhec.testing as ft
from fhec.evaluate import encrypt_inputs, make_keys, plain_inputs, prepare, run_he
from fhec.passes.he_order import order_for_hint_reuse


def _f1_matvec(N=2**10, rows=4):
    params = fhec.CKKSParams(N=N, levels=3, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("matvec", params)
    xs = [p.input(f"row{i}") for i in range(rows)]
    v = p.input("v")
    for i in range(rows):
        p.output(f"y{i}", (xs[i] * v).sum_slots())
    return p


def test_matvec_rotations_are_clustered_by_key():
    """F1's example: all four multiplies, then all four Rotate(X, 1), and so on."""
    prog = order_for_hint_reuse(prepare(_f1_matvec()))
    keyed = [n.type.keys[0] for n in prog.nodes if n.type.keys]
    runs = [k for i, k in enumerate(keyed) if i == 0 or keyed[i - 1] != k]
    assert len(runs) == len(set(keyed))  # every key's uses are contiguous: one cluster per hint
    assert all(keyed.count(k) == 4 for k in set(keyed))


@given(data=st.data())
def test_reordering_preserves_every_ciphertext(data):
    program = data.draw(ft.programs(scheme=data.draw(st.sampled_from(["ckks", "bgv"])), max_depth=3))
    inputs = data.draw(ft.inputs_for(program))
    prepared = prepare(program)
    # no bound (F1's clustering), or a scratchpad of a few values: the bounded order, or
    # the unbounded one where it fits (inputs wait for their first user either way)
    capacity = data.draw(st.sampled_from([None, 2**14, 2**17, 2**20]))
    ordered = order_for_hint_reuse(prepared, capacity)
    assert sorted(n.op.value for n in ordered.nodes) == sorted(n.op.value for n in prepared.nodes)
    keys = make_keys(prepared, 0)
    cts, plains = encrypt_inputs(prepared, keys, inputs, 0), plain_inputs(prepared, inputs)
    a, b = run_he(prepared, keys, cts, plains), run_he(ordered, keys, cts, plains)
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name].data, b[name].data)


def test_reordering_cuts_hint_traffic_when_hints_do_not_fit():
    """With the hints of all rotations larger than the scratchpad, clustering loads each
    hint fewer times than the as-written order. The scratchpad holds 48 RVecs: the 14
    hints take 256, one hint and a row's working set fit. (On tiny's own 16 RVecs, not
    even one hint fits beside the working set, and no order saves a load.)"""
    from fhec.compiler import compile as compile_program
    from fhec.passes.cycle import schedule_cycles  # noqa: F401  (compile uses it)
    from fhec.passes.he_keyswitch import expand_key_switches
    from fhec.passes.keyswitch_choice import choose_methods
    from fhec.passes.lower import lower
    from fhec.passes.offchip import schedule_offchip
    from fhec.backends.target import load_target

    prog = prepare(_f1_matvec(N=2**10))
    tiny = load_target("tiny")

    def ksh_bytes(p):
        lowered = lower(expand_key_switches(p, choose_methods(p, "hybrid")))
        t = schedule_offchip(lowered.limb, tiny, capacity_bytes=48 * lowered.limb.rvec_bytes).traffic
        return t.ksh_compulsory + t.ksh_noncompulsory

    assert 2 * ksh_bytes(order_for_hint_reuse(prog)) < ksh_bytes(prog)
    assert compile_program(_f1_matvec(N=2**10), target="tiny").report.cycles > 0


def _wide(k=200, N=2**10):
    """HEIR's wide program with every product relinearized and rescaled as written
    (manual mode, so lazy relinearization leaves it alone and every product is live)."""
    params = fhec.CKKSParams(N=N, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("wide", params, rescale="manual")
    x, y = p.input("x"), p.input("y")
    acc = None
    for i in range(k):
        t = (x * (y + 0.001 * (i + 1))).relinearize().rescale()
        acc = t if acc is None else acc + t
    p.output("acc", acc)
    return p


def test_working_set_stays_within_the_budget():
    """HEIR's wide program (acc += x·(y + c_i)): unbounded clustering computes every
    product before the first relinearization; with a capacity, the live working set stays
    within the budget (plus one value)."""
    from fhec.passes.he_order import BUDGET_FRACTION, hint_reuse_order, peak_live_bytes, value_bytes

    prog = prepare(_wide())
    one = max(value_bytes(prog, n) for n in prog.nodes)
    capacity = 40 * one
    unbounded = peak_live_bytes(prog, hint_reuse_order(prog))
    bounded = peak_live_bytes(prog, hint_reuse_order(prog, capacity))
    assert unbounded > 100 * one  # every product live at once
    assert bounded <= BUDGET_FRACTION * capacity + one


def test_capacity_keeps_matvec_clustered():
    """With F1's 64 MB scratchpad, matvec's key switches still form one cluster per hint."""
    prog = order_for_hint_reuse(prepare(_f1_matvec()), capacity_bytes=64 * 2**20)
    keyed = [n.type.keys[0] for n in prog.nodes if n.type.keys]
    runs = [k for i, k in enumerate(keyed) if i == 0 or keyed[i - 1] != k]
    assert len(runs) == len(set(keyed))


def test_wide_program_moves_only_compulsory_traffic_when_the_budget_holds():
    """On an F1 with a 2 MB scratchpad (all 200 products would need 7 MB), ordering with
    the budget moves only compulsory traffic; unbounded clustering spills."""
    from fhec.backends.target import load_target
    from fhec.passes.he_keyswitch import expand_key_switches
    from fhec.passes.keyswitch_choice import choose_methods
    from fhec.passes.lower import lower
    from fhec.passes.offchip import schedule_offchip

    f1 = load_target("f1")
    small = f1.model_copy(update={"scratchpad": f1.scratchpad.model_copy(update={"capacity_bytes": 2 * 2**20})})
    prog = prepare(_wide())

    def noncompulsory(ordered):
        lowered = lower(expand_key_switches(ordered, choose_methods(ordered, "hybrid")))
        return schedule_offchip(lowered.limb, small, prefetch_reserve=0.125).traffic.noncompulsory

    assert noncompulsory(order_for_hint_reuse(prog, small.scratchpad.capacity_bytes)) == 0
    assert noncompulsory(order_for_hint_reuse(prog)) > 0
    assert fhec.compile(_wide(), target=small).report.offchip_bytes["noncompulsory"] == 0


def test_first_hint_counts_against_the_budget():
    """A chain a = a·x + y whose relinearization hint fills the scratchpad: no key-free
    node (the level-downs of x and y to every level) runs before the first key switch,
    since the values would wait there while the hint is loaded; without a capacity they
    all go first (F1's clustering)."""
    from fhec.passes.he_order import hint_bytes, hint_reuse_order

    params = fhec.CKKSParams(N=2**10, levels=6, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("chain", params)
    x, y = p.input("x"), p.input("y")
    a = x
    for _ in range(5):
        a = a * x + y
    p.output("a", a)
    prog = prepare(p)
    nodes = {n.id: n for n in prog.nodes}
    first_ks = next(n for n in prog.nodes if n.type.keys)

    def level_downs_before_first_key_switch(order):
        before = order[: order.index(first_ks.id)]
        return sum(nodes[i].op.value == "level_down" for i in before)

    assert level_downs_before_first_key_switch(hint_reuse_order(prog)) >= 8
    capacity = 2 * hint_bytes(prog, first_ks)  # the budget, half of it, is all hint
    assert level_downs_before_first_key_switch(hint_reuse_order(prog, capacity)) == 0


def _rows_summed(rows=64, N=2**10):
    """LoLa's dense layer in small: per row a plaintext product and a rotate-and-sum over
    the same keys, the rows' one-hot results summed into one vector."""
    params = fhec.CKKSParams(N=N, levels=3, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("rows", params)
    x = p.input("x")
    rng = np.random.default_rng(1)
    out = []
    for r in range(rows):
        e = np.zeros(params.slots)
        e[r] = 1.0
        out.append((x * (rng.uniform(-1, 1, params.slots) / params.slots)).sum_slots() * e)
    p.output("y", sum(out[1:], out[0]))
    return p


def test_independent_chains_run_in_lockstep_groups_within_the_budget():
    """Independent rotate-and-sums on the same keys are interleaved: every key's
    rotations come in groups of several chains (each hint read once per group), while
    the working set stays within the budget left beside the kept hints (plus one value).
    Before, each chain ran alone once the products of later rows had filled the budget.
    (The first group is sized before any hint is kept.)"""
    from fhec.passes.he_order import BUDGET_FRACTION, hint_bytes, hint_reuse_order, peak_live_bytes, value_bytes

    prog = prepare(_rows_summed())
    nodes = {n.id: n for n in prog.nodes}
    one = max(value_bytes(prog, n) for n in prog.nodes)
    keyed = [n for n in prog.nodes if n.type.keys]
    hints = sum(hint_bytes(prog, n) for n in {n.type.keys[0]: n for n in keyed}.values())
    capacity = hints + 24 * one  # the kept hints, and room for a few chains
    order = hint_reuse_order(prog, capacity)
    runs = []
    for k in (nodes[i].type.keys[0] for i in order if nodes[i].type.keys):
        if runs and runs[-1][0] == k:
            runs[-1][1] += 1
        else:
            runs.append([k, 1])
    sizes = [c for _, c in runs]
    later = sizes[len({k for k, _ in runs}):]  # after the first group, the kept hints count
    assert min(sizes) >= 2 and later and max(later) < 64  # groups, bounded by the budget
    assert len(runs) <= len(keyed) // 2
    assert peak_live_bytes(prog, order) <= BUDGET_FRACTION * capacity + one


def _entries(entries=4, N=2**10):
    """The DB lookup's shape in small: per entry a chain of products (relinearizations),
    then a rotation and one more product; the entries independent."""
    params = fhec.CKKSParams(N=N, levels=4, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("entries", params)
    for i in range(entries):
        x = p.input(f"x{i}")
        a = x * x
        b = a * a
        p.output(f"y{i}", b * b.rotate(1))
    return p


def _key_runs(prog, order):
    nodes = {n.id: n for n in prog.nodes}
    keyed = [str(nodes[i].type.keys[0]) for i in order if nodes[i].type.keys]
    return [k for i, k in enumerate(keyed) if i == 0 or keyed[i - 1] != k]


def test_a_hint_that_fills_the_budget_stays_while_its_key_has_work(monkeypatch):
    """With the relinearization hint half the scratchpad (no working set fits beside it),
    every entry's products run beside it before any rotation: its key's switches form one
    cluster until the rotations, instead of alternating with them entry by entry (which
    reloads the hint each time: the DB lookup's 1.18 GiB of hints)."""
    import fhec.passes.he_order as he_order

    prog = prepare(_entries())
    first_ks = next(n for n in prog.nodes if n.type.keys)
    capacity = 2 * he_order.hint_bytes(prog, first_ks)
    runs = _key_runs(prog, he_order.hint_reuse_order(prog, capacity))
    assert runs[:2] == ["relin", "rot(1)"] and len(runs) == 3  # relin, every rotation, relin
    monkeypatch.setattr(he_order, "_stays_with_hint", lambda *a: False)
    assert len(_key_runs(prog, he_order.hint_reuse_order(prog, capacity))) > 3  # program order alternates


def test_the_hint_keeping_order_runs_bit_identical_to_the_evaluator():
    """Compiled for `tiny` (whose scratchpad is smaller than the relinearization hint, so
    the order keeps to that key while it has work), the streams' run equals the eager
    evaluator on every limb of every output."""
    from fhec.verify_run import run_compiled_checked

    c = fhec.compile(_entries(entries=3), "tiny", keyswitch="hybrid")
    ids = [n.id for n in c.program.nodes]
    assert _key_runs(c.program, ids)[:2] == ["relin", "rot(1)"] and len(_key_runs(c.program, ids)) == 3
    rng = np.random.default_rng(2)
    inputs = {f"x{i}": rng.uniform(-1, 1, c.program.params.slots) for i in range(3)}
    run_compiled_checked(c, inputs, seed=5, check=True)


def test_unbounded_hint_order_is_f1s_clustering_and_spills_where_the_bounded_order_does_not():
    """``compile(hint_order="unbounded")`` orders as F1 §4.2 describes (the capacity-blind
    `hint_reuse_order`): on the wide program and a 2 MB F1 it computes every product first
    and spills, where the default moves only compulsory traffic; the report says which
    order ran."""
    from fhec.backends.target import load_target
    from fhec.passes.he_order import hint_reuse_order

    f1 = load_target("f1")
    small = f1.model_copy(update={"scratchpad": f1.scratchpad.model_copy(update={"capacity_bytes": 2 * 2**20})})
    bounded = fhec.compile(_wide(), target=small)
    unbounded = fhec.compile(_wide(), target=small, hint_order="unbounded")
    assert (bounded.report.hint_order, unbounded.report.hint_order) == ("bounded", "unbounded")
    assert bounded.report.offchip_bytes["noncompulsory"] == 0 < unbounded.report.offchip_bytes["noncompulsory"]
    ordered = [n.id for n in unbounded.program.nodes]
    assert ordered == hint_reuse_order(unbounded.program)  # a fixed point of F1's order
    assert "unbounded hint-reuse order, as asked" in str(unbounded.report)
    assert bounded.report.hint_order_bounded and not unbounded.report.hint_order_bounded
    assert "hint-reuse order bounded by the scratchpad" in str(bounded.report)
    # on F1's 64 MiB the unbounded order fits: the default takes it, and says so
    roomy = fhec.compile(_wide(), target=f1)
    assert roomy.report.hint_order == "bounded" and roomy.report.hint_order_bounded is False
    assert [n.id for n in roomy.program.nodes] == ordered
    assert "unbounded hint-reuse order, which fits the scratchpad" in str(roomy.report)


def test_unbounded_hint_order_runs_bit_identical_to_the_evaluator():
    """The unbounded order on `tiny` (it spills there) still computes every limb of every
    output as the eager evaluator does."""
    from fhec.verify_run import run_compiled_checked

    c = fhec.compile(_entries(entries=3), "tiny", keyswitch="hybrid", hint_order="unbounded")
    rng = np.random.default_rng(3)
    inputs = {f"x{i}": rng.uniform(-1, 1, c.program.params.slots) for i in range(3)}
    run_compiled_checked(c, inputs, seed=6, check=True)


def test_an_unknown_hint_order_is_refused():
    import pytest

    with pytest.raises(fhec.ParameterError, match="hint_order"):
        fhec.compile(_entries(entries=1), "tiny", hint_order="f1")


def _rows_with_encrypted_weights(rows=32, N=2**10):
    """`_rows_summed` with every row's weights a ciphertext input (LoLa-MNIST with
    encrypted weights in small): the inputs together are far larger than the values live
    at any time."""
    params = fhec.CKKSParams(N=N, levels=3, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("rows_encrypted", params)
    x = p.input("x")
    out = []
    for r in range(rows):
        e = np.zeros(params.slots)
        e[r] = 1.0
        w = p.input(f"w{r}", bound=1.0 / params.slots)
        out.append((x * w).sum_slots() * e)
    p.output("y", sum(out[1:], out[0]))
    return p


def test_inputs_wait_off_chip_until_their_first_user():
    """An input counts against the budget from its first user, where the order places it:
    32 weight inputs twice the budget's room no longer stop the rows' rotate-and-sums from
    running in lockstep groups (counted from the top of the program, they filled the budget
    before anything ran, and every row ran alone)."""
    from fhec.passes.he_order import hint_bytes, hint_reuse_order, value_bytes

    prog = prepare(_rows_with_encrypted_weights())
    nodes = {n.id: n for n in prog.nodes}
    one = max(value_bytes(prog, n) for n in prog.nodes if n.op.value == "input")
    keyed = [n for n in prog.nodes if n.type.keys]
    hints = sum(hint_bytes(prog, n) for n in {n.type.keys[0]: n for n in keyed}.values())
    capacity = hints + 32 * one  # the inputs alone are 32 values: twice the room beside the hints
    order = hint_reuse_order(prog, capacity)
    for pos, vid in enumerate(order):
        if nodes[vid].op.value == "input" and vid != prog.inputs["x"].id:
            following = next(nodes[i] for i in order[pos + 1:] if nodes[i].op.value != "input")
            assert vid in following.args  # placed just before its first user
    keys = [nodes[i].type.keys[0] for i in order if nodes[i].type.keys]
    runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert len(runs) <= len(keys) // 2  # rotations by one key come in groups, not row by row


def test_the_bound_applies_only_where_unbounded_clustering_overflows():
    """`order_for_hint_reuse` takes F1's unbounded clustering when its working set fits the
    scratchpad beside the largest hint (the bound would only serialize chains that fit),
    and the bounded order where it does not."""
    from fhec.passes.he_order import bounded_order, hint_reuse_order, largest_hint_bytes, peak_live_bytes

    prog = prepare(_rows_summed())
    unbounded = hint_reuse_order(prog)
    need = peak_live_bytes(prog, unbounded) + largest_hint_bytes(prog)
    assert bounded_order(prog, need) == unbounded
    small = need // 2
    assert hint_reuse_order(prog, small) != unbounded
    assert bounded_order(prog, small) == hint_reuse_order(prog, small)
    nodes = {n.id: n for n in prog.nodes}
    ordered = order_for_hint_reuse(prog, need)  # renumbered: compare what each node does
    assert [(n.op, n.type.keys) for n in ordered.nodes] == [(nodes[i].op, nodes[i].type.keys) for i in unbounded]
