"""A series whose operand leaves its interval on the run's inputs warns at the series' line
(`fhec.reference.warn_series_outside`): the estimates take an operand bound up to
`DOMAIN_SLACK` beyond the interval as inside it, so only the data can tell."""

import warnings

import numpy as np
import pytest

import fhec
from fhec.ir.he_polynomial import within_domain

PARAMS = fhec.CKKSParams(N=2**10, levels=7, scale_bits=30, word_bits=32, security=None)


def _step(x):
    return np.tanh(20 * x)


def _program(degree, bound, basis_domain=None):
    p = fhec.Program("series", PARAMS)
    x = p.input("x", bound=bound)
    series = fhec.approx(_step, (-1, 1), degree) if basis_domain is None else basis_domain
    p.output("y", x.polynomial(series))
    return p


def _domain_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [w for w in caught if issubclass(w.category, fhec.PrecisionWarning) and "interval" in str(w.message)]


def test_a_series_whose_data_leaves_its_interval_warns_in_every_driver_and_still_runs_as_evaluated():
    p = _program(31, 1.04)
    assert within_domain((-1, 1), 1.04)  # the estimates take it as inside: no warning at trace time
    xs = {"x": np.linspace(-1.04, 1.04, PARAMS.slots)}
    compiled = fhec.compile(p, "tiny")
    outs = {}
    for name, run in [("evaluate", lambda: fhec.evaluate(p, xs, seed=3)), ("run", lambda: fhec.run(p, xs, seed=3)),
                      ("compiled", lambda: compiled.run(xs, seed=3)), ("reference", lambda: fhec.reference(p, xs))]:
        outs[name], caught = _domain_warnings(run)
        assert len(caught) == 1, name
        message = str(caught[0].message)
        assert caught[0].filename.endswith("test_series_domain.py"), name  # the series' line
        assert "reaches 1.04" in message and "[-1, 1]" in message and "domain=" in message
    assert np.array_equal(outs["evaluate"]["y"], outs["run"]["y"])
    assert np.array_equal(outs["evaluate"]["y"], outs["compiled"]["y"])


@pytest.mark.parametrize("degree, bound, data", [(31, 1.04, 1.0), (7, 1.06, 1.06), (31, 1.0, 1.0)])
def test_no_warning_inside_the_interval_or_where_the_series_stays_small(degree, bound, data):
    # (7, 1.06): a degree-7 approximation of tanh(20x) reaches 1.29 at 1.06, as on [-1, 1]
    p = _program(degree, bound)
    _, caught = _domain_warnings(lambda: fhec.evaluate(p, {"x": np.linspace(-data, data, PARAMS.slots)}, seed=1))
    assert caught == []


def test_power_series_without_a_domain_have_no_interval_to_leave():
    p = _program(None, 3.0, basis_domain=[0.5, 0.25, 0.0, 0.01])
    _, caught = _domain_warnings(lambda: fhec.evaluate(p, {"x": np.linspace(-3, 3, PARAMS.slots)}, seed=1))
    assert caught == []


def test_a_saved_compiled_program_keeps_its_source_and_the_check(tmp_path):
    p = _program(31, 1.04)
    loaded = fhec.load(fhec.save(fhec.compile(p, "tiny"), tmp_path / "series.fhec"))
    assert loaded.source is not None
    _, caught = _domain_warnings(lambda: loaded.run({"x": np.linspace(-1.04, 1.04, PARAMS.slots)}, seed=1))
    assert len(caught) == 1


def _explicit_domain_program(bound):
    p = fhec.Program("domain", PARAMS)
    x = p.input("x", bound=bound)
    y = x.polynomial(fhec.approx(lambda v: np.tanh(10 * v), (-2, 2), 31))  # the line errors name
    p.output("y", y * y)
    return p


def test_data_beyond_an_explicit_domain_within_the_slack_is_refused_where_the_bound_would_not_hold():
    # a bound of 2.08 is within 1/16 of [-2, 2]'s half-width: the compiler bounds the
    # series by its maximum on [-2, 2] (about 1.08), but at 2.08 it reaches 63
    p = _explicit_domain_program(2.08)
    data = {"x": np.linspace(-2.08, 2.08, PARAMS.slots)}
    compiled = fhec.compile(p, "tiny")
    for run in (lambda: fhec.evaluate(p, data, seed=1), lambda: fhec.run(p, data, seed=1),
                lambda: compiled.run(data, seed=1)):
        with pytest.raises(fhec.ValueOverflowError, match=r"test_series_domain.py:\d+: .*reaches 2.08.*widen the domain"):
            run()
    _, caught = _domain_warnings(lambda: fhec.reference(p, data))  # the plaintext semantics warns
    assert any("above the bound" in str(w.message) for w in caught)
    # inside the domain the same program runs, and as evaluated
    inside = {"x": np.linspace(-2, 2, PARAMS.slots)}
    assert np.array_equal(fhec.evaluate(p, inside, seed=1)["y"], compiled.run(inside, seed=1)["y"])


