"""The greedy loop of the off-chip scheduler (numba): one event per step.

Each step (see the package docstring for the policy in words):

1. the most urgent *ready* instruction whose sources are resident is the candidate
   ``c``; ready instructions with a source off chip are *parked* on that source; ``c``
   stands down when it is more than ``window`` ranks behind the most urgent parked
   instruction (it would run too far ahead of it);
2. the most urgent pending load ``lv`` (the value whose earliest unissued user has
   the smallest rank) goes first if the memory channel is free before ``c`` could
   start in the coarse time model, or if nothing can run: into a free slot (keeping
   ``reserve[c]`` slots free for prefetches), or, when nothing can run without it,
   for the most urgent parked instruction, evicting a victim;
3. otherwise ``c`` issues, taking a free slot or evicting a victim for its result;
   values whose last user issued die (an OUTPUT is stored first).

`schedule_kernel` returns the events, the peak slot count and an `Outcome`.
"""

from __future__ import annotations

import collections
import enum

from numba import njit

from fhec._jit import announce_compile

from fhec.ir.schedule import Event
from fhec.passes.offchip import heap
from fhec.passes.offchip.policies import best_victim, furthest_use, push_victim
from fhec.passes.offchip.state import (
    MASK,
    NEVER,
    emit,
    make_room,
    new_state,
    next_use,
    note_peak,
    release_slot,
    store,
    take_slot,
    tick,
)

announce_compile(__file__)

__all__ = ["Outcome", "Result", "schedule_kernel"]


class Outcome(enum.IntEnum):
    """How a kernel run ended."""

    DONE = 0
    CAPACITY = 1  # no slot can be freed for an instruction's operands and result
    DEADLOCK = 2  # nothing ready and nothing to load: a bug


Result = collections.namedtuple("Result", ["kind", "arg", "slot", "src0", "src1", "peak", "outcome"])
"""What `schedule_kernel` returns: the events (views of the first ``nev`` entries of
the state's arrays), the peak slots in use and an `Outcome` code."""

_DONE = int(Outcome.DONE)
_CAPACITY = int(Outcome.CAPACITY)
_DEADLOCK = int(Outcome.DEADLOCK)
_COMPUTE = int(Event.COMPUTE)
_LOAD = int(Event.LOAD)


@njit(cache=True)
def _evict(st, victim, vnu):
    """Take `victim` off chip (storing it first if dirty); returns its slot. If it
    has a later user it becomes a pending load again."""
    st.vkey[victim] = -1
    if st.unread[victim]:  # a load wasted: loading it early again needs the do-no-harm test
        st.wasted[victim] = True
        st.unread[victim] = False
    slot = st.slot_of[victim]
    st.resident[victim] = False
    if not st.stored[victim]:
        store(st, victim, slot)
    if vnu != NEVER:
        st.pend_n = heap.push(st.pend, st.pend_n, (vnu << 32) | victim)
    return slot


@njit(cache=True)
def _candidate(st):
    """The most urgent ready instruction with its sources resident, or -1; parks the
    more urgent ready ones that wait for a source."""
    while st.ready_n > 0:
        r = st.ready[0]
        miss = -1
        if not st.resident[st.src0[r]]:
            miss = st.src0[r]
        elif st.src1[r] >= 0 and not st.resident[st.src1[r]]:
            miss = st.src1[r]
        if miss < 0:
            return r
        st.ready_n = heap.pop(st.ready, st.ready_n)
        st.park_next[r] = st.park_head[miss]
        st.park_head[miss] = r
        st.is_parked[r] = True
        st.parked_n = heap.push(st.parked, st.parked_n, r)
    return -1


@njit(cache=True, inline="always")
def _start_time(st, c):
    """When `c` could start in the coarse time model: its unit kind free, its sources complete."""
    tc = max(st.kclock[st.kind[c]], st.avail[st.src0[c]])
    if st.src1[c] >= 0:
        tc = max(tc, st.avail[st.src1[c]])
    return tc


@njit(cache=True)
def _urgent_load(st):
    """(rvec, next use) of the pending load whose earliest user is most urgent, or
    (-1, NEVER); drops stale entries. The entry stays on the heap."""
    while st.pend_n > 0:
        key = st.pend[0]
        v = key & MASK
        nu = key >> 32
        if st.resident[v] or next_use(st, v) != nu:
            st.pend_n = heap.pop(st.pend, st.pend_n)
            continue
        return v, nu
    return -1, NEVER


@njit(cache=True)
def _urgent_parked(st):
    """The most urgent instruction still waiting for a load, or -1."""
    while st.parked_n > 0 and (st.issued[st.parked[0]] or not st.is_parked[st.parked[0]]):
        st.parked_n = heap.pop(st.parked, st.parked_n)
    return st.parked[0] if st.parked_n > 0 else -1


@njit(cache=True, inline="always")
def _harmless(st, c, nu):
    """Whether prefetching a value first used at rank `nu` into a free slot, while `c`
    could run, surely does no harm (Cao et al.'s rule for integrated prefetching and
    caching): a free slot is owed to the values computation creates next, so the
    prefetched value must not become the next victim. It does not when some resident
    value is used later (Belady evicts that one first), or when the free slots outnumber
    the instructions before its use (each creates at most one value). The kernel asks
    only for a value whose previous prefetch was wasted (evicted unread): asking always
    refuses prefetches that would have survived, and idles the channel of a
    bandwidth-bound program."""
    return nu < furthest_use(st) or st.fcount - st.reserve[c] > nu - c


