"""``fhec.Program(name, params="auto")``: parameters chosen at compile time, for the
target, by replaying the program under them (`fhec.frontend.auto`)."""

import numpy as np
import pytest

import fhec
import fhec.testing as ft


def _program(params="auto"):
    p = fhec.Program("auto", params)
    x, w = p.input("x"), p.plain("w")
    p.output("y", (x * x).rotate(1) * w + 0.5)
    p.output("s", (x @ np.eye(8)[:, ::-1]).sum(8))
    return p


def test_compiled_for_f1_runs_bit_exact_and_matches_numpy(capsys):
    p = _program()
    assert repr(p).endswith("params=auto>") and p.is_auto
    compiled = fhec.compile(p, target="f1")
    line = capsys.readouterr().out
    assert line.startswith("fhec: CKKS N=2^") and "depth 2" in line and line.count("\n") == 1
    params = compiled.program.params
    assert params.levels == 2 and params.security == 128 and 1024 <= params.N <= 16384
    xs, ws = np.linspace(-1, 1, 8), np.linspace(0, 1, 8)
    ft.assert_matches_reference(compiled, {"x": xs, "w": ws}, seed=0)  # every limb vs the evaluator, and numpy
    ft.assert_matches_reference(compiled, {"x": xs, "w": ws}, seed=0,
                                expected={"y": (np.roll(xs * xs, -1) * ws + 0.5)[:7], "s": [xs.sum()]})
    # reference, evaluate and the compiled program all see the chosen parameters: no second choice
    assert p.params == params and fhec.reference(p, {"x": xs, "w": ws})["y"].size == params.slots
    assert capsys.readouterr().out == ""


def test_a_choice_beyond_the_target_says_what_to_ask_for():
    # 12 bits at 128-bit security need N = 8192, above tiny's largest ring
    p = fhec.Program("secure", params="auto")
    a = p.input("a")
    p.output("y", (a * a + a).rotate(1) * 0.5)
    with pytest.raises(fhec.TargetError, match=r"needs N = 8192 .* target 'tiny' runs N <= 4096: ask for less"):
        fhec.compile(p, target="tiny")


def test_the_choice_follows_the_target():
    p = fhec.Program("toy", fhec.AutoParams(security=None))
    x = p.input("x")
    p.output("y", x * x)
    assert fhec.compile(p, target="tiny").program.params.N < 1024  # a toy ring for the toy target
    q = fhec.Program("toy", fhec.AutoParams(security=None))
    y = q.input("x")
    q.output("y", y * y)
    assert fhec.compile(q, target="f1").program.params.N == 1024  # F1's smallest ring


def test_a_second_choice_with_other_slots_warns():
    # tiny's toy ring (16 slots) cannot run on f1 (N >= 1024): the choice changes, and with
    # it what a rotation means, which fhec.reference and fhec.evaluate of the program then follow
    p = fhec.Program("toy", fhec.AutoParams(security=None))
    x = p.input("x")
    p.output("y", x.rotate(1) * 0.5 + x)
    small = fhec.compile(p, target="tiny")
    with pytest.warns(fhec.ParametersChangedWarning, match=r"512 slots instead of 16.*min_N=1024") as record:
        fhec.compile(p, target="f1")
    assert record[0].filename.endswith("test_auto_program.py")
    assert small.program.params.slots == 16 and p.params.slots == 512
    # a target that runs the current choice keeps it, without a word
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", fhec.ParametersChangedWarning)
        fhec.compile(p, target="f1-datapath")


def test_bgv_and_the_decorator():
    @fhec.program(fhec.AutoParams(scheme="bgv", plain_modulus=257, security=None))
    def f(a, b):
        return a * b + a.rotate(1)

    a, b = np.arange(20), np.arange(20) % 3
    got = fhec.evaluate(f, {"a": a, "b": b}, seed=0)
    assert f.params.plain_modulus == 257 and f.params.levels == 1
    assert np.array_equal(got["out"], fhec.reference(f, {"a": a, "b": b})["out"])


def test_a_long_vector_gets_a_ring_that_holds_it():
    p = fhec.Program("long", fhec.AutoParams(precision_bits=8))
    x = p.input("x")
    p.output("y", x * np.linspace(0, 1, 5000))
    assert p.params.slots >= 5000


