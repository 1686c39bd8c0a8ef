"""Single hoisting (Halevi–Shoup): rotations of one ciphertext share one mod-up."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fhec
import fhec.testing as ft
from fhec.evaluate import prepare
from fhec.passes.he_keyswitch import expand_key_switches
from fhec.passes.keyswitch_choice import choose_methods
from fhec.run import run_detailed

# min_precision_bits=None: BV rotations are noise at 32-bit words, but must stay bit-exact
CKKS = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, security=None, special_primes=2,
                       min_precision_bits=None)
BGV = fhec.BGVParams(N=2**5, levels=3, plain_modulus=257, security=None)
BGV_ROW32 = fhec.BGVParams(N=2**6, levels=3, plain_modulus=257, security=None)


def _three_rotations(params):
    p = fhec.Program("h", params)
    x = p.input("x", bound=6.0) if params.scheme == "ckks" else p.input("x")  # inputs up to 6 below
    p.output("y", x.rotate(1) + x.rotate(3) + x.rotate(-2))
    return p


def _expanded(program, method, hoisting):
    prepared = prepare(program)
    return expand_key_switches(prepared, choose_methods(prepared, method), hoisting)


@pytest.mark.parametrize("params", [CKKS, BGV], ids=["ckks", "bgv"])
@pytest.mark.parametrize("method", ["hybrid", "bv"])
def test_rotations_of_one_ciphertext_share_one_mod_up(params, method):
    ops = lambda h: Counter(n.op.value for n in _expanded(_three_rotations(params), method, h).nodes)  # noqa: E731
    assert ops("auto")["mod_up"] == 1 and ops("auto")["digits_automorphism"] == 3
    assert ops("none")["mod_up"] == 3 and ops("none")["digits_automorphism"] == 0


def test_auto_leaves_a_lone_rotation_unhoisted():
    p = fhec.Program("one", CKKS)
    x = p.input("x")
    p.output("y", x.rotate(1) * 2)
    ops = Counter(n.op.value for n in _expanded(p, "hybrid", "auto").nodes)
    assert ops["digits_automorphism"] == 0
    ops = Counter(n.op.value for n in _expanded(p, "hybrid", "single").nodes)
    assert ops["digits_automorphism"] == 1


@pytest.mark.parametrize("params", [CKKS, BGV], ids=["ckks", "bgv"])
@pytest.mark.parametrize("method", ["hybrid", "bv"])
def test_hoisted_rotations_are_bit_identical_to_unhoisted(params, method):
    """Centered digits commute with σ_g, so the hoisted limb program computes exactly what
    the (unhoisted) eager evaluator computes, on every limb."""
    x = np.arange(params.slots) % 7
    rr = run_detailed(_three_rotations(params), {"x": x}, seed=2, keyswitch=method, hoisting="auto")
    eager = rr.eager()
    for name, ct in eager.items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


def test_hoisting_saves_ntts_for_automorphisms():
    hoisted = fhec.stats(_three_rotations(CKKS), "hybrid", hoisting="auto")["ops"]
    plain = fhec.stats(_three_rotations(CKKS), "hybrid", hoisting="none")["ops"]
    assert hoisted["NTT"] < plain["NTT"] and hoisted["INTT"] < plain["INTT"] and hoisted["BCONV"] < plain["BCONV"]
    assert hoisted["AUT"] > plain["AUT"]


def test_evaluator_rotate_hoisted_equals_rotate():
    keys = fhec.keygen(CKKS, rotations=[1, 3, -2], seed=1)
    ev = fhec.Evaluator(keys)
    ct = fhec.encrypt(keys, np.linspace(-1, 1, CKKS.slots), seed=2)
    many = ev.rotate_hoisted(ct, [1, 3, -2, 0])
    for k, got in many.items():
        np.testing.assert_array_equal(got.data, ev.rotate(ct, k).data)


def test_unknown_hoisting_is_a_clear_error():
    with pytest.raises(fhec.ParameterError, match="hoisting='double'"):
        fhec.lower(_three_rotations(CKKS), hoisting="double")


@given(data=st.data())
def test_hoisted_random_programs_are_bit_identical_on_every_limb(data):
    program = data.draw(ft.programs(scheme=data.draw(st.sampled_from(["ckks", "bgv"])), max_depth=3))
    inputs = data.draw(ft.inputs_for(program))
    rr = run_detailed(program, inputs, seed=0, hoisting="single")
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


@pytest.mark.parametrize("params", [CKKS, BGV], ids=["ckks", "bgv"])
@pytest.mark.parametrize("method", ["hybrid", "bv"])
@pytest.mark.parametrize("hoisting", ["none", "single"])
def test_closed_form_rotation_counts_match_the_lowering(params, method, hoisting):
    from fhec.analysis.counts import rotation_counts

    L, alpha = params.limbs_at(params.top_level), len(params.special_moduli)
    got = fhec.stats(_three_rotations(params), method, hoisting=hoisting)["ops"]
    want = rotation_counts(L, alpha, 3, method=method, hoisting=hoisting, bgv=params.scheme == "bgv")
    want["ADD"] += 2 * 2 * L  # the two additions of the rotated ciphertexts
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}


def _transform(hoisting=None):
    p = fhec.Program("lt", CKKS)
    M = np.random.default_rng(5).uniform(-1, 1, (16, 16)) / 16
    p.output("y", p.input("x").linear_transform(M, hoisting=hoisting))
    return p


@pytest.mark.parametrize("node, compile_option, hoisted", [
    (None, "auto", True), (None, "none", False), ("none", "auto", False), ("single", "none", True),
])
def test_a_transform_s_own_hoisting_choice_wins_over_the_compile_option(node, compile_option, hoisted):
    ops = Counter(n.op.value for n in _expanded(_transform(node), "hybrid", compile_option).nodes)
    assert (ops["digits_automorphism"] > 0) is hoisted


def test_transform_hoisting_choices_stay_bit_identical():
    x = np.linspace(-1, 1, CKKS.slots)
    for mode in ("none", "single", "double"):
        rr = run_detailed(_transform(mode), {"x": x}, seed=3)
        for name, ct in rr.eager().items():
            np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


@pytest.mark.parametrize("bad", ["always", 1, "Double"])
def test_transform_hoisting_refuses_unknown_modes(bad):
    with pytest.raises(fhec.ParameterError, match="hoisting"):
        _transform(bad)


# -- double hoisting ----------------------------------------------------------------------


def _bgv_transform(hoisting):
    """A BGV transform with diagonals on both rows (a row swap, then its own BSGS)."""
    p = fhec.Program("lt", BGV)
    rng = np.random.default_rng(7)
    diag = {k: rng.integers(0, 257, BGV.slots) for k in (0, 1, 2, 5, 9)}
    diag |= {("swap", k): rng.integers(0, 257, BGV.slots) for k in (0, 3, 4)}
    p.output("y", p.input("x").linear_transform(diag, hoisting=hoisting))
    return p


@pytest.mark.parametrize("make, x", [
    (_transform, np.linspace(-1, 1, CKKS.slots)), (_bgv_transform, np.arange(BGV.N) % 257),
], ids=["ckks", "bgv"])
def test_double_hoisting_is_bit_identical_on_every_limb_and_correct(make, x):
    program = make("double")
    ops = Counter(n.op.value for n in prepare(program).nodes)
    assert ops["rotate_ext"] > 0 and ops["mod_down_ext"] > 0 and ops["rotate"] == 0
    rr = run_detailed(program, {"x": x}, seed=4)
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)
    ref = fhec.reference(program, {"x": x})["y"]
    got = fhec.compile(program, "tiny").run({"x": x}, seed=4)["y"]
    if program.params.scheme == "bgv":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, atol=1e-3)


def test_double_hoisting_shares_one_mod_up_and_divides_by_p_once_per_giant_step():
    expanded = _expanded(_transform("double"), "auto", "auto")
    ops = Counter(n.op.value for n in expanded.nodes)
    babies = {n.args[0] for n in expanded.nodes if n.op.value == "digits_automorphism"}
    assert ops["ks_add_ext"] == ops["key_mult"]  # every rotation stays over Q·P
    assert ops["mod_down"] == 0 and len(babies) == 1  # one shared decomposition of the input
    giants = sum(1 for n in expanded.nodes if n.op.value == "mod_up") - 1
    # one per giant step, one at the end, merged with the transform's rescale (fuse_mod_down_rescale)
    assert ops["mod_down_ext"] == giants and ops["rescale_ext"] == 1


def test_double_hoisting_under_bv_parameters_switches_its_rotations_by_hybrid():
    """Double hoisting fixes the method of its rotations (hybrid: they stay over Q·P);
    the key set then holds both kinds, and every driver agrees on every limb."""
    params = fhec.CKKSParams(N=2**10, levels=3, security=None, keyswitch="bv", min_precision_bits=None)
    p = fhec.Program("lt", params)
    p.output("y", p.input("x").linear_transform(np.eye(8)[::-1] / 2, hoisting="double"))
    rr = run_detailed(p, {"x": np.linspace(-1, 1, params.slots)}, seed=6)
    assert set(rr.lowered.methods.values()) == {"hybrid"}
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


def test_double_hoisting_saves_modular_multiplies():
    from fhec.analysis.counts import modular_multiplies

    counts = {h: modular_multiplies(fhec.stats(_transform(h), "hybrid")["ops"], CKKS.N) for h in ("none", "single", "double")}
    assert counts["double"] < counts["single"] < counts["none"]


def test_evaluator_extended_rotations_mod_down_to_the_rotation():
    """mod_down(P·σ(c0) + u0, u1) = (σ(c0) + mod_down(u0), mod_down(u1)) exactly: P·σ(c0)
    vanishes mod P, so the rounding term is u0's."""
    keys = fhec.keygen(CKKS, rotations=[1, 3], seed=1)
    ev = fhec.Evaluator(keys, keyswitch="hybrid")
    ct = fhec.encrypt(keys, np.linspace(-1, 1, CKKS.slots), seed=2)
    ext = ev.rotate_hoisted(ct, [1, 3, 0], mod_down=False)
    for k, e in ext.items():
        np.testing.assert_array_equal(ev.mod_down(e).data, ev.rotate(ct, k).data)
    w = np.linspace(0, 1, CKKS.slots)
    pt = fhec.encode(CKKS, w, ct.level, 2.0**20, extended=True)
    total = ev.mod_down(ev.add_extended(ev.multiply_extended(ext[1], pt), ev.multiply_extended(ext[3], pt)))
    want = (np.roll(np.linspace(-1, 1, CKKS.slots), -1) + np.roll(np.linspace(-1, 1, CKKS.slots), -3)) * w
    np.testing.assert_allclose(fhec.decrypt(keys, total), want, atol=1e-3)
    with pytest.raises(fhec.InvalidArgumentError):
        fhec.decrypt(keys, ext[1])


