"""The example programs shipped inside the package (``fhec/examples/``, package data).

They are the single copy: `make demo` runs ``fhec/examples/demo.py`` from a checkout, and
an installed fhec lists them (`fhec examples`) and writes them out (`fhec examples copy
DIR`) so that a user can run and edit them. The directory is data, not a subpackage:
each file is a program file for the ``fhec`` command, importing its neighbours by name
(``demo.py`` imports ``matvec``).
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from fhec.errors import OutputDirectoryError

SUFFIXES = (".py", ".ipynb")
"""Files of the examples directory that are examples (notebooks ship beside programs)."""


@dataclass(frozen=True)
class Example:
    """One shipped example: its file name and the first line of its docstring."""

    name: str
    summary: str
    path: Path


def examples_dir() -> Path:
    """The directory holding the shipped examples (inside the installed package)."""
    return Path(str(resources.files("fhec") / "examples"))


def _summary(path: Path) -> str:
    """First docstring line of a program file (read, never executed); for a notebook, its
    file name only."""
    if path.suffix != ".py":
        return "notebook"
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def list_examples() -> list[Example]:
    """Every shipped example, sorted by file name."""
    files = sorted(p for p in examples_dir().iterdir() if p.suffix in SUFFIXES and p.is_file())
    return [Example(p.name, _summary(p), p) for p in files]


def copy_examples(dest, overwrite: bool = False) -> list[Path]:
    """Write every shipped example into directory `dest` (created if needed); returns the
    paths written.

    Raises `OutputDirectoryError` when `dest` is a file, cannot be created, or already
    holds a file of the same name (unless `overwrite`): a user's edited copy is never
    replaced silently.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise OutputDirectoryError(f"{dest} is a file; give a directory to copy the examples into.")
    examples = list_examples()
    clashes = [e.name for e in examples if (dest / e.name).exists()]
    if clashes and not overwrite:
        raise OutputDirectoryError(
            f"{dest} already holds {', '.join(clashes)}; choose another directory, or pass --overwrite "
            f"(overwrite=True) to replace them."
        )
    try:
        dest.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copyfile(e.path, dest / e.name)) for e in examples]
    except OSError as e:
        raise OutputDirectoryError(f"cannot write the examples into {dest}: {e.strerror or e}.") from None
