"""The DB lookup example (fhec/examples/db_lookup.py): its equality series, string
encoding and window product, and a lookup of real strings through the eager evaluator at
the module's small size. (`fhec check` and the every-limb `fhec run` of the same program
are in tests/test_cli.py and test_examples_compile.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.evaluate import random_inputs
from fhec.ir.he_types import estimated_bits
from fhec.examples import db_lookup as dbl


def _series_at(coeffs, y, t):
    """Σ c_i y^i mod t by Horner, exactly (Python ints)."""
    acc = np.zeros_like(y, dtype=object)
    for c in reversed(coeffs):
        acc = (acc * y + c) % t
    return acc


@pytest.mark.parametrize("t", [12289, 65537])
def test_equality_series_is_one_at_zero_and_zero_at_every_other_byte_difference(t):
    g = dbl.equality_coefficients(t)
    assert len(g) == dbl.CHAR_SPAN + 1  # degree 255 in d², 8 levels
    d = np.arange(-dbl.CHAR_SPAN, dbl.CHAR_SPAN + 1, dtype=object)
    np.testing.assert_array_equal(_series_at(g, d * d % t, t), (d == 0).astype(object))


def test_equality_series_refuses_a_modulus_where_the_squares_collide():
    with pytest.raises(ValueError, match="must exceed"):
        dbl.equality_coefficients(257)


def test_window_and_table_size_come_from_helibs_dataset():
    longest = max(len(s.encode()) for pair in dbl.COUNTRIES for s in pair)
    assert (len(dbl.COUNTRIES), longest, dbl.WINDOW) == (47, 22, 32)  # "Bosnia and Herzegovina"


def test_strings_are_encoded_twice_in_the_window_and_decode_back():
    v = dbl.encode("Reykjavík", 128)
    assert len(v) == 128 and v[:32] == v[32:64] and not any(v[64:])
    assert dbl.decode(v) == "Reykjavík"
    assert dbl.encode("Reykjavík", 128, copies=1) == v[:32] + [0] * 96
    with pytest.raises(ValueError, match="window"):
        dbl.encode("x" * 33, 128)


def test_doubling_computes_helibs_product_of_rotated_copies():
    """Any slot values (not only strings): slot j of both is the product of slots j..j+W-1."""
    small = dict(entries=1, N=2**10, plain_modulus=12289, levels=16, security=None)
    doubling, rotated = dbl.db_lookup(**small), dbl.db_lookup(**small, total_product=True)
    inputs = random_inputs(doubling, 0)
    np.testing.assert_array_equal(fhec.reference(doubling, inputs)["value"], fhec.reference(rotated, inputs)["value"])


def test_the_small_program_returns_the_capital_of_a_matching_key_only():
    p = dbl.p
    table = (("Iceland", "Reykjavík"), ("Ireland", "Dublin"), ("Italy", "Rome"))
    for query, expected in (("Iceland", "Reykjavík"), ("Italy", "Rome"), ("Ital", ""), ("Italy ", ""),
                            ("Xreland", "")):  # a suffix match ("reland") must leak nothing either
        out = fhec.evaluate(p, dbl.lookup_inputs(p, query, table), seed=0)["value"]
        assert dbl.decode(out) == expected, query
        expected_slots = dbl.encode(expected, p.params.slots, copies=1)
        np.testing.assert_array_equal(out, expected_slots)  # every slot: the capital, then zeros


def test_the_paper_size_program_fits_f1s_seventeen_levels_with_noise_to_spare():
    p = dbl.db_lookup()
    out = p.ir.node(p.ir.outputs["value"])
    assert p.params.levels == 17 and out.type.level == 1  # depth 16: 1 + 8 + 1 + 5 + 1
    assert sum(name.startswith("key_") for name in p.ir.inputs) == 47
    assert estimated_bits(p.params, out.type) > 20  # measured at 2 entries: docs/suites.md
