"""Galois automorphisms X -> X^k in the coefficient and NTT domains."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.ring.automorphism import (
    automorphism_coeff,
    automorphism_ntt,
    automorphism_ntt_permutation,
)
from fhec.ring.ntt import intt, ntt


@lru_cache(maxsize=None)
def ntt_prime(bits: int, N: int) -> int:
    """The largest prime q ≡ 1 (mod 2N) with exactly `bits` bits."""
    k = ((1 << bits) - 2) // (2 * N)
    while not sympy.isprime(k * 2 * N + 1):
        k -= 1
    assert (k * 2 * N + 1).bit_length() == bits
    return k * 2 * N + 1


def random_poly(moduli, N, seed):
    rng = np.random.default_rng(seed)
    return np.array([rng.integers(0, q, size=N, dtype=np.uint64) for q in moduli], dtype=np.uint64)


def galois_elements(log_n_max: int = 9):
    return st.integers(1, log_n_max).flatmap(
        lambda log_n: st.tuples(st.just(1 << log_n), st.integers(0, (1 << log_n) - 1).map(lambda j: 2 * j + 1))
    )


def reference_coeff(a: list[int], k: int, q: int) -> list[int]:
    """a(X^k) mod (X^N + 1, q), straight from the definition."""
    N = len(a)
    out = [0] * N
    for i, c in enumerate(a):
        e = i * k % (2 * N)
        if e < N:
            out[e] = (out[e] + c) % q
        else:
            out[e - N] = (out[e - N] - c) % q
    return out


@settings(max_examples=60, deadline=None)
@given(nk=galois_elements(6), bits=st.integers(20, 62), seed=st.integers(0, 2**32))
def test_coefficient_map_matches_definition(nk, bits, seed):
    N, k = nk
    q = ntt_prime(bits, N)
    a = random_poly((q,), N, seed)
    assert automorphism_coeff(a, k, (q,))[0].tolist() == reference_coeff(a[0].tolist(), k, q)


@settings(max_examples=60, deadline=None)
@given(nk=galois_elements(), bits=st.sampled_from([20, 32, 45, 60, 62]), seed=st.integers(0, 2**32))
def test_ntt_domain_commutes_with_coefficient_domain(nk, bits, seed):
    N, k = nk
    moduli = (ntt_prime(bits, N), ntt_prime(30, N))
    a = random_poly(moduli, N, seed)
    lhs = ntt(automorphism_coeff(a, k, moduli), moduli)
    rhs = automorphism_ntt(ntt(a, moduli), k, N)
    assert np.array_equal(lhs, rhs)
    assert np.array_equal(intt(rhs, moduli), automorphism_coeff(a, k, moduli))


@settings(max_examples=60, deadline=None)
@given(log_n=st.integers(1, 8), ja=st.integers(0, 2**20), jb=st.integers(0, 2**20), seed=st.integers(0, 2**32))
def test_composition(log_n, ja, jb, seed):
    N = 1 << log_n
    ka, kb = (2 * ja + 1) % (2 * N), (2 * jb + 1) % (2 * N)
    kab = ka * kb % (2 * N)
    q = ntt_prime(40, N)
    a = random_poly((q,), N, seed)
    # sigma_ka(sigma_kb(a))(X) = sigma_kb(a)(X^ka) = a(X^(ka*kb))
    assert np.array_equal(
        automorphism_coeff(automorphism_coeff(a, kb, (q,)), ka, (q,)), automorphism_coeff(a, kab, (q,))
    )
    assert np.array_equal(automorphism_ntt(automorphism_ntt(a, kb, N), ka, N), automorphism_ntt(a, kab, N))
    pa, pb = automorphism_ntt_permutation(N, ka), automorphism_ntt_permutation(N, kb)
    assert np.array_equal(pb[pa], automorphism_ntt_permutation(N, kab))


def test_permutation_properties():
    N = 1024
    assert np.array_equal(automorphism_ntt_permutation(N, 1), np.arange(N))
    for k in (3, 5, 2 * N - 1, 5**7 % (2 * N)):
        perm = automorphism_ntt_permutation(N, k)
        assert perm.dtype == np.int64
        assert sorted(perm.tolist()) == list(range(N))
        assert not np.array_equal(perm, np.arange(N))
    # conjugation X -> X^(2N-1) is an involution
    conj = automorphism_ntt_permutation(N, 2 * N - 1)
    assert np.array_equal(conj[conj], np.arange(N))


def test_identity_and_batched_shapes():
    N, q = 64, ntt_prime(50, 64)
    a = random_poly((q, q), N, 4)
    assert np.array_equal(automorphism_coeff(a, 1, (q, q)), a)
    stacked = np.stack([a, a[::-1]])  # (components, limbs, N)
    out = automorphism_ntt(stacked, 5, N)
    assert np.array_equal(out[1], automorphism_ntt(a[::-1], 5, N))


@pytest.mark.parametrize("k", [0, 2, 128, -1, 129])
def test_rejects_invalid_galois_elements(k):
    N, q = 64, ntt_prime(30, 64)
    a = random_poly((q,), N, 0)
    with pytest.raises(ValueError, match="Galois element"):
        automorphism_coeff(a, k, (q,))
    with pytest.raises(ValueError, match="Galois element"):
        automorphism_ntt(a, k, N)


def test_rejects_wrong_length():
    with pytest.raises(ValueError):
        automorphism_ntt(np.zeros((1, 32), dtype=np.uint64), 3, 64)
