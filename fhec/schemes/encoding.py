"""Plaintext encodings: CKKS canonical embedding and BGV batching, and their Galois elements.

Both encodings map a vector of slots to an *integer* coefficient vector of the ring
Z[X]/(X^N + 1); the caller reduces it modulo each RNS prime and NTTs it. Decoding
takes integer coefficients back to slots.

Slot order (shared by both schemes, as in HEAAN, SEAL, OpenFHE and Lattigo): the odd
powers of a primitive 2N-th root of unity zeta are split into the orbit
{zeta^(5^j mod 2N) : 0 <= j < N/2} and its negation {zeta^(-5^j mod 2N)}. Slot j is the
polynomial evaluated at zeta^(5^j). With this order the automorphism X -> X^(5^k)
rotates the slots left by k, and X -> X^(2N-1) maps every root to its inverse.

- CKKS (Cheon-Kim-Kim-Song 2017, the "special FFT" of HEAAN): zeta = exp(i*pi/N) and
  the N/2 slots are complex; the negated orbit carries their conjugates, which makes
  the polynomial real. X -> X^(2N-1) conjugates every slot.
- BGV batching (Smart-Vercauteren; Gentry-Halevi-Smart): for a prime t = 1 mod 2N,
  X^N + 1 splits into N linear factors mod t and zeta is a primitive 2N-th root of
  unity mod t. The N slots form a 2 x N/2 hypercube: row 0 (slots[:N/2]) sits on the
  orbit of +5^j, row 1 (slots[N/2:]) on -5^j. X -> X^(5^k) rotates both rows left by
  k, X -> X^(2N-1) swaps the rows.

Evaluating at all odd powers zeta^(2l+1) is a length-N cyclic DFT of the "twisted"
coefficients m_i * zeta^i (because zeta^2 is a primitive N-th root), so both schemes
run in O(N log N): numpy's FFT for CKKS, a radix-2 NTT mod t for BGV.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy

from fhec.errors import (
    InvalidModulusError,
    InvalidPlaintextError,
    InvalidRingDegreeError,
    ParameterError,
    TooManyValuesError,
)
from fhec.validate import refuse_non_numbers

__all__ = [
    "ckks_encode",
    "ckks_decode",
    "ckks_rotation_galois",
    "ckks_conjugate_galois",
    "bgv_encode",
    "bgv_decode",
    "bgv_rotation_galois",
    "bgv_swap_rows_galois",
]

# Encodings whose largest coefficient magnitude reaches this bound are returned as
# Python ints: staying a factor 2 below int64's limit lets a caller add or subtract two
# int64 encodings without overflowing before it reduces them.
_INT64_SAFE_BOUND = 2**62

# Python ints beyond ~2^1023 do not convert to float64; bigger decode inputs are
# divided by a power of two first so that their largest one has about this many bits.
_FLOAT_SAFE_BITS = 1000


# ---------------------------------------------------------------------------
# Shared: ring degree check and the 5^j slot orbit
# ---------------------------------------------------------------------------


def _check_ring_degree(N: int) -> None:
    if not isinstance(N, (int, np.integer)) or N < 2 or N & (N - 1):
        raise InvalidRingDegreeError(f"N must be a power of two >= 2, got {N!r}")


@functools.lru_cache(maxsize=None)
def _slot_positions(N: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices l (root zeta^(2l+1)) of slot j and of its mirror, for 0 <= j < N/2.

    Returns (pos, mirror_pos): zeta^(2*pos[j]+1) = zeta^(5^j mod 2N) and
    zeta^(2*mirror_pos[j]+1) = zeta^(-5^j mod 2N). Read-only arrays.
    """
    two_n = 2 * N
    half = N // 2
    powers = np.ones(half, dtype=np.int64)
    # Fill 5^j by doubling blocks: powers[n:2n] = powers[:n] * 5^n (mod 2N).
    filled = 1
    while filled < half:
        step = pow(5, filled, two_n)
        count = min(filled, half - filled)
        powers[filled : filled + count] = (powers[:count] * step) % two_n
        filled += count
    pos = (powers - 1) // 2
    mirror_pos = (two_n - powers - 1) // 2
    pos.flags.writeable = False
    mirror_pos.flags.writeable = False
    return pos, mirror_pos


