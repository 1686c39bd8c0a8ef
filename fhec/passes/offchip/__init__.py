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
  priority is the global order, F1's "priority reflects global order") issues,
  unless it is more than a quarter of the scratchpad's slots of ranks ahead of the
  most urgent instruction waiting for a load (`driver.RUNAHEAD_FRACTION`): then that
  load goes first.
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
  ``prefetch_reserve`` of them free for computed values (one fraction, or one per
  instruction: that of the most urgent instruction that could run): letting prefetches evict
  was measured to raise both traffic and cycles, because evicting early decides
  with less information and `fhec.passes.cycle` hoists every load to the moment
  its slot frees anyway; filling every free slot made prefetched hints the first
  victims later (F1's matrix-vector example on F1: 2x compulsory traffic without a
  reserve, 1.0x with a quarter of the scratchpad kept free). A value whose prefetch was
  wasted (evicted unread) is prefetched again only if that does no harm (Cao et al.): if
  it would not be the next victim (some resident value is used later, or the free slots
  outnumber the instructions before its use); otherwise a value used far ahead is loaded
  into every slot a dying value frees and evicted by the next result. When nothing can run without a load, the most urgent
  instruction waiting on one gets it, evicting anything but its own operands;
  with 3 slots (`MIN_SLOTS`) this always makes progress, whatever the priorities.
- Free slots are reused first-in first-out, so that the cycle scheduler finds the
  previous occupant of a slot long finished with.

Modules: `heap` (the kernels' min-heaps), `state` (the kernel's input, and its
whole mutable state as one numba struct), `policies` (victim choice: Belady, LRU),
`kernel` (the greedy loop) and `driver` (`schedule_offchip`: numpy preparation
and the `DataSchedule`).

Preserves: the program (the schedule refers to it); every instruction issues
exactly once, after its producers, with its sources resident; every OUTPUT is
stored exactly once, after it is computed.
"""

from __future__ import annotations

from fhec.ir.schedule import DataSchedule, Event, Traffic
from fhec.passes.offchip.driver import MIN_SLOTS, check_fits_target, schedule_offchip
from fhec.passes.offchip.policies import POLICIES

__all__ = [
    "Event",
    "Traffic",
    "DataSchedule",
    "schedule_offchip",
    "check_fits_target",
    "POLICIES",
    "MIN_SLOTS",
]
