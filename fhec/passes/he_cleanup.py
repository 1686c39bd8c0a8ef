"""Common-subexpression and dead-code elimination on the HE IR.

* `cse`: nodes with the same op, arguments and attributes compute the same ciphertext
  (every op is deterministic), so later copies are replaced by the first. Inputs and
  outputs are never merged (their names differ).
* `dce`: drops nodes no output depends on. Inputs stay, used or not: they are the
  program's interface (an unused one is reported by `check_complete`).

Both preserve outputs bit for bit under the evaluator and every remaining type.
"""

from __future__ import annotations

from fhec.ir.he import INPUT_OPS, HeNode, HeOp, HeProgram
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_verify import used_values
from fhec.passes.he_rewrite import as_he, copy_node, rebuild


def cse(program) -> HeProgram:
    """Merge duplicate computations (see module doc)."""
    program = as_he(program)
    seen: dict[tuple, int] = {}

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        if node.op in INPUT_OPS or node.op is HeOp.OUTPUT:
            return copy_node(b, node, args)
        key = (node.op, args, node.attrs)
        if key not in seen:
            seen[key] = copy_node(b, node, args)
        return seen[key]

    return rebuild(program, rewrite)


def dce(program) -> HeProgram:
    """Remove nodes no output depends on (see module doc)."""
    program = as_he(program)
    live = used_values(program)
    if all(n.id in live or n.op in INPUT_OPS for n in program.nodes):
        return program
    return rebuild(program, copy_node, keep=lambda n: n.id in live or n.op in INPUT_OPS)
