"""Limb-major baby steps: a double-hoisted baby step whose transform's sums do not fit runs limb by limb.

The lowering gives a double-hoisted baby step (`fhec.ir.he_recipes._bsgs_double`) its
priorities node by node: the automorphism of every hoisted digit, the key product over
every limb (digit by digit), P·σ(c0) + u0, then each of its n2 diagonal products (OF-Limb
generating the diagonal limb by limb) and the n2 additions into the giant-step sums over
Q·P. Every piece but the mod-up (hoisted, before the baby steps) reads and writes one limb
at a time, so in that order the whole key (2 components x digits x (L + alpha) limbs),
the rotated digits and the key product are live before the first product reads them. When
the n2 partial sums over Q·P fill the scratchpad (Osiris set III's CoeffsToSlots: 4 sums
of 2 x 40 limbs, 320 of 588 RVecs, beside 80 of hoisted digits and a 160-RVec key), that
working set spilled partial sums at every baby step.

This pass changes priorities only. For each baby step of such a transform it reorders the
instructions of the baby step's nodes (DIGITS_AUTOMORPHISM, KEY_MULT, the c0 AUTOMORPHISM,
KS_ADD_EXT, its MUL_CONST_EXT products and the ADD_EXT / ADD_EXT_Q that accumulate them) by
limb (modulus), keeping their order within a limb and the set of priority values the baby
step had: limb i of every piece, then limb i + 1. A baby step's working set becomes a few
limbs of each, and its key is read as it streams in.

Which transforms: every double-hoisted transform the giant-step-centric order left untiled
(`fhec.passes.he_gsc.is_tiled`; with tiles, the sums of a tile fit beside a node-major baby
step). Those whose sums fit gain as well: the key streams, and the room it took prefetches
the next keys (set III's SlotsToCoeffs at n2 <= 6, bound by its key loads: 0.436 ->
0.426 M cycles at 1 TB/s with per-stage prefetch reserves; at n2 = 7, which the GSC order
no longer tiles since its sums fit beside a limb-major baby step, 0.410 M).

The pipeline's `schedule_cycles` schedules the program with these priorities beside the
lowering's own (at the same prefetch reserves) and keeps it only when it is strictly
faster, as it does for `fhec.passes.limb_pairing`: measured on Osiris set III's bootstrap
(`benchmarks/bench_osiris.py`), double hoisting, it pays: 2.008 -> 1.927 ms at 1 TB/s
(n2 <= 6; CoeffsToSlots 1.04 M -> 0.96 M cycles, its 20 MB of spilled sums and 12.5 MB of
reloaded keys gone) and 1.700 -> 1.566 ms at 2 TB/s (n2 <= 4); and HELR-1024's fully
packed DH row 3.070 -> 2.965 ms (1 TB/s) and 2.743 -> 2.660 (2 TB/s). It does not for
HELR-1024's sparse bootstrap (512 slots): 1.989 -> 2.003
ms at 1 TB/s and 1.846 -> 1.876 at 2 TB/s, so that program kept the node-major order (those
numbers before the per-stage reserves and the untiled transforms, which took set III's DH
bootstrap to 1.899 ms and HELR-1024's sparse DH row to 1.952, docs/scheduling.md; all these
with both MDC units running either direction, docs/targets.md "Directions"). On
its own, without the GSC order's late giant-step mod-down (`fhec.passes.he_gsc`),
limb-major order was slower on set III (2.19 ms at 1 TB/s): the first giant step's key
switch then ran among the last baby step's limbs. Applied to every double-hoisted baby
step with one reserve for the whole program, it took 1.967 ms; with a reserve per
bootstrap stage (`fhec.pipeline`), 1.915 against 1.923 for the spilling transforms only. The
other way round on ResNet-20's DH bootstrap pair (set IV, `osiris`, n2 <= 4): CoeffsToSlots'
sums spill, SlotsToCoeffs' fit, and limb-major SlotsToCoeffs too costs 4.598 -> 4.798 ms, so
the pipeline tries both selections (`spilling_only`) as separate variants where they differ.

Single hoisting (`limb_major_single_baby_steps`): a single-hoisted baby step is the rotated
digits, the key product, its mod-down, σ(c0), KS_ADD, its MUL_CONST products and the ADDs
into the sums over Q. The mod-down reads every special prime's limb before it writes a limb
of Q, so the order is the special primes' limbs first, then Q's limb by limb. Its pieces
are not one run of priorities (the GSC order runs σ(c0) early; a baby step's key switch
starts among the previous one's products), and giving a baby step its own priority values
back limb-major put consumers before producers, which misleads the off-chip scheduler's
Belady choice (it reads priorities as the order of use): ResNet-20's SH bootstrap pair on
`osiris` went 4.747 -> 15.08 ms, 7.2 GB of intermediates spilled. So each baby step runs as
one block at the priority of its first digit automorphism (the whole program renumbered).
Which transforms: `_spilling` with the products over Q. On that pair CoeffsToSlots qualifies
and SlotsToCoeffs does not, and the pair takes 4.418 ms (3,142 MB moved, against 3,400);
limb-major SlotsToCoeffs too, 4.714 ms; SlotsToCoeffs alone, 5.033 ms.

Preserves: every instruction, operand and dependence (only ``prio`` changes; the
schedulers honour dependences whatever the priorities), so every residue of every output
is unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.ir.he import HeOp, HeProgram
from fhec.ir.limb import LimbProgram, word_bytes_for
from fhec.passes.he_gsc import is_tiled, sums_per_tile
from fhec.passes.he_order import hint_bytes

__all__ = ["limb_major_baby_steps", "limb_major_single_baby_steps"]

SUM_OPS = frozenset({HeOp.ADD_EXT, HeOp.ADD_EXT_Q})
"""Ops that accumulate a double-hoisted baby step's products."""


