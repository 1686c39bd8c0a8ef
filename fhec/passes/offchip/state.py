"""The off-chip scheduler's kernel data as ONE numba struct, `State`.

`Problem` (a namedtuple, built by the driver with named fields) is what the kernel
reads: the instructions in priority order (rank r = the r-th most urgent), their
users and the machine's coarse time model. `new_state` copies it into a `State`,
which adds everything the greedy loop changes. `State` is a numba StructRef: passed
by reference, with mutable fields (counters, and arrays replaced when they grow), and
cacheable. A namedtuple state was measured 5-7x slower: numba passes tuples by value,
copying (and reference-counting) every array at every helper call.

Conventions: an rvec id ``v`` indexes the per-rvec arrays; a rank ``r`` indexes the
per-instruction arrays; ``-1`` means none; `NEVER` is the "next use" of a value no
unissued instruction reads.
"""

from __future__ import annotations

import collections

import numpy as np
from numba import njit, types
from numba.experimental import structref

from fhec._jit import announce_compile

from fhec.ir.schedule import Event
from fhec.passes.offchip import heap

announce_compile(__file__)

__all__ = ["Problem", "State", "NEVER", "MASK", "NUM_KINDS", "new_state", "next_use", "make_room"]

NEVER = np.int64(2**31 - 1)
"""Next use of a value with no unissued user (larger than every rank)."""
MASK = np.int64(2**32 - 1)
"""Low 32 bits of a heap key: the rvec or rank it names."""

NUM_KINDS = 8
"""Size of the per-unit-kind clock table (at least the number of `UnitKind`s)."""

_PROBLEM_FIELDS = (
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
    "gen",        # loaded from the on-chip key generator, not the memory channel (`Target.generated_rvecs`)
    # scalars
    "capacity",   # scratchpad slots
    "xfer",       # cycles the memory channel takes per RVec
    "mem_lat",    # off-chip latency in cycles
    "policy",     # a `policies.Policy` code
    "reserve",    # per rank: slots prefetches leave free while it is the candidate
    "window",     # ranks an instruction may run ahead of the most urgent one waiting for a load
    "gen_xfer",   # cycles the key generator takes per RVec
    "gen_lat",    # the key generator's latency in cycles
)
Problem = collections.namedtuple("Problem", _PROBLEM_FIELDS)

_STATE_FIELDS = _PROBLEM_FIELDS[:7] + _PROBLEM_FIELDS[8:] + (
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
    "unread",     # resident, loaded, and not read since
    "wasted",     # evicted unread since its last use: prefetched again only if harmless
    # lazy min-heaps (stale entries are skipped when they reach the top) and their sizes
    "ready", "ready_n",    # ranks whose producers have issued
    "pend", "pend_n",      # (next use << 32 | rvec) of values to load
    "vict", "vict_n",      # eviction candidates, keyed by the policy (`policies.victim_key`)
    "parked", "parked_n",  # ranks waiting for a load
    # free slots, reused first in first out
    "fifo", "fhead", "fcount",
    # coarse time model
    "kclock",     # per unit kind, when its units are next free
    "now",        # the latest issue time
    "tmem",       # when the memory channel is next free
    "tgen",       # when the key generator is next free
    "clock",      # LRU logical time
    "done",       # instructions issued
    "peak",       # most slots in use at once
    "held",       # scratch for `policies.best_victim`
    # the schedule being built: the first `nev` entries of parallel arrays
    "ev_kind", "ev_arg", "ev_slot", "ev_src0", "ev_src1", "nev",
)


@structref.register
class _StateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class State(structref.StructRefProxy):
    """The whole state of one kernel run (fields: see ``_STATE_FIELDS``)."""


structref.define_proxy(State, _StateType, list(_STATE_FIELDS))


@njit(cache=True, inline="always")
def next_use(st, v):
    """Rank of the most urgent unissued reader of `v`, or `NEVER`."""
    p = st.uptr[v]
    end = st.users_ptr[v + 1]
    while p < end and st.issued[st.users[p]]:
        p += 1
    st.uptr[v] = p
    return st.users[p] if p < end else NEVER


