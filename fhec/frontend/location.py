"""Source locations of DSL statements, for error messages and the printed IR.

Tracing runs inside fhec; the statement that created a value is the first stack frame
outside fhec's tracing machinery (frontend, IR, passes, schemes). Files inside the
current directory are shown relative to it, others with their full path. Code typed into
IPython or a Jupyter notebook is named by its cell, ``In [3], line 4``, as IPython's own
tracebacks do: the kernel compiles each cell under a temporary file name
(``/tmp/ipykernel_NNN/HASH.py``) that means nothing to the user.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import sys

_FHEC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = tuple(os.path.join(_FHEC_DIR, d) + os.sep for d in ("frontend", "ir", "passes", "schemes"))


@functools.lru_cache(maxsize=1024)
def _is_internal(filename: str, cwd: str) -> bool:
    # Memoized with the working directory (a relative filename depends on it): tracing
    # asks this for every frame of every DSL operation, and the answer is a pure
    # function of the two strings.
    return os.path.abspath(os.path.join(cwd, filename)).startswith(_INTERNAL_DIRS)


@functools.lru_cache(maxsize=1024)
def _shown_path(filename: str, cwd: str) -> str:
    # Memoized as `_is_internal` is: relpath costs more than the rest of a DSL operation.
    path = os.path.abspath(os.path.join(cwd, filename))
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive (Windows)
        rel = path
    return rel if not rel.startswith("..") else path


# The terminal IPython names a cell's code ``<ipython-input-3-1a2b3c4d5e6f>``.
_IPYTHON_INPUT = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")


def notebook_cell(filename: str) -> int | None:
    """The execution count (``In [n]``) of the IPython cell compiled under `filename`, or
    None when it is not a cell. Reads the running shell's own filename map (its
    compiler's ``_filename_map``, which IPython's tracebacks use) when IPython is
    already imported; fhec does not depend on IPython, so without it nothing is looked up."""
    match = _IPYTHON_INPUT.fullmatch(filename)
    if match:
        return int(match.group(1))
    ipython = sys.modules.get("IPython")
    get_shell = getattr(ipython, "get_ipython", None)
    shell = get_shell() if callable(get_shell) else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    number = names.get(filename) if isinstance(names, dict) else None
    return number if isinstance(number, int) else None


def format_location(filename: str, lineno: int) -> str:
    """``path:LINE`` with the path relative to the working directory when inside it;
    ``In [n], line LINE`` for a notebook or IPython cell."""
    return _format(filename, lineno, os.getcwd())


def _format(filename: str, lineno: int, cwd: str) -> str:
    cell = notebook_cell(filename)
    if cell is not None:
        return f"In [{cell}], line {lineno}"
    return f"{_shown_path(filename, cwd)}:{lineno}"


_REPLAYED_AT: contextvars.ContextVar[str | None] = contextvars.ContextVar("fhec_replayed_at", default=None)
"""While a ``params="auto"`` program is replayed under its chosen parameters
(`fhec.frontend.auto`), the DSL line of the statement being replayed."""


def replaying_at(loc: str | None) -> contextvars.Token:
    """Make `caller_location` report `loc` (undo with `end_replay`)."""
    return _REPLAYED_AT.set(loc)


def end_replay(token: contextvars.Token) -> None:
    _REPLAYED_AT.reset(token)


def caller_location() -> str | None:
    """``file.py:LINE`` of the innermost frame outside fhec's tracing code (None if none);
    during a replay, the replayed statement's line."""
    replayed = _REPLAYED_AT.get()
    if replayed is not None:
        return replayed
    cwd = os.getcwd()
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename, cwd):
        frame = frame.f_back
    if frame is None:
        return None
    return _format(frame.f_code.co_filename, frame.f_lineno, cwd)
