"""Randomness and secret hygiene (issue 9): fresh streams by default, reproducible yet
never-repeated streams for an explicit seed, unbiased samplers, seed validation,
noise flooding, and no secret in any repr or public-only pickle."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import fhec
from fhec.evaluate import encrypt_inputs, make_keys, prepare, random_inputs
from fhec.ring.ntt import intt
from fhec.run import run_detailed
from fhec.ring.primes import ntt_primes
from fhec.schemes.encoding import ckks_decode
from fhec.ring.rns import to_rns
from fhec.schemes.sampling import Sampler, SeedCounters, _gaussian_cdt, _uniform_plan, check_seed, small_rns


def _vec(params, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, params.slots)


def _program(params):
    p = fhec.Program("two_inputs", params)
    x, y = p.input("x"), p.input("y")
    p.output("z", x * y + x.rotate(1))
    return p


# -- fresh randomness by default ------------------------------------------------------------


def test_default_encryptions_share_no_randomness(ckks_keys, ckks_params):
    x1, x2 = _vec(ckks_params, 1), _vec(ckks_params, 2)
    c1, c2 = fhec.encrypt(ckks_keys, x1), fhec.encrypt(ckks_keys, x2)
    # Secret-key encryptions are (−a·s + e + m, a): equal a parts would give c0 − c0' = m − m' + e − e'.
    assert np.count_nonzero(c1.data[1] == c2.data[1]) <= 2  # a chance equality has probability ~2^-19
    q0 = ckks_params.moduli[0]
    diff = (c1.data[0, :1].astype(object) - c2.data[0, :1].astype(object)) % q0
    coeffs = intt(np.array(diff, dtype=np.uint64), (q0,))[0].astype(object)
    centered = np.array([int(v) - q0 if v > q0 // 2 else int(v) for v in coeffs], dtype=object)
    leaked = ckks_decode(centered, ckks_params.N, ckks_params.scale_at(ckks_params.top_level)).real
    assert np.max(np.abs(leaked - (x1 - x2))) > 1.0  # the difference of the inputs does not come out


def test_default_bgv_encryptions_share_no_randomness(bgv_keys, bgv_params):
    x = np.arange(bgv_params.slots) % bgv_params.plain_modulus
    for keys in (bgv_keys, bgv_keys.public_only()):
        c1, c2 = fhec.encrypt(keys, x), fhec.encrypt(keys, x)
        assert np.count_nonzero(c1.data == c2.data) <= 4
        assert np.array_equal(fhec.decrypt(bgv_keys, c1), x)


def test_default_public_key_encryptions_differ(ckks_keys, ckks_params):
    pub = ckks_keys.public_only()
    x = _vec(ckks_params, 1)
    c1, c2 = fhec.encrypt(pub, x), fhec.encrypt(pub, x)
    assert np.count_nonzero(c1.data == c2.data) <= 4
    assert np.max(np.abs(fhec.decrypt(ckks_keys, c1) - x)) < 1e-3


def test_default_keys_and_inputs_are_fresh():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None)
    prepared = prepare(_program(params))
    k1, k2 = make_keys(prepared), make_keys(prepared)  # default arguments: fresh keys
    assert k1.key_id != k2.key_id and not np.array_equal(k1.secret_coeffs, k2.secret_coeffs)
    inputs = random_inputs(prepared, seed=0)
    a, b = encrypt_inputs(prepared, k1, inputs), encrypt_inputs(prepared, k1, inputs)
    for name in a:
        assert np.count_nonzero(a[name].data[1] == b[name].data[1]) <= 2


# -- explicit seeds: reproducible, never repeated ------------------------------------------


def test_explicit_seed_differs_per_call_and_reproduces_on_rerun(ckks_params):
    x = _vec(ckks_params, 1)
    first = fhec.keygen(ckks_params, seed=3)
    c1, c2 = fhec.encrypt(first, x, seed=7), fhec.encrypt(first, x, seed=7)
    assert np.count_nonzero(c1.data[1] == c2.data[1]) <= 2
    rerun = fhec.keygen(ckks_params, seed=3)  # a fresh derivation: what rerunning the script does
    assert rerun.key_id == first.key_id and np.array_equal(rerun.secret_coeffs, first.secret_coeffs)
    r1, r2 = fhec.encrypt(rerun, x, seed=7), fhec.encrypt(rerun, x, seed=7)
    assert np.array_equal(r1.data, c1.data) and np.array_equal(r2.data, c2.data)


def test_public_only_copy_shares_the_call_counter(ckks_params):
    keys = fhec.keygen(ckks_params, seed=3)
    x = _vec(ckks_params, 1)
    a = fhec.encrypt(keys.public_only(), x, seed=7)
    b = fhec.encrypt(keys.public_only(), x, seed=7)
    assert np.count_nonzero(a.data == b.data) <= 4


def test_seed_forms_are_distinct_streams(ckks_params):
    keys = fhec.keygen(ckks_params, seed=3)
    x = _vec(ckks_params, 1)
    a = fhec.encrypt(keys, x, seed=7)
    for other in (8, b"7", b"\x07"):
        assert np.count_nonzero(fhec.encrypt(keys, x, seed=other).data[1] == a.data[1]) <= 2
    again = fhec.keygen(ckks_params, seed=3)
    assert np.array_equal(fhec.encrypt(again, x, seed=np.int64(7)).data, a.data)  # numpy ints are ints


def test_keygen_parts_are_domain_separated(ckks_params):
    both = fhec.keygen(ckks_params, rotations=[1], seed=5)
    bv = fhec.keygen(ckks_params, seed=5, keyswitch="bv", relinearization=False)
    assert np.array_equal(both.secret_coeffs, bv.secret_coeffs)  # the secret ignores which keys follow
    assert np.array_equal(both.public[1], bv.public[1])
    relin_bv = both.key("relin", "bv").a[0]
    assert not np.array_equal(relin_bv, both.public[1])
    # keygen and encryption under the same seed draw different streams
    ct = fhec.encrypt(both, _vec(ckks_params, 1), seed=5)
    assert np.count_nonzero(ct.data[1] == both.public[1]) <= 2


def test_drivers_derive_identical_keys_and_ciphertexts_for_a_seed():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None)
    p = _program(params)
    inputs = random_inputs(p, seed=4)
    prepared = prepare(p)
    keys = make_keys(prepared, 9)
    eager = encrypt_inputs(prepared, keys, inputs, 9)
    compiled = run_detailed(p, inputs, seed=9)
    streams = fhec.compile(p, target="tiny").run_detailed(inputs, seed=9)
    for name, ct in eager.items():
        assert np.array_equal(compiled.inputs[name].data, ct.data)
        assert np.array_equal(streams["inputs"][name].data, ct.data)
    assert compiled.keys.key_id == keys.key_id == streams["keys"].key_id


def test_input_streams_do_not_depend_on_input_order():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None)
    prepared = prepare(_program(params))
    inputs = random_inputs(prepared, seed=4)
    a = encrypt_inputs(prepared, make_keys(prepared, 2), inputs, 5)
    b = encrypt_inputs(prepared, make_keys(prepared, 2), dict(reversed(list(inputs.items()))), 5)
    assert all(np.array_equal(a[n].data, b[n].data) for n in a)
    assert np.count_nonzero(a["x"].data[1] == a["y"].data[1]) <= 2


def test_seed_counters_survive_pickling_without_the_seed():
    counters = SeedCounters()
    assert [counters.next(7), counters.next(7), counters.next(b"7")] == [0, 1, 0]
    blob = pickle.dumps(counters)
    assert b"int:7" not in blob
    assert pickle.loads(blob).next(7) == 2


# -- samplers --------------------------------------------------------------------------------


def _chi_square(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(np.sum((counts - expected) ** 2 / expected))


@pytest.mark.parametrize("bits", [20, 30, 41, 59])
@pytest.mark.parametrize("side", ["below", "above"])
def test_uniform_mod_q_is_uniform(bits, side):
    # Primes just below 2^bits take the masking plan, just above 2^(bits−1) the reducing plan.
    q = ntt_primes(2**11, bits, 1)[0] if side == "below" else _prime_above(bits - 1)
    assert q.bit_length() == bits
    n, buckets = 2**16, 64
    v = Sampler.from_seed(1, f"uniform/{q}").uniform_mod(q, n)
    assert v.dtype == np.uint64 and v.shape == (n,) and int(v.max()) < q
    counts = np.bincount((v.astype(object) * buckets // q).astype(np.int64), minlength=buckets)
    # chi-square with 63 degrees of freedom: mean 63, sd 11.2; 6 sd above the mean
    assert _chi_square(counts, np.full(buckets, n / buckets)) < 63 + 6 * 11.2
    assert abs(float(np.mean(v.astype(np.float64))) / q - 0.5) < 6 * math.sqrt(1 / 12 / n)


def _prime_above(k: int) -> int:
    """The smallest prime q ≡ 1 (mod 2^12) above 2^k (k ≥ 12), so q/2^bits(q) ≈ 1/2."""
    from sympy import isprime

    q = 2**k + 1
    while not isprime(q):
        q += 2**12
    return q


def test_uniform_plans_cover_both_methods():
    assert _uniform_plan(ntt_primes(2**11, 40, 1)[0])[3] is False
    assert _uniform_plan(_prime_above(40))[3] is True


def test_uniform_small_modulus_frequencies():
    v = Sampler.from_seed(2, "small").uniform_mod(5, 50_000)
    counts = np.bincount(v.astype(np.int64), minlength=5)
    assert counts.size == 5 and _chi_square(counts, np.full(5, 10_000.0)) < 4 + 6 * math.sqrt(8)


def test_uniform_polynomial_rows_follow_their_moduli():
    moduli = tuple(ntt_primes(2**10, 30, 3))
    u = Sampler.from_seed(3, "poly").uniform(moduli, 2**10)
    assert u.shape == (3, 2**10) and all(int(u[i].max()) < q for i, q in enumerate(moduli))
    assert not np.array_equal(u[0], u[1])


def test_ternary_distribution():
    n = 60_000
    t = Sampler.from_seed(4, "ternary").ternary(n)
    assert t.dtype == np.int64 and set(np.unique(t)) == {-1, 0, 1}
    counts = np.array([np.count_nonzero(t == v) for v in (-1, 0, 1)])
    sd = math.sqrt(n * (1 / 3) * (2 / 3))
    assert np.all(np.abs(counts - n / 3) < 6 * sd)


def test_gaussian_moments_and_pmf():
    n, sigma = 200_000, fhec.schemes.params.ERROR_STDDEV
    g = Sampler.from_seed(5, "gaussian").gaussian(n)
    assert g.dtype == np.int64 and int(np.max(np.abs(g))) <= math.ceil(6 * sigma)
    assert abs(float(np.mean(g))) < 6 * sigma / math.sqrt(n)
    assert abs(float(np.std(g)) - sigma) < 0.03
    weights = np.exp(-np.arange(-20, 21) ** 2 / (2 * sigma**2))
    pmf = weights / weights.sum()
    for x in range(-3, 4):
        p = pmf[x + 20]
        assert abs(np.count_nonzero(g == x) / n - p) < 6 * math.sqrt(p * (1 - p) / n)


def test_gaussian_guide_table_matches_binary_search():
    table, _ = _gaussian_cdt(3.2)
    a = Sampler.from_seed(6, "g").gaussian(2**16)
    words = np.frombuffer(Sampler.from_seed(6, "g").random_bytes(8 * 2**16), dtype="<u8").astype(np.uint64)
    assert np.array_equal(a, np.searchsorted(table, words, side="right") - table.size // 2)
    # the table's masses match the truncated discrete Gaussian to ~2^-64
    masses = np.diff(np.concatenate([[0.0], table.astype(np.float64) / 2.0**64, [1.0]]))
    weights = np.exp(-np.arange(-20, 21) ** 2 / (2 * 3.2**2))
    assert np.max(np.abs(masses - weights / weights.sum())) < 1e-15


def test_rejection_shortfall_is_made_up_from_the_next_blocks():
    s = Sampler.from_seed(7, "collect")
    got = s._collect(100, 1, 1.0, lambda raw: raw[:10])  # every block yields only 10 values
    ref, expected = Sampler.from_seed(7, "collect"), []
    for _ in range(10):  # block r is asked for (need + 16 slack + 8 padding) bytes
        need = 100 - 10 * len(expected)
        expected.append(np.frombuffer(ref.random_bytes(need + 16 + 8), np.uint8)[:10])
    assert got.size == 100 and np.array_equal(got, np.concatenate(expected))


def test_small_rns_matches_to_rns():
    moduli = tuple(ntt_primes(2**10, 30, 3))
    s = Sampler.from_seed(10, "rns")
    cases = [s.gaussian(2**10), s.ternary(2**10), s.gaussian(2**10) * 65537,
             np.array([-(2**40), 3, -1, 0], dtype=np.int64)]  # the last one is not small: to_rns itself
    for c in cases:
        got = small_rns(c, moduli)
        assert got.dtype == np.uint64 and np.array_equal(got, to_rns(c, moduli))


def test_uniform_symmetric_range():
    v = Sampler.from_seed(8, "flood").uniform_symmetric(3, 20_000)
    assert int(v.min()) == -8 and int(v.max()) == 8 and np.unique(v).size == 17
    empty = Sampler.from_seed(8, "none")
    assert empty.uniform_mod(7, 0).dtype == np.uint64 and empty.uniform_mod(7, 0).size == 0
    assert empty.ternary(0).size == 0


def test_child_streams_are_reproducible_and_independent():
    root = Sampler.from_seed(9, "root")
    assert root.child("a").random_bytes(32) == Sampler.from_seed(9, "root").child("a").random_bytes(32)
    assert root.child("a").random_bytes(32) != root.child("b").random_bytes(32)
    s = Sampler.from_seed(9, "root")
    assert s.random_bytes(32) != s.random_bytes(32)  # the block counter advances
    assert Sampler.fresh().random_bytes(32) != Sampler.fresh().random_bytes(32)


# -- seed validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, shown",
    [("abc", "seed='abc'"), (-1, "seed=-1 is negative"), (True, "seed=True is a bool"), (1.5, "seed=1.5"),
     ([1], "seed=[1]"), (np.random.default_rng(0), "numpy Generator"),
     (b"", "seed=b'' is empty"), (bytearray(), "seed=b'' is empty")],  # empty bytes were accepted
)
def test_bad_seeds_raise_seed_error_naming_the_fix(bad, shown, ckks_params, ckks_keys):
    p = _program(fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None))
    calls = [
        lambda: fhec.keygen(ckks_params, seed=bad),
        lambda: fhec.encrypt(ckks_keys, [1.0], seed=bad),
        lambda: fhec.evaluate(p, random_inputs(p, seed=0), seed=bad),
        lambda: fhec.run(p, random_inputs(p, seed=0), seed=bad),
        lambda: random_inputs(p, seed=bad),
    ]
    for call in calls:
        with pytest.raises(fhec.SeedError, match="non-negative int") as info:
            call()
        assert shown in str(info.value) and "seed=None" in str(info.value)
    assert issubclass(fhec.SeedError, fhec.ParameterError)


def test_good_seeds_are_normalized():
    assert check_seed(np.uint32(5)) == 5 and type(check_seed(np.uint32(5))) is int
    assert check_seed(bytearray(b"ab")) == b"ab" and check_seed(None) is None
    s = Sampler.fresh()
    assert check_seed(s) is s


def test_sampler_rejects_a_malformed_key():
    with pytest.raises(fhec.SeedError, match="32 bytes"):
        Sampler(b"short", seeded=True)


# -- noise flooding -------------------------------------------------------------------------


def test_flood_bits_adds_bounded_fresh_noise(ckks_keys, ckks_params):
    x = _vec(ckks_params, 1)
    ct = fhec.encrypt(ckks_keys, x, seed=1)
    plain = fhec.decrypt(ckks_keys, ct)
    f1, f2 = fhec.decrypt(ckks_keys, ct, flood_bits=12), fhec.decrypt(ckks_keys, ct, flood_bits=12)
    assert not np.array_equal(f1, f2) and not np.array_equal(f1, plain)
    # each slot is a sum of N coefficients: |Δ| ≤ N · 2^b / scale
    bound = ckks_params.N * 2**12 / ct.scale
    assert np.max(np.abs(f1 - plain)) <= bound and np.max(np.abs(f1 - x)) < 1e-2


@pytest.mark.parametrize("bad", [-1, 30, 63, True, 2.5, "8"])
def test_flood_bits_out_of_range(bad, ckks_keys, ckks_params):
    ct = fhec.encrypt(ckks_keys, [1.0], seed=1)  # scale ≈ 2^30: at most 29 bits of flooding
    with pytest.raises(fhec.ParameterError, match="flood_bits"):
        fhec.decrypt(ckks_keys, ct, flood_bits=bad)


def test_flood_bits_on_bgv_is_refused(bgv_keys):
    ct = fhec.encrypt(bgv_keys, [1], seed=1)
    with pytest.raises(fhec.SchemeMismatchError, match="BGV decryption returns m mod t exactly"):
        fhec.decrypt(bgv_keys, ct, flood_bits=4)


# -- no secret in reprs or public outputs ---------------------------------------------------


def _secret_fragments(keys) -> list[str]:
    """Texts that would betray secret coefficients: NTT-domain words, coefficient runs."""
    words = [str(int(v)) for v in keys.secret_ntt[:, :32].ravel() if int(v) >= 10**6]
    s = keys.secret_coeffs
    runs = [repr(s[:12])[6:-1], np.array2string(s[:12])[1:-1], str(s.tolist()[:12])[1:-1]]
    return words + runs


def test_no_secret_in_any_repr(ckks_keys, ckks_params):
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None)
    p = _program(params)
    result = run_detailed(p, random_inputs(p, seed=1), seed=1)
    compiled = fhec.compile(p, target="tiny").run_detailed(random_inputs(p, seed=1), seed=1)
    ct = fhec.encrypt(ckks_keys, _vec(ckks_params, 1), seed=1)
    cases = {
        "keys": (ckks_keys, [ckks_keys, ckks_keys.public_only(), ckks_keys.key("relin", "hybrid"), ct,
                             fhec.encode(ckks_params, [1.0]), ckks_keys.encryptions, Sampler.fresh(),
                             fhec.Evaluator(ckks_keys)]),
        "run": (result.keys, [result, result.keys]),
        "compiled": (compiled["keys"], [compiled]),
    }
    for label, (keys, objects) in cases.items():
        fragments = _secret_fragments(keys)
        for obj in objects:
            for text in (repr(obj), str(obj), getattr(obj, "_repr_html_", lambda: "")()):
                leaked = [f for f in fragments if f in text]
                assert not leaked, f"{label}: {type(obj).__name__} repr shows secret values {leaked[:3]}"
    for small in (ckks_keys, ckks_keys.public_only(), ct, ckks_keys.key("relin", "bv")):
        assert len(repr(small)) < 300
    assert ckks_keys.fingerprint in repr(ckks_keys) and "hidden" in repr(ckks_keys)


def test_public_only_pickle_holds_no_secret(ckks_keys):
    blob = pickle.dumps(ckks_keys.public_only())
    assert ckks_keys.secret_ntt[0].tobytes()[:64] not in blob
    assert ckks_keys.secret_coeffs.tobytes()[:64] not in blob
    restored = pickle.loads(blob)
    assert restored.fingerprint == ckks_keys.fingerprint and restored.secret_ntt is None


def test_every_switching_key_uniform_half_is_the_expansion_of_its_public_seed():
    from fhec.schemes.keys import expand_uniform_half, keygen

    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, security=None)
    keys = keygen(params, rotations=[1, 3], seed=7)
    seeds = set()
    for (_, method), k in keys.switching.items():
        moduli = params.moduli if method == "bv" else params.moduli + params.special_moduli
        assert len(k.uniform_seed) == 32
        assert np.array_equal(expand_uniform_half(k.uniform_seed, moduli, params.N, k.digits), k.a)
        seeds.add(k.uniform_seed)
    assert len(seeds) == len(keys.switching)  # one seed per key
    assert "uniform_seed" not in repr(next(iter(keys.switching.values())))
