"""Noise estimates (no secret key needed) and measurements (with the secret key).

Estimates are average-case: each ciphertext carries ``noise``, log2 of the standard
deviation of its error, propagated by the central-limit heuristics of the CKKS/BGV
literature (e.g. Costache–Smart, "Which ring-based SHE scheme is best?"; Kim et al.,
"Approximate homomorphic encryption with reduced approximation error"). A CKKS product
scales each factor's error by the other factor's magnitude: its bound when that exceeds
1, else 1 (`magnitude`), so the estimate holds for every input within the declared
bounds (and is pessimistic where an interval bound is far above the values a program
meets, as for a sum of terms of mixed signs).

* CKKS: error in the slot domain, in the units of the scaled message. The estimated
  precision is that of the *worst* slot, ``log2(scale) − noise − worst_slot_tail_bits``
  (`worst_slot_tail_bits`: how far the largest of the N/2 slot errors lies above the
  standard deviation, measured; see its docstring).
* Where the per-op rules cannot see what bounds the error, a recipe states it as a
  ``noise`` attribute on the node it emits (`fhec.ir.he_types.with_noise_hint`, which the
  evaluator applies too): a linear transform's sums bound the operand's error by the
  matrix's largest absolute row sum (`fhec.ir.he_recipes._ErrorModel`), a polynomial by
  its largest slope over the operand's bound
  (`fhec.ir.he_polynomial.polynomial_node_recipe`), a bootstrap states its result's
  (`fhec.ir.he_bootstrap`). A product by a constant scales the error by the constant's
  largest magnitude (`plain_multiply_noise`); by a plain input, by its assumed 1.
* BGV: error of the decrypted polynomial ``[c0 + c1·s]_Q`` (message plus t·e), in the
  coefficient domain. The budget is ``log2(Q_l/2) − noise − 3`` (≈ 8 standard deviations).
"""

from __future__ import annotations

import math

import numpy as np

from fhec.errors import InvalidArgumentError
from fhec.validate import as_1d_array

from fhec.schemes.params import ERROR_STDDEV, Params


def _log2_hypot(*logs: float) -> float:
    """log2 of the root-sum-square of values given by their log2 (independent noises add in variance)."""
    m = max(logs)
    return m + 0.5 * math.log2(sum(2.0 ** (2 * (x - m)) for x in logs))


def _ckks(params: Params) -> bool:
    return params.scheme == "ckks"


def _to_slots(params: Params, coeff_std_log2: float) -> float:
    """A random coefficient-domain error of that std has slot-domain std √N times larger."""
    return coeff_std_log2 + 0.5 * math.log2(params.N) if _ckks(params) else coeff_std_log2


def fresh_noise(params: Params, public_key: bool = False) -> float:
    """log2 std of a fresh encryption's error (secret-key: e; public-key: e0 + e·u + e1·s)."""
    N = params.N
    var = ERROR_STDDEV**2 * (1 + (4 * N / 3 if public_key else 0))
    t = params.plain_modulus if not _ckks(params) else 1
    coeff = 0.5 * math.log2(var) + math.log2(t)
    if not _ckks(params):
        return _log2_hypot(coeff, math.log2(t))  # the message itself, up to t
    return _log2_hypot(_to_slots(params, coeff), _to_slots(params, 0.5 * math.log2(1 / 12)))


def add_noise(n1: float, n2: float) -> float:
    return _log2_hypot(n1, n2)


def rounding_noise(params: Params) -> float:
    """Error of a division-with-rounding (rescale, mod-down): r0 + r1·s with r uniform in
    [0, 1); s has 2N/3 nonzero coefficients on average, or h for a sparse secret."""
    N = params.N
    h = getattr(params, "secret_hamming_weight", None)
    coeff = 0.5 * math.log2((1 + (2 * N / 3 if h is None else h)) / 12)
    if _ckks(params):
        return _to_slots(params, coeff)
    return coeff + math.log2(params.plain_modulus)


def keyswitch_noise(params: Params, level: int, method: str) -> float:
    """Error added by one key switch at `level` (after mod-down for hybrid)."""
    return params.derived(("keyswitch_noise", level, method), lambda: _keyswitch_noise(params, level, method))


