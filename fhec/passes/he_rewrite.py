"""The one way HE passes build a new program: replay nodes into a fresh builder.

`rebuild(program, rewrite)` walks the nodes in order; `rewrite(builder, node, args)`
emits the node's replacement (its arguments already mapped to new ids) and returns the
id that now stands for the node's value. Every emitted node is re-typed, so a pass
cannot produce stale types; a copied node keeps its type when its arguments kept theirs
(the type is a pure function of them), which makes a pass that changes few nodes cheap
on a large program. The result is verified when verification is on.
"""

from __future__ import annotations

from typing import Callable

from fhec.errors import ProgramError
from fhec.ir.he import HeNode, HeProgram
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_verify import verify_by_default, verify_he

Rewrite = Callable[[HeBuilder, HeNode, tuple[int, ...]], int]


def as_he(program) -> HeProgram:
    """An `HeProgram` from a `fhec.Program` (its ``.ir``) or an `HeProgram`."""
    ir = getattr(program, "ir", program)  # a fhec.Program (the passes layer does not import the DSL)
    if isinstance(ir, HeProgram):
        return ir
    text = repr(program)
    raise ProgramError(
        f"expected an fhec.Program (or a function decorated with @fhec.program), got {type(program).__name__} "
        f"{text if len(text) <= 60 else text[:57] + '...'}; build one with fhec.Program(name, params) or load it "
        f"with fhec.Program.from_json."
    )


def copy_node(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
    """The identity rewrite: the same op and attributes on the mapped arguments (re-typed
    only where an argument's type changed, `HeBuilder.copy`)."""
    return b.copy(node, args)


def rebuild(program: HeProgram, rewrite: Rewrite, keep: Callable[[HeNode], bool] | None = None) -> HeProgram:
    """Replay `program` through `rewrite` (nodes for which `keep` is false are dropped;
    nothing kept may use them; None keeps every node). When verification is on
    (`verify_by_default`: under pytest or with ``FHEC_VERIFY=1``), raises `InternalError`
    if the result does not verify."""
    b = HeBuilder(program.params, program.options, program.name, program.loc, source=program)
    new: dict[int, int] = {}
    for n in program.nodes:
        if keep is None or keep(n):
            new[n.id] = rewrite(b, n, tuple([new[a] for a in n.args]))
    out = b.program()
    return verify_he(out) if verify_by_default() else out
