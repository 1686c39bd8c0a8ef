"""Reference timings of ring kernels in Microsoft SEAL, through TenSEAL's bundled bindings.

TenSEAL exposes SEAL's `Evaluator.transform_to_ntt_inplace` / `transform_from_ntt_inplace`
on ciphertexts; CKKS ciphertexts are kept in NTT form, so one "from + to" round trip
runs an INTT and an NTT on every RNS limb of every ciphertext polynomial. Dividing by
(polynomials x limbs) gives SEAL's per-limb NTT+INTT time. SEAL's transforms are
single-threaded, so this compares with one fhec limb on one core.
"""

from __future__ import annotations

import time


def seal_available() -> bool:
    """True when TenSEAL (and so SEAL's Python bindings) can be imported."""
    try:
        import tenseal.sealapi  # noqa: F401
    except ImportError:
        return False
    return True


def seal_ntt_intt_us(N: int, bit_size: int, limbs: int = 3, repeats: int = 20) -> float:
    """SEAL's best per-limb NTT+INTT time in microseconds at ring degree N.

    Builds a CKKS context with ``limbs + 1`` primes of ``bit_size`` bits (the last one is
    SEAL's special prime, absent from fresh ciphertexts), encrypts one ciphertext and
    times ``transform_from_ntt_inplace`` + ``transform_to_ntt_inplace`` on it.
    Raises ImportError when TenSEAL is missing.
    """
    import tenseal.sealapi as s

    params = s.EncryptionParameters(s.SCHEME_TYPE.CKKS)
    params.set_poly_modulus_degree(N)
    params.set_coeff_modulus(s.CoeffModulus.Create(N, [bit_size] * (limbs + 1)))
    # Security is irrelevant for timing transforms, and N=2^14 with 60-bit primes would
    # otherwise be rejected.
    ctx = s.SEALContext(params, True, s.SEC_LEVEL_TYPE.NONE)
    keygen = s.KeyGenerator(ctx)
    pk = s.PublicKey()
    keygen.create_public_key(pk)
    encoder, encryptor, evaluator = s.CKKSEncoder(ctx), s.Encryptor(ctx, pk), s.Evaluator(ctx)
    pt = s.Plaintext()
    encoder.encode(1.0, 2.0 ** min(bit_size - 10, 40), pt)
    ct = s.Ciphertext(ctx)
    encryptor.encrypt(pt, ct)
    assert ct.is_ntt_form()
    transforms = ct.size() * ct.coeff_modulus_size()

    def round_trip():
        evaluator.transform_from_ntt_inplace(ct)
        evaluator.transform_to_ntt_inplace(ct)

    round_trip()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        round_trip()
        best = min(best, time.perf_counter() - t0)
    return best * 1e6 / transforms
