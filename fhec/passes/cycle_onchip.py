"""Cycle-level scheduling with the on-chip data path (F1 §4.4): register allocation,
network transfers and port booking, for targets that model them (`Target.models_onchip`).

`schedule_onchip_kernel` is the kernel `fhec.passes.cycle.schedule_cycles` runs on such a
target, in place of its plain kernel. It walks the data schedule in order like the plain
one and additionally:

- **allocates registers** (F1 §4.4: "manages their register files"). Every FU result
  lands in a register of the cluster that computes it. A source already in a register of
  the chosen cluster is read from there: a value produced and consumed in one cluster is
  chained through the register file and never crosses the network. Otherwise it is
  brought in first: a FILL from its scratchpad slot, or an XFER from the register of
  another cluster that holds it when the scratchpad has no copy yet.
- **writes back lazily.** A result reaches its scratchpad slot (a WRITEBACK) only when
  something needs it there: a STORE, or the eviction of its register while it still has
  readers and no scratchpad copy.
- **chooses victims** among the cluster's registers by when each frees plus the traffic
  evicting it costs: a dead value (no readers left) costs nothing, a value with a
  scratchpad copy one later fill, a value without one a write-back and a fill.
- **books ports** as timelines with gaps, like the units: per cluster its three network
  ports (scratchpad->cluster, cluster->scratchpad, cluster->cluster in and out), per bank
  its read and write port, per cluster its RF read and write ports (pools). An event
  starts at the earliest cycle at which its unit and every port it needs are free for
  their windows (`_co_earliest`).
- **chooses the cluster** of an FU op by the earliest start its sources allow there
  (a register hit now, or a fill's estimated arrival), its home (`lineage_homes`: the
  modulus index plus its input ciphertext's offset, so that independent ciphertexts tile
  the clusters), then the unit best fit as before.

`schedule_cycles` first renames the scratchpad slots so that reads spread over the banks
(`balance_banks`). Preserves: the data schedule's events, slots up to that renaming and
off-chip traffic (no load or store is added or removed). Every produced `Streams` passes `fhec.sim.check.check_streams`, which
re-verifies registers, transfers and ports on its own (`fhec.sim.check_onchip`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fhec._jit import announce_compile
from fhec.passes.cycle import _book, _earliest

announce_compile(__file__)

__all__ = ["balance_banks", "lineage_homes", "schedule_onchip_kernel"]

_COMPUTE = 0  # Event.COMPUTE
_LOAD_EVENT = 1  # Event.LOAD
_LOAD = 16  # StreamOp.LOAD
_STORE = 17  # StreamOp.STORE
_FILL = 0  # TransferKind.FILL
_WB = 1  # TransferKind.WRITEBACK
_XFER = 2  # TransferKind.XFER
_NEVER = np.int64(2**62)
_CO_TRIES = 64
"""Rounds of `_co_earliest` before it falls back to the timelines' tails."""
_PORT_GAPS = 16
_MISS_COST = 4
"""Cluster choice: a source the cluster would have to bring in over the network counts as
this many transfer times of delay (so chaining through a register file wins close calls)."""
_AWAY_COST = 8
"""Cluster choice: an op away from its home cluster (`lineage_homes`) counts as this many
transfer times of delay. Residue-wise work then stays in one cluster
and only base conversions cross (measured on F1's matvec: 854,000 -> 764,000 cycles)."""
_LATE = np.int64(2**40)
"""Victim cost offset of a register not free when wanted (above any best-fit cost)."""
_LIVE = np.int64(2**36)
"""Victim cost offset of a register whose value is still needed: any register free by the
time it is wanted and holding nothing needed wins; one holding a value without a
scratchpad copy (a write-back and a fill) costs twice one with a copy (a fill)."""
_HORIZON = 64
"""A register hit whose read would come more than this many transfer times after the
register's current use ends streams the value's scratchpad copy instead, so that a late
reader does not hold a register idle until it runs."""


