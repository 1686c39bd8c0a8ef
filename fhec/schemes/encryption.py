"""Encode, encrypt, decrypt: the client side of CKKS and BGV.

`encrypt` uses the secret key when the key set has one (symmetric RLWE encryption:
error e only, as SEAL's `Encryptor` does with a secret key) and the public key otherwise
(error e0 + e·u + e1·s, about √N times larger).

Randomness (`encryption_sampler`): with ``seed=None`` every encryption keys a fresh
SHAKE-256 stream from the OS. With an explicit seed, the n-th encryption under one key
set and seed draws the stream of (seed, "encrypt/<key_id>/<n>"), n counted by the key
set: two calls never share randomness, and a rerun of the same script (same keys, same
calls in the same order) reproduces every ciphertext.

`decrypt(..., flood_bits=b)` (CKKS) adds fresh noise uniform in [−2^b, 2^b] to the
decrypted polynomial before decoding: the result no longer reveals the ciphertext's
exact error, which the key-recovery attacks on CKKS decryptions (Li–Micciancio,
IND-CPA-D) exploit. See docs/security.md for how to choose b.
"""

from __future__ import annotations

from fractions import Fraction

import math

import numpy as np

from fhec.errors import (
    InvalidArgumentError,
    InvalidPlaintextError,
    MismatchedParametersError,
    NoiseBudgetExhaustedError,
    ParameterError,
    SchemeMismatchError,
    SecretKeyError,
    TooManyValuesError,
)
from fhec.validate import as_1d_array, as_int, as_real, refuse_non_numbers
from fhec.ring.modarith import add_mod, mul_mod, neg_mod
from fhec.ring.ntt import intt
from fhec.ring.rns import centered, crt_compose, product, to_rns
from fhec.schemes import noise as nz
from fhec.schemes import ranges
from fhec.schemes.ciphertext import Ciphertext, ExtendedCiphertext, Plaintext
from fhec.schemes.encoding import bgv_decode, bgv_encode, ckks_decode, ckks_encode
from fhec.schemes.keys import KeySet
from fhec.schemes.params import Params
from fhec.schemes.sampling import Sampler, check_seed, small_ntt
from fhec.ring.ntt import ntt

MAX_FLOOD_BITS = 62


def _check_length(params: Params, values) -> np.ndarray:
    arr = as_1d_array(values, "the values to encode", error=InvalidPlaintextError)
    if arr.ndim == 0:
        arr = np.full(params.slots, arr.item())
    if arr.shape[0] > params.slots:
        raise TooManyValuesError(
            f"{arr.shape[0]} values do not fit in {params.slots} slots "
            f"(N = {params.N}); split the data over several ciphertexts or use a larger N."
        )
    if params.scheme == "ckks":
        # Before any range check looks at them: numbers only, finite.
        refuse_non_numbers(arr, "the vector", error=InvalidPlaintextError)
        try:
            numbers = arr.astype(np.complex128)
        except (TypeError, ValueError, OverflowError) as e:
            raise InvalidPlaintextError(f"CKKS values must be real (or complex) numbers: {e}") from None
        if not np.all(np.isfinite(numbers)):
            raise InvalidPlaintextError("CKKS values must be finite (no NaN or infinity)")
    return arr


def check_params(params) -> Params:
    """`params` if it is a parameter set, else `InvalidArgumentError`."""
    from fhec.schemes.params import BGVParams, CKKSParams

    if not isinstance(params, (CKKSParams, BGVParams)):
        raise InvalidArgumentError(
            f"expected fhec.CKKSParams(...) or fhec.BGVParams(...) as the parameter set, got {type(params).__name__}."
        )
    return params


def check_keys(keys) -> KeySet:
    """`keys` if it is a `KeySet`, else `InvalidArgumentError`."""
    if not isinstance(keys, KeySet):
        raise InvalidArgumentError(f"expected the KeySet made by fhec.keygen(params, ...), got {type(keys).__name__}.")
    return keys


