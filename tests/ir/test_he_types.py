"""Type inference agrees exactly with the eager evaluator.

For every value of random programs, the inferred (level, scale, parts, noise) equals
the metadata of the ciphertext the evaluator computes for it, floats compared with ==.
This is what lets the compiler trust its types (and the lowering its levels).
"""

from __future__ import annotations

from hypothesis import given

import fhec
import fhec.testing as ft
from fhec.evaluate import encrypt_inputs, execute_nodes, make_keys, plain_inputs, prepare, random_inputs
from fhec.ir.he_types import estimated_bits
from fhec.schemes.ciphertext import Ciphertext


def assert_types_match_evaluator(program, seed=0):
    prepared = prepare(program)
    inputs = random_inputs(prepared, seed)
    keys = make_keys(prepared, seed)
    values = execute_nodes(prepared, keys, encrypt_inputs(prepared, keys, inputs, seed), plain_inputs(prepared, inputs))
    for n in prepared.nodes:
        v = values[n.id]
        if isinstance(v, Ciphertext):
            t = n.type
            assert (v.level, v.scale, v.parts, v.noise) == (t.level, t.scale, t.parts, t.noise), n


@given(ft.programs(scheme="ckks", max_depth=3))
def test_ckks_types_equal_evaluator_metadata(p):
    assert_types_match_evaluator(p)


@given(ft.programs(scheme="bgv", max_depth=3))
def test_bgv_types_equal_evaluator_metadata(p):
    assert_types_match_evaluator(p)


def test_estimated_precision_is_close_to_measured():
    """The noise estimate of a typed value predicts the measured CKKS error to a few bits."""
    params = fhec.CKKSParams(N=2**10, levels=3, base_limbs=2, security=None)
    p = fhec.Program("prec", params)
    x, y = p.input("x"), p.input("y")
    z = (x * y).rotate(1) + x
    p.output("z", z)
    inputs = random_inputs(p, 1)
    got = fhec.evaluate(p, inputs, seed=0)["z"]
    measured = fhec.measure_precision(fhec.reference(p, inputs)["z"], got)["min_bits"]
    est = estimated_bits(params, z.type)
    assert abs(measured - est) < 4, (measured, est)


def test_keys_belong_to_the_op_that_needs_them():
    params = fhec.CKKSParams(N=2**6, levels=2, base_limbs=2, security=None)
    p = fhec.Program("keys", params)
    x = p.input("x")
    r = x.rotate(3)
    s = r + 1
    assert [str(k) for k in r.type.keys] == ["rot(3)"]
    assert s.type.keys == ()
    assert [str(k) for k in x.sum_slots(4).type.keys] == ["rot(1)", "rot(2)"]


@given(ft.programs(scheme="ckks", max_depth=3))
def test_kept_values_are_those_of_a_full_run_and_the_rest_are_dropped(p):
    # run_he keeps the outputs only (a bootstrap at N = 2^16 does not fit in memory otherwise)
    prepared = prepare(p)
    inputs = random_inputs(prepared, 1)
    keys = make_keys(prepared, 1)
    args = (prepared, keys, encrypt_inputs(prepared, keys, inputs, 1), plain_inputs(prepared, inputs))
    full = execute_nodes(*args)
    keep = set(prepared.outputs.values())
    kept = execute_nodes(*args, keep=keep)
    used = {a for n in prepared.nodes for a in n.args}
    assert keep <= set(kept) <= keep | (set(full) - used)
    for vid in keep:
        if isinstance(full[vid], Ciphertext):
            assert (full[vid].data == kept[vid].data).all()