def balance_banks(data, banks: int):
    """The data schedule with its scratchpad slots renamed so that the reads spread over
    the banks (slot s lives in bank s % banks).

    Slot numbers are names: the off-chip schedule takes free slots first in first out and
    does not know banks, so the slots of values read many times (key-switch hint limbs,
    read once per ciphertext that uses the key) can crowd a few banks, whose read ports
    then bind while the others idle (F1 Table 4's permutation at N = 2^13: 14 of the 98
    hint slots in one bank, none in another, the busiest bank's read port 84% busy). The
    renaming deals the slots out, most read first, each to the bank with the fewest reads
    so far that still has a free name (longest processing time first).

    Preserves: every event, its order and which events share a slot (a permutation of the
    slot names), hence the off-chip traffic and every slot reuse; only the bank of each
    slot changes.
    """
    import dataclasses

    from fhec.ir.schedule import Event

    comp = data.kind == Event.COMPUTE
    reads = np.concatenate([data.src0_slot[comp], data.src1_slot[comp]]).astype(np.int64)
    weight = np.bincount(reads[reads >= 0], minlength=data.slots)
    order = np.argsort(-weight, kind="stable")
    # the free names of each bank, in ascending order
    names = [list(range(b, data.slots, banks))[::-1] for b in range(banks)]
    load = np.zeros(banks, dtype=np.int64)
    rename = np.empty(data.slots, dtype=np.int64)
    for s in order:
        open_banks = [b for b in range(banks) if names[b]]
        b = min(open_banks, key=lambda b: (load[b], b))
        rename[s] = names[b].pop()
        load[b] += weight[s]

    def mapped(col):
        col = np.asarray(col, dtype=np.int64)
        return np.where(col >= 0, rename[np.maximum(col, 0)], col).astype(np.int32)

    return dataclasses.replace(data, slot=mapped(data.slot), src0_slot=mapped(data.src0_slot),
                               src1_slot=mapped(data.src1_slot))


def lineage_homes(program, clusters: int) -> np.ndarray:
    """The home cluster of each instruction (int64): its modulus index plus the offset of
    the input ciphertext it descends from, mod `clusters`.

    Residue-wise work stays in one cluster per modulus (the cluster choice's `_AWAY_COST`),
    but a key switch of L < clusters limbs has only L moduli: with the home its modulus
    alone, independent ciphertexts would all pile their NTTs, products and hint fills onto
    the same L clusters and leave the rest idle (F1 Table 4's permutation at L = 7: 7 of
    16 clusters did three times the ops of the others). So the inputs tile the clusters:
    input k's limbs start at the sum of the limb counts of inputs 0..k-1, and every
    instruction inherits the offset of its first source that has one (a computed value
    carries its instruction's). An input with at least as many limbs as clusters already
    covers them all and gets offset 0 (it would only shift its own work, and measured on
    F1's matvec shifting cost 4%). Loaded keys and constants carry none; an instruction
    reading only those gets offset 0. A program with one input keeps the plain
    modulus-index homes.
    """
    from fhec.ir.limb import RVecClass

    off = np.full(program.num_rvecs, -1, dtype=np.int64)
    inputs = program.rvec_ids(RVecClass.INPUT)
    if len(inputs):
        tags = program.rvec_tags(inputs)  # (input_index, poly, limb)
        count = int(tags[:, 0].max()) + 1
        limbs = np.zeros(count, dtype=np.int64)
        np.maximum.at(limbs, tags[:, 0], tags[:, 2] + 1)
        # an input with as many limbs as clusters already covers them all: it keeps offset 0
        # and takes no room in the tiling (F1's matvec, 17 limbs: homes as before)
        limbs[limbs >= clusters] = 0
        start = np.concatenate([[0], np.cumsum(limbs)[:-1]])
        off[inputs] = start[tags[:, 0]] % clusters
    return _propagate_homes(program.src0.astype(np.int64), program.src1.astype(np.int64),
                            program.dst.astype(np.int64), program.mod.astype(np.int64), off, clusters)


@njit(cache=True)
def _propagate_homes(src0, src1, dst, mod, off, clusters):
    # array order is a valid execution order (`fhec.ir.limb`): every source's offset is
    # set before its readers, so one forward pass propagates them
    home = np.empty(len(dst), dtype=np.int64)
    for i in range(len(dst)):
        o = np.int64(0)
        if src0[i] >= 0 and off[src0[i]] >= 0:
            o = off[src0[i]]
        elif src1[i] >= 0 and off[src1[i]] >= 0:
            o = off[src1[i]]
        off[dst[i]] = o
        home[i] = (mod[i] + o) % clusters
    return home


