"""The numbers the plots and traces draw are the schedule's, over random programs: busy
time per unit, the live-slot peak, one trace event per stream entry, never overlapping
on a track. (Data-free: these read schedules, not ciphertexts.)"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, strategies as st

pytest.importorskip("matplotlib")  # fhec.plot's modules import it; `make test` installs the plot extra

import fhec  # noqa: E402
import fhec.testing as ft  # noqa: E402
from fhec.backends.chrome_trace import chrome_trace  # noqa: E402
from fhec.ir.schedule import Event  # noqa: E402
from fhec.plot.occupancy import event_cycles, live_slots  # noqa: E402
from fhec.plot.timeline import busy_fractions  # noqa: E402
from fhec.sim.timing import unit_busy_cycles  # noqa: E402


@given(data=st.data())
def test_plots_and_traces_draw_the_schedule(data):
    scheme = data.draw(st.sampled_from(["ckks", "bgv"]))
    # tiny at N = 2^9..2^10 holds 16..32 RVecs: many of these programs spill
    params = data.draw(ft.params(scheme, max_levels=3, log_n=(9, 10)))
    program = data.draw(ft.programs(params=params, max_depth=3, max_ops=12))
    c = fhec.compile(program, "tiny", progress=False)
    s, ds = c.streams, c.data_schedule

    bins = data.draw(st.integers(1, 64))
    frac, edges = busy_fractions(s, c.target, bins)
    np.testing.assert_allclose((frac * np.diff(edges)).sum(axis=1), unit_busy_cycles(s, c.target), rtol=1e-9)

    live = live_slots(ds)
    assert live.max(initial=0) == ds.peak_slots and live.min(initial=0) >= 0
    cycles = event_cycles(ds, s)
    mem = cycles[ds.kind != Event.COMPUTE]
    assert np.all(np.diff(mem) >= 0)  # mem0 issues loads and stores in schedule order

    events = [e for e in chrome_trace(s, c.target, c.lowered.limb, c.lowered.he)["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(s)
    tracks = defaultdict(list)
    for e in events:
        tracks[(e["pid"], e["tid"])].append((e["ts"], e["dur"]))
    for spans in tracks.values():
        spans.sort()
        assert all(a + d <= b + 1e-9 for (a, d), (b, _) in zip(spans, spans[1:]))
