"""`BootstrapConfig`: how a CKKS parameter set bootstraps (the literal; validated here).

A parameter set that bootstraps carries one: ``CKKSParams(..., bootstrap=BootstrapConfig())``.
The algorithm it configures (`fhec.ir.he_bootstrap`, docs/bootstrapping.md) is
Cheon–Han–Kim–Kim–Song (Eurocrypt 2018) with the improvements of Chen–Chillotti–Song
(Eurocrypt 2019: the DFT as a product of sparse factors) and Bossuat et al.
(Eurocrypt 2021: EvalMod by a Chebyshev series of a scaled cosine plus double angle):

* ModRaise: the level-0 ciphertext, read as a ciphertext over the whole chain, encrypts
  t = m + q_0·I with a small integer polynomial I;
* SubSum (sparse packing, ``slots`` = n < N/2 only): log2(N/(2n)) rotations project t
  onto the subring in X^(N/2n), whose 2n coefficients the n slots decode;
* CoeffsToSlots: the inverse of the n-point decoding DFT, as ``len(cts_log_radices)``
  sparse linear transforms (one level each), then conjugation splits the real and
  imaginary halves of the coefficient vector (for n <= N/4 into the two halves of a
  2n-periodic vector, so that EvalMod runs once);
* EvalMod: t/q_0 ↦ (t mod q_0)/q_0 by a Chebyshev series of cos(2π(u − 1/4)/2^r) on
  u ∈ [−K, K], r double-angle steps, and optionally a Taylor arcsine;
* SlotsToCoeffs: the decoding DFT, as ``len(stc_log_radices)`` sparse transforms.

Everything here is validated against the ring degree by `check_bootstrap` (called by
`CKKSParams`); pydantic's own errors become `ParameterError` naming the field.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fhec.errors import InsecureParametersError, ParameterError


def _as_parameter_error(cls_name: str, exc: ValidationError) -> ParameterError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(the configuration)"
    return ParameterError(f"{cls_name}: {where}: {first.get('msg', 'invalid value')} (got {first.get('input')!r}).")


class _Literal(BaseModel):
    """Frozen, no unknown fields, and `ParameterError` instead of pydantic's errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_parameter_error(type(self).__name__, exc) from None


EVALMOD_METHODS = ("cos", "sin")
"""cos: Chebyshev series of cos(2π(u − 1/4)/2^r), then r double angles (cos 2θ = 2cos²θ − 1);
sin: Chebyshev series of sin(2πu) directly (no double angle)."""


class EvalModConfig(_Literal):
    """The modular reduction step of bootstrapping.

    Attributes:
        method: "cos" (scaled cosine + double angle) or "sin" (the sine directly).
        degree: degree of the Chebyshev series on [−1, 1] (u = K·y).
        K: the interval [−K, K] the series covers: |I| + 1/2^message_ratio_bits must stay
            below it (I is the q_0-overflow of ModRaise; with a sparse secret of Hamming
            weight h it is a sum of about h small terms, |I| ≲ 6·sqrt((h+1)/12)).
        double_angle: r, the number of double-angle steps (0 for method "sin").
        arcsine_degree: 0, or an odd degree 3.. of the Taylor series of arcsin(s)/(2π)
            applied to s = sin(2πu), which removes the sine's error (default 7: exact
            enough up to |m/q_0| ~ 0.1, which inputs with a large mean reach).
        message_ratio_bits: R = log2(q_0 / Δ_in): the input is brought to level 0 at
            scale q_0 / 2^R before ModRaise, so |m/q_0| <= 2^-R for |x| <= 1 (R >= 2 keeps
            it below 1/4, where the arcsine inverts the sine). Larger: smaller sine error,
            but the EvalMod error is multiplied by 2^R (docs/bootstrapping.md).
        scale_primes: primes per EvalMod level. 1: EvalMod's values sit on the chain's
            one-prime scales (~2^scale_bits), as every other value. 2: *composite
            scaling*: EvalMod runs at a scale of two primes (~2^(2·scale_bits)), every
            product rescaled by both, and one more rescale brings the result back to the
            one-prime scale; it uses 2·(its levels) + 1 primes. With 32-bit words a 2^30
            scale leaves EvalMod's rounding at ~2^-24 relative; SlotsToCoeffs multiplies
            it by about √N·2^R, which caps the result near 11 bits at N = 2^12
            (docs/bootstrapping.md, "Precision"). Default 1: presets with 50–60-bit primes
            do not need it.
    """

    method: Literal["cos", "sin"] = "cos"
    degree: int = Field(default=31, ge=3, le=1023)
    K: int = Field(default=12, ge=1, le=1024)
    double_angle: int = Field(default=3, ge=0, le=8)
    arcsine_degree: int = Field(default=7, ge=0, le=15)
    # R = 1 puts the level-0 scale at q_0/2, where not even |x| = 1 fits (and m/q_0 reaches 1/2,
    # beyond the arcsine's 1/4): it never bootstrapped, it failed with a ScaleOverflowError
    # that told to rescale products
    message_ratio_bits: int = Field(default=2, ge=2, le=40)
    scale_primes: int = Field(default=1, ge=1, le=2)

    @model_validator(mode="after")
    def _consistent(self) -> "EvalModConfig":
        if self.method == "sin" and self.double_angle:
            raise ValueError("method 'sin' takes no double angle (sin 2θ needs the cosine too); use method 'cos'")
        if self.arcsine_degree and self.arcsine_degree % 2 == 0 or self.arcsine_degree == 1:
            raise ValueError(f"arcsine_degree={self.arcsine_degree} must be 0 or an odd degree >= 3")
        return self


