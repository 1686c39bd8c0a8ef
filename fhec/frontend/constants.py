"""Python values -> IR constants (scalars stay Python numbers, vectors become `Const`).

* CKKS: Python/numpy ints stay ints (an exact multiply that keeps the scale); floats
  stay floats; 1-D array-likes of real numbers become float64 vectors zero-padded to
  the slot count.
* BGV: integers only, scalars centered mod t (smaller noise growth), vectors int64 in
  [0, t) zero-padded to N slots.

Everything raises a `FhecError` with the DSL location `where`.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from fhec.errors import InvalidPlaintextError, ProgramError, TooManyValuesError
from fhec.ir.he import compact_const
from fhec.schemes.encoding import reduce_mod
from fhec.schemes.params import Params
from fhec.validate import as_1d_array, refuse_non_numbers


def is_constant(value) -> bool:
    """Whether `value` is something the DSL accepts as a constant operand."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (numbers.Number, np.ndarray, list, tuple)) or np.isscalar(value)


def centered(c: int, t: int) -> int:
    c %= t
    return c - t if c > t // 2 else c


def _int_hint(value, t: int) -> str:
    """The fix for a non-integer BGV constant: a fraction p/q with q invertible mod t is
    p·q^-1 mod t (dividing by 2 is multiplying by 2^-1), else an integer."""
    rounded = float(value)
    if not np.isfinite(rounded):
        return "pass a finite int"
    frac = Fraction(rounded).limit_denominator(1024)
    if frac.denominator > 1 and float(frac) == rounded and math.gcd(frac.denominator, t) == 1:
        k = frac.numerator * pow(frac.denominator, -1, t) % t
        return (f"{frac} mod t is {frac.numerator}·{frac.denominator}^-1 = {k}: multiply by {k} to divide by "
                f"{frac.denominator} mod t, or pass an int, e.g. {round(rounded)}")
    return f"pass an int, e.g. {round(rounded)}"


def scalar(params: Params, value, where: str | None):
    """A scalar constant as stored in the IR (int or float)."""
    if isinstance(value, (bool, np.bool_)):
        raise ProgramError(f"{value!r} is a bool, not a number; use 1/0 explicitly.", where)
    if isinstance(value, numbers.Rational) and not isinstance(value, numbers.Integral) and value.denominator == 1:
        value = int(value)  # Fraction(4, 2): an integer
    if isinstance(value, numbers.Integral):
        return centered(int(value), params.plain_modulus) if params.scheme == "bgv" else int(value)
    if isinstance(value, numbers.Real):
        value = float(value)  # Fraction, Decimal: numpy's isfinite and the encoders take floats
        if params.scheme == "bgv":
            raise InvalidPlaintextError(
                f"BGV computes on integers mod t = {params.plain_modulus}; the constant {value!r} is not an "
                f"integer ({_int_hint(value, params.plain_modulus)}).",
                where,
            )
        if not np.isfinite(value):
            raise InvalidPlaintextError(f"the constant {value!r} is not finite.", where)
        return float(value)
    if isinstance(value, numbers.Complex):
        raise InvalidPlaintextError(f"complex constants ({value!r}) are not supported; {_slots_hold(params)}.", where)
    raise ProgramError(f"cannot use {type(value).__name__} {value!r:.40} as a constant: a constant is a number or a "
                       f"vector of slot values (a list or 1-D numpy array).", where)


def _slots_hold(params: Params) -> str:
    """What a slot of the scheme holds, for refusing a value it cannot."""
    if params.scheme == "bgv":
        return f"BGV slots are integers mod t = {params.plain_modulus}"
    return "fhec's CKKS slots are real"


def vector(params: Params, values, where: str | None, what: str = "constant") -> np.ndarray:
    """A 1-D array-like as a slot vector (padded, float64 / int64 mod t); not wrapped."""
    arr = as_1d_array(values, f"the {what}", error=InvalidPlaintextError, where=where)
    if arr.ndim != 1:
        raise InvalidPlaintextError(f"the {what} must be a 1-D vector, got a scalar {values!r}.", where)
    if arr.shape[0] > params.slots:
        raise TooManyValuesError(
            f"the {what} has {arr.shape[0]} values but the parameter set has {params.slots} slots "
            f"(N = {params.N}); use at most {params.slots} values or a larger N.",
            where,
        )
    if params.scheme == "ckks":
        if np.iscomplexobj(arr):
            raise InvalidPlaintextError(f"complex {what} values are not supported; {_slots_hold(params)}.", where)
        refuse_non_numbers(arr, f"the {what}", error=InvalidPlaintextError, where=where)
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError) as e:
            raise InvalidPlaintextError(f"the {what} must hold real numbers: {e}", where) from None
        if not np.all(np.isfinite(arr)):
            raise InvalidPlaintextError(f"the {what} holds NaN or infinite values.", where)
        out = np.zeros(params.slots, dtype=np.float64)
    else:
        if arr.size == 0:
            arr = np.zeros(0, dtype=np.int64)
        try:
            arr = reduce_mod(arr, params.plain_modulus, f"{what} values").astype(np.int64)
        except InvalidPlaintextError as e:
            raise InvalidPlaintextError(
                f"BGV computes on integers mod t = {params.plain_modulus}: {e.bare_message}", where
            ) from None
        out = np.zeros(params.slots, dtype=np.int64)
    out[: arr.shape[0]] = arr
    return out


def constant(params: Params, value, where: str | None):
    """A constant operand as stored in a node: a scalar, or a `Const` slot vector."""
    if isinstance(value, (np.ndarray, list, tuple)):
        array = as_1d_array(value, "the constant", error=InvalidPlaintextError, where=where)
        if array.ndim == 0:
            return scalar(params, array.item(), where)
        return compact_const(vector(params, array, where))
    return scalar(params, value, where)