@pytest.mark.parametrize("hoisting", ["none", "single", "double"])
@pytest.mark.parametrize("n1", [2, 3, 4])
@pytest.mark.parametrize("params", [CKKS, BGV_ROW32], ids=["ckks", "bgv"])
def test_closed_form_bsgs_counts_match_the_lowering(params, n1, hoisting):
    """A transform whose diagonals fill the n1 x n1 grid 0 .. n1²−1 (BSGS picks n1 = n2
    for it; the row holds the grid as non-negative signed steps), in manual mode so that
    no rescale follows."""
    from fhec.analysis.counts import bsgs_counts

    rng = np.random.default_rng(n1)
    p = fhec.Program("grid", params, rescale="manual")
    if params.scheme == "ckks":
        diag = {k: rng.uniform(-1, 1, params.slots) / n1**2 for k in range(n1 * n1)}
    else:
        diag = {k: rng.integers(1, 257, params.slots) for k in range(n1 * n1)}
    p.output("y", p.input("x").linear_transform(diag, hoisting=hoisting))
    got = fhec.stats(p, "hybrid", hoisting="none")["ops"]
    L, alpha = params.limbs_at(params.top_level), len(params.special_moduli)
    want = bsgs_counts(L, alpha, n1, n1, hoisting=hoisting, bgv=params.scheme == "bgv")
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}