def split_log(total: int, parts: int) -> tuple[int, ...]:
    """`total` as `parts` near-equal positive summands, larger ones first."""
    base, extra = divmod(total, parts)
    return tuple(base + (1 if i < extra else 0) for i in range(parts))


class BootstrapConfig(_Literal):
    """How a CKKS parameter set bootstraps (see the module docstring).

    Attributes:
        slots: n, the slots the bootstrap refreshes: None (or N/2) for full packing, or a
            power of two 1 <= n < N/2 for sparse packing. A sparsely packed value must be
            periodic with period n (slot j equals slot j + n: the message lies in the
            subring the n slots decode, e.g. ``np.tile(v, N // 2 // n)``); the result is
            periodic too. ``fhec.reference`` refuses a bootstrap of a value that is not.
        cts_depth / stc_depth: levels of CoeffsToSlots / SlotsToCoeffs; the log2(n)
            butterfly stages are split as evenly as possible among them (at most one
            stage per level, so fewer levels when log2(n) is smaller).
        cts_log_radices / stc_log_radices: explicit split instead (log2 of each factor's
            radix, in the order applied; they must sum to log2(slots)), e.g. SimFHE's
            (2, 2, 3, 3, 3, 3) for 2^16 slots. Overrides the depth.
        evalmod: `EvalModConfig`.
        hamming_weight: h, the number of nonzero coefficients of the sparse ternary
            secret; None for a dense uniform ternary secret (much larger |I|, so a
            larger K). Sparse secrets are outside the HE-standard table.
        ephemeral_hamming_weight: sparse-secret encapsulation (Bossuat et al., ACNS 2022;
            Lattigo's default, weight 32): the level-0 ciphertext is switched to an
            ephemeral secret of this Hamming weight before ModRaise and back to the secret
            right after it, so ModRaise's overflow I is that of the ephemeral secret, and K
            can stay small for a dense or denser secret. Two hybrid key switches (one at
            level 0, one at the top level) and two keys (`fhec.keygen(...,
            encapsulation=True)`); no level. None: ModRaise runs under the secret itself.
        keyswitch: the key-switching method of the bootstrap's own key switches ("bv",
            "hybrid"); None: the compile's choice.
        max_giant_steps: at most this many giant steps (n2) per DFT factor: n1 is then the
            split with the fewest rotations among those with n2 <= this
            (`fhec.ir.he_recipes.bsgs_split`). Osiris §V holds the giant steps' partial sums
            on chip and caps them at n2 = 4; None: the fewest rotations.
        max_giant_steps_stages: the DFT stages `max_giant_steps` applies to: ("cts",
            "stc") both, ("cts",) CoeffsToSlots only (Osiris §V sets n2 = 4 "in the highest
            multiplicative level matrix-vector products in bootstrapping", which are
            CoeffsToSlots': there the sums over Q·P are widest), ("stc",) SlotsToCoeffs only.
        hoisting: "single", "double" or "none" for the DFT transforms' baby steps
            (`linear_transform`'s modes); "full": every rotation of a DFT factor off one
            decomposition of its input and one mod-down per factor, merged with the
            factor's rescale (double hoisting with no giant steps, SimFHE's "fully
            hoisted"; it also makes the bootstrap's key switches hybrid unless `keyswitch`
            says otherwise, so `fuse_mod_down_rescale` merges EvalMod's relinearizations
            with their rescales); None: the compile option decides.
    """

    slots: int | None = Field(default=None, ge=1)
    cts_depth: int = Field(default=3, ge=1, le=17)
    stc_depth: int = Field(default=3, ge=1, le=17)
    cts_log_radices: tuple[int, ...] | None = None
    stc_log_radices: tuple[int, ...] | None = None
    evalmod: EvalModConfig = EvalModConfig()
    hamming_weight: int | None = Field(default=64, ge=1)
    ephemeral_hamming_weight: int | None = Field(default=None, ge=1)
    keyswitch: Literal["bv", "hybrid"] | None = None
    hoisting: Literal["single", "double", "full", "none"] | None = None
    max_giant_steps: int | None = Field(default=None, ge=1, le=2**16)
    max_giant_steps_stages: tuple[Literal["cts", "stc"], ...] = Field(default=("cts", "stc"), min_length=1)

    @model_validator(mode="after")
    def _radices_positive(self) -> "BootstrapConfig":
        for name in ("cts_log_radices", "stc_log_radices"):
            radices = getattr(self, name)
            if radices is not None and (not radices or any(r < 1 for r in radices)):
                raise ValueError(f"{name}={radices!r} must be a non-empty tuple of positive log2 radices")
        return self

    @property
    def modraise_hamming_weight(self) -> int | None:
        """The Hamming weight of the secret ModRaise runs under, which bounds its overflow
        I: the ephemeral secret's with sparse-secret encapsulation, else the secret's
        (None: dense)."""
        return self.ephemeral_hamming_weight if self.ephemeral_hamming_weight is not None else self.hamming_weight

    def slot_count(self, N: int) -> int:
        """n: the slots refreshed at ring degree N (N/2 unless sparse)."""
        return N // 2 if self.slots is None else self.slots

    def halves(self, N: int) -> str:
        """How the real and imaginary halves of the coefficients go through EvalMod (the
        slots hold w_l = s_l + i·s_{l+n}): "two" ciphertexts for full packing (n = N/2);
        "packed" into the two halves of one period-2n vector for 2 <= n <= N/4 (EvalMod
        once); "real" for n = 1, HEAAN's single-real bootstrap: the one slot s_0 + i·s_1
        of a real value has s_1 = 0, so only the real half is refreshed (EvalMod once,
        and the imaginary half's noise is dropped)."""
        n = self.slot_count(N)
        return "two" if 2 * n > N // 2 else "packed" if n > 1 else "real"

    def scale_down_levels(self, N: int) -> int:
        """Levels of the scale-down before EvalMod: one for full packing; two when sparse,
        where SubSum has multiplied the values by g = N/2n too, so that one prime leaves
        the scale-down's constant too few bits (it is encoded as an integer)."""
        return 1 if self.halves(N) == "two" else 2

    def log_radices(self, N: int, stage: str) -> tuple[int, ...]:
        """The log2 radices of "cts" or "stc" at ring degree N, in the order applied
        (empty for n = 1: a one-point DFT is the identity)."""
        given = getattr(self, f"{stage}_log_radices")
        if given is not None:
            return given
        log_n = int(math.log2(self.slot_count(N)))
        return split_log(log_n, min(getattr(self, f"{stage}_depth"), log_n)) if log_n else ()

    def dft_levels(self, N: int, stage: str) -> int:
        """Levels of the "cts" or "stc" transforms: one per factor (packed halves are split
        and joined inside the last CtS and the first StC factor). At n = 1 there is no
        factor, but SlotsToCoeffs still multiplies by q_0/Δ: one level."""
        return max(len(self.log_radices(N, stage)), 1 if stage == "stc" and self.halves(N) == "real" else 0)

    @property
    def evalmod_steps(self) -> int:
        """Rescale steps EvalMod takes: the series and the arcsine, ceil(log2(d + 1)) each
        (the Paterson–Stockmeyer bound of `fhec.ir.he_polynomial`), and one per double
        angle."""
        e = self.evalmod
        steps = math.ceil(math.log2(e.degree + 1)) + e.double_angle
        if e.arcsine_degree:
            steps += math.ceil(math.log2(e.arcsine_degree + 1))
        return steps

    @property
    def evalmod_depth(self) -> int:
        """Levels (primes) EvalMod uses: `scale_primes` per step, and with composite
        scaling the scale_primes − 1 rescales that bring the result back to one prime."""
        p = self.evalmod.scale_primes
        return self.evalmod_steps * p + p - 1

    def depth(self, N: int) -> int:
        """Levels one bootstrap consumes above the levels it leaves usable."""
        return self.dft_levels(N, "cts") + self.scale_down_levels(N) + self.evalmod_depth + self.dft_levels(N, "stc")


