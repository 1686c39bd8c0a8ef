"""The printed IR: golden listings, locations, HTML.

Regenerate the golden files after an intended change with
``FHEC_UPDATE_GOLDEN=1 pytest tests/ir/test_he_print.py`` and review the diff.
"""

from __future__ import annotations

import os
import pathlib
import sys

import numpy as np
import pytest

import fhec
from fhec.passes.he_expand import expand
from fhec.ir.he_print import format_program

GOLDEN = pathlib.Path(__file__).parent / "golden"


def ckks_program():
    p = fhec.Program("golden_ckks", fhec.CKKSParams(N=2**6, levels=4, base_limbs=2, security=None))
    x, w = p.input("x"), p.plain("w")
    y = p.input("y", level=3)
    a = x * y + w * x
    b = a.rotate(-1) + 0.25
    p.output("sum", b.sum_slots(4))
    p.output("lin", x.linear_transform({0: np.ones(32), 5: np.arange(32) / 32}))
    p.output("poly", y.polynomial([0.5, 0.25, 0, -0.125]))
    p.output("conj", x.conjugate() * 3)
    return p


def bgv_program():
    p = fhec.Program("golden_bgv", fhec.BGVParams(N=2**4, levels=3, plain_modulus=97, security=None), rescale="manual")
    x, y = p.input("x"), p.input("y")
    a = (x * y).relinearize().mod_switch()
    p.output("a", a + x.mod_switch())
    p.output("rows", x.swap_rows().sum_slots() - 1)
    return p


@pytest.mark.parametrize("name, build", [("ckks", ckks_program), ("bgv", bgv_program)])
@pytest.mark.parametrize("expanded", [False, True], ids=["traced", "expanded"])
def test_golden_listing(name, build, expanded):
    program = build().ir
    if expanded:
        program = expand(program)
    text = format_program(program, locations=False) + "\n"
    path = GOLDEN / f"he_{name}{'_expanded' if expanded else ''}.txt"
    if os.environ.get("FHEC_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_print_names_source_lines():
    p = fhec.Program("loc", fhec.CKKSParams(N=2**6, levels=1, security=None))
    line = sys._getframe().f_lineno + 1
    x = p.input("x")
    p.output("y", x.rotate(1))
    text = str(p)
    assert f"# test_he_print.py:{line}" in text
    assert text.splitlines()[0].startswith('program "loc" (ckks N=64 slots=32 levels=1')
    assert "needs rot(1)" in text


def test_html_is_the_escaped_listing():
    p = ckks_program()
    html = p._repr_html_()
    assert html.startswith("<pre>") and "&quot;sum&quot;" in html and "<" not in html[5:-6]
