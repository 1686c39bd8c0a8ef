"""Precision guards for explicitly requested key-switching methods (`fhec.schemes.precision`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fhec
from fhec.errors import ParameterError, PrecisionError, PrecisionWarning
from fhec.testing import assert_matches_reference

# 32-bit words, 2^30 scale: a BV rotation's error (~2^44) swamps the value.
PARAMS = fhec.CKKSParams(N=2**8, levels=2, security=None)


def _rotation_program(params=PARAMS):
    p = fhec.Program("rot", params)
    x = p.input("x")
    p.output("y", x.rotate(1))
    return p


def _keys(params=PARAMS):
    return fhec.keygen(params, rotations=[1], seed=2)


def test_evaluator_refuses_an_explicit_bv_rotation():
    keys = _keys()
    ct = fhec.encrypt(keys, np.zeros(PARAMS.slots), seed=1)
    with pytest.raises(PrecisionError) as e:
        fhec.Evaluator(keys).rotate(ct, 1, keyswitch="bv")
    msg = str(e.value)
    assert "rotation by 1" in msg and "keyswitch='bv'" in msg and "'hybrid'" in msg
    with pytest.raises(PrecisionError):
        fhec.Evaluator(keys, keyswitch="bv").rotate(ct, 1)
    fhec.Evaluator(keys).rotate(ct, 1)  # the default (hybrid) is fine


def test_compiled_run_refuses_bv_at_the_dsl_line_but_compiling_only_warns():
    p = _rotation_program()
    with pytest.warns(PrecisionWarning, match="Running this program will raise") as record:
        compiled = fhec.compile(p, target="tiny", keyswitch="bv")
    # attributed to the DSL line of the rotation, not to the fhec code that noticed it
    assert all(w.filename.endswith("test_precision.py") for w in record if w.category is PrecisionWarning)
    inputs = {"x": np.zeros(PARAMS.slots)}
    with pytest.raises(PrecisionError) as e:
        compiled.run(inputs, seed=1)
    assert e.value.where is not None and "test_precision.py" in e.value.where
    with pytest.warns(PrecisionWarning), pytest.raises(PrecisionError, match="rotation by 1"):
        fhec.run(p, inputs, seed=1, keyswitch="bv")


def test_auto_policy_never_raises():
    p = _rotation_program()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        fhec.run(p, {"x": np.zeros(PARAMS.slots)}, seed=1, keyswitch="auto")


def test_warning_below_min_precision_bits():
    # An unrescaled product (scale 2^60) survives a BV rotation with a few bits left.
    params = fhec.CKKSParams(N=2**8, levels=2, security=None, min_precision_bits=30)
    keys = _keys(params)
    ev = fhec.Evaluator(keys)
    ct = fhec.encrypt(keys, np.full(params.slots, 0.5), seed=1)
    prod = ev.multiply(ct, ct)
    with pytest.warns(PrecisionWarning, match="below min_precision_bits=30"):
        out = ev.rotate(prod, 1, keyswitch="bv")
    assert 1 <= out.precision_bits < 30
    assert np.allclose(fhec.decrypt(keys, ev.rescale(out)), 0.25, atol=1e-2)


def test_min_precision_bits_none_turns_the_guard_off():
    params = fhec.CKKSParams(N=2**8, levels=2, security=None, min_precision_bits=None)
    keys = _keys(params)
    ct = fhec.encrypt(keys, np.zeros(params.slots), seed=1)
    out = fhec.Evaluator(keys).rotate(ct, 1, keyswitch="bv")
    assert out.precision_bits < 1  # noise, knowingly


def test_min_precision_bits_is_validated():
    with pytest.raises(ParameterError, match="min_precision_bits"):
        fhec.CKKSParams(N=2**8, levels=1, security=None, min_precision_bits=-1)


def test_an_output_whose_error_swamps_it_warns_at_its_line():
    """Whatever made it imprecise (here a BV rotation at 32-bit words), an output whose
    estimated precision is below 1 bit warns when it is named, not only at the op."""
    p = fhec.Program("noisy", fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, keyswitch="bv",
                                              security=None))
    with pytest.warns(fhec.PrecisionWarning):
        y = p.input("x").rotate(1)
    with pytest.warns(fhec.PrecisionWarning, match="output 'y' has an estimated worst-slot precision"):
        p.output("y", y)
    # min_precision_bits=None turns off the op's guard, not the output's warning: an output
    # of noise is never named silently
    quiet = fhec.Program("off", fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, keyswitch="bv",
                                                security=None, min_precision_bits=None))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = quiet.input("x").rotate(1)
    with pytest.warns(fhec.PrecisionWarning, match="output 'y' has an estimated worst-slot precision"):
        quiet.output("y", y)


def test_a_large_output_warns_with_its_error_against_its_bound():
    """The estimate is absolute: x * 123456789 (|x| <= 1) has an error near 2^6.4, 20 bits
    below its largest values, and the warning said only "its error may swamp the value"."""
    p = fhec.Program("big", fhec.CKKSParams(N=2**10, levels=2, security=None))
    with pytest.warns(fhec.PrecisionWarning, match=r"may reach 1.23e\+08, and against those that is 2\d\.\d bits"):
        p.output("y", p.input("x") * 123456789)


def test_a_saturated_estimate_claims_no_precision():
    """x * 2**63: the estimate saturates at 2^16 (he_types.NOISE_SATURATION_BITS) and
    bounds nothing, yet the warning claimed 44.2 bits against the values (measured 21.9),
    and the IR printed the capped figure as the precision."""
    from fhec.evaluate import compare_outputs
    from fhec.ir.he_types import noise_saturated

    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=30, security=None)
    p = fhec.Program("big", params)
    y = p.input("x") * 2**63
    assert noise_saturated(params, y.type)
    with pytest.warns(fhec.PrecisionWarning, match="saturated") as record:
        p.output("y", y)
    assert "against those" not in str(record[0].message)
    assert "prec<" in str(p) and "prec=" in str(p)  # the input's estimate is not saturated
    xs = np.random.default_rng(0).uniform(-1, 1, params.slots)
    got = fhec.evaluate(p, {"x": xs}, seed=1)
    (r,) = compare_outputs(p, got, fhec.reference(p, {"x": xs}))
    assert r.saturated and "the floor: its error estimate saturated" in r.describe("ckks")
    unsaturated = fhec.Program("small", params)
    z = unsaturated.input("x") * 3
    assert not noise_saturated(params, z.type)


def test_a_polynomial_compiled_with_bv_relinearizations_states_their_error():
    """A polynomial's error estimate (its noise hint) is computed when it is traced, for the
    parameters' method (hybrid); compiled with keyswitch="bv", its relinearizations' larger
    error must reach the estimate, which otherwise promised ~2 bits the run lacked."""
    params = fhec.CKKSParams(N=2**10, levels=5, scale_bits=30, word_bits=32, base_limbs=2, security=None)
    p = fhec.Program("pow", params)
    p.output("y", p.input("x") ** 31)
    compiled = fhec.compile(p, target="tiny", keyswitch="bv")
    assert_matches_reference(compiled, seed=0)
