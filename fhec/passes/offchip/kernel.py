"""The greedy loop of the off-chip scheduler (numba): one event per step.

Each step (see the package docstring for the policy in words):

1. the most urgent *ready* instruction whose sources are resident is the candidate
   ``c``; ready instructions with a source off chip are *parked* on that source;
2. the most urgent pending load ``lv`` (the value whose earliest unissued user has
   the smallest rank) goes first if the memory channel is free before ``c`` could
   start in the coarse time model, or if nothing can run: into a free slot (keeping
   ``reserve`` slots free for prefetches), or, when nothing can run without it,
   for the most urgent parked instruction, evicting a victim;
3. otherwise ``c`` issues, taking a free slot or evicting a victim for its result;
   values whose last user issued die (an OUTPUT is stored first).

`schedule_kernel` returns the final `State` (its ``events`` are the schedule) and
an `Outcome`.
"""

from __future__ import annotations

import enum

from numba import njit

from fhec.ir.schedule import Event
from fhec.passes.offchip import heap
from fhec.passes.offchip.policies import best_victim, push_victim
from fhec.passes.offchip.state import (
    C_DONE,
    MASK,
    NEVER,
    T_MEM,
    T_NOW,
    emit,
    free_slots,
    new_state,
    next_use,
    note_peak,
    release_slot,
    room,
    store,
    take_slot,
    tick,
)

__all__ = ["Outcome", "schedule_kernel"]


class Outcome(enum.IntEnum):
    """How a kernel run ended."""

    DONE = 0
    CAPACITY = 1  # no slot can be freed for an instruction's operands and result
    DEADLOCK = 2  # nothing ready and nothing to load: a bug


_DONE = int(Outcome.DONE)
_CAPACITY = int(Outcome.CAPACITY)
_DEADLOCK = int(Outcome.DEADLOCK)
_COMPUTE = int(Event.COMPUTE)
_LOAD = int(Event.LOAD)


@njit(cache=True)
def _evict(pb, st, victim, vnu):
    """Take `victim` off chip (storing it first if dirty); returns its slot. If it
    has a later user it becomes a pending load again."""
    st.vkey[victim] = -1
    slot = st.slot_of[victim]
    st.resident[victim] = False
    if not st.stored[victim]:
        store(pb, st, victim, slot)
    if vnu != NEVER:
        heap.push(st.pend, (vnu << 32) | victim)
    return slot


@njit(cache=True)
def _candidate(pb, st):
    """The most urgent ready instruction with its sources resident, or -1; parks the
    more urgent ready ones that wait for a source."""
    ready = st.ready
    while ready.size[0] > 0:
        r = ready.keys[0]
        miss = -1
        if not st.resident[pb.src0[r]]:
            miss = pb.src0[r]
        elif pb.src1[r] >= 0 and not st.resident[pb.src1[r]]:
            miss = pb.src1[r]
        if miss < 0:
            return r
        heap.pop(ready)
        st.park_next[r] = st.park_head[miss]
        st.park_head[miss] = r
        st.is_parked[r] = True
        heap.push(st.parked, r)
    return -1


@njit(cache=True)
def _start_time(pb, st, c):
    """When `c` could start in the coarse time model: its unit kind free, its sources complete."""
    tc = max(st.kclock[pb.kind[c]], st.avail[pb.src0[c]])
    if pb.src1[c] >= 0:
        tc = max(tc, st.avail[pb.src1[c]])
    return tc


@njit(cache=True)
def _urgent_load(pb, st):
    """(rvec, next use) of the pending load whose earliest user is most urgent, or
    (-1, NEVER); drops stale entries. The entry stays on the heap."""
    pend = st.pend
    while pend.size[0] > 0:
        key = pend.keys[0]
        v = key & MASK
        nu = key >> 32
        if st.resident[v] or next_use(pb, st, v) != nu:
            heap.pop(pend)
            continue
        return v, nu
    return -1, NEVER


@njit(cache=True)
def _urgent_parked(st):
    """The most urgent instruction still waiting for a load, or -1."""
    parked = st.parked
    while parked.size[0] > 0 and (st.issued[parked.keys[0]] or not st.is_parked[parked.keys[0]]):
        heap.pop(parked)
    return parked.keys[0] if parked.size[0] > 0 else -1


