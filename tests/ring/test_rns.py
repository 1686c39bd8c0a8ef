"""RNS composition, fast base conversion and exact division against Python-int arithmetic."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fhec.ring.ntt import intt, ntt
from fhec.ring.primes import ntt_primes
from fhec.ring.rns import centered, crt_compose, divide_by_dropped, fast_base_convert, product, to_rns

N = 16


def _random_ints(rng, bound, n=N):
    return np.array([int(rng.integers(0, 2**62)) * int(rng.integers(0, 2**62)) % bound for _ in range(n)], dtype=object)


@pytest.mark.parametrize("bits", [20, 32, 45, 62])
def test_crt_round_trip(bits):
    moduli = ntt_primes(N, bits, 3)
    Q = product(moduli)
    x = _random_ints(np.random.default_rng(bits), Q)
    assert list(crt_compose(to_rns(x, moduli), moduli)) == list(x)


def test_to_rns_of_negative_int64():
    moduli = ntt_primes(N, 30, 2)
    x = np.arange(-8, 8, dtype=np.int64)
    r = to_rns(x, moduli)
    for i, q in enumerate(moduli):
        assert [int(v) for v in r[i]] == [int(v) % q for v in x]


@given(st.integers(0, 2**32), st.sampled_from([(30, 2), (40, 3), (60, 2)]))
def test_fast_base_convert_is_exact_up_to_small_multiple(seed, spec):
    bits, k = spec
    src = ntt_primes(N, bits, k)
    dst = ntt_primes(N, bits, 2, src)
    B = product(src)
    x = _random_ints(np.random.default_rng(seed), B)
    out = fast_base_convert(to_rns(x, src), src, dst)
    for j, d in enumerate(dst):
        for c in range(N):
            # centered terms: x + u·B with -k/2 - 1 < u <= k/2
            diffs = [(int(out[j, c]) - int(x[c]) - u * B) % d for u in range(-(k // 2) - 1, k // 2 + 1)]
            assert 0 in diffs


@given(st.integers(0, 2**32), st.sampled_from([1, 2]), st.sampled_from([None, 65537]))
def test_divide_by_dropped_matches_integer_division(seed, ndrop, t):
    rng = np.random.default_rng(seed)
    keep = ntt_primes(N, 40, 3)
    drop = ntt_primes(N, 40, ndrop, keep)
    allm = keep + drop
    Qall, D, Qk = product(allm), product(drop), product(keep)
    x = _random_ints(rng, Qall)
    got = crt_compose(intt(divide_by_dropped(ntt(to_rns(x, allm), allm), keep, drop, t), keep), keep)
    for c in range(N):
        xc, g = int(x[c]), int(got[c])
        if t is None:
            # x / D rounded to nearest, up to the fast-conversion overflow |u| <= len(drop)/2 + 1
            nearest = (2 * xc + D) // (2 * D)
            assert any((nearest - u - g) % Qk == 0 for u in range(-(ndrop // 2) - 1, ndrop // 2 + 2))
        else:
            # (x + t·v)/D with v ≡ −x·t^{-1} mod D: g·D ≡ x (mod t) and |g − x/D| small
            assert (g * D - xc) % t == 0 or any(((g - u * t) * D - xc) % t == 0 for u in range(ndrop))
            approx = centered(np.array([g - xc // D], dtype=object), Qk)[0]
            assert abs(approx) <= t * (ndrop + 1)
