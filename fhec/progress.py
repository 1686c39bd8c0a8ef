"""Progress displays for `fhec.compile` (one step per pass) and `Compiled.run` (stream
entries executed).

On by default when someone is watching: in a terminal (stderr is a TTY) a rich progress
bar on stderr, which disappears when done; in a notebook (an IPython kernel) one HTML
line updated in place. Off otherwise (pipes, CI, pytest). ``progress=False`` silences
it, ``progress=True`` forces it. The passes report through the pass manager
(`fhec.pipeline.run_passes`' ``progress`` callback), the stream executor through
`fhec.sim.streams.execute_streams`' ``progress`` callback.
"""

from __future__ import annotations

import contextlib
import html
import sys
from typing import Callable, Iterator

from fhec.errors import InvalidArgumentError

Update = Callable[[int, str], None]
"""``update(completed, description)``: what a display is told as work advances."""


def in_notebook() -> bool:
    """True inside a Jupyter/IPython kernel (a notebook), not in a plain IPython shell."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def interactive() -> bool:
    """True when a person is likely watching: a notebook, or stderr on a terminal."""
    return in_notebook() or bool(getattr(sys.stderr, "isatty", lambda: False)())


def wanted(progress: bool | None, what: str = "progress") -> bool:
    """Whether to show a display for ``progress=`` (None: `interactive`)."""
    if progress is None:
        return interactive()
    if not isinstance(progress, bool):
        raise InvalidArgumentError(f"{what} = {progress!r:.40}: pass True, False or None (on when interactive).")
    return progress


@contextlib.contextmanager
def _terminal(label: str, total: int) -> Iterator[Update]:
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done, description: bar.update(task, completed=done, description=f"{label}: {description}")


@contextlib.contextmanager
def _notebook(label: str, total: int) -> Iterator[Update]:
    from IPython.display import HTML, display

    def line(done: int, description: str) -> HTML:
        return HTML(f"<div class='fhec-progress'><progress value='{done}' max='{max(total, 1)}'></progress> "
                    f"{html.escape(label)}: {html.escape(description)} ({done:,}/{total:,})</div>")

    handle = display(line(0, "starting"), display_id=True)
    yield lambda done, description: handle.update(line(done, description))
    handle.update(line(total, "done"))


@contextlib.contextmanager
def _silent(label: str, total: int) -> Iterator[Update]:
    yield lambda done, description: None


@contextlib.contextmanager
def display(label: str, total: int, enabled: bool) -> Iterator[Update]:
    """A progress display of `total` steps (see the module doc), or a silent one."""
    kind = "silent" if not enabled else "notebook" if in_notebook() else "terminal"
    with _DISPLAYS[kind](label, total) as update:
        yield update


_DISPLAYS = {"terminal": _terminal, "notebook": _notebook, "silent": _silent}
"""Where a display goes -> the context manager drawing it."""
