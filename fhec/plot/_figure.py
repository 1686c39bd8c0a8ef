"""The figure every plot returns: matplotlib's, with a PNG representation for notebooks.

Figures are made directly (not through pyplot), so no GUI window opens and a headless
process needs no backend choice; a notebook shows the figure through ``_repr_png_``
when it is a cell's value, once.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure as _MplFigure


class Figure(_MplFigure):
    """A matplotlib Figure that renders itself as PNG in IPython and Jupyter."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """An empty figure of `width` x `height` inches with constrained layout."""
    return Figure(figsize=(width, height), layout="constrained")


MIB = 1 / 2**20


def plot_data(report, plot: str):
    """`report.plot_data`, or `PlotDataError` naming `plot` for a report without it."""
    from fhec.errors import PlotDataError

    data = getattr(report, "plot_data", None)
    if data is None:
        raise PlotDataError(
            f"{plot} needs the streams of the compiled program, and this report has only its fields (a report read "
            f"from report.json): compile the program with fhec.compile and plot that report; plot_traffic and "
            f"fhec.plot.compare work on any report."
        )
    return data
