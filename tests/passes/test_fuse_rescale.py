"""fuse_mod_down_rescale: a mod-down and the rescale after it become one division by P·q_l,
executed alike by the eager evaluator and the compiled program (every limb), within the
estimated precision of the reference."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fhec
import fhec.testing as ft
from fhec.analysis.he_counts import node_limb_counts
from fhec.evaluate import prepare
from fhec.ir.he import HeOp
from fhec.passes.he_fuse_rescale import fuse_mod_down_rescale
from fhec.passes.keyswitch_choice import annotate_methods
from fhec.passes.lower import lower
from fhec.pipeline import PASS_NAMES
from fhec.run import run_detailed
from fhec.testing import assert_matches_reference

CKKS = fhec.CKKSParams(N=2**10, levels=4, scale_bits=28, word_bits=32, security=None, special_primes=2,
                       min_precision_bits=None)


def _hybrid_fused(program):
    """The prepared program with every key switch asking for hybrid explicitly, merged."""
    return fuse_mod_down_rescale(annotate_methods(prepare(program), "hybrid"))


def _ops(program) -> Counter:
    return Counter(n.op for n in program.nodes)


def _product():
    p = fhec.Program("prod", CKKS)
    x, y = p.input("x"), p.input("y")
    p.output("z", (x * y).rotate(1) + x * x * y)
    return p


def _odd_chebyshev():
    p = fhec.Program("cheb", CKKS)
    coeffs = [0.1 * (-1) ** i / (i + 1) if i % 2 else 0.0 for i in range(16)]  # odd, degree 15
    p.output("z", p.input("x").polynomial(coeffs, basis="chebyshev"))
    return p


def test_the_pass_runs_before_the_evaluator_stops():
    assert PASS_NAMES.index("lazy_relinearize") < PASS_NAMES.index("fuse_mod_down_rescale") < PASS_NAMES.index("plan_rotations")


def test_only_relinearizations_that_ask_for_hybrid_merge():
    """Left to `choose_keyswitch`, a relinearization may become BV: it is not merged."""
    plain = prepare(_product())
    assert _ops(plain)[HeOp.RELINEARIZE] == 3 and HeOp.RESCALE_EXT not in _ops(plain)
    fused = _hybrid_fused(_product())
    ops = _ops(fused)
    assert ops[HeOp.RELINEARIZE] == 0 and ops[HeOp.RELINEARIZE_EXT] == 3 and ops[HeOp.RESCALE_EXT] == 3
    assert ops[HeOp.RESCALE] == _ops(plain)[HeOp.RESCALE] - 3
    assert [fused.node(fused.outputs["z"]).type.level] == [plain.node(plain.outputs["z"]).type.level]
    assert fuse_mod_down_rescale(fused) is fused  # nothing left to merge


def test_odd_chebyshev_values_merge_through_their_double_and_subtraction():
    """rescale(sub(add(r, r), T_1)) → rescale_ext(add_ext_q(add_ext(r', r'), T_1, subtract))."""
    ops = _ops(_hybrid_fused(_odd_chebyshev()))
    assert ops[HeOp.ADD_EXT] >= 1 and ops[HeOp.ADD_EXT_Q] >= 1 and ops[HeOp.RELINEARIZE] == 0
    subtracts = [n for n in _hybrid_fused(_odd_chebyshev()).nodes if n.op is HeOp.ADD_EXT_Q]
    assert any(n.attr("subtract", False) for n in subtracts)


@pytest.mark.parametrize("make", [_product, _odd_chebyshev], ids=["product", "chebyshev"])
@pytest.mark.parametrize("target", ["limbs", "tiny"])
def test_merged_programs_are_bit_identical_and_correct(make, target):
    """The compiled limb program (and the tiny target's streams) equal the evaluator on
    every limb, and decrypt to the reference within the estimated precision, which
    accounts for the merged division's rounding."""
    assert_matches_reference(_hybrid_fused(make()), target=target, seed=5)


def test_a_merged_division_rounds_once_close_to_two():
    """rescale_extended(relinearize_extended(m)) decrypts within a few rounding errors of
    rescale(relinearize(m)), and its estimated error is the larger."""
    keys = fhec.keygen(CKKS, seed=1, relinearization=True)
    ev = fhec.Evaluator(keys)
    x = np.linspace(-1, 1, CKKS.slots)
    ct = fhec.encrypt(keys, x, seed=2)
    m = ev.multiply(ct, ct, relinearize=False)
    merged, two = ev.rescale_extended(ev.relinearize_extended(m)), ev.rescale(ev.relinearize(m))
    assert (merged.level, merged.scale) == (two.level, two.scale)
    assert merged.noise >= two.noise
    np.testing.assert_allclose(fhec.decrypt(keys, merged), fhec.decrypt(keys, two), atol=2.0**-12)


def test_closed_forms_equal_the_lowering_of_merged_nodes():
    """relinearize_ext whole and in pieces (ks_add_ext of 3 parts), add_ext, add_ext_q both
    ways, rescale_ext: per node, what the lowering emits."""
    from fhec.passes.he_keyswitch import expand_key_switches

    for program in (_hybrid_fused(_product()), _hybrid_fused(_odd_chebyshev())):
        for form in (program, expand_key_switches(program, "hybrid", "auto")):
            by_node = {k: Counter(v) for k, v in lower(form, "hybrid").limb.counts_by_he_node().items()}
            for node in form.nodes:
                if node.op is not HeOp.OUTPUT:
                    assert +node_limb_counts(form, node, "hybrid") == by_node.get(node.id, Counter()), node.op


@given(data=st.data())
def test_merged_random_programs_are_bit_identical_on_every_limb(data):
    program = data.draw(ft.programs(scheme="ckks", max_depth=3))
    inputs = data.draw(ft.inputs_for(program))
    fused = _hybrid_fused(program)
    rr = run_detailed(fused, inputs, seed=0)
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)
