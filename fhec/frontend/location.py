"""Source locations of DSL statements, for error messages and the printed IR.

Tracing runs inside fhec; the statement that created a value is the first stack frame
outside fhec's tracing machinery (frontend, IR, passes, schemes). Files inside the
current directory are shown relative to it, others with their full path.
"""

from __future__ import annotations

import os
import sys

_FHEC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL_DIRS = tuple(os.path.join(_FHEC_DIR, d) + os.sep for d in ("frontend", "ir", "passes", "schemes"))


def _is_internal(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_INTERNAL_DIRS)


def format_location(filename: str, lineno: int) -> str:
    """``path:LINE`` with the path relative to the working directory when inside it."""
    path = os.path.abspath(filename)
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        rel = path
    shown = rel if not rel.startswith("..") else path
    return f"{shown}:{lineno}"


def caller_location() -> str | None:
    """``file.py:LINE`` of the innermost frame outside fhec's tracing code (None if none)."""
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return format_location(frame.f_code.co_filename, frame.f_lineno)
