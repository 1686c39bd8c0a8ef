"""The DSL: what each operation traces to, and that it computes what it says.

Semantics are checked end to end: `fhec.evaluate` (keygen, encrypt, eager evaluator,
decrypt) against `fhec.reference` and against numpy written here by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fhec
from fhec.passes.he_expand import expand
from fhec.ir.he import HeOp
from fhec.testing import assert_matches_reference


def ops(program) -> list[str]:
    return [n.op.value for n in program.ir.nodes]


def rand(params, seed=0, n=None):
    rng = np.random.default_rng(seed)
    n = params.slots if n is None else n
    if params.scheme == "ckks":
        return rng.uniform(-1, 1, n)
    return rng.integers(0, params.plain_modulus, n)


# -- tracing ----------------------------------------------------------------------------------


def test_auto_multiply_is_mul_relinearize_rescale(ckks):
    p = fhec.Program("m", ckks)
    x, y = p.input("x"), p.input("y")
    z = x * y
    p.output("z", z)
    assert ops(p) == ["input", "input", "mul", "relinearize", "rescale", "output"]
    assert z.level == ckks.top_level - 1 and z.parts == 2
    assert z.scale == pytest.approx(ckks.scale_at(ckks.top_level - 1), rel=1e-12)


def test_bgv_auto_multiply_mod_switches(bgv):
    p = fhec.Program("m", bgv)
    x = p.input("x")
    p.output("z", x * x)
    assert ops(p) == ["input", "mul", "relinearize", "mod_switch", "output"]


def test_integer_constants_multiply_without_a_level(any_params):
    p = fhec.Program("c", any_params)
    x = p.input("x")
    y = 3 * x
    assert y.level == x.level and y.scale == x.scale
    assert p.ir.node(y.id).attr("value") == 3
    p.output("y", y)
    assert_matches_reference(p, {"x": rand(any_params)}, seed=0)


def test_float_and_vector_constants_rescale_in_auto_mode(ckks):
    p = fhec.Program("c", ckks)
    x = p.input("x")
    y = x * 0.5
    z = np.linspace(-1, 1, 7) * x  # numpy on the left defers to the Cipher
    assert y.level == z.level == x.level - 1
    p.output("y", y + z)
    assert ops(p).count("rescale") == 2
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    expected = 0.5 * xs + np.concatenate([np.linspace(-1, 1, 7), np.zeros(ckks.slots - 7)]) * xs
    assert np.max(np.abs(got - expected)) < 1e-5


def test_auto_mode_keeps_every_level_at_its_canonical_scale(ckks):
    """Constants are encoded so that rescaled products land on the level's scale; then
    additions never need a correction (the auto invariant)."""
    p = fhec.Program("canon", ckks)
    x, w = p.input("x"), p.plain("w")
    a = x * 0.3
    b = x * w
    c = x * x
    d = (a + b + c) * 0.7 + x.rotate(1) * np.ones(4)
    p.output("d", d)
    for n in p.ir.nodes:
        t = n.type
        if n.op in (HeOp.INPUT, HeOp.RESCALE, HeOp.LEVEL_DOWN, HeOp.ADD, HeOp.OUTPUT):
            assert t.scale == pytest.approx(ckks.scale_at(t.level), rel=2.0**-40), n
    assert "level_down" not in ops(p)[: ops(p).index("add") + 1]  # same-level adds need no alignment
    assert_matches_reference(p, {"x": rand(ckks), "w": rand(ckks, 1)}, seed=0)


def test_auto_mode_aligns_levels_with_level_down(any_params):
    p = fhec.Program("align", any_params)
    x = p.input("x")
    y = x * x + x
    p.output("y", y)
    assert "level_down" in ops(p)
    assert_matches_reference(p, {"x": rand(any_params)}, seed=0)


def test_manual_mode_lazy_relinearization(ckks):
    p = fhec.Program("lazy", ckks, rescale="manual")
    a, b, c, d = (p.input(n) for n in "abcd")
    s = a * b + c * d
    assert s.parts == 3
    r = s.relinearize().rescale()
    assert r.parts == 2 and r.level == ckks.top_level - 1
    p.output("r", r)
    assert ops(p).count("relinearize") == 1
    assert_matches_reference(p, {n: rand(ckks, i) for i, n in enumerate("abcd")}, seed=0)


def test_manual_mode_level_down_then_add(ckks):
    p = fhec.Program("manual", ckks, rescale="manual")
    x = p.input("x")
    y = (x * x).relinearize().rescale()
    p.output("z", y + x.level_down(y.level))
    assert_matches_reference(p, {"x": rand(ckks)}, seed=0)


def test_relinearize_is_a_no_op_on_two_parts(ckks):
    p = fhec.Program("r", ckks)
    x = p.input("x")
    assert x.relinearize() is x


def test_identities_add_no_nodes(ckks):
    p = fhec.Program("id", ckks)
    x = p.input("x")
    assert x.rotate(0) is x and x.rotate(ckks.slots) is x
    assert x.sum_slots(1) is x
    assert x.polynomial([0, 1]) is x
    assert x ** 1 is x
    assert len(p.ir.nodes) == 1


def test_bgv_mod_switch_changes_the_factor_and_adds_align_it(bgv):
    p = fhec.Program("f", bgv)
    x, y = p.input("x"), p.input("y")
    z = (x * y) * x + x.mod_switch()  # operands with different plaintext factors
    p.output("z", z)
    assert "mul_factor" in ops(p)
    xs, ys = rand(bgv), rand(bgv, 1)
    got = fhec.evaluate(p, {"x": xs, "y": ys}, seed=0)["z"]
    t = bgv.plain_modulus
    assert np.array_equal(got, (xs * ys % t * xs + xs) % t)


def test_inputs_at_a_lower_level(ckks):
    p = fhec.Program("lvl", ckks)
    x = p.input("x", level=1)
    y = p.input("y")
    assert x.level == 1
    p.output("z", x * y)
    assert_matches_reference(p, {"x": rand(ckks), "y": rand(ckks, 1)}, seed=0)


def test_ckks_mod_switch_in_auto_mode_lands_on_the_lower_scale(ckks):
    p = fhec.Program("ms", ckks)
    x = p.input("x")
    y = x.mod_switch()
    assert p.ir.node(y.id).op is HeOp.LEVEL_DOWN
    assert y.scale == pytest.approx(ckks.scale_at(y.level), rel=2.0**-40)


def test_plain_operands_on_either_side(any_params):
    p = fhec.Program("plain", any_params)
    x, w = p.input("x"), p.plain("w")
    p.output("a", w - x)
    p.output("b", x - w)
    p.output("c", w * x + w)
    p.output("d", 2 - x)
    p.output("e", -x + 1)
    assert_matches_reference(p, {"x": rand(any_params), "w": rand(any_params, 1)}, seed=0)


def test_short_inputs_are_zero_padded(any_params):
    p = fhec.Program("pad", any_params)
    x = p.input("x")
    p.output("y", x + 1)
    got = fhec.reference(p, {"x": [3, 4]})["y"]
    assert got.shape == (any_params.slots,)
    assert list(got[:3]) == [4, 5, 1]


def test_power_and_division(ckks):
    p = fhec.Program("pow", ckks)
    x = p.input("x")
    p.output("cube", x**3)
    p.output("half", x / 2)
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    assert np.max(np.abs(got["cube"] - xs**3)) < 1e-5
    assert np.max(np.abs(got["half"] - xs / 2)) < 1e-5


# -- slot movement ------------------------------------------------------------------------------


def test_rotate_matches_numpy_roll(ckks):
    p = fhec.Program("rot", ckks)
    x = p.input("x")
    for k in (1, -3, 5):
        p.output(f"r{k}", x.rotate(k))
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    for k in (1, -3, 5):
        assert np.max(np.abs(got[f"r{k}"] - np.roll(xs, -k))) < 1e-5


def test_bgv_rotates_rows_and_swaps_them(bgv):
    p = fhec.Program("rows", bgv)
    x = p.input("x")
    p.output("r", x.rotate(2))
    p.output("s", x.swap_rows())
    xs = rand(bgv)
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    rows = xs.reshape(2, -1)
    assert np.array_equal(got["r"], np.roll(rows, -2, axis=1).reshape(-1))
    assert np.array_equal(got["s"], rows[::-1].reshape(-1))


def test_conjugate_keeps_real_values(ckks):
    p = fhec.Program("conj", ckks)
    x = p.input("x")
    p.output("c", x.conjugate())
    assert_matches_reference(p, {"x": rand(ckks)}, seed=0)


@pytest.mark.parametrize("n", [2, 3, 7, 8, 32])
def test_sum_slots_windows(ckks, n):
    p = fhec.Program("sum", ckks)
    x = p.input("x")
    p.output("s", x.sum_slots(n))
    xs = rand(ckks) / n
    got = fhec.evaluate(p, {"x": xs}, seed=0)["s"]
    expected = np.array([sum(xs[(i + j) % ckks.slots] for j in range(n)) for i in range(ckks.slots)])
    assert np.max(np.abs(got - expected)) < 1e-5


@pytest.mark.parametrize("n, stride", [(2, 3), (4, 8), (5, 6), (3, 31)])
def test_strided_sum_and_replicate_match_lattigo_s_definitions(ckks, n, stride):
    """InnerSum: slot i <- sum_j x[i + j·stride]; Replicate: slot i <- sum_j x[i − j·stride]."""
    p = fhec.Program("strided", ckks)
    x = p.input("x")
    p.output("s", x.sum_slots(n, stride=stride))
    p.output("r", x.replicate(n, stride=stride))
    xs = rand(ckks) / n
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    idx = np.arange(ckks.slots)
    want_s = sum(xs[(idx + j * stride) % ckks.slots] for j in range(n))
    want_r = sum(xs[(idx - j * stride) % ckks.slots] for j in range(n))
    assert np.max(np.abs(got["s"] - want_s)) < 1e-5 and np.max(np.abs(got["r"] - want_r)) < 1e-5
    steps = sorted(k.attr("step") for k in expand(p).nodes_of(HeOp.ROTATE))
    assert len(steps) == 2 * (n.bit_length() - 1 + bin(n).count("1") - 1)


def test_replicate_copies_a_block(bgv):
    p = fhec.Program("rep", bgv)
    p.output("r", p.input("x").replicate(4, stride=3))
    row = bgv.N // 2
    x = np.zeros(bgv.N, dtype=np.int64)
    x[:3], x[row:row + 3] = [1, 2, 3], [4, 5, 6]
    got = fhec.evaluate(p, {"x": x}, seed=0)["r"]
    assert list(got[:13]) == [1, 2, 3] * 4 + [0] and list(got[row:row + 12]) == [4, 5, 6] * 4


@pytest.mark.parametrize("call", [lambda x: x.sum_slots(4, stride=0), lambda x: x.replicate(4, stride=2.5),
                                  lambda x: x.replicate(0), lambda x: x.sum_slots(4, stride=10**6)])
def test_bad_strides_are_clear_errors(ckks, call):
    p = fhec.Program("bad", ckks)
    with pytest.raises(fhec.ProgramError, match="stride|n="):
        call(p.input("x"))


def test_sum_slots_uses_log2_rotations(ckks):
    p = fhec.Program("sum", ckks)
    p.output("s", p.input("x").sum_slots())
    expanded = expand(p)
    assert [n.attr("step") for n in expanded.nodes_of(HeOp.ROTATE)] == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("n", [3, 32, 64])
def test_bgv_sum_slots(bgv, n):
    p = fhec.Program("sum", bgv)
    x = p.input("x")
    p.output("s", x.sum_slots(n))
    xs = rand(bgv)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["s"]
    t, half = bgv.plain_modulus, bgv.N // 2
    if n == bgv.N:
        assert np.all(got == xs.sum() % t)
    else:
        rows = xs.reshape(2, -1)
        expected = np.array([[sum(r[(i + j) % half] for j in range(n)) % t for i in range(half)] for r in rows])
        assert np.array_equal(got, expected.reshape(-1))


# -- linear transforms and polynomials ---------------------------------------------------------


def test_linear_transform_is_matrix_vector_product(ckks):
    rng = np.random.default_rng(3)
    m = rng.uniform(-1, 1, (5, 9)) / 9
    p = fhec.Program("lt", ckks)
    x = p.input("x")
    p.output("y", x.linear_transform(m))
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got[:5] - m @ xs[:9])) < 1e-5
    assert np.max(np.abs(got[5:])) < 1e-5


def test_linear_transform_keeps_only_nonzero_diagonals(ckks):
    p = fhec.Program("band", ckks)
    x = p.input("x")
    y = x.linear_transform(np.eye(6) + np.eye(6, k=1) + np.eye(6, k=-2))
    steps = [d[0] for d in p.ir.node(y.id - 1).attr("diagonals")]  # the node before the rescale
    assert steps == [0, 1, ckks.slots - 2]  # a subdiagonal is a rotation by -2, i.e. slots - 2


def test_linear_transform_dict_form(ckks):
    p = fhec.Program("diag", ckks)
    x = p.input("x")
    d0, d3 = rand(ckks, 1), rand(ckks, 2)
    p.output("y", x.linear_transform({0: d0, -3: d3}))
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - (d0 * xs + d3 * np.roll(xs, 3)))) < 1e-5


def test_linear_transform_scalar_diagonals_fill_every_slot(ckks):
    p = fhec.Program("diag", ckks)
    x = p.input("x")
    d3 = rand(ckks, 2)
    p.output("y", x.linear_transform({0: 0.5, -3: d3, 2: -1}))
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - (0.5 * xs + d3 * np.roll(xs, 3) - np.roll(xs, -2)))) < 1e-5


def test_bgv_linear_transform_crosses_rows(bgv):
    rng = np.random.default_rng(4)
    m = rng.integers(0, 257, (bgv.N, bgv.N)) * (rng.random((bgv.N, bgv.N)) < 0.02)
    p = fhec.Program("lt", bgv)
    x = p.input("x")
    y = x.linear_transform(m)
    assert any(swap for _, swap, _ in p.ir.node(y.id - 1).attr("diagonals"))
    p.output("y", y)
    xs = rand(bgv)
    assert np.array_equal(fhec.evaluate(p, {"x": xs}, seed=0)["y"], (m @ xs) % 257)


@pytest.mark.parametrize("coeffs", [[0.5, 0.2, 0, -0.01], [1, 0, 0, 0, 0, 0, 0, 0.1], [0, 0, 1]])
def test_polynomial_values_and_depth(coeffs):
    params = fhec.CKKSParams(N=2**6, levels=4, base_limbs=2, security=None)
    p = fhec.Program("poly", params)
    x = p.input("x")
    y = x.polynomial(coeffs)
    d = len(coeffs) - 1
    non_integer = any(c != int(c) for c in coeffs[1:] if c not in (0, 1, -1))
    # Paterson–Stockmeyer folds the scalar levels in: ceil(log2(d+1)), never more than the
    # old power tree's ceil(log2 d) + 1
    assert x.level - y.level == (d.bit_length() if non_integer else math.ceil(math.log2(d)))
    assert x.level - y.level <= math.ceil(math.log2(d)) + non_integer
    p.output("y", y)
    xs = rand(params)
    expected = sum(c * xs**i for i, c in enumerate(coeffs))
    assert np.max(np.abs(fhec.evaluate(p, {"x": xs}, seed=0)["y"] - expected)) < 1e-4


def test_bgv_polynomial_fermat(bgv):
    """x^(t-1) = 1 for x != 0 mod t: the equality test of the private-lookup example."""
    params = fhec.BGVParams(N=2**6, levels=9, plain_modulus=257, security=None)
    p = fhec.Program("fermat", params)
    x = p.input("x")
    p.output("eq", 1 - x.polynomial([0] * 256 + [1]))
    xs = rand(params)
    xs[:3] = 0
    got = fhec.evaluate(p, {"x": xs}, seed=0)["eq"]
    assert np.array_equal(got, (xs == 0).astype(np.int64))


# -- the decorator -------------------------------------------------------------------------------


def test_decorator_traces_inputs_and_outputs(ckks):
    @fhec.program(ckks)
    def f(x: fhec.Cipher, w: "fhec.Plain"):
        return x * w + x.rotate(2)

    assert isinstance(f, fhec.Program) and f.name == "f"
    assert list(f.ir.inputs) == ["x"] and list(f.ir.plain_inputs) == ["w"]
    assert list(f.ir.outputs) == ["out"]
    assert_matches_reference(f, {"x": rand(ckks), "w": rand(ckks, 1)}, seed=0)


def test_decorator_output_forms(ckks):
    @fhec.program(ckks, name="pair")
    def g(a, b):
        return a + b, a - b

    @fhec.program(ckks, rescale="manual")
    def h(a):
        return {"double": a + a}

    assert list(g.ir.outputs) == ["out0", "out1"] and g.name == "pair"
    assert list(h.ir.outputs) == ["double"] and h.options.rescale == "manual"


def test_program_equality_is_structural(ckks):
    def build():
        p = fhec.Program("eq", ckks)
        x = p.input("x")
        p.output("y", x * 2)  # one line for every build: the locations match too
        return p, x

    (a, _), (b, _) = build(), build()
    assert a == b and a.ir == b.ir and hash(a.ir) == hash(b.ir)
    c, x = build()
    c.output("z", x)
    assert a != c
