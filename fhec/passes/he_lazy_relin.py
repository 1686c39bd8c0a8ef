"""Lazy relinearization: sums of products are added in their 3-part form and
relinearized (and rescaled) once.

Under ``rescale="auto"`` every product is relinearized and rescaled right away, so
``acc += x·y_i`` over k products costs k key switches and k rescales. Adding the
3-part products first and switching once is what HEIR's and EVA's optimizers do, and it
is always cheaper here: the cost model is one key switch and one rescale saved per
merged product (a key switch is ~(d + 2)·L NTT-unit passes; an add of the third
polynomial is L additions), with two conditions that keep the work from growing:

* each merged summand is ``[rescale|mod_switch](relinearize(t))`` whose relinearized and
  rescaled values are used by this addition only (otherwise both forms would have to be
  computed);
* both 3-part cores have the same level and scale (factor), so the addition needs no
  alignment, and both had the same level change after relinearization.

A first walk plans the merges on the program as written; one rebuild then emits each
merged sum once, with one relinearization (and level change) where the sum is used.
So a chain of additions (``acc = acc + t``) becomes one 3-part sum with one
relinearization and one rescale at its end. Programs in ``rescale="manual"`` mode are
left as written.

Preserves: every output's message and type (level, scale, parts); the ciphertexts
differ in their noise bits (one key switch and one rounding instead of k), which the
eager evaluator and the compiled program share, since both run the rewritten program.
"""

from __future__ import annotations

from dataclasses import dataclass

from fhec.ir.he import HeNode, HeOp, HeProgram
from fhec.ir.he_build import HeBuilder
from fhec.passes.he_rewrite import as_he, copy_node, rebuild
from fhec.schemes import rules

LEVEL_CHANGES = (HeOp.RESCALE, HeOp.MOD_SWITCH)


@dataclass(frozen=True)
class _Form:
    """A value computable as ``after(relinearize(core))`` with a 3-part core."""

    after: HeOp
    level: int
    scale: float | int
    relin: HeNode  # the relinearization whose attributes the merged one reuses


def _plan(program: HeProgram, users: dict[int, list[int]]) -> tuple[dict[int, _Form], set[int], set[int]]:
    """(lazy forms by node id, merging ADD ids, absorbed leaf node ids) of `program`."""
    params = program.params
    forms: dict[int, _Form] = {}
    merging: set[int] = set()
    absorbed: set[int] = set()

    def same_scale(a, b) -> bool:
        return rules.scales_match(params, a, b) if params.scheme == "ckks" else a == b

    for node in program.nodes:
        if node.op in LEVEL_CHANGES:
            inner = program.node(node.args[0])
            if inner.op is HeOp.RELINEARIZE and len(users[inner.id]) == 1:
                core = program.node(inner.args[0]).type
                if core.parts == 3:
                    forms[node.id] = _Form(node.op, core.level, core.scale, inner)
        elif node.op is HeOp.ADD:
            a, c = node.args
            fa, fc = forms.get(a), forms.get(c)
            if (fa and fc and a != c and len(users[a]) == 1 and len(users[c]) == 1 and fa.after is fc.after
                    and fa.level == fc.level and same_scale(fa.scale, fc.scale)):
                merging.add(node.id)
                forms[node.id] = _Form(fa.after, fa.level, fa.scale, fa.relin)
                for operand in (a, c):
                    if operand not in merging:  # a leaf: its relinearize and level change go
                        absorbed.update((operand, program.node(operand).args[0]))
    return forms, merging, absorbed


def lazy_relinearize(program) -> HeProgram:
    """Merge sums of relinearized products into one relinearization (see module doc)."""
    program = as_he(program)
    if program.options.rescale != "auto":
        return program
    users = program.users()
    forms, merging, absorbed = _plan(program, users)
    if not merging:
        return program
    core: dict[int, int] = {}  # old id of a lazy value -> new id of its 3-part core

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        if node.id in absorbed:
            # relinearize(t) and after(...) of a merged summand emit nothing: they stand
            # for t's new id, which only the merging addition reads
            core[node.id] = args[0] if node.op is HeOp.RELINEARIZE else core[node.args[0]]
            return core[node.id]
        if node.id not in merging:
            return copy_node(b, node, args)
        a, c = node.args
        core[node.id] = b.emit(HeOp.ADD, (core[a], core[c]), node.attrs, node.loc)
        if len(users[node.id]) == 1 and users[node.id][0] in merging:
            return core[node.id]  # the next addition absorbs this sum too
        form = forms[node.id]
        relin = b.emit(HeOp.RELINEARIZE, (core[node.id],), form.relin.attrs, form.relin.loc)
        return b.emit(form.after, (relin,), (), node.loc)

    return rebuild(program, rewrite)
