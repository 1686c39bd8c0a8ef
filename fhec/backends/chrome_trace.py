"""Streams as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
chrome://tracing open.

The format is the Trace Event Format (Google's "Trace Event Format" document): a
JSON object whose ``traceEvents`` list holds events with ``ph`` (phase), ``ts``
(timestamp, microseconds), ``pid`` and ``tid`` (the process and thread a track
belongs to), ``name``, ``cat`` and ``args``. Here:

- every stream entry is a complete event (``ph = "X"``) lasting its unit's occupancy
  (``dur``), so the entries of one track never overlap; ``args`` hold the cycle, the
  latency to its first result, its operands and its HE-level origin;
- each functional unit is a thread (``tid`` = its unit index) of its cluster's process
  (``pid`` = cluster + 1); loads and stores are on two threads of the process
  ``off-chip memory`` (``pid`` 0), which the memory controller ``mem0`` drives;
- metadata events (``ph = "M"``: ``process_name``, ``thread_name``,
  ``process_sort_index``, ``thread_sort_index``) name and order the tracks;
- names say what ran and why: ``NTT · mod_up %12`` (the limb op, then the HE op and
  value it implements), ``LOAD ksh`` / ``STORE output`` (the value class moved).

Times are the schedule's cycles at the target's clock: ``ts = cycle / (clock_ghz *
1000)`` µs.
"""

from __future__ import annotations

import numpy as np

from fhec.backends.streams import Streams, StreamOp, op_timing
from fhec.backends.target import Target
from fhec.ir.he import HeProgram
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import RVecClass

__all__ = ["chrome_trace"]

MEMORY_PID = 0
_MEMORY_TRACKS = {StreamOp.LOAD: (0, "loads"), StreamOp.STORE: (1, "stores"), StreamOp.GEN: (2, "generated keys")}
"""Memory op -> (tid, track name) in the memory process."""

_CLASS_NAMES = {c: c.name.lower() for c in RVecClass}


def _he_names(he: HeProgram | None) -> dict[int, tuple[str, str | None]]:
    """HE node id -> (``op %id``, DSL source location)."""
    if he is None:
        return {}
    return {n.id: (f"{n.op.value} %{n.id}", n.loc) for n in he.nodes}


def _metadata(streams: Streams) -> list[dict]:
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": MEMORY_PID, "tid": 0, "args": {"name": "off-chip memory (mem0)"}},
        {"ph": "M", "name": "process_sort_index", "pid": MEMORY_PID, "tid": 0, "args": {"sort_index": 10**6}},
    ]
    for tid, name in _MEMORY_TRACKS.values():
        events.append({"ph": "M", "name": "thread_name", "pid": MEMORY_PID, "tid": tid, "args": {"name": name}})
    clusters = sorted({u.cluster for u in streams.units if u.cluster >= 0})
    for c in clusters:
        events.append({"ph": "M", "name": "process_name", "pid": c + 1, "tid": 0, "args": {"name": f"cluster {c}"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": c + 1, "tid": 0, "args": {"sort_index": c}})
    for i, u in enumerate(streams.units):
        if u.cluster >= 0:  # functional units (mem0 and the key generator gen0 have no cluster)
            events.append({"ph": "M", "name": "thread_name", "pid": u.cluster + 1, "tid": i, "args": {"name": u.name}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": u.cluster + 1, "tid": i,
                           "args": {"sort_index": i}})
    return events


def chrome_trace(streams: Streams, target: Target, limb: LimbProgram, he: HeProgram | None = None) -> dict:
    """The trace-event JSON object (a dict ready for `json.dump`) of `streams`.

    `limb` is the program the streams implement (an entry's ``tag`` is its instruction
    or the rvec it moves); `he`, the HE program `limb` was lowered from, names each
    instruction's HE-level origin (without it, events carry the HE node id only)."""
    tm = op_timing(target, streams.N)
    us_per_cycle = 1.0 / (target.clock_ghz * 1000.0)
    he_names = _he_names(he)
    units = streams.units
    cycles = streams.cycle.tolist()
    ops = streams.op.tolist()
    unit = streams.unit.tolist()
    tags = streams.tag.tolist()
    dst, src0, src1 = streams.dst.tolist(), streams.src0.tolist(), streams.src1.tolist()
    he_node = limb.he_node.tolist()
    rvec_class = limb.rvec_class.tolist()
    occupancy, latency = streams.entry_occupancy(tm.occupancy).tolist(), tm.latency.tolist()
    op_names = {int(o): o.name for o in StreamOp}
    events = _metadata(streams)
    for e in range(len(streams)):
        op = ops[e]
        args: dict = {"cycle": cycles[e], "latency_cycles": latency[op]}
        if op in _MEMORY_TRACKS:
            tid, _ = _MEMORY_TRACKS[op]
            pid = MEMORY_PID
            rvec = tags[e]
            cls = _CLASS_NAMES[RVecClass(rvec_class[rvec])] if rvec >= 0 else "unknown"
            name, cat = f"{op_names[op]} {cls}", "memory"
            args.update(rvec=rvec, slot=dst[e] if op in (StreamOp.LOAD, StreamOp.GEN) else src0[e])
        else:
            u = units[unit[e]]
            pid, tid = u.cluster + 1, unit[e]
            node = he_node[tags[e]] if tags[e] >= 0 else -1
            origin, loc = he_names.get(node, (f"%{node}" if node >= 0 else "?", None))
            name, cat = f"{op_names[op]} · {origin}", u.kind
            args.update(instruction=tags[e], he_node=node, dst_slot=dst[e], src_slots=[src0[e], src1[e]])
            if loc:
                args["loc"] = loc
        events.append({"name": name, "cat": cat, "ph": "X", "ts": cycles[e] * us_per_cycle,
                       "dur": occupancy[e] * us_per_cycle, "pid": pid, "tid": tid, "args": args})
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"target": target.name, "N": streams.N, "total_cycles": int(streams.total_cycles),
                      "clock_ghz": target.clock_ghz, "generator": "fhec"},
    }