def _keyswitch_noise(params: Params, level: int, method: str) -> float:
    N = params.N
    moduli = params.moduli_at(level)
    if method == "bv":
        digit_bits = [math.log2(q) for q in moduli]
        divisor = 0.0
    else:
        digit_bits = [sum(math.log2(moduli[i]) for i in g) for g in params.digit_groups(level)]
        divisor = sum(math.log2(p) for p in params.special_moduli_at(level))
    # Each digit is uniform below its modulus (std D/√12), times a key error of std σ, over N terms.
    terms = [b - 0.5 * math.log2(12) + math.log2(ERROR_STDDEV) + 0.5 * math.log2(N) for b in digit_bits]
    t = 0.0 if _ckks(params) else math.log2(params.plain_modulus)
    ks = _to_slots(params, _log2_hypot(*terms) + t) - divisor
    return _log2_hypot(ks, rounding_noise(params)) if method == "hybrid" else ks


def magnitude(bound: float | None) -> float:
    """The message magnitude the CKKS product rules scale an error by: a value's bound
    when it exceeds 1, else 1 (the model's assumption, |m| <= 1, and what it keeps for a
    value whose bound is unknown)."""
    return 1.0 if bound is None else max(1.0, float(bound))


def multiply_noise(params: Params, n1: float, s1, n2: float, s2, m1: float = 1.0, m2: float = 1.0) -> float:
    """Error of a ct × ct product before relinearization. CKKS: (m1·s1 + e1)(m2·s2 + e2)
    carries e1·m2·s2 + e2·m1·s1 + e1·e2; `m1`, `m2` are the messages' magnitudes
    (`magnitude`: 1 unless a bound says more). A partial sum of small coefficients times
    u^4 <= 256 (a power series at |x| <= 4) carries the sum's error times 256, which the
    |m| <= 1 model missed by 8 bits."""
    if _ckks(params):
        return _log2_hypot(n1 + math.log2(s2) + math.log2(m2), n2 + math.log2(s1) + math.log2(m1), n1 + n2)
    return n1 + n2 + 0.5 * math.log2(params.N)


def square_noise(n: float, s, m: float = 1.0) -> float:
    """CKKS error of a square of one value (noise `n`, scale `s`, magnitude `m`):
    (m·s + e)² carries 2·e·m·s + e², the two cross terms one error (coherent), where
    `multiply_noise` takes a product's two as independent (half a bit less)."""
    return _log2_hypot(n + math.log2(s) + math.log2(m) + 1.0, 2 * n)


def plain_multiply_noise(params: Params, n: float, s, plain_scale: float, magnitude: float = 1.0,
                         message: float = 1.0, scalar: bool = False) -> float:
    """Error of a ct × plaintext product (plaintext encoded at plain_scale, rounding ±1/2).

    CKKS: (m·s + e)(c·ps + r) = m·c·s·ps + e·c·ps + m·s·r + e·r. The ciphertext's error
    comes out multiplied by c slot by slot, so its std is at most `magnitude` (max |c|,
    when the constant is known; a plain input's declared bound, at least 1) times σ·ps; the encoding's rounding r (slot std √(N/12)) times the message
    (`message`: its magnitude, `magnitude(bound)`) adds message·s·√(N/12). A `scalar`
    is encoded exactly as a constant polynomial (`encryption.encode_scalar`): its one
    rounding, std 1/√12, is the same in every slot, √N times less than a vector's."""
    if _ckks(params):
        carried = n + math.log2(plain_scale) + (math.log2(magnitude) if magnitude > 0 else -math.inf)
        rounding = -0.5 * math.log2(12) if scalar else _to_slots(params, -0.5 * math.log2(12))
        return _log2_hypot(carried, math.log2(s) + math.log2(message) + rounding)
    return n + math.log2(params.plain_modulus) + 0.5 * math.log2(params.N) - 1


def scalar_multiply_noise(params: Params, n: float, constant: float) -> float:
    """Error after multiplying by an integer constant (its magnitude scales the error)."""
    return n + math.log2(max(abs(constant), 1))


def rescale_noise(params: Params, n: float, prime: int) -> float:
    """Error after dividing by a prime (rescale / BGV modulus switch)."""
    return _log2_hypot(n - math.log2(prime), rounding_noise(params))


