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


@pytest.mark.parametrize("span", [dbl.CHAR_SPAN, dbl.FULL_BYTE_SPAN])
@pytest.mark.parametrize("t", [12289, 65537])
def test_equality_series_is_one_at_zero_and_zero_at_every_other_difference_in_the_domain(t, span):
    g = dbl.equality_coefficients(t, span)
    assert len(g) == span + 1  # degree 127 (7-bit) / 255 (bytes) in d²: 7 / 8 levels
    d = np.arange(-span, span + 1, dtype=object)
    np.testing.assert_array_equal(_series_at(g, d * d % t, t), (d == 0).astype(object))


def test_seven_bit_domain_is_helibs():
    """HElib's Fermat test at p = 131 is exact for differences of characters below p; the
    7-bit span is the largest power-of-two alphabet inside that, and every key is in it."""
    assert dbl.CHAR_SPAN == 127 < 131
    assert max(max(k.encode()) for k, _ in dbl.COUNTRIES) <= dbl.CHAR_SPAN


@pytest.mark.parametrize("t, span", [(257, dbl.FULL_BYTE_SPAN), (251, dbl.CHAR_SPAN)])
def test_equality_series_refuses_a_modulus_where_the_squares_collide(t, span):
    with pytest.raises(fhec.ParameterError, match="must exceed"):
        dbl.equality_coefficients(t, span)


def test_window_and_table_size_come_from_helibs_dataset():
    longest = max(len(s.encode()) for pair in dbl.COUNTRIES for s in pair)
    assert (len(dbl.COUNTRIES), longest, dbl.WINDOW) == (47, 22, 32)  # "Bosnia and Herzegovina"


def test_strings_are_encoded_twice_in_the_window_and_decode_back():
    v = dbl.encode("Reykjavík", 128)
    assert len(v) == 128 and v[:32] == v[32:64] and not any(v[64:])
    assert dbl.decode(v) == "Reykjavík"
    assert dbl.encode("Reykjavík", 128, copies=1) == v[:32] + [0] * 96
    with pytest.raises(fhec.ParameterError, match="window"):
        dbl.encode("x" * 33, 128)
    with pytest.raises(fhec.ParameterError, match="equality domain 0..127"):
        dbl.encode("Reykjavík", 128, span=dbl.CHAR_SPAN)
    assert dbl.encode("Reykjavík", 128, span=dbl.FULL_BYTE_SPAN) == v


def test_a_window_that_is_not_a_power_of_two_or_too_deep_a_lookup_is_refused():
    with pytest.raises(fhec.ParameterError, match="power of two"):
        dbl.db_lookup(entries=1, window=24)
    with pytest.raises(fhec.ParameterError, match="levels"):
        dbl.db_lookup(entries=1, levels=14)  # the lookup takes 15


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


def test_a_query_or_key_outside_the_seven_bit_domain_is_refused_not_answered():
    p = dbl.p
    with pytest.raises(fhec.ParameterError, match="equality domain"):
        dbl.lookup_inputs(p, "Reykjavík")
    with pytest.raises(fhec.ParameterError, match="span=FULL_BYTE_SPAN"):
        dbl.lookup_inputs(p, "Iceland", (("Ísland", "Reykjavík"),) * 3)


def test_the_full_byte_mode_matches_a_key_outside_seven_bits():
    p = dbl.db_lookup(entries=2, N=2**10, plain_modulus=12289, levels=17, span=dbl.FULL_BYTE_SPAN, security=None)
    table = (("Ísland", "Reykjavík"), ("Island", "X"))
    for query, expected in (("Ísland", "Reykjavík"), ("Island", "X"), ("Ésland", "")):
        out = fhec.evaluate(p, dbl.lookup_inputs(p, query, table), seed=0)["value"]
        np.testing.assert_array_equal(out, dbl.encode(expected, p.params.slots, copies=1))


def test_the_paper_size_program_fits_f1s_seventeen_levels_with_noise_to_spare():
    p = dbl.db_lookup()
    out = p.ir.node(p.ir.outputs["value"])
    # depth 15: 1 + 7 + 1 + 5 + 1, started at level 15 so that the output lands on level 0
    assert dbl.lookup_depth() == 15 and p.params.levels == 17 and out.type.level == dbl.OUTPUT_LEVEL == 0
    assert {p.ir.inputs[name].type.level for name in ("query", "key_0")} == {15}
    assert sum(name.startswith("key_") for name in p.ir.inputs) == 47
    # the estimate of the 47-entry sum; measured over all 47 entries: 5.2 bits (docs/suites.md)
    assert estimated_bits(p.params, out.type) > 3
