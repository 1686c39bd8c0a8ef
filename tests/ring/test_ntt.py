"""Negacyclic NTT: SEAL's known answer, galois, schoolbook products, round trips for
primes of every word size from 20 to 62 bits."""

from __future__ import annotations

from functools import lru_cache

import galois
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.errors import InvalidModulusError, InvalidRingDegreeError
from fhec.ring.modarith import mul_mod
from fhec.ring.ntt import (
    NTTTables,
    intt,
    intt_inplace,
    ntt,
    ntt_eval_exponents,
    ntt_inplace,
    primitive_2n_root,
)

SEAL_Q = 0xFFFFFFFFFFC0001
SEAL_PSI = 288794978602139552


@lru_cache(maxsize=None)
def ntt_prime(bits: int, N: int, skip: int = 0) -> int:
    """The (skip+1)-th largest prime q ≡ 1 (mod 2N) with exactly `bits` bits."""
    k = ((1 << bits) - 2) // (2 * N)
    while k > 0:
        q = k * 2 * N + 1
        if q.bit_length() < bits:
            break
        if sympy.isprime(q):
            if skip == 0:
                return q
            skip -= 1
        k -= 1
    raise AssertionError(f"no {bits}-bit NTT prime for N={N}")


def random_poly(moduli, N, seed):
    rng = np.random.default_rng(seed)
    return np.array([rng.integers(0, q, size=N, dtype=np.uint64) for q in moduli], dtype=np.uint64)


def negacyclic_schoolbook(a: list[int], b: list[int], q: int) -> list[int]:
    N = len(a)
    out = [0] * N
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if i + j < N:
                out[i + j] += x * y
            else:
                out[i + j - N] -= x * y
    return [v % q for v in out]


def test_seal_known_answer():
    assert primitive_2n_root(2, SEAL_Q) == SEAL_PSI
    got = ntt(np.array([[1, 1]], dtype=np.uint64), (SEAL_Q,))
    assert got.tolist() == [[288794978602139553, 864126526004445282]]
    assert intt(got, (SEAL_Q,)).tolist() == [[1, 1]]


@pytest.mark.parametrize("bits", [20, 30, 32, 45, 60, 62])
@pytest.mark.parametrize("N", [8, 64])
def test_slots_are_evaluations_at_odd_psi_powers(bits, N):
    q = ntt_prime(bits, N)
    GF = galois.GF(q, compile="python-calculate")
    a = random_poly((q,), N, seed=bits * N)
    psi = GF(primitive_2n_root(N, q))
    poly = galois.Poly(GF(a[0].astype(object)[::-1].tolist()))  # galois wants highest degree first
    expected = [int(poly(psi ** int(e))) for e in ntt_eval_exponents(N)]
    assert ntt(a, (q,))[0].tolist() == expected


@pytest.mark.parametrize("bits", [20, 33, 62])
def test_product_matches_galois_poly_mod_xn_plus_1(bits):
    N = 32
    q = ntt_prime(bits, N)
    GF = galois.GF(q, compile="python-calculate")
    a, b = random_poly((q,), N, 1), random_poly((q,), N, 2)
    prod = intt(mul_mod(ntt(a, (q,)), ntt(b, (q,)), [q]), (q,))
    pa = galois.Poly(GF(a[0].astype(object)[::-1].tolist()))
    pb = galois.Poly(GF(b[0].astype(object)[::-1].tolist()))
    modulus = galois.Poly.Degrees([N, 0], coeffs=[1, 1], field=GF)
    expected = ((pa * pb) % modulus).coefficients(size=N, order="asc")
    assert prod[0].tolist() == [int(c) for c in expected]


@settings(max_examples=60, deadline=None)
@given(bits=st.integers(20, 62), log_n=st.integers(1, 5), seed=st.integers(0, 2**32))
def test_product_matches_schoolbook(bits, log_n, seed):
    N = 1 << log_n
    q = ntt_prime(bits, N)
    a, b = random_poly((q,), N, seed), random_poly((q,), N, seed + 1)
    prod = intt(mul_mod(ntt(a, (q,)), ntt(b, (q,)), [q]), (q,))
    assert prod[0].tolist() == negacyclic_schoolbook(a[0].tolist(), b[0].tolist(), q)


@settings(max_examples=80, deadline=None)
@given(bits=st.integers(20, 62), log_n=st.integers(1, 11), seed=st.integers(0, 2**32))
def test_intt_inverts_ntt_every_word_size(bits, log_n, seed):
    N = 1 << log_n
    q = ntt_prime(bits, N)
    a = random_poly((q,), N, seed)
    a[0, 0] = q - 1  # the largest residue exercises the lazy-reduction bounds
    fwd = ntt(a, (q,))
    assert int(fwd.max()) < q
    back = intt(fwd, (q,))
    assert np.array_equal(back, a)


