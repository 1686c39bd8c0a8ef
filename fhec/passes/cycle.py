"""Cycle-level scheduling (F1 §4.4): every event of a data schedule at an exact cycle
on an exact unit, producing one instruction stream per unit.

`schedule_cycles` walks a `DataSchedule` (fhec.passes.offchip) in order and places
each event at the earliest cycle at which everything it needs is available (F1:
"determining the minimum cycle at which all required on-chip resources are
available"):

- its sources are readable under the chaining rule of `fhec.backends.streams`
  (a reader may start once the writer's first chunk has landed and will stay
  ahead of it);
- its destination slot is free: every read of the slot's previous value has
  finished before the first chunk of the new value lands. This is how loads move
  "as early as capacity allows": a load waits only for its slot and the channel;
- a unit of the right kind is free. Functional units are append-only timelines;
  the instruction takes the unit of its kind, over all clusters, that became free
  most recently but no later than the instruction could start (best fit), else the
  unit that frees first. This spreads independent work over the clusters and
  keeps early-free units for later events that are ready early. Where a target's
  NTT units each run one direction (Osiris's ModChange INTT and NTT units), a
  transform takes only a unit of its direction, except OF-Limb's generating NTTs,
  which take either (`fhec.backends.streams.needed_directions`);
- loads and stores go through the memory controller ``mem0`` in schedule order,
  one RVec per ``xfer`` = ceil(RVec bytes / off-chip bytes per cycle) cycles, with
  the target's worst-case latency on loads (F1 §3 plans for the worst case);
- on a target that generates key halves (``[keys]``), the data schedule's loads of
  them go to the key generator ``gen0`` as GEN entries, at its rate and latency.

No load or store is added or removed: the off-chip traffic is the data
schedule's. On a target that models the on-chip data path (`Target.models_onchip`),
the kernel of `fhec.passes.cycle_onchip` runs instead: it also allocates registers
and places the network transfers and the ports they hold (docs/scheduling.md, "The
on-chip data path"). Without it, every unit reads and writes the scratchpad at its
own rate.

Preserves: the data schedule's events, their slots and their off-chip traffic.
Every produced `Streams` passes `fhec.sim.check.check_streams`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from fhec._jit import announce_compile

from fhec.backends.streams import (GENERATOR_KIND, MEMORY_KIND, OpTiming, Streams, StreamOp, instruction_occupancy,
                                   needed_directions, op_timing, unit_directions, unit_layout)
from fhec.backends.target import Target, UnitKind
from fhec.errors import InvalidArgumentError, TargetError
from fhec.ir.limb import LimbProgram
from fhec.ir.schedule import DataSchedule, Event

announce_compile(__file__)

__all__ = ["schedule_cycles"]


_GAPS = 16
"""Idle gaps remembered per unit timeline; when full, the oldest is forgotten."""

# enum codes as plain ints, which the numba kernel reads as compile-time globals
_COMPUTE = int(Event.COMPUTE)
_LOAD_EVENT = int(Event.LOAD)
_LOAD = int(StreamOp.LOAD)
_STORE = int(StreamOp.STORE)
_GEN = int(StreamOp.GEN)


@njit(cache=True)
def _earliest(u, t0, length, tail, gap_a, gap_b, gap_n):
    """Earliest start >= t0 of `length` free cycles on unit u, and the idle cycles
    it leaves just before it (for best fit): (start, waste, gap index or -1)."""
    for g in range(gap_n[u]):
        a = gap_a[u, g]
        b = gap_b[u, g]
        t = max(a, t0)
        if t + length <= b:
            return t, t - a, g
    t = max(tail[u], t0)
    return t, t - tail[u], -1


@njit(cache=True)
def _drop_gap(u, g, gap_a, gap_b, gap_n):
    for h in range(g, gap_n[u] - 1):
        gap_a[u, h] = gap_a[u, h + 1]
        gap_b[u, h] = gap_b[u, h + 1]
    gap_n[u] -= 1


@njit(cache=True)
def _add_gap(u, a, b, gap_a, gap_b, gap_n):
    """Insert idle interval [a, b) keeping gaps sorted by start."""
    if gap_n[u] == gap_a.shape[1]:
        _drop_gap(u, 0, gap_a, gap_b, gap_n)
    h = gap_n[u]
    while h > 0 and gap_a[u, h - 1] > a:
        gap_a[u, h] = gap_a[u, h - 1]
        gap_b[u, h] = gap_b[u, h - 1]
        h -= 1
    gap_a[u, h] = a
    gap_b[u, h] = b
    gap_n[u] += 1


@njit(cache=True)
def _book(u, t, length, g, min_len, tail, gap_a, gap_b, gap_n):
    """Reserve [t, t+length) on unit u, found by `_earliest` in gap g (or the tail)."""
    if g >= 0:
        a = gap_a[u, g]
        b = gap_b[u, g]
        _drop_gap(u, g, gap_a, gap_b, gap_n)
        if t - a >= min_len:
            _add_gap(u, a, t, gap_a, gap_b, gap_n)
        if b - (t + length) >= min_len:
            _add_gap(u, t + length, b, gap_a, gap_b, gap_n)
    else:
        if t - tail[u] >= min_len:
            _add_gap(u, tail[u], t, gap_a, gap_b, gap_n)
        tail[u] = t + length


@njit(cache=True)
def _place_kernel(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, op, src0, src1, dst, num_rvecs, slots,
                  occ, lat, rd, wr, kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit, gen, gen_unit,
                  need, unit_dir, iocc):
    # iocc: per instruction, the cycles it keeps its unit busy, reads and writes
    # (`instruction_occupancy`); empty where every op keeps its kind's (`occ`)
    ne = len(ev_kind)
    num_units = len(unit_min_occ)
    out_unit = np.empty(ne, dtype=np.int16)
    out_cycle = np.empty(ne, dtype=np.int64)
    avail = np.zeros(num_rvecs, dtype=np.int64)  # first chunk of the current copy lands
    wdur = np.zeros(num_rvecs, dtype=np.int64)  # cycles that copy takes to be written
    mem_ready = np.zeros(num_rvecs, dtype=np.int64)  # the memory vector holds the value
    slot_free = np.zeros(slots, dtype=np.int64)  # a new value may land from here on
    tail = np.zeros(num_units, dtype=np.int64)  # each unit is idle from here on ...
    gap_a = np.zeros((num_units, _GAPS), dtype=np.int64)  # ... and in these gaps
    gap_b = np.zeros((num_units, _GAPS), dtype=np.int64)
    gap_n = np.zeros(num_units, dtype=np.int64)
    total = np.int64(0)
    LOAD = _LOAD
    STORE = _STORE
    for e in range(ne):
        k = ev_kind[e]
        s = ev_slot[e]
        if k == _COMPUTE:
            i = ev_arg[e]
            o = op[i]
            t0 = np.int64(0)
            busy = iocc[i] if len(iocc) else occ[o]
            v = src0[i]
            t0 = max(t0, avail[v] + max(0, wdur[v] - busy))
            v = src1[i]
            if v >= 0:
                t0 = max(t0, avail[v] + max(0, wdur[v] - busy))
            t0 = max(t0, slot_free[s] - lat[o])
            kk = kind_of_op[o]
            best = -1
            best_t = np.int64(2**62)
            best_w = np.int64(2**62)
            best_g = -1
            best_cost = np.int64(2**62)
            for j in range(kind_ptr[kk], kind_ptr[kk + 1]):
                u = kind_units[j]
                if need[i] != 0 and unit_dir[u] != 0 and unit_dir[u] != need[i]:
                    continue  # a unit of the other direction (`fhec.backends.streams.needed_directions`)
                t, w, g = _earliest(u, t0, busy, tail, gap_a, gap_b, gap_n)
                # an idle hole too short for any op is lost for good: count it as time
                cost = t + (w if w < unit_min_occ[u] else 0)
                if cost < best_cost or (cost == best_cost and w < best_w):
                    best, best_t, best_w, best_g, best_cost = u, t, w, g, cost
            t = best_t
            _book(best, t, busy, best_g, unit_min_occ[best], tail, gap_a, gap_b, gap_n)
            slot_free[ev_s0[e]] = max(slot_free[ev_s0[e]], t + busy)
            if ev_s1[e] >= 0:
                slot_free[ev_s1[e]] = max(slot_free[ev_s1[e]], t + busy)
            d = dst[i]
            avail[d] = t + lat[o]
            wdur[d] = busy
            end = t + lat[o] + busy
            slot_free[s] = max(slot_free[s], end)
            out_unit[e] = best
        elif k == _LOAD_EVENT:
            v = ev_arg[e]
            # a generated key half comes from the key generator, every other load from memory
            o = _GEN if gen[v] else LOAD
            u = gen_unit if gen[v] else mem_unit
            t0 = max(mem_ready[v], slot_free[s] - lat[o])
            t, w, g = _earliest(u, t0, occ[o], tail, gap_a, gap_b, gap_n)
            _book(u, t, occ[o], g, unit_min_occ[u], tail, gap_a, gap_b, gap_n)
            avail[v] = t + lat[o]
            wdur[v] = wr[o]
            end = t + lat[o] + wr[o]
            slot_free[s] = max(slot_free[s], end)
            out_unit[e] = u
        else:  # Event.STORE
            v = ev_arg[e]
            t0 = avail[v] + max(0, wdur[v] - rd[STORE])
            t, w, g = _earliest(mem_unit, t0, occ[STORE], tail, gap_a, gap_b, gap_n)
            _book(mem_unit, t, occ[STORE], g, unit_min_occ[mem_unit], tail, gap_a, gap_b, gap_n)
            slot_free[s] = max(slot_free[s], t + rd[STORE])
            end = t + lat[STORE]
            mem_ready[v] = end
            out_unit[e] = mem_unit
        out_cycle[e] = t
        total = max(total, end)
    return out_unit, out_cycle, total


def _kind_tables(target: Target, timing: OpTiming, units) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    kinds = sorted({u.kind for u in units if u.kind not in (MEMORY_KIND, GENERATOR_KIND)})
    kind_index = {k: i for i, k in enumerate(kinds)}
    ptr = [0]
    members: list[int] = []
    for k in kinds:
        members += [i for i, u in enumerate(units) if u.kind == k]
        ptr.append(len(members))
    kind_of_op = np.zeros(len(timing.unit_kind), dtype=np.int64)
    for op, k in enumerate(timing.unit_kind):
        if k in kind_index:
            kind_of_op[op] = kind_index[k]
    mem_unit = next(i for i, u in enumerate(units) if u.kind == MEMORY_KIND)
    gen_unit = next((i for i, u in enumerate(units) if u.kind == GENERATOR_KIND), mem_unit)
    # the shortest op a unit runs: shorter idle gaps can never be used
    unit_min_occ = np.zeros(len(units), dtype=np.int64)
    for i, u in enumerate(units):
        occs = [int(timing.occupancy[op]) for op, k in enumerate(timing.unit_kind) if k == u.kind]
        unit_min_occ[i] = min(occs) if occs else 1
    return (kind_of_op, np.array(ptr, dtype=np.int64), np.array(members, dtype=np.int64), unit_min_occ, mem_unit,
            gen_unit)


def schedule_cycles(data: DataSchedule, target: Target) -> Streams:
    """Place every event of `data` at a cycle on a unit of `target` (F1 §4.4).

    Returns the per-unit `Streams`; ``total_cycles`` is when the last result
    (including the last store) is complete. `data` must have been scheduled for
    this target (same scratchpad slots). Raises TargetError if the target does not
    support the program's ring degree, InvalidArgumentError if `data` is not a
    `DataSchedule`.
    """
    if not isinstance(data, DataSchedule):
        raise InvalidArgumentError(f"schedule_cycles takes the DataSchedule schedule_offchip returns, not a "
                                   f"{type(data).__name__}.")
    program = data.program
    N = program.N
    target.check_ring_degree(N)
    if target.models_onchip:  # the data path books bank ports: spread the reads over the banks first
        from fhec.passes.cycle_onchip import balance_banks

        data = balance_banks(data, target.scratchpad.banks)
    timing = op_timing(target, N)
    units = unit_layout(target)
    kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit, gen_unit = _kind_tables(target, timing, units)
    gen = target.generated_rvecs(program)
    unit_dir = unit_directions(target)
    onchip = None
    # a per-instruction array only where a conversion array makes terms differ: 8 bytes an
    # instruction is 200 MB on LoLa-CIFAR's 27 M
    iocc = instruction_occupancy(target, program) if target.times_conversions else np.zeros(0, dtype=np.int64)
    if target.models_onchip:  # register files, network and bank ports (fhec.passes.cycle_onchip)
        if unit_dir.any():
            raise TargetError(f"target {target.name!r} models the on-chip data path and gives its NTT units "
                              "directions; fhec schedules one or the other: drop the on-chip data path ([register_file], [network] "
                              "and the scratchpad's banks and port_bytes_per_cycle) or the directions.")
        if gen.any():
            # the data-path kernel books no generator unit: refuse rather than mis-time GEN entries
            raise TargetError(f"target {target.name!r} models the on-chip data path and generates key halves "
                              "on chip; fhec schedules one or the other: drop [keys] or the data-path tables.")
        out_unit, out_cycle, total, onchip = _place_onchip(
            data, target, timing, units, kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit)
    else:
        # directions: which NTT unit each transform may take (none unless the target gives them)
        need = needed_directions(program) if unit_dir.any() else np.zeros(len(program), dtype=np.int8)
        out_unit, out_cycle, total = _place_plain(
            data, timing, kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit, gen, gen_unit, need, unit_dir,
            iocc)
    ne = len(data)
    comp = data.kind == Event.COMPUTE
    load = data.kind == Event.LOAD
    store = data.kind == Event.STORE
    instr = np.where(comp, data.arg, 0)
    generated = load & gen[np.where(load, data.arg, 0)]
    op = np.where(comp, program.op[instr],
                  np.where(generated, StreamOp.GEN, np.where(load, StreamOp.LOAD, StreamOp.STORE)))
    mod = np.where(comp, program.mod[instr].astype(np.int64), -1)
    imm = np.where(comp, program.imm[instr], -1)
    dst = np.where(store, data.arg, data.slot)
    src0 = np.where(comp, data.src0_slot, np.where(load, data.arg, data.slot))
    src1 = np.where(comp, data.src1_slot, -1)
    return Streams.from_entries(
        target=target.name, N=N, slots=data.slots, units=units, total_cycles=int(total) if ne else 0,
        unit=out_unit, cycle=out_cycle, op=op, dst=dst, src0=src0, src1=src1, mod=mod, imm=imm,
        tag=data.arg, onchip=onchip,
        occupancy=np.where(comp, iocc[instr], timing.occupancy[op]) if len(iocc) else None,
    )


def _place_onchip(data: DataSchedule, target: Target, timing: OpTiming, units, kind_of_op, kind_ptr, kind_units,
                  unit_min_occ, mem_unit):
    from fhec.backends.onchip import OnChip, Transfers
    from fhec.errors import InternalError
    from fhec.passes.cycle_onchip import lineage_homes, schedule_onchip_kernel

    program = data.program
    N = program.N
    # readers left per value: every instruction operand and every STORE event
    remaining = np.bincount(program.src0[program.src0 >= 0], minlength=program.num_rvecs).astype(np.int64)
    remaining += np.bincount(program.src1[program.src1 >= 0], minlength=program.num_rvecs)
    remaining += np.bincount(data.arg[data.kind == Event.STORE], minlength=program.num_rvecs)
    rf = target.register_file
    unit_cluster = np.array([max(u.cluster, 0) for u in units], dtype=np.int64)
    out_unit, out_cycle, reg, reg0, reg1, total, table, err = schedule_onchip_kernel(
        data.kind, data.arg.astype(np.int64), data.slot.astype(np.int64),
        program.op.astype(np.int64), program.src0.astype(np.int64), program.src1.astype(np.int64),
        program.dst.astype(np.int64), program.num_rvecs, data.slots,
        timing.occupancy, timing.latency, timing.read_cycles, timing.write_cycles,
        kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit, unit_cluster, remaining,
        lineage_homes(program, target.cluster.count), target.cluster.count, target.register_rvecs(N), target.network_cycles(N), target.network.latency,
        target.scratchpad.banks, rf.read_ports, rf.write_ports,
    )
    if err:
        raise InternalError(f"cycle scheduler: a value the schedule needs is neither in the scratchpad nor in a "
                            f"register (code {err})")
    onchip = OnChip(target.register_rvecs(N), reg, reg0, reg1, Transfers.from_table(table))
    return out_unit, out_cycle, total, onchip


def _place_plain(data: DataSchedule, timing: OpTiming, kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit,
                 gen, gen_unit, need, unit_dir, iocc):
    program = data.program
    return _place_kernel(
        data.kind, data.arg.astype(np.int64), data.slot.astype(np.int64),
        data.src0_slot.astype(np.int64), data.src1_slot.astype(np.int64),
        program.op.astype(np.int64), program.src0.astype(np.int64), program.src1.astype(np.int64),
        program.dst.astype(np.int64), program.num_rvecs, data.slots,
        timing.occupancy, timing.latency, timing.read_cycles, timing.write_cycles,
        kind_of_op, kind_ptr, kind_units, unit_min_occ, mem_unit, gen, gen_unit,
        need, unit_dir.astype(np.int8), iocc,
    )
