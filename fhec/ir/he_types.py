"""Type rules of the primitive HE ops: level, scale, parts, noise and keys of each result.

Each rule mirrors, step by step, what the eager `fhec.Evaluator` does to a ciphertext's
metadata, using the same `fhec.schemes.rules` and `fhec.schemes.noise` functions, so
the inferred type of every value equals (``==``, floats included) the level, scale,
parts and noise of the ciphertext the evaluator produces for it. Tests check this.

A rule raises a `FhecError` for conditions a user program can cause (a level exhausted:
it comes from `rules` with the DSL location) and `IRTypeError` (an `InternalError`)
when a node breaks the IR's contract (operands at different levels, a 3-part operand
of a rotation, ...): the builder never emits such nodes, so that is a bug.

The high-level ops are typed by `fhec.ir.he_build.infer_type`, which dry-runs their
expansion.
"""

from __future__ import annotations

import math

import numbers
from dataclasses import replace
from typing import Any, Callable, Mapping

from fhec.errors import InternalError
from fhec.ir.he import Const, HeOp, HeType, Key, KeyKind, ValueKind
from fhec.schemes import noise as nz
from fhec.schemes import ranges
from fhec.schemes import rules
from fhec.schemes.params import Params


class IRTypeError(InternalError):
    """A node violates the HE IR's typing contract."""


Rule = Callable[[Params, Mapping[str, Any], tuple[HeType, ...], "str | None"], HeType]


# -- helpers ----------------------------------------------------------------------------


def row_length(params: Params) -> int:
    """Slots a rotation cycles through: all N/2 CKKS slots, one BGV row of N/2."""
    return params.slots if params.scheme == "ckks" else params.N // 2


def rotation_key(params: Params, step: int) -> Key:
    return Key(KeyKind.ROTATION, int(step) % row_length(params))


NOISE_SATURATION_BITS = 16.0
"""How far a CKKS noise estimate may exceed its value's scale (log2): beyond the scale
the estimate says only "no precision left" (already reported), and the worst-case rules
compound it without limit (a polynomial raises the relative error to its degree's
power), until 2**noise overflows a float in a deep bootstrapped program."""


def noise_saturated(params: Params, t: HeType) -> bool:
    """CKKS: whether `t`'s noise estimate sits at its ceiling, log2(scale) +
    `NOISE_SATURATION_BITS`. There it no longer bounds the error (the cap cut it off), so
    nothing may be read from it but "no precision left": the error may be as large as the
    value or larger, and a precision relative to the value's bound is no claim at all."""
    if params.scheme != "ckks" or not t.is_cipher or not t.scale:
        return False
    # the cap is exact where it is applied; a rescale of a capped value moves noise and scale
    # by the same log2(q), up to float rounding
    return t.noise >= math.log2(t.scale) + NOISE_SATURATION_BITS - 1e-9


def cipher(
    params: Params, level: int, scale, parts: int, noise: float, keys: tuple[Key, ...] = (), bound: float | None = None
) -> HeType:
    """A ciphertext type; `bound` (|slot| bound) is kept for CKKS only. A CKKS noise
    estimate saturates at log2(scale) + `NOISE_SATURATION_BITS`."""
    if params.scheme == "ckks" and scale:
        noise = min(noise, math.log2(scale) + NOISE_SATURATION_BITS)
    return HeType(ValueKind.CIPHER, params.slots, level, scale, parts, noise, keys, _bound(params, bound))


def plain(params: Params, bound: float | None = None) -> HeType:
    return HeType(ValueKind.PLAIN, params.slots, bound=_bound(params, bound))


def _bound(params: Params, bound: float | None) -> float | None:
    return float(bound) if params.scheme == "ckks" and bound is not None else None


def declared_bound(attrs: Mapping[str, Any]) -> float:
    """The |slot| bound an INPUT / PLAIN_INPUT declares (`ranges.DEFAULT_BOUND` when absent)."""
    return float(attrs.get("bound", ranges.DEFAULT_BOUND))


