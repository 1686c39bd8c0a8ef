"""Pairing key switches: two independent key switches of one shape walk their digits together.

A hybrid key switch's digit loop (`LimbEmitter.digits_times_hint`: the INTTs of its digits,
then per digit a base extension and a product with that digit's hint limbs) reads every
limb of its hint, and the lowering emits each key switch's loop on its own. When the hint
is large against the scratchpad (F1's one-special-prime relinearization hint at level 15
is 34 MiB of 64 MiB), the data scheduler keeps it whole beside one key switch's working
set, and few instructions are ready at a time: the DB lookup's multipliers ran at about
half rate with the memory channel idle.

This pass changes priorities only. Walking the digit loops in priority order, it pairs
each loop with the next one when both have the same instruction shape (the same ops in
the same order: same key-switch level and method) and the second does not depend on the
first (no HE path from the first key switch to the second), and interleaves the two loops
instruction by instruction, starting where the second began: each digit's hint limbs are
then read by both key switches while they are resident. Only key switches with the same
hint are paired: two hints gain nothing from the interleave, and both loops' digits are
live at once.

The pipeline (`fhec.pipeline._schedule_cycles`) schedules the paired program beside the
unpaired one and keeps it only when it is strictly faster: on the DB lookup (F1 Table 3)
it is, 4.96 ms against 6.89 (7.49 against 8.92 under the earlier hint-reuse order; memory
idle, hint resident, few key switches in flight);
on logistic regression, which is bound by the memory channel, it would cost 0.2%, and
there the unpaired schedule is kept. Pairs, not larger groups: every
member keeps its digits' INTT outputs live, and groups of 3, 4 and 8 moved more data and
took longer on the DB lookup (measured with a first form of this interleave at a prefetch
reserve of 1/8: 7.90, 7.99 and 8.41 ms against 7.86 ms for pairs and 8.92 ms without).

Preserves: every instruction, operand and dependence (only ``prio`` changes; the
schedulers honour dependences whatever the priorities), so every residue of every output
is unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.ir.he import HeOp, HeProgram
from fhec.ir.limb import LimbProgram, RVecClass

def _loops(limb: LimbProgram, he: HeProgram) -> tuple[list[int], dict[int, np.ndarray]]:
    """(key-switch ids in priority order, id -> its loop's instruction indices in
    priority order); a key switch is named by its MOD_UP node, and its loop is the
    instructions of that MOD_UP and of the KEY_MULTs reading it. Grouped with numpy: at
    LoLa-CIFAR's size the loops hold 20 M instructions, a GB as Python lists."""
    top = max((n.id for n in he.nodes), default=-1)
    switch_of = np.full(top + 2, -1, dtype=np.int64)  # the last entry stands for he_node -1
    for n in he.nodes:
        if n.op is HeOp.MOD_UP:
            switch_of[n.id] = n.id
    for n in he.nodes:
        if n.op is HeOp.KEY_MULT and n.args and switch_of[n.args[0]] >= 0:
            switch_of[n.id] = switch_of[n.args[0]]
    order = np.argsort(np.asarray(limb.prio), kind="stable")
    owner = switch_of[np.asarray(limb.he_node, dtype=np.int64)[order]]
    keep = owner >= 0
    idx, own = order[keep], owner[keep]
    if not len(own):
        return [], {}
    by_switch = np.argsort(own, kind="stable")  # within a switch, still priority order
    idx, own = idx[by_switch], own[by_switch]
    starts = np.flatnonzero(np.r_[True, own[1:] != own[:-1]])
    ends = np.r_[starts[1:], len(own)]
    first = by_switch[starts]  # each switch's first position in priority order
    switches = own[starts][np.argsort(first, kind="stable")].tolist()
    loops = {int(own[a]): idx[a:b] for a, b in zip(starts.tolist(), ends.tolist())}
    return switches, loops


def _reaches(he: HeProgram, users: dict[int, list[int]], src: int, dst: int) -> bool:
    """Whether HE node `dst` depends on `src` (a walk over users, bounded by dst's id:
    node ids are a topological order)."""
    todo, seen = [src], {src}
    while todo:
        v = todo.pop()
        if v == dst:
            return True
        for u in users.get(v, ()):
            if u not in seen and u <= dst:
                seen.add(u)
                todo.append(u)
    return False


def _hint_limbs(limb: LimbProgram, loop: np.ndarray) -> int:
    """How many distinct key-switch-hint limbs a digit loop reads."""
    srcs = np.concatenate([np.asarray(limb.src0)[loop], np.asarray(limb.src1)[loop]])
    srcs = srcs[srcs >= 0]
    return int(np.unique(srcs[np.asarray(limb.rvec_class)[srcs] == RVecClass.KSH]).size)


def pair_key_switches(limb: LimbProgram, he: HeProgram, min_hint_limbs: int = 0,
                      min_share: float = 0.0) -> LimbProgram:
    """`limb` with the digit loops of independent same-shape key switches interleaved in
    pairs (see the module doc). Only key switches whose hint has at least `min_hint_limbs`
    limbs take part: a small hint stays resident beside several key switches anyway, so
    pairing them cannot save its loads. If the paired loops hold under `min_share` of the
    instructions, `limb` is returned unchanged: the caller schedules the paired program a
    second time, which is not worth it for a few pairs."""
    switches, loops = _loops(limb, he)
    if min_hint_limbs > 0:
        switches = [s for s in switches if _hint_limbs(limb, loops[s]) >= min_hint_limbs]
    if len(switches) < 2:
        return limb
    key: dict[int, tuple] = {}  # switch -> the hints its KEY_MULTs read
    for n in he.nodes:
        if n.op is HeOp.KEY_MULT and n.args and n.args[0] in loops:
            key[n.args[0]] = key.get(n.args[0], ()) + (n.attr("source", None),)
    ops = np.asarray(limb.op)
    prio = np.asarray(limb.prio, dtype=np.float64).copy()
    users = he.users()
    shape = {s: ops[loops[s]].tobytes() for s in switches}
    k = paired = 0
    while k + 1 < len(switches):
        a, b = switches[k], switches[k + 1]
        if shape[a] != shape[b] or key.get(a) != key.get(b) or _reaches(he, users, a, b):
            k += 1
            continue
        start, n = prio[loops[b][0]], len(loops[a])
        step = np.arange(n, dtype=np.float64) / n  # inside [start, start + 1): before b's successors
        prio[loops[a]] = start + step
        prio[loops[b]] = start + step + 0.5 / n
        paired += len(loops[a]) + len(loops[b])
        k += 2
    if paired < min_share * len(prio):
        return limb
    if np.array_equal(prio, limb.prio):
        return limb  # nothing paired: the caller can tell by identity
    ranks = np.empty(len(prio), dtype=np.int64)
    ranks[np.argsort(prio, kind="stable")] = np.arange(len(prio))
    return dataclasses.replace(limb, prio=ranks.astype(np.asarray(limb.prio).dtype))
