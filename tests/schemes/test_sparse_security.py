"""Sparse-secret parameter sets are checked against published estimates
(`fhec.schemes.sparse_security`, docs/security.md "Sparse secrets")."""

from __future__ import annotations

import pytest

import fhec
from fhec.errors import InsecureParametersError
from fhec.schemes.params import max_log_qp
from fhec.schemes.sparse_security import SPARSE_SECRET_ESTIMATES, check_sparse_secret, max_sparse_log_qp


def test_every_row_is_stricter_than_the_dense_standard():
    """A sparse secret is never more secure than the uniform ternary one: no row may allow
    more modulus than the HE standard does at its N."""
    for e in SPARSE_SECRET_ESTIMATES:
        assert e.log_qp <= max_log_qp(e.N, e.security), e.source
        assert e.source and e.h >= 1


@pytest.mark.parametrize("h, N, log_qp, ok", [
    (192, 2**16, 1553, True),      # Bossuat et al. 2021 / Lattigo N16QP1553H192H32
    (192, 2**16, 1546, True),      # Lattigo N16QP1546H192H32: smaller modulus, same h
    (192, 2**16, 1554, False),     # one bit more than the estimate
    (1024, 2**16, 1630, True),     # Osiris Table II sets III/IV
    (2048, 2**16, 1630, True),     # denser than a covered row
    (1024, 2**16, 1631, False),
    (64, 2**16, 900, False),       # sparser than any row
    (192, 2**15, 700, False),      # no row at this N: nothing is interpolated across N
])
def test_rows_cover_what_they_state(h, N, log_qp, ok):
    if ok:
        check_sparse_secret(h, N, log_qp, 128)
    else:
        with pytest.raises(InsecureParametersError, match="security=None"):
            check_sparse_secret(h, N, log_qp, 128)


def test_no_row_claims_more_than_its_security():
    assert max_sparse_log_qp(1024, 2**16, 128) == 1630
    assert max_sparse_log_qp(1024, 2**16, 192) is None


def _params(h, levels, security=128):
    config = fhec.BootstrapConfig(hamming_weight=h, cts_depth=2, stc_depth=2,
                                  evalmod=fhec.EvalModConfig(degree=15, double_angle=1))
    return fhec.CKKSParams(N=2**16, levels=levels, scale_bits=50, word_bits=60, special_primes=4,
                           security=security, bootstrap=config)


def test_ckks_params_accept_a_covered_sparse_set_and_refuse_others():
    p = _params(192, 15)  # log QP about 60 + 15·50 + 4·60 = 1050 bits
    assert p.secret_hamming_weight == 192 and p.log_qp <= 1553
    with pytest.raises(InsecureParametersError, match=r"h = 64 at N = 65536.*hamming_weight"):
        _params(64, 15)
    with pytest.raises(InsecureParametersError, match="exceeds 1553 bits"):
        _params(192, 27)   # about 1650 bits: within the dense standard (1747), beyond the h = 192 row
    assert _params(64, 15, security=None).secret_hamming_weight == 64