def const_bound(value: Any) -> float:
    """max |value| of a scalar or `Const` constant."""
    if isinstance(value, Const):
        return value.abs_max()
    return float(abs(value))


def _sum_bound(*bounds: float | None) -> float | None:
    return None if any(b is None for b in bounds) else float(sum(bounds))


def _product_bound(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else float(a) * float(b)


def keyswitch_method(params: Params, attrs: Mapping[str, Any]) -> str:
    """The key-switching method of a node: its ``keyswitch`` attribute or the parameters' default."""
    return attrs.get("keyswitch") or params.keyswitch


def is_int_scalar(value: Any) -> bool:
    """Python/numpy integers multiply exactly (scale unchanged); bools are rejected earlier."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def plain_scale_for(params: Params, level: int, scale) -> float:
    """CKKS: the scale at which a constant or plaintext multiplying a (level, scale)
    ciphertext is encoded.

    Chosen so that the product, once rescaled, lands exactly on the canonical scale of
    the level below (``scale * ps / q_level == scale_at(level - 1)`` up to rounding):
    then every auto-rescaled value at a level has that level's scale and additions never
    need a correction. When the operand's scale is far from canonical (a manual-mode
    program that did not rescale), it falls back to the rescale prime, as the evaluator
    does for floats (`rules.plain_multiply_scale`). At level 0 there is nothing to
    rescale by: 2**scale_bits.
    """
    if level == 0:
        return rules.plain_multiply_scale(params, 0)
    q = rules.rescale_prime(params, level)
    landing = params.scale_at(level - 1) * q / scale
    if 0.5 <= landing / q <= 2.0:
        return landing
    return rules.plain_multiply_scale(params, level)


def with_noise_hint(t: HeType, attrs: Mapping[str, Any]) -> HeType:
    """`t` with the node's hints applied: its ``noise`` attribute as its noise, and its
    ``bound`` attribute as an upper limit on its bound, when it has them. A recipe that
    knows its result better than the generic per-op rules states it on the node: the
    error of a linear transform from its diagonals' magnitudes, of a polynomial from its
    derivative, of a bootstrap's rescales (the evaluator applies the same ``noise``
    attribute, `fhec.evaluate.execute_nodes`, so types and ciphertexts still agree); the
    value bound of a polynomial from its maximum over the operand's range
    (`fhec.ir.he_polynomial.value_bound`). A bound hint only ever tightens: the rules'
    own bound stays when it is smaller."""
    if t.kind not in (ValueKind.CIPHER, ValueKind.EXTENDED):
        return t
    if "noise" in attrs:
        t = replace(t, noise=float(attrs["noise"]))
    if "bound" in attrs and t.bound is not None:
        t = replace(t, bound=min(t.bound, float(attrs["bound"])))
    return t


def _same(t: HeType) -> HeType:
    """The type of an op that leaves level, scale, parts and noise as they are (its own
    keys, none, replace the operand's)."""
    return replace(t, keys=()) if t.keys else t


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise IRTypeError(message)


# The checks every rule runs format their message only when they fail: they run once per
# node per rebuild, hundreds of thousands of times on a wide program.


def _ct(t: HeType, op: HeOp, parts: tuple[int, ...] = (2, 3)) -> HeType:
    if t.kind is not ValueKind.CIPHER:
        raise IRTypeError(f"{op.value}: operand must be a ciphertext, got a plaintext")
    if t.parts not in parts:
        raise IRTypeError(f"{op.value}: operand has {t.parts} parts, expected {' or '.join(map(str, parts))}")
    return t


def _pt(t: HeType, op: HeOp) -> None:
    if t.kind is not ValueKind.PLAIN:
        raise IRTypeError(f"{op.value}: second operand must be a plain input")


def _scheme(params: Params, op: HeOp, scheme: str) -> None:
    _need(params.scheme == scheme, f"{op.value} exists only in {scheme.upper()}")


def _same_level(a: HeType, b: HeType, op: HeOp) -> None:
    if a.level != b.level:
        raise IRTypeError(f"{op.value}: operands at levels {a.level} and {b.level}")


def _check_value(params: Params, value: Any, op: HeOp) -> None:
    if isinstance(value, Const):
        if value.shape != (params.slots,):
            raise IRTypeError(f"{op.value}: constant of shape {value.shape}")
    elif not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise IRTypeError(f"{op.value}: bad constant {value!r}")


# -- rules ------------------------------------------------------------------------------


def _input(params, attrs, args, loc):
    level = attrs["level"]
    _need(isinstance(level, int) and 0 <= level <= params.top_level, f"input level {level!r} out of range")
    scale = params.scale_at(level) if params.scheme == "ckks" else 1
    bound = declared_bound(attrs)
    _need(bound > 0 and bound == bound, f"input bound {bound!r} must be positive")
    return cipher(params, level, scale, 2, nz.fresh_noise(params, public_key=False), bound=bound)


def _plain_input(params, attrs, args, loc):
    return plain(params, declared_bound(attrs))


def _output(params, attrs, args, loc):
    (a,) = args
    return _same(_ct(a, HeOp.OUTPUT))


def _additive(op: HeOp) -> Rule:
    def rule(params, attrs, args, loc):
        a, b = args
        _ct(a, op)
        _ct(b, op)
        _same_level(a, b, op)
        if params.scheme == "ckks":
            if not rules.scales_match(params, a.scale, b.scale):
                raise IRTypeError(f"{op.value}: scales {a.scale} and {b.scale} differ")
        elif a.scale != b.scale:
            raise IRTypeError(f"{op.value}: plaintext factors {a.scale} and {b.scale} differ")
        noise = nz.add_noise(a.noise, b.noise)
        bound = _sum_bound(a.bound, b.bound)  # a ``bound`` hint tightens it (`with_noise_hint`)
        return cipher(params, a.level, a.scale, max(a.parts, b.parts), noise, bound=bound)

    return rule


def _neg(params, attrs, args, loc):
    (a,) = args
    return _same(_ct(a, HeOp.NEG))


def _with_plain(op: HeOp) -> Rule:
    def rule(params, attrs, args, loc):
        a, w = args
        _ct(a, op)
        _pt(w, op)
        return replace(_same(a), bound=_sum_bound(a.bound, w.bound))

    return rule


def _with_const(op: HeOp) -> Rule:
    def rule(params, attrs, args, loc):
        (a,) = args
        _ct(a, op)
        _check_value(params, attrs["value"], op)
        bound = _sum_bound(a.bound, _bound(params, const_bound(attrs["value"])))
        return replace(_same(a), bound=bound)

    return rule


def _mul(params, attrs, args, loc):
    a, b = args
    _ct(a, HeOp.MUL, (2,))
    _ct(b, HeOp.MUL, (2,))
    _same_level(a, b, HeOp.MUL)
    scale = rules.multiply_scale(params, a.scale, b.scale)
    noise = nz.multiply_noise(params, a.noise, a.scale, b.noise, b.scale, nz.magnitude(a.bound), nz.magnitude(b.bound))
    return cipher(params, a.level, scale, 3, noise, bound=_product_bound(a.bound, b.bound))


def _relinearize(params, attrs, args, loc):
    (a,) = args
    _ct(a, HeOp.RELINEARIZE, (3,))
    noise = nz.add_noise(a.noise, nz.keyswitch_noise(params, a.level, keyswitch_method(params, attrs)))
    return cipher(params, a.level, a.scale, 2, noise, (Key(KeyKind.RELIN),), a.bound)


def _times_plain(params, a: HeType, plain_scale, factor_bound: float | None, magnitude: float = 1.0,
                 scalar: bool = False) -> HeType:
    """The evaluator's `multiply_plain`: scales multiply, plaintext-multiply noise (the
    error scaled by `magnitude`, a constant's max |value| or a plain input's declared
    bound, at least 1; the encoding's rounding scaled by the
    ciphertext's `noise.magnitude`, one coefficient's for a `scalar`); the bound is
    multiplied by the plaintext's (`factor_bound`)."""
    if params.scheme == "ckks":
        _need(isinstance(plain_scale, float), f"CKKS plaintext multiply needs a float plain_scale, got {plain_scale!r}")
        noise = nz.plain_multiply_noise(params, a.noise, a.scale, plain_scale, magnitude, nz.magnitude(a.bound), scalar)
    else:
        _need(plain_scale == 1, f"BGV plaintexts are encoded with factor 1, got {plain_scale!r}")
        noise = nz.plain_multiply_noise(params, a.noise, a.scale, 1.0)
    scale = rules.multiply_scale(params, a.scale, plain_scale)
    return cipher(params, a.level, scale, a.parts, noise, bound=_product_bound(a.bound, factor_bound))


def _times_integer(params, a: HeType, c: int, scale) -> HeType:
    """The evaluator's `_times_integer`: exact, scale set explicitly. The message is
    multiplied by c when the scale stays (a multiply by an integer constant); when the
    scale absorbs c (a CKKS level adjustment) the message, and its bound, stay."""
    noise = nz.scalar_multiply_noise(params, a.noise, c)
    bound = _product_bound(a.bound, abs(c)) if scale == a.scale else a.bound
    return cipher(params, a.level, scale, a.parts, noise, bound=bound)


def _mul_plain(params, attrs, args, loc):
    a, w = args
    _ct(a, HeOp.MUL_PLAIN)
    _pt(w, HeOp.MUL_PLAIN)
    # the ciphertext's error comes out times the plain values: at most their declared bound
    # (x * w with |w| <= 1000 was estimated at 19.1 bits where 12 were measured)
    return _times_plain(params, a, attrs["plain_scale"], w.bound, nz.magnitude(w.bound))


def _mul_const(params, attrs, args, loc):
    (a,) = args
    _ct(a, HeOp.MUL_CONST)
    value, plain_scale = attrs["value"], attrs["plain_scale"]
    _check_value(params, value, HeOp.MUL_CONST)
    if is_int_scalar(value):
        _need(plain_scale is None, "mul_const by an integer takes no plain_scale")
        factor = attrs.get("factor")
        if factor is None:
            return _times_integer(params, a, int(value), a.scale)
        _need(params.scheme == "bgv" and is_int_scalar(factor), f"mul_const factor {factor!r} is for BGV integers")
        k = rules.bgv_folded_constant(params, int(value), int(factor))
        return _times_integer(params, a, k, (a.scale * int(factor)) % params.plain_modulus)
    _need(params.scheme == "ckks" or isinstance(value, Const), "BGV constants are integers")
    return _times_plain(params, a, plain_scale, const_bound(value), const_bound(value), not isinstance(value, Const))


def _mul_monomial(params, attrs, args, loc):
    """Mirrors `Evaluator.multiply_monomial`: exact, so level, scale and error stay; each
    slot is multiplied by a root of unity, so the bound stays too."""
    (a,) = args
    _ct(a, HeOp.MUL_MONOMIAL)
    _need(isinstance(attrs["power"], int), f"mul_monomial: power {attrs['power']!r} is not an integer")
    return _same(a)


def _mul_factor(params, attrs, args, loc):
    (a,) = args
    _scheme(params, HeOp.MUL_FACTOR, "bgv")
    _ct(a, HeOp.MUL_FACTOR)
    c = attrs["value"]
    _need(is_int_scalar(c), "mul_factor takes an integer")
    return _times_integer(params, a, int(c), (a.scale * int(c)) % params.plain_modulus)


def _rescale(params, attrs, args, loc):
    (a,) = args
    _scheme(params, HeOp.RESCALE, "ckks")
    _ct(a, HeOp.RESCALE)
    rules.check_level(params, a.level, "rescale", loc)
    level, scale = rules.rescale_result(params, a.level, a.scale)
    noise = nz.rescale_noise(params, a.noise, rules.rescale_prime(params, a.level))
    # A recipe that knows the error better (the bootstrap's scale-downs and its result,
    # `fhec.ir.he_bootstrap`) says so with a ``noise`` attribute; the evaluator applies
    # the same attribute (`fhec.evaluate.EXECUTORS`), so types and ciphertexts agree.
    noise = float(attrs.get("noise", noise))
    return cipher(params, level, scale, a.parts, noise, bound=a.bound)


def _mod_raise(params, attrs, args, loc):
    """Mirrors `Evaluator.mod_raise`: level 0 -> `level`, relabelled with `scale`; the error
    is unchanged (the q_0·I the lift adds is message, which EvalMod removes), and the
    value's slots are bounded by the ``bound`` attribute the bootstrap recipe derives."""
    (a,) = args
    _scheme(params, HeOp.MOD_RAISE, "ckks")
    _ct(a, HeOp.MOD_RAISE, (2,))
    _need(a.level == 0, f"mod_raise: operand at level {a.level}, not 0")
    level, scale, bound = attrs["level"], attrs["scale"], attrs["bound"]
    _need(isinstance(level, int) and 0 < level <= params.top_level, f"mod_raise to level {level!r}")
    _need(isinstance(scale, float) and scale > 0, f"mod_raise needs a positive float scale, got {scale!r}")
    _need(isinstance(bound, float) and bound > 0, f"mod_raise needs a positive float bound, got {bound!r}")
    return cipher(params, level, scale, 2, a.noise, bound=bound)


def _mod_switch_type(params, a: HeType, loc) -> HeType:
    rules.check_level(params, a.level, "mod_switch", loc)
    level, scale = rules.mod_switch_result(params, a.level, a.scale)
    if params.scheme == "ckks":  # dropping a limb leaves the error as it is
        return cipher(params, level, scale, a.parts, a.noise, bound=a.bound)
    return cipher(params, level, scale, a.parts, nz.rescale_noise(params, a.noise, rules.rescale_prime(params, a.level)))


def _mod_switch(params, attrs, args, loc):
    (a,) = args
    _ct(a, HeOp.MOD_SWITCH)
    return _mod_switch_type(params, a, loc)


def _level_down(params, attrs, args, loc):
    """Mirrors `Evaluator.level_down`."""
    (a,) = args
    _ct(a, HeOp.LEVEL_DOWN)
    level, target = attrs["level"], attrs["scale"]
    _need(isinstance(level, int) and 0 <= level < a.level, f"level_down from level {a.level} to {level!r}")
    t = a
    if params.scheme == "bgv":
        _need(target is None, "BGV level_down takes no scale")
        while t.level > level:
            t = _mod_switch_type(params, t, loc)
        return t
    _need(isinstance(target, float), f"CKKS level_down needs a float target scale, got {target!r}")
    if rules.scales_match(params, a.scale, target):
        while t.level > level:
            t = _mod_switch_type(params, t, loc)
        return cipher(params, t.level, a.scale, t.parts, t.noise, bound=a.bound)
    c = rules.level_down_constant(params, a.scale, a.level, level, target_scale=target, where=loc)
    while t.level > level + 1:
        t = _mod_switch_type(params, t, loc)
    t = _times_integer(params, t, c, t.scale * c)
    new_level, new_scale = rules.rescale_result(params, t.level, t.scale)
    noise = nz.rescale_noise(params, t.noise, rules.rescale_prime(params, t.level))
    return cipher(params, new_level, new_scale, t.parts, noise, bound=a.bound)


def _galois(op: HeOp, key_of: Callable[[Params, Mapping[str, Any]], Key], scheme: str | None) -> Rule:
    def rule(params, attrs, args, loc):
        (a,) = args
        if scheme:
            _scheme(params, op, scheme)
        _ct(a, op, (2,))
        key = key_of(params, attrs)
        noise = nz.add_noise(a.noise, nz.keyswitch_noise(params, a.level, keyswitch_method(params, attrs)))
        return cipher(params, a.level, a.scale, 2, noise, (key,), a.bound)

    return rule


NAMED_KEYS = {"relin": Key(KeyKind.RELIN), "to-sparse": Key(KeyKind.TO_SPARSE), "to-dense": Key(KeyKind.TO_DENSE)}
"""A KEY_MULT's string ``source`` -> its key (the others are Galois elements)."""
SECRET_KEYS = {"sparse": NAMED_KEYS["to-sparse"], "dense": NAMED_KEYS["to-dense"]}
"""SWITCH_SECRET's ``to`` attribute -> the key it needs."""


def _switch_secret(params, attrs, args, loc):
    """A hybrid key switch of a bootstrap's ciphertext to the ephemeral sparse secret or
    back (`fhec.schemes.keys.SECRET_SWITCHES`): value, level and scale unchanged."""
    (a,) = args
    _scheme(params, HeOp.SWITCH_SECRET, "ckks")
    _ct(a, HeOp.SWITCH_SECRET, (2,))
    _need(attrs.get("to") in SECRET_KEYS, f"switch_secret: to={attrs.get('to')!r} is not 'sparse' or 'dense'")
    _need(params.bootstrap is not None and params.bootstrap.ephemeral_hamming_weight is not None,
          "switch_secret: the parameters' bootstrap has no ephemeral secret (ephemeral_hamming_weight)")
    noise = nz.add_noise(a.noise, nz.keyswitch_noise(params, a.level, "hybrid"))
    return cipher(params, a.level, a.scale, 2, noise, (SECRET_KEYS[attrs["to"]],), a.bound)


def _rotation_key_of(params, attrs) -> Key:
    step = attrs["step"]
    _need(isinstance(step, int) and step % row_length(params) != 0, f"rotate by {step!r} is not a rotation")
    return rotation_key(params, step)


def _ks_input(t: HeType, op: HeOp, kinds: tuple[ValueKind, ...]) -> None:
    _need(t.kind in kinds, f"{op.value}: operand must be {' or '.join(k.value for k in kinds)}, got {t.kind.value}")


def _automorphism(params, attrs, args, loc):
    (a,) = args
    _ct(a, HeOp.AUTOMORPHISM, (2,))
    g = attrs["galois"]
    _need(isinstance(g, int) and g % 2 == 1 and 0 < g < 2 * params.N, f"automorphism: bad Galois element {g!r}")
    return cipher(params, a.level, a.scale, 2, a.noise, bound=a.bound)


def _mod_up(params, attrs, args, loc):
    (a,) = args
    _ct(a, HeOp.MOD_UP)
    _need(attrs["part"] == a.parts - 1, f"mod_up: part {attrs['part']!r} is not the last of {a.parts}")
    _need(attrs["method"] in ("bv", "hybrid"), f"mod_up: method {attrs['method']!r}")
    return HeType(ValueKind.DIGITS, params.slots, a.level, None, 1, a.noise)


def _digits_automorphism(params, attrs, args, loc):
    (d,) = args
    _ks_input(d, HeOp.DIGITS_AUTOMORPHISM, (ValueKind.DIGITS,))
    g = attrs["galois"]
    _need(isinstance(g, int) and g % 2 == 1 and 0 < g < 2 * params.N, f"digits_automorphism: bad Galois element {g!r}")
    return d


def _key_mult(params, attrs, args, loc):
    (d,) = args
    _ks_input(d, HeOp.KEY_MULT, (ValueKind.DIGITS,))
    source, step = attrs["source"], attrs["step"]
    if isinstance(source, str):
        _need(source in NAMED_KEYS, f"key_mult: unknown key source {source!r}")
        key = NAMED_KEYS[source]
    elif step is not None:
        key = rotation_key(params, step)
    else:
        key = Key(KeyKind.CONJUGATION)
    noise = nz.keyswitch_noise(params, d.level, attrs["method"])
    return HeType(ValueKind.KS_PAIR, params.slots, d.level, None, 2, noise, (key,))


def _mod_down(params, attrs, args, loc):
    (u,) = args
    _ks_input(u, HeOp.MOD_DOWN, (ValueKind.KS_PAIR,))
    return HeType(ValueKind.KS_PAIR, params.slots, u.level, None, 2, u.noise)


def _ks_add(params, attrs, args, loc):
    a, u = args
    _ct(a, HeOp.KS_ADD)
    _ks_input(u, HeOp.KS_ADD, (ValueKind.KS_PAIR,))
    _need(a.level == u.level, f"ks_add: levels {a.level} and {u.level} differ")
    return cipher(params, a.level, a.scale, 2, nz.add_noise(a.noise, u.noise), bound=a.bound)


# -- double hoisting: values over Q·P -------------------------------------------------
# An extended value is typed like the ciphertext it becomes after MOD_DOWN_EXT (level,
# scale, noise, bound); only its kind differs, so each rule is its Q counterpart's.


def _as_cipher(t: HeType, op: HeOp) -> HeType:
    _ks_input(t, op, (ValueKind.EXTENDED,))
    return replace(t, kind=ValueKind.CIPHER)


def _as_extended(t: HeType) -> HeType:
    return replace(t, kind=ValueKind.EXTENDED)


def _rotate_ext(params, attrs, args, loc):
    _need(keyswitch_method(params, attrs) == "hybrid", "rotate_ext: double hoisting needs hybrid key switching")
    _need(bool(params.special_moduli), "rotate_ext: the parameters have no special primes")
    return _as_extended(_galois(HeOp.ROTATE, _rotation_key_of, None)(params, attrs, args, loc))


def _ks_add_ext(params, attrs, args, loc):
    return _as_extended(_ks_add(params, attrs, args, loc))


def _mul_const_ext(params, attrs, args, loc):
    (a,) = args
    value = attrs["value"]
    _need(isinstance(value, Const), "mul_const_ext multiplies by a slot vector")
    return _as_extended(_mul_const(params, attrs, (_as_cipher(a, HeOp.MUL_CONST_EXT),), loc))


def _add_ext(params, attrs, args, loc):
    a, b = (_as_cipher(t, HeOp.ADD_EXT) for t in args)
    return _as_extended(_additive(HeOp.ADD_EXT)(params, attrs, (a, b), loc))


def _mod_down_ext(params, attrs, args, loc):
    (a,) = args
    return _same(_as_cipher(a, HeOp.MOD_DOWN_EXT))


# -- mod-down merged with the rescale that follows it (fhec.passes.he_fuse_rescale) ------


def _relinearize_ext(params, attrs, args, loc):
    _need(keyswitch_method(params, attrs) == "hybrid", "relinearize_ext: a merged mod-down needs hybrid key switching")
    _need(bool(params.special_moduli), "relinearize_ext: the parameters have no special primes")
    return _as_extended(_relinearize(params, attrs, args, loc))


def _add_ext_q(params, attrs, args, loc):
    a, c = args
    _ct(c, HeOp.ADD_EXT_Q, (2,))
    return _as_extended(_additive(HeOp.ADD_EXT_Q)(params, attrs, (_as_cipher(a, HeOp.ADD_EXT_Q), c), loc))


def _rescale_ext(params, attrs, args, loc):
    """As RESCALE of the value's mod-down, with the merged division's rounding
    (`fhec.schemes.noise.rescale_ext_noise`); a ``noise`` attribute replaces the estimate."""
    (a,) = args
    t = _as_cipher(a, HeOp.RESCALE_EXT)
    out = _rescale(params, {k: v for k, v in attrs.items() if k != "noise"}, (t,), loc)
    noise = nz.rescale_ext_noise(params, t.noise, rules.rescale_prime(params, t.level), t.level)
    return replace(out, noise=float(attrs.get("noise", noise)))


PRIMITIVE_RULES: dict[HeOp, Rule] = {
    HeOp.INPUT: _input,
    HeOp.PLAIN_INPUT: _plain_input,
    HeOp.OUTPUT: _output,
    HeOp.ADD: _additive(HeOp.ADD),
    HeOp.SUB: _additive(HeOp.SUB),
    HeOp.NEG: _neg,
    HeOp.ADD_PLAIN: _with_plain(HeOp.ADD_PLAIN),
    HeOp.SUB_PLAIN: _with_plain(HeOp.SUB_PLAIN),
    HeOp.ADD_CONST: _with_const(HeOp.ADD_CONST),
    HeOp.SUB_CONST: _with_const(HeOp.SUB_CONST),
    HeOp.MUL: _mul,
    HeOp.RELINEARIZE: _relinearize,
    HeOp.MUL_PLAIN: _mul_plain,
    HeOp.MUL_CONST: _mul_const,
    HeOp.MUL_FACTOR: _mul_factor,
    HeOp.MUL_MONOMIAL: _mul_monomial,
    HeOp.RESCALE: _rescale,
    HeOp.MOD_SWITCH: _mod_switch,
    HeOp.LEVEL_DOWN: _level_down,
    HeOp.MOD_RAISE: _mod_raise,
    HeOp.ROTATE: _galois(HeOp.ROTATE, _rotation_key_of, None),
    HeOp.CONJUGATE: _galois(HeOp.CONJUGATE, lambda p, a: Key(KeyKind.CONJUGATION), "ckks"),
    HeOp.SWITCH_SECRET: _switch_secret,
    HeOp.SWAP_ROWS: _galois(HeOp.SWAP_ROWS, lambda p, a: Key(KeyKind.CONJUGATION), "bgv"),
    HeOp.AUTOMORPHISM: _automorphism,
    HeOp.MOD_UP: _mod_up,
    HeOp.DIGITS_AUTOMORPHISM: _digits_automorphism,
    HeOp.KEY_MULT: _key_mult,
    HeOp.MOD_DOWN: _mod_down,
    HeOp.KS_ADD: _ks_add,
    HeOp.ROTATE_EXT: _rotate_ext,
    HeOp.KS_ADD_EXT: _ks_add_ext,
    HeOp.MUL_CONST_EXT: _mul_const_ext,
    HeOp.ADD_EXT: _add_ext,
    HeOp.MOD_DOWN_EXT: _mod_down_ext,
    HeOp.RELINEARIZE_EXT: _relinearize_ext,
    HeOp.ADD_EXT_Q: _add_ext_q,
    HeOp.RESCALE_EXT: _rescale_ext,
}

ARITY: dict[HeOp, int] = {
    HeOp.INPUT: 0, HeOp.PLAIN_INPUT: 0, HeOp.ADD: 2, HeOp.SUB: 2, HeOp.MUL: 2,
    HeOp.ADD_PLAIN: 2, HeOp.SUB_PLAIN: 2, HeOp.MUL_PLAIN: 2, HeOp.KS_ADD: 2,
    HeOp.KS_ADD_EXT: 2, HeOp.ADD_EXT: 2, HeOp.ADD_EXT_Q: 2,
}
"""Number of arguments of each op (1 when not listed)."""


def arity(op: HeOp) -> int:
    return ARITY.get(op, 1)


def estimated_bits(params: Params, t: HeType) -> float | None:
    """CKKS: estimated bits of precision of a value's worst slot
    (`fhec.schemes.noise.precision_bits`); BGV: its estimated noise budget in bits (the
    formulas of `fhec.schemes.noise`). None for plaintexts."""
    if not t.is_cipher:
        return None
    import math

    if params.scheme == "ckks":
        return nz.precision_bits(params, t.scale, t.noise)
    return sum(math.log2(q) for q in params.moduli_at(t.level)) - 1 - t.noise - 3
