"""Which resource binds a phase of a schedule: busy time per resource class.

`busy_intervals` lists, for every resource class of a target, the cycles each booking holds
it: the functional units of each kind and the off-chip memory from the streams and, on a
target that models the on-chip data path (`fhec.backends.onchip`), the network ports
(scratchpad->cluster, cluster->scratchpad, cluster->cluster), the scratchpad banks' ports
and the register files' read and write ports. `utilization_in` gives each class's busy
fraction over a window (its bookings clipped to the window, over the class's capacity ×
the window), and `binding_resource` the class with the highest: the resource that limits
that phase. The report names it for the whole program and for every bootstrap stage.
"""

from __future__ import annotations

import numpy as np

from fhec.backends.onchip import TransferKind
from fhec.backends.streams import MEMORY_KIND, op_timing, on_functional_units
from fhec.backends.target import Target

__all__ = ["busy_intervals", "utilization_in", "binding_resource", "NETWORK_CLASSES"]

NETWORK_CLASSES = ("network sp->cluster", "network cluster->sp", "network cluster->cluster", "scratchpad bank ports",
                   "RF read ports", "RF write ports")
"""The on-chip classes, in report order (after the unit kinds and ``hbm``)."""


def busy_intervals(streams, target: Target) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """Resource class -> (starts, ends, capacity): every booking of the class and how many
    bookings it carries at once (units of the kind, ports, PHY channel)."""
    tm = op_timing(target, streams.N)
    out: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
    kinds = np.array([u.kind for u in streams.units], dtype=object)
    ek = kinds[streams.unit]
    for kind in dict.fromkeys(u.kind for u in streams.units):
        sel = ek == kind
        t = streams.cycle[sel]
        count = sum(1 for u in streams.units if u.kind == kind)
        out["hbm" if kind == MEMORY_KIND else kind] = (t, t + streams.entry_occupancy(tm.occupancy)[sel], count)
    plan = streams.onchip
    if plan is None or target.network is None:
        return out
    xo = target.network_cycles(streams.N)
    lat = target.network.latency
    C = target.cluster.count
    tr = plan.transfers
    fill, wb, xf = (tr.kind == k for k in (TransferKind.FILL, TransferKind.WRITEBACK, TransferKind.XFER))

    def span(mask, delay=0):
        t = tr.cycle[mask] + delay
        return t, t + xo

    out["network sp->cluster"] = (*span(fill), C)
    out["network cluster->sp"] = (*span(wb), C)
    out["network cluster->cluster"] = (*span(xf), C)
    banks = int(target.scratchpad.banks)
    out["scratchpad bank ports"] = (*span(fill | wb), 2 * banks)
    rf = target.register_file
    fu = on_functional_units(streams.op)
    t = streams.cycle
    r0 = fu & (plan.reg0 >= 0)
    r1 = fu & (plan.reg1 >= 0)
    rd = tm.read_cycles[streams.op]
    reads = (np.concatenate([t[r0], t[r1], span(wb | xf)[0]]),
             np.concatenate([t[r0] + rd[r0], t[r1] + rd[r1], span(wb | xf)[1]]))
    land = t[fu] + tm.latency[streams.op[fu]]
    staged = (fill | xf) & (tr.reg >= 0)
    writes = (np.concatenate([land, span(staged, lat)[0]]),
              np.concatenate([land + tm.write_cycles[streams.op[fu]], span(staged, lat)[1]]))
    out["RF read ports"] = (*reads, C * rf.read_ports)
    out["RF write ports"] = (*writes, C * rf.write_ports)
    return out


def utilization_in(intervals: dict[str, tuple[np.ndarray, np.ndarray, int]], start: int, end: int) -> dict[str, float]:
    """Resource class -> busy fraction of its capacity over the window [start, end)."""
    width = max(end - start, 1)
    out = {}
    for name, (a, b, cap) in intervals.items():
        busy = np.clip(np.minimum(b, end) - np.maximum(a, start), 0, None).sum()
        out[name] = float(busy) / (max(cap, 1) * width)
    return out


def binding_resource(intervals: dict[str, tuple[np.ndarray, np.ndarray, int]], start: int, end: int) -> str:
    """The resource class busiest over [start, end) (the first of equals, in class order)."""
    return binding_resource_over(intervals, [(start, end)])


def binding_resource_over(intervals: dict[str, tuple[np.ndarray, np.ndarray, int]],
                          windows: list[tuple[int, int]]) -> str:
    """The resource class busiest over the disjoint, ascending `windows` together (busy cycles in them
    over capacity times their total width; the first of equals, in class order)."""
    lo = np.array([w[0] for w in windows], dtype=np.int64)
    hi = np.array([w[1] for w in windows], dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(hi - lo)])  # window cycles before each window
    width = max(int(before[-1]), 1)

    def covered(x: np.ndarray) -> np.ndarray:
        # window cycles below x: one binary search per interval end, not a pass per window
        # (a program with many bootstraps has thousands of windows per stage)
        k = np.searchsorted(lo, x, side="right") - 1
        inside = np.clip(x - lo[k.clip(min=0)], 0, (hi - lo)[k.clip(min=0)])
        return np.where(k >= 0, before[k.clip(min=0)] + inside, 0)

    util = {}
    for name, (a, b, cap) in intervals.items():
        busy = int((covered(np.asarray(b, dtype=np.int64)) - covered(np.asarray(a, dtype=np.int64))).sum()) if len(a) else 0
        util[name] = float(busy) / (max(cap, 1) * width)
    return max(util, key=util.__getitem__) if util else ""
