"""Checks of user-supplied arguments, shared by every public entry point.

Each helper takes the value, the name the user wrote it under (``"levels"``,
``"rotate(k)"``) and the error class to raise, and returns the value in its canonical
Python form (a Python ``int``, a ``float``, a 1-D numpy array...). Messages name the
argument, show the value and say what to pass instead, so that a wrong argument never
reaches numpy or a numba kernel, and never turns into a silently different value
(``1.7`` truncated to ``1``, ``True`` taken as ``1``).

Integers: Python ints and numpy integer scalars are accepted; bools, floats (even
``2.0``), strings and everything else are refused. Reals: ints, floats and numpy
scalars of either kind; bools, strings, NaN and (by default) infinities are refused.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, Iterable

import numpy as np

from fhec.errors import FhecError, ParameterError


def _fix(fix: str | None) -> str:
    return f"; {fix}" if fix else ""


def _range_text(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}"
    if lo is not None:
        return f">= {lo}"
    return f"<= {hi}"


def is_int(value: Any) -> bool:
    """True for a Python int or numpy integer scalar that is not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_int(
    value: Any,
    name: str,
    *,
    min: int | None = None,  # noqa: A002  (reads naturally at call sites)
    max: int | None = None,  # noqa: A002
    error: type[FhecError] = ParameterError,
    fix: str | None = None,
    where: str | None = None,
) -> int:
    """`value` as a Python int, or `error` naming `name`.

    Refuses bools, floats (also integral ones: a float where an integer is meant is a
    sign of arithmetic gone wrong, and silently truncating 1.7 to 1 is worse), and
    values outside ``[min, max]``.
    """
    if not is_int(value):
        raise error(
            f"{name} = {value!r} must be an integer (a Python int or numpy integer, not "
            f"{type(value).__name__}){_fix(fix)}.",
            where,
        )
    value = int(value)
    if (min is not None and value < min) or (max is not None and value > max):
        raise error(f"{name} = {value} is out of range: it must be {_range_text(min, max)}{_fix(fix)}.", where)
    return value


def as_optional_int(value: Any, name: str, **kw) -> int | None:
    """None, or `as_int(value, name, **kw)`."""
    return None if value is None else as_int(value, name, **kw)


def as_real(
    value: Any,
    name: str,
    *,
    min: float | None = None,  # noqa: A002
    max: float | None = None,  # noqa: A002
    min_exclusive: bool = False,
    finite: bool = True,
    error: type[FhecError] = ParameterError,
    fix: str | None = None,
    where: str | None = None,
) -> float:
    """`value` as a float, or `error` naming `name`.

    Accepts ints, floats and numpy real scalars; refuses bools, strings, complex numbers,
    NaN, infinities (unless ``finite=False``) and values outside the range (``min`` is
    exclusive with ``min_exclusive``).
    """
    ok = isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok:
        raise error(f"{name} = {value!r} must be a real number, not {type(value).__name__}{_fix(fix)}.", where)
    try:
        out = float(value)
    except OverflowError:
        raise error(f"{name} = {value!r} is too large for a float{_fix(fix)}.", where) from None
    if math.isnan(out) or (finite and math.isinf(out)):
        raise error(f"{name} = {value!r} must be a finite number{_fix(fix)}.", where)
    below = min is not None and (out <= min if min_exclusive else out < min)
    if below or (max is not None and out > max):
        lo = f"> {min}" if min_exclusive else None
        text = lo if lo and max is None else _range_text(min, max)
        raise error(f"{name} = {value!r} is out of range: it must be {text}{_fix(fix)}.", where)
    return out


def as_choice(value: Any, name: str, choices: Iterable[str], *, error: type[FhecError] = ParameterError,
              where: str | None = None) -> str:
    """`value` if it is one of the strings `choices`, else `error` listing them."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise error(f"{name} = {value!r}: choose one of {listed}.", where)
    return value


def as_int_list(values: Any, name: str, **kw) -> tuple[int, ...]:
    """An iterable of integers (each checked by `as_int`) as a tuple of Python ints.

    A string, a mapping or a bare number is refused (they iterate, or fail to, in
    surprising ways).
    """
    error = kw.get("error", ParameterError)
    if isinstance(values, (str, bytes, Mapping)) or not _iterable(values):
        raise error(f"{name} = {values!r} must be a list of integers, e.g. {name}=[1, 2].", kw.get("where"))
    return tuple(as_int(v, f"{name}[{i}]", **kw) for i, v in enumerate(values))


def _iterable(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.ndim >= 1
    try:
        iter(value)
    except TypeError:
        return False
    return True


def as_mapping(value: Any, name: str, *, error: type[FhecError] = ParameterError, fix: str | None = None,
               where: str | None = None) -> Mapping:
    """`value` if it is a mapping (a dict of name -> value), else `error`."""
    if not isinstance(value, Mapping):
        raise error(
            f"{name} must be a mapping such as {{'x': [...]}} (name -> values), not {type(value).__name__}"
            f"{_fix(fix)}.",
            where,
        )
    return value


def _all_python_ints(values) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def refuse_non_numbers(arr: np.ndarray, name: str, *, error: type[FhecError], where: str | None = None) -> None:
    """An object array holding None (or another non-number), which a float cast turns into
    NaN: raise `error` saying what it holds, not "NaN or infinite values"."""
    if arr.dtype.kind != "O":
        return
    for i, v in enumerate(arr.ravel().tolist()):
        if not isinstance(v, numbers.Number):
            raise error(f"{name} holds a non-number, {v!r:.40} at index {i}; every slot value must be a number "
                        f"(fill missing values first, e.g. with 0).", where)


def as_1d_array(value: Any, name: str, *, error: type[FhecError], where: str | None = None) -> np.ndarray:
    """`value` as a numpy array of at most one dimension (a scalar stays 0-D), or `error`.

    Ragged nested lists and objects numpy cannot turn into an array are refused, and so
    is anything with two or more dimensions: slot vectors are 1-D.
    """
    if isinstance(value, (str, bytes, bytearray, memoryview, Mapping)) or value is None:
        raise error(f"{name} must be a number or a 1-D vector of numbers, not {type(value).__name__}.", where)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        # numpy's own text ("... inhomogeneous part..") describes its internals, not the data
        raise error(f"{name} must be a number or a 1-D vector of numbers, but numpy cannot make one array of it: "
                    f"it nests sequences of different lengths or holds objects that are not numbers; give one "
                    f"number per slot (a flat list or 1-D array).", where) from None
    if array.dtype.kind in "USV" or (array.dtype.kind == "O" and any(
            isinstance(v, (str, bytes, bytearray)) for v in array.ravel().tolist())):
        # numpy turns ["1", "2.5"] into strings that later casts read as numbers
        raise error(f"{name} must hold numbers, but it holds text ({array.ravel()[:3].tolist()!r:.60}); "
                    f"convert it first, e.g. np.asarray(values, dtype=float).", where)
    if array.dtype.kind == "f" and isinstance(value, (list, tuple)) and _all_python_ints(value):
        # numpy promotes ints that need both int64 and uint64 ([0, 2**63]) to float64, which
        # rounds them; Python ints stay exact as objects (BGV reduces them mod t)
        array = np.asarray(value, dtype=object)
    if array.ndim > 1:
        raise error(
            f"{name} must be 1-D (one value per slot), but it has shape {array.shape}; flatten it "
            f"(e.g. np.ravel) or split it over several ciphertexts.",
            where,
        )
    return array
