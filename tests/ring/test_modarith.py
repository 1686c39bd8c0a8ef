"""Exactness of fhec.ring.modarith against python-int arithmetic, for moduli up to 62 bits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.errors import InvalidModulusError
from fhec.ring.modarith import (
    add_mod,
    inv_mod,
    mul_const_mod,
    mul_mod,
    neg_mod,
    pow_mod,
    reduce_mod,
    sub_mod,
)

MODULI = st.integers(min_value=2, max_value=(1 << 62) - 1)


def _operands(q: int, n: int, seed: int) -> np.ndarray:
    """Random residues mod q with the edge values 0, 1, q-1 (and q//2) at the front."""
    rng = np.random.default_rng(seed)
    edges = [0, 1 % q, q - 1, q // 2]
    rand = [int(x) % q for x in rng.integers(0, 2**63, size=n, dtype=np.uint64)]
    return np.array(edges + rand, dtype=np.uint64)


def _ints(a: np.ndarray) -> list[int]:
    return [int(x) for x in np.ravel(a)]


@settings(max_examples=150, deadline=None)
@given(q=MODULI, seed=st.integers(0, 2**32))
def test_binary_ops_match_python_ints(q, seed):
    a = _operands(q, 60, seed)
    b = _operands(q, 60, seed + 1)[::-1].copy()
    A, B = _ints(a), _ints(b)
    assert _ints(add_mod(a, b, q)) == [(x + y) % q for x, y in zip(A, B)]
    assert _ints(sub_mod(a, b, q)) == [(x - y) % q for x, y in zip(A, B)]
    assert _ints(neg_mod(a, q)) == [(-x) % q for x in A]
    assert _ints(mul_mod(a, b, q)) == [(x * y) % q for x, y in zip(A, B)]


@pytest.mark.parametrize("bits", [20, 31, 32, 33, 49, 50, 51, 60, 61, 62])
def test_mul_mod_edge_products(bits):
    # The largest products (q-1)^2 stress the Barrett estimate; q = 2^bits - 1 is the
    # largest modulus of the size and q = 2^(bits-1) + 1 the smallest.
    for q in ((1 << bits) - 1, (1 << (bits - 1)) + 1):
        vals = [0, 1, 2, q - 2, q - 1, q // 2, (q + 1) // 2]
        a = np.array([x for x in vals for _ in vals], dtype=np.uint64)
        b = np.array([y for _ in vals for y in vals], dtype=np.uint64)
        assert _ints(mul_mod(a, b, q)) == [(x * y) % q for x, y in zip(_ints(a), _ints(b))]


@settings(max_examples=100, deadline=None)
@given(q=MODULI, c=st.integers(0, 2**62), seed=st.integers(0, 2**32))
def test_mul_const_mod_accepts_unreduced_input(q, c, seed):
    c %= q
    rng = np.random.default_rng(seed)
    a = np.concatenate([
        np.array([0, 1, q - 1, q, (1 << 62) - 1, (1 << 64) - 1], dtype=np.uint64),
        rng.integers(0, 2**64 - 1, size=50, dtype=np.uint64, endpoint=True),
    ])
    assert _ints(mul_const_mod(a, c, q)) == [(x * c) % q for x in _ints(a)]


@pytest.mark.parametrize("q", [2, 3, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, (1 << 50) - 1, (1 << 62) - 1])
def test_reduce_mod_near_the_top_of_the_word(q):
    # Values just below 2**64 round up to 2**64 as doubles: the float path must still be exact.
    a = np.array([(1 << 64) - d for d in range(1, 2000, 7)] + [(1 << 63) + d for d in range(50)], dtype=np.uint64)
    assert _ints(reduce_mod(a, q)) == [x % q for x in _ints(a)]


@settings(max_examples=100, deadline=None)
@given(q=MODULI, seed=st.integers(0, 2**32))
def test_reduce_mod_full_word_range(q, seed):
    rng = np.random.default_rng(seed)
    a = np.concatenate([
        np.array([0, q - 1, q, 2 * q, (1 << 64) - 1], dtype=np.uint64),
        rng.integers(0, 2**64 - 1, size=50, dtype=np.uint64, endpoint=True),
    ])
    assert _ints(reduce_mod(a, q)) == [x % q for x in _ints(a)]


def test_rows_use_their_own_modulus():
    moduli = [(1 << 20) - 3, (1 << 32) - 5, (1 << 62) - 57]
    rng = np.random.default_rng(7)
    a = np.array([rng.integers(0, q, size=16, dtype=np.uint64) for q in moduli])
    b = np.array([rng.integers(0, q, size=16, dtype=np.uint64) for q in moduli])
    c = [3, moduli[1] - 1, 12345]
    got_mul = mul_mod(a, b, np.array(moduli, dtype=np.uint64))
    got_const = mul_const_mod(a, c, moduli)
    for i, q in enumerate(moduli):
        assert _ints(got_mul[i]) == [(int(x) * int(y)) % q for x, y in zip(a[i], b[i])]
        assert _ints(got_const[i]) == [(int(x) * c[i]) % q for x in a[i]]


def test_higher_dimensional_limbs_first():
    moduli = [97, 101]
    a = np.arange(2 * 3 * 4, dtype=np.uint64).reshape(2, 3, 4) % 97
    got = mul_mod(a, a, moduli)
    assert got.shape == a.shape
    assert _ints(got[1]) == [(x * x) % 101 for x in _ints(a[1])]


def test_inputs_are_not_modified_and_outputs_are_new():
    q = (1 << 61) - 1
    a = _operands(q, 8, 1)
    keep = a.copy()
    out = add_mod(a, a, q)
    assert out is not a and np.array_equal(a, keep)


def test_rejects_modulus_too_large():
    with pytest.raises(InvalidModulusError, match="2\\*\\*62"):
        mul_mod(np.zeros(4, np.uint64), np.zeros(4, np.uint64), 1 << 62)


def test_rejects_mismatched_shapes_and_unreduced_constants():
    with pytest.raises(ValueError):
        add_mod(np.zeros((2, 4), np.uint64), np.zeros((2, 5), np.uint64), [5, 7])
    with pytest.raises(ValueError):
        add_mod(np.zeros((2, 4), np.uint64), np.zeros((2, 4), np.uint64), [5, 7, 11])
    with pytest.raises(ValueError):
        mul_const_mod(np.zeros((2, 4), np.uint64), [5, 1], [5, 7])


def test_python_int_helpers():
    q = (1 << 61) - 1
    assert pow_mod(3, q - 1, q) == 1
    assert inv_mod(12345, q) * 12345 % q == 1
