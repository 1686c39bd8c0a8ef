"""`HeBuilder`'s composite scaling (`HeBuilder.composite`): several primes per auto rescale."""

from __future__ import annotations

import math

import pytest

import fhec
from fhec.ir.he import HeOp, attrs_of
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_types import IRTypeError
from fhec.schemes.rules import rescale_prime

PARAMS = fhec.CKKSParams(N=2**5, levels=8, scale_bits=30, word_bits=32, security=None)


def _input(level: int) -> tuple[HeBuilder, int]:
    b = HeBuilder(PARAMS)
    return b, b.external(fhec.Program("p", PARAMS).input("x", level=level).type)


def test_auto_products_land_on_the_composite_chain():
    b, x = _input(7)
    bottom_scale = PARAMS.scale_at(1) * rescale_prime(PARAMS, 2)
    with b.composite(2, bottom_scale, 6, primes=2):
        assert b.step == 2
        assert all(abs(math.log2(b.canonical_scale(level)) - 60) < 0.1 for level in (2, 4, 6))
        # onto C(6) by one constant multiply and a one-prime rescale, as the bootstrap's scale-down
        ps = b.canonical_scale(6) * rescale_prime(PARAMS, 7) / b.type_of(x).scale
        y = b.emit(HeOp.RESCALE, (b.emit(HeOp.MUL_CONST, (x,), attrs_of(value=0.5, plain_scale=ps)),))
        assert b.type_of(y).scale == pytest.approx(b.canonical_scale(6), rel=1e-12)
        sq = b.multiply(y, y, None, auto=True)  # relinearized, then rescaled by two primes
        assert [n.op for n in b.nodes[-3:]] == [HeOp.RELINEARIZE, HeOp.RESCALE, HeOp.RESCALE]
        assert (b.type_of(sq).level, b.type_of(sq).scale) == (4, pytest.approx(b.canonical_scale(4), rel=1e-12))
        c = b.multiply_const(sq, 0.3, None, auto=True)
        assert (b.type_of(c).level, b.type_of(c).scale) == (2, pytest.approx(b.canonical_scale(2), rel=1e-12))
        # LEVEL_DOWN multiplies by an integer near 2^30: its scale matches up to ~2^-30
        assert b.type_of(b.level_down(y, 2, None, None)).scale == pytest.approx(b.canonical_scale(2), rel=1e-8)
        with pytest.raises(IRTypeError, match="composite chain"):
            b.canonical_scale(3)
    # the bottom scale was chosen so that one more rescale lands on the one-prime chain
    assert b.type_of(b.rescale(c, None)).scale == pytest.approx(PARAMS.scale_at(1), rel=1e-12)
    assert b.step == 1 and b.canonical_scale(5) == PARAMS.scale_at(5)


def test_one_prime_composite_is_the_parameters_chain():
    b, _ = _input(7)
    with b.composite(0, PARAMS.scale_at(0), 8, primes=1):
        assert [b.canonical_scale(level) for level in range(9)] == pytest.approx(PARAMS.scales, rel=1e-12)
    with pytest.raises(IRTypeError, match="whole number"):
        with b.composite(0, PARAMS.scale_at(0), 7, primes=2):
            pass
