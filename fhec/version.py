"""fhec's version: the installed distribution's metadata, one source of truth
(``pyproject.toml``'s ``version``).

A source checkout used without installing (``PYTHONPATH=.``) has no metadata of its
own; then the version is read from the checkout's ``pyproject.toml``, and failing that
it is ``0+unknown`` (a PEP 440 local version that sorts below every release).
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

UNKNOWN = "0+unknown"

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _checkout_version() -> str | None:
    """``version = "..."`` of the [project] table of the checkout holding this file."""
    try:
        text = _PYPROJECT.read_text(encoding="utf-8")
    except OSError:
        return None
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if project is None or not re.search(r'^name\s*=\s*"fhec"', project.group(1), re.M):
        return None  # some other project's file
    found = re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else None


def package_version() -> str:
    """The version of the fhec that is running (see module doc)."""
    checkout = _checkout_version()
    if checkout is not None:  # running from a source tree: its own pyproject wins over any install
        return checkout
    try:
        return metadata.version("fhec")
    except metadata.PackageNotFoundError:
        return UNKNOWN
