"""Which slots of which inputs a CKKS value's error comes from, to see two errors that are
not independent.

The noise rules add two values' errors in variance, as independent. A value and its own
rotation are independent slot by slot (each slot reads another slot's error), but the sum
of the two is not independent of its own rotation by the same step: ``y = y.rotate(1) + y``
repeated k times weights the input's slot errors binomially, and the weights overlap, so
the error grows by 1 bit per step where the rules said half (measured: 1.6 bits after 16
steps where 5.9 were estimated). `error_offsets` follows, per encrypted input, the set of
slot offsets a value's error reads through rotations and slot-wise operations; a sum of
two values whose sets overlap at a rotated offset adds their errors coherently
(`coherent_noise`). Anything that mixes slots otherwise (a conjugation, a linear
transform, a slot sum, a bootstrap) or a set past `MAX_OFFSETS` stops the tracking: there
the rules' estimate stands.
"""

from __future__ import annotations

import math

from fhec.ir.he import HeOp
from fhec.ir.he_types import row_length

MAX_OFFSETS = 64
"""Offsets tracked per value before it counts as untracked (a sum of many rotations)."""

_SLOTWISE = frozenset({
    HeOp.NEG, HeOp.ADD_PLAIN, HeOp.SUB_PLAIN, HeOp.ADD_CONST, HeOp.SUB_CONST, HeOp.MUL_PLAIN, HeOp.MUL_CONST,
    HeOp.RELINEARIZE, HeOp.RESCALE, HeOp.MOD_SWITCH, HeOp.LEVEL_DOWN, HeOp.POLYNOMIAL,
})
"""Ops whose result's slot i depends on the operand's slot i only: the offsets stay."""

_COMBINING = frozenset({HeOp.ADD, HeOp.SUB, HeOp.MUL})
"""Ops whose result's slot i depends on slot i of both operands: the offsets unite."""

Offsets = dict  # input node id -> frozenset of slot offsets, or None (untracked)


def error_offsets(builder, vid: int, cache: dict) -> Offsets | None:
    """Input id -> the slot offsets `vid`'s error reads from that input, or None when the
    value mixes slots in another way (module docstring). `cache` memoizes per builder.
    Iterative: a program's chain of sums may be far deeper than Python's recursion limit."""
    stack = [vid]
    while stack:
        v = stack[-1]
        if v in cache:
            stack.pop()
            continue
        node = builder.nodes[v]
        missing = [d for d in _operands(node) if d not in cache]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        cache[v] = _offsets_of(builder, node, cache)
    return cache[vid]


def _operands(node) -> tuple:
    """The operands whose offsets a node's depend on (none for an input or an untracked op)."""
    if node.op is HeOp.ROTATE or node.op in _SLOTWISE:
        return tuple(node.args[:1])
    if node.op in _COMBINING:
        return tuple(node.args[:2])
    return ()


def _offsets_of(builder, node, cache: dict) -> Offsets | None:
    """`error_offsets` of one node whose operands' are in `cache`."""
    if node.op is HeOp.INPUT:
        return {node.id: frozenset({0})}
    if node.op is HeOp.ROTATE:
        inner = cache[node.args[0]]
        row = row_length(builder.params)
        step = int(node.attr("step"))
        return None if inner is None else {r: frozenset((o + step) % row for o in s) for r, s in inner.items()}
    if node.op in _SLOTWISE:
        return cache[node.args[0]]
    if node.op in _COMBINING:
        a, b = (cache[v] for v in node.args[:2])
        if a is None or b is None:
            return None
        out = {r: a.get(r, frozenset()) | b.get(r, frozenset()) for r in set(a) | set(b)}
        return None if sum(len(s) for s in out.values()) > MAX_OFFSETS else out
    return None


def overlap_through_rotation(a: Offsets | None, b: Offsets | None) -> bool:
    """Whether two values' errors read a common slot of a common input, with a rotation
    involved (two values that both read only offset 0 are left to the rules)."""
    if a is None or b is None:
        return False
    for root in set(a) & set(b):
        if a[root] & b[root] and len(a[root] | b[root]) > 1:
            return True
    return False


def coherent_noise(noise_a: float, noise_b: float) -> float:
    """log2 of the standard deviation of the sum of two errors that may be fully
    correlated: the standard deviations add (the rules' independent sum is their root sum
    of squares)."""
    return math.log2(2.0**noise_a + 2.0**noise_b)
