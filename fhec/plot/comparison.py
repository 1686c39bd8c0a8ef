"""Several reports side by side: one program on several targets or configurations.

Four panels, one group of bars per report: cycles beside the three lower bounds,
off-chip traffic (compulsory and not), the busy fraction of each unit kind, and energy
and area where the targets give them. Reads only report fields, so reports read back
from ``report.json`` compare as well as fresh ones.
"""

from __future__ import annotations

import numpy as np

from fhec.errors import InvalidArgumentError
from fhec.plot._figure import MIB, new_figure


def _labels(reports, labels) -> list[str]:
    if labels is None:
        names = [r.target for r in reports]
        if len(set(names)) < len(names):  # one target, several configurations: say which is which
            names = [f"{r.target} #{i}" for i, r in enumerate(reports)]
        return names
    labels = [str(x) for x in labels]
    if len(labels) != len(reports):
        raise InvalidArgumentError(f"compare got {len(reports)} reports and {len(labels)} labels; give one label per report.")
    return labels


def _is_report(r) -> bool:
    # duck-typed: the plot layer sits below `fhec.sim`, which defines `Report`
    return all(hasattr(r, f) for f in ("cycles", "offchip_bytes", "utilization", "compute_bound_cycles"))


def _check_reports(reports) -> list:
    reports = [reports] if _is_report(reports) else list(reports) if isinstance(reports, (list, tuple)) else []
    if not reports or not all(_is_report(r) for r in reports):
        raise InvalidArgumentError(
            "fhec.plot.compare takes a list of reports (fhec.compile(...).report, or fhec.sim.timing.load_report(path)).")
    return reports


def plot_compare(reports, labels=None):
    """The four comparison panels; returns the Figure."""
    reports = _check_reports(reports)
    names = _labels(reports, labels)
    x = np.arange(len(reports))
    fig = new_figure(12.0, 7.5)
    (cyc, off), (util, cost) = fig.subplots(2, 2)

    series = [("cycles", [r.cycles for r in reports]),
              ("compute bound", [r.compute_bound_cycles for r in reports]),
              ("bandwidth bound", [r.bandwidth_bound_cycles for r in reports]),
              ("dependency bound", [r.dependency_bound_cycles for r in reports])]
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series):
        cyc.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
    cyc.set_title("cycles and lower bounds")
    cyc.legend(fontsize=7)

    comp = [r.offchip_bytes["compulsory"] * MIB for r in reports]
    non = [r.offchip_bytes["noncompulsory"] * MIB for r in reports]
    off.bar(x, comp, 0.6, label="compulsory", color="#4c72b0")
    off.bar(x, non, 0.6, bottom=comp, label="non-compulsory", color="#dd8452")
    off.set_title("off-chip traffic (MiB)")
    off.legend(fontsize=7)

    kinds = sorted({k for r in reports for k in r.utilization})
    width = 0.8 / max(len(kinds), 1)
    for i, kind in enumerate(kinds):
        util.bar(x + (i - (len(kinds) - 1) / 2) * width, [r.utilization.get(kind, 0.0) for r in reports], width,
                 label=kind)
    util.set_ylim(0, 1)
    util.set_title("busy fraction by unit kind")
    util.legend(fontsize=7, ncol=len(kinds))

    energy = [r.energy.total_uj if r.energy is not None else np.nan for r in reports]
    area = [r.area_mm2 if r.area_mm2 is not None else np.nan for r in reports]
    cost.bar(x - 0.2, energy, 0.4, label="energy (µJ)", color="#55a868")
    cost.set_ylabel("energy (µJ)")
    twin = cost.twinx()
    twin.bar(x + 0.2, area, 0.4, label="area (mm²)", color="#8172b2")
    twin.set_ylabel("area (mm²)")
    cost.set_title("energy and area (where the target gives them)")
    handles = cost.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    cost.legend(handles, ["energy (µJ)", "area (mm²)"], fontsize=7)

    for ax in (cyc, off, util, cost):
        ax.set_xticks(x, names, fontsize=8, rotation=15 if len(reports) > 3 else 0)
    programs = sorted({r.program for r in reports})
    fig.suptitle(f"{', '.join(programs)}: {len(reports)} configurations")
    return fig
