"""Sparse-secret encapsulation (`BootstrapConfig(ephemeral_hamming_weight=h)`): the
bootstrap switches its level-0 ciphertext to an ephemeral sparse secret before ModRaise
and back after, so that a dense (or denser) secret bootstraps with a small K. The small
sets here are insecure (security=None): test parameters only."""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.evaluate import prepare
from fhec.ir.he import HeOp
from fhec.ir.he_bootstrap import execution_problem, overflow_problem
from fhec.passes.he_rotations import key_requirements
from fhec.schemes.keys import TO_DENSE, TO_SPARSE
from fhec.testing import assert_matches_reference

EVALMOD = fhec.EvalModConfig(K=4, degree=15, double_angle=2, arcsine_degree=3, message_ratio_bits=2)


def params_of(ephemeral: int | None, N: int = 2**5, hamming_weight: int | None = None, *, base_limbs: int = 1,
              special_primes: int | None = None, **extra) -> fhec.CKKSParams:
    """A dense secret (hamming_weight=None) against K = 4: without encapsulation ModRaise's
    overflow (std √((2N/3 + 1)/12)) leaves [−K, K]."""
    cfg = fhec.BootstrapConfig(hamming_weight=hamming_weight, ephemeral_hamming_weight=ephemeral, evalmod=EVALMOD,
                               **extra)
    chain = {"levels": cfg.depth(N) + 1} if base_limbs == 1 else {  # q_0 of small primes, as Osiris's
        "q_bits": (20,) * base_limbs + (30,) * (cfg.depth(N) + 1), "base_limbs": base_limbs}
    if special_primes is not None:
        chain["special_primes"] = special_primes
    return fhec.CKKSParams(N=N, security=None, bootstrap=cfg, **chain)


def bootstrap_program(params: fhec.CKKSParams) -> fhec.Program:
    p = fhec.Program("encapsulated", params)
    p.output("y", p.input("x", level=1).bootstrap())
    return p


def test_a_dense_secret_overflows_k_without_encapsulation_and_not_with_it():
    assert "ephemeral_hamming_weight" in overflow_problem(params_of(None, N=2**8))
    assert execution_problem(params_of(4, N=2**8)) is None


def test_the_bootstrap_switches_to_the_ephemeral_secret_around_modraise_only():
    program = prepare(bootstrap_program(params_of(4)))
    ops = [n.op for n in program.nodes]
    raise_at = ops.index(HeOp.MOD_RAISE)
    switches = [i for i, op in enumerate(ops) if op is HeOp.SWITCH_SECRET]
    assert switches == [raise_at - 1, raise_at + 1]
    assert [program.nodes[i].attr("to") for i in switches] == ["sparse", "dense"]
    assert program.nodes[switches[0]].type.level == 0  # the switch to the sparse secret runs at q_0·P
    assert key_requirements(program).encapsulation
    assert not key_requirements(prepare(bootstrap_program(params_of(None, hamming_weight=4)))).encapsulation


@pytest.mark.parametrize("target", ["limbs", pytest.param("tiny", marks=pytest.mark.slow)])
@pytest.mark.parametrize("hoisting", [None, "double"])
def test_an_encapsulated_bootstrap_is_bit_identical_and_precise(target, hoisting):
    # every limb of every value agrees with the evaluator's, and the result with the input
    params = params_of(4, hoisting=hoisting)
    x = np.random.default_rng(3).uniform(-1, 1, params.slots)
    assert_matches_reference(bootstrap_program(params), {"x": x}, target=target, seed=3, rel_bits=6)


def test_a_q0_of_more_primes_than_a_digit_switches_to_the_sparse_secret_in_several_digits():
    # one special prime, two base primes: the level-0 switch has two digits, both kept
    params = params_of(4, base_limbs=2, special_primes=1)
    assert len(params.digit_groups(0)) == 2
    x = np.random.default_rng(6).uniform(-1, 1, params.slots)
    assert_matches_reference(bootstrap_program(params), {"x": x}, target="limbs", seed=6, rel_bits=6)


def test_a_dense_secret_bootstraps_at_n_2_8_only_with_encapsulation():
    # at N = 2^8 a dense secret's overflow reaches |I| > 4 on some coefficient: the
    # unencapsulated bootstrap is refused (PrecisionError), the encapsulated one is precise
    x = np.random.default_rng(5).uniform(-1, 1, 2**7)
    with pytest.warns(fhec.PrecisionWarning, match="ephemeral_hamming_weight"):
        unencapsulated = bootstrap_program(params_of(None, N=2**8))
    with pytest.warns(fhec.PrecisionWarning), pytest.raises(fhec.PrecisionError, match="ephemeral_hamming_weight"):
        fhec.evaluate(unencapsulated, {"x": x}, seed=5)
    y = fhec.evaluate(bootstrap_program(params_of(8, N=2**8)), {"x": x}, seed=5)["y"]
    assert np.max(np.abs(y - x)) < 2**-6


