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
    for mode in ("none", "single"):
        rr = run_detailed(_transform(mode), {"x": x}, seed=3)
        for name, ct in rr.eager().items():
            np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)


@pytest.mark.parametrize("bad", ["double", "always", 1])
def test_transform_hoisting_refuses_what_is_not_built(bad):
    with pytest.raises(fhec.ParameterError, match="hoisting"):
        _transform(bad)
