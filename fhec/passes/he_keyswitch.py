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

Single hoisting (Halevi–Shoup): when a ciphertext x is rotated (or conjugated) by
several key switches of one method, its c1 is decomposed once and each rotation
permutes the digits instead of decomposing σ_g(c1) again:

    d = mod_up x {part: 1, method}                              (once)
    per rotation:  e = digits_automorphism d {galois, step}
                   u = key_mult e; u = mod_down u (hybrid); r = ks_add (automorphism x), u

This saves a mod-up (INTTs, base conversions and NTTs) per rotation for an automorphism
of every digit limb. The rotation's own automorphism of x is then read for σ_g(c0) only
(ks_add takes u1 for c1), so it carries ``c0_only`` and the lowering permutes c0's limbs
alone: L AUT per hoisted rotation instead of 2L. It is exact: digits are lifted centered, and a centered lift
commutes with σ_g (σ_g permutes coefficients with signs, and the centered
representative of −a is minus that of a), so σ_g(decompose(c1)) = decompose(σ_g(c1))
residue for residue, and hoisted rotations are bit-identical to unhoisted ones.
A double-hoisted rotation (``rotate_ext``, `fhec.ir.he_recipes`) expands the same way but
ends in ``ks_add_ext``: (P·σ_g(c0) + u0, u1) over Q·P, with no mod_down; its baby steps
always share their mod_up. A relinearization merged with its rescale (``relinearize_ext``,
`fhec.passes.he_fuse_rescale`) ends in ``ks_add_ext`` too: (P·x0 + u0, P·x1 + u1).

``hoisting="auto"`` hoists where at least two key switches share a source and method;
``"single"`` hoists every rotation, ``"none"`` none.

With the pieces explicit, the lowering sees each hint as data with an identity.

Preserves: the value of every node, residue for residue: the pieces are exactly
`fhec.schemes.keyswitch.decompose`, `key_mult` and `mod_down`, which
`Evaluator.rotate`/`relinearize` compose; with the same method the expanded program
gives bit-identical ciphertexts. Types are re-inferred; the final `ks_add` has the type
of the node it replaces.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping

from fhec.ir.he import HeNode, HeOp, HeProgram, attrs_of
from fhec.ir.he_build import HeBuilder
from fhec.passes.he_rewrite import as_he, copy_node, rebuild
from fhec.passes.keyswitch_choice import FIXED_METHODS
from fhec.passes.lower import key_switch_source
from fhec.schemes.keys import RELIN

KEY_SWITCHING = (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS, HeOp.ROTATE_EXT, HeOp.RELINEARIZE_EXT,
                 HeOp.SWITCH_SECRET)
HOISTING = ("auto", "single", "none")
EXTENDED_SWITCHES = (HeOp.ROTATE_EXT, HeOp.RELINEARIZE_EXT)
"""Key switches without a mod-down: their result stays over Q·P (always hybrid)."""
KS_ADD_OF = {op: HeOp.KS_ADD for op in KEY_SWITCHING} | {op: HeOp.KS_ADD_EXT for op in EXTENDED_SWITCHES}
"""The piece a key switch ends with: a double-hoisted rotation keeps (P·c0 + u0, u1) over
Q·P, a relinearization merged with its rescale (P·c0 + u0, P·c1 + u1)."""


