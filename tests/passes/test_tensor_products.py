"""Tensor products in three limb products: a square doubles its cross product; a target
may ask for Karatsuba's d1 = (a0 + a1)(b0 + b1) − d0 − d2 for the others.

Both are real lowerings: the executed streams equal the eager evaluator on every limb
(the identities hold mod q), and they emit fewer limb multiplies than schoolbook.
"""

import numpy as np
from hypothesis import given, settings, strategies as st

import fhec
import fhec.testing as ft
from fhec.backends.target import load_target
from fhec.evaluate import run_he
from fhec.ir.limb import LimbOp
from fhec.passes.keyswitch_choice import annotated_methods

TINY = load_target("tiny")
KARATSUBA = TINY.model_copy(update={"lowering": TINY.lowering.model_copy(update={"products": "karatsuba"})})


def _program():
    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("products", params)
    x, y = p.input("x"), p.input("y")
    p.output("z", (x * y) * (x * x) + y * y)
    return p


def _streams_equal_the_evaluator(compiled, inputs, seed):
    compiled.check()
    got = compiled.run_detailed(inputs, seed=seed)
    eager = run_he(compiled.program, got["keys"], got["inputs"], got["plains"], annotated_methods(compiled.program))
    for name, ct in eager.items():
        assert np.array_equal(got["ciphertexts"][name].data, ct.data), name
    return got


def test_karatsuba_saves_a_limb_product_per_limb_of_each_non_square():
    p = _program()
    school, kara = fhec.compile(p, TINY), fhec.compile(p, KARATSUBA)
    non_square_limbs = sum(p.params.limbs_at(school.program.node(n.args[0]).type.level)
                           for n in school.program.nodes if n.op.name == "MUL" and n.args[0] != n.args[1])
    assert non_square_limbs > 0
    muls = [int(np.count_nonzero(c.lowered.limb.op == LimbOp.MUL)) for c in (school, kara)]
    assert muls[0] - muls[1] == non_square_limbs
    rng = np.random.default_rng(0)
    inputs = {"x": rng.uniform(-1, 1, p.params.slots), "y": rng.uniform(-1, 1, p.params.slots)}
    for compiled in (school, kara):
        got = _streams_equal_the_evaluator(compiled, inputs, seed=3)
        want = inputs["x"] ** 3 * inputs["y"] + inputs["y"] ** 2
        assert np.allclose(got["outputs"]["z"], want, atol=1e-3)


@settings(deadline=None)
@given(data=st.data())
def test_karatsuba_streams_are_bit_identical_to_the_evaluator(data):
    scheme = data.draw(st.sampled_from(["ckks", "bgv"]))
    params = data.draw(ft.params(scheme, max_levels=3, log_n=(9, 9)))
    program = data.draw(ft.programs(params=params, max_depth=3, max_ops=10))
    inputs = data.draw(ft.inputs_for(program))
    _streams_equal_the_evaluator(fhec.compile(program, KARATSUBA), inputs, seed=2)
