"""Key-switching method choice per key switch (F1 §4.2, "algorithmic choice").

Two implementations of key switching exist (`fhec.schemes.keyswitch`): BV digits (F1
Listing 1: hints of L² limb pairs, no special primes, error ∝ q_i) and hybrid (hints of
d·(L+α) pairs, error divided by P). `choose_methods` picks one per key-switching node:

* methods whose noise would break the value are ruled out: a CKKS result needs at
  least half of its scale's bits of precision, a BGV result at least 8 bits of budget
  (both from `fhec.schemes.noise`, evaluated on the node's inferred type);
* among the rest, the cheaper one wins, by a data-movement-aware cost:
  limb instructions plus the hint limbs it loads (each weighted by `hint_weight`,
  default 4: on F1 a hint limb costs about as much off-chip bandwidth as four RVec ops).

Preserves: program semantics (it only annotates); the choice is recorded in the
returned map, which both the eager evaluator and the lowering read.
"""

from __future__ import annotations

import math

from fhec.ir.he import HeOp, HeProgram
from fhec.passes.counts import bv_keyswitch_counts, hybrid_keyswitch_counts
from fhec.schemes import noise as nz

KEY_SWITCH_OPS = (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS)


def keyswitch_cost(params, level: int, method: str, hint_weight: float = 4.0) -> float:
    """Limb instructions plus weighted hint limbs of one key switch at `level`."""
    L = params.limbs_at(level)
    if method == "bv":
        ops, hints = sum(bv_keyswitch_counts(L).values()), 2 * L * L
    else:
        a = params.special_primes
        ops = sum(hybrid_keyswitch_counts(L, a, params.scheme == "bgv").values())
        hints = 2 * (-(-L // a)) * (L + a)
    return ops + hint_weight * hints


def method_is_precise_enough(params, node_type, method: str) -> bool:
    """Whether a key switch by `method` leaves a usable value of the given input type."""
    level = node_type.level
    n = nz.add_noise(node_type.noise, nz.keyswitch_noise(params, level, method))
    if params.scheme == "ckks":
        return math.log2(node_type.scale) - n - 1 >= params.scale_bits / 2
    logq = sum(math.log2(q) for q in params.moduli_at(level))
    return logq - 1 - n - 3 >= 8


def choose_methods(program: HeProgram, policy: str = "auto", hint_weight: float = 4.0) -> dict[int, str]:
    """Node id -> "bv" | "hybrid" for every key-switching node.

    `policy`: "bv" or "hybrid" forces one method; "auto" applies the rule in the module doc.
    """
    out: dict[int, str] = {}
    params = program.params
    for node in program.nodes:
        if node.op not in KEY_SWITCH_OPS:
            continue
        if policy in ("bv", "hybrid"):
            out[node.id] = policy
            continue
        t = program.node(node.args[0]).type
        ok = [m for m in ("bv", "hybrid") if method_is_precise_enough(params, t, m)] or ["hybrid"]
        out[node.id] = min(ok, key=lambda m: keyswitch_cost(params, t.level, m, hint_weight))
    return out
