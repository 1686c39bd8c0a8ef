"""Prime derivation: `NearestPrimes` picks exactly what a naive outward scan picks."""

import sympy
import pytest

import fhec
from fhec.ring.primes import MIN_WORD_BITS, NearestPrimes, nearest_ntt_prime


def naive_nearest(N, target, exclude, max_bits):
    """The definition: scan k0, k0-1, k0+1, k0-2, ... for an unused prime in range."""
    step = 2 * N
    k0 = round((target - 1) / step)
    for d in range(0, 1 << 16):
        for k in ((k0 - d, k0 + d) if d else (k0,)):
            q = k * step + 1
            if (1 << (MIN_WORD_BITS - 1)) < q < (1 << max_bits) and q not in exclude and sympy.isprime(q):
                return q
    raise AssertionError("none")


@pytest.mark.parametrize("N,bits,targets", [
    (2**4, 22, [2.0**20] * 40 + [2.0**21 - 5, 2.0**19 + 3]),
    (2**10, 32, [2.0**30 * (1 + i / 1000) for i in range(25)]),
    (2**13, 40, [2.0**35] * 30),
])
def test_nearest_primes_match_the_naive_scan(N, bits, targets):
    search, used = NearestPrimes(N, bits, {2**20 + 1}), {2**20 + 1}
    for target in targets:
        expected = naive_nearest(N, target, used, bits)
        assert search.take(target) == expected
        used.add(expected)


def test_nearest_ntt_prime_and_exhaustion():
    q = nearest_ntt_prime(2**10, 2.0**30, set(), 32)
    assert q % 2**11 == 1 and sympy.isprime(q)
    search = NearestPrimes(2**12, MIN_WORD_BITS, ())  # only a handful of 20-bit primes ≡ 1 mod 2^13
    with pytest.raises(fhec.ParameterError, match="no unused prime"):
        for _ in range(1000):
            search.take(2.0**19)


def test_thousands_of_levels_derive_distinct_primes():
    # Near-linear derivation (quadratic before): 5,000 levels take about a second.
    p = fhec.CKKSParams(N=2**10, levels=5000, word_bits=40, scale_bits=30, security=None)
    assert len(set(p.moduli)) == len(p.moduli) == 5001
