"""The papers' parameter sets that the Osiris rows compile are ones whose bootstrap
computes the right answer, not only the right operations: a row timed on a bootstrap that
would return zeros (set III's q_0 of two 40-bit primes did) is no measurement."""

from __future__ import annotations

import math

import pytest

from fhec.examples import bootstrap, helr, resnet20
from fhec.ir.he_bootstrap import execution_problem

SET_III = {
    "bootstrap row": lambda: bootstrap.osiris_set_iii("single"),
    "helr-1024, full packing": lambda: helr.osiris_params("single"),
    "helr-1024, sparse (the suite's rows)": lambda: helr.osiris_params("single", sparse_slots=512),
    "helr-1024 on F1 words": lambda: helr.osiris_params("single", helr.F1_WORDS),
}


@pytest.mark.parametrize("name", SET_III)
def test_set_iii_bootstraps_execute(name):
    params = SET_III[name]()
    assert execution_problem(params) is None
    # Osiris Table II: h = 1024, q_0 of 48 bits split into two primes; 8 levels after a bootstrap
    assert params.bootstrap.hamming_weight == 1024 and params.bootstrap.ephemeral_hamming_weight == 32
    assert round(sum(math.log2(q) for q in params.moduli_at(0))) == 48 and params.base_limbs == 2
    assert params.top_level - params.bootstrap.depth(params.N) == 8


@pytest.mark.parametrize("slots", [resnet20.SPARSE_SLOTS, None])
def test_set_iv_bootstraps_execute(slots):
    # h = 1024 against K = 16: ModRaise runs under the ephemeral secret of weight 32
    params = resnet20.set_iv(slots=slots)
    assert execution_problem(params) is None
    assert params.bootstrap.hamming_weight == 1024 and params.bootstrap.ephemeral_hamming_weight == 32
    assert round(sum(math.log2(q) for q in params.moduli_at(0))) == 48
    assert params.top_level - params.bootstrap.depth(params.N) == resnet20.L_EFF
