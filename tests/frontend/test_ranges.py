"""The CKKS value-range model: declared bounds, propagated bounds, and the overflow errors
they raise at the DSL line, at encryption time and for auto-mode programs out of levels.

Each offending statement sits on the line that calls `here()`, so the test knows which
``test_ranges.py:LINE`` the message must name.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import fhec
from fhec.errors import LevelExhaustedError, ProgramError, ValueOverflowError

# The shapes of the examples: one 32-bit q_0 and a 2^30 scale leave |slot| < 2
# at level 0. N is small (insecure) to keep the tests fast.
DEFAULTS = fhec.CKKSParams(N=2**6, levels=2, security=None)


def here() -> int:
    return sys._getframe(1).f_lineno


def names_line(err: pytest.ExceptionInfo, line: int) -> None:
    assert err.value.where is not None and err.value.where.endswith(f"test_ranges.py:{line}"), err.value.where


def test_constant_too_large_for_level_0_is_refused_at_its_line():
    p = fhec.Program("add5", DEFAULTS)
    x = p.input("x", level=0)
    with pytest.raises(ValueOverflowError) as e:
        line = here(); x + 5.0  # noqa: E702
    names_line(e, line)
    msg = str(e.value)
    assert "|slot| = 6" in msg and "level 0" in msg and "bound=" in msg and "scale_bits" in msg


def test_declared_bound_propagates_through_products():
    p = fhec.Program("x4", DEFAULTS)
    x = p.input("x", bound=4.0)
    x2 = x * x  # level 1, |x^2| <= 16 at scale 2^30: fits
    assert x2.bound == x2.type.bound == 16.0
    with pytest.raises(ValueOverflowError) as e:
        line = here(); x2 * x2  # noqa: E702  (256 at scale 2^60 does not fit Q_1 = 2^62)
    names_line(e, line)
    assert "256" in str(e.value)


def test_huge_constant_multiplier_is_refused():
    p = fhec.Program("big", DEFAULTS)
    x = p.input("x")
    with pytest.raises(ValueOverflowError) as e:
        line = here(); x * 1e30  # noqa: E702
    names_line(e, line)


def test_bounds_of_adds_constants_rotations_and_polynomials():
    p = fhec.Program("bounds", DEFAULTS)
    x, y = p.input("x", bound=0.5), p.input("y")
    w = p.plain("w", bound=0.25)
    assert (x + y).type.bound == 1.5
    assert (x - 0.25).type.bound == 0.75
    assert (x * 3).type.bound == 1.5  # an exact integer multiply
    assert (x + w).type.bound == 0.75 and (x * w).type.bound == 0.125
    assert x.rotate(3).type.bound == 0.5
    assert x.polynomial([0.5, -1.0, 2.0]).type.bound == 0.5 + 0.5 + 2.0 * 0.25  # sum |c_i| B^i


def test_linear_transform_is_bounded_by_row_sums_of_the_matrix():
    p = fhec.Program("lt", DEFAULTS)
    x = p.input("x")
    m = np.zeros((DEFAULTS.slots, DEFAULTS.slots))
    m[np.arange(8), np.arange(8)] = 0.5
    m[np.arange(8), (np.arange(8) + 1) % DEFAULTS.slots] = -0.5
    m[8:16, 8:16] = 0.1  # row sums 0.8
    y = x.linear_transform(m)
    # rows 0..7: |0.5| + |-0.5| = 1; the per-diagonal maximum would have summed to ~ 1.9
    assert y.type.bound == pytest.approx(1.0)


def test_bound_is_printed_in_the_ir_type():
    p = fhec.Program("show", DEFAULTS)
    x = p.input("x", bound=3.0)
    p.output("y", x + x)
    text = str(p)
    assert "|v|<=3 " in text and "|v|<=6 " in text


def test_bad_bounds_are_program_errors(bgv):
    p = fhec.Program("b", DEFAULTS)
    for bad in (0, -1.0, float("inf"), "1", True):
        with pytest.raises(ProgramError, match="bound="):
            p.input(f"x{abs(hash(repr(bad)))}", bound=bad)
    with pytest.raises(ProgramError, match="CKKS"):
        fhec.Program("q", bgv).input("x", bound=2.0)


def test_encrypt_checks_actual_values():
    keys = fhec.keygen(DEFAULTS, seed=1)
    with pytest.raises(ValueOverflowError) as e:
        fhec.encrypt(keys, np.full(DEFAULTS.slots, 10.0), level=0, seed=1)
    assert "|value| = 10" in str(e.value) and "<= 2" in str(e.value)
    fhec.encrypt(keys, np.full(DEFAULTS.slots, 10.0), level=1, seed=1)  # Q_1 has room
    with pytest.raises(ValueOverflowError):
        fhec.encode(DEFAULTS, np.full(DEFAULTS.slots, 3.0), level=0)


def test_inputs_beyond_their_declared_bound_are_refused_at_run_time():
    p = fhec.Program("run", DEFAULTS)
    x = p.input("x")
    p.output("y", (x * x) * (x * x))  # fine for |x| <= 1; with x = 4 it would wrap at level 1
    with pytest.raises(ValueOverflowError) as e:
        fhec.evaluate(p, {"x": np.full(DEFAULTS.slots, 4.0)}, seed=1)
    assert "bound=4" in str(e.value) and e.value.where is not None
    ok = fhec.evaluate(p, {"x": np.full(DEFAULTS.slots, 0.5)}, seed=1)["y"]
    assert np.allclose(ok, 0.0625, atol=1e-3)


def test_declared_bounds_above_one_run_correctly():
    params = fhec.CKKSParams(N=2**6, levels=2, base_limbs=2, security=None)
    p = fhec.Program("big", params)
    x = p.input("x", bound=8.0)
    p.output("y", x * x + x)
    xs = np.linspace(-8, 8, params.slots)
    assert np.allclose(fhec.evaluate(p, {"x": xs}, seed=1)["y"], xs * xs + xs, atol=1e-2)


def test_auto_mode_out_of_levels_is_level_exhausted_not_scale_overflow():
    p = fhec.Program("deep", DEFAULTS)  # one 32-bit q_0: x*x at level 0 would also overflow
    x = p.input("x", level=0)
    with pytest.raises(LevelExhaustedError) as e:
        line = here(); x * x  # noqa: E702
    names_line(e, line)
    assert "needs 1 more level" in str(e.value) and f"levels={DEFAULTS.levels + 1}" in str(e.value)
    assert "rescale='auto'" not in str(e.value)
    with pytest.raises(LevelExhaustedError, match="levels="):
        x * 0.5


def test_polynomial_out_of_levels_says_how_many_more():
    p = fhec.Program("poly", DEFAULTS)
    x = p.input("x", level=1)
    with pytest.raises(LevelExhaustedError) as e:
        line = here(); x.polynomial([0.0, 0.5, 0.0, 0.0, 0.25])  # noqa: E702  (depth 2 + 1)
    names_line(e, line)
    assert "needs 2 more level(s)" in str(e.value) and f"levels={DEFAULTS.levels + 2}" in str(e.value)


def test_random_inputs_follow_declared_bounds():
    from fhec.evaluate import random_inputs

    p = fhec.Program("r", DEFAULTS)
    x, w = p.input("x", bound=0.25), p.plain("w", bound=3.0)
    p.output("y", x * w)
    inputs = random_inputs(p, seed=0)
    assert np.abs(inputs["x"]).max() <= 0.25 and 1.0 < np.abs(inputs["w"]).max() <= 3.0
    from fhec.testing import assert_matches_reference

    assert_matches_reference(p, seed=0)
