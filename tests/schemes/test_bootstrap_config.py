"""`fhec.BootstrapConfig` and `CKKSParams(..., bootstrap=...)`: validation and derived facts."""

from __future__ import annotations

import pytest

import fhec
from fhec.errors import InsecureParametersError, ParameterError
from fhec.schemes.bootstrap_config import split_log


def _params(**kw):
    cfg = kw.pop("bootstrap", fhec.BootstrapConfig())
    return fhec.CKKSParams(N=2**8, levels=kw.pop("levels", 20), security=None, bootstrap=cfg, **kw)


def test_default_split_and_depth():
    cfg = fhec.BootstrapConfig()
    assert cfg.log_radices(2**12, "cts") == (4, 4, 3)  # 2^11 slots in 3 levels, larger radices first
    assert cfg.log_radices(2**12, "stc") == (4, 4, 3)
    # CtS 3 + its scale-down 1 + Chebyshev degree 31 (5) + 3 double angles + arcsine degree 7 (3) + StC 3
    assert cfg.depth(2**12) == 3 + 1 + 5 + 3 + 3 + 3
    assert split_log(16, 6) == (3, 3, 3, 3, 2, 2)


def test_composite_scaling_doubles_evalmod_levels_plus_the_exit():
    one = fhec.EvalModConfig(K=7, arcsine_degree=3, double_angle=2)
    two = fhec.EvalModConfig(K=7, arcsine_degree=3, double_angle=2, scale_primes=2)
    assert fhec.BootstrapConfig(evalmod=one).evalmod_depth == 5 + 2 + 2
    # two primes per step, and one rescale back to the one-prime scale
    assert fhec.BootstrapConfig(evalmod=two).evalmod_depth == 2 * 9 + 1
    with pytest.raises(ParameterError, match="scale_primes"):
        fhec.EvalModConfig(scale_primes=3)


def test_simfhe_radices_are_expressible():
    cfg = fhec.BootstrapConfig(cts_log_radices=(2, 2, 3, 3, 3, 3), stc_log_radices=(3, 3, 3, 3, 2, 2),
                               hamming_weight=None, evalmod=fhec.EvalModConfig(degree=63, double_angle=2))
    assert cfg.log_radices(2**17, "cts") == (2, 2, 3, 3, 3, 3)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"cts_depth": 0}, "cts_depth"),
        ({"cts_log_radices": ()}, "cts_log_radices"),
        ({"evalmod": {"method": "sin", "double_angle": 2}}, "double angle"),
        ({"evalmod": {"arcsine_degree": 4}}, "arcsine_degree"),
        ({"hamming_weight": 0}, "hamming_weight"),
        ({"typo": 1}, "typo"),
    ],
)
def test_bad_configs_are_parameter_errors(kw, match):
    with pytest.raises(ParameterError, match=match):
        fhec.BootstrapConfig(**kw)


def test_params_check_the_config_against_n_and_levels():
    with pytest.raises(ParameterError, match="sum to"):
        _params(bootstrap=fhec.BootstrapConfig(cts_log_radices=(3, 3)))  # 2^7 slots need 7
    with pytest.raises(ParameterError, match="power of two"):
        _params(bootstrap=fhec.BootstrapConfig(slots=12))
    with pytest.raises(ParameterError, match="uses 18 levels"):
        _params(levels=10)
    with pytest.raises(ParameterError, match="must be a fhec.BootstrapConfig"):
        _params(bootstrap={"cts_depth": 2})


def test_sparse_secret_needs_security_none():
    with pytest.raises(InsecureParametersError, match="security=None"):
        fhec.CKKSParams(N=2**14, levels=16, bootstrap=fhec.BootstrapConfig(hamming_weight=64))


def test_sparse_secret_has_h_nonzero_coefficients():
    p = _params(bootstrap=fhec.BootstrapConfig(hamming_weight=12))
    keys = fhec.keygen(p, seed=3)
    assert int((keys.secret_coeffs != 0).sum()) == 12
    assert set(keys.secret_coeffs.tolist()) <= {-1, 0, 1}
    assert p.fingerprint != fhec.CKKSParams(N=2**8, levels=20, security=None).fingerprint
