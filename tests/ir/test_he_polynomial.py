"""Polynomial evaluation: fhec/ir/he_polynomial.py, Cipher.polynomial, fhec.approx (frontend/approx.py).

Counts are measured on the expanded IR: ciphertext products are MUL nodes, depth is the
operand's level minus the result's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.polynomial import Chebyshev, Legendre, Polynomial
from numpy.polynomial import chebyshev as npc

import fhec
import fhec.testing as ft
from fhec.errors import LevelExhaustedError, PolynomialError
from fhec.ir.he import HeOp
from fhec.ir.he_polynomial import DIVIDE, Split, coefficient_reducer, plan_polynomial, polynomial_depth
from fhec.passes.he_expand import expand

DEEP = fhec.CKKSParams(N=2**6, levels=8, base_limbs=2, security=None)
PRECISE = fhec.CKKSParams(N=2**10, levels=8, scale_bits=30, word_bits=32, base_limbs=2, security=None)
BGV = fhec.BGVParams(N=2**6, levels=8, plain_modulus=257, security=None)


def traced(params, coeffs, bound=None, **kw):
    """(program, input, result) of y = x.polynomial(coeffs, **kw) with y as output.
    CKKS: the input is declared with `bound`, by default the largest |end| of the
    series' domain when it has one (the inputs the tests draw lie in it)."""
    p = fhec.Program("poly", params)
    domain = getattr(coeffs, "domain", None)
    if bound is None and domain is not None and params.scheme == "ckks":
        bound = float(max(abs(float(v)) for v in domain))
    x = p.input("x", bound=bound) if bound is not None else p.input("x")
    y = x.polynomial(coeffs, **kw)
    p.output("y", y)
    return p, x, y


def products(program) -> int:
    return len(list(expand(program.ir).nodes_of(HeOp.MUL)))


def dense(d: int, basis: str) -> list[float]:
    rng = np.random.default_rng(d)
    c = rng.uniform(-1, 1, d + 1)
    return list(c if basis == "chebyshev" else c / (d + 1))


# -- the bar: depth ceil(log2(d+1)), about sqrt(2d) + log2 d products ---------------------------


@pytest.mark.parametrize("basis", ["power", "chebyshev"])
def test_depth_and_products_for_every_degree_up_to_63(basis):
    """The static plan for every degree; the traced and expanded IR agrees with it."""
    for d in range(1, 64):
        plan = plan_polynomial(tuple(dense(d, basis)), basis)
        assert plan.depth == math.ceil(math.log2(d + 1)), d
        assert plan.products <= math.sqrt(2 * d) + math.log2(d) + 1, (d, plan)
        if d <= 9 or d in (15, 16, 17, 31, 32, 33, 47, 62, 63):
            p, x, y = traced(DEEP, dense(d, basis), basis=basis)
            assert (x.level - y.level, products(p)) == (plan.depth, plan.products), d
    assert plan.products <= 18 and plan.depth == 6  # d = 63


@pytest.mark.parametrize("basis", ["power", "chebyshev"])
@pytest.mark.parametrize("d, depth, muls", [(15, 4, 8), (31, 5, 13), (63, 6, 18)])
def test_benchmark_degrees(basis, d, depth, muls):
    p, x, y = traced(DEEP, dense(d, basis), basis=basis)
    assert (x.level - y.level, products(p)) == (depth, muls)


@pytest.mark.parametrize(
    "domain, extra", [((-8.0, 8.0), 1), ((0.0, 1.0), 0), ((-3.0, 5.0), 1), ((-1.0, 1.0), 0)], ids=str
)
def test_a_domain_costs_one_level_unless_its_map_is_integral(domain, extra):
    # (0, 1) maps by u = 2x - 1 (an exact integer multiply); (-1, 1) is no map at all
    p, x, y = traced(DEEP, dense(63, "chebyshev"), basis="chebyshev", domain=domain)
    assert x.level - y.level == 6 + extra
    assert products(p) == 18
    assert polynomial_depth(tuple(dense(63, "chebyshev")), "chebyshev", domain) == 6 + extra


