"""Explicit modulus chains (`q_bits`, `p_bits`) as SEAL and Lattigo users write them; the
short form (`scale_bits`, `word_bits`) stays as it was."""

import math

import numpy as np
import pytest

import fhec
from fhec.ir.he_json import params_from_dict, params_to_dict


def bits(primes):
    return [q.bit_length() for q in primes]


def test_seal_style_chain_60_40_40_60():
    p = fhec.CKKSParams(N=2**13, q_bits=[60, 40, 40], p_bits=[60], word_bits=60)
    assert (p.levels, p.scale_bits, p.special_primes, p.base_limbs) == (2, 40, 1, 1)
    assert bits(p.moduli)[0] == 60 and bits(p.special_moduli) == [60]
    assert all(abs(math.log2(q) - 40) < 0.01 for q in p.moduli[1:])  # rescaling primes nearest the scale
    assert p.log_qp < 201  # 128-bit secure at N = 2^13 (218 bits allowed)


def test_lattigo_style_chain_with_a_wider_q0_gains_precision():
    """A 55-bit q_0 and a 61-bit P on 61-bit words: the decrypted product keeps the
    precision of its 40-bit scale (the short form ties q_0 and P to word_bits)."""
    p = fhec.CKKSParams(N=2**12, q_bits=[55, 40], p_bits=[61], word_bits=61, security=None)
    keys = fhec.keygen(p, seed=1)
    ev = fhec.Evaluator(keys)
    x = np.linspace(-1, 1, 64)
    y = fhec.decrypt(keys, ev.rescale(ev.multiply(fhec.encrypt(keys, x, seed=2), fhec.encrypt(keys, x, seed=3))))
    assert -math.log2(np.max(np.abs(y[:64] - x * x))) > 25


def test_bgv_levels_may_differ_in_size():
    p = fhec.BGVParams(N=2**13, q_bits=[40, 30, 35], p_bits=[45], word_bits=45)
    assert p.levels == 2 and bits(p.moduli) == [40, 30, 35] and bits(p.special_moduli) == [45]
    keys = fhec.keygen(p, seed=1)
    ev = fhec.Evaluator(keys)
    x = np.arange(100)
    ct = ev.mod_switch(ev.multiply(fhec.encrypt(keys, x, seed=2), fhec.encrypt(keys, x, seed=3)))
    assert np.array_equal(fhec.decrypt(keys, ct)[:100], (x * x) % p.plain_modulus)


def test_explicit_chains_with_several_base_and_special_primes():
    p = fhec.CKKSParams(N=2**10, q_bits=[30, 30, 28, 28, 28], p_bits=[31, 31], base_limbs=2, security=None)
    assert (p.levels, p.special_primes, p.scale_bits) == (3, 2, 28)
    assert bits(p.moduli[:2]) == [30, 30] and bits(p.special_moduli) == [31, 31]
    assert len(set(p.moduli + p.special_moduli)) == 7


def test_the_short_form_derives_the_same_primes_as_before():
    """Existing parameter sets keep their primes (files and fingerprints depend on them):
    the largest word-size NTT primes, P first, then q_0."""
    p = fhec.CKKSParams(N=2**13, levels=5, scale_bits=30, word_bits=32)
    assert p.special_moduli == (4294475777,) and p.moduli[0] == 4293918721
    assert p.q_bits is None and p.base_bits == (32,) and p.special_bits == (32,)


def test_chains_survive_the_json_literal():
    for p in (fhec.CKKSParams(N=2**13, q_bits=[60, 40, 40], p_bits=[60], word_bits=60),
              fhec.BGVParams(N=2**13, q_bits=[40, 30, 35], p_bits=[45], word_bits=45)):
        assert params_from_dict(params_to_dict(p)) == p


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(q_bits=[60, 40, 40], p_bits=[60]), fhec.WordSizeError, "word_bits=60"),
    (dict(q_bits=[60, 40, 50], p_bits=[60], word_bits=60), fhec.ParameterError, "every level prime 50 bits"),
    (dict(q_bits=[60, 40], levels=3, word_bits=60), fhec.ParameterError, "drop levels"),
    (dict(q_bits=[60, 40], p_bits=[], word_bits=60), fhec.ParameterError, "at least one special prime"),
    (dict(q_bits=[60, 40], p_bits=[60, 60], special_primes=3, word_bits=60), fhec.ParameterError, "drop special_primes"),
    (dict(q_bits="60,40"), fhec.ParameterError, "list of integers"),
    (dict(q_bits=[60, 40.5], word_bits=60), fhec.ParameterError, "q_bits"),
    (dict(), fhec.ParameterError, "give levels"),
    (dict(q_bits=[50] * 10, p_bits=[60], word_bits=60), fhec.InsecureParametersError, "exceeds 218 bits"),
])
def test_bad_chains_are_refused_with_the_fix(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        fhec.CKKSParams(N=2**13, **kwargs)


def test_bgv_chain_conflicts():
    with pytest.raises(fhec.ParameterError, match="not both"):
        fhec.BGVParams(N=2**13, q_bits=[40, 30], modulus_bits=30, word_bits=40)
    with pytest.raises(fhec.ParameterError, match="too large for 20-bit level primes"):
        fhec.BGVParams(N=2**13, q_bits=[40, 20], word_bits=40)


@pytest.mark.parametrize("t, limiting, at_most", [
    (536881153, "30-bit level primes", 25),         # 30 bits: the level primes (word_bits - 2) limit t
    (67127297, "30-bit level primes", 25),          # 27 bits: what the first message used to allow
])
def test_bgv_plain_modulus_limit_is_the_one_that_holds(t, limiting, at_most):
    # a 30-bit t was told "at most 27 bits (5 fewer than every ciphertext prime)" from q_0 and
    # P alone; a 27-bit t was then refused by the 30-bit level primes with "at most 25"
    with pytest.raises(fhec.ParameterError, match=f"too large for {limiting}: t may have at most {at_most} bits"):
        fhec.BGVParams(N=2**10, levels=2, plain_modulus=t, security=None)
    fhec.BGVParams(N=2**10, levels=2, plain_modulus=65537, security=None)  # 17 bits: within the limit


def test_bgv_plain_modulus_limited_by_q0_names_q0():
    # level primes of 40 bits, q_0 of 30: q_0 is the limit, and raising modulus_bits would not help
    with pytest.raises(fhec.ParameterError, match="30-bit q_0 primes: t may have at most 25 bits.*raise word_bits"):
        fhec.BGVParams(N=2**10, q_bits=[30, 40], p_bits=[40], word_bits=40, plain_modulus=536881153, security=None)
