"""The giant-step-centric (GSC) order of BSGS linear transforms (Osiris §V, Fig. 8).

A BSGS matrix-vector product as `fhec.ir.he_recipes` writes it is giant-step major: for
each giant step g, the plaintext products diag_{g,j} ⊙ rot_j(x) over the baby steps j,
summed, then rotated by g. Each baby-step rotation (and so its rotation key) is first
needed in the first giant step and again in every later one. Osiris reorders it around
the baby steps: per baby-step key, all n2 diagonal products that use rot_j, accumulated
into the n2 giant-step partial sums kept on chip; "while our MDC units are generating the
current set of n2 matrix diagonals [by OF-Limb], we load the next baby-step rotation key".
So every baby-step key is loaded once, and the work between two key loads is n2 diagonal
generations and products, which is what hides the load.

`giant_step_centric_order` is a list scheduler over the HE program in which every node
has a rank and the ready node of lowest (rank, program position) goes first:

* a *baby-step rotation* is a rotation (ROTATE, ROTATE_EXT) that some plaintext product
  (MUL_CONST, MUL_CONST_EXT, MUL_PLAIN) reads; its rank is its program position;
* a plaintext product of a baby-step rotation takes that rotation's rank, so the n2
  products of rot_j all come before rot_{j+1} (whose position is later);
* every other node takes the smallest rank of what it reads, or its own position if
  that is smaller: it runs as soon as it is ready (an accumulation right after the
  product it adds, a giant-step rotation right after the sum it rotates).

The recipe's per-giant-step sums are chains in baby-step order, so the accumulation into
each of the n2 partial sums follows each baby step's products; the giant-step rotations
and the final sum come after the last baby step, as in Fig. 8.

Preserves: semantics exactly (a topological reordering: every node keeps its operation,
attributes and arguments); outputs keep their relative order at the end. A program with
no plaintext product of a rotation keeps its order.
"""

from __future__ import annotations

import heapq

from fhec.ir.he import HeOp, HeProgram
from fhec.passes.he_rewrite import as_he, copy_node, rebuild

__all__ = ["BABY_STEP_ROTATIONS", "PLAIN_PRODUCTS", "giant_step_centric_order", "order_giant_step_centric"]

BABY_STEP_ROTATIONS = frozenset({HeOp.ROTATE, HeOp.ROTATE_EXT})
"""Ops a baby step of a BSGS transform is (single/no hoisting: ROTATE; double: ROTATE_EXT)."""

PLAIN_PRODUCTS = frozenset({HeOp.MUL_CONST, HeOp.MUL_CONST_EXT, HeOp.MUL_PLAIN})
"""Ops that multiply a baby step by a plaintext diagonal."""


def giant_step_centric_order(program) -> list[int]:
    """Node ids of `program` in the GSC order (see the module doc)."""
    program = as_he(program)
    nodes = {n.id: n for n in program.nodes}
    position = {n.id: i for i, n in enumerate(program.nodes)}
    users: dict[int, list[int]] = {n.id: [] for n in program.nodes}
    for n in program.nodes:
        for a in set(n.args):
            users[a].append(n.id)
    babies = {vid for vid, n in nodes.items()
              if n.op in BABY_STEP_ROTATIONS and any(nodes[u].op in PLAIN_PRODUCTS for u in users[vid])}
    rank: dict[int, int] = {}
    for n in program.nodes:  # program order is topological: every argument is ranked first
        if n.id in babies:
            rank[n.id] = position[n.id]
        elif n.op in PLAIN_PRODUCTS and n.args and n.args[0] in babies:
            rank[n.id] = rank[n.args[0]]
        else:
            rank[n.id] = min([position[n.id], *(rank[a] for a in n.args if nodes[a].op is not HeOp.OUTPUT)])
    waiting = {n.id: len(set(n.args)) for n in program.nodes}
    outputs = [n.id for n in program.nodes if n.op is HeOp.OUTPUT]
    ready = [(rank[vid], position[vid], vid) for vid, w in waiting.items() if w == 0 and nodes[vid].op is not HeOp.OUTPUT]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, _, vid = heapq.heappop(ready)
        order.append(vid)
        for u in users[vid]:
            waiting[u] -= 1
            if waiting[u] == 0 and nodes[u].op is not HeOp.OUTPUT:
                heapq.heappush(ready, (rank[u], position[u], u))
    return order + outputs


def order_giant_step_centric(program) -> HeProgram:
    """`program` with its nodes in the giant-step-centric order (see the module doc)."""
    program = as_he(program)
    order = giant_step_centric_order(program)
    index = {n.id: n for n in program.nodes}
    reordered = HeProgram(program.name, program.params, tuple(index[i] for i in order), program.options, program.loc)
    return rebuild(reordered, copy_node)
