"""Tests of fhec.schemes.encoding: CKKS canonical embedding, BGV batching, Galois elements.

The references here are independent of the module: direct O(N^2) polynomial
evaluation at the slot roots, a coefficient-domain automorphism, and a schoolbook
negacyclic product.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.errors import (
    FhecError,
    InvalidModulusError,
    InvalidPlaintextError,
    InvalidRingDegreeError,
    ParameterError,
    TooManyValuesError,
)
from fhec.schemes.encoding import (
    bgv_decode,
    bgv_encode,
    bgv_rotation_galois,
    bgv_swap_rows_galois,
    ckks_conjugate_galois,
    ckks_decode,
    ckks_encode,
    ckks_rotation_galois,
)

SCALE = 2.0**40


# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------


def automorphism(coeffs: np.ndarray, g: int, N: int) -> np.ndarray:
    """X -> X^g on a coefficient vector: coefficient i moves to i*g mod 2N, negated past N."""
    out = np.zeros_like(coeffs)
    targets = (np.arange(N) * g) % (2 * N)
    wraps = targets >= N
    out[targets % N] = np.where(wraps, -coeffs, coeffs)
    return out


def negacyclic_product(a: np.ndarray, b: np.ndarray, t: int) -> np.ndarray:
    """Schoolbook product in Z_t[X]/(X^N + 1), exact in Python ints."""
    N = a.size
    full = np.convolve(a.astype(object), b.astype(object))
    low = full[:N].copy()
    low[: N - 1] -= full[N:]
    return np.array([int(c) % t for c in low], dtype=np.int64)


@functools.lru_cache(maxsize=None)
def batching_prime(N: int, bits: int) -> int:
    """The smallest prime t = 1 mod 2N with at least `bits` bits."""
    k = -(-(2**(bits - 1)) // (2 * N))
    while not sympy.isprime(k * 2 * N + 1):
        k += 1
    return k * 2 * N + 1


def random_complex(rng: np.random.Generator, size: int, magnitude: float) -> np.ndarray:
    return magnitude * (rng.uniform(-1, 1, size) + 1j * rng.uniform(-1, 1, size))


def assert_close(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> None:
    error = np.max(np.abs(actual - expected)) if expected.size else 0.0
    assert error <= tolerance, f"max error {error:.3e} > {tolerance:.3e}"


# ---------------------------------------------------------------------------
# CKKS
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    log_n=st.integers(3, 10),
    seed=st.integers(0, 2**32 - 1),
    fill=st.floats(0.0, 1.0),
    magnitude=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_ckks_round_trip(log_n, seed, fill, magnitude):
    N = 2**log_n
    rng = np.random.default_rng(seed)
    values = random_complex(rng, int(fill * N // 2), magnitude)
    coeffs = ckks_encode(values, N, SCALE)
    assert coeffs.dtype == np.int64 and coeffs.shape == (N,)
    decoded = ckks_decode(coeffs, N, SCALE)
    assert decoded.dtype == np.complex128 and decoded.shape == (N // 2,)
    expected = np.zeros(N // 2, dtype=complex)
    expected[: values.size] = values
    assert_close(decoded, expected, 1e-9)


def test_ckks_round_trip_n8192_near_double_precision():
    N = 2**13
    values = random_complex(np.random.default_rng(1), N // 2, 1.0)
    decoded = ckks_decode(ckks_encode(values, N, SCALE), N, SCALE)
    assert_close(decoded, values, 1e-9)


@pytest.mark.parametrize("log_n", [1, 2, 3, 5, 7])
def test_ckks_decode_evaluates_at_the_five_power_roots(log_n):
    N = 2**log_n
    rng = np.random.default_rng(log_n)
    coeffs = rng.integers(-(2**30), 2**30, N)
    exponents = [pow(5, j, 2 * N) for j in range(N // 2)]
    # zeta^(i*e) with the exponent reduced exactly, so the reference itself is accurate.
    powers = [np.exp(1j * np.pi * ((np.arange(N) * e) % (2 * N)) / N) for e in exponents]
    expected = np.array([np.sum(coeffs * power) for power in powers])
    assert_close(ckks_decode(coeffs, N, 1000.0), expected / 1000.0, 1e-13 * 2**30 * N)


def test_ckks_real_values_decode_with_zero_imaginary_part():
    N = 2**8
    values = np.random.default_rng(2).standard_normal(N // 2)
    decoded = ckks_decode(ckks_encode(values, N, SCALE), N, SCALE)
    assert_close(decoded.imag, np.zeros(N // 2), 1e-10)
    assert_close(decoded.real, values, 1e-10)


@settings(max_examples=30, deadline=None)
@given(log_n=st.integers(3, 10), seed=st.integers(0, 2**32 - 1))
def test_ckks_encode_is_linear(log_n, seed):
    N = 2**log_n
    rng = np.random.default_rng(seed)
    x, y = random_complex(rng, N // 2, 10.0), random_complex(rng, N // 2, 10.0)
    sum_of_encodings = ckks_encode(x, N, SCALE) + ckks_encode(y, N, SCALE)
    # Each encoding rounds separately, so they may differ by one per coefficient.
    assert np.max(np.abs(sum_of_encodings - ckks_encode(x + y, N, SCALE))) <= 1
    assert_close(ckks_decode(sum_of_encodings, N, SCALE), x + y, 1e-8)


ROTATIONS = [0, 1, 2, 3, 5, -1, -2, -7, 100, -100, 2**20 + 3]


@pytest.mark.parametrize("log_n", [2, 3, 6, 10])
@pytest.mark.parametrize("k", ROTATIONS)
def test_ckks_rotation_galois_rotates_left(log_n, k):
    N = 2**log_n
    values = random_complex(np.random.default_rng(k % 97), N // 2, 1.0)
    g = ckks_rotation_galois(N, k)
    rotated = automorphism(ckks_encode(values, N, SCALE), g, N)
    assert_close(ckks_decode(rotated, N, SCALE), np.roll(values, -k), 1e-9)


@settings(max_examples=30, deadline=None)
@given(log_n=st.integers(3, 10), k=st.integers(-(2**20), 2**20), seed=st.integers(0, 2**32 - 1))
def test_ckks_rotation_any_k(log_n, k, seed):
    N = 2**log_n
    values = random_complex(np.random.default_rng(seed), N // 2, 1.0)
    rotated = automorphism(ckks_encode(values, N, SCALE), ckks_rotation_galois(N, k), N)
    assert_close(ckks_decode(rotated, N, SCALE), np.roll(values, -k), 1e-9)


@pytest.mark.parametrize("log_n", [1, 3, 9])
def test_ckks_conjugate_galois_conjugates(log_n):
    N = 2**log_n
    values = random_complex(np.random.default_rng(3), N // 2, 1.0)
    g = ckks_conjugate_galois(N)
    assert g == 2 * N - 1
    conjugated = automorphism(ckks_encode(values, N, SCALE), g, N)
    assert_close(ckks_decode(conjugated, N, SCALE), np.conj(values), 1e-9)


@pytest.mark.parametrize("rotation_galois", [ckks_rotation_galois, bgv_rotation_galois])
def test_rotation_galois_elements(rotation_galois):
    N = 2**6
    assert rotation_galois(N, 0) == 1
    assert rotation_galois(N, 1) == 5
    for k in range(-70, 70):
        g = rotation_galois(N, k)
        assert 0 < g < 2 * N and g % 2 == 1
        assert g == rotation_galois(N, k + N // 2)
        assert g * rotation_galois(N, -k) % (2 * N) == 1
    assert len({rotation_galois(N, k) for k in range(N // 2)}) == N // 2


def test_ckks_large_products_fall_back_to_python_ints():
    N = 2**10
    values = np.random.default_rng(4).uniform(-(2**20), 2**20, N // 2)
    scale = 2.0**60
    coeffs = ckks_encode(values, N, scale)
    assert coeffs.dtype == object and all(isinstance(c, int) for c in coeffs)
    assert max(abs(c) for c in coeffs) >= 2**62
    assert_close(ckks_decode(coeffs, N, scale).real / 2**20, values / 2**20, 1e-14)
    # Object and float inputs of the same values decode identically.
    small = ckks_encode(values / 2**20, N, SCALE)
    assert_close(
        ckks_decode(small.astype(object), N, SCALE), ckks_decode(small, N, SCALE), 0.0
    )


def test_ckks_decode_accepts_python_ints_beyond_float_range():
    N = 2**6
    values = random_complex(np.random.default_rng(5), N // 2, 1.0)
    coeffs = ckks_encode(values, N, 2.0**30)
    shift = 1000
    huge = np.array([int(c) << shift for c in coeffs], dtype=object)
    assert max(abs(c).bit_length() for c in huge) > 1024
    decoded = ckks_decode(huge, N, 2.0**1000)  # coefficients are values * 2^30 * 2^1000
    assert_close(decoded / 2**30, values, 1e-8)


def test_ckks_errors():
    with pytest.raises(TooManyValuesError):
        ckks_encode(np.ones(9), 16, SCALE)
    with pytest.raises(InvalidPlaintextError):
        ckks_encode([1.0, np.nan], 16, SCALE)
    with pytest.raises(InvalidPlaintextError):
        ckks_encode(np.ones((2, 2)), 16, SCALE)
    with pytest.raises(InvalidPlaintextError):
        ckks_encode(["a"], 16, SCALE)
    with pytest.raises(InvalidPlaintextError):
        ckks_encode([1e300], 16, 1e300)
    for bad_n in (0, 1, 12, -8):
        with pytest.raises(InvalidRingDegreeError):
            ckks_encode([1.0], bad_n, SCALE)
    for bad_scale in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ParameterError):
            ckks_encode([1.0], 16, bad_scale)
    with pytest.raises(InvalidPlaintextError):
        ckks_decode(np.zeros(8), 16, SCALE)
    with pytest.raises(InvalidRingDegreeError):
        ckks_rotation_galois(12, 1)
    assert issubclass(InvalidPlaintextError, FhecError)


def test_ckks_encode_accepts_scalars_and_empty_inputs():
    N = 16
    assert_close(ckks_decode(ckks_encode(2.5, N, SCALE), N, SCALE)[:2], np.array([2.5, 0]), 1e-9)
    assert np.all(ckks_encode([], N, SCALE) == 0)


# ---------------------------------------------------------------------------
# BGV
# ---------------------------------------------------------------------------

bgv_moduli = st.sampled_from([17, 20, 31, 40, 60])


def random_slots(rng: np.random.Generator, N: int, t: int) -> np.ndarray:
    return np.array([int(v) for v in rng.integers(0, 2**62, N)], dtype=object) % t


@settings(max_examples=60, deadline=None)
@given(log_n=st.integers(3, 10), bits=bgv_moduli, seed=st.integers(0, 2**32 - 1))
def test_bgv_round_trip(log_n, bits, seed):
    N = 2**log_n
    t = batching_prime(N, bits)
    values = random_slots(np.random.default_rng(seed), N, t).astype(np.int64)
    coeffs = bgv_encode(values, N, t)
    assert coeffs.dtype == np.int64 and coeffs.shape == (N,)
    assert coeffs.min() >= 0 and coeffs.max() < t
    decoded = bgv_decode(coeffs, N, t)
    assert decoded.dtype == np.int64
    assert np.array_equal(decoded, values)


def test_bgv_round_trip_n8192():
    N = 2**13
    t = batching_prime(N, 31)
    values = np.random.default_rng(6).integers(0, t, N)
    assert np.array_equal(bgv_decode(bgv_encode(values, N, t), N, t), values)


def smallest_primitive_root(N: int, t: int) -> int:
    return min(r for r in range(2, t) if pow(r, N, t) == t - 1)


@pytest.mark.parametrize("log_n", [1, 2, 3, 4])
def test_bgv_slots_are_evaluations_at_plus_minus_five_powers(log_n):
    N = 2**log_n
    t = batching_prime(N, 10)
    psi = smallest_primitive_root(N, t)
    coeffs = np.random.default_rng(log_n).integers(0, t, N)

    def evaluate(exponent):
        return sum(int(c) * pow(psi, i * exponent, t) for i, c in enumerate(coeffs)) % t

    row0 = [evaluate(pow(5, j, 2 * N)) for j in range(N // 2)]
    row1 = [evaluate(-pow(5, j, 2 * N) % (2 * N)) for j in range(N // 2)]
    assert bgv_decode(coeffs, N, t).tolist() == row0 + row1


@settings(max_examples=40, deadline=None)
@given(log_n=st.integers(3, 8), bits=bgv_moduli, seed=st.integers(0, 2**32 - 1))
def test_bgv_addition_and_multiplication_are_slotwise(log_n, bits, seed):
    N = 2**log_n
    t = batching_prime(N, bits)
    rng = np.random.default_rng(seed)
    x, y = random_slots(rng, N, t), random_slots(rng, N, t)
    ex, ey = bgv_encode(x, N, t), bgv_encode(y, N, t)
    sum_coeffs = np.array([(int(a) + int(b)) % t for a, b in zip(ex, ey)], dtype=np.int64)
    assert bgv_decode(sum_coeffs, N, t).tolist() == list((x + y) % t)
    product = negacyclic_product(ex, ey, t)
    assert bgv_decode(product, N, t).tolist() == list((x * y) % t)


@pytest.mark.parametrize("log_n", [2, 3, 6, 9])
@pytest.mark.parametrize("k", ROTATIONS)
def test_bgv_rotation_rotates_both_rows(log_n, k):
    N = 2**log_n
    t = batching_prime(N, 31)
    values = np.random.default_rng(k % 89).integers(0, t, N)
    g = bgv_rotation_galois(N, k)
    rotated = automorphism(bgv_encode(values, N, t), g, N) % t
    rows = values.reshape(2, N // 2)
    assert np.array_equal(bgv_decode(rotated, N, t), np.roll(rows, -k, axis=1).reshape(N))


@pytest.mark.parametrize("log_n", [1, 3, 8])
@pytest.mark.parametrize("bits", [20, 40])
def test_bgv_swap_rows(log_n, bits):
    N = 2**log_n
    t = batching_prime(N, bits)
    values = random_slots(np.random.default_rng(7), N, t).astype(np.int64)
    g = bgv_swap_rows_galois(N)
    assert g == 2 * N - 1
    swapped = automorphism(bgv_encode(values, N, t), g, N) % t
    rows = values.reshape(2, N // 2)
    assert np.array_equal(bgv_decode(swapped, N, t), rows[::-1].reshape(N))


def test_bgv_reduces_any_integer_representatives():
    N = 2**5
    t = batching_prime(N, 17)
    values = np.random.default_rng(8).integers(0, t, N)
    shifted = np.array(
        [int(v) - 3 * t for v in values[:10]] + [int(v) + 2**70 * t for v in values[10:]],
        dtype=object,
    )
    coeffs = bgv_encode(shifted, N, t)
    assert np.array_equal(coeffs, bgv_encode(values, N, t))
    centered = np.where(coeffs > t // 2, coeffs - t, coeffs)
    assert np.array_equal(bgv_decode(centered, N, t), values)
    assert np.array_equal(bgv_decode(centered.astype(object), N, t), values)


def test_bgv_zero_padding():
    N = 2**4
    t = batching_prime(N, 17)
    assert bgv_decode(bgv_encode([5, 6, 7], N, t), N, t).tolist() == [5, 6, 7] + [0] * (N - 3)
    assert bgv_decode(bgv_encode(9, N, t), N, t).tolist() == [9] + [0] * (N - 1)


def test_bgv_errors():
    N = 16
    t = batching_prime(N, 17)
    with pytest.raises(TooManyValuesError):
        bgv_encode(np.ones(17, dtype=np.int64), N, t)
    with pytest.raises(InvalidPlaintextError):
        bgv_encode([1.5], N, t)
    with pytest.raises(InvalidPlaintextError):
        bgv_decode(np.zeros(8, dtype=np.int64), N, t)
    with pytest.raises(InvalidModulusError):
        bgv_encode([1], N, 35 * 2 * N + 1)  # 1121 = 19 * 59 is 1 mod 32 but not prime
    with pytest.raises(InvalidModulusError):
        bgv_encode([1], N, 65539)  # prime, but 3 mod 2N
    with pytest.raises(InvalidModulusError):
        bgv_encode([1], N, 2**62 + 1)
    with pytest.raises(InvalidRingDegreeError):
        bgv_encode([1], 24, 97)


def test_a_missing_value_is_named_as_a_non_number_not_as_nan():
    import fhec

    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    keys = fhec.keygen(params, seed=1)
    for call in (lambda: fhec.encode(params, [0.1, None]), lambda: fhec.encrypt(keys, [0.1, None])):
        with pytest.raises(fhec.InvalidPlaintextError, match="non-number, None at index 1"):
            call()
