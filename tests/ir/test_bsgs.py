"""Baby-step giant-step linear transforms (fhec.ir.he_recipes.linear_transform_recipe)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fhec
from fhec.evaluate import prepare
from fhec.ir.he_recipes import bsgs_split


def _ops(program) -> Counter:
    return Counter(n.op.value for n in prepare(program).nodes)


def _dense(n: int, N: int, levels: int = 2):
    params = fhec.CKKSParams(N=N, levels=levels, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("lt", params)
    p.output("y", p.input("x").linear_transform(np.random.default_rng(n).uniform(-1, 1, (n, n))))
    return p


def test_dense_256_matrix_needs_at_most_2_sqrt_511_plus_2_rotations():
    """The issue's bar: 511 diagonals, at most 2⌈√511⌉ + 2 rotations (the diagonal method: 510)."""
    ops = _ops(_dense(256, 2**14))
    assert ops["rotate"] <= 2 * math.ceil(math.sqrt(511)) + 2
    assert ops["mul_const"] == 511


@pytest.mark.parametrize("steps, row, n1", [
    ([0, 5], 16, 6),               # nothing to save: the diagonal method
    (list(range(16)), 16, 4),      # dense: 3 baby + 3 giant steps
])
def test_split(steps, row, n1):
    assert bsgs_split(steps, row) == n1


def test_split_reads_steps_near_the_row_end_as_negative():
    row = 1024
    steps = list(range(0, 64)) + list(range(row - 63, row))  # a 64x64 matrix's diagonals
    n1 = bsgs_split(steps, row)
    assert 8 <= n1 <= 16


@given(st.integers(2, 16), st.integers(0, 2**16))
def test_bsgs_matches_the_reference(n, seed):
    params = fhec.CKKSParams(N=2**6, levels=2, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("lt", params)
    p.output("y", p.input("x").linear_transform(np.random.default_rng(seed).uniform(-1, 1, (n, n))))
    x = np.random.default_rng(seed + 1).uniform(-1, 1, params.slots)
    got = fhec.evaluate(p, {"x": x}, seed=seed)["y"]
    want = fhec.reference(p, {"x": x})["y"]
    assert np.max(np.abs(got - want)) < 2.0**-10 * n


def test_bgv_cross_row_diagonals_get_their_own_bsgs():
    params = fhec.BGVParams(N=2**5, levels=2, plain_modulus=257, security=None)
    p = fhec.Program("lt", params)
    M = np.random.default_rng(3).integers(0, 257, (32, 32))
    p.output("y", p.input("x").linear_transform(M))
    x = np.random.default_rng(4).integers(0, 257, 32)
    np.testing.assert_array_equal(fhec.evaluate(p, {"x": x}, seed=1)["y"], fhec.reference(p, {"x": x})["y"])
    ops = _ops(p)
    assert ops["swap_rows"] == 1 and ops["rotate"] < 2 * 15


def test_a_giant_step_cap_moves_the_split_toward_more_baby_steps():
    from fhec.ir.he_recipes import bsgs_groups

    row = 2**10
    steps = list(range(64))
    free = bsgs_split(steps, row)
    for cap in (1, 2, 4):
        n1 = bsgs_split(steps, row, max_giants=cap)
        _, _, groups = bsgs_groups(steps, row, n1)
        assert len(groups) <= cap and n1 >= free
    assert bsgs_split(steps, row, max_giants=1) == 64  # the diagonal method: one giant step
    assert bsgs_split(steps, row, max_giants=64) == free
