"""Each limb emitter, executed, is bit-identical to the eager evaluator's op."""

import numpy as np
import pytest

import fhec
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.schemes.keys import RELIN, galois_for_rotation
from fhec.sim.bind import loaded_values
from fhec.sim.functional import execute

CASES = {
    # min_precision_bits=None: BV rotations are garbage at 32-bit words, but their
    # lowering must still be bit-identical to the evaluator's
    "ckks": fhec.CKKSParams(N=2**6, levels=3, scale_bits=28, word_bits=32, special_primes=2, security=None,
                            min_precision_bits=None),
    "bgv": fhec.BGVParams(N=2**6, levels=3, plain_modulus=257, word_bits=32, special_primes=2, security=None),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def setup(request):
    params = CASES[request.param]
    keys = fhec.keygen(params, rotations=[1, 5], seed=3, keyswitch="both", conjugation=True)
    rng = np.random.default_rng(1)
    if params.scheme == "ckks":
        vals = [rng.uniform(-1, 1, params.slots) for _ in range(2)]
    else:
        vals = [rng.integers(0, params.plain_modulus, params.slots) for _ in range(2)]
    cts = {"x": fhec.encrypt(keys, vals[0], seed=5), "y": fhec.encrypt(keys, vals[1], seed=6)}
    return params, keys, cts


def _run(params, keys, cts, build, key_sources, plaintexts=None):
    em = LimbEmitter(params)
    ins = {n: em.input_rvecs(n, ct.parts, ct.limbs) for n, ct in cts.items()}
    outs = build(em, ins)
    prog, final = finalize_outputs(em, outs)
    res = execute(prog, loaded_values(prog, cts, keys, key_sources, plaintexts or {}))
    return {n: np.stack([[res[int(r)] for r in row] for row in ids]) for n, ids in final.items()}, prog


@pytest.mark.parametrize("method", ["bv", "hybrid"])
def test_multiply_relinearize(setup, method):
    params, keys, cts = setup
    ev = fhec.Evaluator(keys, keyswitch=method)
    want = ev.multiply(cts["x"], cts["y"])
    got, prog = _run(
        params, keys, cts,
        lambda em, i: {"z": em.relinearize(em.multiply(i["x"], i["y"]), "relin", params.top_level, method)},
        {"relin": (RELIN, method)},
    )
    assert np.array_equal(got["z"], want.data)


@pytest.mark.parametrize("method", ["bv", "hybrid"])
@pytest.mark.parametrize("k", [1, 5])
def test_rotate(setup, method, k):
    params, keys, cts = setup
    want = fhec.Evaluator(keys, keyswitch=method).rotate(cts["x"], k)
    g = galois_for_rotation(params, k)
    got, _ = _run(
        params, keys, cts, lambda em, i: {"r": em.rotate(i["x"], g, "rot", params.top_level, method)}, {"rot": (g, method)}
    )
    assert np.array_equal(got["r"], want.data)


def test_divide_last_and_linear_ops(setup):
    params, keys, cts = setup
    ev = fhec.Evaluator(keys)
    t = params.plain_modulus if params.scheme == "bgv" else None
    # the limbs' division ignores the scale; the evaluator refuses to rescale a fresh
    # ciphertext (nothing of its value would be left), so give it a product's scale
    x = cts["x"]
    want_div = ev.mod_switch(x) if t is not None else ev.rescale(x.with_(scale=x.scale**2))
    want_lin = ev.sub(ev.add(cts["x"], cts["y"]), ev.multiply(cts["y"], -3))
    got, _ = _run(
        params, keys, cts,
        lambda em, i: {
            "d": em.divide_last(i["x"], t),
            "l": em.add(em.add(i["x"], i["y"]), em.mul_integer(i["y"], -3), subtract=True),
            "n": em.negate(i["x"]),
            "pass": i["x"],
        },
        {},
    )
    assert np.array_equal(got["d"], want_div.data)
    assert np.array_equal(got["l"], want_lin.data)
    assert np.array_equal(got["n"], ev.negate(cts["x"]).data)
    assert np.array_equal(got["pass"], cts["x"].data)


def test_plaintext_ops(setup):
    params, keys, cts = setup
    ev = fhec.Evaluator(keys)
    vals = np.arange(params.slots) % 7
    pt = fhec.encode(params, vals)
    got, prog = _run(
        params, keys, cts,
        lambda em, i: {
            "m": em.mul_plain(i["x"], em.const_rvecs("w", params.max_limbs)),
            "a": em.add_plain(i["x"], em.const_rvecs("w", params.max_limbs)),
        },
        {}, {"w": pt},
    )
    assert np.array_equal(got["m"], ev.multiply_plain(cts["x"], pt).data)
    assert np.array_equal(got["a"], ev.add_plain(cts["x"], pt).data)


def test_bv_keyswitch_matches_f1_hand_count(setup):
    """F1 §2.4: a BV key switch at L limbs is L INTT + L(L−1) NTT + 2L² mul + 2L(L−1) add."""
    params, keys, cts = setup
    em = LimbEmitter(params)
    L = params.max_limbs
    x = em.input_rvecs("x", 2, L)
    em.key_switch(x[1], "k", params.top_level, "bv")
    s = em.builder.build().stats()["ops"]
    assert (s["INTT"], s["NTT"], s["MUL"], s["ADD"]) == (L, L * (L - 1), 2 * L * L, 2 * L * (L - 1))
    assert sum(s.values()) == L + L * (L - 1) + 2 * L * L + 2 * L * (L - 1)


@pytest.mark.parametrize("alpha", [1, 2, 3])
@pytest.mark.parametrize("scheme", ["ckks", "bgv"])
@pytest.mark.parametrize("level", [0, 2, 5])
def test_hybrid_keyswitch_counts_match_the_formula(alpha, scheme, level):
    from fhec.analysis.counts import hybrid_keyswitch_counts

    cls = fhec.CKKSParams if scheme == "ckks" else fhec.BGVParams
    kw = dict(scale_bits=28) if scheme == "ckks" else dict(plain_modulus=257)
    params = cls(N=2**6, levels=5, word_bits=32, special_primes=alpha, security=None, **kw)
    em = LimbEmitter(params)
    L = params.limbs_at(level)
    x = em.input_rvecs("x", 2, L)
    em.key_switch(x[1], "k", level, "hybrid")
    s = em.builder.build().stats()["ops"]
    want = hybrid_keyswitch_counts(L, alpha, bgv=scheme == "bgv")
    assert {k: s[k] for k in want} == want