def check_level(params: Params, level, name: str = "level") -> int:
    """`level` as an int in 0..params.top_level, else `InvalidArgumentError`."""
    return as_int(level, name, min=0, max=params.top_level, error=InvalidArgumentError,
                  fix=f"the parameter set has levels 0..{params.top_level} (None: the top level)")


def check_scale(params: Params, level: int, scale):
    """The encoding scale: CKKS a positive real whose encoding fits the level's modulus,
    BGV a plaintext factor, an integer that is invertible mod t."""
    if params.scheme == "bgv":
        t = params.plain_modulus
        factor = as_int(scale, "scale (the BGV plaintext factor)", error=InvalidArgumentError,
                        fix="pass an integer factor, or None for 1")
        if factor % t == 0:
            raise InvalidArgumentError(f"scale = {factor} is 0 mod t = {t}: the message would be lost; use 1.")
        return factor % t  # the factor lives in Z_t
    value = as_real(scale, "scale", min=0.0, min_exclusive=True, error=InvalidArgumentError,
                    fix=f"use a positive number such as the level's scale {params.scale_at(level):.6g}")
    limit = sum(math.log2(q) for q in params.moduli_at(level)) - 1
    if math.log2(value) >= limit:
        raise InvalidArgumentError(
            f"scale = 2^{math.log2(value):.1f} does not fit the level-{level} modulus (2^{limit + 1:.1f}): the "
            f"encoding would wrap around it. Use a scale below 2^{limit:.0f}, e.g. the level's own "
            f"{params.scale_at(level):.6g} (scale=None)."
        )
    return value


def encode(params: Params, values, level: int | None = None, scale=None, *, extended: bool = False) -> Plaintext:
    """Encode up to `params.slots` values as a plaintext at `level` (default: top).
    `extended`: residues over Q_level·P (the same integer polynomial, reduced mod the
    special primes too), to multiply an `ExtendedCiphertext` (double hoisting).

    CKKS: real (or complex) values at `scale` (default: the level's canonical scale).
    BGV: integers mod t (the factor is 1).

    Raises `TooManyValuesError`, `InvalidPlaintextError` (values not a 1-D vector of
    numbers, NaN, non-integers for BGV), `InvalidArgumentError` (a level outside
    0..levels, a scale that is not positive or does not fit the level's modulus) and
    (CKKS) `ValueOverflowError` when max |value| × scale reaches Q_level / 2
    (`fhec.schemes.ranges`).
    """
    check_params(params)
    level = params.top_level if level is None else check_level(params, level)
    arr = _check_length(params, values)
    moduli = params.moduli_at(level) + (params.special_moduli_at(level) if extended else ())
    if params.scheme == "ckks":
        scale = params.scale_at(level) if scale is None else check_scale(params, level, scale)
        ranges.check_values_fit(params, arr, level, scale, None, "the values to encode")
        coeffs = ckks_encode(arr, params.N, scale)
    else:
        scale = 1 if scale is None else check_scale(params, level, scale)
        coeffs = bgv_encode(arr, params.N, params.plain_modulus)
        if scale != 1:
            coeffs = (coeffs * scale) % params.plain_modulus
    return Plaintext(params, ntt(to_rns(coeffs, moduli), moduli), level, scale, extended)


def scalar_integer(params: Params, value, scale=None) -> int:
    """The integer a scalar plaintext encodes to: a constant polynomial, the same at every
    slot and at every NTT evaluation point. CKKS: round(value × scale), exactly (scale
    defaults to the top level's); BGV: value × factor mod t (factor default 1)."""
    if params.scheme == "ckks":
        scale = params.scale_at(params.top_level) if scale is None else scale
        value = as_real(value, "the scalar", error=InvalidPlaintextError,
                        fix="CKKS scalars are finite real numbers (fhec's slots are real)")
        return round(Fraction(value) * Fraction(float(scale)))
    t = params.plain_modulus
    value = as_int(value, "the scalar", error=InvalidPlaintextError,
                   fix=f"BGV computes on integers mod t = {t}; round the value first")
    return (value % t) * (1 if scale is None else int(scale)) % t


