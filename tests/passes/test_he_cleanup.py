"""CSE and DCE on the HE IR."""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.ir.he import HeOp
from fhec.passes.he_cleanup import cse, dce
from fhec.testing import assert_matches_reference

PARAMS = fhec.CKKSParams(N=2**6, levels=2, base_limbs=2, security=None)


def test_cse_merges_duplicate_computations():
    p = fhec.Program("cse", PARAMS)
    x = p.input("x")
    p.output("y", x.rotate(1) + x.rotate(1))
    out = cse(p)
    assert len(list(out.nodes_of(HeOp.ROTATE))) == 1
    assert out.node(out.outputs["y"]).type == p.ir.node(p.ir.outputs["y"]).type


def test_cse_keeps_distinct_outputs_and_inputs():
    p = fhec.Program("cse", PARAMS)
    x, y = p.input("x"), p.input("y")
    p.output("a", x + y)
    p.output("b", x + y)
    out = cse(p)
    assert list(out.outputs) == ["a", "b"] and len(list(out.nodes_of(HeOp.INPUT))) == 2
    assert out.outputs["a"] == out.outputs["b"]


@pytest.mark.filterwarnings("ignore::fhec.errors.UnusedInputWarning")
def test_dce_removes_dead_nodes_but_keeps_inputs():
    p = fhec.Program("dce", PARAMS)
    x, y = p.input("x"), p.input("y")
    _dead = (x * y).rotate(3)
    p.output("z", x + 1)
    out = dce(p)
    assert [n.op for n in out.nodes] == [HeOp.INPUT, HeOp.INPUT, HeOp.ADD_CONST, HeOp.OUTPUT]
    assert dce(out) is out
    assert_matches_reference(p, {"x": np.ones(4), "y": np.ones(4)}, seed=0)
