"""Off-chip data-movement scheduling (F1 §4.3): which RVecs live in the scratchpad when.

`schedule_offchip` turns a `LimbProgram` into a `DataSchedule`: the instructions in
an issue order, interleaved with the LOADs and STOREs that move RVecs between
off-chip memory and the scratchpad, and a scratchpad slot for every on-chip value.
Like F1's second compiler phase it sees a simplified machine, functional units
attached directly to a scratchpad of fixed capacity; `fhec.passes.cycle` then
places every event at an exact cycle without adding or removing transfers.

The algorithm (F1 §4.3; docs/scheduling.md walks through it):

- Greedy, one event at a time. An instruction is *ready* when the instructions
  producing its sources have issued and its sources are in the scratchpad; among
  ready instructions the one of highest priority (smallest ``prio``: fhec's
  priority is the global order, F1's "priority reflects global order") issues.
- A value that must come from memory (an INPUT, KSH or CONST rvec, or a value
  evicted earlier) is loaded in order of its earliest unissued user (F1: p(load) =
  the most urgent of its users), as bandwidth allows: a coarse time model (each
  unit kind a fluid server, the memory channel a serial one) issues the next load
  when the channel would be free before the next instruction could start.
- Space: a value whose last user has issued is dead and frees its slot at once
  (an OUTPUT is stored first: its final, compulsory store). When no slot is free
  the *victim* is, for ``policy="belady"``, the value whose next use is furthest
  (the smallest priority among its unissued users is the largest; F1's
  approximation of Belady's MIN), or, for ``policy="lru"``, the least recently
  used value. A dirty victim (an intermediate or output never stored) is stored
  first. Loads ahead of need (prefetches) only fill free slots, and leave
  ``prefetch_reserve`` of them free for computed values: letting prefetches evict
  was measured to raise both traffic and cycles, because evicting early decides
  with less information and `fhec.passes.cycle` hoists every load to the moment
  its slot frees anyway; filling every free slot made prefetched hints the first
  victims later (F1's matrix-vector example on F1: 2x compulsory traffic without a
  reserve, 1.0x with a quarter of the scratchpad kept free). When nothing can run without a load, the most urgent
  instruction waiting on one gets it, evicting anything but its own operands;
  with 3 slots (`MIN_SLOTS`) this always makes progress, whatever the priorities.
- Free slots are reused first-in first-out, so that the cycle scheduler finds the
  previous occupant of a slot long finished with.

Preserves: the program (the schedule refers to it); every instruction issues
exactly once, after its producers, with its sources resident; every OUTPUT is
stored exactly once, after it is computed.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np
from numba import njit

from fhec._jit import announce_compile

from fhec.analysis.traffic import classify_traffic
from fhec.backends.target import Target, UnitKind
from fhec.errors import InternalError, TargetError
from fhec.ir.limb import LimbProgram, verify_limb_program
from fhec.ir.limb_ops import IS_LOADED, RVecClass
from fhec.ir.schedule import DataSchedule, Event, Traffic

announce_compile(__file__)

__all__ = [
    "Event",
    "Traffic",
    "DataSchedule",
    "schedule_offchip",
    "POLICIES",
    "MIN_SLOTS",
]

POLICIES = ("belady", "lru")
MIN_SLOTS = 3
"""Scratchpad slots the schedulers need: two sources and a distinct destination."""


# --- the greedy kernel ---------------------------------------------------------------------

_NEVER = np.int64(2**31 - 1)
_MASK = np.int64(2**32 - 1)
_ERR_NONE, _ERR_CAPACITY, _ERR_DEADLOCK = 0, 1, 2


@njit(cache=True)
def _hpush(h, size, key):
    i = size
    h[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if h[p] <= key:
            break
        h[i] = h[p]
        i = p
    h[i] = key
    return size + 1


@njit(cache=True)
def _hpop(h, size):
    """Remove the minimum h[0]; returns the new size."""
    size -= 1
    if size <= 0:
        return 0
    key = h[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and h[c + 1] < h[c]:
            c += 1
        if h[c] >= key:
            break
        h[i] = h[c]
        i = c
    h[i] = key
    return size


@njit(cache=True)
def _grow(h, size, need):
    if size + need <= len(h):
        return h
    g = np.empty(max(2 * len(h), size + need), dtype=h.dtype)
    g[:size] = h[:size]
    return g


@njit(cache=True)
def _next_use(v, uptr, users_ptr, users, issued):
    p = uptr[v]
    end = users_ptr[v + 1]
    while p < end and issued[users[p]]:
        p += 1
    uptr[v] = p
    return users[p] if p < end else _NEVER


@njit(cache=True)
def _victim_key(v, nu, touch, lru):
    if lru:
        return (touch[v] << 32) | v
    return ((_NEVER - nu) << 32) | v


@njit(cache=True)
def _push_victim(vict, vsz, vkey, v, nu, touch, lru):
    """Make `v`'s current eviction key its only valid heap entry."""
    key = _victim_key(v, nu, touch, lru)
    if key == vkey[v]:
        return vsz
    vkey[v] = key
    return _hpush(vict, vsz, key)


