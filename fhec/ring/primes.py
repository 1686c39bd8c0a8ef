"""NTT-friendly primes: q prime with q ≡ 1 (mod 2N), so that Z_q has a primitive
2N-th root of unity and X^N + 1 splits completely (negacyclic NTT).

Every generator here is deterministic: the same arguments give the same primes, so a
parameter set is reproducible from its literal (N, levels, word size...).
"""

from __future__ import annotations

import bisect
from functools import lru_cache
from typing import Iterable

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
    """The prime q ≡ 1 (mod 2N), q < 2**max_bits, not in `exclude`, nearest to `target`
    (of two equally near, the smaller); primes must lie above 2**(MIN_WORD_BITS - 1).

    Used to pick CKKS rescaling primes that keep the scale close to 2**scale_bits.
    Raises `ParameterError` when no such prime exists.
    """
    return NearestPrimes(N, max_bits, exclude).take(target)


class NearestPrimes:
    """Repeated `nearest_ntt_prime` queries that consume the primes they return.

    A CKKS chain of L levels asks L times for the unused prime nearest a target that
    barely moves, so a fresh outward scan would pass over all earlier picks every time
    (L² primality tests). This object remembers the candidates k (q = k·2N + 1) it has
    already tested, as one explored interval ``[lo, hi]`` of k holding a sorted list of
    the unused primes in it; a query only tests candidates outside that interval, so L
    queries cost about as many primality tests as the primes they return need.
    """

    def __init__(self, N: int, max_bits: int, exclude: Iterable[int] = ()):
        self._step = 2 * N
        self._exclude = set(exclude)
        # k bounds from the prime range (2^(MIN_WORD_BITS-1), 2^max_bits).
        self._k_min = ((1 << (MIN_WORD_BITS - 1)) - 1) // self._step + 1
        self._k_max = ((1 << max_bits) - 2) // self._step
        self._max_bits = max_bits
        self._lo = self._hi = None  # explored k interval, inclusive
        self._free: list[int] = []  # sorted k of unused primes inside it

    def _usable(self, k: int) -> bool:
        q = k * self._step + 1
        return self._k_min <= k <= self._k_max and q not in self._exclude and bool(sympy.isprime(q))

    def _explore(self, lo: int, hi: int) -> None:
        """Grow the explored interval to cover [lo, hi] (clamped to the valid k range)."""
        lo, hi = max(lo, self._k_min - 1), min(hi, self._k_max + 1)
        if self._lo is None:
            self._lo, self._hi = lo, lo - 1
        if lo < self._lo:
            self._free[:0] = [k for k in range(lo, self._lo) if self._usable(k)]
            self._lo = lo
        if hi > self._hi:
            self._free.extend(k for k in range(self._hi + 1, hi + 1) if self._usable(k))
            self._hi = hi

    def take(self, target: float) -> int:
        """The unused prime nearest `target` (ties: the smaller); it is then used."""
        k0 = round((target - 1) / self._step)
        radius = 16
        while True:
            self._explore(k0 - radius, k0 + radius)
            at = bisect.bisect_left(self._free, k0)
            near = [k for k in self._free[max(0, at - 1): at + 1]]
            if near:
                best = min(near, key=lambda k: (abs(k - k0), k))
                # It is the answer once every candidate as near as it has been tested.
                d = abs(best - k0)
                covered_lo = self._lo <= max(k0 - d, self._k_min)
                covered_hi = self._hi >= min(k0 + d, self._k_max)
                if covered_lo and covered_hi:
                    self._free.remove(best)
                    return best * self._step + 1
            elif self._lo <= self._k_min and self._hi >= self._k_max:
                raise ParameterError(
                    f"no unused prime ≡ 1 mod {self._step} near {target:.3g} below 2^{self._max_bits}; "
                    f"use fewer levels, a larger word size or a smaller N."
                )
            radius *= 2
