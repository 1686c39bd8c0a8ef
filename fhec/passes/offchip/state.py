"""The off-chip scheduler's kernel data as two numba-compatible structs.

`Problem` is what the kernel reads and never changes: the instructions in priority
order (rank r = the r-th most urgent), their users, and the machine's coarse time
model. `State` is everything the greedy loop changes, bundled so that the kernel's
helpers take ``(pb, st)`` instead of a dozen arrays. Both are namedtuples, which
numba compiles to plain structs (and can cache, unlike a jitclass); scalars that
change live in small arrays indexed by the ``C_*`` and ``T_*`` constants.

Conventions: an rvec id ``v`` indexes the per-rvec arrays; a rank ``r`` indexes the
per-instruction arrays; ``-1`` means none; `NEVER` is the "next use" of a value no
unissued instruction reads.
"""

from __future__ import annotations

import collections

import numpy as np
from numba import njit

from fhec.ir.schedule import Event
from fhec.passes.offchip import heap
from fhec.passes.offchip.heap import Heap

__all__ = ["Problem", "State", "Events", "NEVER", "MASK", "new_state", "next_use", "room"]

NEVER = np.int64(2**31 - 1)
"""Next use of a value with no unissued user (larger than every rank)."""
MASK = np.int64(2**32 - 1)
"""Low 32 bits of a heap key: the rvec or rank it names."""

NUM_KINDS = 8
"""Size of the per-unit-kind clock table (at least the number of `UnitKind`s)."""

Problem = collections.namedtuple(
    "Problem",
    [
        # per rank
        "src0",       # first source rvec
        "src1",       # second source rvec, -1 if none or the same as src0
        "src1_raw",   # second source rvec as the program names it (for the event's slot)
        "dst",        # destination rvec
        "kind",       # index of the unit kind that executes it (< NUM_KINDS)
        "cost",       # cycles it occupies all units of its kind (occupancy / units)
        "busy",       # cycles from issue to its result complete
        "deps",       # sources that are computed (not loaded) values
        # per rvec
        "users_ptr",  # CSR: users[users_ptr[v]:users_ptr[v+1]] are v's readers' ranks, ascending
        "users",
        "loaded",     # starts off chip (INPUT, KSH, CONST)
        "is_output",  # must be stored once after it is computed
        # scalars
        "capacity",   # scratchpad slots
        "xfer",       # cycles the memory channel takes per RVec
        "mem_lat",    # off-chip latency in cycles
        "policy",     # a `Policy` code
        "reserve",    # slots prefetches leave free
    ],
)

Events = collections.namedtuple("Events", ["kind", "arg", "slot", "src0", "src1", "count"])
"""The schedule being built: parallel arrays, the first ``count[0]`` entries valid."""

State = collections.namedtuple(
    "State",
    [
        # per rank
        "issued",
        "deps",       # computed sources not yet computed
        "is_parked",  # waits in park_head/park_next for a source to be loaded
        "park_next",  # next rank waiting on the same rvec
        # per rvec
        "uptr",       # first user in users_ptr..users that may be unissued (advanced lazily)
        "resident",   # in the scratchpad
        "slot_of",    # its slot while resident
        "stored",     # has an up-to-date copy off chip
        "avail",      # coarse time at which it is complete on chip
        "touch",      # logical time of its last use (LRU)
        "park_head",  # first rank waiting for it to be loaded, -1 if none
        "vkey",       # its one valid key in `vict`, -1 if none
        # heaps (lazy: stale entries are skipped when they reach the top)
        "ready",      # ranks whose producers have issued
        "pend",       # (next use << 32 | rvec) of values to load
        "vict",       # eviction candidates, key by policy
        "parked",     # ranks waiting for a load
        # free slots, reused first in first out
        "fifo",
        # coarse time model: per unit kind, when its units are next free
        "kclock",
        "ctr",        # int64 counters, indexed by C_*
        "time",       # float64 clocks, indexed by T_*
        "held",       # scratch for `policies.best_victim`
        "events",
    ],
)

C_DONE, C_PEAK, C_CLOCK, C_FHEAD, C_FCOUNT = range(5)
"""Indices into `State.ctr`: instructions issued, peak slots used, LRU logical clock,
head of the free-slot FIFO and number of free slots."""
T_NOW, T_MEM = range(2)
"""Indices into `State.time`: the latest issue time, when the memory channel is next free."""


@njit(cache=True)
def next_use(pb, st, v):
    """Rank of the most urgent unissued reader of `v`, or `NEVER`."""
    p = st.uptr[v]
    end = pb.users_ptr[v + 1]
    while p < end and st.issued[pb.users[p]]:
        p += 1
    st.uptr[v] = p
    return pb.users[p] if p < end else NEVER


