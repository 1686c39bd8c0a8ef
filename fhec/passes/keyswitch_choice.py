"""Key-switching method choice per key switch (F1 §4.2, "algorithmic choice").

Two implementations of key switching exist (`fhec.schemes.keyswitch`): BV digits (F1
Listing 1: hints of L² limb pairs, no special primes, error ∝ q_i) and hybrid (hints of
d·(L+α) pairs, error divided by P). `choose_methods` picks one per key-switching node:

* BV is only considered where its key-switching error is no larger than the error the
  value already carries (at most one bit of growth, from `fhec.schemes.noise` on the
  node's inferred type). That is the case for relinearization (the product's error is
  already large) and rarely for rotations, whose BV error (∝ q_i, no division by P)
  would otherwise propagate through every later multiply;
* among the rest, the cheaper one wins, by a data-movement-aware cost:
  limb instructions plus the hint limbs it loads (each weighted by `hint_weight`,
  default 4: on F1 a hint limb costs about as much off-chip bandwidth as four RVec ops).

Preserves: program semantics (it only annotates). `annotate_methods` records the choice
as each node's ``keyswitch`` attribute, which the type rules (noise), the eager
evaluator and the key-switch expansion read, and raises a recipe's ``noise`` hint by
what the chosen methods add upstream of it.
"""

from __future__ import annotations

from fhec.ir.he import HeOp, HeProgram
from fhec.ir.he_build import infer_type
from fhec.passes.he_rewrite import copy_node, rebuild
from fhec.analysis.counts import bv_keyswitch_counts, hybrid_keyswitch_counts
from fhec.schemes import noise as nz
from fhec.schemes.precision import check_keyswitch

KEY_SWITCH_OPS = (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS, HeOp.ROTATE_EXT, HeOp.RELINEARIZE_EXT,
                  HeOp.SWITCH_SECRET)
FIXED_METHODS = {HeOp.ROTATE_EXT: "hybrid", HeOp.RELINEARIZE_EXT: "hybrid", HeOp.SWITCH_SECRET: "hybrid"}
"""Key switches whose algorithm fixes the method: a double-hoisted rotation and a
relinearization merged with its rescale stay over Q·P; encapsulation's switches are
hybrid (`fhec.schemes.keys.SECRET_SWITCHES`)."""


