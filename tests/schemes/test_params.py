"""Parameter validation: security table, ring degree, word size, moduli."""

import math

import numpy as np

import pytest

import fhec
from fhec.schemes.params import max_log_qp

HE_STANDARD_128 = {2**10: 27, 2**11: 54, 2**12: 109, 2**13: 218, 2**14: 438, 2**15: 881, 2**16: 1747, 2**17: 3523}


@pytest.mark.parametrize("N,bound", sorted(HE_STANDARD_128.items()))
def test_security_table_128(N, bound):
    assert max_log_qp(N, 128) == bound


def test_issue_example_is_secure_and_counts_special_primes():
    p = fhec.CKKSParams(N=2**13, levels=5, scale_bits=30, word_bits=32)
    assert p.slots == 2**12 and p.levels == 5
    assert p.log_qp == pytest.approx(sum(math.log2(q) for q in p.moduli + p.special_moduli))
    assert len(p.special_moduli) == 1 and p.log_qp <= 218


def test_insecure_is_refused_with_the_fix():
    with pytest.raises(fhec.InsecureParametersError, match=r"exceeds 218 bits.*security=None"):
        fhec.CKKSParams(N=2**13, levels=7, scale_bits=30, word_bits=32)


def test_insecure_allowed_only_explicitly():
    p = fhec.CKKSParams(N=2**13, levels=7, scale_bits=30, word_bits=32, security=None)
    assert p.log_qp > 218


@pytest.mark.parametrize("security,bound", [(192, 152), (256, 118)])
def test_other_security_levels(security, bound):
    assert max_log_qp(2**13, security) == bound
    with pytest.raises(fhec.InsecureParametersError):
        fhec.CKKSParams(N=2**13, levels=4, scale_bits=30, word_bits=32, security=256)


@pytest.mark.parametrize("N", [1000, 3, 2**18, 0])
def test_ring_degree_must_be_power_of_two(N):
    with pytest.raises(fhec.InvalidRingDegreeError, match="power of two"):
        fhec.CKKSParams(N=N, levels=1, security=None)


@pytest.mark.parametrize("w", [16, 63, 64])
def test_word_size_range(w):
    with pytest.raises(fhec.WordSizeError, match="word_bits"):
        fhec.CKKSParams(N=2**10, levels=1, scale_bits=14, word_bits=w, security=None)


def test_plain_modulus_must_be_1_mod_2n():
    with pytest.raises(fhec.InvalidModulusError, match=r"≡ 1 mod 2N"):
        fhec.BGVParams(N=2**12, levels=2, plain_modulus=65539, security=None)
    with pytest.raises(fhec.InvalidModulusError, match="not prime"):
        fhec.BGVParams(N=2**4, levels=2, plain_modulus=33 * 32 + 1, security=None)


@pytest.mark.parametrize("word_bits", [20, 28, 32, 45, 62])
def test_primes_are_ntt_friendly_distinct_and_fit_the_word(word_bits):
    # scale_bits >= 20 (the smallest prime's size): at 20-bit words q_0 takes two primes
    p = fhec.CKKSParams(N=2**10, levels=3, scale_bits=max(20, min(word_bits, 30) - 2), word_bits=word_bits,
                        base_limbs=2, security=None)
    allq = p.moduli + p.special_moduli
    assert len(set(allq)) == len(allq)
    for q in allq:
        assert q % (2 * p.N) == 1 and q < 2**word_bits


def test_scales_stay_close_to_nominal():
    p = fhec.CKKSParams(N=2**14, levels=16, scale_bits=30, word_bits=32, security=None)
    assert all(abs(math.log2(s) - 30) < 0.01 for s in p.scales)
    # The defining relation of the per-level scales.
    for lvl in range(1, p.levels + 1):
        assert p.scale_at(lvl - 1) == pytest.approx(p.scale_at(lvl) ** 2 / p.moduli[p.limbs_at(lvl) - 1], rel=1e-12)


def test_parameters_are_deterministic_and_immutable():
    a = fhec.BGVParams(N=2**13, levels=3)
    b = fhec.BGVParams(N=2**13, levels=3)
    assert a.moduli == b.moduli and a.fingerprint == b.fingerprint
    with pytest.raises(Exception):
        a.N = 5


def test_issue_bgv_example_is_secure_and_exact():
    p = fhec.BGVParams(N=2**13, levels=5, plain_modulus=65537, word_bits=32)
    assert p.log_qp <= 218 and p.slots == 2**13
    keys = fhec.keygen(p, rotations=[1, -3], seed=7)
    x = np.arange(p.slots) % 65537
    ev = fhec.Evaluator(keys)
    out = fhec.decrypt(keys, ev.rotate(ev.multiply(fhec.encrypt(keys, x, seed=1), fhec.encrypt(keys, x, seed=2)), 1))
    assert np.array_equal(out, np.roll((x * x % 65537).reshape(2, -1), -1, axis=1).ravel())


def test_bgv_modulus_bits_range():
    with pytest.raises(fhec.ParameterError, match="modulus_bits"):
        fhec.BGVParams(N=2**10, levels=1, plain_modulus=40961, modulus_bits=40, security=None)
    with pytest.raises(fhec.ParameterError, match="too large"):
        fhec.BGVParams(N=2**10, levels=1, plain_modulus=40961, modulus_bits=20, security=None)


