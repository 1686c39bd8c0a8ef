"""fhec/analysis/bsgs.py: the scratchpad rule of the n1 model agrees with what the compiler's
giant-step-centric and limb-major orders keep on chip."""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.analysis import bsgs
from fhec.backends.target import load_target
from fhec.examples import resnet20 as r
from fhec.ir.he_recipes import bsgs_groups
from fhec.ir.he_types import row_length
from fhec.passes import he_gsc


def test_the_models_tile_threshold_is_the_gsc_orders():
    assert bsgs.MIN_TILE_SUMS == he_gsc.MIN_TILE_SUMS


def test_limb_major_admits_more_sums_only_where_the_gsc_order_does_not_tile():
    # Osiris set IV, 588 RVecs: at level 17 (19 limbs, alpha = 14, 2 digits) a baby step's
    # room leaves 2 sums of 2 x 33 limbs, so the compiler runs the baby steps limb-major and
    # 7 sums and the 66 RVecs of digits fit; at level 2 (4 limbs, alpha = 5) 28 sums fit
    # beside a baby step, the order tiles beyond them, and the rule is the node-major one
    slots = 588
    assert not bsgs.gsc_working_set(19, 14, 6, "double", 1) <= slots
    assert bsgs.gsc_fits(19, 14, 7, "double", 1, slots) and not bsgs.gsc_fits(19, 14, 8, "double", 1, slots)
    assert not bsgs.gsc_fits(19, 14, 7, "single", 1, slots)
    for n2 in range(1, 60):
        assert bsgs.gsc_fits(4, 5, n2, "double", 1, slots) == (bsgs.gsc_working_set(4, 5, n2, "double", 1) <= slots)


def _first_layer(n1):
    params = r.set_iv(40, "double")
    weights = np.random.default_rng(0).standard_normal((16, 3, 3, 3))
    diagonals = r.conv_diagonals(weights, r.Layout(3, 1), r.Layout(16, 1), 1, params.slots, r.SPARSE_SLOTS)
    p = fhec.Program("first", params)
    p.output("y", p.input("x", level=17).linear_transform(diagonals, hoisting="double", n1=n1))
    return p, diagonals


@pytest.mark.parametrize("n1", [3072, 2048])
def test_a_split_the_model_admits_spills_no_sum_and_one_it_rejects_does(n1):
    # ResNet-20's first layer double hoisted at level 17 on osiris: n1 = 3072 keeps 6 sums
    # over Q·P (limb-major, no intermediate leaves the chip), n1 = 2048 keeps 8 and spills
    p, diagonals = _first_layer(n1)
    params, row = p.params, row_length(p.params)
    n2 = len(bsgs_groups(sorted(diagonals), row, n1)[2])
    admitted = bsgs.gsc_fits(params.limbs_at(17), params.alpha_at(17), n2, "double", 1,
                             load_target("osiris").scratchpad_rvecs(params.N))
    moved = fhec.compile(p, "osiris").report.offchip_bytes
    assert admitted == (moved["intermediate_stores"] == 0)
    assert admitted == (n1 == 3072)
