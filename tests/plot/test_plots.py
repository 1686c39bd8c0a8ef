"""The plots: each returns a Figure that renders as PNG, and the numbers drawn are the
schedule's (busy time per unit, live slots, traffic classes)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")  # the plot extra, which `make test` installs

import fhec  # noqa: E402
from fhec.errors import InvalidArgumentError, MissingExtraError, PlotDataError  # noqa: E402
from fhec.plot.occupancy import event_cycles, live_slots  # noqa: E402
from fhec.plot.roofline_chart import roofline_numbers  # noqa: E402
from fhec.plot.timeline import busy_fractions  # noqa: E402
from fhec.plot.traffic_bars import traffic_by_class  # noqa: E402
from fhec.sim.timing import Report, unit_busy_cycles  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _program(n=2**10, sum_n=4):
    params = fhec.CKKSParams(N=n, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("plotted", params)
    x, w = p.input("x"), p.plain("w")
    p.output("y", ((x * x) * w).sum_slots(sum_n) + x)
    return p


@pytest.fixture(scope="module")
def spilled():
    """On tiny the scratchpad overflows: loads, stores and evictions to draw."""
    return fhec.compile(_program(), "tiny", progress=False)


@pytest.mark.parametrize("plot", ["plot_utilization", "plot_traffic", "plot_scratchpad", "plot_roofline"])
def test_every_report_plot_is_a_png_figure(spilled, plot):
    fig = getattr(spilled.report, plot)()
    assert fig._repr_png_().startswith(PNG)
    assert fig.axes and fig.axes[0].get_title().startswith("plotted on tiny")


def test_busy_fractions_add_up_to_each_units_busy_cycles(spilled):
    s, t = spilled.streams, spilled.target
    for bins in (1, 7, 200):
        frac, edges = busy_fractions(s, t, bins)
        assert frac.shape == (len(s.units), bins) and frac.min() >= 0 and frac.max() <= 1 + 1e-9
        np.testing.assert_allclose((frac * np.diff(edges)).sum(axis=1), unit_busy_cycles(s, t), rtol=1e-9)


def test_live_slots_peak_is_the_schedules_peak(spilled):
    ds = spilled.data_schedule
    live = live_slots(ds)
    assert live.max() == ds.peak_slots == spilled.report.peak_scratchpad_slots
    assert live.min() >= 0 and live.max() <= ds.slots
    cycles = event_cycles(ds, spilled.streams)
    assert len(cycles) == len(ds) and cycles.min() >= 0 and cycles.max() <= spilled.streams.total_cycles


def test_traffic_classes_add_up_to_the_reported_totals(spilled):
    off = spilled.report.offchip_bytes
    rows = traffic_by_class(off)
    assert sum(c for _, c, _ in rows) == off["compulsory"]
    assert sum(n for _, _, n in rows) == off["noncompulsory"] > 0


def test_roofline_point_is_under_the_roofs(spilled):
    r = roofline_numbers(spilled.report, spilled.target)
    assert r["achieved_gops"] <= r["mix_gops"] + 1e-9 <= r["peak_gops"] + 1e-9
    assert r["achieved_gops"] <= r["bandwidth_gb_s"] * r["compulsory_intensity"] + 1e-9


def test_compare_and_fhec_plot_functions(spilled):
    f1 = fhec.compile(_program(), "f1", progress=False)
    fig = fhec.plot.compare([spilled.report, f1.report])
    assert fig._repr_png_().startswith(PNG)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["tiny", "f1"]
    with pytest.raises(InvalidArgumentError, match="one label per report"):
        fhec.plot.compare([spilled.report], labels=["a", "b"])
    with pytest.raises(InvalidArgumentError, match="list of reports"):
        fhec.plot.compare("f1")


def test_a_report_read_from_json_plots_what_its_fields_allow(spilled):
    loaded = Report.model_validate_json(spilled.report.to_json())
    assert loaded == spilled.report and loaded.plot_data is None
    assert loaded.plot_traffic()._repr_png_().startswith(PNG)
    assert fhec.plot.compare([loaded])._repr_png_().startswith(PNG)
    for plot in ("plot_utilization", "plot_scratchpad", "plot_roofline"):
        with pytest.raises(PlotDataError, match=f"{plot} needs the streams"):
            getattr(loaded, plot)()


def test_without_matplotlib_the_error_says_what_to_install(spilled, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"lacks: pip install matplotlib"):
        spilled.report.plot_traffic()


def test_write_plots_writes_every_png(spilled, tmp_path):
    paths = spilled.write_plots(tmp_path / "plots")
    assert sorted(p.name for p in paths) == sorted(f"{n}.png" for n in fhec.plot.PLOTS)
    assert all(p.read_bytes().startswith(PNG) for p in paths)