@njit(cache=True)
def _best_victim(vict, vsz, pin_a, pin_b, resident, vkey, lru, uptr, users_ptr, users, issued, held):
    """Remove and return the best eviction candidate as (rvec or -1, its next use, its
    heap key, new size). Stale entries are dropped; entries of the pinned rvecs stay."""
    nheld = 0
    victim = -1
    vnu = _NEVER
    vk = np.int64(0)
    while vsz > 0:
        key = vict[0]
        vsz = _hpop(vict, vsz)
        v = key & _MASK
        if not resident[v] or key != vkey[v]:
            continue
        if v == pin_a or v == pin_b:
            held[nheld] = key
            nheld += 1
            continue
        victim = v
        vk = key
        vnu = _next_use(v, uptr, users_ptr, users, issued) if lru else _NEVER - (key >> 32)
        break
    for i in range(nheld):
        vsz = _hpush(vict, vsz, held[i])
    return victim, vnu, vk, vsz


@njit(cache=True)
def _emit(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, kind, arg, slot, s0, s1):
    ev_kind[nev] = kind
    ev_arg[nev] = arg
    ev_slot[nev] = slot
    ev_s0[nev] = s0
    ev_s1[nev] = s1
    return nev + 1


@njit(cache=True)
def _evict(victim, vnu, slot_of, resident, vkey, stored, avail, tmem, xfer, pend, psz,
           ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev):
    """Take `victim` off chip (storing it first if dirty); returns (its slot, tmem, psz, nev)."""
    vkey[victim] = -1
    slot = slot_of[victim]
    resident[victim] = False
    if not stored[victim]:
        tmem = max(tmem, avail[victim]) + xfer
        stored[victim] = True
        nev = _emit(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, 2, victim, slot, -1, -1)
    if vnu != _NEVER:
        psz = _hpush(pend, psz, (vnu << 32) | victim)
    return slot, tmem, psz, nev


