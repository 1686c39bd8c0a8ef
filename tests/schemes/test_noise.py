"""The worst-slot CKKS precision estimate (`fhec.schemes.noise.worst_slot_tail_bits`) and
the default threshold of `fhec.testing.assert_matches_reference` built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fhec
from fhec.evaluate import compare_outputs, evaluate, random_inputs
from fhec.reference import reference
from fhec.schemes.noise import worst_slot_tail_bits
from fhec.testing import assert_matches_reference


def _rotation(base_limbs: int = 1, log_n: int = 13):
    params = fhec.CKKSParams(N=2**log_n, levels=2, base_limbs=base_limbs, security=None)
    p = fhec.Program("rot2", params)
    p.output("y", p.input("x").rotate(2))
    return p


def test_tail_grows_with_n_and_exceeds_the_gaussian_factor():
    tails = [worst_slot_tail_bits(fhec.CKKSParams(N=2**k, levels=1, security=None)) for k in range(6, 15)]
    assert all(b > a for a, b in zip(tails, tails[1:]))
    for k, t in zip(range(6, 15), tails):
        assert t >= 0.5 * math.log2(2 * math.log(2 ** (k - 1)))


@pytest.mark.parametrize("base_limbs", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_rotation_at_n_2_13_passes_the_default_check(base_limbs, seed):
    assert_matches_reference(_rotation(base_limbs), seed=seed)


def test_estimate_is_below_the_measured_worst_slot():
    p = _rotation(log_n=12)
    t = p.ir.node(p.ir.outputs["y"]).type
    est = fhec.ir.he_types.estimated_bits(p.params, t)
    for seed in range(3):
        inputs = random_inputs(p, seed)
        got = evaluate(p, inputs, seed)["y"]
        assert fhec.measure_precision(reference(p, inputs)["y"], got)["min_bits"] >= est


def test_a_wrong_slot_still_fails_the_default_check():
    p = _rotation()
    inputs = random_inputs(p, 0)
    got = dict(evaluate(p, inputs, 0))
    got["y"] = got["y"].copy()
    got["y"][17] += 2.0**-7  # one slot off by ~1%: a bug, not noise
    (r,) = compare_outputs(p, got, reference(p, inputs))
    assert not r.ok and 17 in r.bad_slots