def test_integer_coefficients_need_only_the_powers_depth():
    for d in range(1, 40):
        coeffs = [1] * (d + 1)
        p, x, y = traced(DEEP, coeffs)
        assert x.level - y.level == math.ceil(math.log2(d)), d


def test_never_deeper_than_the_previous_power_tree():
    """The old recipe took ceil(log2 i) levels per power x^i, plus one for a non-integer
    coefficient on it; sparse series with mixed coefficients never get deeper now."""
    rng = np.random.default_rng(7)
    for _ in range(500):
        d = int(rng.integers(1, 70))
        c = [0.0] * (d + 1)
        for i in rng.choice(d + 1, size=min(d + 1, int(rng.integers(1, 5))), replace=False):
            c[i] = float(rng.integers(-3, 4)) if rng.random() < 0.5 else float(rng.uniform(-1, 1))
        c[d] = c[d] or 1.0
        old = max((i - 1).bit_length() + (not float(v).is_integer()) for i, v in enumerate(c) if i and v)
        assert plan_polynomial(tuple(c), "power").depth <= old, c


def test_sparse_power_needs_only_its_squarings():
    p, x, y = traced(DEEP, [0] * 64 + [1])
    assert x.level - y.level == 6 and products(p) == 6


def test_expansion_is_deterministic():
    p, _, _ = traced(DEEP, dense(40, "chebyshev"), basis="chebyshev", domain=(-2.0, 3.0))
    assert expand(p.ir).nodes == expand(p.ir).nodes


# -- values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("divide", ["power", "chebyshev"])
def test_division_by_a_giant_step_is_exact(divide):
    rng = np.random.default_rng(1)
    to_numpy = {"power": Polynomial, "chebyshev": Chebyshev}[divide]
    for g in (1, 2, 4, 8, 16):
        c = tuple(rng.uniform(-1, 1, 2 * g))
        q, r = DIVIDE[divide](c, g)
        basis_g = to_numpy.basis(g)
        rebuilt = to_numpy(q) * basis_g + to_numpy(r)
        assert np.allclose(rebuilt.coef[: 2 * g], c) and len(r) == g


def test_numpy_chebyshev_on_a_domain_matches_numpy():
    """The issue's bar: x.polynomial(Chebyshev(c, domain=[-8, 8])) matches numpy."""
    rng = np.random.default_rng(2)
    series = Chebyshev(rng.uniform(-1, 1, 64) / np.arange(1, 65), domain=[-8, 8])
    p, x, y = traced(PRECISE, series)
    assert x.level - y.level == 7
    xs = rng.uniform(-8, 8, PRECISE.slots)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - series(xs))) < 2.0 ** -12
    assert np.allclose(fhec.reference(p, {"x": xs})["y"], series(xs), rtol=0, atol=1e-12)


def test_power_basis_matches_numpy_and_keeps_any_range():
    rng = np.random.default_rng(3)
    coeffs = rng.uniform(-1, 1, 12) / 12
    p, x, y = traced(PRECISE, list(coeffs), bound=1.1)
    xs = rng.uniform(-1.1, 1.1, PRECISE.slots)  # no domain: values outside [-1, 1] are fine
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - Polynomial(coeffs)(xs))) < 2.0 ** -14


def test_numpy_polynomial_with_a_domain_is_a_power_series_in_the_mapped_variable():
    rng = np.random.default_rng(4)
    series = Polynomial(rng.uniform(-1, 1, 8) / 8, domain=[2, 6])
    p, x, y = traced(PRECISE, series)
    attrs = p.ir.node(y.id).attr_dict
    assert attrs["domain"] == (2.0, 6.0) and "basis" not in attrs
    xs = rng.uniform(2, 6, PRECISE.slots)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - series(xs))) < 2.0 ** -14


def test_approx_tanh_end_to_end():
    a = fhec.approx(np.tanh, (-8, 8), 63)
    assert isinstance(a.poly, Chebyshev) and a.domain == (-8.0, 8.0) and a.degree == 63
    assert a.max_error < 1e-4
    grid = np.linspace(-8, 8, 5001)
    assert np.max(np.abs(a(grid) - np.tanh(grid))) <= a.max_error * 1.5
    p, x, y = traced(PRECISE, a)
    xs = np.random.default_rng(5).uniform(-8, 8, PRECISE.slots)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - np.tanh(xs))) < 1e-3