def test_many_limbs_of_mixed_word_sizes():
    N = 1024
    moduli = (ntt_prime(20, N), ntt_prime(32, N), ntt_prime(32, N, skip=1), ntt_prime(60, N), ntt_prime(62, N))
    a = random_poly(moduli, N, 11)
    fwd = ntt(a, moduli)
    for i, q in enumerate(moduli):  # each limb is transformed with its own tables
        assert np.array_equal(fwd[i], ntt(a[i : i + 1], (q,))[0])
    assert np.array_equal(intt(fwd, moduli), a)
    assert not np.array_equal(fwd, a)


def test_inplace_variants_match_and_copies_leave_input_alone():
    N, q = 256, ntt_prime(50, 256)
    a = random_poly((q, q), N, 5)
    keep = a.copy()
    fwd = ntt(a, (q, q))
    assert np.array_equal(a, keep)
    b = a.copy()
    ntt_inplace(b, (q, q))
    assert np.array_equal(b, fwd)
    intt_inplace(b, (q, q))
    assert np.array_equal(b, a)


def test_one_dimensional_input():
    N, q = 16, ntt_prime(40, 16)
    a = random_poly((q,), N, 3)[0]
    assert np.array_equal(ntt(a, (q,)), ntt(a[None, :], (q,))[0])


def test_primitive_root_is_the_minimal_one():
    q, N = 12289, 512
    roots = [x for x in range(1, q) if pow(x, N, q) == q - 1]
    assert primitive_2n_root(N, q) == min(roots)


def test_tables_from_given_psi():
    N, q = 16, ntt_prime(40, 16)
    psi = pow(primitive_2n_root(N, q), 3, q)  # another primitive 2N-th root
    a = random_poly((q,), N, 9)
    fwd = ntt(a, (q,), psis=(psi,))
    expected = [sum(int(c) * pow(psi, int(e) * i, q) for i, c in enumerate(a[0])) % q for e in ntt_eval_exponents(N)]
    assert fwd[0].tolist() == expected
    assert np.array_equal(intt(fwd, (q,), psis=(psi,)), a)
    assert NTTTables.get(N, (q,), (psi,)).psis == (psi,)


def test_tables_are_cached_and_read_only():
    N, q = 64, ntt_prime(30, 64)
    t = NTTTables.get(N, (q,))
    assert NTTTables.get(N, [q]) is t
    with pytest.raises(ValueError):
        t.w[0, 0] = 5


def test_eval_exponents_are_the_odd_residues():
    e = ntt_eval_exponents(64)
    assert sorted(e.tolist()) == list(range(1, 128, 2))


def test_invalid_parameters():
    with pytest.raises(InvalidRingDegreeError):
        primitive_2n_root(12, 97)
    with pytest.raises(InvalidModulusError, match="not congruent"):
        primitive_2n_root(64, 97)
    with pytest.raises(InvalidModulusError, match="not prime"):
        primitive_2n_root(4, 8 * 8 + 1)
    with pytest.raises(InvalidModulusError):
        NTTTables.get(4, (ntt_prime(20, 4),), psis=(1,))
    with pytest.raises(ValueError):
        ntt_inplace(np.zeros((8, 2), dtype=np.uint64).T, (17, 17))  # not C-contiguous


def test_large_batches_take_the_row_parallel_kernels():
    from fhec.ring.ntt import PARALLEL_MIN_WORDS

    N = 1 << 14
    moduli = tuple(ntt_prime(bits, N) for bits in (30, 32, 36, 40, 50, 55, 60, 62))
    assert len(moduli) * N >= PARALLEL_MIN_WORDS
    a = random_poly(moduli, N, 21)
    fwd = ntt(a, moduli)
    for i in (0, 1, 7):  # same answer as the serial single-limb path
        assert np.array_equal(fwd[i], ntt(a[i : i + 1], moduli[i : i + 1])[0])
    assert np.array_equal(intt(fwd, moduli), a)


@pytest.mark.parametrize("bits", [20, 31, 32, 33, 49, 50, 51, 61, 62])
def test_extreme_inputs_on_every_kernel_path(bits):
    # The kernels take a different multiply below 2^32, below 2^50 and above; all-(q-1)
    # operands push every lazy bound to its limit.
    N = 64
    q = ntt_prime(bits, N)
    a = np.full((1, N), q - 1, dtype=np.uint64)
    b = a.copy()
    b[0, ::3] = 1
    prod = intt(mul_mod(ntt(a, (q,)), ntt(b, (q,)), [q]), (q,))
    assert prod[0].tolist() == negacyclic_schoolbook(a[0].tolist(), b[0].tolist(), q)
    assert np.array_equal(intt(ntt(b, (q,)), (q,)), b)