@njit(cache=True)
def _load(pb, st, v, nu, slot, t):
    """Load `v` into `slot`, the channel taking it at coarse time `t`; wakes the
    instructions parked on it."""
    st.resident[v] = True
    st.slot_of[v] = slot
    st.avail[v] = t + pb.mem_lat + pb.xfer
    st.time[T_MEM] = t + pb.xfer
    st.touch[v] = tick(st)
    push_victim(pb, st, v, nu)
    emit(st, _LOAD, v, slot, -1, -1)
    note_peak(pb, st)
    r = st.park_head[v]
    st.park_head[v] = -1
    while r >= 0:
        nxt = st.park_next[r]
        st.is_parked[r] = False
        heap.push(st.ready, r)
        r = nxt


@njit(cache=True)
def _issue(pb, st, c, tc):
    """Issue instruction `c` at coarse time `tc`; False if no slot can hold its result."""
    if free_slots(st) > 0:
        slot = take_slot(pb, st)
    else:
        victim, vnu = best_victim(pb, st, pb.src0[c], pb.src1[c])
        if victim < 0:
            return False
        slot = _evict(pb, st, victim, vnu)
    heap.pop(st.ready)
    st.issued[c] = True
    st.ctr[C_DONE] += 1
    d = pb.dst[c]
    s1 = pb.src1_raw[c]
    emit(st, _COMPUTE, c, slot, st.slot_of[pb.src0[c]], st.slot_of[s1] if s1 >= 0 else -1)
    st.time[T_NOW] = max(st.time[T_NOW], tc)
    st.kclock[pb.kind[c]] = tc + pb.cost[c]
    st.resident[d] = True
    st.slot_of[d] = slot
    st.avail[d] = tc + pb.busy[c]
    st.touch[d] = tick(st)
    note_peak(pb, st)
    # successors whose producers have all issued become candidates
    for p in range(pb.users_ptr[d], pb.users_ptr[d + 1]):
        u = pb.users[p]
        st.deps[u] -= 1
        if st.deps[u] == 0:
            heap.push(st.ready, u)
    # sources and result: refresh their eviction keys, or let them die
    for j in range(3):
        v = pb.src0[c] if j == 0 else (pb.src1[c] if j == 1 else d)
        if v < 0:
            continue
        nu = next_use(pb, st, v)
        if nu == NEVER:
            if pb.is_output[v] and not st.stored[v]:  # its final, compulsory store
                store(pb, st, v, st.slot_of[v])
            st.resident[v] = False
            st.vkey[v] = -1
            release_slot(pb, st, st.slot_of[v])
        else:
            if j < 2:
                st.touch[v] = tick(st)
            push_victim(pb, st, v, nu)
    return True


@njit(cache=True)
def schedule_kernel(pb):
    """Run the greedy loop on `Problem` `pb`; returns (final `State`, `Outcome` code)."""
    st = new_state(pb)
    n = len(pb.src0)
    while st.ctr[C_DONE] < n:
        st = room(st, n)
        c = _candidate(pb, st)
        tc = _start_time(pb, st, c) if c >= 0 else 0.0
        lv, lnu = _urgent_load(pb, st)
        if lv >= 0:
            tl = max(st.time[T_MEM], st.time[T_NOW])
            if c < 0 or tl <= tc:
                slot = -1
                free = free_slots(st)
                if free > pb.reserve or (c < 0 and free > 0):
                    slot = take_slot(pb, st)
                    heap.pop(st.pend)
                elif c < 0:
                    # Nothing can run without a load. Load for the most urgent instruction
                    # waiting on one (with priorities in dependence order, lv's earliest user)
                    # and evict anything but its operands. Its heap entry goes stale.
                    w = _urgent_parked(st)
                    if w < 0:
                        return st, _DEADLOCK
                    lv = pb.src0[w] if not st.resident[pb.src0[w]] else pb.src1[w]
                    lnu = next_use(pb, st, lv)
                    victim, vnu = best_victim(pb, st, pb.src0[w], pb.src1[w])
                    if victim < 0:
                        return st, _CAPACITY
                    slot = _evict(pb, st, victim, vnu)
                if slot >= 0:
                    _load(pb, st, lv, lnu, slot, tl)
                    continue
        if c < 0:
            return st, _DEADLOCK
        if not _issue(pb, st, c, tc):
            return st, _CAPACITY
    return st, _DONE
