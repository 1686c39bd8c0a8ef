"""Scalar constants are immediates: one word per limb (ADD_CONST, MUL_CONST), not loaded
N-word plaintexts."""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.run import run_detailed
from fhec.schemes.encryption import encode, encode_scalar

CKKS = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, security=None)
BGV = fhec.BGVParams(N=2**5, levels=3, plain_modulus=257, security=None)


def _program(params):
    p = fhec.Program("s", params)
    x = p.input("x")
    if params.scheme == "ckks":
        p.output("y", (x + 0.25) * 1.5 - 0.125 + x * 3)
    else:
        p.output("y", (x + 5) * 3 - 7 + x * x)
    return p


@pytest.mark.parametrize("params", [CKKS, BGV], ids=["ckks", "bgv"])
def test_scalar_constants_load_nothing_and_stay_bit_identical(params):
    x = np.arange(params.slots) % 11 if params.scheme == "bgv" else np.linspace(-1, 1, params.slots)
    rr = run_detailed(_program(params), {"x": x}, seed=2)
    assert rr.lowered.limb.stats()["rvecs_by_class"]["CONST"] == 0
    assert rr.lowered.limb.stats()["ops"]["ADD_CONST"] > 0
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)
    ref = fhec.reference(_program(params), {"x": x})["y"]
    assert np.max(np.abs(rr.outputs["y"] - ref)) < (1e-3 if params.scheme == "ckks" else 0.5)


def test_scalar_constants_on_f1_streams():
    x = np.linspace(-1, 1, CKKS.slots)
    c = fhec.compile(_program(CKKS), target="f1")
    assert c.report.offchip_bytes["const_compulsory"] == 0
    d = c.run_detailed({"x": x}, seed=2)
    rr = run_detailed(_program(CKKS), {"x": x}, seed=2)
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(d["ciphertexts"][name].data, ct.data)


@pytest.mark.parametrize("value", [0.5, -1.25, 3.0, 1e-3])
def test_encode_scalar_is_the_constant_polynomial_the_fft_encoding_gives(value):
    """For ordinary values the exact scalar encoding equals encoding a full slot vector."""
    a = encode_scalar(CKKS, value, 2, 2.0**28)
    b = encode(CKKS, np.full(CKKS.slots, value), 2, 2.0**28)
    np.testing.assert_array_equal(a.data, b.data)


def test_bgv_encode_scalar_matches_vector_encoding_with_a_factor():
    a = encode_scalar(BGV, 300, 1, 5)
    b = encode(BGV, np.full(BGV.slots, 300), 1, 5)
    np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("op", ["add", "multiply"])
def test_a_scalar_too_large_for_the_modulus_is_refused_not_wrapped(op):
    keys = fhec.keygen(CKKS, seed=1)
    ct = fhec.encrypt(keys, np.zeros(CKKS.slots), seed=2)
    with pytest.raises(fhec.ValueOverflowError, match="constant"):
        getattr(fhec.Evaluator(keys), op)(ct, 1e30)
