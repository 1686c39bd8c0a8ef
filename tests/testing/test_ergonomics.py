"""`fhec.testing` for users: importable without hypothesis, `settings`, strategies that fit
a target, `assert_matches_reference` on compiled programs and on the user's own expected
values, and the documented example (docs/testing.md), run verbatim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

import fhec
import fhec.testing as ft
from fhec.backends.target import load_target

ROOT = Path(__file__).resolve().parent.parent.parent


def _program():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, base_limbs=2, security=None)
    p = fhec.Program("sq", params)
    x = p.input("x")
    p.output("y", x * x + 1.0)
    return p


def test_import_without_hypothesis_names_the_extra():
    """In a fresh interpreter where hypothesis cannot be imported, the assertion works and
    the strategies raise an ImportError that is also a FhecError naming the extra."""
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import fhec, fhec.testing as ft\n"
        "assert callable(ft.assert_matches_reference)\n"
        "try:\n    ft.programs()\nexcept ImportError as e:\n"
        "    assert isinstance(e, fhec.FhecError); print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert "pip install 'fhec[test]'" in out.stdout


def test_settings_have_no_deadline_and_take_overrides():
    s = ft.settings(max_examples=3)
    assert s.deadline is None and s.max_examples == 3
    # health checks suppressed by the caller add to the too-slow one, which they used to replace
    s = ft.settings(suppress_health_check=[HealthCheck.filter_too_much])
    assert {HealthCheck.too_slow, HealthCheck.filter_too_much} <= set(s.suppress_health_check)


@pytest.mark.parametrize("overrides, message", [
    ({"nonsense": 1}, "no hypothesis setting named 'nonsense'; the settings are .*max_examples"),  # a raw TypeError
    ({"max_examples": -1}, "max_examples=-1 must be at least one"),  # hypothesis's InvalidArgument
])
def test_bad_settings_are_fhec_errors_naming_the_setting(overrides, message):
    with pytest.raises(fhec.InvalidArgumentError, match=message):
        ft.settings(**overrides)


@pytest.mark.parametrize("target", ["f1", "tiny", load_target("rpu")])
@ft.settings(max_examples=10)
@given(data=__import__("hypothesis").strategies.data())
def test_programs_for_a_target_draw_parameters_it_accepts(target, data):
    # a loaded IsaMachine was refused ("pass ... or a fhec Target"), though fhec.compile takes one
    t = load_target(target) if isinstance(target, str) else target
    scheme = data.draw(__import__("hypothesis").strategies.sampled_from(["ckks", "bgv"]))
    p = data.draw(ft.programs(scheme=scheme, max_depth=2, target=target))
    assert t.supports(p.params.N) and all(q < 2**t.word_bits for q in p.params.moduli + p.params.special_moduli)


def test_compiled_program_and_expected_values():
    p = _program()
    compiled = fhec.compile(p, target="f1")
    xs = np.linspace(-1, 1, 20)
    ft.assert_matches_reference(compiled, {"x": xs}, seed=0)
    ft.assert_matches_reference(p, {"x": xs}, seed=0, expected={"y": xs * xs + 1})
    ft.assert_matches_reference(compiled, {"x": xs}, seed=0, expected=lambda inputs: inputs["x"] ** 2 + 1)


def _cube(params):
    p = fhec.Program("cube", params=params)
    x = p.input("x")
    p.output("y", x * x * x)
    return p


def test_an_auto_program_gets_the_targets_parameters():
    """assert_matches_reference chooses a params="auto" program's parameters for its
    target, as fhec.compile does: it chose them without the target (N = 2^5), then f1
    refused them (TargetError: not N = 32)."""
    ft.assert_matches_reference(_cube(fhec.AutoParams(security=None)), target="f1", seed=1)


def test_an_auto_program_too_large_for_the_target_gets_the_auto_advice():
    # it gave the generic "pick parameters in that range", which says nothing of params="auto"
    with pytest.raises(fhec.TargetError, match=r'params="auto" needs N = 8192 .* security=None'):
        ft.assert_matches_reference(_cube("auto"), target="tiny", seed=1)


def test_a_wrong_expectation_prints_the_worst_slots():
    p = _program()
    xs = np.linspace(-1, 1, 20)
    wrong = xs * xs + 1
    wrong[7] += 0.5
    with pytest.raises(AssertionError) as e:
        ft.assert_matches_reference(p, {"x": xs}, seed=0, expected=wrong)
    message = str(e.value)
    assert "does not match the expected values" in message
    assert re.search(r"slot 7: expected 1\.569\d+, got 1\.069\d+ \(error 0\.5\)$", message), message


def test_bgv_mismatch_prints_expected_and_actual():
    params = fhec.BGVParams(N=2**6, levels=2, plain_modulus=257, security=None)
    p = fhec.Program("b", params)
    x = p.input("x")
    p.output("y", x * 3)
    xs = np.arange(64)
    with pytest.raises(AssertionError, match=r"slot 0: expected 1, got 0"):
        ft.assert_matches_reference(p, {"x": xs}, seed=0, expected={"y": (3 * xs + (xs == 0)) % 257})


@pytest.mark.parametrize("kwargs, message", [
    ({"expected": {"z": [1.0]}}, r"no values for output\(s\) \['y'\]"),
    # these passed, checking nothing of what they named
    ({"expected": {"y": [1.25], "y2": [1.0]}}, r"names 'y2', which the program does not output"),
    ({"expected": {"y": []}}, r"expected\['y'\] is empty"),
    ({"target": "tiny"}, "compiled for 'f1'.*or compile it for 'tiny'"),
    # it advised compiling for 'limbs', which is no compile target
    ({"target": "limbs"}, r"compiled for 'f1'.*pass the uncompiled fhec.Program with target='limbs'"),
])
def test_bad_arguments_are_fhec_errors(kwargs, message):
    compiled = fhec.compile(_program(), target="f1")
    with pytest.raises(fhec.InvalidArgumentError, match=message):
        ft.assert_matches_reference(compiled, {"x": [0.5]}, seed=0, **kwargs)


@pytest.mark.parametrize("build, message", [
    (lambda: ft.params("tfhe"), "scheme = 'tfhe'"),
    (lambda: ft.params("ckks", log_n=(7, 5)), r"log_n\[1\] = 5 must be an integer >= 7"),
    # beyond N = 2^17 failed only inside the test (InvalidRingDegreeError at the first draw)
    (lambda: ft.params("ckks", log_n=(18, 18)), r"log_n\[0\] = 18 must be an integer >= 1 and <= 17"),
    (lambda: ft.params("bgv", min_levels=0), "min_levels = 0"),
    (lambda: ft.programs(scheme="ckks", max_depth=-1), "max_depth = -1"),
    (lambda: ft.programs(max_ops=0), "max_ops = 0"),
    (lambda: ft.programs(rescale="sometimes"), "rescale = 'sometimes'"),
    (lambda: ft.programs(params="abc"), "must be a CKKSParams or BGVParams"),
    (lambda: ft.programs(scheme="bgv", params=_program().params), "params is a CKKS parameter set"),
    (lambda: ft.params("bgv", log_n=(16, 16)), r"t ≡ 1 mod 2N, which holds up to N = 2\^15"),
    (lambda: ft.params("bgv", target="rpu", log_n=(12, 16)), r"log_n = \(12, 16\)"),
])
def test_strategy_arguments_are_checked_when_built(build, message):
    # they used to be accepted (an unknown scheme drew BGV, a negative depth drew programs)
    # or to fail inside hypothesis while drawing (BGV at N = 2^16: "Cannot sample from a
    # length-zero sequence")
    with pytest.raises(fhec.InvalidArgumentError, match=message):
        build()


@pytest.mark.parametrize("build, message", [
    (lambda: ft.params("ckks", target="nope"), "unknown target 'nope'"),
    (lambda: ft.programs(scheme="ckks", max_depth=2, target="nope"), "unknown target 'nope'"),
    # a log_n the target has no ring degree of was replaced by the target's smallest, silently
    (lambda: ft.params("ckks", target="f1", log_n=(5, 6)),
     r"log_n = \(5, 6\) draws N = 2\^5..2\^6, but target 'f1' supports ring degrees N = 2\^10..2\^14"),
    (lambda: ft.programs(target="f1", params=fhec.CKKSParams(N=32, levels=1, security=None)),
     "target 'f1' supports ring degrees N = 1024..16384"),
])
def test_strategy_targets_are_checked_when_built(build, message):
    # an unknown target raised inside the test, at the first draw; a target beside params
    # was ignored, and the programs drawn did not compile for it
    with pytest.raises(fhec.TargetError, match=message):
        build()


@ft.settings(max_examples=10)
@given(ft.params("ckks", target="f1", log_n=(8, 11)))
def test_a_log_n_is_narrowed_to_the_targets_ring_degrees(p):
    assert p.N in (2**10, 2**11)


@ft.settings(max_examples=60)
@given(ft.programs(params=fhec.CKKSParams(N=2**10, levels=2, security=None), max_depth=2))
def test_programs_fit_a_given_parameter_set_with_little_headroom(program):
    # one 32-bit base prime at scale 2^30: |slot| <= 2 at level 0. The output added to use an
    # unused plain input (an input at level 0 plus the plain: bound 2) used to raise
    # ValueOverflowError inside the strategy after about 20 draws
    assert program.params.base_limbs == 1


@ft.settings(max_examples=3)
@given(ft.programs(max_depth=1, max_ops=2).flatmap(lambda p: st.tuples(st.just(p), ft.inputs_for(p))))
def test_a_drawn_program_can_be_wrapped_in_just(case):
    # hypothesis probes st.just's value with hash() and catches TypeError; the Program's
    # refusal to hash raised a bare ProgramError, which crashed the strategy
    program, inputs = case
    assert set(inputs) == set(program.ir.inputs) | set(program.ir.plain_inputs)
    with pytest.raises(fhec.ProgramError, match="dict key"):
        hash(program)


def test_the_documented_example_runs_verbatim():
    """Every python block of docs/testing.md, executed as written; each test function it
    defines is then called, as pytest would."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "testing.md").read_text(), re.S)
    assert blocks
    for block in blocks:
        namespace: dict = {"__name__": "docs_testing_md"}
        exec(compile(block, "docs/testing.md", "exec"), namespace)
        tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
        assert tests, block
        for test in tests:
            test()


