"""BGV end to end on the eager evaluator: exact results mod t, rows, noise budget, errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fhec


def _vec(params, seed):
    return np.random.default_rng(seed).integers(0, params.plain_modulus, params.slots)


def _rot_rows(x, k):
    rows = x.reshape(2, -1)
    return np.roll(rows, -k, axis=1).ravel()


@pytest.mark.parametrize("method", ["hybrid", "bv"])
def test_exact_arithmetic(bgv_params, bgv_keys, method):
    t = bgv_params.plain_modulus
    x, y = _vec(bgv_params, 1), _vec(bgv_params, 2)
    ev = fhec.Evaluator(bgv_keys, keyswitch=method)
    cx, cy = fhec.encrypt(bgv_keys, x, seed=1), fhec.encrypt(bgv_keys, y, seed=2)
    cases = [
        (ev.add(cx, cy), x + y),
        (ev.sub(cx, cy), x - y),
        (ev.multiply(cx, cy), x * y),
        (ev.multiply(cx, y), x * y),
        (ev.multiply(cx, 7), 7 * x),
        (ev.add(cx, 5), x + 5),
        (ev.negate(cx), -x),
        (ev.mod_switch(ev.multiply(cx, cy)), x * y),
        (ev.rotate(cx, 3), _rot_rows(x, 3)),
        (ev.rotate(cx, -1), _rot_rows(x, -1)),
        (ev.swap_rows(cx), x.reshape(2, -1)[::-1].ravel()),
    ]
    for ct, want in cases:
        assert np.array_equal(fhec.decrypt(bgv_keys, ct), np.mod(want, t))


@settings(max_examples=10)
@given(st.lists(st.sampled_from(["add", "mul", "mul_plain", "rotate", "mod_switch", "swap"]), max_size=6), st.integers(0, 2**31))
def test_random_sequences_exact_against_numpy(bgv_params, bgv_keys, ops, seed):
    t = bgv_params.plain_modulus
    rng = np.random.default_rng(seed)
    ev = fhec.Evaluator(bgv_keys)
    want = rng.integers(0, t, bgv_params.slots)
    acc = fhec.encrypt(bgv_keys, want, seed=seed)
    muls = 0
    for i, op in enumerate(ops):
        y = rng.integers(0, t, bgv_params.slots)
        if op == "add":
            acc, want = ev.add(acc, fhec.encrypt(bgv_keys, y, seed=seed + i + 1)), want + y
        elif op in ("mul", "mul_plain") and muls < 2:
            other = fhec.encrypt(bgv_keys, y, seed=seed + i + 1) if op == "mul" else y
            product = ev.multiply(acc, other)
            if product.level:
                product = ev.mod_switch(product)
            if product.noise_budget_bits < 8:  # the estimate says it would not decrypt: skip
                continue
            acc, want, muls = product, want * y, muls + 1
        elif op == "rotate":
            acc, want = ev.rotate(acc, 17), _rot_rows(want, 17)
        elif op == "mod_switch" and acc.level:
            acc = ev.mod_switch(acc)
        elif op == "swap":
            acc, want = ev.swap_rows(acc), want.reshape(2, -1)[::-1].ravel()
        want = np.mod(want, t)
        assert np.array_equal(fhec.decrypt(bgv_keys, acc), want), ops[: i + 1]


def test_noise_budget_estimate_tracks_measurement(bgv_params, bgv_keys):
    ev = fhec.Evaluator(bgv_keys)
    ct = fhec.encrypt(bgv_keys, _vec(bgv_params, 1), seed=1)
    for step in range(3):
        measured = fhec.measure_noise_budget(bgv_keys, ct)
        assert abs(measured - ct.noise_budget_bits) < 6, (step, measured, ct.noise_budget_bits)
        ct = ev.mod_switch(ev.multiply(ct, ct))


def test_exhausted_noise_budget_raises_instead_of_garbage(bgv_params, bgv_keys):
    ev = fhec.Evaluator(bgv_keys)
    ct = fhec.encrypt(bgv_keys, _vec(bgv_params, 1), level=0, seed=1)
    with pytest.raises(fhec.NoiseBudgetExhaustedError, match="budget"):
        for _ in range(6):
            ct = ev.multiply(ct, ct)
            fhec.decrypt(bgv_keys, ct)


def test_rescale_is_ckks_only(bgv_keys):
    with pytest.raises(fhec.SchemeMismatchError, match="mod_switch"):
        fhec.Evaluator(bgv_keys).rescale(fhec.encrypt(bgv_keys, [1], seed=1))


def test_level_exhausted(bgv_keys):
    ct = fhec.encrypt(bgv_keys, [1], level=0, seed=1)
    with pytest.raises(fhec.LevelExhaustedError):
        fhec.Evaluator(bgv_keys).mod_switch(ct)


def test_missing_swap_key(bgv_params):
    keys = fhec.keygen(bgv_params, seed=2)
    with pytest.raises(fhec.MissingRotationKeyError, match="conjugation=True"):
        fhec.Evaluator(keys).swap_rows(fhec.encrypt(keys, [1], seed=1))


def test_a_list_mixing_int64_and_uint64_sized_ints_stays_exact():
    # found by the thorough fuzz profile: numpy turns [0, 2**63] into float64, which BGV refused
    params = fhec.BGVParams(N=1024, levels=2, plain_modulus=12289, security=None)
    keys = fhec.keygen(params, seed=1)
    values = [0, 2**63, -(2**63) - 5, 7]
    out = fhec.decrypt(keys, fhec.encrypt(keys, values, seed=3))
    assert out[:4].tolist() == [v % 12289 for v in values]