@njit(cache=True)
def _co_earliest(t0, lo, hi, off, ln, j0, j1, chosen, gidx, tail, gap_a, gap_b, gap_n):
    """Earliest t >= t0 at which requirement j in [j0, j1) (a window [t + off[j], t +
    off[j] + ln[j]) on any one member of the pool rows [lo[j], hi[j]), members distinct)
    is free for every j. Fills `chosen` and `gidx` (the gap each window falls in, -1 =
    the tail)."""
    t = t0
    for _ in range(_CO_TRIES):
        ok = True
        for j in range(j0, j1):
            best_m = -1
            best_t = _NEVER
            best_g = -1
            for m in range(lo[j], hi[j]):
                taken = False
                for i in range(j0, j):
                    if chosen[i] == m:
                        taken = True
                if taken:
                    continue
                tt, w, g = _earliest(m, t + off[j], ln[j], tail, gap_a, gap_b, gap_n)
                tt -= off[j]
                if tt < best_t:
                    best_m, best_t, best_g = m, tt, g
                    if tt == t:
                        break
            chosen[j] = best_m
            gidx[j] = best_g
            if best_t > t:
                t = best_t
                ok = False
                break
        if ok:
            return t
    # give up on gaps: after every chosen member's tail everything is free
    for j in range(j0, j1):
        best_m = -1
        best_tail = _NEVER
        for m in range(lo[j], hi[j]):
            taken = False
            for i in range(j0, j):
                if chosen[i] == m:
                    taken = True
            if not taken and tail[m] < best_tail:
                best_m, best_tail = m, tail[m]
        chosen[j] = best_m
        gidx[j] = -1
        t = max(t, best_tail - off[j])
    return t


@njit(cache=True)
def _co_book(t, off, ln, j0, j1, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n):
    for j in range(j0, j1):
        m = chosen[j]
        _book(m, t + off[j], ln[j], gidx[j], min_len[m], tail, gap_a, gap_b, gap_n)


@njit(cache=True)
def _record(tr, n, kind, cycle, cluster, reg, src_cluster, src_reg, slot, value, entry, operand):
    tr[n, 0] = kind
    tr[n, 1] = cycle
    tr[n, 2] = cluster
    tr[n, 3] = reg
    tr[n, 4] = src_cluster
    tr[n, 5] = src_reg
    tr[n, 6] = slot
    tr[n, 7] = value
    tr[n, 8] = entry
    tr[n, 9] = operand


@njit(cache=True)
def _grow(tr, n):
    if n < tr.shape[0]:
        return tr
    bigger = np.empty((2 * tr.shape[0] + 16, tr.shape[1]), dtype=np.int64)
    bigger[:n] = tr[:n]
    return bigger


