"""Key-switch-hint reuse ordering (F1 §4.2, "Ordering homomorphic operations").

A program as written may cycle through its key-switch hints once per data item: F1's
matrix-vector example rotates row 0 by 1, 2, 4, ..., then row 1 by 1, 2, 4, ..., so
each of its 14 hints is loaded four times when they do not all fit on chip. F1's
compiler "first clusters independent homomorphic operations that reuse the same hint,
then orders all clusters through simple list-scheduling". This pass does that:

* ready nodes that switch no key run first (they are cheap, and running them early
  makes more key switches ready);
* otherwise the next cluster is every ready key switch needing one key: the key of the
  previous cluster if some ready node still needs it (its hint is on chip), else the
  key with the most ready users (ties: the key that appears first in the program).

Preserves: semantics exactly (the result is a topological reordering: every node keeps
its operation, attributes and arguments, so every value, type and ciphertext is the
same); outputs keep their relative order at the end.
"""

from __future__ import annotations

from collections import defaultdict

from fhec.ir.he import HeNode, HeOp, HeProgram
from fhec.passes.he_rewrite import as_he, copy_node, rebuild


def _key_of(node: HeNode):
    """The key a node switches with, or None (type.keys of a primitive node)."""
    keys = node.type.keys
    return keys[0] if keys else None


def hint_reuse_order(program) -> list[int]:
    """The node ids of `program` in key-switch-hint reuse order (see the module doc)."""
    program = as_he(program)
    nodes = {n.id: n for n in program.nodes}
    first_seen = {n.id: i for i, n in enumerate(program.nodes)}
    waiting = {n.id: len(set(n.args)) for n in program.nodes}
    users: dict[int, list[int]] = defaultdict(list)
    for n in program.nodes:
        for a in set(n.args):
            users[a].append(n.id)
    outputs = [n.id for n in program.nodes if n.op is HeOp.OUTPUT]
    plain: list[int] = []  # ready nodes without a key, in program order
    by_key: dict = defaultdict(list)  # key -> ready key-switching nodes
    key_rank: dict = {}
    for n in program.nodes:
        k = _key_of(n)
        if k is not None and k not in key_rank:
            key_rank[k] = len(key_rank)

    def make_ready(vid: int) -> None:
        node = nodes[vid]
        if node.op is HeOp.OUTPUT:
            return
        k = _key_of(node)
        (plain if k is None else by_key[k]).append(vid)

    for n in program.nodes:
        if waiting[n.id] == 0:
            make_ready(n.id)
    order: list[int] = []
    current = None

    def emit(vid: int) -> None:
        order.append(vid)
        for u in users[vid]:
            waiting[u] -= 1
            if waiting[u] == 0:
                make_ready(u)

    while plain or any(by_key.values()):
        if plain:
            plain.sort(key=first_seen.__getitem__)
            vid = plain.pop(0)
            emit(vid)
            continue
        if current is None or not by_key.get(current):
            current = max((k for k, v in by_key.items() if v), key=lambda k: (len(by_key[k]), -key_rank[k]))
        cluster, by_key[current] = sorted(by_key[current], key=first_seen.__getitem__), []
        for vid in cluster:
            emit(vid)
    return order + outputs


def order_for_hint_reuse(program) -> HeProgram:
    """`program` with its nodes reordered for key-switch-hint reuse (see module doc)."""
    program = as_he(program)
    order = hint_reuse_order(program)
    index = {n.id: n for n in program.nodes}
    reordered = HeProgram(program.name, program.params, tuple(index[i] for i in order), program.options, program.loc)
    return rebuild(reordered, copy_node)