def expand_key_switches(program, methods: Mapping[int, str] | str, hoisting: str = "auto") -> HeProgram:
    """Rewrite every key-switching node into automorphism / mod_up / key_mult / mod_down /
    ks_add, hoisting the mod_up of rotations that share a source (see the module doc).

    `methods`: one method ("bv" or "hybrid") for all, or node id -> method (see
    `fhec.passes.keyswitch_choice.choose_methods`). `hoisting`: "auto", "single" or
    "none". Rotations by a multiple of the row length (no key switch) are kept as they are.
    """
    program = as_he(program)
    params = program.params

    def method_of(node: HeNode) -> str:
        if node.op in FIXED_METHODS:  # Q·P values and changes of secret: hybrid whatever else is chosen
            return FIXED_METHODS[node.op]
        return methods if isinstance(methods, str) else methods[node.id]

    def galois_switch(node: HeNode) -> bool:
        return node.op in KEY_SWITCHING and isinstance(key_switch_source(params, node), int)

    sharing = Counter((n.args[0], method_of(n)) for n in program.nodes if galois_switch(n))
    hoisted_digits: dict[tuple[int, str], int] = {}  # (new source id, method) -> shared mod_up

    def hoist(node: HeNode) -> bool:
        if node.op is HeOp.ROTATE_EXT:  # double hoisting: its baby steps share one mod-up
            return sharing[(node.args[0], method_of(node))] >= 2
        mode = node.attr("hoisting", None) or hoisting  # a rotation's own choice (linear_transform) wins
        return mode == "single" or (mode == "auto" and sharing[(node.args[0], method_of(node))] >= 2)

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        with b.defaults(stage=node.attr("stage", None)):  # the pieces keep a bootstrap stage tag (reports)
            return rewrite_one(b, node, args)

    def rewrite_one(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        if node.op not in KEY_SWITCHING:
            return copy_node(b, node, args)
        source = key_switch_source(params, node)
        if source is None:
            return copy_node(b, node, args)
        method = method_of(node)
        (x,) = args
        if isinstance(source, int) and hoist(node):
            step = int(node.attr("step")) if node.op in (HeOp.ROTATE, HeOp.ROTATE_EXT) else None
            if (x, method) not in hoisted_digits:
                hoisted_digits[(x, method)] = b.emit(HeOp.MOD_UP, (x,), attrs_of(part=1, method=method), node.loc)
            d = b.emit(HeOp.DIGITS_AUTOMORPHISM, (hoisted_digits[(x, method)],), attrs_of(galois=source, step=step), node.loc)
            u = b.emit(HeOp.KEY_MULT, (d,), attrs_of(source=source, step=step, method=method), node.loc)
            if method == "hybrid" and node.op not in EXTENDED_SWITCHES:
                u = b.emit(HeOp.MOD_DOWN, (u,), (), node.loc)
            # ks_add reads σ_g(c0) only: the digits stand for σ_g(c1), so its automorphism is not emitted
            only_c0 = {"c0_only": True} if b.type_of(x).parts == 2 else {}
            target = b.emit(HeOp.AUTOMORPHISM, (x,), attrs_of(galois=source, step=step, **only_c0), node.loc)
            return b.emit(KS_ADD_OF[node.op], (target, u), (), node.loc)
        if source == RELIN:
            target, part, step = x, 2, None
            if b.type_of(x).parts == 2:  # already relinearized: nothing to switch
                return x
        elif not isinstance(source, int):  # a change of secret: no automorphism
            target, part, step = x, 1, None
        else:
            step = int(node.attr("step")) if node.op in (HeOp.ROTATE, HeOp.ROTATE_EXT) else None
            target = b.emit(HeOp.AUTOMORPHISM, (x,), attrs_of(galois=source, step=step), node.loc)
            part = 1
        d = b.emit(HeOp.MOD_UP, (target,), attrs_of(part=part, method=method), node.loc)
        u = b.emit(HeOp.KEY_MULT, (d,), attrs_of(source=source, step=step, method=method), node.loc)
        if method == "hybrid" and node.op not in EXTENDED_SWITCHES:
            u = b.emit(HeOp.MOD_DOWN, (u,), (), node.loc)
        return b.emit(KS_ADD_OF[node.op], (target, u), (), node.loc)

    return rebuild(program, rewrite)


def methods_of(program: HeProgram) -> dict[int, str]:
    """Node id -> method of every key_mult of an expanded program."""
    return {n.id: n.attr("method") for n in program.nodes if n.op is HeOp.KEY_MULT}
