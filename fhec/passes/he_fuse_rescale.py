"""Mod-down merged with the rescale that follows it (SimFHE's "mod-down merge").

A hybrid key switch ends by dividing its result by P (mod-down: an INTT of the α special
limbs, a base conversion onto Q and an NTT of every limb of Q); a CKKS rescale then divides
by q_l (an INTT of one limb, a base conversion and an NTT of every kept limb again). Where
a rescale's operand is a mod-down's result and nothing else reads it, both divisions are
one: divide the value over Q·P by P·q_l with one base conversion from the α + 1 dropped
primes (`fhec.ring.rns.divide_by_dropped`, `Evaluator.rescale_extended`). That saves the
rescale's NTTs of L − 1 limbs per part.

The operand of a rescale is rebuilt over Q·P when it is (each inner node read only by
the next one):

    relinearize x  (hybrid)        →  relinearize_ext x      (P·x0 + u0, P·x1 + u1)
    mod_down_ext a                 →  a
    add(e, f), e and f as these    →  add_ext(e', f')        (e = f too: 2·T_h·T_k)
    add(e, c) / sub(e, c), c over Q →  add_ext_q(e', c)      (e' ± P·c)

and the rescale becomes ``rescale_ext``. Examples: rescale(add(mod_down_ext a, c)), the
end of a double-hoisted linear transform with its j = 0 term over Q (`fhec.ir.he_recipes`);
rescale(sub(add(r, r), T_1)) with r a relinearized product, an odd Chebyshev value
(`fhec.ir.he_polynomial`). A relinearization is merged only when its node asks
for hybrid key switching explicitly (its ``keyswitch`` attribute): the merged form is
hybrid only, and where the method is left to `choose_keyswitch` BV may be the better
choice. ``mod_down_ext`` values are double hoisting's, hybrid already.

Preserves: every output's message, level and scale. The ciphertexts differ from the
unmerged program's in their rounding: x/(P·q_l) is rounded once, with the error of a base
conversion from α + 1 primes (variance (α + 1)/12 per coefficient against a rescale's
1/12; `fhec.schemes.noise.rescale_ext_noise`, which the type rules use), where the
unmerged program rounds x/P and then x/(P·q_l). The eager evaluator executes the merged
nodes, so compiled runs stay bit-identical to it.
"""

from __future__ import annotations

from fhec.ir.he import HeNode, HeOp, HeProgram, ValueKind, attrs_of
from fhec.ir.he_build import HeBuilder
from fhec.passes.he_rewrite import as_he, copy_node, rebuild


def _over_q(program: HeProgram, vid: int) -> bool:
    """Whether value `vid` is a relinearized ciphertext over Q (what ``add_ext_q`` lifts)."""
    t = program.node(vid).type
    return t.kind is ValueKind.CIPHER and t.parts == 2


_MAX_DEPTH = 64
"""Adds and subtracts under one rescale that are rebuilt over Q·P, at most (deeper sums
keep their mod-downs: the recursion stays far from Python's limit)."""


def _ext_form(program: HeProgram, users, vid: int, reader: int, absorbed: set[int], depth: int = 0):
    """How to compute value `vid` over Q·P for its only reader `reader` (every use of it is
    by `reader`), or None: a hybrid relinearization or a double-hoisted mod-down is a leaf,
    and an add / subtract of such a value and another (over Q·P too, or a ciphertext over Q
    added as P·c) stays over Q·P. Adds what it would absorb to `absorbed`."""
    if set(users[vid]) != {reader} or depth > _MAX_DEPTH:
        return None
    node = program.node(vid)
    if node.op is HeOp.RELINEARIZE and node.attr("keyswitch", None) == "hybrid":
        form = ("relinearize", node)
    elif node.op is HeOp.MOD_DOWN_EXT:
        form = ("mod_down", node)
    elif node.op in (HeOp.ADD, HeOp.SUB):
        a, b = node.args
        inner: set[int] = set()
        left = _ext_form(program, users, a, vid, inner, depth + 1)
        right = _ext_form(program, users, b, vid, inner, depth + 1) if b != a else left
        if left is not None and right is not None and node.op is HeOp.ADD:
            form = ("add_ext", node, left, right)
        elif left is not None and right is None and _over_q(program, b):
            form = ("add_q", node, left, b)
        elif right is not None and left is None and node.op is HeOp.ADD and _over_q(program, a):
            form = ("add_q", node, right, a)
        else:
            return None
        absorbed.update(inner)
    else:
        return None
    absorbed.add(vid)
    return form


def _merge_plan(program: HeProgram) -> tuple[dict[int, tuple], set[int]]:
    """rescale id -> the Q·P form of its operand (`_ext_form`), and the ids of the nodes
    the merges absorb."""
    params = program.params
    plan: dict[int, tuple] = {}
    absorbed: set[int] = set()
    if params.scheme != "ckks" or not params.special_moduli:
        return plan, absorbed
    users = program.users()
    for node in program.nodes:
        if node.op is HeOp.RESCALE:
            form = _ext_form(program, users, node.args[0], node.id, absorbed)
            if form is not None:
                plan[node.id] = form
    return plan, absorbed


def fuse_mod_down_rescale(program) -> HeProgram:
    """Merge each mod-down with the rescale that follows it (module doc). Preserves every
    output's message, level and scale; the rounding changes as the module doc says."""
    program = as_he(program)
    plan, absorbed = _merge_plan(program)
    if not plan:
        return program
    new: dict[int, int] = {}  # old id -> new id, of the nodes rebuilt as they are

    def emit_form(b: HeBuilder, form: tuple, done: dict[int, int]) -> int:
        node = form[1]
        if node.id in done:  # an operand used twice (x + x) is built once
            return done[node.id]
        if form[0] == "relinearize":
            out = b.emit(HeOp.RELINEARIZE_EXT, (new[node.args[0]],), node.attrs, node.loc)
        elif form[0] == "mod_down":
            out = new[node.args[0]]
        else:
            hint = {k: v for k, v in node.attrs if k in ("bound", "stage")}
            if form[0] == "add_ext":
                args = (emit_form(b, form[2], done), emit_form(b, form[3], done))
                out = b.emit(HeOp.ADD_EXT, args, attrs_of(**hint), node.loc)
            else:
                ext = emit_form(b, form[2], done)
                if node.op is HeOp.SUB:
                    hint["subtract"] = True
                out = b.emit(HeOp.ADD_EXT_Q, (ext, new[form[3]]), attrs_of(**hint), node.loc)
        done[node.id] = out
        return out

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        if node.id in absorbed:  # emits nothing: its one reader, a planned rescale, reads its operands instead
            return -1
        form = plan.get(node.id)
        if form is None:
            out = copy_node(b, node, args)
        else:
            out = b.emit(HeOp.RESCALE_EXT, (emit_form(b, form, {}),), node.attrs, node.loc)
        new[node.id] = out
        return out

    return rebuild(program, rewrite)
