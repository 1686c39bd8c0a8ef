"""CKKS and BGV operations in fhec beside the same operations in SEAL (TenSEAL's bindings), one run.

Sizes follow issue #2: CKKS at N=2^14 with 8 limbs and N=2^16 with 22 limbs, BGV at
N=2^14. Both libraries get the same number of ciphertext limbs of the same bit sizes
plus one special prime. SEAL in TenSEAL has no BGV, so the BGV rows compare with SEAL's
BFV, which runs the same multiply/relinearize and row rotation kernels.

fhec also runs a 32-bit-word CKKS configuration (F1's word size) beside the 60-bit one:
same limb count, narrower primes, the fast path of `fhec.ring.modarith`.

Each number is the best of several runs after a warm-up (numba compiles on first call).
Both libraries run on one thread.
"""

from __future__ import annotations

import time

import numpy as np

import fhec


def best_of(fn, repeats: int) -> float:
    """Best wall time of `fn()` in microseconds, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


def _fhec_ckks(N, levels, scale_bits, word_bits, repeats):
    params = fhec.CKKSParams(N=N, levels=levels, scale_bits=scale_bits, word_bits=word_bits, security=128)
    keys = fhec.keygen(params, rotations=[1], seed=1)
    pub = keys.public_only()
    ev = fhec.Evaluator(keys)
    x = np.random.default_rng(0).uniform(-1, 1, params.slots)
    ct = fhec.encrypt(keys, x, seed=2)
    return {
        "encrypt": best_of(lambda: fhec.encrypt(pub, x, seed=3), repeats),
        "decrypt": best_of(lambda: fhec.decrypt(keys, ct), repeats),
        "multiply+relinearize+rescale": best_of(lambda: ev.rescale(ev.multiply(ct, ct)), repeats),
        "rotate": best_of(lambda: ev.rotate(ct, 1), repeats),
    }


def _seal_setup(scheme, N, bit_sizes, t=None):
    """A SEAL context with public, relinearization and Galois keys (no security check:
    fhec's side applies the HE-standard bound)."""
    import tenseal.sealapi as s

    p = s.EncryptionParameters(scheme)
    p.set_poly_modulus_degree(N)
    p.set_coeff_modulus(s.CoeffModulus.Create(N, bit_sizes))
    if t is not None:
        p.set_plain_modulus(s.Modulus(t))
    ctx = s.SEALContext(p, True, s.SEC_LEVEL_TYPE.NONE)
    kg = s.KeyGenerator(ctx)
    pk, rk, gk = s.PublicKey(), s.RelinKeys(), s.GaloisKeys()
    kg.create_public_key(pk)
    kg.create_relin_keys(rk)
    kg.create_galois_keys(gk)
    return s, ctx, kg, pk, rk, gk


def _seal_ckks(N, bit_sizes, scale_bits, repeats):
    import tenseal.sealapi as sealapi

    s, ctx, kg, pk, rk, gk = _seal_setup(sealapi.SCHEME_TYPE.CKKS, N, bit_sizes)
    enc, dec = s.Encryptor(ctx, pk), s.Decryptor(ctx, kg.secret_key())
    ev, encoder = s.Evaluator(ctx), s.CKKSEncoder(ctx)
    scale = 2.0**scale_bits
    x = list(np.random.default_rng(0).uniform(-1, 1, N // 2))

    def encrypt():
        pt = s.Plaintext()
        encoder.encode(x, scale, pt)
        ct = s.Ciphertext(ctx)
        enc.encrypt(pt, ct)
        return ct

    ct = encrypt()

    def decrypt():
        pt = s.Plaintext()
        dec.decrypt(ct, pt)
        return encoder.decode_double(pt)

    def mul():
        out = s.Ciphertext(ctx)
        ev.multiply(ct, ct, out)
        ev.relinearize_inplace(out, rk)
        ev.rescale_to_next_inplace(out)

    def rot():
        out = s.Ciphertext(ctx)
        ev.rotate_vector(ct, 1, gk, out)

    return {
        "encrypt": best_of(encrypt, repeats),
        "decrypt": best_of(decrypt, repeats),
        "multiply+relinearize+rescale": best_of(mul, repeats),
        "rotate": best_of(rot, repeats),
    }


def _fhec_bgv(N, levels, word_bits, t, repeats):
    params = fhec.BGVParams(N=N, levels=levels, plain_modulus=t, word_bits=word_bits, modulus_bits=word_bits)
    keys = fhec.keygen(params, rotations=[1], seed=1)
    ev = fhec.Evaluator(keys)
    ct = fhec.encrypt(keys, np.arange(params.slots) % t, seed=2)
    return {
        "multiply+relinearize": best_of(lambda: ev.multiply(ct, ct), repeats),
        "rotate": best_of(lambda: ev.rotate(ct, 1), repeats),
    }


def _seal_bfv(N, bit_sizes, t, repeats):
    import tenseal.sealapi as sealapi

    s, ctx, kg, pk, rk, gk = _seal_setup(sealapi.SCHEME_TYPE.BFV, N, bit_sizes, t)
    enc, ev, encoder = s.Encryptor(ctx, pk), s.Evaluator(ctx), s.BatchEncoder(ctx)
    pt = s.Plaintext()
    encoder.encode([int(v) for v in np.arange(N) % t], pt)
    ct = s.Ciphertext(ctx)
    enc.encrypt(pt, ct)

    def mul():
        out = s.Ciphertext(ctx)
        ev.multiply(ct, ct, out)
        ev.relinearize_inplace(out, rk)

    def rot():
        out = s.Ciphertext(ctx)
        ev.rotate_rows(ct, 1, gk, out)

    return {"multiply+relinearize": best_of(mul, repeats), "rotate": best_of(rot, repeats)}


def _rows(config, fhec_times, seal_times, seal_label="SEAL"):
    rows = []
    for op, f in fhec_times.items():
        s = seal_times.get(op) if seal_times else None
        rows.append(
            {
                "group": "schemes",
                "name": f"{config}: {op}",
                "fhec_us": round(f, 1),
                "seal_us": None if s is None else round(s, 1),
                "ratio": None if s is None else round(f / s, 2),
                "reference": seal_label,
            }
        )
    return rows


def run(quick: bool = False) -> list[dict]:
    """Measure every configuration; returns one dict per (configuration, operation).

    fhec runs on one thread, like SEAL here, so the ratios compare single-core work.
    """
    import numba

    numba.set_num_threads(1)
    reps = 2 if quick else 5
    rows = []
    # CKKS N=2^14, 8 limbs: 60-bit base, 7 × 40-bit levels, one 60-bit special prime (SEAL's layout).
    seal = _seal_ckks(2**14, [60] + [40] * 7 + [60], 40, reps)
    rows += _rows("CKKS N=2^14, 8 limbs, 60-bit words", _fhec_ckks(2**14, 7, 40, 60, reps), seal)
    rows += _rows("CKKS N=2^14, 8 limbs, 32-bit words (F1)", _fhec_ckks(2**14, 7, 30, 32, reps), seal)
    if not quick:
        seal = _seal_ckks(2**16, [60] + [50] * 21 + [60], 50, 2)
        rows += _rows("CKKS N=2^16, 22 limbs, 60-bit words", _fhec_ckks(2**16, 21, 50, 60, 2), seal)
    # BGV N=2^14, 8 limbs of 48 bits (432 bits with P: within the 438-bit bound), t = 65537; SEAL side is BFV with the same moduli.
    rows += _rows(
        "BGV N=2^14, 8 limbs, t=65537", _fhec_bgv(2**14, 7, 48, 65537, reps), _seal_bfv(2**14, [48] * 9, 65537, reps),
        "SEAL BFV",
    )
    return rows


if __name__ == "__main__":
    for r in run():
        print(f"{r['name']:<60} fhec {r['fhec_us']:>10.0f} us   {r['reference']} {r['seal_us'] or 0:>10.0f} us   ratio {r['ratio']}")