@njit(cache=True)
def new_state(pb):
    """The state before the first step: nothing resident, every slot free, the
    instructions without computed sources ready, every loaded value pending."""
    n = len(pb.src0)
    R = len(pb.loaded)
    cap_ev = 2 * n + 16
    st = State(
        pb.src0, pb.src1, pb.src1_raw, pb.dst, pb.kind, pb.cost, pb.busy,
        pb.users_ptr, pb.users, pb.loaded, pb.is_output, pb.gen,
        pb.capacity, pb.xfer, pb.mem_lat, pb.policy, pb.reserve, pb.window, pb.gen_xfer, pb.gen_lat,
        # per rank
        np.zeros(n, dtype=np.bool_), pb.deps.copy(),
        np.zeros(max(n, 1), dtype=np.bool_), np.full(max(n, 1), -1, dtype=np.int64),
        # per rvec
        pb.users_ptr[:-1].copy(), np.zeros(R, dtype=np.bool_), np.full(R, -1, dtype=np.int32),
        pb.loaded.copy(), np.zeros(R, dtype=np.float64), np.zeros(R, dtype=np.int64),
        np.full(R, -1, dtype=np.int64), np.full(R, -1, dtype=np.int64),
        np.zeros(R, dtype=np.bool_), np.zeros(R, dtype=np.bool_),
        # heaps
        np.empty(max(n, 1), dtype=np.int64), 0,
        np.empty(max(R, 16), dtype=np.int64), 0,
        np.empty(max(3 * n, 16), dtype=np.int64), 0,
        np.empty(16, dtype=np.int64), 0,
        # free slots
        np.arange(pb.capacity).astype(np.int32), 0, pb.capacity,
        # time
        np.zeros(NUM_KINDS, dtype=np.float64), 0.0, 0.0, 0.0, 1, 0, 0, np.empty(4, dtype=np.int64),
        # events
        np.empty(cap_ev, dtype=np.uint8), np.empty(cap_ev, dtype=np.int32), np.empty(cap_ev, dtype=np.int32),
        np.empty(cap_ev, dtype=np.int32), np.empty(cap_ev, dtype=np.int32), 0,
    )
    for r in range(n):
        if st.deps[r] == 0:
            st.ready_n = heap.push(st.ready, st.ready_n, r)
    for v in range(R):
        if st.loaded[v]:
            nu = next_use(st, v)
            if nu != NEVER:
                st.pend_n = heap.push(st.pend, st.pend_n, (nu << 32) | v)
    return st


_EVENTS_PER_STEP = 8
"""More than one step of the kernel emits (a store, a load, a compute, two final stores)."""


@njit(cache=True)
def make_room(st):
    """Enlarge the growable buffers so that the bounded pushes of one step fit."""
    n = len(st.src0)
    if st.nev + _EVENTS_PER_STEP > len(st.ev_kind):
        m = 2 * len(st.ev_kind) - st.nev
        st.ev_kind = heap.grown(st.ev_kind, st.nev, m)
        st.ev_arg = heap.grown(st.ev_arg, st.nev, m)
        st.ev_slot = heap.grown(st.ev_slot, st.nev, m)
        st.ev_src0 = heap.grown(st.ev_src0, st.nev, m)
        st.ev_src1 = heap.grown(st.ev_src1, st.nev, m)
    # assign only when growing: storing an array field costs reference counting every step
    if st.vict_n + 16 > len(st.vict):
        st.vict = heap.grown(st.vict, st.vict_n, 16)
    if st.pend_n + 16 > len(st.pend):
        st.pend = heap.grown(st.pend, st.pend_n, 16)
    if st.parked_n + n + 1 > len(st.parked):
        st.parked = heap.grown(st.parked, st.parked_n, n + 1)


# --- the free-slot FIFO and the event list ------------------------------------------------


@njit(cache=True, inline="always")
def take_slot(st):
    """The free slot freed longest ago (the caller checked one is free)."""
    slot = st.fifo[st.fhead]
    st.fhead = (st.fhead + 1) % st.capacity
    st.fcount -= 1
    return slot


@njit(cache=True, inline="always")
def release_slot(st, slot):
    st.fifo[(st.fhead + st.fcount) % st.capacity] = slot
    st.fcount += 1


@njit(cache=True, inline="always")
def note_peak(st):
    st.peak = max(st.peak, st.capacity - st.fcount)


@njit(cache=True, inline="always")
def tick(st):
    """The next LRU logical time."""
    t = st.clock
    st.clock = t + 1
    return t


@njit(cache=True, inline="always")
def emit(st, kind, arg, slot, src0, src1):
    i = st.nev
    st.ev_kind[i] = kind
    st.ev_arg[i] = arg
    st.ev_slot[i] = slot
    st.ev_src0[i] = src0
    st.ev_src1[i] = src1
    st.nev = i + 1


_STORE = int(Event.STORE)


@njit(cache=True, inline="always")
def store(st, v, slot):
    """Emit the store of resident `v` from `slot`, after it is complete on chip."""
    st.tmem = max(st.tmem, st.avail[v]) + st.xfer
    st.stored[v] = True
    emit(st, _STORE, v, slot, -1, -1)
