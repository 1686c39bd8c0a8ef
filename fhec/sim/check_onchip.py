"""The checker's own reading of the on-chip data path (`fhec.backends.onchip`).

Like `fhec.sim.check_timing`, this derives every number from the raw `Target` fields and
shares no code with the scheduler (`fhec.passes.cycle_onchip`):

- registers per cluster K = register_file.capacity_bytes // (N * word bytes);
- xo = ceil(N * word bytes / the smaller of network.port_bytes_per_cycle and
  scratchpad.port_bytes_per_cycle), the cycles a transfer holds its ports; it lands
  ``network.latency`` cycles after its issue;
- slot s lives in bank s % scratchpad.banks.

`check_onchip` verifies the structure of the register plan (every register inside its
cluster's register file: ``capacity``; transfers well formed: ``mismatch``), that no port
is over-subscribed (``port``: each cluster's scratchpad->cluster, cluster->scratchpad,
cluster->cluster in and out ports and each bank's read and write port carry one transfer
at a time; a register file serves at most ``read_ports`` reads and ``write_ports`` writes
at once, FU operands included), and that every transfer completes by ``total_cycles``.
The values in registers and slots are checked by `fhec.sim.check` with the same code as
slots.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.backends.onchip import TransferKind
from fhec.backends.streams import on_functional_units
from fhec.backends.target import Target
from fhec.ir.limb import LimbProgram

__all__ = ["OnChipFacts", "onchip_facts", "check_onchip"]


@dataclasses.dataclass(frozen=True)
class OnChipFacts:
    clusters: int
    registers: int
    xo: int
    latency: int
    banks: int
    read_ports: int
    write_ports: int


def onchip_facts(target: Target, N: int) -> OnChipFacts | None:
    """The on-chip numbers of `target` at ring degree N, None if it models no data path."""
    if target.network is None or target.register_file is None:
        return None
    word_bytes = 4 if target.word_bits <= 32 else (target.word_bits + 7) // 8  # as check_timing
    rvec = N * word_bytes
    port = min(target.network.port_bytes_per_cycle, target.scratchpad.port_bytes_per_cycle)
    return OnChipFacts(
        clusters=target.cluster.count,
        registers=target.register_file.capacity_bytes // rvec,
        xo=-(-rvec // port),
        latency=target.network.latency,
        banks=int(target.scratchpad.banks),
        read_ports=target.register_file.read_ports,
        write_ports=target.register_file.write_ports,
    )


def check_onchip(s, tm, facts: OnChipFacts, program: LimbProgram, op: np.ndarray, fu_ok: np.ndarray, col,
                 kinds) -> np.ndarray:
    """Report structural, port and completion hazards of the register plan of `s` into
    `col`; returns the mask of entries whose registers are well formed."""
    oc = s.onchip
    K, C = facts.registers, facts.clusters
    if oc.registers != K:
        col.add(kinds.MISMATCH, -1, f"the plan has {oc.registers} registers per cluster; the target has {K} at N = {s.N}")
    is_fu = on_functional_units(op)
    cluster = np.array([u.cluster for u in s.units], dtype=np.int64)[s.unit]
    tag = np.where(fu_ok, s.tag, 0).astype(np.int64)
    has1 = fu_ok & (program.src1[tag] >= 0)

    def inside(reg, where):
        return (reg >= 0) & (reg < C * K) & (reg // max(K, 1) == where)

    def source(reg, where):  # a register of the cluster, or -1: streamed by a transfer
        return (reg == -1) | inside(reg, where)

    bad = fu_ok & ~(inside(oc.reg, cluster) & source(oc.reg0, cluster) & np.where(has1, source(oc.reg1, cluster),
                                                                                   oc.reg1 == -1))
    bad |= ~is_fu & ((oc.reg != -1) | (oc.reg0 != -1) | (oc.reg1 != -1))
    col.many(kinds.CAPACITY, np.flatnonzero(bad),
             lambda e: f"names registers {int(oc.reg[e])} <- {int(oc.reg0[e])}, {int(oc.reg1[e])}, not all among the "
                       f"{K} registers of its cluster (flat index cluster * {K} + register; -1 = streamed source)")
    reg_ok = ~bad

    tr = oc.transfers
    kind = tr.kind
    known = np.isin(kind, [int(k) for k in TransferKind])
    fill, wb, xf = kind == TransferKind.FILL, kind == TransferKind.WRITEBACK, kind == TransferKind.XFER
    slots = s.slots
    # streamed to an entry (and possibly landing in a register too), or staged in a register
    streamed = (tr.entry >= 0) & (tr.entry < len(s)) & (tr.operand >= 0) & (tr.operand <= 2) & (
        (tr.reg == -1) | inside(tr.reg, tr.cluster))
    streamed |= (tr.entry == -1) & (tr.operand == -1) & inside(tr.reg, tr.cluster)
    good = known & (tr.cycle >= 0) & (tr.cluster >= 0) & (tr.cluster < C)
    good &= (tr.value >= 0) & (tr.value < program.num_rvecs)
    good &= np.where(wb, inside(tr.reg, tr.cluster) & (tr.slot >= 0) & (tr.slot < slots) & (tr.entry == -1)
                     & (tr.src_reg == -1), streamed)
    good &= np.where(xf, (tr.src_cluster >= 0) & (tr.src_cluster < C) & (tr.src_cluster != tr.cluster)
                     & inside(tr.src_reg, tr.src_cluster) & (tr.slot == -1),
                     (tr.slot >= 0) & (tr.slot < slots) & (tr.src_cluster == -1) & (tr.src_reg == -1))
    for j in np.flatnonzero(~good)[:20].tolist():
        col.add(kinds.MISMATCH, -1, f"network transfer {j} (kind {int(kind[j])}, cycle {int(tr.cycle[j])}, cluster "
                                    f"{int(tr.cluster[j])}, register {int(tr.reg[j])}, slot {int(tr.slot[j])}, entry "
                                    f"{int(tr.entry[j])}) is malformed")
    _check_ports(s, tm, facts, op, is_fu & fu_ok & reg_ok, cluster, has1, good, col, kinds)
    if len(tr):
        end = int((tr.cycle + facts.latency + facts.xo).max())
        if s.total_cycles < end:
            col.add(kinds.MISMATCH, -1, f"total_cycles = {s.total_cycles}, but a network transfer completes at cycle {end}")
    return reg_ok


def _check_ports(s, tm, facts: OnChipFacts, op, fu, cluster, has1, good, col, kinds) -> None:
    """Sweep every port's bookings; more at once than it has is a ``port`` hazard."""
    C, B, xo, lat = facts.clusters, facts.banks, facts.xo, facts.latency
    tr = s.onchip.transfers
    # resources: 0..C-1 scratchpad->cluster, C.. cluster->scratchpad, 2C.. cluster->cluster in,
    # 3C.. out, 4C.. bank read, 4C+B.. bank write, then RF read pools, then RF write pools
    FILLP, WBP, XIN, XOUT, BRD = 0, C, 2 * C, 3 * C, 4 * C
    BWR, RFR = BRD + B, BRD + 2 * B
    RFW = RFR + C
    cap = np.ones(RFW + C, dtype=np.int64)
    cap[RFR:RFW] = facts.read_ports
    cap[RFW:] = facts.write_ports
    res, start, length, who = [], [], [], []

    def book(r, t, n, w):
        res.append(np.asarray(r, np.int64))
        start.append(np.asarray(t, np.int64))
        length.append(np.broadcast_to(np.asarray(n, np.int64), np.shape(t)))
        who.append(np.asarray(w, np.int64))

    fe = np.flatnonzero(fu)
    oc = s.onchip
    r0 = fe[oc.reg0[fe] >= 0]  # register reads: streamed sources bypass the register file
    book(RFR + cluster[r0], s.cycle[r0], tm.read_cycles[op[r0]], r0)
    two = fe[has1[fe] & (oc.reg1[fe] >= 0)]
    book(RFR + cluster[two], s.cycle[two], tm.read_cycles[op[two]], two)
    book(RFW + cluster[fe], s.cycle[fe] + tm.latency[op[fe]], tm.write_cycles[op[fe]], fe)
    for mask, parts in (
        (tr.kind == TransferKind.FILL, ((FILLP, "cluster", 0), (BRD, "bank", 0))),
        (tr.kind == TransferKind.WRITEBACK, ((WBP, "cluster", 0), (BWR, "bank", 0), (RFR, "cluster", 0))),
        (tr.kind == TransferKind.XFER, ((XIN, "cluster", 0), (XOUT, "src_cluster", 0), (RFR, "src_cluster", 0))),
    ):
        j = np.flatnonzero(mask & good)
        for base, field, delay in parts:
            where = tr.slot[j] % B if field == "bank" else getattr(tr, field)[j]
            book(base + where, tr.cycle[j] + delay, xo, -2 - j)  # -2 - j: transfer j
        staged = j[(tr.reg[j] >= 0) & (tr.kind[j] != TransferKind.WRITEBACK)]
        book(RFW + tr.cluster[staged], tr.cycle[staged] + lat, xo, -2 - staged)
    res, start, length, who = (np.concatenate(a) for a in (res, start, length, who))
    if not len(res):
        return
    times = np.concatenate([start, start + length])
    delta = np.concatenate([np.ones(len(res), np.int64), -np.ones(len(res), np.int64)])
    rr = np.concatenate([res, res])
    order = np.lexsort((delta, times, rr))  # per resource, by time; an ending booking frees before a start
    level = np.cumsum(delta[order])
    over = (delta[order] > 0) & (level > cap[rr[order]])
    names = ["scratchpad->cluster port of cluster", "cluster->scratchpad port of cluster",
             "cluster->cluster in-port of cluster", "cluster->cluster out-port of cluster",
             "read port of bank", "write port of bank", "register file read ports of cluster",
             "register file write ports of cluster"]
    bounds = [FILLP, WBP, XIN, XOUT, BRD, BWR, RFR, RFW, RFW + C]
    for k in np.flatnonzero(over)[:50].tolist():
        r = int(rr[order][k])
        g = int(np.searchsorted(bounds, r, side="right") - 1)
        w = int(np.concatenate([who, who])[order][k])
        what = f"{names[g]} {r - bounds[g]} (capacity {int(cap[r])})"
        when = int(times[order][k])
        if w >= 0:
            col.add(kinds.PORT, w, f"over-subscribes the {what} at cycle {when}")
        else:
            col.add(kinds.PORT, -1, f"network transfer {-2 - w} over-subscribes the {what} at cycle {when}")
    extra = int(np.count_nonzero(over)) - 50
    if extra > 0:
        col.total += extra