@pytest.mark.parametrize("hoisting", ["single", "double"])
def test_an_explicit_baby_step_count_is_used_by_every_driver(hoisting):
    from fhec.ir.he_recipes import bsgs_groups

    M = np.random.default_rng(9).uniform(-1, 1, (16, 16)) / 16
    p = fhec.Program("lt", CKKS)
    p.output("y", p.input("x").linear_transform(M, hoisting=hoisting, n1=8))
    rotations = sum(1 for n in prepare(p).nodes if n.op.value in ("rotate", "rotate_ext"))
    n1, _, groups = bsgs_groups(range(-15, 16), CKKS.slots, 8)
    assert n1 == 8 and rotations == len({j for js in groups.values() for j in js} - {0}) + len(set(groups) - {0})
    rr = run_detailed(p, {"x": np.linspace(-1, 1, CKKS.slots)}, seed=3)
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True])
def test_a_bad_baby_step_count_is_a_clear_error(bad):
    p = fhec.Program("lt", CKKS)
    with pytest.raises(fhec.ParameterError, match="n1"):
        p.input("x").linear_transform(np.eye(4), n1=bad)


def test_the_n1_model_finds_the_diagonals_and_scales_loads_with_bandwidth():
    from fhec.analysis.bsgs import best_n1, diagonal_steps, n1_costs
    from fhec.backends.target import load_target
    from fhec.frontend.matrices import diagonals_of

    M = np.random.default_rng(3).uniform(-1, 1, (12, 12))
    assert diagonal_steps(M, CKKS.slots) == sorted(step for step, _, _ in diagonals_of(CKKS, M, None))
    f1 = load_target("f1")
    fast = f1.model_copy(update={"memory": f1.memory.model_copy(update={"bandwidth_gb_s": 4096.0})})
    slow, quick = n1_costs(M, CKKS, target=f1), n1_costs(M, CKKS, target=fast)
    assert [c.n1 for c in slow] == [c.n1 for c in quick]
    for a, b in zip(slow, quick):
        assert a.compute_cycles == b.compute_cycles and a.load_cycles == pytest.approx(4 * b.load_cycles)
    assert best_n1(M, CKKS, target=f1) in [c.n1 for c in slow]
