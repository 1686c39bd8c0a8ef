"""Fixtures of the fuzz suite: one small program, compiled once, gives valid samples of
every file format (program JSON, report JSON, binary and text streams, manifest)."""

import numpy as np
import pytest

import fhec


@pytest.fixture(scope="session")
def small_program():
    params = fhec.CKKSParams(N=2**10, levels=2, security=None)
    p = fhec.Program("fuzz", params)
    x, w = p.input("x"), p.plain("w")
    p.output("y", (x * w).rotate(1) + x)
    return p


@pytest.fixture(scope="session")
def compiled(small_program):
    return fhec.compile(small_program, target="tiny")


@pytest.fixture(scope="session")
def keys_and_ct():
    """Keys, a ciphertext and an evaluator (CKKS and BGV): also warms up the numba
    kernels, so that their one-time compilation never counts against the hang guard."""
    ckks = fhec.CKKSParams(N=2**10, levels=2, security=None)
    bgv = fhec.BGVParams(N=2**10, levels=2, plain_modulus=12289, security=None)
    out = {}
    for name, params, values in (("ckks", ckks, np.linspace(-1, 1, 8)), ("bgv", bgv, np.arange(8))):
        keys = fhec.keygen(params, rotations=[1], seed=1)
        ev = fhec.Evaluator(keys)
        ct = fhec.encrypt(keys, values, seed=2)
        ev.rotate(ev.multiply(ct, ct), 1)
        fhec.decrypt(keys, ct)
        out[name] = (params, keys, ev, ct)
    return out