def keyswitch_cost(params, level: int, method: str, hint_weight: float = 4.0) -> float:
    """Limb instructions plus weighted hint limbs of one key switch at `level`."""
    L = params.limbs_at(level)
    if method == "bv":
        ops, hints = sum(bv_keyswitch_counts(L).values()), 2 * L * L
    else:
        a = params.alpha_at(level)
        ops = sum(hybrid_keyswitch_counts(L, a, params.scheme == "bgv").values())
        hints = 2 * (-(-L // a)) * (L + a)
    return ops + hint_weight * hints


def method_is_noise_neutral(params, node_type, method: str) -> bool:
    """Whether a key switch by `method` grows the value's error by at most one bit."""
    return nz.keyswitch_noise(params, node_type.level, method) <= node_type.noise + 1


def choose_methods(program: HeProgram, policy: str = "auto", hint_weight: float = 4.0,
                   keep_marked: bool = False) -> dict[int, str]:
    """Node id -> "bv" | "hybrid" for every key-switching node.

    `policy`: "bv" or "hybrid" forces one method; "auto" applies the rule in the module doc.
    `keep_marked`: a node that already names its method (a `BootstrapConfig(keyswitch=...)`
    marks the bootstrap's own) keeps it, as the eager evaluator does; the policy chooses
    for the rest. Without it (a policy the compile was given) the policy chooses for all.
    """
    out: dict[int, str] = {}
    params = program.params
    for node in program.nodes:
        if node.op not in KEY_SWITCH_OPS:
            continue
        if node.op in FIXED_METHODS:
            out[node.id] = FIXED_METHODS[node.op]
            continue
        if keep_marked and node.attr("keyswitch", None) is not None:
            out[node.id] = node.attr("keyswitch")
            continue
        if policy in ("bv", "hybrid"):
            out[node.id] = policy
            continue
        t = program.node(node.args[0]).type
        ok = ["hybrid"] + (["bv"] if method_is_noise_neutral(params, t, "bv") else [])
        out[node.id] = min(ok, key=lambda m: keyswitch_cost(params, t.level, m, hint_weight))
    return out


def annotate_methods(program: HeProgram, policy: str = "auto", hint_weight: float = 4.0,
                     keep_marked: bool = False) -> HeProgram:
    """`choose_methods`, recorded in the IR: every key-switching node gets a ``keyswitch``
    attribute naming its method (which the type rules, the eager evaluator and the
    key-switch expansion read). Node ids are unchanged."""
    chosen = choose_methods(program, policy, hint_weight, keep_marked)

    def rewrite(b, node, args):
        if node.id not in chosen:
            if node.attr("noise", None) is not None:
                return _rehint(b, node, args)
            return copy_node(b, node, args)
        attrs = tuple((k, v) for k, v in node.attrs if k != "keyswitch") + (("keyswitch", chosen[node.id]),)
        return b.emit(node.op, args, attrs, node.loc)

    return rebuild(program, rewrite)


def _rehint(b, node, args) -> int:
    """Copy a node whose ``noise`` attribute states a recipe's error estimate (a
    polynomial's, a linear transform's sums): the recipe computed it for the key-switching
    methods in force when it was traced, so where the methods chosen here make its
    operands noisier (BV relinearizations inside a polynomial), the estimate grows by as
    many bits as the generic rules' estimate of the node does. Without it the hint kept
    the hybrid error, and a compile with keyswitch="bv" promised bits its output lacks."""
    old_types = tuple(b.source.node(a).type for a in node.args)
    new_types = tuple(b.type_of(a) for a in args)
    if old_types == new_types:
        return copy_node(b, node, args)
    bare = {k: v for k, v in node.attrs if k != "noise"}
    grew = (infer_type(b.params, node.op, bare, new_types, node.loc).noise
            - infer_type(b.params, node.op, bare, old_types, node.loc).noise)
    if not grew > 0:
        return copy_node(b, node, args)
    attrs = tuple((k, v) for k, v in node.attrs if k != "noise") + (("noise", float(node.attr("noise") + grew)),)
    return b.emit(node.op, args, attrs, node.loc)


def annotated_methods(program: HeProgram) -> dict[int, str]:
    """Node id -> ``keyswitch`` attribute of every annotated key-switching node."""
    return {n.id: n.attr("keyswitch") for n in program.nodes if n.op in KEY_SWITCH_OPS and n.attr("keyswitch", None)}


def check_methods(program: HeProgram, methods: dict[int, str], strict: bool = True) -> None:
    """Check explicitly requested methods (a forced policy): `PrecisionError` at the
    node's DSL line when a key switch leaves less than 1 bit of CKKS precision (a
    warning when not `strict`: compiling for a cost study), `PrecisionWarning` below the
    parameters' ``min_precision_bits`` (`fhec.schemes.precision.check_keyswitch`)."""
    if program.params.scheme != "ckks":
        return
    what = {HeOp.RELINEARIZE: "relinearization", HeOp.CONJUGATE: "conjugation"}
    for node in program.nodes:
        if node.id not in methods:
            continue
        t = program.node(node.args[0]).type
        label = what.get(node.op) or f"rotation by {node.attr('step', '?')}"
        check_keyswitch(program.params, t.level, t.scale, t.noise, methods[node.id], label, node.loc, strict=strict)


def check_run_methods(program: HeProgram, policy: str) -> None:
    """Before executing a compiled program (annotated by `annotate_methods` under
    `policy`): `PrecisionError` when an explicitly requested key-switching method leaves
    a CKKS value without precision. Compiling only warned (the builder's check when the
    methods were annotated); the "auto" policy is never flagged."""
    if policy != "auto":
        check_methods(program, annotated_methods(program), strict=True)
