"""Chrome trace-event JSON of the streams, checked against the documented fields of the
Trace Event Format: complete events (ph "X") with name, ts, dur, pid, tid; metadata
events (ph "M") naming every process and thread used."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

import fhec
from fhec.backends.chrome_trace import MEMORY_PID
from fhec.backends.streams import MEMORY_KIND


@pytest.fixture(scope="module")
def compiled():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("traced", params)
    x = p.input("x")
    p.output("y", (x * x).rotate(1) + x)
    return fhec.compile(p, "tiny", progress=False)


def test_trace_has_the_documented_fields(compiled, tmp_path):
    path = compiled.to_chrome_trace(tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    meta = [e for e in events if e["ph"] == "M"]
    assert len(complete) == len(compiled.streams)
    for e in complete:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat", "args"} <= set(e)
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0 and e["dur"] > 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and e["name"]
    named_threads = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    named_processes = {e["pid"] for e in meta if e["name"] == "process_name"}
    assert {(e["pid"], e["tid"]) for e in complete} <= named_threads
    assert {e["pid"] for e in complete} <= named_processes
    assert all("name" in e["args"] for e in meta if e["name"] in ("thread_name", "process_name"))


def test_one_track_per_unit_memory_on_memory_tracks(compiled):
    from fhec.backends.chrome_trace import chrome_trace

    s = compiled.streams
    trace = chrome_trace(s, compiled.target, compiled.lowered.limb, compiled.lowered.he)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    by_track = defaultdict(list)
    for e in complete:
        by_track[(e["pid"], e["tid"])].append(e)
    mem = [e for e in complete if e["cat"] == "memory"]
    assert mem and all(e["pid"] == MEMORY_PID and e["name"].split()[0] in ("LOAD", "STORE") for e in mem)
    fu_units = {u for u, unit in enumerate(s.units) if unit.kind != MEMORY_KIND and s.counts()[unit.name]}
    assert {tid for (pid, tid) in by_track if pid != MEMORY_PID} == fu_units
    for events in by_track.values():  # a unit's entries never overlap on its track
        events.sort(key=lambda e: e["ts"])
        for a, b in zip(events, events[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-9
    # names carry the HE-level origin: the limb op, then the HE op and value
    fu = [e for e in complete if e["cat"] != "memory"]
    he_ops = {n.op.value for n in compiled.lowered.he.nodes}
    assert all(" · " in e["name"] and e["name"].split(" · ")[1].split()[0] in he_ops for e in fu)
    assert any(e["name"].startswith("AUT · ") for e in fu)
    # timestamps are cycles at the clock
    assert max(e["ts"] + e["dur"] for e in complete) <= s.total_cycles / (compiled.target.clock_ghz * 1000) + 1e-9


def test_unwritable_trace_path_is_a_user_error(compiled, tmp_path):
    from fhec.errors import OutputDirectoryError

    with pytest.raises(OutputDirectoryError, match="cannot write"):
        compiled.to_chrome_trace(tmp_path / "missing" / "trace.json")