def test_approx_is_the_interpolant():
    a = fhec.approx(lambda t: t**3 - t, (0, 2), 3)  # a cubic is its own interpolant
    assert np.allclose(a.poly.convert(kind=Polynomial, domain=[-1, 1]).coef, [0, -1, 0, 1], atol=1e-12)
    assert a.max_error < 1e-12
    assert fhec.approx(np.cos, (0, 1), 0).degree == 0


def test_bgv_chebyshev_series_is_exact():
    coeffs = [3, -1, 4, 1, -5, 9, 2, 6]
    p, x, y = traced(BGV, coeffs, basis="chebyshev")
    assert x.level - y.level == 3
    xs = np.random.default_rng(6).integers(0, 257, BGV.slots)
    power = [int(round(v)) for v in npc.cheb2poly(coeffs)]  # exact: small integers
    expected = np.array([sum(c * pow(int(v), i, 257) for i, c in enumerate(power)) % 257 for v in xs])
    assert np.array_equal(fhec.evaluate(p, {"x": xs}, seed=0)["y"], expected)
    assert np.array_equal(fhec.reference(p, {"x": xs})["y"], expected)


@pytest.mark.parametrize("params, c", [(PRECISE, 0.75), (PRECISE, 0), (BGV, 5)], ids=["ckks", "zero", "bgv"])
def test_constant_polynomial_is_an_encryption_of_the_constant(params, c):
    p, x, y = traced(params, [c, 0, 0], bound=6.0 if params.scheme == "ckks" else None)
    assert y.level == x.level and products(p) == 0
    xs = np.arange(params.slots) % 7
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.allclose(got, c, atol=1e-6)


def test_identity_series_are_the_operand():
    p = fhec.Program("id", DEEP)
    x = p.input("x")
    assert x.polynomial([0, 1]) is x
    assert x.polynomial([0, 1.0], basis="chebyshev") is x
    assert x.polynomial(Chebyshev([0, 1])) is x


@st.composite
def chebyshev_cases(draw):
    """(program, inputs): a random Chebyshev or power series of degree <= 15 on a random
    domain (CKKS) or an integer series (BGV), inputs inside the domain."""
    scheme = draw(st.sampled_from(["ckks", "bgv"]))
    basis = draw(st.sampled_from(["chebyshev", "power"]))
    d = draw(st.integers(0, 15))
    if scheme == "bgv":
        coeffs = draw(st.lists(st.integers(-300, 300), min_size=d + 1, max_size=d + 1))
        p, _, _ = traced(BGV, coeffs, basis=basis)
        return p, {"x": draw(ft.inputs_for(p, full=True))["x"]}
    unit = st.floats(-1, 1, allow_nan=False, width=32)
    coeffs = np.array(draw(st.lists(unit, min_size=d + 1, max_size=d + 1)), dtype=np.float64)
    coeffs /= max(1.0, float(np.sum(np.abs(coeffs))))  # |value| <= 1 on the domain
    lo = draw(st.sampled_from([-8.0, -1.0, 0.0, 0.5]))
    hi = lo + draw(st.sampled_from([0.5, 1.0, 2.0, 16.0]))
    series = (Chebyshev if basis == "chebyshev" else Polynomial)(coeffs, domain=[lo, hi])
    p, _, _ = traced(DEEP, series)
    t = np.array(draw(st.lists(unit, min_size=p.params.slots, max_size=p.params.slots)), dtype=np.float64)
    return p, {"x": lo + (hi - lo) * (t + 1) / 2}  # t in [-1, 1] onto the domain


@given(chebyshev_cases())
def test_random_series_match_numpy_within_their_estimated_precision(case):
    program, inputs = case
    ft.assert_matches_reference(program, inputs, seed=0)  # CKKS: the estimated bits; BGV: exactly


# -- errors ----------------------------------------------------------------------------------------


