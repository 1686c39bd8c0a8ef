"""Rotation-key planning: requirements, NAF / power-of-two decompositions, bounded key sets."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fhec
from fhec.passes.he_expand import expand
from fhec.errors import ProgramError
from fhec.evaluate import make_keys, prepare
from fhec.ir.he import HeOp
from fhec.passes.he_rotations import key_requirements, plan_rotations
from fhec.passes.he_rotations import decompose, naf
from fhec.testing import assert_matches_reference

PARAMS = fhec.CKKSParams(N=2**7, levels=2, base_limbs=2, security=None)  # 64 slots


@given(st.integers(-(2**20), 2**20))
def test_naf_sums_to_k_without_adjacent_digits(k):
    digits = naf(k)
    assert sum(digits) == k
    exps = [abs(d).bit_length() - 1 for d in digits]
    assert all(abs(d) == 1 << e for d, e in zip(digits, exps))
    assert all(b - a >= 2 for a, b in zip(exps, exps[1:]))
    assert len(digits) <= abs(k).bit_length() // 2 + 1


@given(st.integers(1, 63), st.sampled_from(["naf", "pow2"]))
def test_decompositions_compose_to_the_step(step, method):
    parts = decompose(step, 64, method)
    assert sum(parts) % 64 == step
    if method == "pow2":
        assert all(d > 0 and d & (d - 1) == 0 for d in parts)


def test_key_requirements():
    p = fhec.Program("keys", PARAMS)
    x = p.input("x")
    p.output("y", (x * x).rotate(-1).sum_slots(4) + x.conjugate())
    req = key_requirements(p)
    assert req.rotations == (1, 2, 63) and req.relinearization and req.conjugation
    assert key_requirements(prepare(p)) == req


def _rotations_program(steps, cap=None):
    p = fhec.Program("rot", PARAMS, max_rotation_keys=cap)
    x = p.input("x")
    acc = None
    for k in steps:
        r = x.rotate(k)
        acc = r if acc is None else acc + r
    p.output("y", acc)
    return p


def test_no_cap_no_change():
    p = _rotations_program([3, 5, 7, 11])
    assert plan_rotations(p) == expand(p)


def test_cap_bounds_the_key_set_and_keeps_semantics():
    steps = [3, 5, 7, 11, 13, 21, -9]
    p = _rotations_program(steps, cap=6)  # NAF needs 7 distinct digits here, powers of two 6
    planned = plan_rotations(p)
    keys = key_requirements(planned).rotations
    assert keys == (1, 2, 4, 8, 16, 32)
    rotations = list(planned.nodes_of(HeOp.ROTATE))
    assert len(rotations) > len(steps)  # the extra rotations are in the IR
    assert all(n.loc == rotations[0].loc for n in rotations[:2])  # they carry the DSL line
    assert_matches_reference(p, seed=0)
    keyset = make_keys(prepare(p), seed=0)
    assert len(keyset.galois_elements) == 6


def test_spare_budget_keeps_frequent_steps_direct():
    p = _rotations_program([3, 3, 3, 5], cap=3)
    planned = plan_rotations(p)
    assert 3 in key_requirements(planned).rotations


@given(st.lists(st.integers(1, 63), min_size=1, max_size=8, unique=True), st.integers(6, 10))
def test_any_cap_of_log2_slots_keys_works(steps, cap):
    planned = plan_rotations(_rotations_program(steps), max_keys=cap)
    assert len(key_requirements(planned).rotations) <= cap


def test_too_small_cap_is_a_user_error():
    p = _rotations_program([1, 2, 4, 8, 16, 32], cap=2)
    with pytest.raises(ProgramError, match="max_rotation_keys=2 is too small"):
        plan_rotations(p)


def test_cap_applies_inside_high_level_ops():
    p = fhec.Program("lt", PARAMS, max_rotation_keys=4)
    x = p.input("x")
    m = sum(np.eye(64, k=k) for k in (1, 3, 6, 7, 9)) / 5
    p.output("y", x.linear_transform(m))
    assert len(key_requirements(prepare(p)).rotations) <= 4
    assert_matches_reference(p, seed=0)


def test_too_small_cap_names_the_fewest_keys_that_work():
    """Keeping the program's own steps can need fewer keys than any decomposition:
    steps 3 and 5 fit in 2 keys, their powers of two need 3."""
    with pytest.raises(ProgramError, match="allow at least 2"):
        plan_rotations(_rotations_program([3, 5], cap=1))
    assert key_requirements(plan_rotations(_rotations_program([3, 5], cap=2))).rotations == (3, 5)


def _double_hoisted_program(cap):
    p = fhec.Program("lt2", PARAMS, max_rotation_keys=cap)
    x = p.input("x")
    y = x.linear_transform({0: 0.25, 1: 0.5, 2: -0.25}, hoisting="double")
    p.output("y", y + x.rotate(3) + x.rotate(7))
    return p


def test_double_hoisted_rotations_count_against_the_cap():
    """A double-hoisted transform's rotations (ROTATE_EXT) are not decomposed: their keys
    are kept and counted, the other rotations decomposed around them."""
    p = _double_hoisted_program(cap=3)
    planned = plan_rotations(p)
    assert len(key_requirements(planned).rotations) <= 3  # 5 keys were generated for a cap of 3
    assert_matches_reference(p, seed=0)
    p = fhec.Program("lt2", PARAMS, max_rotation_keys=1)
    x = p.input("x")
    line = sys._getframe().f_lineno + 1
    y = x.linear_transform({0: 0.25, 1: 0.5, 2: -0.25}, hoisting="double")
    p.output("y", y)
    with pytest.raises(ProgramError, match="double-hoisted") as e:
        prepare(p)
    assert e.value.where.endswith(f"test_he_rotations.py:{line}")
