"""Every user error of the DSL: its class, its message, and the DSL line it names.

Each offending statement is written on the line that calls `here()`, so the test knows
which ``test_errors.py:LINE`` the message must name.
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np
import pytest

import fhec
from fhec.errors import (
    InvalidPlaintextError,
    LevelExhaustedError,
    LevelMismatchError,
    MissingInputError,
    MissingRotationKeyError,
    MixedProgramsError,
    PlaintextOperandError,
    ProgramError,
    ScaleMismatchError,
    ScaleOverflowError,
    SchemeMismatchError,
    TooManyValuesError,
    UnsetOutputError,
    UnusedInputWarning,
)


def here() -> int:
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def names_line(err: pytest.ExceptionInfo, line: int) -> None:
    where = f"test_errors.py:{line}"
    assert err.value.where is not None and err.value.where.endswith(where), (err.value.where, where)
    assert str(err.value).startswith(err.value.where)


# -- levels and scales ---------------------------------------------------------------------------


def test_level_exhausted_names_the_multiply(ckks):
    p = fhec.Program("deep", ckks)
    x = p.input("x", level=0)
    with pytest.raises(LevelExhaustedError) as e:
        line = here(); x * x  # noqa: E702
    names_line(e, line)
    assert "increase `levels`" in str(e.value)


def test_level_exhausted_names_the_multiply_in_bgv(bgv):
    p = fhec.Program("deep", bgv)
    x = p.input("x", level=0)
    with pytest.raises(LevelExhaustedError, match="this multiply is modulus-switched") as e:
        line = here(); x * x  # noqa: E702
    names_line(e, line)


def test_level_exhausted_by_a_polynomial(ckks):
    p = fhec.Program("poly", ckks)
    x = p.input("x", level=1)
    with pytest.raises(LevelExhaustedError) as e:
        line = here(); x.polynomial([0, 0.5, 0, 0, 0.1])  # noqa: E702
    names_line(e, line)
    assert "degree 4" in str(e.value) and "level 1" in str(e.value)


def test_failed_operation_leaves_the_program_unchanged(ckks):
    p = fhec.Program("tx", ckks)
    x = p.input("x", level=0)
    before = p.ir
    with pytest.raises(LevelExhaustedError):
        x * x  # the MUL and RELINEARIZE were emitted before the RESCALE failed
    assert p.ir == before


def test_scale_mismatch_in_manual_mode(ckks):
    p = fhec.Program("manual", ckks, rescale="manual")
    x = p.input("x")
    y = (x * x).relinearize()
    with pytest.raises(ScaleMismatchError) as e:
        line = here(); y + x  # noqa: E702
    names_line(e, line)
    assert "rescale()" in str(e.value) and "test_errors.py" in e.value.bare_message  # names the operands too


def test_level_mismatch_in_manual_mode(ckks):
    p = fhec.Program("manual", ckks, rescale="manual")
    x = p.input("x")
    y = (x * x).rescale()
    with pytest.raises(LevelMismatchError) as e:
        line = here(); y + x  # noqa: E702
    names_line(e, line)
    assert f".level_down({y.level})" in str(e.value)
    with pytest.raises(LevelMismatchError):
        y * x


def test_scale_overflow_of_unrescaled_products(ckks):
    p = fhec.Program("overflow", ckks, rescale="manual")
    x = p.input("x", level=1)  # Q_1 is 2^94: x^3 (scale 2^90) fits, x^4 does not
    y = (x * x).relinearize() * x
    with pytest.raises(ScaleOverflowError) as e:
        line = here(); y.relinearize() * x  # noqa: E702
    names_line(e, line)


def test_rescale_in_auto_mode_is_rejected(ckks):
    p = fhec.Program("auto", ckks)
    x = p.input("x")
    with pytest.raises(ProgramError) as e:
        line = here(); x.rescale()  # noqa: E702
    names_line(e, line)
    assert "rescale='manual'" in str(e.value)


# -- keys ---------------------------------------------------------------------------------------


def test_forbidden_rotation(ckks):
    p = fhec.Program("keys", ckks, rotation_keys=[1, 2])
    x = p.input("x")
    x.rotate(1)
    with pytest.raises(MissingRotationKeyError) as e:
        line = here(); x.rotate(3)  # noqa: E702
    names_line(e, line)
    assert "step 3" in str(e.value) and "rotation_keys=[1, 2]" in str(e.value)
    with pytest.raises(MissingRotationKeyError) as e:
        line = here(); x.sum_slots(8)  # noqa: E702  (needs rotations by 1, 2 and 4)
    names_line(e, line)
    assert "step 4" in str(e.value)


def test_rotation_key_cap_too_small(ckks):
    p = fhec.Program("cap", ckks, max_rotation_keys=1)
    x = p.input("x")
    p.output("y", x.rotate(3) + x.rotate(5))
    with pytest.raises(ProgramError) as e:
        fhec.evaluate(p, {"x": np.zeros(4)}, seed=0)
    assert "max_rotation_keys=1 is too small" in str(e.value)
    assert e.value.where.endswith(f"test_errors.py:{here() - 6}")  # the line creating the program


# -- programs, plaintexts, outputs, inputs ------------------------------------------------------


def test_mixing_two_programs(ckks):
    p, q = fhec.Program("p", ckks), fhec.Program("q", ckks)
    x, y = p.input("x"), q.input("y")
    with pytest.raises(MixedProgramsError) as e:
        line = here(); x + y  # noqa: E702
    names_line(e, line)
    assert "'p'" in str(e.value) and "'q'" in str(e.value)
    with pytest.raises(MixedProgramsError) as e:
        line = here(); p.output("y", y)  # noqa: E702
    names_line(e, line)


@pytest.mark.parametrize(
    "use",
    [
        lambda x, w: w.rotate(1),
        lambda x, w: w * w,
        lambda x, w: w + 1,
        lambda x, w: -w,
        lambda x, w: w.sum_slots(),
    ],
    ids=["rotate", "plain*plain", "plain+const", "neg", "sum_slots"],
)
def test_plaintext_where_a_ciphertext_is_needed(ckks, use):
    p = fhec.Program("pt", ckks)
    x, w = p.input("x"), p.plain("w")
    with pytest.raises(PlaintextOperandError) as e:
        use(x, w)
    assert e.value.where.endswith(".py:" + str(e.value.where.rpartition(":")[2]))
    assert "test_errors.py" in e.value.where
    assert "'w'" in str(e.value) and "p.input" in str(e.value)


def test_plaintext_output(ckks):
    p = fhec.Program("pt", ckks)
    w = p.plain("w")
    with pytest.raises(PlaintextOperandError) as e:
        line = here(); p.output("y", w)  # noqa: E702
    names_line(e, line)


def test_output_never_set(ckks):
    p = fhec.Program("unset", ckks)
    out = [None] * 2
    with pytest.raises(UnsetOutputError) as e:
        line = here(); p.output("y", out[0])  # noqa: E702
    names_line(e, line)


def test_program_without_outputs(ckks):
    line = here(); p = fhec.Program("empty", ckks)  # noqa: E702
    p.input("x")
    with pytest.raises(UnsetOutputError) as e:
        fhec.evaluate(p, {"x": [1.0]}, seed=0)
    names_line(e, line)
    with pytest.raises(UnsetOutputError):
        fhec.reference(p, {"x": [1.0]})


def test_decorated_function_returning_none(ckks):
    with pytest.raises(UnsetOutputError) as e:
        line = here() + 2

        @fhec.program(ckks)
        def f(x):
            x * 2

    names_line(e, line)
    assert "'f' returned None" in str(e.value)


def test_decorated_keyword_only_parameters_are_inputs(ckks):
    @fhec.program(ckks)
    def f(x, *, w: fhec.Plain, y: fhec.Cipher):
        return x * w + y

    assert [n.attr("name") for n in f.ir.nodes if n.op.value in ("input", "plain_input")] == ["x", "w", "y"]
    xs, ws, ys = (np.linspace(-1, 1, ckks.slots) * k for k in (0.5, 0.25, 0.125))
    got = fhec.evaluate(f, {"x": xs, "w": ws, "y": ys}, seed=0)["out"]
    assert np.max(np.abs(got - (xs * ws + ys))) < 1e-5


def _star(x, *xs):
    return x


def _defaulted(x, k=3):
    return x.rotate(k)


def _annotated(x, k: int):
    return x.rotate(k)


@pytest.mark.parametrize("fn, message", [
    (_star, "*xs cannot be an input"),
    (_defaulted, "parameter 'k' has a default (3)"),
    (_annotated, "parameter 'k' is annotated"),
])
def test_decorated_parameters_that_cannot_be_inputs_are_refused(ckks, fn, message):
    with pytest.raises(ProgramError, match=re.escape(message)) as e:
        fhec.program(ckks)(fn)
    assert "test_errors.py:" in e.value.where  # the def line


def test_decorator_without_parameters_says_so(ckks):
    with pytest.raises(ProgramError, match=r"needs the parameters: write @fhec.program\(fhec.CKKSParams") as e:
        line = here() + 2

        @fhec.program
        def f(x):
            return x

    names_line(e, line)


def test_unused_input_warns_at_its_line(ckks):
    p = fhec.Program("unused", ckks)
    x = p.input("x")
    line = here(); p.input("spare")  # noqa: E702
    p.output("y", x + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fhec.reference(p, {"x": [1.0], "spare": [0.0]})
    [w] = [c for c in caught if issubclass(c.category, UnusedInputWarning)]
    assert "'spare'" in str(w.message)
    assert w.filename.endswith("test_errors.py") and w.lineno == line


def test_more_values_than_slots(ckks):
    p = fhec.Program("big", ckks)
    x = p.input("x")
    with pytest.raises(TooManyValuesError) as e:
        line = here(); x * np.ones(ckks.slots + 1)  # noqa: E702
    names_line(e, line)
    line = here(); y = p.input("y")  # noqa: E702
    p.output("z", x + y)
    with pytest.raises(TooManyValuesError) as e:
        fhec.evaluate(p, {"x": [1.0], "y": np.ones(ckks.slots + 1)}, seed=0)
    names_line(e, line)
    assert "'y'" in str(e.value)
    with pytest.raises(TooManyValuesError):
        x.linear_transform(np.ones((2, ckks.slots + 1)))


def test_missing_and_unknown_inputs(ckks):
    p = fhec.Program("inputs", ckks)
    line = here(); x = p.input("x")  # noqa: E702
    p.output("y", x + 1)
    with pytest.raises(MissingInputError) as e:
        fhec.evaluate(p, {}, seed=0)
    names_line(e, line)
    with pytest.raises(MissingInputError) as e:
        fhec.reference(p, {"x": [1.0], "typo": [2.0]})
    assert "'typo'" in str(e.value)


# -- scheme and argument errors ----------------------------------------------------------------


def test_scheme_specific_operations(ckks, bgv):
    x = fhec.Program("c", ckks).input("x")
    b = fhec.Program("b", bgv).input("b")
    for call, fix in ((lambda: x.swap_rows(), "conjugate()"), (lambda: b.conjugate(), "swap_rows()"),
                      (lambda: b.rescale(), "mod_switch()")):
        with pytest.raises(SchemeMismatchError) as e:
            call()
        assert fix in str(e.value) and "test_errors.py" in e.value.where


def test_bgv_constants_are_integers(bgv):
    x = fhec.Program("b", bgv).input("x")
    with pytest.raises(InvalidPlaintextError) as e:
        line = here(); x * 0.5  # noqa: E702
    names_line(e, line)
    with pytest.raises(InvalidPlaintextError):
        x.linear_transform(np.eye(3) * 0.5)


@pytest.mark.parametrize(
    "bad",
    [
        lambda p, x: p.input("x"),                 # duplicate name
        lambda p, x: p.input("z", level=99),       # level out of range
        lambda p, x: p.plain("x"),                 # name taken by an encrypted input
        lambda p, x: x.sum_slots(0),
        lambda p, x: x.sum_slots(1000),
        lambda p, x: x.polynomial([3.0, float("nan")]),  # NaN coefficient
        lambda p, x: x.linear_transform(np.zeros((2, 2))),
        lambda p, x: x.level_down(x.level),
        lambda p, x: x.rotate(1.5),
        lambda p, x: x ** 0,
        lambda p, x: bool(x),                      # branching on an encrypted value
        lambda p, x: x * True,
    ],
    ids=["dup-input", "level", "dup-plain", "sum0", "sum-big", "nan-poly", "zero-matrix", "level-down",
         "float-rotation", "pow0", "bool", "bool-constant"],
)
def test_program_errors_name_the_line(ckks, bad):
    p = fhec.Program("bad", ckks)
    x = p.input("x")
    with pytest.raises(ProgramError) as e:
        bad(p, x)
    assert e.value.where and "test_errors.py:" in e.value.where


@pytest.mark.parametrize("bad, message", [
    (lambda p, x: x.rescale(1), r"rescale\(\) .*too many positional arguments.*x\.rescale\(\)"),
    (lambda p, x: x.rotate(), r"missing a required argument: 'k'.*x\.rotate\(k\)"),
    (lambda p, x: x.rotate(step=1), r"unknown keyword 'step'.*x\.rotate\(k\)"),
    (lambda p, x: x.sum_slots(4, 1, 2), r"x\.sum_slots\(n=None, stride=1\)"),
    (lambda p, x: x.polynomial(), r"'coeffs'"),
    (lambda p, x: x.linear_transform({1: 1.0}, hoist="none"), r"'hoist' \(did you mean 'hoisting'\?\)"),
    (lambda p, x: p.input(), r"p\.input\(name, level=None, \*, bound=None\)"),
    (lambda p, x: p.output("y"), r"missing a required argument: 'value'.*p\.output\(name, value\)"),
    (lambda p, x: p.plain("w", 3.0), r"too many positional arguments"),
])
def test_wrong_arguments_to_a_dsl_method_name_the_line_and_the_signature(ckks, bad, message):
    # Python's bare TypeError ("rotate() got an unexpected keyword argument 'step'") had no DSL line
    p = fhec.Program("args", ckks)
    x = p.input("x")
    with pytest.raises(ProgramError, match=message) as e:
        bad(p, x)
    assert e.value.where and "test_errors.py:" in e.value.where


def test_messages_name_what_is_wrong_with_the_value(ckks, bgv):
    p = fhec.Program("m", ckks)
    x = p.input("x")
    p.output("y", x * 2)
    # None became NaN in the float cast: "holds NaN or infinite values"
    with pytest.raises(InvalidPlaintextError, match=r"holds a non-number, None at index 1"):
        fhec.evaluate(p, {"x": np.array([0.1, None])}, seed=1)
    # numpy's "inhomogeneous part.." text described numpy, not the data
    with pytest.raises(InvalidPlaintextError, match="nests sequences of different lengths") as e:
        fhec.evaluate(p, {"x": [[0.1], [0.1, 0.2]]}, seed=1)
    assert "inhomogeneous" not in str(e.value)
    # a BGV program was told "fhec's CKKS slots are real"
    with pytest.raises(InvalidPlaintextError, match="BGV slots are integers mod t = 257"):
        fhec.Program("b", bgv).input("z") * (1 + 0j)
    # 1.0 is within range; what is wrong is that it is not an int
    with pytest.raises(ProgramError, match=r"level_down\(1.0\) needs an integer level, not float"):
        x.level_down(1.0)


def test_duplicate_output_and_bad_program_arguments(ckks):
    p = fhec.Program("dup", ckks)
    x = p.input("x")
    p.output("y", x)
    with pytest.raises(ProgramError) as e:
        line = here(); p.output("y", x)  # noqa: E702
    names_line(e, line)
    with pytest.raises(ProgramError):
        fhec.Program("p", ckks, rescale="sometimes")
    with pytest.raises(ProgramError):
        fhec.Program("p", {"N": 64})
    with pytest.raises(ProgramError):
        fhec.Program("p", ckks, max_rotation_keys=0)


def test_bgv_noise_overflow_names_the_output_line():
    from fhec.errors import NoiseBudgetExhaustedError

    params = fhec.BGVParams(N=2**5, levels=0, plain_modulus=65537, security=None)
    p = fhec.Program("noisy", params, rescale="manual")
    x = p.input("x")
    line = here(); y = (x * x).relinearize()  # noqa: E702  one 32-bit prime cannot hold this product's noise
    p.output("y", y)
    with pytest.raises(NoiseBudgetExhaustedError) as e:
        fhec.evaluate(p, {"x": np.arange(32)}, seed=0)
    names_line(e, line)
    assert "output 'y'" in str(e.value)


def test_an_overflow_message_shows_the_excess():
    # a reach of 2 over a limit of 1.99996 used to print "can reach |slot| = 2 ... only
    # |slot| <= 2 fits" (both at 3 significant digits)
    p = fhec.Program("o", fhec.CKKSParams(N=2**10, levels=2, security=None))
    x, w = p.input("x", level=0), p.plain("w")
    with pytest.raises(fhec.ValueOverflowError, match=r"can reach \|slot\| = 2 .* only \|slot\| <= 1\.9999\d* fits"):
        x + w


def test_a_bgv_output_without_noise_budget_warns_and_every_run_names_its_line():
    from fhec.ring.primes import ntt_primes

    N = 2**10
    params = fhec.BGVParams(N=N, levels=2, plain_modulus=int(ntt_primes(N, 27, 1)[0]), modulus_bits=32,
                            security=None)
    p = fhec.Program("noise", params)
    x = p.input("x")
    y = x * x
    y = y * y
    with pytest.warns(fhec.PrecisionWarning, match=r"output 'y' has an estimated noise budget of -\d") as record:
        p.output("y", y)
    assert record[0].filename.endswith("test_errors.py")
    xs = np.arange(N) % 1000
    # the compiled runs used to raise without the output's name and line
    for run in (lambda: fhec.evaluate(p, {"x": xs}, seed=0), lambda: fhec.run(p, {"x": xs}, seed=0),
                lambda: fhec.compile(p, target="tiny").run({"x": xs}, seed=0)):
        with pytest.raises(fhec.NoiseBudgetExhaustedError, match=r"test_errors\.py:\d+: output 'y'"):
            run()


def test_linear_transform_n1_takes_numpy_integers_and_refuses_others():
    p = fhec.Program("lt", fhec.CKKSParams(N=2**10, levels=2, security=None))
    x = p.input("x")
    diagonals = {k: 0.1 for k in range(8)}
    assert x.linear_transform(diagonals, n1=np.int64(4)).level == x.linear_transform(diagonals, n1=4).level
    for bad in (0, -2, 2.0, True, "4"):
        with pytest.raises(fhec.ParameterError, match="baby-step count is a positive integer"):
            x.linear_transform(diagonals, n1=bad)


def test_a_chebyshev_operand_beyond_the_domain_is_named_as_the_cause():
    # the overflow used to advise one more level at every level count, then trace at 10
    # levels into a result off by 1e14
    series = fhec.approx(np.exp, domain=(-1, 1), degree=63)
    p = fhec.Program("dom", fhec.CKKSParams(N=2**11, levels=6, scale_bits=28, word_bits=32, security=None))
    x = p.input("x", bound=1.2)
    with pytest.raises(fhec.ValueOverflowError, match=r"\|x\| = 1\.2 .*beyond the interval \[-1, 1\].*widen the domain"):
        x.polynomial(series)
    p.output("y", p.input("y", bound=1.0).polynomial(series))  # within the domain it fits


def test_two_diagonal_keys_of_one_step_are_both_named(ckks):
    # 3 and 3 + slots are one rotation: the error named only the second key
    x = fhec.Program("dup", ckks).input("x")
    with pytest.raises(ProgramError, match=rf"diagonals 3 and {3 + ckks.slots} are the same rotation step") as e:
        line = here(); x.linear_transform({3: 1.0, 3 + ckks.slots: 2.0})  # noqa: E702
    names_line(e, line)


def test_a_ciphertext_method_on_a_plain_input_names_it_and_the_fix(ckks):
    # w.bootstrap() was a bare AttributeError; hasattr must still answer False
    from fhec.errors import PlainAttributeError

    p = fhec.Program("plainattr", ckks)
    w = p.plain("w")
    with pytest.raises(PlainAttributeError, match=r"bootstrap applies to encrypted values.*p.input") as e:
        line = here(); w.bootstrap()  # noqa: E702
    names_line(e, line)
    assert isinstance(e.value, AttributeError) and not hasattr(w, "level")
    with pytest.raises(AttributeError):
        w.no_such_thing


def test_an_output_precision_warning_names_the_users_line():
    # `checked_calls` wraps p.output: the warning is attributed to the output's line, not the wrapper
    import warnings

    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, keyswitch="bv", security=None)
    p = fhec.Program("noisy", params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = p.input("x").rotate(1)  # a BV rotation at 32-bit words: its error swamps the value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p.output("y", y)  # the line the warning must name
    low = [w for w in caught if issubclass(w.category, fhec.PrecisionWarning)]
    assert low and all(w.filename.endswith("test_errors.py") for w in low)
