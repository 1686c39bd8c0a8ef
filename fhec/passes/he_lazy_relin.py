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

The rewrite is bottom-up, so a chain of additions (``acc = acc + t``) collapses into one
3-part sum with one relinearization and one rescale at its end. Programs in
``rescale="manual"`` mode are left as written.

Preserves: every output's message and type (level, scale, parts); the ciphertexts
differ in their noise bits (one key switch and one rounding instead of k), which the
eager evaluator and the compiled program share, since both run the rewritten program.
"""

from __future__ import annotations

from dataclasses import dataclass

from fhec.ir.he import HeNode, HeOp, HeProgram
from fhec.ir.he_build import HeBuilder
from fhec.passes.he_cleanup import dce
from fhec.passes.he_rewrite import as_he, copy_node, rebuild
from fhec.schemes import rules

LEVEL_CHANGES = (HeOp.RESCALE, HeOp.MOD_SWITCH)


@dataclass(frozen=True)
class _Lazy:
    """A value whose new form is ``after(relinearize(core))``: `core` is a 3-part value
    in the new program, `after` the level change applied after relinearizing (or None)."""

    core: int
    after: HeOp | None
    relin_attrs: tuple
    loc: str | None


def lazy_relinearize(program) -> HeProgram:
    """Merge sums of relinearized products into one relinearization (see module doc)."""
    program = as_he(program)
    if program.options.rescale != "auto":
        return program
    users = program.users()
    lazy: dict[int, _Lazy] = {}  # old node id -> its lazy form

    def single_use(vid: int) -> bool:
        return len(users[vid]) == 1

    def compatible(b: HeBuilder, x: _Lazy, y: _Lazy) -> bool:
        tx, ty = b.type_of(x.core), b.type_of(y.core)
        if x.after is not y.after or tx.level != ty.level:
            return False
        if program.params.scheme == "ckks":
            return rules.scales_match(program.params, tx.scale, ty.scale)
        return tx.scale == ty.scale

    def finish(b: HeBuilder, form: _Lazy) -> int:
        v = b.emit(HeOp.RELINEARIZE, (form.core,), form.relin_attrs, form.loc)
        return b.emit(form.after, (v,), (), form.loc) if form.after is not None else v

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        new = copy_node(b, node, args)
        # Record the lazy form of `after(relinearize(t))` with single-use intermediates.
        if node.op in LEVEL_CHANGES and node.args:
            inner = program.node(node.args[0])
            if inner.op is HeOp.RELINEARIZE and single_use(inner.id):
                core = program.node(inner.args[0])
                if core.type.parts == 3:
                    lazy[node.id] = _Lazy(new_ids[core.id], node.op, inner.attrs, inner.loc)
        elif node.op is HeOp.ADD:
            a, c = node.args
            fa, fc = lazy.get(a), lazy.get(c)
            if fa and fc and a != c and single_use(a) and single_use(c) and compatible(b, fa, fc):
                core = b.emit(HeOp.ADD, (fa.core, fc.core), (), node.loc)
                form = _Lazy(core, fa.after, fa.relin_attrs, node.loc)
                lazy[node.id] = form
                return finish(b, form)
        return new

    new_ids: dict[int, int] = {}

    def tracking(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        new_ids[node.id] = rewrite(b, node, args)
        return new_ids[node.id]

    return dce(rebuild(program, tracking))