def _bytes(program: HeProgram, node) -> int:
    """On-chip bytes of a value over Q·P."""
    p, t = program.params, node.type
    return t.parts * (p.limbs_at(t.level) + len(p.special_moduli)) * p.N * word_bytes_for(p.word_bits)


def _steps(he: HeProgram, chain: tuple, product_op: HeOp, sum_ops: frozenset) -> dict[int, list[set[int]]]:
    """Hoisted mod-up -> the node ids of each of its baby steps: a digit automorphism, the
    nodes `chain` names in turn below it (ending at the key switch's last add), the c0
    automorphism that add reads, the `product_op` products of the rotated value and the
    `sum_ops` that accumulate them. A rotation no product reads is not a baby step."""
    users = he.users()
    op = {n.id: n.op for n in he.nodes}
    out: dict[int, list[set[int]]] = {}
    for n in he.nodes:
        if n.op is not HeOp.DIGITS_AUTOMORPHISM:
            continue
        step, frontier = {n.id}, [n.id]
        for want in chain:
            frontier = [u for f in frontier for u in users.get(f, ()) if op[u] is want]
            step.update(frontier)
        for e in frontier:
            step.update(a for a in he.node(e).args if op[a] is HeOp.AUTOMORPHISM)
            for m in users.get(e, ()):
                if op[m] is product_op:
                    step.add(m)
                    step.update(s for s in users.get(m, ()) if op[s] in sum_ops)
        if any(op[v] is product_op for v in step):
            out.setdefault(n.args[0], []).append(step)
    return out


def _baby_steps(he: HeProgram) -> dict[int, list[set[int]]]:
    """Hoisted mod-up -> the node ids of each of its double-hoisted baby steps (see the
    module doc): the rotation ends in KS_ADD_EXT over Q·P, its products are MUL_CONST_EXT."""
    return _steps(he, (HeOp.KEY_MULT, HeOp.KS_ADD_EXT), HeOp.MUL_CONST_EXT, SUM_OPS)


def _q_bytes(program: HeProgram, node) -> int:
    """On-chip bytes of a value over Q."""
    p, t = program.params, node.type
    return t.parts * p.limbs_at(t.level) * p.N * word_bytes_for(p.word_bits)


def _fit(he: HeProgram, steps: list[set[int]], capacity_bytes: int, product_op: HeOp, size) -> tuple[bool, bool]:
    """(whether a transform's n2 sums do not fit beside one baby step run node by node, by
    `fhec.passes.he_gsc.sums_per_tile`; whether the GSC order tiled it, `is_tiled`)."""
    products = [[v for v in s if he.node(v).op is product_op] for s in steps]
    n2 = max(len(p) for p in products)
    product = max(size(he, he.node(v)) for p in products for v in p)
    key_mult = next(v for v in steps[0] if he.node(v).op is HeOp.KEY_MULT)
    hint = hint_bytes(he, he.node(key_mult))
    double = product_op is HeOp.MUL_CONST_EXT
    return n2 > sums_per_tile(capacity_bytes, hint, product), is_tiled(n2, capacity_bytes, hint, product, double)


def _untiled(he: HeProgram, steps: list[set[int]], capacity_bytes: int, spilling_only: bool = False) -> bool:
    """Whether the GSC order left a double-hoisted transform untiled (and, with
    `spilling_only`, its sums do not fit beside a node-major baby step)."""
    spills, tiled = _fit(he, steps, capacity_bytes, HeOp.MUL_CONST_EXT, _bytes)
    return not tiled and (spills or not spilling_only)


