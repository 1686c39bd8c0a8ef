"""Scratchpad occupancy over time, from the off-chip data schedule.

A slot holds a value from the event that writes it (a computation's result or a load)
through the last event that reads it (a computation's source or a store) before the
slot is written again; `live_slots` counts such values after every event. The events
are placed in time by the streams: a computation at the cycle its instruction issues
(a stream entry's ``tag`` is its instruction), a load or store at the cycle the memory
controller issues it (``mem0`` issues them in schedule order).
"""

from __future__ import annotations

import numpy as np

from fhec.backends.streams import Streams
from fhec.ir.schedule import DataSchedule, Event
from fhec.plot._figure import new_figure, plot_data


def live_slots(ds: DataSchedule) -> np.ndarray:
    """Slots holding a live value just after each event (int64, one per event)."""
    n = len(ds)
    ev = np.arange(n, dtype=np.int64)
    comp, load, store = ds.kind == Event.COMPUTE, ds.kind == Event.LOAD, ds.kind == Event.STORE
    writes_at = ev[comp | load]
    write_slot = ds.slot[comp | load].astype(np.int64)
    reads_at = np.concatenate([ev[comp & (ds.src0_slot >= 0)], ev[comp & (ds.src1_slot >= 0)], ev[store]])
    read_slot = np.concatenate([ds.src0_slot[comp & (ds.src0_slot >= 0)], ds.src1_slot[comp & (ds.src1_slot >= 0)],
                                ds.slot[store]]).astype(np.int64)
    # every access by (slot, event), a computation's reads before its write
    at = np.concatenate([reads_at, writes_at])
    slot = np.concatenate([read_slot, write_slot])
    is_write = np.concatenate([np.zeros(len(reads_at), bool), np.ones(len(writes_at), bool)])
    order = np.lexsort((is_write, at, slot))
    at, slot, is_write = at[order], slot[order], is_write[order]
    value = np.cumsum(is_write) - 1  # the write each access belongs to
    valid = value >= 0
    owner = np.flatnonzero(is_write)
    valid &= slot == slot[owner[np.maximum(value, 0)]]  # a read before any write of its slot has no value
    dies = at[owner].copy()
    np.maximum.at(dies, value[valid], at[valid])
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, at[owner], 1)
    np.add.at(delta, dies + 1, -1)
    return np.cumsum(delta)[:n]


def event_cycles(ds: DataSchedule, streams: Streams) -> np.ndarray:
    """The issue cycle of every event of `ds` in `streams` (float64)."""
    mem = np.array([u.cluster < 0 for u in streams.units])[streams.unit]  # mem0, gen0
    fu_cycle = np.zeros(len(ds.program), dtype=np.float64)
    fu_cycle[streams.tag[~mem]] = streams.cycle[~mem]
    mem_cycles = np.sort(streams.cycle[mem]).astype(np.float64)
    out = np.zeros(len(ds), dtype=np.float64)
    comp = ds.kind == Event.COMPUTE
    out[comp] = fu_cycle[ds.arg[comp]]
    out[~comp] = mem_cycles
    return out


def plot_scratchpad(report):
    """Slots in use against cycles, with the capacity and the peak; returns the Figure."""
    data = plot_data(report, "plot_scratchpad")
    ds = data.data_schedule
    live = live_slots(ds)
    cycles = event_cycles(ds, data.streams)
    order = np.argsort(cycles, kind="stable")
    fig = new_figure(9.0, 4.0)
    ax = fig.add_subplot()
    ax.step(cycles[order], live[order], where="post", color="#4c72b0", linewidth=0.8, label="slots in use")
    ax.axhline(ds.slots, color="#c44e52", linestyle="--", linewidth=1, label=f"capacity ({ds.slots} slots)")
    ax.set_xlabel("cycle")
    ax.set_ylabel("scratchpad RVec slots")
    ax.set_ylim(0, ds.slots * 1.08 + 1)
    ax.set_title(f"{report.program} on {report.target}: scratchpad occupancy (peak {report.peak_scratchpad_slots} "
                 f"of {ds.slots}, {ds.policy})")
    ax.legend(loc="lower right")
    return fig
