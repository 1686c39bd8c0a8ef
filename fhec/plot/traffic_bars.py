"""Off-chip traffic by class, compulsory and not: the bars of F1 Fig. 9a.

The classes and their split are the report's ``offchip_bytes``, which
`fhec.analysis.traffic.classify_traffic` computed from the data schedule: the first
load of a key-switch hint, input or constant is compulsory, every later one is not;
an output's store is compulsory; intermediates moved at all are not.
"""

from __future__ import annotations

from fhec.plot._figure import MIB, new_figure

CLASSES = (
    ("key-switch hints", "ksh_compulsory", "ksh_noncompulsory"),
    ("inputs", "input_compulsory", "input_noncompulsory"),
    ("constants", "const_compulsory", "const_noncompulsory"),
    ("outputs", "output_compulsory", "output_noncompulsory"),
    ("intermediates", None, ("intermediate_loads", "intermediate_stores")),
)
"""(label, compulsory field or None, non-compulsory field(s)) of `Report.offchip_bytes`."""


def traffic_by_class(offchip: dict[str, int]) -> list[tuple[str, int, int]]:
    """(class label, compulsory bytes, non-compulsory bytes) for every class."""
    rows = []
    for label, comp, non in CLASSES:
        fields = non if isinstance(non, tuple) else (non,)
        rows.append((label, offchip[comp] if comp else 0, sum(offchip[f] for f in fields)))
    return rows


def plot_traffic(report):
    """Stacked bars of off-chip MiB per class, compulsory below; returns the Figure."""
    rows = traffic_by_class(report.offchip_bytes)
    fig = new_figure(8.0, 4.5)
    ax = fig.add_subplot()
    labels = [r[0] for r in rows]
    comp = [r[1] * MIB for r in rows]
    non = [r[2] * MIB for r in rows]
    ax.bar(labels, comp, label="compulsory", color="#4c72b0")
    ax.bar(labels, non, bottom=comp, label="non-compulsory", color="#dd8452")
    ax.set_ylabel("off-chip traffic (MiB)")
    total, compulsory = report.offchip_bytes["total"] * MIB, report.offchip_bytes["compulsory"] * MIB
    ax.set_title(f"{report.program} on {report.target}: {total:,.2f} MiB off-chip ({compulsory:,.2f} compulsory)")
    ax.legend()
    return fig
