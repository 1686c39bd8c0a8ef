"""Metadata rules of every HE op: how level and scale change, and when an op is illegal.

These are pure functions of (params, level, scale); the eager evaluator applies them to
ciphertexts and the DSL's type inference applies them to IR values, so both always
agree on levels and scales.

CKKS scales are floats (see `CKKSParams`); BGV "scales" are plaintext factors in Z_t.
"""

from __future__ import annotations

import math

from fhec.errors import LevelExhaustedError, PrecisionError, ScaleMismatchError
from fhec.schemes.params import Params


def scale_tolerance(params: Params) -> float:
    """Relative scale difference under which two CKKS scales count as equal.

    Level adjustment (`level_down_constant`) leaves a mismatch of about 2^-scale_bits;
    anything above 2^-(scale_bits-4) is a real mismatch that would cost precision.
    """
    return 2.0 ** -(params.scale_bits - 4)


def scales_match(params: Params, s1, s2) -> bool:
    """Whether two operands may be added without adjusting one of them."""
    if params.scheme == "bgv":
        return s1 % params.plain_modulus == s2 % params.plain_modulus
    return abs(s1 / s2 - 1.0) <= scale_tolerance(params)


def check_add_scales(params: Params, s1, s2, where: str | None = None) -> None:
    """Raise `ScaleMismatchError` unless two CKKS operands of an addition have matching scales."""
    if params.scheme == "ckks" and not scales_match(params, s1, s2):
        raise ScaleMismatchError(
            f"cannot add operands with scales 2^{math.log2(s1):.3f} and 2^{math.log2(s2):.3f}: "
            f"rescale the product first (ct.rescale() / Evaluator.rescale), or use rescale='auto'.",
            where,
        )


def multiply_scale(params: Params, s1, s2):
    """Scale of a product."""
    if params.scheme == "bgv":
        return (s1 * s2) % params.plain_modulus
    return s1 * s2


def rescale_prime(params: Params, level: int) -> int:
    """The prime a rescale / modulus switch at `level` divides by (the last limb)."""
    return params.moduli[params.limbs_at(level) - 1]


def check_level(params: Params, level: int, op: str, where: str | None = None) -> None:
    """Raise `LevelExhaustedError` if no limb is left to drop at `level`."""
    if level <= 0:
        raise LevelExhaustedError(
            f"{op} needs a level to consume but the ciphertext is at level 0; "
            f"increase `levels` in the parameters (now {params.levels}) or reduce the program's depth.",
            where,
        )


def rescale_result(params: Params, level: int, scale) -> tuple[int, float]:
    """(level, scale) after a CKKS rescale. Raises `LevelExhaustedError` at level 0."""
    check_level(params, level, "rescale")
    return level - 1, scale / rescale_prime(params, level)


def check_rescale_keeps_a_bit(params: Params, level: int, scale, where: str | None = None, *,
                              receiver: str = "this value") -> None:
    """CKKS: refuse a rescale whose result's scale would lie below 2, with `PrecisionError`:
    not one bit of the value is left and it would decrypt to noise (a fresh ciphertext at
    scale ~ q, rescaled, gave -10.7 bits silently). `where`: the DSL line, when there is
    one; `receiver`: how the message names the operand."""
    if level <= 0:
        return  # check_level says what is wrong there
    q = rescale_prime(params, level)
    left = math.log2(scale) - math.log2(q)
    if left < 1.0:
        raise PrecisionError(
            f"rescale() divides by the level's prime q ≈ 2^{math.log2(q):.1f}, but {receiver}'s scale is "
            f"2^{math.log2(scale):.1f}: the result's would be 2^{left:.1f}, leaving no bit of the value (it would "
            f"decrypt to noise). Rescale products (scale ≈ 2^{2 * math.log2(q):.0f}) once each; to drop a level "
            f"and keep the scale use mod_switch().",
            where,
        )


def mod_switch_result(params: Params, level: int, scale) -> tuple[int, float | int]:
    """(level, scale) after dropping one limb: CKKS keeps the scale, BGV multiplies its factor by q^{-1} mod t."""
    check_level(params, level, "mod_switch")
    if params.scheme == "bgv":
        t = params.plain_modulus
        return level - 1, (scale * pow(rescale_prime(params, level), -1, t)) % t
    return level - 1, scale


def plain_multiply_scale(params: Params, level: int) -> float:
    """Scale at which a plaintext/float constant multiplied into a level-`level` CKKS
    ciphertext is encoded: the prime the next rescale divides by, so that the rescale
    restores the ciphertext's scale exactly (2**scale_bits at level 0)."""
    return float(rescale_prime(params, level)) if level > 0 else float(2**params.scale_bits)


def level_down_constant(
    params: Params, scale: float, level: int, target: int, target_scale: float | None = None, where: str | None = None
) -> int:
    """CKKS: the integer c such that multiplying a ciphertext (scale, dropped to
    level target+1) by c and rescaling gives a level-`target` ciphertext at
    `target_scale` (default: the canonical ``scale_at(target)``), up to 2^-scale_bits.

    Raises `ScaleMismatchError` when the needed constant is too small to be precise
    (the operand's scale is far above the target's: rescale it first), and
    `LevelExhaustedError` when target >= level.
    """
    if target >= level:
        raise LevelExhaustedError(f"cannot bring a level-{level} ciphertext down to level {target}", where)
    goal = params.scale_at(target) if target_scale is None else target_scale
    c = round(goal * rescale_prime(params, target + 1) / scale)
    if c < 2**10:
        raise ScaleMismatchError(
            f"cannot match scale 2^{math.log2(scale):.2f} at level {level} to level {target}'s scale "
            f"2^{math.log2(goal):.2f}: rescale the operand first.",
            where,
        )
    return c


def bgv_folded_constant(params: Params, value: int, factor: int) -> int:
    """BGV: the centered integer k ≡ value·factor (mod t) by which a ciphertext is multiplied
    to multiply its message by `value` and its plaintext factor by `factor` in one product
    (a MUL_CONST with a ``factor``): |k| <= t/2, where the two multiplies it replaces grow
    the noise by |value|·|factor|."""
    t = params.plain_modulus
    k = (int(value) * int(factor)) % t
    return k - t if k > t // 2 else k


def bgv_align_constant(params: Params, from_factor: int, to_factor: int) -> int:
    """BGV: the centered constant c with c·from ≡ to (mod t), to align plaintext factors before an add."""
    t = params.plain_modulus
    c = (to_factor * pow(from_factor, -1, t)) % t
    return c - t if c > t // 2 else c
