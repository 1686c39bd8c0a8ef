"""The named parameter sets (`fhec.CKKSParams.preset`, `fhec.schemes.presets`)."""

from __future__ import annotations

import pytest

import fhec
from fhec.errors import ParameterError
from fhec.schemes.presets import PRESETS


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_and_bootstraps(name):
    p = fhec.CKKSParams.preset(name)
    assert p.bootstrap is not None
    assert p.levels - p.bootstrap.depth(p.N) >= 3, "at least 3 usable levels after a bootstrap"
    assert ("INSECURE" in PRESETS[name].summary) == (p.security is None)


def test_presets_match_their_sources():
    toy = fhec.CKKSParams.preset("bootstrap-toy")
    assert toy.N == 2**12 and toy.security is None
    lattigo = fhec.CKKSParams.preset("lattigo-n16")
    # Lattigo N16QP1546H192H32: N = 2^16, h = 192, 25 primes of Q, 5 of P, log QP <= 1553
    assert (lattigo.N, lattigo.secret_hamming_weight, lattigo.max_limbs, lattigo.alpha) == (2**16, 192, 25, 5)
    assert lattigo.security == 128 and lattigo.log_qp <= 1553
    # Lattigo's 9 residual levels, less the level of fhec's scale-down in CoeffsToSlots
    assert lattigo.levels - lattigo.bootstrap.depth(lattigo.N) == 8
    f1 = fhec.CKKSParams.preset("f1-ckks-bootstrap")
    assert (f1.N, f1.max_limbs, f1.word_bits) == (2**14, 24, 32)  # F1 Table 3: L_max = 24, 32-bit words
    assert f1.bootstrap.slot_count(f1.N) == 1  # F1 runs non-packed bootstrapping
    packed = fhec.CKKSParams.preset("f1-ckks-bootstrap-packed")
    assert packed.max_limbs == 24 and packed.bootstrap.slot_count(packed.N) == packed.slots


def test_preset_overrides_and_unknown_names():
    p = fhec.CKKSParams.preset("f1-ckks-bootstrap", special_primes=4)
    assert p.alpha == 4
    with pytest.raises(ParameterError, match="bootstrap-toy"):
        fhec.CKKSParams.preset("lattigo")