def rescale_ext_noise(params: Params, n: float, prime: int, level: int) -> float:
    """Error after dividing a value over Q·P by P·q (a mod-down merged with the rescale
    that follows it, one base conversion from the k = α + 1 dropped primes). The result
    is x/(P·q) minus Σ_i [y_i]_{d_i}/d_i (`fhec.ring.rns.divide_by_dropped`): k centered
    terms, each uniform in (−1/2, 1/2], so the rounding's variance is k/12 where a rescale's
    (k = 1) is 1/12. The error the value carries (already divided by P) is divided by q.
    `level`: the value's (its P is that level's key-switching basis's)."""
    k = 1 + len(params.special_moduli_at(level))
    return _log2_hypot(n - math.log2(prime), rounding_noise(params) + 0.5 * math.log2(k))


# The worst-slot tail, log2(max_i |err_i| / σ), measured on the eager evaluator
# (`benchmarks/worst_slot.py`, 8 seeds per size, levels=2, base_limbs 1 and 2, fresh /
# rotate(2) / x*x, hybrid and BV; results in benchmarks/results/worst_slot.txt): with
# centered key-switch digits the worst slot lies at most 1.7, 2.2, 2.2, 2.4, 2.6, 2.6
# bits below the σ-based precision at log2 N = 6, 8, 10, 12, 13, 14, about half a bit
# above the Gaussian extreme-value factor log2 √(2 ln(N/2)) (1.4 … 2.1 bits): the σ
# estimate itself runs a little low. We add one bit to the Gaussian factor.
# (With digits lifted from [0, q) the excess grew with N, 3.5 … 7.6 bits, because the
# digits' bias concentrated the key-switching error on a few slots: a slope of 0.5 bit
# per doubling of N and an offset of -0.5 fitted it. Re-tune these two numbers here if
# the key-switching error changes again.)
_KS_TAIL_BITS_PER_LOG_N = 0.0
_KS_TAIL_BITS_OFFSET = 1.0


def worst_slot_tail_bits(params: Params) -> float:
    """CKKS: log2 of (largest slot error) / (estimated error std), a safe bound over the
    N/2 slots: the Gaussian extreme-value factor √(2 ln(N/2)) times the measured
    key-switching excess (see the table above). Re-tune here, in one place."""
    slots = max(params.N // 2, 2)
    gaussian = 0.5 * math.log2(2.0 * math.log(slots))
    excess = max(0.0, _KS_TAIL_BITS_PER_LOG_N * math.log2(params.N) + _KS_TAIL_BITS_OFFSET)
    return gaussian + excess


def precision_bits(params: Params, scale, noise: float) -> float:
    """CKKS: estimated bits of precision of the worst slot of a value at `scale` with
    error std 2^noise: ``log2(scale) − noise − worst_slot_tail_bits``."""
    return math.log2(scale) - noise - worst_slot_tail_bits(params)


def estimated_precision_bits(ct) -> float:
    """CKKS: estimated bits of precision of a ciphertext's worst slot (≈ −log2 of its
    largest slot error; `precision_bits`)."""
    return precision_bits(ct.params, ct.scale, ct.noise)


def estimated_noise_budget_bits(ct) -> float:
    """BGV: estimated remaining noise budget, log2(Q_l / 2) − log2(8σ)."""
    logq = sum(math.log2(q) for q in ct.moduli)
    return logq - 1 - ct.noise - 3


def _as_numbers(values, name: str) -> np.ndarray:
    array = as_1d_array(values, f"measure_precision: {name}", error=InvalidArgumentError)
    try:
        array = array.astype(np.complex128)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(f"measure_precision: {name} must hold numbers, got dtype {array.dtype}.") from None
    if not np.all(np.isfinite(array)):
        raise InvalidArgumentError(f"measure_precision: {name} holds NaN or infinite values.")
    return array


def measure_precision(expected, actual) -> dict:
    """Measured CKKS precision of decrypted values against the expected ones.

    Returns {"max_error", "mean_error", "min_bits", "mean_bits"} where
    ``min_bits = −log2(max |error|)`` and ``mean_bits = −log2(mean |error|)``.
    """
    a = _as_numbers(actual, "actual")
    e = _as_numbers(expected, "expected")
    if a.shape != e.shape and a.ndim and e.ndim:
        raise InvalidArgumentError(
            f"measure_precision: expected has shape {e.shape} but actual has {a.shape}; compare equally long "
            f"vectors (e.g. expected[:len(actual)])."
        )
    err = np.abs(a - e)
    mx, mean = float(err.max(initial=0.0)), float(err.mean()) if err.size else 0.0
    bits = lambda e: math.inf if e == 0 else -math.log2(e)  # noqa: E731
    return {"max_error": mx, "mean_error": mean, "min_bits": bits(mx), "mean_bits": bits(mean)}