MIN_EPHEMERAL_WEIGHT = 32
"""The smallest ephemeral secret a parameter set with a security level may encapsulate to:
Lattigo's default (its bootstrapping parameters' EphemeralSecretWeight, the "H32" of
N16QP1546H192H32), whose key lives at q_0·P only (`fhec.schemes.keys.encapsulation_keys`).
fhec does not estimate it itself."""


def check_bootstrap(config: Any, N: int, levels: int, security: int | None) -> BootstrapConfig | None:
    """The validated config of a parameter set (None stays None).

    Raises `ParameterError` when it is not a `BootstrapConfig`, its slots or radices do not
    fit N, h exceeds N, or the chain has no level left after a bootstrap. (The security of
    a sparse secret is checked by `CKKSParams` against `fhec.schemes.sparse_security`.)
    """
    if config is None:
        return None
    if not isinstance(config, BootstrapConfig):
        raise ParameterError(f"bootstrap={config!r} must be a fhec.BootstrapConfig (or None).")
    slots = config.slot_count(N)
    if not 1 <= slots <= N // 2 or slots & (slots - 1):
        raise ParameterError(
            f"BootstrapConfig(slots={config.slots}): the slots of a bootstrap are a power of two from 1 to "
            f"N/2 = {N // 2}; use slots=None for full packing or a power of two up to {N // 2}."
        )
    log_slots = int(math.log2(slots))
    for stage in ("cts", "stc"):
        radices = config.log_radices(N, stage)
        if sum(radices) != log_slots:
            raise ParameterError(
                f"BootstrapConfig: {stage}_log_radices={radices} sum to {sum(radices)}, but {slots} = 2^{log_slots} "
                f"slots need log2 radices summing to {log_slots}" + (" (leave them None for one slot)." if slots == 1
                                                                    else ".")
            )
    for field_name in ("hamming_weight", "ephemeral_hamming_weight"):
        if getattr(config, field_name) is not None and getattr(config, field_name) > N:
            raise ParameterError(f"BootstrapConfig({field_name}={getattr(config, field_name)}) exceeds N = {N}.")
    h_e = config.ephemeral_hamming_weight
    if security is not None and h_e is not None and h_e < MIN_EPHEMERAL_WEIGHT:
        raise InsecureParametersError(
            f"BootstrapConfig(ephemeral_hamming_weight={h_e}) is below {MIN_EPHEMERAL_WEIGHT}, the weight Lattigo "
            f"publishes for its ephemeral secret (docs/security.md, \"Sparse secrets\"); use "
            f"ephemeral_hamming_weight={MIN_EPHEMERAL_WEIGHT} or more, or security=None for an insecure experiment.")
    need = config.depth(N)
    if need >= levels:  # levels == need left the result no level: EvalMod overflowed at level 1
        raise ParameterError(
            f"a bootstrap with this BootstrapConfig uses {need} levels (CtS "
            f"{config.dft_levels(N, 'cts') + config.scale_down_levels(N)}, "
            f"EvalMod {config.evalmod_depth}, StC {config.dft_levels(N, 'stc')}) and needs one more above them, but "
            f"the parameters have levels={levels}; use levels={need + 1} or more ({need + 3}: 3 usable after each "
            f"bootstrap)."
        )
    return config
