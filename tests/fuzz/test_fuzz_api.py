"""Fuzzing the public API with wrong types: every call template below gets one argument
replaced by an adversarial value (None, bools, NaN/inf, huge or negative ints, strings,
bytes, nested or ragged lists, 2-D arrays, numpy scalars of every kind, dicts...).

Property (see `support`): the call succeeds or raises an FhecError subclass, never
another exception and never a hang. Where an argument means an integer (a rotation step,
a level, a Galois element), success with a non-integer value would be a silent
truncation, so it fails the test too.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

import fhec

from tests.fuzz.support import fuzz_settings, is_integer_value, only_fhec_errors, weird_values

# name -> (call(value, fixtures), the value must be an integer for the call to succeed)
_PARAMS_KW = dict(N=2**10, levels=2, security=None)


def _ckks_params(field):
    return lambda v, f: fhec.CKKSParams(**{**_PARAMS_KW, field: v})


def _bgv_params(field):
    return lambda v, f: fhec.BGVParams(**{**_PARAMS_KW, "plain_modulus": 12289, field: v})


SCHEME_CALLS = {
    **{f"CKKSParams({k}=?)": (_ckks_params(k), k not in ("security", "keyswitch", "dnum"))
       for k in ("N", "levels", "scale_bits", "word_bits", "special_primes", "dnum", "base_limbs", "keyswitch",
                 "security")},
    **{f"BGVParams({k}=?)": (_bgv_params(k), k != "modulus_bits")
       for k in ("plain_modulus", "modulus_bits", "levels")},
    "keygen(?)": (lambda v, f: fhec.keygen(v, seed=1), False),
    "keygen(rotations=?)": (lambda v, f: fhec.keygen(f["ckks"][0], rotations=v, seed=1), False),
    "keygen(rotations=[?])": (lambda v, f: fhec.keygen(f["ckks"][0], rotations=[v], seed=1), True),
    "keygen(galois_elements=[?])": (lambda v, f: fhec.keygen(f["ckks"][0], galois_elements=[v], seed=1), True),
    "keygen(keyswitch=?)": (lambda v, f: fhec.keygen(f["ckks"][0], keyswitch=v, seed=1), False),
    "keygen(conjugation=?)": (lambda v, f: fhec.keygen(f["ckks"][0], conjugation=v, seed=1), False),
    "encode(ckks, ?)": (lambda v, f: fhec.encode(f["ckks"][0], v), False),
    "encode(bgv, ?)": (lambda v, f: fhec.encode(f["bgv"][0], v), False),
    "encode(level=?)": (lambda v, f: fhec.encode(f["ckks"][0], [1.0], level=v), True),
    "encode(scale=?)": (lambda v, f: fhec.encode(f["ckks"][0], [1.0], scale=v), False),
    "encode(bgv, scale=?)": (lambda v, f: fhec.encode(f["bgv"][0], [1], scale=v), True),
    "encrypt(?, x)": (lambda v, f: fhec.encrypt(v, [1.0], seed=1), False),
    "encrypt(keys, ?)": (lambda v, f: fhec.encrypt(f["ckks"][1], v, seed=1), False),
    "encrypt(bgv keys, ?)": (lambda v, f: fhec.encrypt(f["bgv"][1], v, seed=1), False),
    "encrypt(level=?)": (lambda v, f: fhec.encrypt(f["ckks"][1], [1.0], level=v, seed=1), True),
    "decrypt(keys, ?)": (lambda v, f: fhec.decrypt(f["ckks"][1], v), False),
    "decrypt(?, ct)": (lambda v, f: fhec.decrypt(v, f["ckks"][3]), False),
    "Evaluator(?)": (lambda v, f: fhec.Evaluator(v), False),
    "Evaluator(keys, keyswitch=?)": (lambda v, f: fhec.Evaluator(f["ckks"][1], keyswitch=v), False),
    "ev.rotate(ct, ?)": (lambda v, f: f["ckks"][2].rotate(f["ckks"][3], v), True),
    "ev.rotate_hoisted(ct, ?)": (lambda v, f: f["ckks"][2].rotate_hoisted(f["ckks"][3], v), False),
    "ev.rotate_hoisted(ct, [?])": (lambda v, f: f["ckks"][2].rotate_hoisted(f["ckks"][3], [v]), True),
    "ev.rotate(?, 1)": (lambda v, f: f["ckks"][2].rotate(v, 1), False),
    "ev.add(ct, ?)": (lambda v, f: f["ckks"][2].add(f["ckks"][3], v), False),
    "ev.sub(bgv ct, ?)": (lambda v, f: f["bgv"][2].sub(f["bgv"][3], v), False),
    "ev.multiply(ct, ?)": (lambda v, f: f["ckks"][2].multiply(f["ckks"][3], v), False),
    "ev.multiply(bgv ct, ?)": (lambda v, f: f["bgv"][2].multiply(f["bgv"][3], v), False),
    "ev.multiply(keyswitch=?)": (lambda v, f: f["ckks"][2].multiply(f["ckks"][3], f["ckks"][3], keyswitch=v), False),
    "ev.multiply_integer(ct, ?)": (lambda v, f: f["ckks"][2].multiply_integer(f["ckks"][3], v), True),
    "ev.level_down(ct, ?)": (lambda v, f: f["ckks"][2].level_down(f["ckks"][3], v), True),
    "ev.mod_switch_to(bgv ct, ?)": (lambda v, f: f["bgv"][2].mod_switch_to(f["bgv"][3], v), True),
    "ev.apply_galois(ct, ?)": (lambda v, f: f["ckks"][2].apply_galois(f["ckks"][3], v), True),
    "ev.automorphism(ct, ?)": (lambda v, f: f["ckks"][2].automorphism(f["ckks"][3], v), True),
    "ev.key_switch(ct, ?)": (lambda v, f: f["ckks"][2].key_switch(f["ckks"][3], v), False),
    "measure_precision(?, x)": (lambda v, f: fhec.measure_precision(v, [1.0, 2.0]), False),
    "measure_noise_budget(keys, ?)": (lambda v, f: fhec.measure_noise_budget(f["bgv"][1], v), False),
}


def _hashable(v):
    """`v` if it can be a dict key; else the example is skipped (the dict cannot be built)."""
    try:
        hash(v)
    except TypeError:
        assume(False)
    return v


def _program(params=None, **kw):
    p = fhec.Program("f", params or fhec.CKKSParams(N=2**10, levels=2, security=None), **kw)
    return p, p.input("x"), p.plain("w")


def _bgv_program():
    return _program(fhec.BGVParams(N=2**10, levels=2, plain_modulus=12289, security=None))


DSL_CALLS = {
    "Program(?, params)": (lambda v: fhec.Program(v, fhec.CKKSParams(N=2**10, levels=2, security=None)), False),
    "Program(name, ?)": (lambda v: fhec.Program("p", v), False),
    "Program(rescale=?)": (lambda v: _program(rescale=v), False),
    "Program(rotation_keys=?)": (lambda v: _program(rotation_keys=v), False),
    "Program(rotation_keys=[?])": (lambda v: _program(rotation_keys=[v]), True),
    "Program(max_rotation_keys=?)": (lambda v: _program(max_rotation_keys=v), True),
    "p.input(?)": (lambda v: _program()[0].input(v), False),
    "p.input(level=?)": (lambda v: _program()[0].input("z", level=v), True),
    "p.output(name, ?)": (lambda v: _program()[0].output("o", v), False),
    "x + ?": (lambda v: _program()[1] + v, False),
    "? - x": (lambda v: v - _program()[1], False),
    "x * ?": (lambda v: _program()[1] * v, False),
    "bgv x * ?": (lambda v: _bgv_program()[1] * v, False),
    "x / ?": (lambda v: _program()[1] / v, False),
    "x ** ?": (lambda v: _program()[1] ** v, True),
    "w + ?": (lambda v: _program()[2] + v, False),
    "x.rotate(?)": (lambda v: _program()[1].rotate(v), True),
    "x.sum_slots(?)": (lambda v: _program()[1].sum_slots(v), True),
    "x.level_down(?)": (lambda v: _program()[1].level_down(v), True),
    "x.polynomial(?)": (lambda v: _program()[1].polynomial(v), False),
    "x.polynomial([0, ?])": (lambda v: _program()[1].polynomial([0, v]), False),
    "x.linear_transform(?)": (lambda v: _program()[1].linear_transform(v), False),
    "x.linear_transform({?: [1]})": (lambda v: _program()[1].linear_transform({_hashable(v): [1.0]}), True),
    "x.linear_transform({1: ?})": (lambda v: _program()[1].linear_transform({1: v}), False),
    "fhec.compile(?)": (lambda v: fhec.compile(v), False),
    "Program.from_json(?)": (lambda v: fhec.Program.from_json(v), False),
}


def _run_program():
    p, x, w = _program()
    p.output("y", x * w)
    return p


RUN_CALLS = {
    "evaluate(p, ?)": (lambda v: fhec.evaluate(_run_program(), v, seed=1), False),
    "evaluate(p, {x: ?})": (lambda v: fhec.evaluate(_run_program(), {"x": v, "w": [1.0]}, seed=1), False),
    "reference(p, {w: ?})": (lambda v: fhec.reference(_run_program(), {"x": [1.0], "w": v}), False),
    "reference(?, inputs)": (lambda v: fhec.reference(v, {"x": [1.0]}), False),
    "run(p, keyswitch=?)": (lambda v: fhec.stats(_run_program(), keyswitch=v), False),
    "compile(target=?)": (lambda v: fhec.compile(_run_program(), target=v), False),
    "compile(hoisting=?)": (lambda v: fhec.compile(_run_program(), target="tiny", hoisting=v), False),
    "compile(policy=?)": (lambda v: fhec.compile(_run_program(), target="tiny", policy=v), False),
    "compile(prefetch_reserve=?)": (lambda v: fhec.compile(_run_program(), target="tiny", prefetch_reserve=v), False),
}


def _check(ok: bool, value, integer: bool) -> None:
    # None selects a default (the top level, all slots...), which is no truncation.
    if ok and integer and value is not None:
        assert is_integer_value(value), f"accepted the non-integer {value!r} where an integer is meant"


@fuzz_settings(ci=250, thorough=3000)
@given(name=st.sampled_from(sorted(SCHEME_CALLS)), value=weird_values())
def test_scheme_api_with_wrong_types(keys_and_ct, name, value):
    call, integer = SCHEME_CALLS[name]
    ok, _ = only_fhec_errors(lambda: call(value, keys_and_ct))
    _check(ok, value, integer)


@fuzz_settings(ci=250, thorough=3000)
@given(name=st.sampled_from(sorted(DSL_CALLS)), value=weird_values())
def test_dsl_with_wrong_types(name, value):
    call, integer = DSL_CALLS[name]
    ok, _ = only_fhec_errors(lambda: call(value))
    _check(ok, value, integer)


@fuzz_settings(ci=40, thorough=400)
@given(name=st.sampled_from(sorted(RUN_CALLS)), value=weird_values())
def test_drivers_with_wrong_types(keys_and_ct, name, value):
    call, integer = RUN_CALLS[name]
    ok, _ = only_fhec_errors(lambda: call(value))
    _check(ok, value, integer)


@fuzz_settings(ci=40, thorough=500)
@given(values=st.one_of(
    st.lists(st.integers(-(2**70), 2**70), max_size=8),
    st.lists(st.integers(0, 2**64 - 1), max_size=8).map(lambda v: np.array(v, dtype=np.uint64)),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=8).map(lambda v: np.array(v, dtype=np.int64)),
))
def test_bgv_values_reduce_exactly_mod_t(keys_and_ct, values):
    """BGV inputs of any integer type and size decrypt to exactly their residues mod t."""
    params, keys, _, _ = keys_and_ct["bgv"]
    t = params.plain_modulus
    out = fhec.decrypt(keys, fhec.encrypt(keys, values, seed=3))
    expected = [int(v) % t for v in values]
    assert out[: len(expected)].tolist() == expected