def here() -> str:
    import sys

    return f"test_he_polynomial.py:{sys._getframe(1).f_lineno}"  # the caller's line


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda x: x.polynomial([0.5, float("nan")]), "coefficient 1"),
        (lambda x: x.polynomial([0.5, float("inf")]), "finite"),
        (lambda x: x.polynomial([0.5, "a"]), "not a real number"),
        (lambda x: x.polynomial([0.5, 1j]), "not a real number"),
        (lambda x: x.polynomial([]), "at least the constant term"),
        (lambda x: x.polynomial([[1, 2]]), "1-D sequence"),
        (lambda x: x.polynomial([0, 1], basis="legendre"), "'power', 'chebyshev'"),
        (lambda x: x.polynomial([0, 1], domain=(2, 2)), "degenerate"),
        (lambda x: x.polynomial([0, 1], domain=(0, float("inf"))), "degenerate"),
        (lambda x: x.polynomial([0, 1], domain=3), "pair of numbers"),
        (lambda x: x.polynomial(Chebyshev([0, 1], window=[0, 1])), "window"),
        (lambda x: x.polynomial(Legendre([0, 1])), "convert it"),
        (lambda x: x.polynomial(Chebyshev([0, 1]), basis="power"), "contradicts"),
        (lambda x: x.polynomial(Chebyshev([0, 1], domain=[0, 4]), domain=(0, 2)), "contradicts"),
    ],
)
def test_bad_series_name_the_line_and_the_fix(call, words):
    p = fhec.Program("bad", DEEP)
    x = p.input("x")
    before = p.ir
    with pytest.raises(PolynomialError) as e:
        call(x)
    assert e.value.where.endswith(f"test_he_polynomial.py:{call.__code__.co_firstlineno}")  # the DSL line
    assert words in str(e.value)
    assert p.ir == before


def test_bgv_takes_no_domain():
    p = fhec.Program("bad", BGV)
    x = p.input("x")
    with pytest.raises(PolynomialError, match="BGV polynomials take no domain"):
        x.polynomial([0, 1, 1], domain=(0, 4))


def test_too_few_levels_says_how_many_are_needed():
    p = fhec.Program("short", DEEP)
    x = p.input("x", level=5)
    with pytest.raises(LevelExhaustedError) as e:
        line = here(); x.polynomial(Chebyshev(dense(63, "chebyshev"), domain=[-8, 8]))  # noqa: E702
    assert e.value.where.endswith(line)
    assert "needs 7 level(s)" in str(e.value) and "level 5" in str(e.value)


@pytest.mark.parametrize(
    "args, words",
    [
        ((np.sin, (0, 1), -1), "degree"),
        ((np.sin, (0, 1), 2.5), "degree"),
        ((np.sin, (1, 0), 3), "a < b"),
        ((np.sin, "ab", 3), "pair of numbers"),
        ((lambda t: np.full_like(t, np.nan), (-1, 1), 3), "finite"),
        ((lambda t: 1.0, (0, 1), 3), "shape"),
        ((lambda t: [][1], (0, 1), 3), "vectorised"),
    ],
)
def test_approx_errors(args, words):
    with pytest.raises(PolynomialError) as e:
        fhec.approx(*args)
    assert words in str(e.value)


# -- alignment without LEVEL_DOWN ------------------------------------------------------------------


def _level_downs(program) -> int:
    return len(list(expand(program.ir).nodes_of(HeOp.LEVEL_DOWN)))