@njit(cache=True)
def new_state(pb):
    """The state before the first step: nothing resident, every slot free, the
    instructions without computed sources ready, every loaded value pending."""
    n = len(pb.src0)
    R = len(pb.loaded)
    ctr = np.zeros(5, dtype=np.int64)
    ctr[C_CLOCK] = 1
    ctr[C_FCOUNT] = pb.capacity
    cap_ev = 2 * n + 16
    st = State(
        np.zeros(n, dtype=np.bool_),
        pb.deps.copy(),
        np.zeros(max(n, 1), dtype=np.bool_),
        np.full(max(n, 1), -1, dtype=np.int64),
        pb.users_ptr[:-1].copy(),
        np.zeros(R, dtype=np.bool_),
        np.full(R, -1, dtype=np.int32),
        pb.loaded.copy(),
        np.zeros(R, dtype=np.float64),
        np.zeros(R, dtype=np.int64),
        np.full(R, -1, dtype=np.int64),
        np.full(R, -1, dtype=np.int64),
        heap.new_heap(max(n, 1)),
        heap.new_heap(max(R, 16)),
        heap.new_heap(max(3 * n, 16)),
        heap.new_heap(16),
        np.arange(pb.capacity).astype(np.int32),
        np.zeros(NUM_KINDS, dtype=np.float64),
        ctr,
        np.zeros(2, dtype=np.float64),
        np.empty(4, dtype=np.int64),
        Events(
            np.empty(cap_ev, dtype=np.uint8), np.empty(cap_ev, dtype=np.int32), np.empty(cap_ev, dtype=np.int32),
            np.empty(cap_ev, dtype=np.int32), np.empty(cap_ev, dtype=np.int32), np.zeros(1, dtype=np.int64),
        ),
    )
    for r in range(n):
        if pb.deps[r] == 0:
            heap.push(st.ready, r)
    for v in range(R):
        if pb.loaded[v]:
            nu = next_use(pb, st, v)
            if nu != NEVER:
                heap.push(st.pend, (nu << 32) | v)
    return st


_EVENTS_PER_STEP = 8
"""More than one step of the kernel emits (a store, a load, a compute, two final stores)."""


@njit(cache=True)
def _needs_room(st, n):
    return (
        st.events.count[0] + _EVENTS_PER_STEP > len(st.events.kind)
        or st.vict.size[0] + 16 > len(st.vict.keys)
        or st.pend.size[0] + 16 > len(st.pend.keys)
        or st.parked.size[0] + n + 1 > len(st.parked.keys)
    )


@njit(cache=True)
def _with_room(st, n):
    ev = st.events
    if ev.count[0] + _EVENTS_PER_STEP > len(ev.kind):
        used = ev.count[0]
        m = 2 * len(ev.kind) - used
        ev = Events(heap.grown(ev.kind, used, m), heap.grown(ev.arg, used, m), heap.grown(ev.slot, used, m),
                    heap.grown(ev.src0, used, m), heap.grown(ev.src1, used, m), ev.count)
    return State(
        st.issued, st.deps, st.is_parked, st.park_next,
        st.uptr, st.resident, st.slot_of, st.stored, st.avail, st.touch, st.park_head, st.vkey,
        st.ready, heap.reserve(st.pend, 16), heap.reserve(st.vict, 16), heap.reserve(st.parked, n + 1),
        st.fifo, st.kclock, st.ctr, st.time, st.held, ev,
    )


@njit(cache=True)
def room(st, n):
    """`st`, or a copy with the growable buffers enlarged for one more step (the
    bounded pushes of one step never grow an array themselves)."""
    if _needs_room(st, n):
        return _with_room(st, n)
    return st


# --- the free-slot FIFO and the event list ------------------------------------------------


@njit(cache=True)
def free_slots(st):
    return st.ctr[C_FCOUNT]


@njit(cache=True)
def take_slot(pb, st):
    """The free slot freed longest ago (the caller checked one is free)."""
    slot = st.fifo[st.ctr[C_FHEAD]]
    st.ctr[C_FHEAD] = (st.ctr[C_FHEAD] + 1) % pb.capacity
    st.ctr[C_FCOUNT] -= 1
    return slot


@njit(cache=True)
def release_slot(pb, st, slot):
    st.fifo[(st.ctr[C_FHEAD] + st.ctr[C_FCOUNT]) % pb.capacity] = slot
    st.ctr[C_FCOUNT] += 1


@njit(cache=True)
def note_peak(pb, st):
    st.ctr[C_PEAK] = max(st.ctr[C_PEAK], pb.capacity - st.ctr[C_FCOUNT])


@njit(cache=True)
def tick(st):
    """The next LRU logical time."""
    t = st.ctr[C_CLOCK]
    st.ctr[C_CLOCK] = t + 1
    return t


@njit(cache=True)
def emit(st, kind, arg, slot, src0, src1):
    ev = st.events
    i = ev.count[0]
    ev.kind[i] = kind
    ev.arg[i] = arg
    ev.slot[i] = slot
    ev.src0[i] = src0
    ev.src1[i] = src1
    ev.count[0] = i + 1


_STORE = int(Event.STORE)


@njit(cache=True)
def store(pb, st, v, slot):
    """Emit the store of resident `v` from `slot`, after it is complete on chip."""
    st.time[T_MEM] = max(st.time[T_MEM], st.avail[v]) + pb.xfer
    st.stored[v] = True
    emit(st, _STORE, v, slot, -1, -1)