def test_a_growing_program_is_chosen_again():
    p = fhec.Program("grow", fhec.AutoParams(precision_bits=8, security=None))
    x = p.input("x")
    p.output("a", x + 1)
    assert p.params.levels == 0
    p.output("b", x * x * x)
    assert p.params.levels == 2


@pytest.mark.parametrize("build, message", [
    (lambda p: p.input("x", level=1), "input 'x': level=1 names a level"),
    (lambda p: p.input("x").level_down(0), r"level_down\(0\) names a level"),
    (lambda p: fhec.Program("m", "auto", rescale="manual"), "rescale='manual' names a level"),
    (lambda p: fhec.Program("m", "automatic"), "or 'auto', got str"),
    (lambda p: fhec.AutoParams(scheme="tfhe"), "scheme"),
    (lambda p: fhec.AutoParams(precision_bits=0), "precision_bits"),
])
def test_level_statements_and_bad_requests_are_refused(build, message):
    with pytest.raises(fhec.FhecError, match=message):
        build(fhec.Program("p", "auto"))


def test_an_impossible_request_is_refused_when_the_program_is_used():
    p = fhec.Program("deep", fhec.AutoParams(precision_bits=30))
    x = p.input("x")
    p.output("y", x * x)
    with pytest.raises(fhec.ParameterError, match="reaches 30 bits"):
        fhec.compile(p, target="f1")


# -- replay fidelity over random statement sequences --------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

_M = np.arange(36, dtype=float).reshape(6, 6) / 64

_STATEMENTS = {
    "add": lambda v, k: v[-1] + 0.25 * (k + 1),
    "mul": lambda v, k: v[-1] * v[k % len(v)],
    "rotate": lambda v, k: v[-1].rotate(k - 2),
    "sum": lambda v, k: v[-1].sum(k + 1),
    "dot": lambda v, k: v[-1].dot(np.linspace(0, 1, k + 2)),
    "matmul": lambda v, k: v[-1] @ _M,
    "poly": lambda v, k: v[-1].polynomial([0.5, 0.25, 0.125][: k % 3 + 1] + [0.0625]),
    "neg": lambda v, k: -v[-1],
    "mean": lambda v, k: v[-1].mean(k + 1),
    "strided": lambda v, k: v[-1].sum_slots(k + 1, stride=2),
    "replicate": lambda v, k: v[-1].replicate(k + 1, stride=3),
}


def _build(params, statements):
    p = fhec.Program("random", params)
    values = [p.input("x"), p.input("y")]
    w = p.plain("w")
    values.append(values[0] * w)
    for name, k in statements:
        values.append(_STATEMENTS[name](values, k))
    p.output("out", values[-1])
    p.output("first", values[0] + values[1])
    return p


@given(st.lists(st.tuples(st.sampled_from(sorted(_STATEMENTS)), st.integers(0, 4)), max_size=6))
def test_a_replayed_program_is_the_program_written_with_the_chosen_parameters(statements):
    """The property that makes params="auto" safe: the program it stands for is, node for
    node (types, attributes and DSL lines included), the one the same code builds when
    given the chosen parameters directly."""
    auto = _build(fhec.AutoParams(precision_bits=6, security=None), statements)
    direct = _build(auto.params, statements)
    assert auto.ir == direct.ir


def test_an_automatic_program_warns_once_under_its_chosen_parameters():
    # the trace under the provisional parameters warned too, with other numbers
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = fhec.Program("a", "auto")
        p.output("y", p.input("x") * 1e9)
        p.params
    low = [w for w in caught if issubclass(w.category, fhec.PrecisionWarning)]
    assert len(low) == 1 and "output 'y'" in str(low[0].message)


def test_an_automatic_program_takes_a_slot_count_as_a_need_for_a_larger_ring():
    # x.mean(256) under the smallest ring's 16 slots raised "n must be between 1 and 16" at a valid line
    p = fhec.Program("means", fhec.AutoParams(security=None))
    x = p.input("x")
    p.output("m", x.mean(256))
    assert p.params.slots >= 256
    bad = fhec.Program("bad", fhec.AutoParams(security=None))
    with pytest.raises(fhec.ProgramError, match="n must be"):
        bad.output("m", bad.input("x").mean(0))
        bad.params