def encode_scalar(params: Params, value, level: int | None = None, scale=None) -> Plaintext:
    """A scalar as a plaintext at `level` (default: top): the constant polynomial
    `scalar_integer(params, value, scale)`, whose NTT form holds that integer mod each
    prime in every word (CKKS scale default: the level's canonical scale; BGV factor 1).
    Exact, where encoding `np.full(slots, value)` goes through a floating-point FFT.
    Raises `InvalidPlaintextError` for a value that is not a finite real (CKKS) or an
    integer (BGV), and (CKKS) `ValueOverflowError` when |value| × scale reaches
    Q_level / 2, as `encode` does."""
    level = params.top_level if level is None else level
    if params.scheme == "ckks":
        scale = params.scale_at(level) if scale is None else float(scale)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            # a Python int may lie beyond int64 and even float range: its magnitude as a float
            magnitude = float(value) if abs(value) < 2**1023 else float("inf")
            ranges.check_values_fit(params, np.array([magnitude]), level, scale, None, "the constant to encode")
        elif isinstance(value, (float, np.floating)) and math.isfinite(value):
            ranges.check_values_fit(params, np.array([float(value)]), level, scale, None, "the constant to encode")
    else:
        scale = 1 if scale is None else int(scale)
    k = scalar_integer(params, value, scale)
    moduli = params.moduli_at(level)
    data = np.empty((len(moduli), params.N), dtype=np.uint64)
    for i, q in enumerate(moduli):
        data[i] = k % q
    return Plaintext(params, data, level, scale)


def encryption_sampler(keys: KeySet, seed) -> Sampler:
    """The stream one encryption under `keys` draws from (see the module doc).

    None: a fresh OS-keyed stream. An int or bytes: the stream of (seed,
    "encrypt/<key_id>/<n>") with n = ``keys.encryptions.next(seed)``, so every call takes
    a new n. A `Sampler`: itself (the caller manages it). Raises `SeedError`.
    """
    seed = check_seed(seed)
    if seed is None or isinstance(seed, Sampler):
        return Sampler.fresh() if seed is None else seed
    return Sampler.from_seed(seed, f"encrypt/{keys.key_id}/{keys.encryptions.next(seed)}")


def encrypt(keys: KeySet, values, *, level: int | None = None, seed=None) -> Ciphertext:
    """Encrypt up to `slots` values at `level` (default: top) under `keys`.

    `seed`: None (the default) for fresh OS randomness, which is what a deployment
    must use; a non-negative int or non-empty bytes for a reproducible experiment, where every
    call under the same keys and seed still draws a new stream (`encryption_sampler`);
    or a `Sampler`. Raises `TooManyValuesError`, `SeedError`, and (CKKS)
    `ValueOverflowError` when the values times the scale, plus the encryption error,
    reach Q_level / 2: they would decrypt to garbage.
    """
    params = check_keys(keys).params
    if isinstance(values, Plaintext):
        if level is not None and check_level(params, level) != values.level:
            raise InvalidArgumentError(
                f"level = {level} but the plaintext is encoded at level {values.level}; drop level= or encode "
                f"the values at level {level}."
            )
        return encrypt_plaintext(keys, values, seed=seed)
    if params.scheme == "ckks":
        at = params.top_level if level is None else check_level(params, level)
        fresh = nz.fresh_noise(params, public_key=keys.secret_ntt is None)
        ranges.check_values_fit(params, _check_length(params, values), at, params.scale_at(at), fresh,
                                "the values to encrypt")
    return encrypt_plaintext(keys, encode(params, values, level), seed=seed)