def _spilling(he: HeProgram, steps: list[set[int]], capacity_bytes: int) -> bool:
    """Whether a single-hoisted transform's n2 sums over Q do not fit beside a baby step and
    the GSC order left it untiled."""
    spills, tiled = _fit(he, steps, capacity_bytes, HeOp.MUL_CONST, _q_bytes)
    return spills and not tiled


def _owners(he: HeProgram, steps_by_mod_up: dict, spills) -> tuple[np.ndarray, int]:
    """(HE node -> its baby step, -1 elsewhere; the last entry stands for he_node -1) over
    the transforms `spills` accepts, and how many baby steps they hold."""
    top = max((n.id for n in he.nodes), default=-1)
    owner = np.full(top + 2, -1, dtype=np.int64)
    count = 0
    for steps in steps_by_mod_up.values():
        if not spills(steps):
            continue
        for step in steps:
            owner[list(step)] = count
            count += 1
    return owner, count


def limb_major_baby_steps(limb: LimbProgram, he: HeProgram, capacity_bytes: int,
                          spilling_only: bool = False) -> LimbProgram:
    """`limb` with the instructions of every baby step of an untiled double-hoisted
    transform (with `spilling_only`, only of those whose sums do not fit beside a
    node-major baby step) in limb-major priority order (see the module doc); `limb` itself
    when there is none."""
    owner, count = _owners(he, _baby_steps(he), lambda steps: _untiled(he, steps, capacity_bytes, spilling_only))
    if count == 0:
        return limb
    prio = np.asarray(limb.prio, dtype=np.int64)
    own = owner[np.asarray(limb.he_node, dtype=np.int64)]
    idx = np.flatnonzero(own >= 0)
    mod = np.asarray(limb.mod, dtype=np.int64)[idx]
    limb_major = idx[np.lexsort((prio[idx], mod, own[idx]))]  # by baby step, then limb, then priority
    values = prio[idx[np.lexsort((prio[idx], own[idx]))]]  # each baby step's own values, ascending
    new = prio.copy()
    new[limb_major] = values
    return dataclasses.replace(limb, prio=new.astype(np.asarray(limb.prio).dtype))


def _single_baby_steps(he: HeProgram) -> dict[int, list[set[int]]]:
    """Hoisted mod-up -> the node ids of each of its single-hoisted baby steps: the digit
    automorphism, key product, mod-down, c0 automorphism and KS_ADD of a rotation that
    some MUL_CONST reads, its products and the ADDs that accumulate them."""
    return _steps(he, (HeOp.KEY_MULT, HeOp.MOD_DOWN, HeOp.KS_ADD), HeOp.MUL_CONST, frozenset({HeOp.ADD}))


def limb_major_single_baby_steps(limb: LimbProgram, he: HeProgram, capacity_bytes: int) -> LimbProgram:
    """`limb` with the instructions of every baby step of a spilling single-hoisted
    transform (the rule of `_spilling`, with its products over Q) as one block, limb-major,
    the special primes' limbs first (see the module doc); `limb` itself when there is none."""
    owner, count = _owners(he, _single_baby_steps(he), lambda steps: _spilling(he, steps, capacity_bytes))
    if count == 0:
        return limb
    return _as_blocks(limb, he, owner, count, special_first=True)


def _as_blocks(limb: LimbProgram, he: HeProgram, owner: np.ndarray, count: int, special_first: bool) -> LimbProgram:
    """`limb` renumbered: the instructions of each baby step (`owner`: HE node -> baby step)
    as one block at the priority of its first digit automorphism, by limb within it (the
    special primes' limbs first if `special_first`), their order within a limb kept."""
    prio = np.asarray(limb.prio, dtype=np.int64)
    he_node = np.asarray(limb.he_node, dtype=np.int64)
    own = owner[he_node]
    digits = np.isin(he_node, [n.id for n in he.nodes if n.op is HeOp.DIGITS_AUTOMORPHISM])
    anchor = np.full(count, np.iinfo(np.int64).max)
    np.minimum.at(anchor, own[digits & (own >= 0)], prio[digits & (own >= 0)])
    # Each baby step runs as one block where its digit automorphisms began: pieces the
    # order ran earlier (its c0 automorphism) move there, so no piece ranks before a producer.
    major = np.where(own >= 0, anchor[np.maximum(own, 0)], prio)
    mod = np.asarray(limb.mod, dtype=np.int64)
    special = mod >= he.params.max_limbs if special_first else np.zeros(len(mod), dtype=bool)
    rank = np.where(own < 0, -(1 << 40), np.where(special, mod - (1 << 20), mod))
    order = np.lexsort((prio, rank, np.maximum(own, -1), major))
    new = np.empty_like(prio)
    new[order] = np.arange(len(prio))
    return dataclasses.replace(limb, prio=new.astype(np.asarray(limb.prio).dtype))
