"""Expansion of high-level ops: primitives only, same semantics, same types."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import given

import fhec
import fhec.testing as ft
from fhec.ir.he import HIGH_LEVEL_OPS, HeOp
from fhec.passes.he_expand import expand
from fhec.reference import reference_values
from fhec.evaluate import random_inputs

PARAMS = fhec.CKKSParams(N=2**6, levels=4, base_limbs=2, security=None)


def _check_expansion(program):
    ir = program.ir
    out = expand(ir)
    assert out.is_expanded and not any(n.op in HIGH_LEVEL_OPS for n in out.nodes)
    assert list(out.outputs) == list(ir.outputs) and list(out.inputs) == list(ir.inputs)
    for name in ir.outputs:  # same type; keys: the high-level node lists all its expansion needs
        a, b = out.node(out.outputs[name]).type, ir.node(ir.outputs[name]).type
        assert dataclasses.replace(a, keys=()) == dataclasses.replace(b, keys=())
    inputs = random_inputs(ir, 3)
    before, after = reference_values(ir, inputs), reference_values(out, inputs)
    for name in ir.outputs:
        a, b = before[ir.outputs[name]], after[out.outputs[name]]
        if ir.params.scheme == "bgv":
            assert np.array_equal(a, b)
        else:
            assert np.allclose(a, b, atol=1e-9)


@given(ft.programs(scheme="ckks", max_depth=3))
def test_expansion_preserves_semantics_and_types_ckks(p):
    _check_expansion(p)


@given(ft.programs(scheme="bgv", max_depth=3))
def test_expansion_preserves_semantics_and_types_bgv(p):
    _check_expansion(p)


def test_expanding_an_expanded_program_is_the_identity():
    p = fhec.Program("e", PARAMS)
    p.output("y", p.input("x").sum_slots())
    once = expand(p)
    assert expand(once) is once


def test_sum_slots_rotation_counts():
    for n, rotations in ((32, 5), (8, 3), (7, 4), (3, 2)):
        p = fhec.Program("s", PARAMS)
        p.output("y", p.input("x").sum_slots(n))
        out = expand(p)
        assert len(list(out.nodes_of(HeOp.ROTATE))) == rotations, n


def test_linear_transform_one_rotation_per_nonzero_diagonal():
    m = np.zeros((8, 8))
    for k in (0, 1, 3):
        m += np.eye(8, k=k)
    p = fhec.Program("lt", PARAMS)
    p.output("y", p.input("x").linear_transform(m))
    out = expand(p)
    assert sorted(n.attr("step") for n in out.nodes_of(HeOp.ROTATE)) == [1, 3]
    assert len(list(out.nodes_of(HeOp.MUL_CONST))) == 3
    assert len(list(out.nodes_of(HeOp.RESCALE))) == 1  # one rescale for the whole sum


def test_polynomial_computes_only_needed_powers():
    p = fhec.Program("poly", PARAMS)
    x = p.input("x")
    y = x.polynomial([0, 0, 0, 0, 0, 0, 0, 0, 1])  # x^8: three squarings
    p.output("y", y)
    out = expand(p)
    assert len(list(out.nodes_of(HeOp.MUL))) == 3
    assert x.level - y.level == 3


def test_dense_polynomial_depth_is_logarithmic():
    params = fhec.CKKSParams(N=2**6, levels=5, base_limbs=2, security=None)
    p = fhec.Program("poly", params)
    x = p.input("x")
    coeffs = [0.1 * (i + 1) for i in range(16)]  # degree 15
    y = x.polynomial(coeffs)
    assert x.level - y.level == math.ceil(math.log2(15 + 1))  # Paterson–Stockmeyer: no extra level for the scalars
    p.output("y", y)
    xs = random_inputs(p, seed=0)["x"] * 0.5
    got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
    assert np.max(np.abs(got - sum(c * xs**i for i, c in enumerate(coeffs)))) < 1e-4
