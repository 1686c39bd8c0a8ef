"""CKKS value ranges: when a message of bounded magnitude fits the modulus left at its level.

A CKKS ciphertext at level ``l`` and scale Δ decrypts to ``[m + e]_{Q_l}``, the
centered residue modulo ``Q_l``. It is the right polynomial only while every
coefficient of ``m + e`` stays inside ``(−Q_l/2, Q_l/2)``; past that it wraps around
and decodes to garbage without any error.

The slot → coefficient map is the inverse canonical embedding: each coefficient is
``Δ/N`` times a sum of N terms of modulus |z_i| (the N/2 slots and their conjugates),
so a message whose slots satisfy ``|z_i| <= B`` has coefficients of at most ``B·Δ``.
The bound is tight (all slots equal to B give a constant coefficient of exactly
``B·Δ``), so no margin is needed for the message itself. The error ``e`` adds to it;
we reserve ``2^TAIL_BITS`` standard deviations of the estimated slot-domain error
(`fhec.schemes.noise`, an overestimate of its coefficient-domain size, which is √N
smaller). With the default parameters (a 32-bit q_0, 2^30 scale) that margin is well
below one part in 2^10 of ``Q_0/2``, so a bound of 1 still fits at level 0, which a
flat factor of 4 (suggested in the issue) would forbid for every default program.

`value_limit` is the largest bound that fits; `fhec.ir.he_types` propagates bounds
through the ops and `fhec.ir.he_build` compares them with it at every node, and
`fhec.schemes.encryption.encode` checks actual values at encoding time.
"""

from __future__ import annotations

import math

import numpy as np

from fhec.errors import ValueOverflowError
from fhec.schemes.params import Params

DEFAULT_BOUND = 1.0
"""The bound of an input that declares none (`p.input("x")`): |slot| <= 1."""

TAIL_BITS = 4
"""Standard deviations of the error reserved below Q_l/2, as log2 (16 σ)."""


_LOG_FLOAT_MAX = math.log(2.0) * 1023
"""Natural log of 2^1023: beyond it Q_level / 2 has no float."""


def log_half_modulus(params: Params, level: int) -> float:
    """ln(Q_level / 2)."""
    return sum(math.log(q) for q in params.moduli_at(level)) - math.log(2.0)


def half_modulus(params: Params, level: int) -> float:
    """Q_level / 2 as a float; `math.inf` beyond 2^1023 (bootstrapping parameter sets at
    N = 2^16 and 2^17 have Q of 1,200 bits and more)."""
    return params.half_q_at(level)


def _pow2(bits: float) -> float:
    """2^bits as a float, `math.inf` beyond the float range (an error estimate can pass 2^1024)."""
    return 2.0**bits if bits < 1024 else math.inf


def value_limit(params: Params, level: int, scale: float, noise: float | None = None) -> float:
    """The largest bound on |slot| a value at (`level`, `scale`) with estimated error
    `noise` (log2 std, slot domain, as `Ciphertext.noise`) can have and still decrypt.

    Returns ``(Q_level/2 − 2^(noise + TAIL_BITS)) / scale`` (0 when nothing fits), computed
    in the log domain when Q_level/2 has no float (`math.inf` when even the quotient has none).
    """
    tail = 0.0 if noise is None else _pow2(noise + TAIL_BITS)
    half = half_modulus(params, level)
    if half < math.inf:
        return max(0.0, (half - tail) / float(scale))
    log_half = log_half_modulus(params, level)
    if tail > 0 and math.log(tail) >= log_half:
        return 0.0
    log_limit = log_half + math.log1p(-tail * math.exp(-log_half)) - math.log(scale)
    return math.exp(log_limit) if log_limit < _LOG_FLOAT_MAX else math.inf


def fits(params: Params, level: int, scale: float, bound: float, noise: float | None = None) -> bool:
    """Whether a value bounded by `bound` at (`level`, `scale`) decrypts correctly."""
    return bound <= value_limit(params, level, scale, noise)


def format_bound(b: float) -> str:
    """A bound as printed in messages and in the IR (``4``, ``1.5``, ``8.19e+03``)."""
    return f"{b:.3g}"


def format_excess(value: float, limit: float) -> tuple[str, str]:
    """`value` and the `limit` it exceeds, printed with the fewest significant digits (3 or
    more) that tell them apart: at 3 digits a reach of 2 over a limit of 1.99997 would
    read "can reach 2 ... only 2 fits"."""
    for digits in range(3, 18):
        shown = f"{value:.{digits}g}", f"{limit:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return shown


def check_values_fit(params: Params, values, level: int, scale: float, noise: float | None, what: str) -> None:
    """Raise `ValueOverflowError` unless CKKS `values` encoded at (`level`, `scale`)
    stay below Q_level/2 (with the error tail of `noise`, see `value_limit`).
    `what` names the values in the message ("the values to encrypt")."""
    if params.scheme != "ckks":
        return
    arr = np.abs(np.asarray(values))
    biggest = float(arr.max(initial=0.0))
    limit = value_limit(params, level, scale, noise)
    if biggest > limit:
        shown, fits = format_excess(biggest, limit)
        raise ValueOverflowError(
            f"{what} reach |value| = {shown}, but at level {level} with scale "
            f"2^{math.log2(scale):.3f} only |value| <= {fits} fits below Q_{level}/2; larger values "
            f"decrypt to garbage. Use a higher level (more modulus: level=..., or more `levels`/base_limbs in "
            f"the parameters), a lower scale_bits (now {params.scale_bits}), or scale the values down first."
        )


def check_input_bound(params: Params, name: str, values, bound: float, where: str | None) -> None:
    """Raise `ValueOverflowError` when a CKKS program input holds a value beyond its
    declared `bound` (the compiler's overflow checks rely on it)."""
    if params.scheme != "ckks":
        return
    biggest = float(np.abs(np.asarray(values)).max(initial=0.0))
    if biggest > bound:
        shown, limit = format_excess(biggest, bound)  # digits enough to tell them apart
        raise ValueOverflowError(
            f"input {name!r} holds |value| = {shown}, above its declared bound "
            f"{limit}: the program was checked for values up to the bound only. Declare it with "
            f"p.input({name!r}, bound={shown}) (or p.plain(...) for a plain input), or scale "
            f"the data down.",
            where,
        )