@pytest.mark.parametrize("d", [31, 63])
def test_giant_steps_meet_their_quotients_by_dropping_limbs(d):
    """A dense Chebyshev series (EvalMod's shape): where a leaf quotient lands below its
    giant step, the giant step drops limbs and the quotient's constants carry the scale,
    instead of a LEVEL_DOWN; the compiled limbs equal the evaluator's bit for bit and the
    result matches numpy within the estimated precision."""
    from fhec.verify_run import run_checked

    params = fhec.CKKSParams(N=2**8, levels=8, scale_bits=30, word_bits=32, base_limbs=2, security=None)
    coeffs = np.array(dense(d, "chebyshev"))
    p, _, _ = traced(params, Chebyshev(coeffs / np.sum(np.abs(coeffs))), bound=1.0)  # |value| <= 1
    expanded = expand(p.ir)
    giant = [n for n in expanded.nodes_of(HeOp.MUL)
             if any(expanded.node(a).op is HeOp.MOD_SWITCH for a in n.args)]
    assert giant, "no giant step took the limb-dropping path"
    assert _level_downs(p) <= {31: 3, 63: 4}[d]  # 7 and 8 when every alignment was a LEVEL_DOWN
    xs = np.random.default_rng(d).uniform(-1, 1, params.slots)
    run_checked(p, {"x": xs}, seed=0)  # every limb of the compiled run equals the evaluator's
    ft.assert_matches_reference(p, {"x": xs}, seed=0)


@pytest.mark.parametrize("d", [15, 63])
def test_bgv_leaves_fold_factor_alignments_into_their_coefficients(d):
    """A dense integer BGV series: every leaf term is one MUL_CONST carrying its factor
    alignment (`_Emitter.bgv_leaf`), so only the sums of nested giant steps (a remainder that
    is itself a split) still take a MUL_FACTOR, where every leaf term did; the result decrypts to
    the series mod t exactly as the reference computes it, and the compiled limbs equal the
    evaluator's bit for bit."""
    from fhec.verify_run import run_checked

    params = fhec.BGVParams(N=2**6, levels=9, plain_modulus=257, security=None)
    rng = np.random.default_rng(d)
    coeffs = [int(c) for c in rng.integers(-128, 129, d + 1)]
    p, x, y = traced(params, coeffs)
    assert x.level - y.level == math.ceil(math.log2(d + 1))
    expanded = expand(p.ir)
    folded = [n for n in expanded.nodes_of(HeOp.MUL_CONST) if n.attr("factor", None) is not None]

    def nested(node):
        return isinstance(node, Split) and (isinstance(node.r, Split)) + nested(node.q) + nested(node.r)

    plan = plan_polynomial(tuple(coeffs), "power", coefficient_reducer(params)).root
    assert folded and len(list(expanded.nodes_of(HeOp.MUL_FACTOR))) == nested(plan) == {15: 1, 63: 3}[d]
    xs = rng.integers(0, 257, params.slots)
    expected = np.array([sum(c * pow(int(v), i, 257) for i, c in enumerate(coeffs)) % 257 for v in xs])
    assert np.array_equal(fhec.reference(p, {"x": xs})["y"], expected)
    assert np.array_equal(fhec.evaluate(p, {"x": xs}, seed=0)["y"], expected)
    run_checked(p, {"x": xs}, seed=0)  # every limb of the compiled run equals the evaluator's


@pytest.mark.parametrize("coeffs", [
    [0.5] * 7 + [1],
    [0.5] * 15 + [1],
    [0.25, 0.5, 0.75, 2],
    [0.5, 0, 0, 0, 0, 0, 0, -1],
], ids=str)
def test_integer_terms_deeper_than_the_fractional_ones_keep_the_planned_depth(coeffs):
    # A leaf's non-integer terms are summed before one rescale at their lowest level; an
    # integer term below that level (0.5 + ... + 1·x^7's x^7, in the leaf 0.5 + 0.5x + 0.5x² + x³)
    # was dragged into that sum and rescaled too: one level more than plan_polynomial (and
    # the documented ceil(log2(d+1))) promised, and a LevelExhaustedError saying "needs 3
    # level(s) but its operand is at level 3".
    depth = plan_polynomial(tuple(coeffs), "power").depth
    assert depth <= math.ceil(math.log2(len(coeffs)))
    p, x, y = traced(DEEP, coeffs)
    assert x.level - y.level == depth
    tight = fhec.CKKSParams(N=2**10, levels=depth, scale_bits=30, word_bits=32, base_limbs=2, security=None)
    p, x, y = traced(tight, coeffs, bound=0.25)
    xs = np.random.default_rng(0).uniform(-0.25, 0.25, tight.slots)
    ft.assert_matches_reference(p, {"x": xs}, seed=1)
