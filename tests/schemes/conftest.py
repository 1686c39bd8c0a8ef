"""Small parameter sets and keys shared by the scheme tests (module-scoped: keygen is the slow part)."""

import pytest

import fhec


@pytest.fixture(scope="session")
def ckks_params():
    return fhec.CKKSParams(N=2**11, levels=4, scale_bits=30, word_bits=32, security=None)


@pytest.fixture(scope="session")
def ckks_keys(ckks_params):
    return fhec.keygen(ckks_params, rotations=[1, -1, 3, 5, 100, -7], seed=11, conjugation=True, keyswitch="both")


@pytest.fixture(scope="session")
def bgv_params():
    return fhec.BGVParams(N=2**10, levels=3, plain_modulus=40961, word_bits=48, security=None)


@pytest.fixture(scope="session")
def bgv_keys(bgv_params):
    return fhec.keygen(bgv_params, rotations=[1, -1, 3, 17], seed=5, conjugation=True, keyswitch="both")
