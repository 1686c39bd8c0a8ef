"""Eviction policies of the off-chip scheduler: which resident value leaves the
scratchpad when a slot is needed and none is free.

- ``belady``: the value whose next use is furthest in the future (the largest
  smallest-rank among its unissued users), F1 §4.3's approximation of Belady's MIN;
- ``lru``: the value used least recently (for comparison).

Candidates sit in the lazy min-heap ``State.vict`` keyed by ``(priority << 32) | rvec``,
where the priority is the policy's `victim_key`. ``State.vkey`` holds each resident
value's one valid key; entries that no longer match it are stale and skipped.
"""

from __future__ import annotations

import enum

from numba import njit

from fhec._jit import announce_compile

from fhec.passes.offchip import heap
from fhec.passes.offchip.state import MASK, NEVER, next_use

announce_compile(__file__)

__all__ = ["Policy", "POLICIES", "victim_key", "push_victim", "best_victim", "furthest_use"]


class Policy(enum.IntEnum):
    """Eviction policies; the code is what the kernel sees."""

    BELADY = 0
    LRU = 1


POLICIES = tuple(p.name.lower() for p in Policy)
"""Policy names `schedule_offchip` accepts: ``("belady", "lru")``."""

_LRU = int(Policy.LRU)


@njit(cache=True, inline="always")
def victim_key(st, v, nu):
    """Heap key of resident `v` whose next use is `nu`: smaller is evicted first."""
    if st.policy == _LRU:
        return (st.touch[v] << 32) | v
    return ((NEVER - nu) << 32) | v


@njit(cache=True, inline="always")
def push_victim(st, v, nu):
    """Make `v`'s current eviction key its only valid heap entry."""
    key = victim_key(st, v, nu)
    if key == st.vkey[v]:
        return
    st.vkey[v] = key
    st.vict_n = heap.push(st.vict, st.vict_n, key)


@njit(cache=True)
def best_victim(st, pin_a, pin_b):
    """Remove the best eviction candidate other than `pin_a` and `pin_b` from the heap
    and return (its rvec, its next use), or (-1, NEVER) if there is none. Stale
    entries are dropped; the pinned rvecs' entries stay."""
    vict = st.vict
    held = st.held
    size = st.vict_n
    nheld = 0
    victim = -1
    vnu = NEVER
    while size > 0:
        key = vict[0]
        size = heap.pop(vict, size)
        v = key & MASK
        if not st.resident[v] or key != st.vkey[v]:
            continue
        if v == pin_a or v == pin_b:
            held[nheld] = key
            nheld += 1
            continue
        victim = v
        vnu = next_use(st, v) if st.policy == _LRU else NEVER - (key >> 32)
        break
    for i in range(nheld):
        size = heap.push(vict, size, held[i])
    st.vict_n = size
    return victim, vnu


@njit(cache=True)
def furthest_use(st):
    """Under ``belady``, the next use of the value `best_victim` would evict now (the
    furthest next use on chip), or -1 when nothing is resident; `NEVER` under ``lru``,
    whose victims are not ordered by next use. Drops stale entries from the heap top."""
    if st.policy == _LRU:
        return NEVER
    vict = st.vict
    while st.vict_n > 0:
        key = vict[0]
        v = key & MASK
        if st.resident[v] and key == st.vkey[v]:
            return NEVER - (key >> 32)
        st.vict_n = heap.pop(vict, st.vict_n)
    return -1