def test_an_asymmetric_domain_trusts_the_domain_and_the_run_checks_it():
    # |x| <= 1 cannot say x is in [0, 1]: the series is bounded by its values on the domain
    # (data in [0, 1] runs), and data outside it is refused where the series leaves that bound
    p = fhec.Program("positive", PARAMS)
    x = p.input("x", bound=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x.polynomial([0.5, 0.3, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001], basis="chebyshev", domain=(0.0, 1.0))
    p.output("y", y)
    assert y.bound < 1.1
    inside = {"x": np.linspace(0, 1, PARAMS.slots)}
    assert np.array_equal(fhec.evaluate(p, inside, seed=1)["y"], fhec.compile(p, "tiny").run(inside, seed=1)["y"])
    with pytest.raises(fhec.ValueOverflowError, match=r"reaches -1 .*interval \[0, 1\]"):
        fhec.evaluate(p, {"x": np.linspace(-1, 1, PARAMS.slots)}, seed=1)


@pytest.mark.parametrize("degree, levels", [(15, 4), (63, 6)])
def test_a_series_one_level_short_says_so_even_where_an_intermediate_overflows_first(degree, levels):
    # an intermediate at level 0 overflowed before the level check: "declare tighter bounds" does not help
    params = fhec.CKKSParams(N=2**9, levels=levels, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("short", params)
    x = p.input("x", bound=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(fhec.LevelExhaustedError, match=f"use levels={levels + 1}"):
            x.polynomial(fhec.approx(np.sin, (-2, 2), degree))


@pytest.mark.parametrize("f, domain, bound", [(lambda v: 1 / v, (1.0, 100.0), 100.0),
                                              (np.sqrt, (0.0, 1.0), 1.0), (np.log, (1.0, 100.0), 100.0)])
def test_an_offset_domain_gets_an_estimate_on_the_domain_and_no_warning(f, domain, bound):
    # inverses, roots and logarithms live on domains a symmetric bound cannot describe:
    # their estimates were over [-B, B], saturated at -18.8 bits where 17.8 were measured
    params = fhec.CKKSParams(N=2**10, levels=8, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("offset", params)
    x = p.input("x", bound=bound)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.polynomial(fhec.approx(f, domain, 31))
        p.output("y", y)
    assert not [w for w in caught if issubclass(w.category, fhec.PrecisionWarning)]
    data = {"x": np.linspace(*domain, params.slots)}
    err = np.max(np.abs(fhec.evaluate(p, data, seed=1)["y"] - fhec.reference(p, data)["y"]))
    assert 8 < y.estimated_bits <= -np.log2(err)


def test_an_approximation_in_a_bgv_program_is_refused_as_such():
    p = fhec.Program("bgv", fhec.BGVParams(N=2**6, levels=4, plain_modulus=257, security=None))
    with pytest.raises(fhec.PolynomialError, match="fhec.approx gives a CKKS approximation"):
        p.input("x").polynomial(fhec.approx(np.sin, (-1, 1), 7))


def test_random_inputs_are_drawn_in_the_domain_of_the_series_an_input_feeds():
    # fhec check / assert_matches_reference draw their own inputs: in [-100, 100] every
    # inverse on (1, 100) was refused; they now draw in the part of the bound inside it
    from fhec.evaluate import random_inputs

    params = fhec.CKKSParams(N=2**10, levels=8, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("inverse", params)
    x, z = p.input("x", bound=100), p.input("z", bound=2)
    p.output("y", x.polynomial(fhec.approx(lambda v: 1 / v, (1, 100), 31)) + z)
    drawn = random_inputs(p, seed=3)
    assert 1 <= drawn["x"].min() and drawn["x"].max() <= 100
    assert drawn["z"].min() < 0  # an input feeding no series keeps [-B, B]
    fhec.testing.assert_matches_reference(p, target="tiny", seed=3)


def test_the_input_strategy_draws_in_the_domain_of_the_series_an_input_feeds():
    from hypothesis import given, settings

    params = fhec.CKKSParams(N=2**9, levels=8, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("inverse", params)
    x = p.input("x", bound=100)
    p.output("y", x.polynomial(fhec.approx(lambda v: 1 / v, (1, 100), 15)))

    @settings(max_examples=10, deadline=None)
    @given(fhec.testing.inputs_for(p))
    def drawn(inputs):
        assert inputs["x"].size == params.slots and 1 <= inputs["x"].min() and inputs["x"].max() <= 100

    drawn()


def test_data_outside_a_trusted_domain_is_said_to_leave_the_estimate():
    # exp is smooth beyond (1, 3), so neither its value nor its slope gives it away, but the
    # Chebyshev pieces amplify their roundings there: estimated 15 bits, measured 10.7 at 0
    params = fhec.CKKSParams(N=2**10, levels=8, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("exp", params)
    x = p.input("x", bound=3.0)
    p.output("y", x.polynomial(fhec.approx(np.exp, (1, 3), 15)))
    data = np.full(params.slots, 2.0)
    data[0] = 0.0
    _, caught = _domain_warnings(lambda: fhec.evaluate(p, {"x": data}, seed=1))
    assert caught and "does not cover these inputs" in str(caught[0].message)


def test_random_inputs_follow_an_input_through_value_preserving_ops_and_a_bound_that_misses_is_named():
    from fhec.evaluate import random_inputs

    params = fhec.CKKSParams(N=2**10, levels=8, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("rotated", params)
    x = p.input("x", bound=100)
    p.output("y", x.rotate(3).polynomial(fhec.approx(lambda v: 1 / v, (1, 100), 15)))
    assert random_inputs(p, seed=1)["x"].min() >= 1
    q = fhec.Program("missed", params)
    z = q.input("z")  # |z| <= 1 never reaches (1, 100)
    q.output("y", z.polynomial(fhec.approx(lambda v: 1 / v, (1, 100), 15)))
    with pytest.raises(fhec.ProgramError, match=r"can only lie in \[-1, 1\] .*no value it may take lies in the domain"):
        random_inputs(q, seed=1)