def test_encapsulation_keys_keep_only_the_level_0_rows_of_the_sparse_key():
    params = params_of(4)
    keys = fhec.keygen(params, seed=1, relinearization=False, encapsulation=True)
    down, up = keys.key(TO_SPARSE, "hybrid"), keys.key(TO_DENSE, "hybrid")
    base = params.base_limbs
    # an RLWE sample under a secret of weight 4 is only safe at a small modulus: q_0 and P rows
    assert not down.b[:, base:params.max_limbs].any() and not down.a[:, base:params.max_limbs].any()
    assert not down.b[1:].any() and down.b[0, :base].any() and down.b[0, params.max_limbs:].any()
    assert up.b[:, base:params.max_limbs].any()
    assert "encapsulation" in repr(keys) and keys.galois_elements == ()
    with pytest.raises(fhec.ParameterError, match="ephemeral_hamming_weight"):
        fhec.keygen(params_of(None, hamming_weight=4), seed=1, encapsulation=True)


def test_encapsulation_keys_survive_save_and_load(tmp_path):
    params = params_of(4)
    keys = fhec.keygen(params, seed=2, keyswitch="bv", encapsulation=True)  # encapsulation keys are hybrid anyway
    loaded = fhec.load(fhec.save(keys.public_only(), tmp_path / "keys.fhec"), params=params)
    assert set(loaded.switching) == set(keys.switching)
    for slot in ((TO_SPARSE, "hybrid"), (TO_DENSE, "hybrid")):
        assert np.array_equal(loaded.switching[slot].b, keys.switching[slot].b)


def test_an_ephemeral_weight_above_n_is_refused():
    with pytest.raises(fhec.ParameterError, match="ephemeral_hamming_weight=64"):
        params_of(64)


def test_a_secure_set_refuses_an_ephemeral_secret_sparser_than_lattigos():
    cfg = fhec.BootstrapConfig(hamming_weight=192, ephemeral_hamming_weight=16, cts_depth=4, stc_depth=3,
                               evalmod=fhec.EvalModConfig(degree=30, K=16, double_angle=3, message_ratio_bits=8))
    with pytest.raises(fhec.InsecureParametersError, match="ephemeral_hamming_weight=32"):
        fhec.CKKSParams.preset("lattigo-n16", bootstrap=cfg)
    assert fhec.CKKSParams.preset("lattigo-n16").bootstrap.ephemeral_hamming_weight == 32


@pytest.mark.slow
def test_a_compiled_encapsulated_bootstrap_saves_loads_and_runs_as_evaluated(tmp_path):
    params = params_of(4)
    program = bootstrap_program(params)
    x = np.random.default_rng(4).uniform(-1, 1, params.slots)
    loaded = fhec.load(fhec.save(fhec.compile(program, "tiny"), tmp_path / "boot.fhec"))
    assert np.array_equal(loaded.run({"x": x}, seed=4)["y"], fhec.evaluate(program, {"x": x}, seed=4)["y"])


def test_with_two_key_bases_the_sparse_key_exists_in_level_0s_basis_only():
    # the RLWE sample under the sparse secret lives at the smallest modulus it must: q_0 and
    # the residual basis's P (the main basis's larger P would only weaken it)
    cfg = fhec.BootstrapConfig(hamming_weight=None, ephemeral_hamming_weight=4, evalmod=EVALMOD)
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 1, security=None, bootstrap=cfg, special_primes=4,
                             residual_top=1, residual_special_primes=2)
    keys = fhec.keygen(params, seed=1, relinearization=False, encapsulation=True)
    assert {k for k in keys.switching if k[0] == TO_SPARSE} == {(TO_SPARSE, "hybrid", "residual")}
    assert {k for k in keys.switching if k[0] == TO_DENSE} == {(TO_DENSE, "hybrid"), (TO_DENSE, "hybrid", "residual")}
    x = np.random.default_rng(1).uniform(-1, 1, params.slots)
    assert_matches_reference(bootstrap_program(params), {"x": x}, target="limbs", seed=1, rel_bits=6)
