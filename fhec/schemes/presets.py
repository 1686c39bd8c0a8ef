"""Named CKKS parameter sets shipped with fhec: ``fhec.CKKSParams.preset(name)``.

Each preset is a literal (the keyword arguments of `CKKSParams`, with a
`BootstrapConfig`) plus where it comes from. `CKKSParams.preset` builds it through the
ordinary constructor, so every check (security included) applies to presets too.

| name | N | security | what it is |
|---|---|---|---|
| ``bootstrap-toy`` | 2^12 | **None: insecure** | small enough for tests and examples |
| ``lattigo-n16`` | 2^16 | 128 (h = 192) | the shape of Lattigo's default set N16QP1546H192H32 |
| ``f1-ckks-bootstrap`` | 2^14 | **None: insecure** | F1's CKKS bootstrapping (Table 3): non-packed (one slot), L_max = 24 limbs of 32-bit words |
| ``f1-ckks-bootstrap-packed`` | 2^14 | **None: insecure** | the same chain, fully packed (2^13 slots): not what F1 runs |

docs/bootstrapping.md ("Named parameter sets") gives the derivation of each field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from fhec.errors import ParameterError
from fhec.schemes.bootstrap_config import BootstrapConfig, EvalModConfig


@dataclass(frozen=True)
class Preset:
    """A named parameter set: `literal()` gives the `CKKSParams` keyword arguments."""

    name: str
    summary: str
    source: str
    literal: Callable[[], dict[str, Any]]


def _toy() -> dict[str, Any]:
    # A very sparse secret (h = 16) keeps |I| small, so K = 7 and a message ratio of 2^2
    # suffice, and a degree-3 arcsine removes the sine's cubic error. EvalMod runs at a
    # two-prime scale (composite scaling): at one 30-bit prime per level its rounding caps
    # the result near 10.8 bits, at two it gives ~13.9 (docs/bootstrapping.md, "Precision").
    # Its depth plus 3 usable levels.
    config = BootstrapConfig(hamming_weight=16,
                             evalmod=EvalModConfig(K=7, message_ratio_bits=2, arcsine_degree=3, double_angle=2,
                                                   scale_primes=2))
    return dict(N=2**12, levels=config.depth(2**12) + 3, scale_bits=30, word_bits=32, special_primes=3,
                security=None, bootstrap=config)


def _lattigo_n16() -> dict[str, Any]:
    # Lattigo N16QP1546H192H32: 24 levels (9 residual, StC 3, EvalMod 8: Chebyshev degree 30
    # of the scaled cosine, K = 16, 3 double angles; CtS 4), 5 special primes, h = 192, and
    # ModRaise under an ephemeral secret of h = 32 (the "H32": sparse-secret encapsulation;
    # under h = 192 itself |I| exceeds K = 16 on a few of the 2^16 coefficients: 7.4 and 8.5
    # bits in the worst slot for two of three key seeds, 13.3 with it). fhec's
    # CtS spends one more level on its scale-down, so 8 remain after a bootstrap. fhec gives
    # every level one prime size, so the 40/39/60/56-bit level primes become 49-bit ones:
    # log QP = 60 + 24·49 + 5·60 ≈ 1,536 bits, within the h = 192 estimate (1,553).
    config = BootstrapConfig(cts_depth=4, stc_depth=3, hamming_weight=192, ephemeral_hamming_weight=32,
                             evalmod=EvalModConfig(degree=30, K=16, double_angle=3, arcsine_degree=0,
                                                   message_ratio_bits=8))
    return dict(N=2**16, levels=24, scale_bits=49, word_bits=60, special_primes=5, security=128, bootstrap=config)


def _f1() -> dict[str, Any]:
    # F1 §7 / Table 3: HEAAN's non-packed CKKS bootstrapping with L_max = 24 at N = 2^14,
    # 32-bit words. Non-packed is one slot (HEAAN's single-real bootstrap: SubSum, the real
    # half, EvalMod; no DFT). With one slot a coefficient is as large as the value, so the
    # message ratio is 2^4 with a degree-3 arcsine (measured 10-11 bits at this 28-bit scale,
    # docs/bootstrapping.md). log Q of about 24·28 = 670 bits exceeds the HE standard's 438
    # at N = 2^14, and F1 states no security for it: security=None.
    config = BootstrapConfig(slots=1, hamming_weight=64,
                             evalmod=EvalModConfig(degree=31, double_angle=2, arcsine_degree=3, message_ratio_bits=4))
    return dict(N=2**14, levels=23, scale_bits=28, word_bits=32, special_primes=6, security=None, bootstrap=config)


def _f1_packed() -> dict[str, Any]:
    # F1's chain (N = 2^14, 24 limbs of 32-bit words) with fully packed bootstrapping (2^13
    # slots, CtS and StC in 2 levels each): a comparison point, not the computation of F1's
    # Table 3.
    config = BootstrapConfig(cts_depth=2, stc_depth=2, hamming_weight=64,
                             evalmod=EvalModConfig(degree=31, double_angle=2, arcsine_degree=0, message_ratio_bits=6))
    return dict(N=2**14, levels=23, scale_bits=28, word_bits=32, special_primes=6, security=None, bootstrap=config)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("bootstrap-toy", "N = 2^12, 32-bit words, bootstraps with 3 levels to spare; INSECURE (security=None)",
               "fhec, for tests and examples", _toy),
        Preset("lattigo-n16", "N = 2^16, 24 levels, sparse secret h = 192, 128-bit (published estimate)",
               "Lattigo's default bootstrapping set N16QP1546H192H32 (Osiris Table II sets III/IV start from it)",
               _lattigo_n16),
        Preset("f1-ckks-bootstrap", "N = 2^14, 24 limbs of 32-bit words, one slot; INSECURE (security=None)",
               "F1 (MICRO 2021) §7 and Table 3: non-packed CKKS bootstrapping (HEAAN), L_max = 24", _f1),
        Preset("f1-ckks-bootstrap-packed", "N = 2^14, 24 limbs of 32-bit words, 2^13 slots; INSECURE (security=None)",
               "F1's chain with fully packed bootstrapping (a comparison point for F1 Table 3)", _f1_packed),
    )
}
"""The shipped parameter sets by name (module doc)."""


def preset_literal(name: str) -> dict[str, Any]:
    """The `CKKSParams` keyword arguments of a preset; `ParameterError` for an unknown name."""
    if name not in PRESETS:
        raise ParameterError(f"no parameter preset {name!r}; choose one of {', '.join(sorted(PRESETS))}.")
    return PRESETS[name].literal()
