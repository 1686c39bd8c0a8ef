"""The BOOTSTRAP recipe: CKKS bootstrapping as HE-IR primitives (docs/bootstrapping.md).

One BOOTSTRAP node (the identity on values) expands, with the parameters'
`fhec.BootstrapConfig`, into four stages (five with sparse packing), each node tagged with
its stage (``stage`` attribute: "modraise", "subsum", "cts", "evalmod", "stc";
`HeBuilder.defaults`) so that reports can split the cost. Below for full packing (n = N/2
slots); sparse packing (n < N/2, docs/bootstrapping.md "Sparse slots") adds SubSum after
ModRaise (log2(N/2n) rotations onto the subring in X^(N/2n)), uses the n-point DFT, packs
both coefficient halves into one period-2n vector (one EvalMod; n = 1: the real half
only), and scales down over two levels:

1. **ModRaise.** The input is brought to level 0 at scale Δ = q_0 / 2^R (R =
   ``message_ratio_bits``: LEVEL_DOWN from a higher level, or an exact integer multiply at
   level 0 when q_0 / scale is already larger), then MOD_RAISE lifts its coefficients
   centered onto every prime of the top level. The result decrypts to t = m + q_0·I. It
   is *labelled* with the top level's canonical scale S, so that every later value sits
   on its level's canonical scale; its slots hold Decode(t)/S.
2. **CoeffsToSlots.** The inverse decoding DFT, without its bit reversal, as
   ``len(cts_log_radices)`` sparse linear transforms (`fhec.schemes.dft`), each one
   BSGS `linear_transform_recipe` plus a rescale. Slot k then holds
   w_k = (t_k + i·t_{k+n})/S (bit-reversed k); w + conj(w) and −i·(w − conj(w)) times
   S/(2·q_0·K) (a scalar multiply: one more level) are the real halves y = t/(q_0·K)
   of both coefficient halves. (−i and i are exact constants: encoded at scale 1 they are the
   monomials ∓X^{N/2}, so multiplying by them costs no level.)
3. **EvalMod.** On each half, with u = K·y = m/q_0 + I: a Chebyshev series of
   cos(2π(u − 1/4)/2^r) on y ∈ [−1, 1], then r double angles c ↦ 2c² − 1, which gives
   cos(2π(u − 1/4)) = sin(2πu) ≈ 2π·m/q_0 (method "sin": the series of sin(2πu) itself);
   optionally a Taylor arcsine turns it into arcsin(sin 2πu)/(2π) = m/q_0 exactly for
   |m/q_0| < 1/4. With ``scale_primes`` = 2 (composite scaling) EvalMod runs at a scale
   of two primes (`HeBuilder.composite`): the scale-down lands y on it, every product is
   rescaled by two primes, and one rescale at the end returns to the one-prime chain.
4. **SlotsToCoeffs.** The halves recombine as re + i·im and the decoding DFT's factors
   (the first also multiplying by q_0/Δ, and by 1/(2π) without arcsine) give the slots
   Decode(m)/Δ: the input's values, at level top − depth.

Value bounds: the statistical facts the bounds cannot derive are stated as hints (the
``bound`` attribute): |y| ≤ 1 after CoeffsToSlots (|I| + 2^-R < K, which holds with
overwhelming probability for K as `EvalModConfig` documents), |c| ≤ 1 + 2^-8 after each
double angle, and the input's own bound (times 1 + 2^-8) for the result.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

import numpy as np

from fhec.errors import BootstrapError, PrecisionWarning, ScaleMismatchError, warn_at
from fhec.ir.he import Const, HeOp, attrs_of
from fhec.ir.he_polynomial import polynomial_recipe
from fhec.ir import he_types as ht
from fhec.ir.he_types import IRTypeError
from fhec.schemes import noise as nz
from fhec.schemes import rules
from fhec.schemes.bootstrap_config import BootstrapConfig
from fhec.schemes.dft import bootstrap_transforms

STAGES = ("modraise", "subsum", "cts", "evalmod", "stc")
"""The stages of a bootstrap, in order; each expanded node's ``stage`` attribute ("subsum"
only with sparse packing)."""

_SLACK = 1.0 + 2.0**-8
"""Relative slack on the bounds of values that approximate a known bounded function."""


# -- plaintext precomputation (cached per ring degree and config) --------------------------


def _evalmod_series(cfg: BootstrapConfig) -> tuple[float, ...]:
    """Chebyshev coefficients on y in [-1, 1] of the configured scaled sine or cosine."""
    e = cfg.evalmod
    K, r = e.K, e.double_angle
    funcs = {
        "cos": lambda y: np.cos(2 * np.pi * (K * y - 0.25) / 2**r),
        "sin": lambda y: np.sin(2 * np.pi * K * y),
    }
    series = np.polynomial.Chebyshev.interpolate(funcs[e.method], e.degree)
    return tuple(float(c) for c in series.coef)


def arcsine_series(degree: int) -> tuple[float, ...]:
    """Power-basis coefficients of arcsin(s)/(2π) truncated at odd `degree`:
    Σ_k (2k)! / (4^k (k!)^2 (2k+1)) · s^(2k+1) / (2π)."""
    coeffs = [0.0] * (degree + 1)
    for k in range((degree - 1) // 2 + 1):
        coeffs[2 * k + 1] = math.comb(2 * k, k) / (4**k * (2 * k + 1)) / (2 * math.pi)
    return tuple(coeffs)


@functools.lru_cache(maxsize=8)
def _plan(N: int, cfg: BootstrapConfig):
    n = cfg.slot_count(N)
    cts, stc = bootstrap_transforms(n, cfg.log_radices(N, "cts"), cfg.log_radices(N, "stc"), cfg.halves(N))
    return cts, stc, _evalmod_series(cfg)


# -- emission helpers -----------------------------------------------------------------------


_DIAGONALS: dict[tuple[int, int, complex], tuple[dict, tuple]] = {}
"""(slots, id(factor), scale) -> (factor, its diagonals): `_diagonals`'s cache. The entry
holds the factor itself, so its id cannot be reused while the entry lives."""


def _diagonals(params, factor: dict, scale: complex = 1.0) -> tuple:
    """The LINEAR_TRANSFORM diagonals of one DFT factor of `_plan` (times `scale`) on every
    slot (a sparse bootstrap's, of period n or 2n, repeat): the same `Const` objects for
    every bootstrap of a program. (Built anew per bootstrap, a deep
    program's DFT constants took 150 MB per bootstrap at N = 2^16 until CSE merged them.)"""
    key = (params.slots, id(factor), complex(scale))
    if key not in _DIAGONALS:
        if len(_DIAGONALS) >= 64:
            _DIAGONALS.clear()
        _DIAGONALS[key] = (factor, _build_diagonals(params.slots, factor, scale))
    return _DIAGONALS[key][1]


def _build_diagonals(slots: int, factor: dict, scale: complex) -> tuple:
    out = []
    for k, vec in sorted(factor.items()):
        v = np.asarray(vec)
        if v.ndim != 1 or slots % v.shape[0]:
            raise IRTypeError(f"a DFT diagonal of {v.shape} values for {slots} slots")
        v = np.tile(v, slots // v.shape[0]) * scale
        out.append((int(k), False, Const(v.astype(np.complex128))))
    return tuple(out)


def _transform(b, x: int, diagonals: tuple, hoisting: str | None, loc, hints: dict | None = None,
               stage: str = "cts") -> int:
    """One DFT factor of `stage` ("cts", "stc"): the BSGS linear transform, then a rescale
    (with bound / noise hints); n1 the fewest rotations with at most
    `BootstrapConfig.max_giant_steps` giant steps where the cap applies to the stage
    (`max_giant_steps_stages`)."""
    from fhec.ir.he_recipes import bsgs_split, linear_transform_recipe

    t = b.type_of(x)
    attrs: dict[str, Any] = {"diagonals": diagonals, "plain_scale": ht.plain_scale_for(b.params, t.level, t.scale)}
    if hoisting == "full":  # double hoisting, every diagonal a baby step: one mod-up, one mod-down
        attrs.update(hoisting="double", n1=b.params.slots)
    elif hoisting:
        attrs["hoisting"] = hoisting
    cfg = b.params.bootstrap
    cap = cfg.max_giant_steps if stage in cfg.max_giant_steps_stages else None
    if cap is not None and "n1" not in attrs:
        attrs["n1"] = bsgs_split([k for k, _, _ in diagonals], ht.row_length(b.params), cap)
    acc = linear_transform_recipe(b, x, attrs, loc)
    return b.emit(HeOp.RESCALE, (acc,), attrs_of(**(hints or {})), loc)


def _monomial(b, x: int, unit: complex, loc) -> int:
    """x times i (X^{N/2}) or −i (X^{3N/2}) in every slot: exact, no level."""
    N = b.params.N
    return b.emit(HeOp.MUL_MONOMIAL, (x,), attrs_of(power=N // 2 if unit == 1j else 3 * N // 2), loc)


def _scaled(b, x: int, c: float, levels: int, loc) -> int:
    """x·c, rescaled `levels` times onto the canonical scale there (`HeBuilder.
    canonical_scale`: with composite scaling, EvalMod's two-prime scale, so the product's
    plain scale is ~2^60), with the statistical bound |y| <= 1 and the error as hints:
    a linear transform's own bound (the matrix's largest absolute row sum) is ~13 bits
    pessimistic through CoeffsToSlots' DFT factors. The error of y is this rescale's rounding, and,
    scaled by c (and by the ratio of y's scale to the one-prime scale), the
    conjugation's key switch and CoeffsToSlots' own error, which measures about one
    rounding (docs/bootstrapping.md, "Precision").

    c is encoded as the integer round(c·ps): over one level ps ~ q_l·S_{l-1}/S, which
    leaves c·ps ~ 2^17 at F1's 28-bit primes for full packing but only 2^17/g after
    a sparse SubSum (g = N/2n); two levels (ps ~ q_l·q_{l-1}·S_{l-2}/S) give it a prime
    more of bits, so that its rounding stays below the rescale's."""
    params, t = b.params, b.type_of(x)
    primes = math.prod(rules.rescale_prime(params, t.level - i) for i in range(levels))
    ps = b.canonical_scale(t.level - levels) * primes / t.scale
    m = b.emit(HeOp.MUL_CONST, (x,), attrs_of(value=float(c), plain_scale=ps), loc)
    for _ in range(levels - 1):
        m = b.emit(HeOp.RESCALE, (m,), (), loc)
    rounding = nz.rounding_noise(params)
    method = params.bootstrap.keyswitch or ht.keyswitch_method(params, {})
    switched = nz.keyswitch_noise(params, t.level, method) + math.log2(c)
    ratio = b.canonical_scale(t.level - levels) / params.scale_at(t.level - levels)
    noise = math.log2(math.sqrt(4.0**rounding + ratio**2 * (4.0**rounding + 4.0**switched)))
    return b.emit(HeOp.RESCALE, (m,), attrs_of(bound=1.0, noise=noise), loc)


_MIN_SCALE_DOWN = 8.0
"""The smallest integer the scale-down may multiply by: below it the rounding of
round(c·ps) is a systematic relative error above 1/16 in y (0: y = 0, a result of
zeros)."""


def scale_down_problem(params) -> str | None:
    """Why the bootstrap of `params` cannot scale down, or None. The scale-down multiplies
    by the integer round(c·ps), c = S/(2·q_0·K·g), ps ≈ q_l···S_{l−down}/S_l (`_scaled`),
    about S·S_{l-down}·q_l···/(2·q_0·K·g·S_l), which is below 1 when q_0 is several primes (two
    32-bit base primes against a 30-bit scale: 2^-7, so y = 0 and the result was zeros)."""
    cfg = params.bootstrap
    N = params.N
    q0 = math.prod(params.moduli_at(0))
    level = params.top_level - cfg.dft_levels(N, "cts")
    down = cfg.scale_down_levels(N)
    primes = math.prod(float(rules.rescale_prime(params, level - i)) for i in range(down))
    target = float(params.scale_at(level - down))
    if cfg.evalmod.scale_primes == 2:  # the composite scale there is about one prime more
        target *= float(rules.rescale_prime(params, level - down))
    g = N // (2 * cfg.slot_count(N))
    S = float(params.scale_at(params.top_level))  # the raised value's scale
    k = S / (2 * q0 * cfg.evalmod.K * g) * target * primes / float(params.scale_at(level))
    if k >= _MIN_SCALE_DOWN:
        return None
    return (
        f"this bootstrap's scale-down by S/(2·q_0·K) is the integer {round(k)} (exactly {k:.3g}): q_0 = "
        f"2^{math.log2(q0):.0f} ({params.base_limbs} base primes) is too large against the scale 2^"
        f"{math.log2(params.scale_at(level)):.0f}, so its result would be wrong. Use base_limbs=1 (q_0 of one word), "
        f"a larger scale_bits, or EvalModConfig(scale_primes=2)."
    )


def _weight_bound(cfg: BootstrapConfig, N: int) -> int:
    """At least the nonzero coefficients of the secret ModRaise runs under: its Hamming
    weight, N for a dense one (the bounds and the error model take the worst case, where
    `overflow_problem` takes a dense secret's typical 2N/3)."""
    return cfg.modraise_hamming_weight if cfg.modraise_hamming_weight is not None else N


MAX_OUTSIDE = 1 / 16
"""The most coefficients a bootstrap may expect outside EvalMod's interval [−K, K]: one
is enough to spread an error over every slot, so this is about the chance that a
bootstrap fails."""


def _expected_outside(N: int, h: int, K: int) -> float:
    """The expected number of the N coefficients whose overflow |I| (a sum of h + 1 terms
    uniform in [−1/2, 1/2], std √((h + 1)/12), taken as Gaussian) reaches K, i.e. exceeds
    K − 1/2; 0 when K > (h + 1)/2, which |I| cannot reach."""
    if K > (h + 1) / 2:
        return 0.0
    return N * math.erfc((K - 0.5) / math.sqrt(2 * (h + 1) / 12))


def overflow_problem(params) -> str | None:
    """Why EvalMod's interval [−K, K] cannot hold the ModRaise overflow I, or None. I is a
    sum of h + 1 terms uniform in [−1/2, 1/2] (h: the nonzero coefficients of the secret
    ModRaise runs under, about 2N/3 for a dense one): |I| <= (h + 1)/2, std σ = √((h + 1)/12).
    Outside the interval the series diverges, and one such coefficient spreads its error to
    every slot, so the bound is per bootstrap: more than `MAX_OUTSIDE` of the N coefficients
    expected beyond K. A dense secret at N = 2^10 with K = 16 (σ = 7.5) came back with
    errors of 2^66; `lattigo-n16` without encapsulation (h = 192, σ = 4.0, K = 16, about 7
    coefficients of 2^16 expected outside) with 7.4 and 8.5 bits for two of three key seeds,
    against 13.3 with it."""
    cfg = params.bootstrap
    weight = cfg.modraise_hamming_weight
    h = weight if weight is not None else 2 * params.N // 3
    sigma = math.sqrt((h + 1) / 12)
    K = cfg.evalmod.K
    outside = _expected_outside(params.N, h, K)
    if outside <= MAX_OUTSIDE:
        return None
    need = next(k for k in range(K + 1, 2 * h + 4) if _expected_outside(params.N, h, k) <= MAX_OUTSIDE)
    field = "ephemeral_hamming_weight" if cfg.ephemeral_hamming_weight is not None else "hamming_weight"
    secret = f"{field}={h}" if weight is not None else f"a dense secret (about {h} nonzero)"
    return (
        f"EvalModConfig(K={K}) is too small for {secret} at N = {params.N}: the ModRaise overflow |I| has std "
        f"√((h + 1)/12) = {sigma:.2g}, so about {outside:.2g} of the N coefficients are expected outside [−K, K] "
        f"per bootstrap, and one is enough to make every slot wrong. Use K >= {need} (docs/bootstrapping.md), a "
        f"sparser secret, or sparse-secret encapsulation: BootstrapConfig(ephemeral_hamming_weight=32)."
    )


def execution_problem(params) -> str | None:
    """Why a bootstrap of `params` would compute a wrong result whatever its input
    (`overflow_problem`, `scale_down_problem`), or None. Tracing and compiling warn (a cost
    study still compiles); executions raise `PrecisionError`
    (`fhec.reference.check_bootstrap_inputs`)."""
    return overflow_problem(params) or scale_down_problem(params)


def _subsum(b, w: int, n: int, loc) -> int:
    """Sparse packing: the partial trace onto the subring in X^(N/2n), by log2(N/2n)
    rotations w ← w + rot(w, n·2^k). Slot j then holds the sum of slots j + n·i: for a
    raised t = m + q_0·I, g·Decode(t') with t' the coefficients of t at multiples of
    g = N/2n (the others cancel), g·m' + q_0·g·I' with m' = m for a period-n message.
    No level; the identity for n = N/2."""
    step = n
    while step < b.params.slots:
        w = b.emit(HeOp.ADD, (w, b.emit(HeOp.ROTATE, (w,), attrs_of(step=step), loc)), (), loc)
        step *= 2
    return w


def _to_level_zero(b, x: int, cfg: BootstrapConfig, loc) -> tuple[int, float]:
    """The input at level 0 with q_0/scale >= 2^R, and its effective scale Δ (the scale
    times the exact integer it was multiplied by)."""
    params = b.params
    q0 = math.prod(params.moduli_at(0))
    R = cfg.evalmod.message_ratio_bits
    t = b.type_of(x)
    if t.level > 0:
        try:
            x = b.level_down(x, 0, q0 / 2**R, loc)
        except ScaleMismatchError:
            raise BootstrapError(
                f"BootstrapConfig.evalmod.message_ratio_bits={R} brings the input to level 0 at scale q_0/2^{R} = "
                f"2^{math.log2(q0) - R:.1f}, far below its scale 2^{math.log2(t.scale):.1f}: too small to hold the "
                f"message. Use message_ratio_bits from 2 to 4 (docs/bootstrapping.md, \"Message ratio\").",
                loc,
            ) from None
        return x, float(b.type_of(x).scale)
    c = int(q0 / (t.scale * 2**R))
    if c < 1:
        raise BootstrapError(
            f"bootstrap() got a value at level 0 with scale 2^{math.log2(t.scale):.1f}, but ModRaise needs "
            f"q_0/scale >= 2^{R} (message_ratio_bits) and q_0 is 2^{math.log2(q0):.1f}: bootstrap the value one "
            f"level earlier (at level >= 1 it is brought to level 0 at the right scale), use more base_limbs, "
            f"or lower BootstrapConfig.evalmod.message_ratio_bits.",
            loc,
        )
    if c > 1:
        x = b.emit(HeOp.MUL_CONST, (x,), attrs_of(value=c, plain_scale=None), loc)
    return x, float(t.scale) * c


AMPLIFICATION_BITS = {1: 2.5, 2: 0.0}
"""log2 of the factor by which EvalMod's own noise (double angles, products) adds to the
propagated CoeffsToSlots error, per `scale_primes`, fitted to measurements
(docs/bootstrapping.md): at a one-prime scale EvalMod's roundings dominate; at a
two-prime scale they vanish and only the propagated error is left."""


def output_noise(
    params, cfg: BootstrapConfig, y_noise: float, y_scale: float, delta: float, out_scale: float, input_rel: float,
    exit_scale: float | None = None,
) -> float:
    """The estimated error (log2 std, slot units at `out_scale`) of a bootstrap's result:
    the input's own relative error `input_rel` (it passes through), plus what the
    bootstrap adds.

    A slot error σ_y (relative) of y = u/K after CoeffsToSlots becomes 2π·K·σ_y in
    sin(2πu) (times the EvalMod amplification), which SlotsToCoeffs multiplies by
    q_0/(2πΔ) and sums over n coefficients per slot (√n; n = N/2 unless sparse), for
    both halves (√2; one half for a single real slot). With composite scaling, the
    rescale back to the one-prime scale `exit_scale` adds one rounding to m/q_0 (to
    sin 2πu without the arcsine). EvalMod's own error in exact arithmetic (the series'
    approximation, amplified by the double angles, and the sine's or the arcsine's
    truncation: `_evalmod_error`) adds at u ≈ 2^-R/√n·0.6."""
    n = cfg.slot_count(params.N)
    q0 = math.prod(params.moduli_at(0))
    e = cfg.evalmod
    sigma_y = 2.0**y_noise / y_scale
    sigma_u = e.K * sigma_y * 2.0 ** AMPLIFICATION_BITS[e.scale_primes]
    if exit_scale is not None:
        exit_rel = 2.0 ** nz.rounding_noise(params) / exit_scale
        sigma_u = math.hypot(sigma_u, exit_rel / (1.0 if e.arcsine_degree else 2 * math.pi))
    halves = 1 if cfg.halves(params.N) == "real" else 2
    noise_rel = math.sqrt(halves * n) * (q0 / delta) * sigma_u
    u = 0.6 * delta / q0 / math.sqrt(n)
    sine = _evalmod_error(cfg, params.N, u) * (q0 / delta) * math.sqrt(n)
    return math.log2(math.hypot(noise_rel, sine, input_rel) * out_scale)


@functools.lru_cache(maxsize=64)
def _evalmod_error(cfg: BootstrapConfig, N: int, u: float) -> float:
    """The error in m/q_0 of EvalMod in exact arithmetic, at |m/q_0| <= u: the Chebyshev
    series' approximation of the scaled cosine (or sine), multiplied by 4 per double
    angle, plus the sine's or the arcsine's truncation (`_sine_error`, the floor). The
    series' part is an rms over the integer overflows I (|I| < K, weighted as a Gaussian
    of std √((h + 1)/12)), since SlotsToCoeffs sums it over coefficients with different
    I. It does not shrink with N as the rounding errors do: at N = 2^5 a degree-15 series
    on K = 4 is what limits the result (13 bits measured where the roundings alone allow
    18)."""
    e = cfg.evalmod
    h = _weight_bound(cfg, N)
    overflow = np.arange(1 - e.K, e.K)
    weight = np.exp(-(overflow**2) / (2 * (h + 1) / 12))
    m = np.linspace(-u, u, 65)
    v = _evalmod_exact(cfg, overflow[:, None] + m[None, :])
    rms = math.sqrt(float(np.sum(weight[:, None] * (v - m) ** 2)) / (m.size * float(np.sum(weight))))
    return max(rms, _sine_error(e.arcsine_degree, u))


def message_error(cfg: BootstrapConfig, u: float) -> float:
    """|EvalMod's result − u| in exact arithmetic at m/q_0 = u (I = 0), in m/q_0 units:
    what a coefficient of that size loses to the series and to the sine's or the
    arcsine's truncation. It grows quickly as |u| nears 1/4, where sin(2πu) is flat and
    arcsin's Taylor series converges slowly (`fhec.reference` refuses such values)."""
    return abs(float(_evalmod_exact(cfg, np.asarray(u))) - u)


def _evalmod_exact(cfg: BootstrapConfig, t: np.ndarray) -> np.ndarray:
    """EvalMod in exact arithmetic at t = I + m/q_0: the Chebyshev series of the scaled
    cosine (or sine) on [−K, K], the double angles, then the arcsine (or the division
    by 2π); m/q_0 where everything is exact."""
    e = cfg.evalmod
    c = np.polynomial.chebyshev.chebval(t / e.K, np.array(_evalmod_series(cfg)))
    for _ in range(e.double_angle):
        c = 2 * c * c - 1
    if e.arcsine_degree:
        return np.polynomial.polynomial.polyval(c, np.array(arcsine_series(e.arcsine_degree)))
    return c / (2 * math.pi)


def _sine_error(arcsine_degree: int, u: float) -> float:
    """The error in m/q_0 of EvalMod's exact-arithmetic result at u = m/q_0: without the
    arcsine, sin(2πu)/(2π) = u − (2π)²u³/6 + ...; with it, the first term its Taylor
    series leaves out, C(2k, k)/(4^k (2k + 1))·s^(2k+1)/(2π) with 2k + 1 = degree + 2 and
    s = sin(2πu). (Negligible at N = 2^12; at N = 2^5 a coefficient averages only 16 slots,
    u is ~0.04 and a degree-3 arcsine leaves ~2^-17.)"""
    if not arcsine_degree:
        return (2 * math.pi) ** 2 * u**3 / 6
    k = (arcsine_degree + 1) // 2
    s = math.sin(2 * math.pi * u)
    return math.comb(2 * k, k) / (4**k * (2 * k + 1)) * s ** (2 * k + 1) / (2 * math.pi)


def _composite(b, cfg: BootstrapConfig, top: int):
    """The scales EvalMod runs at, from y's level `top` down to the level its last step
    lands on (`HeBuilder.composite`). With scale_primes = p > 1 the bottom scale is
    s_{bottom−p+1}·q_{bottom−p+2}···q_bottom, so that the p − 1 rescales of
    `_to_one_prime` land exactly on the one-prime canonical scale (every level above
    follows from it). p = 1: the chain's own scales (no change)."""
    p = cfg.evalmod.scale_primes
    if p == 1:
        return contextlib.nullcontext()
    params = b.params
    bottom = top - p * cfg.evalmod_steps
    primes = (rules.rescale_prime(params, j) for j in range(bottom - p + 2, bottom + 1))
    return b.composite(bottom, params.scale_at(bottom - p + 1) * math.prod(float(q) for q in primes), top, p)


def _to_one_prime(b, v: int, cfg: BootstrapConfig, top: int, loc) -> int:
    """Composite scaling's exit (inside `_composite`): EvalMod's result on the bottom
    composite level, rescaled by p − 1 primes onto the one-prime canonical scale there."""
    p = cfg.evalmod.scale_primes
    if p == 1:
        return v
    bottom = top - p * cfg.evalmod_steps
    if b.type_of(v).level > bottom:  # a series that used fewer steps than its bound
        v = b.level_down(v, bottom, None, loc)
    for _ in range(p - 1):
        v = b.emit(HeOp.RESCALE, (v,), (), loc)
    return v


def _evalmod(b, y: int, cfg: BootstrapConfig, series: tuple, loc) -> int:
    """y = u/K ↦ sin(2πu) (or arcsin(sin 2πu)/(2π) with the arcsine)."""
    e = cfg.evalmod
    c = polynomial_recipe(b, y, {"coeffs": series, "basis": "chebyshev"}, loc)
    for _ in range(e.double_angle):
        sq = b.multiply(c, c, loc, auto=True)
        c = b.add_const(b.add(sq, sq, loc, auto=True), 1, loc, subtract=True, bound=_SLACK)
    if e.arcsine_degree:
        c = polynomial_recipe(b, c, {"coeffs": arcsine_series(e.arcsine_degree)}, loc)
    return c


def bootstrap_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    """Expand a BOOTSTRAP (see the module docstring)."""
    params = b.params
    cfg = params.bootstrap
    if params.scheme != "ckks" or cfg is None:
        raise BootstrapError("bootstrap needs CKKS parameters with bootstrap=fhec.BootstrapConfig(...)", loc)
    cts, stc, series = _plan(params.N, cfg)
    problem = execution_problem(params)
    if problem is not None:  # a cost study still compiles; executions refuse (check_bootstrap_inputs)
        warn_at(problem + " Running this program will raise PrecisionError.", PrecisionWarning, loc)
    top = params.top_level
    q0 = math.prod(params.moduli_at(0))
    x_bound = b.type_of(x).bound
    input_rel = 2.0 ** b.type_of(x).noise / b.type_of(x).scale
    hoisting = cfg.hoisting
    # fully hoisted DFTs are hybrid; EvalMod's relinearizations follow, so their mod-downs merge with the rescales
    ks = cfg.keyswitch or ("hybrid" if hoisting == "full" else None)
    with b.defaults(stage="modraise", keyswitch=ks):
        low, delta = _to_level_zero(b, x, cfg, loc)
        S = float(params.scale_at(top))
        h = _weight_bound(cfg, params.N)
        # |slot| <= sum |t_i| / S with |t_i| <= q_0 (1 + h) / 2: loose, but a true bound
        raised_bound = params.N * q0 * (1 + h) / 2 / S
        encapsulated = cfg.ephemeral_hamming_weight is not None
        if encapsulated:  # ModRaise under the ephemeral sparse secret: its I is small
            low = b.emit(HeOp.SWITCH_SECRET, (low,), attrs_of(to="sparse"), loc)
        w = b.emit(HeOp.MOD_RAISE, (low,), attrs_of(level=top, scale=S, bound=raised_bound), loc)
        if encapsulated:
            w = b.emit(HeOp.SWITCH_SECRET, (w,), attrs_of(to="dense"), loc)
    n = cfg.slot_count(params.N)
    with b.defaults(stage="subsum", keyswitch=ks):
        w = _subsum(b, w, n, loc)
    two = cfg.halves(params.N) == "two"
    with b.defaults(stage="cts", keyswitch=ks):
        for factor in cts:
            w = _transform(b, w, _diagonals(params, factor), hoisting, loc)
        conj = b.emit(HeOp.CONJUGATE, (w,), (), loc)
        # full packing: the halves are w + conj(w) and −i·(w − conj(w)); packed: the last
        # factor multiplied by split_halves, so w + conj(w) holds both (fhec.schemes.dft);
        # real (n = 1): w + conj(w) is the real half, and the imaginary one is message-free
        halves = [b.emit(HeOp.ADD, (w, conj), (), loc)]
        if two:
            halves.append(_monomial(b, b.emit(HeOp.SUB, (w, conj), (), loc), -1j, loc))
        # The scale-down by S/(2·q_0·K·g) ~ 2^-8/g (g = N/2n: SubSum multiplied the
        # coefficients by g) is a scalar multiply of its own (one level), after the
        # conjugation: folded into the last factor's diagonals it would cost as many bits
        # of their encoding precision, and before the conjugation its key-switch error
        # would not be scaled down with the values.
        c = S / (2 * q0 * cfg.evalmod.K * (params.N // (2 * n)))
        down = cfg.scale_down_levels(params.N)
        y_level = b.type_of(halves[0]).level - down
        with _composite(b, cfg, y_level):
            halves = [_scaled(b, v, c, down, loc) for v in halves]
        y_type = b.type_of(halves[0])
    with b.defaults(stage="evalmod", keyswitch=ks):
        with _composite(b, cfg, y_level):
            halves = [_evalmod(b, v, cfg, series, loc) for v in halves]
            halves = [_to_one_prime(b, v, cfg, y_level, loc) for v in halves]
        exit_scale = b.type_of(halves[0]).scale if cfg.evalmod.scale_primes > 1 else None
    with b.defaults(stage="stc", keyswitch=ks):
        # packed: the first factor joins the halves (re + i·im) itself; real: the one
        # factor only applies the output scaling below
        z = b.emit(HeOp.ADD, (halves[0], _monomial(b, halves[1], 1j, loc)), (), loc) if two else halves[0]
        first = q0 / delta / (1.0 if cfg.evalmod.arcsine_degree else 2 * math.pi)
        hints = {} if x_bound is None else {"bound": x_bound * _SLACK}
        for i, factor in enumerate(stc):
            if i == len(stc) - 1:
                out_scale = params.scale_at(b.type_of(z).level - 1)
                hints["noise"] = output_noise(params, cfg, y_type.noise, y_type.scale, delta, out_scale, input_rel,
                                              exit_scale)
            z = _transform(b, z, _diagonals(params, factor, first if i == 0 else 1.0), hoisting, loc,
                           hints if i == len(stc) - 1 else None, stage="stc")
    return z
