"""Ring kernels: negacyclic NTT+INTT of one RNS limb in fhec beside SEAL, same run.

fhec's numba kernels (`fhec.ring.ntt`) run one limb of N words with 32-bit primes (F1's
word size; the vectorized path that serves every modulus below 2^50) and with 60-bit
primes (Shoup with a 128-bit high product, SEAL's usual size); SEAL's time
per limb comes from transforming a whole CKKS ciphertext (TenSEAL's bindings) divided by
its number of limbs. Both are single-threaded here. ratio = fhec / SEAL.
"""

from __future__ import annotations

import time

import numpy as np

from fhec.ring.ntt import intt_inplace, ntt_inplace
from fhec.ring.primes import ntt_primes

try:  # run as a script (python benchmarks/bench_ring.py) or loaded by benchmarks/run.py
    from seal_reference import seal_available, seal_ntt_intt_us
except ImportError:  # pragma: no cover - imported as benchmarks.bench_ring
    from benchmarks.seal_reference import seal_available, seal_ntt_intt_us


def fhec_ntt_intt_us(N: int, bits: int, repeats: int) -> float:
    """fhec's best NTT+INTT time in microseconds for one limb of a `bits`-bit prime."""
    moduli = ntt_primes(N, bits, 1)
    a = np.random.default_rng(0).integers(0, moduli[0], size=(1, N), dtype=np.uint64)
    ntt_inplace(a, moduli)  # warm-up: numba compile (or cache load) and twiddle tables
    intt_inplace(a, moduli)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        ntt_inplace(a, moduli)
        intt_inplace(a, moduli)
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


def run(quick: bool = False) -> list[dict]:
    """One row per (N, prime size): fhec and SEAL per-limb NTT+INTT times and their ratio."""
    repeats = 10 if quick else 50
    have_seal = seal_available()
    rows = []
    for log_n in (14, 16):
        N = 1 << log_n
        for bits in (32, 60):
            fhec_us = fhec_ntt_intt_us(N, bits, repeats)
            seal_us = seal_ntt_intt_us(N, bits, repeats=repeats) if have_seal else None
            rows.append(
                {
                    "group": "ring",
                    "name": f"NTT+INTT, one limb, N=2^{log_n}, {bits}-bit prime",
                    "fhec_us": round(fhec_us, 1),
                    "seal_us": None if seal_us is None else round(seal_us, 1),
                    "ratio": None if seal_us is None else round(fhec_us / seal_us, 2),
                }
            )
    return rows


if __name__ == "__main__":
    print(f"{'benchmark':<45} {'fhec us':>10} {'SEAL us':>10} {'ratio':>7}")
    for r in run():
        seal = "-" if r["seal_us"] is None else f"{r['seal_us']:.1f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"{r['name']:<45} {r['fhec_us']:>10.1f} {seal:>10} {ratio:>7}")