def _rotation_galois(N: int, k: int) -> int:
    _check_ring_degree(N)
    return pow(5, int(k) % (N // 2), 2 * N)


# ---------------------------------------------------------------------------
# CKKS
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _ckks_twist(N: int) -> np.ndarray:
    """zeta^i = exp(i*pi*i/N) for 0 <= i < N (read-only)."""
    twist = np.exp(1j * np.pi * np.arange(N) / N)
    twist.flags.writeable = False
    return twist


def _check_scale(scale: float) -> float:
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ParameterError(f"the CKKS scale must be a finite positive number, got {scale!r}")
    return scale


def ckks_encode(values, N: int, scale: float) -> np.ndarray:
    """Encode up to N/2 complex (or real) values as round(scale * m(X)).

    m is the real polynomial of degree < N with m(zeta^(5^j)) = values[j], zeta =
    exp(i*pi/N); inputs shorter than N/2 are zero-padded. The rounding is done in
    float64, so with scale * |m_i| above 2^53 the low bits of a coefficient are those
    of the float64 product (the encoding error stays ~2^-53 relative).

    Returns a length-N array of the integer coefficients: dtype int64 when every
    coefficient magnitude is below 2^62, otherwise dtype object holding Python ints
    (the caller reduces either kind modulo its primes).

    Raises InvalidRingDegreeError (N not a power of two >= 2), ParameterError (scale not
    finite and positive), TooManyValuesError (more than N/2 values) and
    InvalidPlaintextError (values not 1-D numbers, NaN or infinite, or scaled
    coefficients beyond float64 range).
    """
    _check_ring_degree(N)
    scale = _check_scale(scale)
    slots = _as_complex_slots(values, N)
    pos, mirror_pos = _slot_positions(N)
    evaluations = np.zeros(N, dtype=np.complex128)
    evaluations[pos] = slots
    evaluations[mirror_pos] = np.conj(slots)
    # evaluations = N * ifft(m * twist), so m = fft(evaluations) / N / twist; m is real
    # by construction (conjugate-symmetric evaluations), the imaginary part is FFT noise.
    twisted = np.fft.fft(evaluations)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.rint((twisted * np.conj(_ckks_twist(N))).real * (scale / N))
    if not np.all(np.isfinite(rounded)):
        raise InvalidPlaintextError(
            f"scale {scale!r} times the values overflows float64; lower the scale or the values"
        )
    if rounded.size == 0 or np.max(np.abs(rounded)) < _INT64_SAFE_BOUND:
        return rounded.astype(np.int64)
    # int(float) is exact, so the object array holds exactly the rounded float64 values.
    return np.array([int(c) for c in rounded], dtype=object)


def _as_complex_slots(values, N: int) -> np.ndarray:
    half = N // 2
    try:
        refuse_non_numbers(np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values,
                           "the vector", error=InvalidPlaintextError)
        array = np.asarray(values, dtype=np.complex128)
    except (TypeError, ValueError) as exc:
        raise InvalidPlaintextError(f"CKKS values must be real or complex numbers: {exc}") from exc
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise InvalidPlaintextError(f"CKKS values must be a 1-D vector, got shape {array.shape}")
    if array.size > half:
        raise TooManyValuesError(
            f"{array.size} values do not fit in the {half} CKKS slots of N={N}; "
            f"use a larger N or split the vector"
        )
    if not np.all(np.isfinite(array)):
        raise InvalidPlaintextError("CKKS values must be finite (no NaN or infinity)")
    slots = np.zeros(half, dtype=np.complex128)
    slots[: array.size] = array
    return slots


def ckks_decode(coeffs, N: int, scale: float) -> np.ndarray:
    """Decode centered integer coefficients to the N/2 complex slots, divided by scale.

    coeffs is a length-N vector of integers already centered around 0 (the caller
    CRT-composes them and maps [0, Q) to (-Q/2, Q/2]): a float64 or integer ndarray, or
    an object ndarray of Python ints of any size. Very large Python ints are scaled
    down by a power of two before the conversion to float64, so no input overflows.

    Returns complex128 slots: slot j = m(zeta^(5^j)) / scale.

    Raises InvalidRingDegreeError, ParameterError (bad scale) and InvalidPlaintextError
    (coeffs not a length-N vector of numbers).
    """
    _check_ring_degree(N)
    scale = _check_scale(scale)
    values, exponent = _coefficients_as_float(coeffs, N)
    # m(zeta^(2l+1)) = sum_i (m_i zeta^i) (zeta^2)^(il) = N * ifft(m * twist)[l].
    evaluations = np.fft.ifft(values * _ckks_twist(N)) * N
    pos, _ = _slot_positions(N)
    return evaluations[pos] * (math.ldexp(1.0, exponent) / scale)


def _coefficients_as_float(coeffs, N: int) -> tuple[np.ndarray, int]:
    """(float64 values, e) with coeffs = values * 2^e up to float64 rounding."""
    array = np.asarray(coeffs)
    if array.shape != (N,):
        raise InvalidPlaintextError(
            f"expected {N} coefficients for N={N}, got an array of shape {array.shape}"
        )
    if array.dtype != object:
        if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
            raise InvalidPlaintextError(
                f"coefficients must be integers or floats, got dtype {array.dtype}"
            )
        return array.astype(np.float64), 0
    try:
        ints = [int(c) for c in array]
    except (TypeError, ValueError) as exc:
        raise InvalidPlaintextError(f"coefficients must be integers: {exc}") from exc
    exponent = max(0, max(abs(c).bit_length() for c in ints) - _FLOAT_SAFE_BITS)
    divisor = 1 << exponent
    # int / int is correctly rounded in Python, so this loses nothing beyond float64.
    return np.array([c / divisor for c in ints], dtype=np.float64), exponent


def ckks_rotation_galois(N: int, k: int) -> int:
    """Galois element g = 5^k mod 2N: X -> X^g turns slots x into np.roll(x, -k).

    Slot i receives slot i + k (left rotation, as in SEAL/OpenFHE/Lattigo). Any integer
    k is accepted and reduced mod N/2. Raises InvalidRingDegreeError.
    """
    return _rotation_galois(N, k)


def ckks_conjugate_galois(N: int) -> int:
    """Galois element 2N - 1: X -> X^(2N-1) turns slots x into np.conj(x)."""
    _check_ring_degree(N)
    return 2 * N - 1


# ---------------------------------------------------------------------------
# BGV batching
# ---------------------------------------------------------------------------


def _check_plaintext_modulus(N: int, t: int) -> int:
    _check_ring_degree(N)
    t = int(t)
    if t >= 2**62:
        raise InvalidModulusError(f"the plaintext modulus t must be below 2^62, got {t}")
    if t % (2 * N) != 1 or not sympy.isprime(t):
        raise InvalidModulusError(
            f"batching needs a prime t = 1 mod 2N = {2 * N}, got t={t}; "
            f"pick a prime of the form k*{2 * N} + 1"
        )
    return t


def _mulmod(a: np.ndarray, b: np.ndarray, t: int) -> np.ndarray:
    """a * b mod t, exactly, for uint64 arrays with entries in [0, t), t < 2^62.

    A full product overflows uint64 once t exceeds 2^32, so b is consumed in chunks of
    w bits with t * 2^w <= 2^63 (Horner): every intermediate stays below 2^64.
    """
    if t <= 2**32:
        return (a * b) % np.uint64(t)
    width = 63 - t.bit_length()
    mask = np.uint64((1 << width) - 1)
    shift = np.uint64(width)
    modulus = np.uint64(t)
    chunks = -(-t.bit_length() // width)
    result = np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.uint64)
    for index in reversed(range(chunks)):
        chunk = (b >> np.uint64(index * width)) & mask
        result = ((result << shift) + a * chunk) % modulus
    return result


@functools.lru_cache(maxsize=None)
def _bgv_tables(N: int, t: int):
    """Precomputed roots for the batching NTT mod t (read-only uint64 arrays).

    psi is the smallest primitive 2N-th root of unity mod t, so every run (and every
    caller) agrees on which slot is which. Returns (twist, untwist, stage twiddles for
    the forward and the inverse cyclic NTT, N^-1 mod t, bit-reversal permutation).
    """
    root = pow(sympy.primitive_root(t), (t - 1) // (2 * N), t)
    # The primitive 2N-th roots are root^k for odd k; take the smallest.
    root_squared = root * root % t
    psi, power = root, root
    for _ in range(N - 1):
        power = power * root_squared % t
        psi = min(psi, power)
    psi_inv = pow(psi, -1, t)
    twist = _power_table(psi, N, t)
    untwist = _power_table(psi_inv, N, t)
    omega = psi * psi % t
    forward = _stage_twiddles(omega, N, t)
    inverse = _stage_twiddles(pow(omega, -1, t), N, t)
    bit_reverse = _bit_reversal(N)
    for array in (twist, untwist, bit_reverse, *forward, *inverse):
        array.flags.writeable = False
    return twist, untwist, forward, inverse, pow(N, -1, t), bit_reverse


def _power_table(base: int, count: int, t: int) -> np.ndarray:
    table = np.empty(count, dtype=np.uint64)
    value = 1
    for i in range(count):
        table[i] = value
        value = value * base % t
    return table


def _stage_twiddles(omega: int, N: int, t: int) -> tuple[np.ndarray, ...]:
    """For each butterfly size m = 2, 4, ..., N: omega_m^k for k < m/2, omega_m = omega^(N/m)."""
    full = _power_table(omega, N // 2, t)
    stages = []
    m = 2
    while m <= N:
        stages.append(full[:: N // m][: m // 2].copy())
        m *= 2
    return tuple(stages)


def _bit_reversal(N: int) -> np.ndarray:
    bits = N.bit_length() - 1
    indices = np.arange(N)
    reversed_indices = np.zeros(N, dtype=np.int64)
    for bit in range(bits):
        reversed_indices |= ((indices >> bit) & 1) << (bits - 1 - bit)
    return reversed_indices


def _cyclic_ntt(values: np.ndarray, twiddles: tuple[np.ndarray, ...], bit_reverse, t: int):
    """Length-N cyclic NTT mod t (iterative radix-2 Cooley-Tukey, decimation in time)."""
    N = values.size
    data = values[bit_reverse]
    modulus = np.uint64(t)
    m = 2
    for stage_twiddles in twiddles:
        blocks = data.reshape(N // m, 2, m // 2)
        even = blocks[:, 0, :]
        odd = _mulmod(blocks[:, 1, :], stage_twiddles[np.newaxis, :], t)
        data = np.concatenate(((even + odd) % modulus, (even + modulus - odd) % modulus), axis=1)
        data = data.reshape(N)
        m *= 2
    return data


def reduce_mod(values, t: int, what: str) -> np.ndarray:
    """Integer array (any integer dtype, or object of Python/numpy ints; any sign and
    size) -> uint64 residues mod t, reduced exactly (no wrap-around through int64).

    Floats (even integral ones), bools and anything else are refused: BGV computes on
    integers, and rounding a float silently would change the message."""
    array = np.asarray(values)
    if array.dtype == object:
        flat = array.reshape(-1)
        bad = [v for v in flat if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_))][:1]
        if bad:
            bad = bad[0]
            raise InvalidPlaintextError(
                f"BGV {what} must be integers, got {bad!r} ({type(bad).__name__}); pass ints (e.g. round() first)"
            )
        return np.array([int(v) % t for v in flat], dtype=np.uint64).reshape(array.shape)
    if not np.issubdtype(array.dtype, np.integer):
        raise InvalidPlaintextError(
            f"BGV {what} must be integers, got dtype {array.dtype}; pass an integer array "
            f"(e.g. np.rint(x).astype(np.int64) if the values are whole numbers)"
        )
    if np.issubdtype(array.dtype, np.unsignedinteger):
        return (array.astype(np.uint64) % np.uint64(t)).astype(np.uint64)
    return np.mod(array.astype(np.int64), np.int64(t)).astype(np.uint64)


def bgv_encode(values, N: int, t: int) -> np.ndarray:
    """Batch up to N integers mod t into a plaintext polynomial.

    The slots form a 2 x N/2 hypercube: slot j of row 0 (values[j]) is the evaluation
    at psi^(5^j) and slot j of row 1 (values[N/2 + j]) the evaluation at psi^(-5^j), psi
    the smallest primitive 2N-th root of unity mod t. Inputs shorter than N are
    zero-padded; any integers (negative, or Python ints of any size) are reduced mod t.

    Returns the int64 coefficient vector (length N, entries in [0, t)).

    Raises InvalidRingDegreeError, InvalidModulusError (t not a prime = 1 mod 2N, or
    t >= 2^62), TooManyValuesError (more than N values), InvalidPlaintextError
    (non-integer values or not a 1-D vector).
    """
    t = _check_plaintext_modulus(N, t)
    array = np.asarray(values)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise InvalidPlaintextError(f"BGV values must be a 1-D vector, got shape {array.shape}")
    if array.size > N:
        raise TooManyValuesError(
            f"{array.size} values do not fit in the {N} BGV slots of N={N}; "
            f"use a larger N or split the vector"
        )
    slots = np.zeros(N, dtype=np.uint64)
    if array.size:
        slots[: array.size] = reduce_mod(array, t, "values")
    twist, untwist, _, inverse, n_inverse, bit_reverse = _bgv_tables(N, t)
    pos, mirror_pos = _slot_positions(N)
    half = N // 2
    evaluations = np.empty(N, dtype=np.uint64)
    evaluations[pos] = slots[:half]
    evaluations[mirror_pos] = slots[half:]
    twisted = _cyclic_ntt(evaluations, inverse, bit_reverse, t)
    scaled_untwist = _mulmod(untwist, np.full(N, n_inverse, dtype=np.uint64), t)
    return _mulmod(twisted, scaled_untwist, t).astype(np.int64)


def bgv_decode(coeffs, N: int, t: int) -> np.ndarray:
    """Unbatch a plaintext polynomial into its N slots (row 0, then row 1).

    coeffs is a length-N integer vector (normally int64 already reduced mod t; other
    representatives, and object arrays of Python ints, are reduced mod t too).

    Returns int64 slots in [0, t). Raises InvalidRingDegreeError, InvalidModulusError
    and InvalidPlaintextError (not a length-N integer vector).
    """
    t = _check_plaintext_modulus(N, t)
    array = np.asarray(coeffs)
    if array.shape != (N,):
        raise InvalidPlaintextError(
            f"expected {N} coefficients for N={N}, got an array of shape {array.shape}"
        )
    twist, _, forward, _, _, bit_reverse = _bgv_tables(N, t)
    reduced = reduce_mod(array, t, "coefficients")
    evaluations = _cyclic_ntt(_mulmod(reduced, twist, t), forward, bit_reverse, t)
    pos, mirror_pos = _slot_positions(N)
    return np.concatenate((evaluations[pos], evaluations[mirror_pos])).astype(np.int64)


def bgv_rotation_galois(N: int, k: int) -> int:
    """Galois element g = 5^k mod 2N: X -> X^g rotates both rows left by k.

    Row r becomes np.roll(row r, -k). Any integer k is reduced mod N/2.
    Raises InvalidRingDegreeError.
    """
    return _rotation_galois(N, k)


def bgv_swap_rows_galois(N: int) -> int:
    """Galois element 2N - 1: X -> X^(2N-1) exchanges row 0 and row 1."""
    _check_ring_degree(N)
    return 2 * N - 1