@njit(cache=True)
def schedule_onchip_kernel(ev_kind, ev_arg, ev_slot, op, src0, src1, dst, num_rvecs, slots,
                           occ, lat, rd, wr, kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit,
                           unit_cluster, remaining, home, C, K, xo, netlat, B, RP, WP):
    """Place every event (see the module docstring). Returns (unit, cycle, reg, reg0,
    reg1 per event; total cycles; the transfer table (n, 8); an error code, 0 = none)."""
    ne = len(ev_kind)
    R0 = len(unit_min_occ)
    FILLP = R0
    WBP = R0 + C
    XIN = R0 + 2 * C
    XOUT = R0 + 3 * C
    BRD = R0 + 4 * C
    BWR = BRD + B
    RFR = BWR + B
    RFW = RFR + C * RP
    rows = RFW + C * WP
    tail = np.zeros(rows, dtype=np.int64)
    gap_a = np.zeros((rows, _PORT_GAPS), dtype=np.int64)
    gap_b = np.zeros((rows, _PORT_GAPS), dtype=np.int64)
    gap_n = np.zeros(rows, dtype=np.int64)
    min_len = np.full(rows, min(xo, unit_min_occ.min()), dtype=np.int64)
    min_len[:R0] = unit_min_occ

    out_unit = np.empty(ne, dtype=np.int16)
    out_cycle = np.empty(ne, dtype=np.int64)
    out_reg = np.full(ne, -1, dtype=np.int64)
    out_r0 = np.full(ne, -1, dtype=np.int64)
    out_r1 = np.full(ne, -1, dtype=np.int64)
    tr = np.empty((ne // 2 + 16, 10), dtype=np.int64)
    ntr = 0

    # the scratchpad copy of each value, and each slot's owner
    sp_ok = np.zeros(num_rvecs, dtype=np.bool_)
    sp_avail = np.zeros(num_rvecs, dtype=np.int64)
    sp_wdur = np.zeros(num_rvecs, dtype=np.int64)
    slot_of = np.full(num_rvecs, -1, dtype=np.int64)
    slot_val = np.full(slots, -1, dtype=np.int64)
    slot_free = np.zeros(slots, dtype=np.int64)
    mem_ready = np.zeros(num_rvecs, dtype=np.int64)
    # registers: the value each holds, when it lands, how long it is written, when it may be replaced
    nreg = C * K
    reg_val = np.full(nreg, -1, dtype=np.int64)
    reg_avail = np.zeros(nreg, dtype=np.int64)
    reg_wdur = np.zeros(nreg, dtype=np.int64)
    reg_free = np.zeros(nreg, dtype=np.int64)
    rf_loc = np.full(num_rvecs, -1, dtype=np.int64)  # the latest register copy of each value

    # requirements of one event (`_co_earliest`): 0..11 for an FU op, 12..15 for a write-back or staging
    lo = np.zeros(16, dtype=np.int64)
    hi = np.zeros(16, dtype=np.int64)
    off = np.zeros(16, dtype=np.int64)
    ln = np.zeros(16, dtype=np.int64)
    chosen = np.zeros(16, dtype=np.int64)
    gidx = np.zeros(16, dtype=np.int64)
    pins = np.full(2, -1, dtype=np.int64)  # registers the op reads (not to be evicted for its result)
    mode = np.full(2, -1, dtype=np.int64)  # per source: -1 a register, else the transfer kind streaming it
    xsrc = np.full(2, -1, dtype=np.int64)  # the register an XFER reads
    keep = np.full(2, -1, dtype=np.int64)  # the register a streamed source also lands in, or -1
    pins2 = np.full(2, -1, dtype=np.int64)
    total = np.int64(0)
    err = 0

    for e in range(ne):
        k = ev_kind[e]
        s = ev_slot[e]
        if k == _COMPUTE:
            i = ev_arg[e]
            o = op[i]
            v0 = src0[i]
            v1 = src1[i]
            kk = kind_of_op[o]
            dsrc = netlat + max(0, xo - rd[o])  # a streamed operand's transfer starts this much before the op
            # --- the cluster: earliest start its sources allow there, then best fit as before
            best = -1
            best_t = _NEVER
            best_w = _NEVER
            best_cost = _NEVER
            for j in range(kind_ptr[kk], kind_ptr[kk + 1]):
                u = kind_units[j]
                c = unit_cluster[u]
                t0 = np.int64(0)
                misses = 0
                for n in range(2):
                    v = v0 if n == 0 else v1
                    if v < 0:
                        continue
                    f = rf_loc[v]
                    if f >= 0 and reg_val[f] == v and f // K == c:
                        t0 = max(t0, reg_avail[f] + max(0, reg_wdur[f] - rd[o]))
                        continue
                    misses += 1
                    if sp_ok[v] and slot_val[slot_of[v]] == v:
                        t0 = max(t0, max(sp_avail[v] + max(0, sp_wdur[v] - xo), tail[FILLP + c]) + dsrc)
                    elif f >= 0 and reg_val[f] == v:
                        t0 = max(t0, max(reg_avail[f] + max(0, reg_wdur[f] - xo), tail[XIN + c]) + dsrc)
                t, w, g = _earliest(u, t0, occ[o], tail, gap_a, gap_b, gap_n)
                # locality: a source already in the cluster's registers saves a port's time
                cost = t + (w if w < unit_min_occ[u] else 0) + misses * _MISS_COST * xo
                if home[i] >= 0 and c != home[i]:
                    cost += _AWAY_COST * xo
                if cost < best_cost or (cost == best_cost and w < best_w):
                    best, best_t, best_w, best_cost = u, t, w, cost
            u = best
            c = unit_cluster[u]
            # --- each source: a register of cluster c, or streamed over the network to the unit
            lo[0] = u
            hi[0] = u + 1
            off[0] = 0
            ln[0] = occ[o]
            nreq = 1
            pins[0] = -1
            pins[1] = -1
            t0 = np.int64(0)
            for n in range(2):
                v = v0 if n == 0 else v1
                mode[n] = -1
                xsrc[n] = -1
                if v < 0 or (n == 1 and v1 == v0):
                    continue  # absent, or the same register or stream feeds both inputs
                f = rf_loc[v]
                sp = sp_ok[v] and slot_val[slot_of[v]] == v
                hit = f >= 0 and reg_val[f] == v and f // K == c
                # a register read far past the register's current use would hold it idle that
                # long: stream the scratchpad copy instead (writing the value back first if it has none)
                if f >= 0 and reg_val[f] == v and reg_free[f] + _HORIZON * xo < best_t:
                    if not sp:
                        ntr, tr = _writeback(v, f, xo, netlat, B, K, WBP, BWR, RFR, RP, reg_avail, reg_wdur,
                                             reg_free, sp_ok, sp_avail, sp_wdur, slot_of, slot_free, lo, hi, off, ln,
                                             chosen, gidx, min_len, tail, gap_a, gap_b, gap_n, tr, ntr)
                        sp = True
                    hit = False
                if not hit and n == 1 and mode[0] == (_FILL if sp else _XFER):
                    # both sources need the same port (one per cluster): stage this one in a register
                    r, ntr, tr, err = _victim(c, pins, K, xo, netlat, B, WBP, BWR, RFR, RP, reg_val, reg_avail,
                                              reg_wdur, reg_free, remaining, sp_ok, sp_avail, sp_wdur, slot_of,
                                              slot_val, slot_free, rf_loc, lo, hi, off, ln, chosen, gidx, min_len,
                                              tail, gap_a, gap_b, gap_n, tr, ntr, err, best_t - dsrc)
                    ntr, tr = _stage(v, c, r, sp, f, best_t - dsrc - xo, xo, netlat, B, K, FILLP, BRD, XIN, XOUT, RFR, RFW, RP, WP,
                                     reg_val, reg_avail, reg_wdur, reg_free, sp_avail, sp_wdur, slot_of, slot_free,
                                     rf_loc, lo, hi, off, ln, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n, tr,
                                     ntr)
                    f = r
                    hit = True
                if hit:
                    pins[n] = f
                    t0 = max(t0, reg_avail[f] + max(0, reg_wdur[f] - rd[o]))
                    lo[nreq] = RFR + c * RP
                    hi[nreq] = RFR + (c + 1) * RP
                    off[nreq] = 0
                    ln[nreq] = rd[o]
                    nreq += 1
                elif sp:
                    mode[n] = _FILL
                    t0 = max(t0, sp_avail[v] + max(0, sp_wdur[v] - xo) + dsrc)
                    lo[nreq] = FILLP + c
                    hi[nreq] = FILLP + c + 1
                    lo[nreq + 1] = BRD + slot_of[v] % B
                    hi[nreq + 1] = BRD + slot_of[v] % B + 1
                    for q in range(2):
                        off[nreq + q] = -dsrc
                        ln[nreq + q] = xo
                    nreq += 2
                elif f >= 0 and reg_val[f] == v:
                    mode[n] = _XFER
                    xsrc[n] = f
                    cs = f // K
                    t0 = max(t0, reg_avail[f] + max(0, reg_wdur[f] - xo) + dsrc)
                    lo[nreq] = XIN + c
                    hi[nreq] = XIN + c + 1
                    lo[nreq + 1] = XOUT + cs
                    hi[nreq + 1] = XOUT + cs + 1
                    lo[nreq + 2] = RFR + cs * RP
                    hi[nreq + 2] = RFR + (cs + 1) * RP
                    for q in range(3):
                        off[nreq + q] = -dsrc
                        ln[nreq + q] = xo
                    nreq += 3
                else:
                    err = 1  # a live value neither in the scratchpad nor in a register
            if v1 >= 0 and v1 == v0 and pins[0] >= 0:
                pins[1] = pins[0]
                lo[nreq] = RFR + c * RP
                hi[nreq] = RFR + (c + 1) * RP
                off[nreq] = 0
                ln[nreq] = rd[o]
                nreq += 1
            # --- a streamed source other readers still need also lands in a register of c
            # (the network writes the register file as it feeds the unit), so they find it there
            pins2[0] = pins[0]
            pins2[1] = pins[1]
            for n in range(2):
                keep[n] = -1
                v = v0 if n == 0 else v1
                if mode[n] >= 0 and remaining[v] > (2 if v1 == v0 else 1):
                    r, ntr, tr, err = _victim(c, pins2, K, xo, netlat, B, WBP, BWR, RFR, RP, reg_val, reg_avail,
                                              reg_wdur, reg_free, remaining, sp_ok, sp_avail, sp_wdur, slot_of,
                                              slot_val, slot_free, rf_loc, lo, hi, off, ln, chosen, gidx, min_len,
                                              tail, gap_a, gap_b, gap_n, tr, ntr, err, best_t - dsrc + netlat)
                    keep[n] = r
                    pins2[n] = r  # the source's register: not the result's, nor the other kept one
                    t0 = max(t0, reg_free[r] - netlat + dsrc)
                    lo[nreq] = RFW + c * WP
                    hi[nreq] = RFW + (c + 1) * WP
                    off[nreq] = netlat - dsrc
                    ln[nreq] = xo
                    nreq += 1
            # --- the destination register
            d = dst[i]
            r, ntr, tr, err = _victim(c, pins2, K, xo, netlat, B, WBP, BWR, RFR, RP, reg_val, reg_avail,
                                      reg_wdur, reg_free, remaining, sp_ok, sp_avail, sp_wdur, slot_of, slot_val,
                                      slot_free, rf_loc, lo, hi, off, ln, chosen, gidx, min_len, tail, gap_a, gap_b,
                                      gap_n, tr, ntr, err, max(t0, best_t) + lat[o])
            t0 = max(t0, reg_free[r] - lat[o])
            lo[nreq] = RFW + c * WP
            hi[nreq] = RFW + (c + 1) * WP
            off[nreq] = lat[o]
            ln[nreq] = wr[o]
            nreq += 1
            t = _co_earliest(t0, lo, hi, off, ln, 0, nreq, chosen, gidx, tail, gap_a, gap_b, gap_n)
            _co_book(t, off, ln, 0, nreq, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n)
            for n in range(2):
                f = pins[n]
                if f >= 0:
                    reg_free[f] = max(reg_free[f], t + rd[o])
                v = v0 if n == 0 else v1
                if mode[n] >= 0:
                    both = n == 0 and v1 == v0
                    tr = _grow(tr, ntr)
                    _record(tr, ntr, mode[n], t - dsrc, c, keep[n], -1 if mode[n] == _FILL else xsrc[n] // K,
                            xsrc[n], slot_of[v] if mode[n] == _FILL else -1, v, e, 2 if both else n)
                    ntr += 1
                    f = keep[n]
                    if f >= 0:
                        reg_val[f] = v
                        reg_avail[f] = t - dsrc + netlat
                        reg_wdur[f] = xo
                        reg_free[f] = max(reg_free[f], t - dsrc + netlat + xo)
                        rf_loc[v] = f
                    if mode[n] == _XFER:
                        reg_free[xsrc[n]] = max(reg_free[xsrc[n]], t - dsrc + xo)
                    else:
                        slot_free[slot_of[v]] = max(slot_free[slot_of[v]], t - dsrc + xo)
            out_r0[e] = pins[0]
            out_r1[e] = pins[1]
            if v0 >= 0:
                remaining[v0] -= 1
            if v1 >= 0:
                remaining[v1] -= 1
            reg_val[r] = d
            reg_avail[r] = t + lat[o]
            reg_wdur[r] = wr[o]
            reg_free[r] = max(reg_free[r], t + lat[o] + wr[o])
            rf_loc[d] = r
            sp_ok[d] = False
            slot_of[d] = s
            slot_val[s] = d
            out_reg[e] = r
            out_unit[e] = u
            end = t + lat[o] + wr[o]
        elif k == _LOAD_EVENT:
            v = ev_arg[e]
            t0 = max(mem_ready[v], slot_free[s] - lat[_LOAD])
            t, w, g = _earliest(mem_unit, t0, occ[_LOAD], tail, gap_a, gap_b, gap_n)
            _book(mem_unit, t, occ[_LOAD], g, min_len[mem_unit], tail, gap_a, gap_b, gap_n)
            sp_ok[v] = True
            sp_avail[v] = t + lat[_LOAD]
            sp_wdur[v] = wr[_LOAD]
            slot_of[v] = s
            slot_val[s] = v
            end = t + lat[_LOAD] + wr[_LOAD]
            slot_free[s] = max(slot_free[s], end)
            out_unit[e] = mem_unit
        else:  # Event.STORE
            v = ev_arg[e]
            if not (sp_ok[v] and slot_val[slot_of[v]] == v):
                f = rf_loc[v]
                if f >= 0 and reg_val[f] == v:
                    ntr, tr = _writeback(v, f, xo, netlat, B, K, WBP, BWR, RFR, RP, reg_avail, reg_wdur, reg_free,
                                         sp_ok, sp_avail, sp_wdur, slot_of, slot_free, lo, hi, off, ln, chosen,
                                         gidx, min_len, tail, gap_a, gap_b, gap_n, tr, ntr)
                else:
                    err = 2  # a value to store that is nowhere on chip
            t0 = sp_avail[v] + max(0, sp_wdur[v] - rd[_STORE])
            t, w, g = _earliest(mem_unit, t0, occ[_STORE], tail, gap_a, gap_b, gap_n)
            _book(mem_unit, t, occ[_STORE], g, min_len[mem_unit], tail, gap_a, gap_b, gap_n)
            slot_free[s] = max(slot_free[s], t + rd[_STORE])
            end = t + lat[_STORE]
            mem_ready[v] = end
            remaining[v] -= 1
            out_unit[e] = mem_unit
        out_cycle[e] = t
        total = max(total, end)
    for j in range(ntr):
        total = max(total, tr[j, 1] + netlat + xo)
    return out_unit, out_cycle, out_reg, out_r0, out_r1, total, tr[:ntr].copy(), err


@njit(cache=True)
def _victim(c, pins, K, xo, netlat, B, WBP, BWR, RFR, RP, reg_val, reg_avail, reg_wdur, reg_free, remaining, sp_ok,
            sp_avail, sp_wdur, slot_of, slot_val, slot_free, rf_loc, lo, hi, off, ln, chosen, gidx, min_len, tail,
            gap_a, gap_b, gap_n, tr, ntr, err, want):
    """A register of cluster c for a new value wanted from cycle `want`, not one of `pins`.
    First the traffic evicting it costs (nothing for an empty register or a dead value, a
    fill later for a value with a scratchpad copy, a write-back and a fill for one
    without), then best fit: among registers free by then, the one freed last (registers
    free early stay for values wanted early: events are placed in schedule order, not in
    time order); else the one that frees first. A value that still has readers and no
    scratchpad copy is written back first. Returns
    (register, ntr, tr, err)."""
    best = -1
    best_cost = _NEVER
    for q in range(K):
        f = c * K + q
        if f == pins[0] or f == pins[1]:
            continue
        o = reg_val[f]
        cost = want - reg_free[f] if reg_free[f] <= want else _LATE + reg_free[f] - want
        if o >= 0 and remaining[o] > 0:
            if slot_of[o] >= 0 and slot_val[slot_of[o]] == o and not sp_ok[o]:
                cost += 2 * _LIVE  # a write-back now and a fill later
            else:
                cost += _LIVE  # a fill later
        if cost < best_cost:
            best, best_cost = f, cost
    o = reg_val[best]
    if o >= 0 and remaining[o] > 0 and slot_of[o] >= 0 and slot_val[slot_of[o]] == o and not sp_ok[o]:
        ntr, tr = _writeback(o, best, xo, netlat, B, K, WBP, BWR, RFR, RP, reg_avail, reg_wdur, reg_free, sp_ok,
                             sp_avail, sp_wdur, slot_of, slot_free, lo, hi, off, ln, chosen, gidx, min_len, tail,
                             gap_a, gap_b, gap_n, tr, ntr)
    if o >= 0 and rf_loc[o] == best:
        rf_loc[o] = -1
    reg_val[best] = -1
    return best, ntr, tr, err


@njit(cache=True)
def _writeback(v, f, xo, netlat, B, K, WBP, BWR, RFR, RP, reg_avail, reg_wdur, reg_free, sp_ok, sp_avail, sp_wdur,
               slot_of, slot_free, lo, hi, off, ln, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n, tr, ntr):
    """Write v back from register f to its slot: cluster->scratchpad port, the bank's
    write port, an RF read port."""
    c = f // K
    s = slot_of[v]
    t0 = max(reg_avail[f] + max(0, reg_wdur[f] - xo), slot_free[s] - netlat)
    lo[12] = WBP + c
    hi[12] = WBP + c + 1
    lo[13] = BWR + s % B
    hi[13] = BWR + s % B + 1
    lo[14] = RFR + c * RP
    hi[14] = RFR + (c + 1) * RP
    for j in range(12, 15):
        off[j] = 0
        ln[j] = xo
    t = _co_earliest(t0, lo, hi, off, ln, 12, 15, chosen, gidx, tail, gap_a, gap_b, gap_n)
    _co_book(t, off, ln, 12, 15, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n)
    reg_free[f] = max(reg_free[f], t + xo)
    sp_ok[v] = True
    sp_avail[v] = t + netlat
    sp_wdur[v] = xo
    slot_free[s] = max(slot_free[s], t + netlat + xo)
    tr = _grow(tr, ntr)
    _record(tr, ntr, _WB, t, c, f, -1, -1, s, v, -1, -1)
    return ntr + 1, tr


@njit(cache=True)
def _stage(v, c, r, from_sp, f, tmin, xo, netlat, B, K, FILLP, BRD, XIN, XOUT, RFR, RFW, RP, WP, reg_val, reg_avail,
           reg_wdur, reg_free, sp_avail, sp_wdur, slot_of, slot_free, rf_loc, lo, hi, off, ln, chosen, gidx, min_len,
           tail, gap_a, gap_b, gap_n, tr, ntr):
    """Bring v into register r of cluster c ahead of its reader: a FILL from its slot
    (scratchpad->cluster port, the bank's read port) or an XFER from register f of another
    cluster (cluster->cluster ports, an RF read port there), plus an RF write port of c
    once it lands."""
    if from_sp:
        s = slot_of[v]
        t0 = max(sp_avail[v] + max(0, sp_wdur[v] - xo), reg_free[r] - netlat, tmin)
        lo[12] = FILLP + c
        hi[12] = FILLP + c + 1
        lo[13] = BRD + s % B
        hi[13] = BRD + s % B + 1
        lo[14] = RFW + c * WP
        hi[14] = RFW + (c + 1) * WP
        j1 = 15
    else:
        s = -1
        cs = f // K
        t0 = max(reg_avail[f] + max(0, reg_wdur[f] - xo), reg_free[r] - netlat, tmin)
        lo[12] = XIN + c
        hi[12] = XIN + c + 1
        lo[13] = XOUT + cs
        hi[13] = XOUT + cs + 1
        lo[14] = RFR + cs * RP
        hi[14] = RFR + (cs + 1) * RP
        lo[15] = RFW + c * WP
        hi[15] = RFW + (c + 1) * WP
        j1 = 16
    for j in range(12, j1):
        off[j] = 0
        ln[j] = xo
    off[j1 - 1] = netlat  # the register write
    t = _co_earliest(t0, lo, hi, off, ln, 12, j1, chosen, gidx, tail, gap_a, gap_b, gap_n)
    _co_book(t, off, ln, 12, j1, chosen, gidx, min_len, tail, gap_a, gap_b, gap_n)
    if from_sp:
        slot_free[s] = max(slot_free[s], t + xo)
    else:
        reg_free[f] = max(reg_free[f], t + xo)
    reg_val[r] = v
    reg_avail[r] = t + netlat
    reg_wdur[r] = xo
    reg_free[r] = max(reg_free[r], t + netlat + xo)
    rf_loc[v] = r
    tr = _grow(tr, ntr)
    _record(tr, ntr, _FILL if from_sp else _XFER, t, c, r, -1 if from_sp else f // K, -1 if from_sp else f, s, v,
            -1, -1)
    return ntr + 1, tr