@njit(cache=True)
def _load(st, v, nu, slot, t):
    """Load `v` into `slot`, the channel (or, for a generated key half, the key
    generator) taking it at coarse time `t`; wakes the instructions parked on it."""
    st.resident[v] = True
    st.slot_of[v] = slot
    st.unread[v] = True
    if st.gen[v]:
        st.avail[v] = t + st.gen_lat + st.gen_xfer
        st.tgen = t + st.gen_xfer
    else:
        st.avail[v] = t + st.mem_lat + st.xfer
        st.tmem = t + st.xfer
    st.touch[v] = tick(st)
    push_victim(st, v, nu)
    emit(st, _LOAD, v, slot, -1, -1)
    note_peak(st)
    r = st.park_head[v]
    st.park_head[v] = -1
    while r >= 0:
        nxt = st.park_next[r]
        st.is_parked[r] = False
        st.ready_n = heap.push(st.ready, st.ready_n, r)
        r = nxt


@njit(cache=True)
def _issue(st, c, tc):
    """Issue instruction `c` at coarse time `tc`; False if no slot can hold its result."""
    if st.fcount > 0:
        slot = take_slot(st)
    else:
        victim, vnu = best_victim(st, st.src0[c], st.src1[c])
        if victim < 0:
            return False
        slot = _evict(st, victim, vnu)
    st.ready_n = heap.pop(st.ready, st.ready_n)
    st.issued[c] = True
    st.done += 1
    d = st.dst[c]
    s1 = st.src1_raw[c]
    emit(st, _COMPUTE, c, slot, st.slot_of[st.src0[c]], st.slot_of[s1] if s1 >= 0 else -1)
    st.now = max(st.now, tc)
    st.kclock[st.kind[c]] = tc + st.cost[c]
    st.resident[d] = True
    st.slot_of[d] = slot
    st.avail[d] = tc + st.busy[c]
    st.touch[d] = tick(st)
    note_peak(st)
    # successors whose producers have all issued become candidates
    for p in range(st.users_ptr[d], st.users_ptr[d + 1]):
        u = st.users[p]
        st.deps[u] -= 1
        if st.deps[u] == 0:
            st.ready_n = heap.push(st.ready, st.ready_n, u)
    # sources and result: refresh their eviction keys, or let them die
    for j in range(3):
        v = st.src0[c] if j == 0 else (st.src1[c] if j == 1 else d)
        if v < 0:
            continue
        nu = next_use(st, v)
        if nu == NEVER:
            if st.is_output[v] and not st.stored[v]:  # its final, compulsory store
                store(st, v, st.slot_of[v])
            st.resident[v] = False
            st.vkey[v] = -1
            release_slot(st, st.slot_of[v])
        else:
            if j < 2:
                st.touch[v] = tick(st)
                st.unread[v] = False
                st.wasted[v] = False
            push_victim(st, v, nu)
    return True


@njit(cache=True)
def _result(st, outcome):
    n = st.nev
    return Result(st.ev_kind[:n], st.ev_arg[:n], st.ev_slot[:n], st.ev_src0[:n], st.ev_src1[:n], st.peak, outcome)


@njit(cache=True)
def schedule_kernel(pb):
    """Run the greedy loop on `Problem` `pb`; returns a `Result`."""
    st = new_state(pb)
    n = len(st.src0)
    while st.done < n:
        make_room(st)  # the bounded pushes of one step never grow an array
        c = _candidate(st)
        if c >= 0:
            w = _urgent_parked(st)
            if w >= 0 and c > w + st.window:
                # c would run too far ahead of an instruction waiting for a load: load first
                c = -1
        tc = _start_time(st, c) if c >= 0 else 0.0
        lv, lnu = _urgent_load(st)
        if lv >= 0:
            tl = max(st.tgen if st.gen[lv] else st.tmem, st.now)
            if c < 0 or tl <= tc:
                slot = -1
                if (c < 0 and st.fcount > 0) or (c >= 0 and st.fcount > st.reserve[c] and (not st.wasted[lv] or _harmless(st, c, lnu))):
                    slot = take_slot(st)
                    st.pend_n = heap.pop(st.pend, st.pend_n)
                elif c < 0:
                    # Nothing can run without a load. Load for the most urgent instruction
                    # waiting on one (with priorities in dependence order, lv's earliest user)
                    # and evict anything but its operands. Its heap entry goes stale.
                    w = _urgent_parked(st)
                    if w < 0:
                        return _result(st, _DEADLOCK)
                    lv = st.src0[w] if not st.resident[st.src0[w]] else st.src1[w]
                    lnu = next_use(st, lv)
                    victim, vnu = best_victim(st, st.src0[w], st.src1[w])
                    if victim < 0:
                        return _result(st, _CAPACITY)
                    slot = _evict(st, victim, vnu)
                if slot >= 0:
                    _load(st, lv, lnu, slot, tl)
                    continue
        if c < 0:
            return _result(st, _DEADLOCK)
        if not _issue(st, c, tc):
            return _result(st, _CAPACITY)
    return _result(st, _DONE)