def test_inputs_for_draws_within_declared_bounds_and_sparse_periods():
    """inputs_for drew every CKKS input from [-1, 1] whatever its declared bound, so a
    program with p.input("x", bound=0.25) failed every draw with ValueOverflowError; and a
    program with a sparse bootstrap got values it refuses (not periodic)."""
    from hypothesis import find

    from fhec.reference import check_bootstrap_inputs

    p = fhec.Program("bounded", fhec.CKKSParams(N=2**10, levels=2, security=None))
    x, w = p.input("x", bound=0.25), p.plain("w", bound=3.0)
    p.output("y", x * x + w)
    big = find(ft.inputs_for(p, full=True), lambda d: np.abs(d["w"]).max() > 2.0)
    assert np.abs(big["x"]).max() <= 0.25 and np.abs(big["w"]).max() <= 3.0
    ft.assert_matches_reference(p, big)

    cfg = fhec.BootstrapConfig(slots=4, hamming_weight=8,
                               evalmod=fhec.EvalModConfig(K=6, message_ratio_bits=4, arcsine_degree=7, double_angle=2))
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 2, scale_bits=30, word_bits=32, security=None,
                             bootstrap=cfg)
    q = fhec.Program("sparse", params)
    q.output("y", q.input("x", level=1).bootstrap())
    drawn = find(ft.inputs_for(q), lambda d: np.abs(d["x"]).max() > 0.5)
    assert np.array_equal(drawn["x"], np.tile(drawn["x"][:4], params.slots // 4))
    check_bootstrap_inputs(q, drawn)
