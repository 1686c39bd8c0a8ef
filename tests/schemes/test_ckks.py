"""CKKS end to end on the eager evaluator: semantics, precision, errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fhec
from fhec.schemes.encoding import ckks_decode
from fhec.schemes.encryption import decrypt_polynomial, encrypt_plaintext


def _vec(params, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, params.slots)


def _required_bits(params, ct):
    return math.log2(ct.scale) - (math.log2(params.N) + 2)


def test_encrypt_decrypt_precision(ckks_params, ckks_keys):
    x = _vec(ckks_params, 1)
    ct = fhec.encrypt(ckks_keys, x, seed=3)
    prec = fhec.measure_precision(x, fhec.decrypt(ckks_keys, ct))
    assert prec["mean_bits"] >= _required_bits(ckks_params, ct)
    assert ct.level == ckks_params.levels and ct.parts == 2


def test_public_key_encryption(ckks_params, ckks_keys):
    x = _vec(ckks_params, 2)
    ct = fhec.encrypt(ckks_keys.public_only(), x, seed=4)
    assert fhec.measure_precision(x, fhec.decrypt(ckks_keys, ct))["mean_bits"] >= _required_bits(ckks_params, ct)
    # decrypting needs the secret: SecretKeyError, not a parameter mismatch (the parameters match)
    with pytest.raises(fhec.SecretKeyError, match="public-only"):
        fhec.decrypt(ckks_keys.public_only(), ct)


def test_short_input_is_zero_padded(ckks_params, ckks_keys):
    out = fhec.decrypt(ckks_keys, fhec.encrypt(ckks_keys, [0.5, -0.25, 1.0], seed=1))
    assert np.allclose(out[:3], [0.5, -0.25, 1.0], atol=1e-4) and np.allclose(out[3:], 0, atol=1e-4)


@pytest.mark.parametrize("k", [1, -1, 3, 5, 100, -7, 1 + 2**10, -(2**10) + 3])
def test_rotation_semantics_match_np_roll(ckks_params, ckks_keys, k):
    x = _vec(ckks_params, 5)
    ev = fhec.Evaluator(ckks_keys)
    out = fhec.decrypt(ckks_keys, ev.rotate(fhec.encrypt(ckks_keys, x, seed=6), k))
    assert np.allclose(out, np.roll(x, -k), atol=1e-3)


def test_conjugate_on_complex_slots(ckks_params, ckks_keys):
    rng = np.random.default_rng(8)
    z = rng.uniform(-1, 1, ckks_params.slots) + 1j * rng.uniform(-1, 1, ckks_params.slots)
    ct = encrypt_plaintext(ckks_keys, fhec.encode(ckks_params, z), seed=9)
    out = fhec.Evaluator(ckks_keys).conjugate(ct)
    got = ckks_decode(decrypt_polynomial(ckks_keys, out), ckks_params.N, out.scale)
    assert np.allclose(got, np.conj(z), atol=1e-3)


@pytest.mark.parametrize("method", ["hybrid", "bv"])
def test_both_keyswitch_methods_multiply(ckks_params, ckks_keys, method):
    x, y = _vec(ckks_params, 10), _vec(ckks_params, 11)
    ev = fhec.Evaluator(ckks_keys, keyswitch=method)
    cx, cy = fhec.encrypt(ckks_keys, x, seed=1), fhec.encrypt(ckks_keys, y, seed=2)
    out = ev.rescale(ev.multiply(cx, cy))
    prec = fhec.measure_precision(x * y, fhec.decrypt(ckks_keys, out))
    assert prec["mean_bits"] >= _required_bits(ckks_params, out)


def test_methods_agree(ckks_params, ckks_keys):
    x = _vec(ckks_params, 12)
    cx = fhec.encrypt(ckks_keys, x, seed=1)
    outs = [
        fhec.decrypt(ckks_keys, fhec.Evaluator(ckks_keys, keyswitch=m).rescale(fhec.Evaluator(ckks_keys).multiply(cx, cx, keyswitch=m)))
        for m in ("bv", "hybrid")
    ]
    assert np.allclose(outs[0], outs[1], atol=1e-3)


def test_plain_and_scalar_ops(ckks_params, ckks_keys):
    x, w = _vec(ckks_params, 13), _vec(ckks_params, 14)
    ev = fhec.Evaluator(ckks_keys)
    cx = fhec.encrypt(ckks_keys, x, seed=1)
    checks = [
        (ev.rescale(ev.multiply(cx, w)), x * w),
        (ev.rescale(ev.multiply(cx, 0.3)), 0.3 * x),
        (ev.multiply(cx, -2), -2 * x),
        (ev.add(cx, 0.25), x + 0.25),
        (ev.sub(cx, w), x - w),
        (ev.negate(cx), -x),
        (ev.add(cx, fhec.encode(ckks_params, w)), x + w),
    ]
    for ct, want in checks:
        prec = fhec.measure_precision(want, fhec.decrypt(ckks_keys, ct))
        assert prec["mean_bits"] >= _required_bits(ckks_params, ct), (want[:3], prec)


def test_plaintext_multiply_then_rescale_restores_scale(ckks_params, ckks_keys):
    ev = fhec.Evaluator(ckks_keys)
    cx = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), seed=1)
    out = ev.rescale(ev.multiply(cx, 0.5))
    assert out.scale == pytest.approx(cx.scale, rel=1e-15) and out.level == cx.level - 1


def test_rescaling_a_fresh_ciphertext_is_refused(ckks_params, ckks_keys):
    # its scale is one prime: rescaling left a scale of 2^0 and decrypted to noise
    # (precision_bits -10.7) without a word, where the DSL refuses the same
    ev = fhec.Evaluator(ckks_keys)
    cx = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), seed=1)
    with pytest.raises(fhec.PrecisionError, match=r"leaving no bit of the value.*mod_switch\(\)"):
        ev.rescale(cx)
    assert ev.rescale(ev.multiply(cx, cx)).precision_bits > 10  # a product rescales as before


OPS = ["add", "sub", "mul", "mul_plain", "mul_float", "mul_int", "add_scalar", "rotate", "negate"]


@settings(max_examples=15)
@given(st.lists(st.sampled_from(OPS), min_size=1, max_size=8), st.integers(0, 2**31))
def test_random_op_sequences_keep_precision(ckks_params, ckks_keys, ops, seed):
    """CKKS mean precision ≥ log2(scale) − (log2 N + 2) after each op, up to the available depth."""
    rng = np.random.default_rng(seed)
    ev = fhec.Evaluator(ckks_keys)
    want = rng.uniform(-1, 1, ckks_params.slots)
    acc = fhec.encrypt(ckks_keys, want, seed=seed)
    for i, op in enumerate(ops):
        y = rng.uniform(-0.5, 0.5, ckks_params.slots)
        needs_level = op in ("mul", "mul_plain", "mul_float")
        if needs_level and acc.level == 0:
            continue
        if op in ("add", "sub") and acc.level == 0:
            continue  # aligning a fresh operand down to level 0 needs a level above it
        cy = fhec.encrypt(ckks_keys, y, seed=seed + i + 1)
        if op == "add":
            acc, want = ev.add(acc, cy), want + y
        elif op == "sub":
            acc, want = ev.sub(acc, cy), want - y
        elif op == "mul":
            acc, want = ev.rescale(ev.multiply(acc, cy)), want * y
        elif op == "mul_plain":
            acc, want = ev.rescale(ev.multiply(acc, y)), want * y
        elif op == "mul_float":
            acc, want = ev.rescale(ev.multiply(acc, 0.75)), want * 0.75
        elif op == "mul_int":
            acc, want = ev.multiply(acc, -1), -want
        elif op == "add_scalar":
            acc, want = ev.add(acc, 0.125), want + 0.125
        elif op == "rotate":
            acc, want = ev.rotate(acc, 3), np.roll(want, -3)
        else:
            acc, want = ev.negate(acc), -want
        if np.abs(want).max() > 1.5:  # keep within q_0's headroom
            acc, want = ev.rescale(ev.multiply(acc, 0.5)) if acc.level else acc, want * 0.5 if acc.level else want
        prec = fhec.measure_precision(want, fhec.decrypt(ckks_keys, acc))
        assert prec["mean_bits"] >= _required_bits(ckks_params, acc), (ops[: i + 1], prec)


# -- errors ------------------------------------------------------------------------


def test_missing_rotation_key_names_the_rotation_and_the_fix(ckks_params, ckks_keys):
    ct = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), seed=1)
    with pytest.raises(fhec.MissingRotationKeyError, match=r"rotation by 2 .*rotations=\[\.\.\., 2\]"):
        fhec.Evaluator(ckks_keys).rotate(ct, 2)


def test_missing_relinearization_key(ckks_params):
    keys = fhec.keygen(ckks_params, seed=1, relinearization=False)
    ct = fhec.encrypt(keys, _vec(ckks_params, 1), seed=1)
    with pytest.raises(fhec.MissingRelinearizationKeyError, match="relinearization=True"):
        fhec.Evaluator(keys).multiply(ct, ct)


def test_exhausted_level(ckks_params, ckks_keys):
    ct = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), level=0, seed=1)
    with pytest.raises(fhec.LevelExhaustedError, match="increase `levels`"):
        fhec.Evaluator(ckks_keys).rescale(ct)


def test_scale_mismatch_on_add(ckks_params, ckks_keys):
    ev = fhec.Evaluator(ckks_keys)
    ct = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), seed=1)
    with pytest.raises(fhec.ScaleMismatchError, match="rescale"):
        ev.add(ev.multiply(ct, ct), ct)


def test_too_many_values(ckks_params, ckks_keys):
    with pytest.raises(fhec.TooManyValuesError, match=f"{ckks_params.slots} slots"):
        fhec.encrypt(ckks_keys, np.zeros(ckks_params.slots + 1))


def test_objects_from_different_key_sets(ckks_params, ckks_keys):
    other = fhec.keygen(ckks_params, seed=99)
    ct = fhec.encrypt(other, _vec(ckks_params, 1), seed=1)
    with pytest.raises(fhec.MismatchedParametersError, match="another parameter or key set"):
        fhec.Evaluator(ckks_keys).negate(ct)
    with pytest.raises(fhec.MismatchedParametersError):
        fhec.decrypt(ckks_keys, ct)


def test_objects_from_different_parameter_sets(ckks_keys):
    p2 = fhec.CKKSParams(N=2**11, levels=3, scale_bits=30, word_bits=32, security=None)
    k2 = fhec.keygen(p2, seed=1)
    with pytest.raises(fhec.MismatchedParametersError):
        fhec.Evaluator(ckks_keys).negate(fhec.encrypt(k2, [1.0], seed=1))


def test_bgv_only_ops_are_refused(ckks_keys):
    ct = fhec.encrypt(ckks_keys, [1.0], seed=1)
    with pytest.raises(fhec.SchemeMismatchError, match="conjugate"):
        fhec.Evaluator(ckks_keys).swap_rows(ct)


def test_seeds_make_experiments_reproducible(ckks_params):
    a = fhec.encrypt(fhec.keygen(ckks_params, seed=3), [0.5], seed=4)
    b = fhec.encrypt(fhec.keygen(ckks_params, seed=3), [0.5], seed=4)
    assert np.array_equal(a.data, b.data)


def test_default_keys_allow_either_method_per_call(ckks_params):
    keys = fhec.keygen(ckks_params, rotations=[1], seed=4)  # both methods by default
    x = _vec(ckks_params, 20)
    ct = fhec.encrypt(keys, x, seed=1)
    ev = fhec.Evaluator(keys)
    assert ev.keyswitch == ckks_params.keyswitch
    for method in ("bv", "hybrid"):
        out = fhec.decrypt(keys, ev.rescale(ev.multiply(ct, ct, keyswitch=method)))
        assert fhec.measure_precision(x * x, out)["mean_bits"] >= 12
    bv_only = fhec.keygen(ckks_params, seed=4, keyswitch="bv")
    assert fhec.Evaluator(bv_only).keyswitch == "bv"  # per key set
    with pytest.raises(fhec.MissingRelinearizationKeyError, match="keyswitch='hybrid'"):
        fhec.Evaluator(bv_only).multiply(*(2 * [fhec.encrypt(bv_only, x, seed=1)]), keyswitch="hybrid")


def test_value_limits_beyond_a_float_modulus():
    """Bootstrapping parameter sets have Q above 2^1024 (no float holds Q/2): tracing an
    input there works, and the limit is computed in the log domain, consistent with the
    float formula where both apply."""
    import math

    import fhec
    from fhec.schemes.ranges import value_limit

    big = fhec.CKKSParams(N=2**6, levels=25, scale_bits=40, word_bits=50, security=None, min_precision_bits=None)
    assert big.log_q > 1024
    p = fhec.Program("big", big)
    p.output("y", p.input("x") * 2)
    top = value_limit(big, big.top_level, big.default_scale)
    assert math.log2(top) == pytest.approx(big.log_q - 1 - math.log2(big.default_scale))
    assert value_limit(big, big.top_level, 0.5) == math.inf  # the quotient has no float either
    mid = next(lv for lv in range(big.top_level, -1, -1) if sum(map(math.log2, big.moduli_at(lv))) < 1023)
    assert 0 < value_limit(big, mid, big.scale_at(mid)) < math.inf
    assert value_limit(big, mid, big.scale_at(mid), noise=2000.0) == 0.0  # an error estimate beyond 2^1024
    assert value_limit(big, big.top_level, big.default_scale, noise=2000.0) == 0.0


@pytest.mark.parametrize("value", [-2**63 - 1, 2**64, 10**400])
def test_integers_beyond_int64_are_value_overflows_not_type_errors(value):
    # found by the thorough fuzz profile: np.isfinite cannot take a Python int beyond int64.
    # At level 2 of 30-bit scales only |value| <= 2.3e18 fits, so each is an overflow.
    params = fhec.CKKSParams(N=1024, levels=2, scale_bits=30, word_bits=32, security=None)
    keys = fhec.keygen(params, seed=1)
    ct = fhec.encrypt(keys, [0.5], seed=1)
    with pytest.raises(fhec.ValueOverflowError, match="the constant to encode"):
        fhec.Evaluator(keys).add(ct, value)
