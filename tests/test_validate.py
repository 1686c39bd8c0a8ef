"""`fhec.validate`: the shared argument checks name the argument, the value and the fix."""

import math

import numpy as np
import pytest

import fhec
from fhec.validate import as_1d_array, as_choice, as_int, as_int_list, as_mapping, as_real


@pytest.mark.parametrize("value", [7, np.int64(7), np.uint8(7), np.int8(7)])
def test_as_int_accepts_python_and_numpy_integers(value):
    out = as_int(value, "k")
    assert out == 7 and type(out) is int


@pytest.mark.parametrize("value", [True, np.bool_(False), 1.0, 1.7, np.float64(2.0), "3", None, [1], 1j])
def test_as_int_refuses_everything_else_naming_the_argument(value):
    with pytest.raises(fhec.ParameterError, match=r"k = .* must be an integer"):
        as_int(value, "k")


def test_as_int_range_and_error_class():
    assert as_int(0, "level", min=0, max=3) == 0
    with pytest.raises(fhec.InvalidArgumentError, match=r"level = 4 is out of range: it must be between 0 and 3; use"):
        as_int(4, "level", min=0, max=3, error=fhec.InvalidArgumentError, fix="use 0..3")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "1.0", 1j, None])
def test_as_real_refuses_non_finite_and_non_numbers(value):
    with pytest.raises(fhec.ParameterError, match="scale"):
        as_real(value, "scale")


def test_as_real_ranges():
    assert as_real(np.float32(0.5), "r", min=0.0, max=1.0) == 0.5
    with pytest.raises(fhec.ParameterError, match="> 0.0"):
        as_real(0, "r", min=0.0, min_exclusive=True)
    with pytest.raises(fhec.ParameterError, match="too large"):
        as_real(10**400, "r")


def test_choice_list_and_mapping():
    assert as_choice("bv", "keyswitch", ("bv", "hybrid")) == "bv"
    with pytest.raises(fhec.ParameterError, match="choose one of 'bv', 'hybrid'"):
        as_choice(["bv"], "keyswitch", ("bv", "hybrid"))
    assert as_int_list(np.array([1, -2]), "rotations") == (1, -2)
    for bad in ("12", 3, {1: 2}, [1, 2.5]):
        with pytest.raises(fhec.ParameterError, match="rotations"):
            as_int_list(bad, "rotations")
    with pytest.raises(fhec.MissingInputError, match="mapping"):
        as_mapping([1, 2], "inputs", error=fhec.MissingInputError)


def test_as_1d_array_says_1d():
    assert as_1d_array([1, 2], "v", error=fhec.InvalidPlaintextError).shape == (2,)
    assert as_1d_array(3.0, "v", error=fhec.InvalidPlaintextError).ndim == 0
    with pytest.raises(fhec.InvalidPlaintextError, match=r"must be 1-D .* shape \(2, 2\)"):
        as_1d_array(np.ones((2, 2)), "v", error=fhec.InvalidPlaintextError)
    for bad in (None, "abc", {"a": 1}, [[1], [1, 2]]):
        with pytest.raises(fhec.InvalidPlaintextError):
            as_1d_array(bad, "v", error=fhec.InvalidPlaintextError)
