"""Lazy relinearization: sums of products are relinearized once."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, strategies as st

import fhec
import fhec.testing as ft
from fhec.evaluate import prepare
from fhec.run import run_detailed

PARAMS = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)


def _wide(k: int, rescale: str = "auto"):
    p = fhec.Program("wide", PARAMS, rescale=rescale)
    x, y = p.input("x"), p.input("y")
    acc = None
    for i in range(k):
        t = x * (y + 0.01 * (i + 1))
        if rescale == "manual":
            t = t.relinearize().rescale()
        acc = t if acc is None else acc + t
    p.output("acc", acc)
    return p


def _ops(p) -> Counter:
    return Counter(n.op.value for n in prepare(p).nodes)


def test_a_sum_of_products_is_relinearized_and_rescaled_once():
    ops = _ops(_wide(16))
    assert ops["relinearize"] == 1 and ops["rescale"] == 1 and ops["mul"] == 16


def test_manual_programs_are_left_as_written():
    ops = _ops(_wide(4, rescale="manual"))
    assert ops["relinearize"] == 4 and ops["rescale"] == 4


def test_a_product_used_twice_stays_eager():
    p = fhec.Program("twice", PARAMS)
    x, y = p.input("x"), p.input("y")
    t = x * y
    p.output("a", t + x * x)
    p.output("b", t * 2)
    assert _ops(p)["relinearize"] == 2  # t is needed relinearized for b; x*x alone is not merged


def test_lazy_sums_are_correct_and_bit_identical_when_compiled():
    p = _wide(8)
    x, y = np.linspace(-1, 1, PARAMS.slots), np.linspace(1, -1, PARAMS.slots)
    rr = run_detailed(p, {"x": x, "y": y}, seed=1)
    for name, ct in rr.eager().items():
        np.testing.assert_array_equal(rr.ciphertexts[name].data, ct.data)
    ref = fhec.reference(p, {"x": x, "y": y})["acc"]
    assert np.max(np.abs(rr.outputs["acc"] - ref)) < 1e-3


def test_bgv_sums_of_products_merge_too():
    params = fhec.BGVParams(N=2**5, levels=2, plain_modulus=257, security=None)
    p = fhec.Program("bgv", params)
    x, y = p.input("x"), p.input("y")
    p.output("s", x * y + x * x + y * y)
    assert _ops(p)["relinearize"] == 1
    xs, ys = np.arange(32) % 7, np.arange(32) % 5
    np.testing.assert_array_equal(fhec.evaluate(p, {"x": xs, "y": ys}, seed=1)["s"],
                                  fhec.reference(p, {"x": xs, "y": ys})["s"])


@given(data=st.data())
def test_random_programs_keep_their_reference_values(data):
    program = data.draw(ft.programs(scheme=data.draw(st.sampled_from(["ckks", "bgv"])), max_depth=3))
    inputs = data.draw(ft.inputs_for(program))
    ft.assert_matches_reference(program, inputs, seed=0)
