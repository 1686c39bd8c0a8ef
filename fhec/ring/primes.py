"""NTT-friendly primes: q prime with q ≡ 1 (mod 2N), so that Z_q has a primitive
2N-th root of unity and X^N + 1 splits completely (negacyclic NTT).

Every generator here is deterministic: the same arguments give the same primes, so a
parameter set is reproducible from its literal (N, levels, word size...).
"""

from __future__ import annotations

from functools import lru_cache

import sympy

from fhec.errors import InvalidModulusError, ParameterError

MIN_WORD_BITS = 20
MAX_WORD_BITS = 62


def is_ntt_prime(q: int, N: int) -> bool:
    """True when q is prime and q ≡ 1 (mod 2N)."""
    return q > 2 and q % (2 * N) == 1 and bool(sympy.isprime(q))


def check_ntt_prime(q: int, N: int) -> None:
    """Raise `InvalidModulusError` unless q is an NTT-friendly prime for N."""
    if q % (2 * N) != 1:
        raise InvalidModulusError(
            f"modulus {q} is not ≡ 1 mod 2N = {2 * N}; the negacyclic NTT needs a primitive "
            f"2N-th root of unity. Pick a prime of the form k·{2 * N} + 1 "
            f"(fhec.ring.primes.ntt_primes({N}, bits, count) lists some)."
        )
    if not sympy.isprime(q):
        raise InvalidModulusError(f"modulus {q} is not prime; RNS limbs must be distinct primes.")


@lru_cache(maxsize=None)
def ntt_primes(N: int, bits: int, count: int, exclude: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The `count` largest primes q < 2**bits with q ≡ 1 (mod 2N), skipping `exclude`.

    Raises `ParameterError` when fewer than `count` such primes exist above 2**(bits-1)
    (a prime of `bits` bits must really have that many bits, or the word size lies).
    """
    step = 2 * N
    found: list[int] = []
    skip = set(exclude)
    q = ((1 << bits) - 1) // step * step + 1
    if q >= 1 << bits:
        q -= step
    while len(found) < count and q > 1 << (bits - 1):
        if q not in skip and sympy.isprime(q):
            found.append(q)
        q -= step
    if len(found) < count:
        raise ParameterError(
            f"only {len(found)} primes of {bits} bits are ≡ 1 mod 2N = {step}, {count} needed; "
            f"use a larger word size or a smaller N."
        )
    return tuple(found)


def nearest_ntt_prime(N: int, target: float, exclude: set[int] | frozenset[int], max_bits: int) -> int:
    """The prime q ≡ 1 (mod 2N), q < 2**max_bits, not in `exclude`, nearest to `target`.

    Used to pick CKKS rescaling primes that keep the scale close to 2**scale_bits.
    """
    step = 2 * N
    k0 = round((target - 1) / step)
    for d in range(0, 1 << 22):
        for k in ((k0 - d, k0 + d) if d else (k0,)):
            q = k * step + 1
            if (1 << (MIN_WORD_BITS - 1)) < q < (1 << max_bits) and q not in exclude and sympy.isprime(q):
                return q
    raise ParameterError(f"no prime ≡ 1 mod {step} near {target:.3g} below 2^{max_bits}")
