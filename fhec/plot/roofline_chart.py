"""The program on its target's roofline.

Work is counted in element operations: each limb instruction applies its op to the N
elements of an RVec. Operational intensity is that work over the off-chip bytes the
schedule moved (and, as a second point, over the compulsory bytes alone). The roofs
are the target's: peak compute is every functional unit's throughput (elements per
cycle) at the clock; the bandwidth roof is off-chip bandwidth x intensity. A third,
dashed roof is the compute the program's op mix can reach: its work over the compute
bound (`Report.compute_bound_cycles`), which counts each op on the unit kind that
runs it.
"""

from __future__ import annotations

import numpy as np

from fhec.plot._figure import new_figure, plot_data


def roofline_numbers(report, target) -> dict[str, float]:
    """Work (element ops), achieved Gop/s, intensities (ops/byte) and roofs (Gop/s, GB/s)."""
    work = float(report.limb_instructions) * report.N
    seconds = max(target.seconds(max(report.cycles, 1)), 1e-30)
    peak = sum(u.count * u.throughput for u in target.cluster.units) * target.cluster.count * target.clock_ghz
    mix = work / max(target.seconds(max(report.compute_bound_cycles, 1.0)), 1e-30) / 1e9
    off = report.offchip_bytes
    return {
        "work": work,
        "achieved_gops": work / seconds / 1e9,
        "intensity": work / max(off["total"], 1),
        "compulsory_intensity": work / max(off["compulsory"], 1),
        "peak_gops": peak,
        "mix_gops": min(mix, peak),
        "bandwidth_gb_s": target.memory.bandwidth_gb_s,
    }


def plot_roofline(report):
    """Log-log roofline with the program's point(s); returns the Figure."""
    data = plot_data(report, "plot_roofline")
    r = roofline_numbers(report, data.target)
    lo = min(r["intensity"], r["compulsory_intensity"], r["peak_gops"] / r["bandwidth_gb_s"]) / 8
    hi = max(r["intensity"], r["compulsory_intensity"], r["peak_gops"] / r["bandwidth_gb_s"]) * 8
    x = np.geomspace(lo, hi, 200)
    fig = new_figure(7.5, 5.0)
    ax = fig.add_subplot()
    ax.loglog(x, np.minimum(r["peak_gops"], r["bandwidth_gb_s"] * x), color="black", label="roof: all units, off-chip bandwidth")
    ax.loglog(x, np.minimum(r["mix_gops"], r["bandwidth_gb_s"] * x), color="gray", linestyle="--",
              label="roof for this op mix (compute bound)")
    ax.scatter([r["intensity"]], [r["achieved_gops"]], color="#c44e52", zorder=3, label="achieved (all traffic)")
    ax.scatter([r["compulsory_intensity"]], [r["achieved_gops"]], color="#c44e52", marker="x", zorder=3,
               label="achieved (compulsory traffic only)")
    ax.set_xlabel("operational intensity (element ops / off-chip byte)")
    ax.set_ylabel("performance (G element ops / s)")
    ax.set_title(f"{report.program} on {report.target}: roofline")
    ax.legend(fontsize=8, loc="lower right")
    return fig