@njit(cache=True)
def _schedule_kernel(s0, s1, s1_raw, dstv, kind, cost, busy, users_ptr, users, loaded, is_output,
                     deps, capacity, xfer, mem_lat, lru, reserve):
    n = len(s0)
    R = len(loaded)
    issued = np.zeros(n, dtype=np.bool_)
    uptr = users_ptr[:-1].copy()
    resident = np.zeros(R, dtype=np.bool_)
    slot_of = np.full(R, -1, dtype=np.int32)
    stored = loaded.copy()  # has an up-to-date copy off chip
    avail = np.zeros(R, dtype=np.float64)
    touch = np.zeros(R, dtype=np.int64)
    park_head = np.full(R, -1, dtype=np.int64)
    park_next = np.full(max(n, 1), -1, dtype=np.int64)
    is_parked = np.zeros(max(n, 1), dtype=np.bool_)
    parked = np.empty(16, dtype=np.int64)  # ranks of parked instructions (lazy min-heap)
    parked_sz = 0
    fifo = np.arange(capacity).astype(np.int32)
    fhead = 0
    fcount = capacity
    peak = 0
    held = np.empty(4, dtype=np.int64)
    vkey = np.full(R, -1, dtype=np.int64)  # the one valid victim-heap key of each resident rvec

    ready = np.empty(max(n, 1), dtype=np.int64)
    rsz = 0
    for r in range(n):
        if deps[r] == 0:
            rsz = _hpush(ready, rsz, r)
    pend = np.empty(max(R, 16), dtype=np.int64)
    psz = 0
    for v in range(R):
        if loaded[v]:
            nu = _next_use(v, uptr, users_ptr, users, issued)
            if nu != _NEVER:
                psz = _hpush(pend, psz, (nu << 32) | v)
    vict = np.empty(max(3 * n, 16), dtype=np.int64)
    vsz = 0

    cap_ev = 2 * n + 16
    ev_kind = np.empty(cap_ev, dtype=np.uint8)
    ev_arg = np.empty(cap_ev, dtype=np.int32)
    ev_slot = np.empty(cap_ev, dtype=np.int32)
    ev_s0 = np.empty(cap_ev, dtype=np.int32)
    ev_s1 = np.empty(cap_ev, dtype=np.int32)
    nev = 0

    kclock = np.zeros(8, dtype=np.float64)
    now = 0.0
    tmem = 0.0
    clock = 1
    done = 0
    while done < n:
        # room for this iteration's pushes (each iteration adds a bounded number)
        if nev + 8 > len(ev_kind):
            m = 2 * len(ev_kind)
            ev_kind = _grow(ev_kind, nev, m - nev)
            ev_arg = _grow(ev_arg, nev, m - nev)
            ev_slot = _grow(ev_slot, nev, m - nev)
            ev_s0 = _grow(ev_s0, nev, m - nev)
            ev_s1 = _grow(ev_s1, nev, m - nev)
        vict = _grow(vict, vsz, 16)
        pend = _grow(pend, psz, 16)
        parked = _grow(parked, parked_sz, n + 1)

        # the most urgent ready instruction; park those whose sources are off chip
        c = -1
        while rsz > 0:
            r = ready[0]
            miss = -1
            if not resident[s0[r]]:
                miss = s0[r]
            elif s1[r] >= 0 and not resident[s1[r]]:
                miss = s1[r]
            if miss < 0:
                c = r
                break
            rsz = _hpop(ready, rsz)
            park_next[r] = park_head[miss]
            park_head[miss] = r
            is_parked[r] = True
            parked_sz = _hpush(parked, parked_sz, r)
        tc = 0.0
        if c >= 0:
            tc = max(kclock[kind[c]], avail[s0[c]])
            if s1[c] >= 0:
                tc = max(tc, avail[s1[c]])

        # the load whose earliest user is most urgent
        lv = -1
        lnu = _NEVER
        while psz > 0:
            key = pend[0]
            v = key & _MASK
            nu = key >> 32
            if resident[v] or _next_use(v, uptr, users_ptr, users, issued) != nu:
                psz = _hpop(pend, psz)
                continue
            lv = v
            lnu = nu
            break

        if lv >= 0:
            tl = max(tmem, now)
            if c < 0 or tl <= tc:
                slot = -1
                if fcount > reserve or (c < 0 and fcount > 0):
                    slot = fifo[fhead]
                    fhead = (fhead + 1) % capacity
                    fcount -= 1
                    psz = _hpop(pend, psz)
                elif c < 0:
                    # Nothing can run without a load. Load for the most urgent instruction
                    # waiting on one (with priorities in dependence order, lv's earliest user)
                    # and evict anything but its operands. Its heap entry goes stale.
                    while parked_sz > 0 and (issued[parked[0]] or not is_parked[parked[0]]):
                        parked_sz = _hpop(parked, parked_sz)
                    if parked_sz == 0:
                        return ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, _ERR_DEADLOCK
                    w = parked[0]
                    lv = s0[w] if not resident[s0[w]] else s1[w]
                    lnu = _next_use(lv, uptr, users_ptr, users, issued)
                    victim, vnu, vk, vsz = _best_victim(vict, vsz, s0[w], s1[w], resident, vkey, lru,
                                                        uptr, users_ptr, users, issued, held)
                    if victim < 0:
                        return ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, _ERR_CAPACITY
                    slot, tmem, psz, nev = _evict(victim, vnu, slot_of, resident, vkey, stored, avail, tmem, xfer,
                                                  pend, psz, ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev)
                if slot >= 0:
                    resident[lv] = True
                    slot_of[lv] = slot
                    avail[lv] = tl + mem_lat + xfer
                    tmem = tl + xfer
                    touch[lv] = clock
                    clock += 1
                    vsz = _push_victim(vict, vsz, vkey, lv, lnu, touch, lru)
                    nev = _emit(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, 1, lv, slot, -1, -1)
                    peak = max(peak, capacity - fcount)
                    r = park_head[lv]
                    park_head[lv] = -1
                    while r >= 0:
                        nxt = park_next[r]
                        is_parked[r] = False
                        rsz = _hpush(ready, rsz, r)
                        r = nxt
                    continue

        if c < 0:
            return ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, _ERR_DEADLOCK

        # issue instruction c: a slot for its result, evicting if needed
        if fcount > 0:
            slot = fifo[fhead]
            fhead = (fhead + 1) % capacity
            fcount -= 1
        else:
            victim, vnu, vk, vsz = _best_victim(vict, vsz, s0[c], s1[c], resident, vkey, lru,
                                                uptr, users_ptr, users, issued, held)
            if victim < 0:
                return ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, _ERR_CAPACITY
            slot, tmem, psz, nev = _evict(victim, vnu, slot_of, resident, vkey, stored, avail, tmem, xfer,
                                          pend, psz, ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev)
        rsz = _hpop(ready, rsz)
        issued[c] = True
        done += 1
        d = dstv[c]
        nev = _emit(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, 0, c, slot, slot_of[s0[c]],
                    slot_of[s1_raw[c]] if s1_raw[c] >= 0 else -1)
        now = max(now, tc)
        kclock[kind[c]] = tc + cost[c]
        resident[d] = True
        slot_of[d] = slot
        avail[d] = tc + busy[c]
        touch[d] = clock
        clock += 1
        peak = max(peak, capacity - fcount)
        # successors whose producers have all issued become candidates
        for p in range(users_ptr[d], users_ptr[d + 1]):
            u = users[p]
            deps[u] -= 1
            if deps[u] == 0:
                rsz = _hpush(ready, rsz, u)
        # sources and result: refresh their eviction keys, or let them die
        for j in range(3):
            v = s0[c] if j == 0 else (s1[c] if j == 1 else d)
            if v < 0:
                continue
            nu = _next_use(v, uptr, users_ptr, users, issued)
            if nu == _NEVER:
                if is_output[v] and not stored[v]:  # its final, compulsory store
                    tmem = max(tmem, avail[v]) + xfer
                    stored[v] = True
                    nev = _emit(ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, 2, v, slot_of[v], -1, -1)
                resident[v] = False
                vkey[v] = -1
                fifo[(fhead + fcount) % capacity] = slot_of[v]
                fcount += 1
            else:
                if j < 2:
                    touch[v] = clock
                    clock += 1
                vsz = _push_victim(vict, vsz, vkey, v, nu, touch, lru)
    return ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, _ERR_NONE


