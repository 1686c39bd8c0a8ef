"""OF-Limb (Osiris §V): plaintext constants generated on chip from one stored limb.

The lowering is a real one: the executed streams must equal the eager evaluator on every
limb, and only plaintexts whose coefficients fit one limb may take it.
"""

import numpy as np
import pytest

import fhec
from fhec.backends.target import load_target
from fhec.errors import InternalError
from fhec.ir.limb import LimbOp, RVecClass
from fhec.ir.lowered import coefficient_digits, coefficient_limb, of_limb_prime, of_limb_seed
from fhec.verify_run import run_compiled_checked

OSIRIS_TINY = load_target("osiris-tiny")
STORED = OSIRIS_TINY.model_copy(update={"lowering": OSIRIS_TINY.lowering.model_copy(update={"plaintexts": "stored"})})


def _program(weight: float = 0.5, plain: bool = False, levels: int = 3):
    params = fhec.CKKSParams(N=2**9, levels=levels, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("diag", params)
    x = p.input("x")
    n = params.slots
    w = p.plain("w") if plain else weight * np.cos(np.arange(n))
    p.output("y", (x * w).rotate(1) + x)
    return p


def _count(compiled, op=None, cls=None):
    limb = compiled.lowered.limb
    if op is not None:
        return int(np.count_nonzero(limb.op == op))
    return int(np.count_nonzero(limb.rvec_class == cls))


def test_one_stored_limb_and_an_ntt_per_limb_instead_of_every_limb():
    p = _program()
    of = fhec.compile(p, OSIRIS_TINY)
    stored = fhec.compile(p, STORED)
    (recipe,) = of.lowered.constants.values()
    assert recipe.of_limb
    limbs = p.params.limbs_at(recipe.level)
    assert _count(stored, cls=RVecClass.CONST) == limbs
    assert _count(of, cls=RVecClass.CONST) == 1
    assert _count(of, op=LimbOp.NTT) == _count(stored, op=LimbOp.NTT) + limbs
    assert of.report.offchip_bytes["const_compulsory"] * limbs == stored.report.offchip_bytes["const_compulsory"]


@pytest.mark.parametrize("target", [OSIRIS_TINY, STORED])
def test_streams_equal_the_evaluator_on_every_limb(target):
    p = _program()
    c = fhec.compile(p, target)
    c.check()
    x = np.random.default_rng(0).uniform(-1, 1, p.params.slots)
    out = run_compiled_checked(c, {"x": x}, seed=1, check=True)  # every limb, bit for bit
    want = np.roll(x * 0.5 * np.cos(np.arange(p.params.slots)), -1) + x
    assert np.allclose(out["outputs"]["y"], want, atol=1e-3)


def test_each_node_generates_the_limbs_it_reads():
    """Two products by one constant (as every bootstrap multiplies by the same DFT
    diagonals): its stored limb is loaded data shared by both, but each product generates
    the NTT-form limbs itself, so none is kept on chip (or spilled) from one to the other;
    the streams still equal the evaluator on every limb."""
    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("twice", params)
    x = p.input("x")
    w = 0.5 * np.cos(np.arange(params.slots))
    p.output("y", x * w)
    p.output("z", x.rotate(1) * w)
    c = fhec.compile(p, OSIRIS_TINY)
    stored = fhec.compile(p, STORED)
    (recipe,) = c.lowered.constants.values()  # one constant, read by two products
    assert recipe.of_limb
    assert _count(c, cls=RVecClass.CONST) == 1
    assert _count(c, op=LimbOp.NTT) == _count(stored, op=LimbOp.NTT) + 2 * p.params.limbs_at(recipe.level)
    x_in = np.random.default_rng(2).uniform(-1, 1, params.slots)
    run_compiled_checked(c, {"x": x_in}, seed=1, check=True)  # every limb, bit for bit


def test_plaintexts_too_large_for_one_limb_are_stored_as_digits_and_stay_exact():
    # 2^28 x 100 > q0/2 (a 32-bit q0): one limb cannot hold the coefficients, two base-2^31 digits can
    p = _program(weight=100.0)
    c = fhec.compile(p, OSIRIS_TINY)
    (recipe,) = c.lowered.constants.values()
    assert recipe.of_limb and recipe.of_limb_digits == 2
    limbs = p.params.limbs_at(recipe.level)
    stored = fhec.compile(p, STORED)
    assert _count(c, cls=RVecClass.CONST) == 2 < limbs == _count(stored, cls=RVecClass.CONST)
    # the digits are weighted and summed in coefficient form (a BCONV term each), then one NTT per limb
    assert _count(c, op=LimbOp.NTT) == _count(stored, op=LimbOp.NTT) + limbs
    assert _count(c, op=LimbOp.BCONV) == _count(stored, op=LimbOp.BCONV) + 2 * limbs
    c.check()
    x = np.random.default_rng(1).uniform(-1, 1, c.program.params.slots)
    run_compiled_checked(c, {"x": x}, seed=1, check=True)  # every limb, bit for bit


def test_the_digit_count_follows_the_coefficient_bound():
    from fhec.ir.lowered import ConstRecipe
    from fhec.passes.lower import of_limb_digits

    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    bits = params.moduli[0].bit_length()
    # coefficients up to 2^28, 2^bits (> q0) and 2^(2 bits - 1) (> B q0, B = 2^(bits - 1))
    digits = [of_limb_digits(params, ConstRecipe(("value", np.full(4, 2.0 ** e)), 3, 2.0**28))
              for e in (0, bits - 28, 2 * bits - 29)]
    assert digits == [1, 2, 3]
    assert of_limb_digits(params, ConstRecipe(("plain", "w"), 3, 2.0**28)) == 0


def test_plain_inputs_are_unknown_at_compile_time_and_stay_stored():
    c = fhec.compile(_program(plain=True), OSIRIS_TINY)
    assert not any(r.of_limb for r in c.lowered.constants.values())


def test_a_target_without_the_flag_stores_every_limb():
    c = fhec.compile(_program(), "tiny")
    assert not any(r.of_limb for r in c.lowered.constants.values())


def test_the_bind_time_check_refuses_a_plaintext_that_does_not_fit():
    from fhec.schemes.encryption import encode

    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    q0 = of_limb_prime(params)
    small = encode(params, np.full(params.slots, 0.5), 3, 2.0**28)
    seed = coefficient_limb(small, q0)
    assert seed.shape == (params.N,)
    big = encode(params, np.full(params.slots, 100.0), 3, 2.0**28)
    with pytest.raises(InternalError, match="OF-Limb"):
        coefficient_limb(big, q0)
    # two digits hold it; one digit under a wrong (too small) bound cannot
    assert coefficient_digits(big, 2, 2.0**28 * 100 + 1, q0).shape == (2, params.N)
    with pytest.raises(InternalError, match="OF-Limb"):
        coefficient_digits(big, 1, 2.0**28 * 100 + 1, q0)


def test_a_q0_of_small_primes_seeds_from_the_widest_limb():
    # Osiris splits q_0 into two small primes: limb 0 (20 bits) would need two digits for
    # 2^26-sized coefficients; the widest prime of Q·P (a 32-bit special prime, not one of
    # the constant's limbs) holds them in one
    params = fhec.CKKSParams(N=2**9, q_bits=(20, 20, 28, 28, 28), base_limbs=2, word_bits=32, security=None)
    p = fhec.Program("diag", params)
    x = p.input("x")
    p.output("y", (x * (0.25 * np.cos(np.arange(params.slots)))).rotate(1) + x)
    c = fhec.compile(p, OSIRIS_TINY)
    (recipe,) = c.lowered.constants.values()
    assert recipe.of_limb and recipe.of_limb_digits == 1
    limb = c.lowered.limb
    (const,) = np.flatnonzero(limb.rvec_class == RVecClass.CONST)
    everything = params.moduli + params.special_moduli
    assert limb.rvec_mod[const] == of_limb_seed(params) == everything.index(max(everything)) >= params.max_limbs
    c.check()
    xs = np.random.default_rng(2).uniform(-1, 1, params.slots)
    run_compiled_checked(c, {"x": xs}, seed=2, check=True)  # every limb, bit for bit