def encrypt_plaintext(keys: KeySet, pt: Plaintext, *, seed=None) -> Ciphertext:
    """Encrypt an already encoded plaintext (see `encrypt`)."""
    params = check_keys(keys).params
    if pt.params.fingerprint != params.fingerprint:
        raise MismatchedParametersError("the plaintext was encoded for another parameter set than the keys")
    sampler = encryption_sampler(keys, seed)
    moduli = pt.moduli
    L = len(moduli)
    q = np.array(moduli, dtype=np.uint64)
    t = params.plain_modulus if params.scheme == "bgv" else 1
    N = params.N
    if keys.secret_ntt is not None:
        a = sampler.uniform(moduli, N)
        e = small_ntt(sampler.gaussian(N) * t, moduli)
        c0 = add_mod(add_mod(neg_mod(mul_mod(a, keys.secret_ntt[:L], q), q), e, q), pt.data, q)
        data = np.stack([c0, a])
        noise = nz.fresh_noise(params, public_key=False)
    else:
        b, a = keys.public
        u = small_ntt(sampler.ternary(N), moduli)
        e0 = small_ntt(sampler.gaussian(N) * t, moduli)
        e1 = small_ntt(sampler.gaussian(N) * t, moduli)
        c0 = add_mod(add_mod(mul_mod(b[:L], u, q), e0, q), pt.data, q)
        c1 = add_mod(mul_mod(a[:L], u, q), e1, q)
        data = np.stack([c0, c1])
        noise = nz.fresh_noise(params, public_key=True)
    return Ciphertext(params, data, pt.level, pt.scale, keys.key_id, noise)


def check_ciphertext(ct, what: str = "the ciphertext") -> Ciphertext:
    """`ct` if it is a `Ciphertext`, else `InvalidArgumentError`."""
    if isinstance(ct, ExtendedCiphertext):
        raise InvalidArgumentError(
            f"{what} is an ExtendedCiphertext over Q·P (a double-hoisted intermediate); divide it by P first: "
            f"Evaluator.mod_down(x)."
        )
    if not isinstance(ct, Ciphertext):
        raise InvalidArgumentError(
            f"{what} must be an fhec Ciphertext (from fhec.encrypt or an Evaluator), not {type(ct).__name__}; "
            f"to decode a plain slot vector there is nothing to decrypt."
        )
    return ct


def _raw_decrypt(keys: KeySet, ct: Ciphertext, limbs: int) -> np.ndarray:
    """[c0 + c1·s + c2·s² ...] over the first `limbs` limbs, coefficient domain."""
    check_keys(keys)
    check_ciphertext(ct)
    if keys.secret_ntt is None:
        raise SecretKeyError("decryption needs the secret key; this key set is public-only (decrypt with the "
                             "key set that keygen returned, or one loaded from a file saved with include_secret=True)")
    if ct.key_id != keys.key_id or ct.params.fingerprint != keys.params.fingerprint:
        raise MismatchedParametersError(
            "the ciphertext was encrypted under another key set or parameter set; decrypt it with the keys "
            "that encrypted it."
        )
    moduli = ct.moduli[:limbs]
    q = np.array(moduli, dtype=np.uint64)
    s = keys.secret_ntt[:limbs]
    acc = ct.data[ct.parts - 1, :limbs]
    for part in range(ct.parts - 2, -1, -1):  # Horner: ((c2·s + c1)·s + c0)
        acc = add_mod(mul_mod(acc, s, q), ct.data[part, :limbs], q)
    return intt(acc, moduli)


def _ckks_limbs(ct: Ciphertext) -> int:
    """Limbs enough to hold the decrypted value exactly: log2 Q_k ≥ log2(scale) + 64 bits of headroom."""
    need, bits = math.log2(ct.scale) + 64, 0.0
    for k, q in enumerate(ct.moduli, start=1):
        bits += math.log2(q)
        if bits >= need:
            return k
    return ct.limbs


def decrypt_polynomial(keys: KeySet, ct: Ciphertext) -> np.ndarray:
    """The centered decrypted polynomial (object array of Python ints) over all of Q_l."""
    moduli = ct.moduli
    return centered(crt_compose(_raw_decrypt(keys, ct, len(moduli)), moduli), product(moduli))