@pytest.mark.parametrize("scheme", ["ckks", "bgv"])
def test_absurd_level_counts_are_refused_without_building_a_chain(scheme):
    # found by the thorough fuzz profile: BGV sized a tuple of `levels` entries first
    # (a MemoryError at 2**31, the machine's memory at 2**63)
    make = {"ckks": lambda lv: fhec.CKKSParams(N=1024, levels=lv, scale_bits=30, word_bits=32, security=None),
            "bgv": lambda lv: fhec.BGVParams(N=1024, levels=lv, plain_modulus=12289, security=None)}[scheme]
    for levels in (2**31, 2**63):
        with pytest.raises(fhec.ParameterError, match="more than fhec supports"):
            make(levels)


@pytest.mark.parametrize("kwargs", [
    dict(N=2**14, levels=30, scale_bits=32, word_bits=32),
    dict(N=2**12, levels=60, scale_bits=32, word_bits=32),
])
def test_a_scale_that_runs_away_upward_is_a_parameter_error(kwargs):
    # scale_bits = word_bits: the level primes lie below 2^scale_bits, so each rescale
    # divides by too little and the scale grows until the float overflowed (a raw
    # OverflowError from the prime search instead of the fix).
    with pytest.raises(fhec.ParameterError, match="Lower scale_bits"):
        fhec.CKKSParams(**kwargs, security=None)
    with pytest.raises(fhec.ParameterError):
        fhec.CKKSParams.for_program(40, precision_bits=30)


@pytest.mark.parametrize("scale_bits", [10, 18, 19])
def test_a_scale_below_the_smallest_prime_is_refused(scale_bits):
    # primes lie above 2^19: at scale 2^18 the level-1 prime was 2^19, and x * x and
    # x * 0.5 landed on different level-0 scales (ScaleMismatchError in an auto program,
    # advising rescale='auto')
    with pytest.raises(fhec.ParameterError, match=r"scale_bits = \d+ .* between 20 and 32.*above 2\^19"):
        fhec.CKKSParams(N=2**6, levels=1, scale_bits=scale_bits, security=None)


@pytest.mark.parametrize("precision_bits", [6, 10])
def test_for_program_never_picks_a_scale_below_the_smallest_prime(precision_bits):
    params = fhec.CKKSParams.for_program(1, precision_bits=precision_bits, security=None, explain=False)
    assert params.scale_bits >= 20
    p = fhec.Program("e", fhec.AutoParams(precision_bits=precision_bits, security=None))
    x = p.input("x", bound=3)
    p.output("y", x * x - x * 0.5)  # refused with a ScaleMismatchError at the chosen 2^18
    assert p.params.scale_bits >= 20


@pytest.mark.parametrize("kwargs, advice, wrong", [
    # too few primes near 2^20 at N = 2^15: the scale falls; lowering it (the old advice) cannot help
    (dict(N=2**15, levels=10, scale_bits=20), r"Raise scale_bits \(now 20\) toward word_bits", "Lower"),
    # q_bits set the scale; "Lower scale_bits (now 60) below word_bits (now 60)" named a value never typed
    (dict(N=2**10, q_bits=[60, 60, 60, 60], word_bits=60), r"q_bits's level primes \(now 60 bits.*q_bits=\[60, 40, 40, 40\]",
     "scale_bits (now"),
    # already below word_bits: the fix is a smaller scale or a larger q_0, not "below word_bits"
    (dict(N=2**10, levels=8, scale_bits=31, word_bits=32), r"Lower scale_bits \(now 31\), raise base_limbs", "below word_bits"),
])
def test_a_scale_chain_failure_advises_what_its_cause_needs(kwargs, advice, wrong):
    with pytest.raises(fhec.ParameterError, match=advice) as info:
        fhec.CKKSParams(**kwargs, security=None)
    assert wrong not in str(info.value)


def test_for_program_says_when_no_choice_keeps_a_bit():
    # depth 40 in 32-bit words: every candidate's estimated error outgrows the values, so
    # "the best reached was -44.3 bits" read as a precision; it now says none kept a bit
    with pytest.raises(fhec.ParameterError, match="none kept a single bit") as info:
        fhec.CKKSParams.for_program(40, precision_bits=30)
    assert "reached was -" not in str(info.value)


def test_an_unknown_parameter_name_is_a_parameter_error_naming_the_closest():
    # a typo raised the dataclass's raw TypeError ("unexpected keyword argument")
    with pytest.raises(fhec.ParameterError, match="no parameter 'levle': did you mean 'levels'"):
        fhec.CKKSParams(N=2**10, levle=3, security=None)
    with pytest.raises(fhec.ParameterError, match="BGVParams has no parameter 'bootstrap': it is a CKKSParams"):
        fhec.BGVParams(N=2**10, levels=3, security=None, bootstrap=None)
    assert fhec.CKKSParams(N=2**10, levels=3, security=None).levels == 3


def test_a_q0_beyond_float_range_is_a_parameter_set_not_an_overflow():
    """32 base primes of 32 bits: q_0 ~ 2^1024 is past float range; the chain is built
    (the scale never nears it) where computing the limit raised a raw OverflowError."""
    params = fhec.CKKSParams(N=1024, levels=2, base_limbs=32, security=None)
    assert len(params.moduli) == 34
