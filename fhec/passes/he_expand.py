"""Expansion of the high-level HE ops into primitives.

`expand(program)` replaces every SUM_SLOTS, LINEAR_TRANSFORM and POLYNOMIAL node by
its recipe (`fhec.ir.he_recipes`: rotate-and-add, the diagonal method,
Paterson–Stockmeyer for polynomials). Preserves: the program's semantics (`fhec.reference` gives the same outputs),
every value's type (levels, scales, noise, since the high-level node was typed by the
same recipe), inputs, outputs and their names. After it, each node is one call of the
eager evaluator.
"""

from __future__ import annotations

from fhec.ir.he import HIGH_LEVEL_OPS, HeNode, HeProgram
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_recipes import RECIPES
from fhec.passes.he_rewrite import as_he, copy_node, rebuild


def _expand_node(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
    if node.op in HIGH_LEVEL_OPS:
        return RECIPES[node.op](b, args[0], node.attr_dict, node.loc)
    return copy_node(b, node, args)


def expand(program) -> HeProgram:
    """The program with primitives only (returned as is when it has no high-level op)."""
    program = as_he(program)
    if program.is_expanded:
        return program
    return rebuild(program, _expand_node)
