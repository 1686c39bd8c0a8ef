"""Wrong arguments to a DSL method are a `ProgramError` at the DSL line, not a bare TypeError.

Python checks a call's arity and keywords itself and raises ``TypeError: rotate() got an
unexpected keyword argument 'step'`` from inside fhec, without the statement's line. The
class decorator `checked_calls` binds every call of a public method to its signature
first (`inspect.Signature.bind`, the same check Python makes) and turns a mismatch into a
`ProgramError` naming the line, the method's signature and what was wrong, with the
closest keyword for a misspelt one.
"""

from __future__ import annotations

import difflib
import functools
import inspect

from fhec.errors import ProgramError
from fhec.frontend.location import caller_location

RECEIVERS = {"Cipher": "x", "Plain": "w", "Program": "p"}
"""class name -> the receiver a signature is shown with (``x.rotate(k)``)."""


def checked_calls(cls):
    """Wrap every public method defined in `cls` (not properties or classmethods) so that a
    call whose arguments do not fit its signature raises `ProgramError`."""
    for name, fn in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            setattr(cls, name, _checked(cls.__name__, name, fn))
    return cls


def shown_signature(signature: inspect.Signature) -> str:
    """``(k)``, ``(name, level=None, *, bound=None)``: the parameters after ``self``,
    without annotations (strings under ``from __future__ import annotations``)."""
    params = [p.replace(annotation=inspect.Parameter.empty) for p in list(signature.parameters.values())[1:]]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def _checked(owner: str, name: str, fn):
    signature = inspect.signature(fn)  # follows __wrapped__ through `_journaled`
    kinds = {p.kind for p in list(signature.parameters.values())[1:]}
    if kinds == {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
        return fn  # takes anything (a plain input's refusals): nothing to check
    shown = f"{RECEIVERS.get(owner, owner)}.{name}{shown_signature(signature)}"

    @functools.wraps(fn)
    def call(self, *args, **kwargs):
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError as e:
            raise ProgramError(f"{name}() was called with {_what(signature, kwargs, e)}; its signature is "
                               f"{shown}.", caller_location()) from None
        return fn(self, *args, **kwargs)

    return call


def _what(signature: inspect.Signature, kwargs: dict, error: TypeError) -> str:
    """What was wrong: an unknown keyword first (bind reports a required argument it left
    missing, `rotate(step=1)`: "missing 'k'"), with the closest known one; else `bind`'s
    message."""
    known = [p for p in signature.parameters if p != "self"]
    unknown = [k for k in kwargs if k not in signature.parameters]
    if not unknown:
        return f"the wrong arguments ({error})"
    close = difflib.get_close_matches(unknown[0], known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"an unknown keyword {unknown[0]!r}{hint}"


__all__ = ["checked_calls", "shown_signature"]
