"""Key-switch expansion: every key switch becomes its pieces (ARCHITECTURE.md, "Key
switching is not atomic after expansion").

    rotate/conjugate/swap_rows x   →   a = automorphism x {galois}
                                       d = mod_up a {part: 1, method}
                                       u = key_mult d {source: galois, step, method}
                                       u = mod_down u               (hybrid only)
                                       r = ks_add a, u              (a0 + u0, u1)

    relinearize x (3 parts)        →   d = mod_up x {part: 2, method}
                                       u = key_mult d {source: "relin", method}
                                       u = mod_down u               (hybrid only)
                                       r = ks_add x, u              (x0 + u0, x1 + u1)

With the pieces explicit, later passes can share one mod_up among several rotations of
the same ciphertext (hoisting), sum key_mult results before one mod_down, and the
lowering sees each hint as data with an identity.

Preserves: the value of every node, residue for residue: the pieces are exactly
`fhec.schemes.keyswitch.decompose`, `key_mult` and `mod_down`, which
`Evaluator.rotate`/`relinearize` compose; with the same method the expanded program
gives bit-identical ciphertexts. Types are re-inferred; the final `ks_add` has the type
of the node it replaces.
"""

from __future__ import annotations

from typing import Mapping

from fhec.ir.he import HeNode, HeOp, HeProgram, attrs_of
from fhec.ir.he_build import HeBuilder
from fhec.passes.he_rewrite import as_he, copy_node, rebuild
from fhec.passes.lower import key_switch_source
from fhec.schemes.keys import RELIN

KEY_SWITCHING = (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS)


def expand_key_switches(program, methods: Mapping[int, str] | str) -> HeProgram:
    """Rewrite every key-switching node into automorphism / mod_up / key_mult / mod_down / ks_add.

    `methods`: one method ("bv" or "hybrid") for all, or node id -> method (see
    `fhec.passes.keyswitch_choice.choose_methods`). Rotations by a multiple of the row
    length (no key switch) are kept as they are.
    """
    program = as_he(program)
    params = program.params

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        if node.op not in KEY_SWITCHING:
            return copy_node(b, node, args)
        source = key_switch_source(params, node)
        if source is None:
            return copy_node(b, node, args)
        method = methods if isinstance(methods, str) else methods[node.id]
        (x,) = args
        if source == RELIN:
            target, part, step = x, 2, None
            if b.type_of(x).parts == 2:  # already relinearized: nothing to switch
                return x
        else:
            step = int(node.attr("step")) if node.op is HeOp.ROTATE else None
            target = b.emit(HeOp.AUTOMORPHISM, (x,), attrs_of(galois=source, step=step), node.loc)
            part = 1
        d = b.emit(HeOp.MOD_UP, (target,), attrs_of(part=part, method=method), node.loc)
        src = "relin" if source == RELIN else source
        u = b.emit(HeOp.KEY_MULT, (d,), attrs_of(source=src, step=step, method=method), node.loc)
        if method == "hybrid":
            u = b.emit(HeOp.MOD_DOWN, (u,), (), node.loc)
        return b.emit(HeOp.KS_ADD, (target, u), (), node.loc)

    return rebuild(program, rewrite)


def methods_of(program: HeProgram) -> dict[int, str]:
    """Node id -> method of every key_mult of an expanded program."""
    return {n.id: n.attr("method") for n in program.nodes if n.op is HeOp.KEY_MULT}