# --- preparation and classification (numpy) ---------------------------------------------------

_KIND_INDEX = {k: i for i, k in enumerate(UnitKind)}


def _users_csr(num_rvecs: int, src0: np.ndarray, src1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per rvec, the ascending ranks of the instructions reading it (each once)."""
    n = len(src0)
    ranks = np.arange(n, dtype=np.int64)
    second = (src1 >= 0) & (src1 != src0)
    rv = np.concatenate([src0.astype(np.int64), src1[second].astype(np.int64)])
    rk = np.concatenate([ranks, ranks[second]])
    order = np.argsort(rv * max(n, 1) + rk, kind="stable")
    users = rk[order]
    counts = np.bincount(rv, minlength=num_rvecs)
    ptr = np.zeros(num_rvecs + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, users


def check_fits_target(program: LimbProgram, target: Target) -> None:
    """Raise TargetError unless `target` supports the program's N and word size."""
    target.check_ring_degree(program.N)
    if program.word_bits > target.word_bits:
        raise TargetError(
            f"the program uses {program.word_bits}-bit words but target {target.name!r} has "
            f"{target.word_bits}-bit words; choose parameters with word_bits <= {target.word_bits}"
        )


def schedule_offchip(
    program: LimbProgram,
    target: Target,
    *,
    policy: str = "belady",
    capacity_bytes: int | None = None,
    prefetch_reserve: float = 0.0,
    verify: bool = True,
) -> DataSchedule:
    """Schedule off-chip data movement for `program` on `target` (F1 §4.3).

    Args:
        policy: ``"belady"`` (evict the value used furthest in the future, F1) or
            ``"lru"`` (evict the least recently used value; for comparison).
        capacity_bytes: scratchpad capacity to plan for; defaults to the target's.
        prefetch_reserve: fraction of the slots that prefetches (loads ahead of need)
            leave free for the values computation creates. Without a reserve, prefetched
            hints can fill the scratchpad and then be the furthest-used values when an
            intermediate needs a slot: evicted before their first use, they are loaded
            twice. Loads that an instruction is waiting on may always use any free slot.
            `fhec.compile` tries several reserves and keeps the fastest schedule.
        verify: run `verify_limb_program` first.

    Returns a `DataSchedule` whose events issue every instruction once and store
    every OUTPUT once. Raises TargetError if the target does not support the
    program's N or word size, or if the capacity holds fewer than `MIN_SLOTS`
    RVecs; ValueError for an unknown policy; InternalError for an invalid program.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown eviction policy {policy!r}; choose one of {POLICIES}")
    if not 0.0 <= prefetch_reserve < 1.0:
        raise ValueError(f"prefetch_reserve={prefetch_reserve!r} must be in [0, 1)")
    if verify:
        verify_limb_program(program)
    check_fits_target(program, target)
    cap_bytes = target.scratchpad.capacity_bytes if capacity_bytes is None else int(capacity_bytes)
    slots = cap_bytes // program.rvec_bytes
    if slots < MIN_SLOTS:
        raise TargetError(
            f"a scratchpad of {cap_bytes} bytes holds {slots} RVecs of {program.rvec_bytes} bytes at "
            f"N = {program.N}; scheduling needs at least {MIN_SLOTS}. Use a smaller N or a larger scratchpad"
        )

    n = len(program)
    order = np.argsort(program.prio, kind="stable")
    s0 = program.src0[order].astype(np.int64)
    s1_raw = program.src1[order].astype(np.int64)
    s1 = np.where(s1_raw == s0, -1, s1_raw)
    dstv = program.dst[order].astype(np.int64)
    ops = program.op[order]
    ptr, users = _users_csr(program.num_rvecs, s0, s1)
    loaded = IS_LOADED[program.rvec_class].copy()
    is_output = program.rvec_class == RVecClass.OUTPUT
    deps = (~loaded[s0]).astype(np.int64) + ((s1 >= 0) & ~loaded[np.maximum(s1, 0)]).astype(np.int64)

    N = program.N
    kind_of = np.zeros(16, dtype=np.int64)
    cost_of = np.zeros(16, dtype=np.float64)
    busy_of = np.zeros(16, dtype=np.float64)
    for op in np.unique(ops).tolist():
        unit = target.unit_for(op)
        k = unit.kind
        kind_of[op] = _KIND_INDEX[k]
        cost_of[op] = target.occupancy_cycles(op, N) / target.total_units(k)
        busy_of[op] = target.op_cycles(op, N)
    xfer = max(1.0, target.rvec_bytes(N) / target.offchip_bytes_per_cycle)

    ev_kind, ev_arg, ev_slot, ev_s0, ev_s1, nev, peak, err = _schedule_kernel(
        s0, s1, s1_raw, dstv, kind_of[ops], cost_of[ops], busy_of[ops], ptr, users, loaded, is_output,
        deps, slots, xfer, float(target.offchip_latency_cycles), policy == "lru",
        int(slots * prefetch_reserve),
    )
    if err == _ERR_CAPACITY:
        raise TargetError(
            f"scratchpad of {slots} RVecs is too small to hold the operands of one instruction "
            f"(need {MIN_SLOTS})"
        )
    if err == _ERR_DEADLOCK:
        raise InternalError("off-chip scheduler made no progress: no instruction ready and nothing to load")
    kind = ev_kind[:nev].copy()
    arg = ev_arg[:nev].copy()
    comp = kind == Event.COMPUTE
    arg[comp] = order[arg[comp]]  # ranks back to instruction indices
    return DataSchedule(
        program=program,
        policy=policy,
        slots=slots,
        kind=kind,
        arg=arg,
        slot=ev_slot[:nev].copy(),
        src0_slot=ev_s0[:nev].copy(),
        src1_slot=ev_s1[:nev].copy(),
        traffic=classify_traffic(program, kind, arg),
        peak_slots=int(peak),
    )
