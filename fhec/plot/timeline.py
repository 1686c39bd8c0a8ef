"""The per-unit timeline of the streams (a binned Gantt chart).

Drawing every stream entry is out of the question at millions of entries, so time is
cut into bins and each unit's busy fraction per bin is computed exactly from the
entries' occupancy intervals (`busy_fractions`) and drawn as a heat map: one row per
unit, clusters' functional units first and the memory controller last, as
`fhec.backends.streams.unit_layout` orders them.
"""

from __future__ import annotations

import numpy as np

from fhec.backends.streams import Streams, op_timing
from fhec.backends.target import Target
from fhec.plot._figure import new_figure, plot_data
from fhec.validate import as_int


def busy_fractions(streams: Streams, target: Target, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(fractions, edges): ``fractions[u, b]`` is the share of time bin ``b`` (between
    ``edges[b]`` and ``edges[b+1]`` cycles) during which unit ``u`` was occupied.

    A unit accepts its next entry only after the previous one's occupancy, so one unit's
    intervals never overlap; the busy time before cycle t is the occupancy of the
    entries that started before t, minus the part of the last one still to come."""
    total = max(streams.total_cycles, 1)
    edges = np.linspace(0.0, float(total), bins + 1)
    occ = streams.entry_occupancy(op_timing(target, streams.N).occupancy).astype(np.float64)
    start = streams.unit_start
    out = np.zeros((len(streams.units), bins))
    for u in range(len(streams.units)):
        lo, hi = start[u], start[u + 1]
        if lo == hi:
            continue
        begin = streams.cycle[lo:hi].astype(np.float64)
        length = occ[lo:hi]
        done = np.concatenate(([0.0], np.cumsum(length)))
        k = np.searchsorted(begin, edges, side="left")  # entries starting before each edge
        last = np.maximum(k - 1, 0)
        overhang = np.where(k > 0, np.maximum(begin[last] + length[last] - edges, 0.0), 0.0)
        busy = done[k] - overhang
        out[u] = np.diff(busy) / np.diff(edges)
    return out, edges


MAX_UNIT_LABELS = 40
"""Above this many units, rows are labeled by cluster (and ``mem0``), not one by one."""


def _unit_ticks(units) -> tuple[list[int], list[str]]:
    """Row ticks: every unit's name when they fit, else the first row of each cluster."""
    if len(units) <= MAX_UNIT_LABELS:
        return list(range(len(units))), [u.name for u in units]
    ticks, labels, seen = [], [], set()
    for i, u in enumerate(units):
        if u.cluster not in seen:
            seen.add(u.cluster)
            ticks.append(i)
            labels.append(u.name if u.cluster < 0 else f"c{u.cluster}")
    return ticks, labels


def plot_utilization(report, *, bins: int = 200):
    """Heat map of every unit's busy fraction over time; returns the Figure."""
    data = plot_data(report, "plot_utilization")
    streams = data.streams
    bins = min(as_int(bins, "bins", min=1, fix="the number of time bins, such as 200"), max(streams.total_cycles, 1))
    frac, edges = busy_fractions(streams, data.target, bins)
    units = streams.units
    fig = new_figure(10.0, min(2.0 + 0.12 * len(units), 12.0))
    ax = fig.add_subplot()
    image = ax.imshow(frac, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0.0, vmax=1.0,
                      extent=(edges[0], edges[-1], len(units) - 0.5, -0.5))
    ticks, labels = _unit_ticks(units)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_xlabel("cycle")
    ax.set_ylabel("unit")
    ax.set_title(f"{report.program} on {report.target}: unit utilization ({bins} bins of "
                 f"{edges[1] - edges[0]:,.0f} cycles)")
    fig.colorbar(image, ax=ax, label="busy fraction")
    return fig