def decrypt(keys: KeySet, ct: Ciphertext, *, flood_bits: int | None = None) -> np.ndarray:
    """Decrypt and decode: float64 slots (CKKS; the real part) or int64 slots mod t (BGV).

    `flood_bits` (CKKS only): add fresh OS-random noise uniform in [−2^b, 2^b] to every
    coefficient of the decrypted polynomial before decoding, so that the output does
    not reveal the ciphertext's error (IND-CPA-D; see docs/security.md). It costs
    precision: slot errors grow by about 2^b·√N / scale.

    Raises `MismatchedParametersError` for a ciphertext of another key set, (BGV)
    `NoiseBudgetExhaustedError` when the noise has reached the modulus,
    `SchemeMismatchError` for `flood_bits` on BGV, `ParameterError` for a
    `flood_bits` outside [0, min(62, log2(scale) − 1)], and `InvalidArgumentError`
    when `keys` or `ct` is not a key set / ciphertext.
    """
    check_keys(keys)
    params = check_ciphertext(ct).params
    if flood_bits is not None:
        _check_flood_bits(ct, flood_bits)
    if params.scheme == "ckks":
        k = _ckks_limbs(ct)
        moduli = ct.moduli[:k]
        v = centered(crt_compose(_raw_decrypt(keys, ct, k), moduli), product(moduli))
        if flood_bits is not None:
            v = v + Sampler.fresh().uniform_symmetric(flood_bits, params.N).astype(object)
        return ckks_decode(v, params.N, ct.scale).real
    v = decrypt_polynomial(keys, ct)
    budget = _budget_of(ct, v)
    if budget < 1.0:
        raise NoiseBudgetExhaustedError(
            f"the ciphertext's noise has reached its modulus (measured budget {budget:.1f} bits at level "
            f"{ct.level}); the result would be garbage. Use more levels or larger primes, or insert "
            f"mod_switch earlier so that noise shrinks with the modulus."
        )
    t = params.plain_modulus
    m = (v % t).astype(np.int64)
    m = bgv_decode(m, params.N, t)
    inv = pow(int(ct.scale), -1, t)
    return (m.astype(object) * inv % t).astype(np.int64)


def _check_flood_bits(ct: Ciphertext, flood_bits) -> None:
    if ct.params.scheme != "ckks":
        raise SchemeMismatchError(
            f"flood_bits={flood_bits!r}: noise flooding applies to CKKS decryption. BGV decryption returns "
            f"m mod t exactly, which carries no noise; drop flood_bits."
        )
    top = min(MAX_FLOOD_BITS, math.floor(math.log2(ct.scale)) - 1)
    if isinstance(flood_bits, (bool, np.bool_)) or not isinstance(flood_bits, (int, np.integer)) or not (
        0 <= flood_bits <= top
    ):
        raise ParameterError(
            f"flood_bits={flood_bits!r}: pass an int in [0, {top}] (the flooding noise must stay below the "
            f"scale 2^{math.log2(ct.scale):.1f} of the ciphertext, and below 2^{MAX_FLOOD_BITS}); "
            f"docs/security.md explains how to choose it."
        )


def _budget_of(ct: Ciphertext, v: np.ndarray) -> float:
    Q = product(ct.moduli)
    worst = max(abs(int(x)) for x in v) or 1
    return math.log2(Q / 2) - math.log2(worst)


def measure_noise_budget(keys: KeySet, ct: Ciphertext) -> float:
    """BGV: the measured remaining noise budget in bits, log2(Q_l/2) − log2‖[c0 + c1·s]_Q‖∞.

    Raises `SchemeMismatchError` for a CKKS ciphertext (use `measure_precision`)."""
    if check_ciphertext(ct).params.scheme != "bgv":
        raise SchemeMismatchError(
            "measure_noise_budget is for BGV ciphertexts; for CKKS compare decrypt(keys, ct) with the expected "
            "values using fhec.measure_precision."
        )
    return _budget_of(ct, decrypt_polynomial(keys, ct))
