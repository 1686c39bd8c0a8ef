"""Plots of compiled programs (matplotlib, a dependency of fhec, imported only here).

Each function takes a `Report` (``fhec.compile(...).report``) and returns a matplotlib
`Figure` that shows itself inline in a notebook (it has ``_repr_png_``) and never opens
a window, so it works headless; ``fig.savefig(path)`` writes it. The same plots are
methods of the report: ``report.plot_utilization()``.

=========================  =========================================================
`utilization(report)`      per-unit timeline of the streams (Gantt), binned: busy
                           fraction of every unit in every time bin
`traffic(report)`          off-chip traffic by class, compulsory and not (F1 Fig. 9a)
`scratchpad(report)`       scratchpad slots in use over time (the off-chip schedule)
`roofline(report)`         operational intensity against the target's compute and
                           bandwidth roofs
`compare(reports)`         several targets or configurations side by side
=========================  =========================================================

`utilization`, `scratchpad` and `roofline` read the streams and the data schedule,
which a report made by `fhec.compile` carries (`Report.plot_data`); a report read back
from ``report.json`` has only its fields, so those three raise `PlotDataError` for it,
while `traffic` and `compare` work. matplotlib is imported on the first plot, not with
fhec; without it every function raises `MissingExtraError`.
"""

from __future__ import annotations

from fhec.errors import MissingExtraError
from fhec.plot.data import PlotData

__all__ = ["PlotData", "utilization", "traffic", "scratchpad", "roofline", "compare", "PLOTS"]


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError("fhec's plots need matplotlib, which this installation lacks: pip install matplotlib") from None


def utilization(report, *, bins: int = 200):
    """Per-unit Gantt of the streams in `bins` time bins (see `fhec.plot.timeline`)."""
    _require_matplotlib()
    from fhec.plot.timeline import plot_utilization

    return plot_utilization(report, bins=bins)


def traffic(report):
    """Off-chip traffic by class, compulsory and not (see `fhec.plot.traffic_bars`)."""
    _require_matplotlib()
    from fhec.plot.traffic_bars import plot_traffic

    return plot_traffic(report)


def scratchpad(report):
    """Scratchpad occupancy over time (see `fhec.plot.occupancy`)."""
    _require_matplotlib()
    from fhec.plot.occupancy import plot_scratchpad

    return plot_scratchpad(report)


def roofline(report):
    """The program on the target's roofline (see `fhec.plot.roofline_chart`)."""
    _require_matplotlib()
    from fhec.plot.roofline_chart import plot_roofline

    return plot_roofline(report)


def compare(reports, labels=None):
    """Reports side by side: cycles against bounds, traffic, utilization, energy and
    area (see `fhec.plot.comparison`). `labels` default to the reports' target names."""
    _require_matplotlib()
    from fhec.plot.comparison import plot_compare

    return plot_compare(reports, labels)


PLOTS = {
    "utilization": utilization,
    "traffic": traffic,
    "scratchpad": scratchpad,
    "roofline": roofline,
}
"""Name -> the plot of one report (what ``fhec compile --plots DIR`` writes, NAME.png)."""
