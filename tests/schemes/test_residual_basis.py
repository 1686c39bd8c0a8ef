"""A second key-switching basis for the residual levels (`residual_top`,
`residual_special_primes`; Osiris Table II: set IV's residual alpha = 5, bootstrapping's 14):
the literal's checks, the basis of each level, distinct keys, eager decryption against
numpy, compiled streams bit-identical to the eager evaluator on every limb, and the cost
model's counts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import fhec
from fhec.analysis.counts import hybrid_keyswitch_counts
from fhec.errors import FhecError, ParameterError
from fhec.passes.keyswitch_choice import keyswitch_cost
from fhec.schemes.keys import galois_for_rotation
from fhec.testing import assert_matches_reference
from fhec.verify_run import first_mismatch, run_checked

TWO = fhec.CKKSParams(N=2**6, levels=5, base_limbs=2, special_primes=3, security=None,
                      residual_top=2, residual_special_primes=1)
ONE = dataclasses.replace(TWO, residual_top=None, residual_special_primes=None)


@pytest.mark.parametrize("changes, message", [
    (dict(residual_top=2), "give both"),
    (dict(residual_special_primes=1), "give both"),
    (dict(residual_top=5, residual_special_primes=1), "below the top level"),
    (dict(residual_top=2, residual_special_primes=3), "below special_primes"),
    (dict(residual_top=2, residual_special_primes=0), "residual_special_primes"),
    (dict(residual_top=-1, residual_special_primes=1), "residual_top"),
    (dict(residual_top=1.5, residual_special_primes=1), "residual_top"),
])
def test_invalid_residual_bases_are_refused(changes, message):
    with pytest.raises(ParameterError, match=message) as err:
        fhec.CKKSParams(N=2**6, levels=5, base_limbs=2, special_primes=3, security=None, **changes)
    assert isinstance(err.value, FhecError)


def test_bgv_params_take_a_residual_basis_too():
    with pytest.raises(ParameterError, match="below special_primes"):
        fhec.BGVParams(N=2**6, levels=3, plain_modulus=257, special_primes=2, security=None,
                       residual_top=1, residual_special_primes=2)
    p = fhec.BGVParams(N=2**6, levels=3, plain_modulus=257, special_primes=2, security=None,
                       residual_top=1, residual_special_primes=1)
    assert p.special_moduli_at(1) == p.special_moduli[:1] and p.special_moduli_at(2) == p.special_moduli


def test_each_level_has_its_basis_and_the_default_is_one_basis():
    assert ONE.key_bases == ("main",) and all(ONE.alpha_at(l) == 3 for l in range(6))
    assert TWO.key_bases == ("main", "residual")
    assert [TWO.key_basis_at(l) for l in range(6)] == ["residual"] * 3 + ["main"] * 3
    assert TWO.special_moduli_at(2) == TWO.special_moduli[:1]  # a prefix: P' divides P
    assert TWO.special_moduli_at(3) == TWO.special_moduli
    assert TWO.digit_groups(2) == ((0,), (1,), (2,), (3,))
    assert TWO.digit_groups(3) == ((0, 1, 2), (3, 4))
    assert TWO.moduli == ONE.moduli and TWO.special_moduli == ONE.special_moduli
    assert TWO.fingerprint != ONE.fingerprint  # keys of one do not serve the other


def test_residual_keys_are_distinct_keys_of_their_basis():
    keys = fhec.keygen(TWO, rotations=[1], seed=3, keyswitch="hybrid")
    g = galois_for_rotation(TWO, 1)
    main, residual = keys.key(g, "hybrid", level=3), keys.key(g, "hybrid", level=2)
    assert main is keys.key(g, "hybrid") and residual.basis == "residual"
    # rows Q then the basis's P; digits the basis's groups at its top level
    assert main.b.shape == (3, TWO.max_limbs + 3, TWO.N)
    assert residual.b.shape == (len(TWO.digit_groups(2)), TWO.max_limbs + 1, TWO.N)
    assert not np.array_equal(main.a[0, :4], residual.a[0, :4])
    one = fhec.keygen(ONE, rotations=[1], seed=3, keyswitch="hybrid")
    # the main basis's keys come from the same streams as with one basis
    assert np.array_equal(one.key(g, "hybrid").b, main.b)
    assert one.key(g, "hybrid", level=2) is one.key(g, "hybrid")  # one basis: every level reads the same key


def _program(hoisting: str) -> fhec.Program:
    p = fhec.Program(f"two-bases-{hoisting}", TWO)
    x, y = p.input("x"), p.input("y")
    a = (x * y).rotate(1) + x  # level 5: the main basis
    b = (a * a).level_down(2)  # down to the residual levels
    c = (b * b).rotate(3) + b.rotate(1)  # relinearization and rotations on the residual basis
    rng = np.random.default_rng(7)
    diagonals = {k: rng.uniform(-1, 1, TWO.slots) for k in (0, 1, 2, 5)}
    p.output("a", a.rotate(1))
    p.output("c", c.linear_transform(diagonals, hoisting=hoisting))
    return p


def _inputs():
    rng = np.random.default_rng(0)
    return {n: rng.uniform(-0.5, 0.5, TWO.slots) for n in ("x", "y")}


@pytest.mark.parametrize("hoisting", ["none", "single", "double"])
def test_two_bases_decrypt_as_numpy_and_compile_bit_identically(hoisting):
    program = _program(hoisting)
    assert_matches_reference(program, _inputs(), seed=1)  # the eager evaluator against numpy
    run = run_checked(program, _inputs(), seed=1)  # every limb of every output against the eager run
    assert first_mismatch(run.lowered, run.ciphertexts, run.eager()) is None
    assert {"relin/hybrid", "relin/hybrid/residual"} <= set(run.lowered.key_sources)
    assert run.lowered.key_sources["relin/hybrid/residual"] == ("relin", "hybrid", "residual")
    assert_matches_reference(program, _inputs(), target="tiny", seed=1)  # scheduled streams executed


def test_a_residual_key_switch_costs_its_basis():
    L = TWO.limbs_at(2)
    alpha_1 = dataclasses.replace(ONE, special_primes=1)
    assert keyswitch_cost(TWO, 2, "hybrid") == keyswitch_cost(alpha_1, 2, "hybrid") != keyswitch_cost(ONE, 2, "hybrid")
    assert keyswitch_cost(TWO, 3, "hybrid") == keyswitch_cost(ONE, 3, "hybrid")
    p = fhec.Program("one-rotation", TWO)
    p.output("y", p.input("x", level=2).rotate(1))
    compiled = fhec.compile(p, "tiny", keyswitch="hybrid")
    want = sum(hybrid_keyswitch_counts(L, 1).values())
    p1 = fhec.Program("one-rotation", ONE)
    p1.output("y", p1.input("x", level=2).rotate(1))
    got_two = compiled.report.limb_instructions
    got_one = fhec.compile(p1, "tiny", keyswitch="hybrid").report.limb_instructions
    assert got_one - got_two == sum(hybrid_keyswitch_counts(L, 3).values()) - want


def test_two_basis_key_sets_round_trip(tmp_path):
    params = fhec.load(fhec.save(TWO, tmp_path / "p.fhec"))
    assert (params.residual_top, params.residual_special_primes) == (2, 1) and params.fingerprint == TWO.fingerprint
    keys = fhec.keygen(TWO, rotations=[1], seed=2, keyswitch="hybrid")
    loaded = fhec.load(fhec.save(keys.public_only(), tmp_path / "k.fhec"))
    assert set(loaded.switching) == set(keys.switching)
    for slot, key in keys.switching.items():
        assert loaded.switching[slot].basis == key.basis
        assert np.array_equal(loaded.switching[slot].b, key.b) and np.array_equal(loaded.switching[slot].a, key.a)


@pytest.mark.parametrize("hoisting", ["double", "none"])
def test_a_bootstrap_on_the_main_basis_feeds_the_residual_levels(hoisting):
    # Osiris's layout (Table II): the bootstrap's key switches on the large basis, the
    # levels it returns on the small one; the compiled run is bit-identical to the eager one
    config = fhec.BootstrapConfig(hamming_weight=4, hoisting=hoisting, evalmod=fhec.EvalModConfig(
        K=4, degree=15, double_angle=2, arcsine_degree=3, message_ratio_bits=2))
    depth = config.depth(2**5)
    params = fhec.CKKSParams(N=2**5, levels=depth + 2, special_primes=2, security=None, bootstrap=config,
                             residual_top=2, residual_special_primes=1)
    p = fhec.Program("boot-two-bases", params)
    y = p.input("x", level=1).bootstrap()
    p.output("y", (y * y).rotate(1))  # a relinearization and a rotation at the residual levels
    run = run_checked(p, {"x": np.random.default_rng(4).uniform(-0.5, 0.5, params.slots)}, seed=1)
    assert first_mismatch(run.lowered, run.ciphertexts, run.eager()) is None
    names = set(run.lowered.key_sources)
    assert "relin/hybrid/residual" in names and any(n.endswith("/hybrid") and "galois" in n for n in names)
    assert_matches_reference(p, target="limbs", seed=1, rel_bits=8)
