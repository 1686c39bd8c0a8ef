"""The one-line notice shown when numba compiles fhec's kernels for the first time.

Kernels are compiled with ``cache=True``: the first run on a machine compiles them (tens of
seconds) and later runs load the cache. Without a word, that first minute looks like a
hang, so each kernel module calls `announce_compile` at import: if numba has no cache
index for that module yet, a notice goes to stderr, once per process.
"""

from __future__ import annotations

import sys
from pathlib import Path

_announced = False


def has_numba_cache(module_file: str) -> bool:
    """Whether numba's cache index files for the module at `module_file` exist (in its
    ``__pycache__``, where numba puts them when the package directory is writable)."""
    path = Path(module_file)
    return any((path.parent / "__pycache__").glob(f"{path.stem}.*.nbi"))


def announce_compile(module_file: str) -> None:
    """Print "compiling numeric kernels once" to stderr if `module_file`'s kernels are not
    cached yet and no notice was printed in this process."""
    global _announced
    if _announced or has_numba_cache(module_file):
        return
    _announced = True
    print("fhec: compiling numeric kernels once, about 30 s (they are cached afterwards)", file=sys.stderr, flush=True)
