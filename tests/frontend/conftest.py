"""Small parameter sets shared by the DSL tests (insecure on purpose: fast)."""

import pytest

import fhec


@pytest.fixture(scope="session")
def ckks():
    """CKKS N=64 (32 slots), 3 levels, two-prime q_0 for headroom."""
    return fhec.CKKSParams(N=2**6, levels=3, scale_bits=30, word_bits=32, base_limbs=2, security=None)


@pytest.fixture(scope="session")
def bgv():
    """BGV N=64 (two rows of 32), t = 257, 4 levels."""
    return fhec.BGVParams(N=2**6, levels=4, plain_modulus=257, security=None)


@pytest.fixture(params=["ckks", "bgv"])
def any_params(request, ckks, bgv):
    return {"ckks": ckks, "bgv": bgv}[request.param]
