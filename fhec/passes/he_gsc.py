"""The giant-step-centric (GSC) order of BSGS linear transforms (Osiris §V, Fig. 8).

A BSGS matrix-vector product as `fhec.ir.he_recipes` writes it is giant-step major: for
each giant step g, the plaintext products diag_{g,j} ⊙ rot_j(x) over the baby steps j,
summed, then rotated by g. Each baby-step rotation (and so its rotation key) is first
needed in the first giant step and again in every later one. Osiris reorders it around
the baby steps: per baby-step key, all n2 diagonal products that use rot_j, accumulated
into the n2 giant-step partial sums kept on chip; "while our MDC units are generating the
current set of n2 matrix diagonals [by OF-Limb], we load the next baby-step rotation key".
So every baby-step key is loaded once, and the work between two key loads is n2 diagonal
generations and products, which is what hides the load.

`giant_step_centric_order` is a list scheduler over the HE program in which every node
has a rank and the ready node of lowest (rank, program position) goes first:

* a *baby-step rotation* is a rotation (ROTATE, ROTATE_EXT) that some plaintext product
  (MUL_CONST, MUL_CONST_EXT, MUL_PLAIN) reads; its rank is its program position;
* a plaintext product of a baby-step rotation takes that rotation's rank, so the n2
  products of rot_j all come before rot_{j+1} (whose position is later);
* every other node takes the smallest rank of what it reads, or its own position if
  that is smaller: it runs as soon as it is ready (an accumulation right after the
  product it adds, a giant-step rotation right after the sum it rotates).

The recipe's per-giant-step sums are chains in baby-step order, so the accumulation into
each of the n2 partial sums follows each baby step's products; the giant-step rotations
and the final sum come after the last baby step, as in Fig. 8.

One exception to "as soon as it is ready": with double hoisting, the division by P of a
finished partial sum over Q·P (MOD_DOWN_EXT, which starts the giant-step rotation) of an
untiled transform ranks just after the products of the baby step that finished the sum,
not with them. Ranked with them, the first sum's giant-step key switch (its mod-down, its
mod-up digits and its key) ran between the last baby step's first and second products,
while that baby (2 x (L + alpha) limbs) and the other n2 - 1 sums over Q·P were still
live. Measured on Osiris set III's double-hoisted bootstrap at 1 TB/s (n2 <= 6): 2.020
-> 2.008 ms alone, and what lets `fhec.passes.limb_order` (limb-major baby steps) pay
(1.93 ms with both). Single hoisting keeps the early rotation: its sums are over Q and
its baby steps end with their own mod-down, and ranked late the SH and NH bootstraps took
1.954 and 1.975 ms against 1.944 and 1.963.

Capacity (`capacity_bytes`, the target's scratchpad): the n2 partial sums stay on chip only
if they fit. Double hoisting keeps them over Q·P: ResNet-20's convolutions at 5 limbs and
alpha = 14 have up to 40 sums of 2 x 19 limbs, 2.6 times Osiris's 184 MiB, and spilling
them at every baby step moved 97 GB each way. So the products of one transform are
grouped by the partial sum they accumulate into (the chain of additions each feeds,
including the ADD_EXT_Q that joins a double-hoisted giant step's j = 0 term), and
the groups, in program order, are cut into *tiles* of as many sums as fit in the
scratchpad less the room one baby step needs (its hint, its mod-up digits, the baby and
its product), if a tile holds at least `MIN_TILE_SUMS` and, with double hoisting, the sums
do not fit beside a baby step run limb by limb either (`streamed_sums`: then the pipeline's
limb-major variant, `fhec.passes.limb_order`, runs them untiled without spilling; Osiris
set III's SlotsToCoeffs at n2 = 7, tiled 4 + 3 before, so every baby step ran twice: DH
bootstrap 1.899 ms uncapped at 1 TB/s, against 1.915 at n2 <= 6, with per-stage prefetch
reserves, measured before the MDC units had directions); the order runs the baby steps once per tile, tile after tile. Within a tile
it is the order above; a double-hoisted baby step needed in several tiles is computed
again in each (`rematerialize_tiled_baby_steps`, `RECOMPUTED_BABY_STEPS`): its key is
reloaded rather than its rotated value stored after the first tile and loaded back,
which moves twice the value's size (2 x (L + alpha) limbs, against a key's digits x
(L + alpha) per loaded half); other baby steps are reloaded (or kept) by the
data-movement scheduler. With one tile (the sums fit, or no capacity given) the order is exactly the
untiled one.

Sums in arrival order (`sum_in_arrival_order`): the recipe adds the giant steps' results
in giant-step order, starting (double hoisting) with the unrotated g = 0 sum, which the
last baby step finishes. Where a giant step reads only some baby steps (a ragged split:
ResNet-20's convolutions below their chosen n1), its sum finishes early in this order,
and its rotated result then waited for all the earlier giant steps: at level 2 those
waiting results over Q·P were what the scratchpad spilled. So after ordering, every chain
of additions is rebuilt to add its terms in the order they are computed (exact: additions
mod each prime associate), each addition right after its term.

Measured on ResNet-20's level-2 convolutions (set IV, `osiris`, double hoisting; splits
below those `fhec.analysis.bsgs.best_n1` chooses, which do not change): stage 3 at
n1 = 96 (39 sums, 2 tiles) 1.401 -> 1.208 ms (538 -> 150 MB of intermediates and reloaded
keys), n1 = 128 1.169 -> 1.117; stage 2 at n1 = 384 1.669 -> 0.536 ms (at its bandwidth
bound); stage 3's strided layer at n1 = 128 0.828 -> 0.689; stage 1 at n1 = 32 0.652 ->
0.246 (its bandwidth bound 0.241) and stage 2's strided layer at n1 = 32 0.986 -> 0.379,
both untiled, all from the arrival order. Recomputing tiled baby
steps is part of that: without it (arrival order alone) stage 3 at n1 = 96 takes 1.231
ms and the strided layer at n1 = 128 0.812; it costs stage 3 at n1 = 64 (55 sums, 2
tiles) 1.317 -> 1.369 ms, where its 30 baby steps' keys reloaded outweigh the spills.

Preserves: semantics exactly (a topological reordering, rotations recomputed per tile
and additions reassociated compute the same residues); every output's type; outputs keep
their relative order at the end. A program with no plaintext product of a rotation keeps
its order.
"""

from __future__ import annotations

import heapq
import math

from fhec.ir.he import HeOp, HeProgram, ValueKind
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_verify import verify_by_default, verify_he
from fhec.ir.limb import word_bytes_for
from fhec.passes.he_order import hint_bytes
from fhec.passes.he_rewrite import as_he, copy_node, rebuild

__all__ = ["BABY_STEP_ROTATIONS", "PLAIN_PRODUCTS", "SUM_OPS", "giant_step_centric_order", "order_giant_step_centric",
           "rematerialize_tiled_baby_steps", "sum_in_arrival_order", "sums_per_tile", "streamed_sums", "is_tiled"]

BABY_STEP_ROTATIONS = frozenset({HeOp.ROTATE, HeOp.ROTATE_EXT})
"""Ops a baby step of a BSGS transform is (single/no hoisting: ROTATE; double: ROTATE_EXT)."""

PLAIN_PRODUCTS = frozenset({HeOp.MUL_CONST, HeOp.MUL_CONST_EXT, HeOp.MUL_PLAIN})
"""Ops that multiply a baby step by a plaintext diagonal."""


MIN_TILE_SUMS = 4
"""Fewest partial sums a tile holds; a transform whose tiles would hold fewer is not tiled:
each tile re-runs every baby step (reloading it), which for tiles of one to three sums
cost more than spilling part of the sums. Measured on Osiris set III bootstraps (level-25
DFTs whose sums and hints leave room for 1-2 sums), before the Hadamard units' rate was
doubled: tiled, SH 2.22 ms and DH 3.11 ms; untiled, 2.07 and 2.36. ResNet-20's double-hoisted convolutions hold 11 per tile.)"""

RECOMPUTED_BABY_STEPS = frozenset({HeOp.ROTATE_EXT})
"""Baby steps a tiled transform recomputes in each tile that reads them
(`rematerialize_tiled_baby_steps`): double-hoisted ones, whose recomputation is an
automorphism and a key product (no NTT: the mod-up is hoisted, the mod-down follows the
sums) and reloads one key. A single-hoisted baby step ends with its own mod-down, whose
NTTs a recomputation repeats: on ResNet-20's stage-3 convolution at n1 = 32 (single
hoisting, over 100 sums in tiles) recomputing took 0.921 -> 0.951 ms, its compute bound
0.60 -> 0.62 M cycles and its reloaded keys 31 -> 58 MB, against a value of 2 x L limbs
stored and loaded back."""

SUM_OPS = frozenset({HeOp.ADD, HeOp.ADD_EXT})
"""Ops that accumulate a giant step's products into its partial sum."""

CHAIN_OPS = SUM_OPS | {HeOp.ADD_EXT_Q}
"""Ops a partial sum's chain runs through when the products are grouped by sum (`_tiles`):
the accumulations, and with double hoisting the ADD_EXT_Q that joins a giant step's j = 0
term (over Q) to its first product. Stopping there counted that product as a sum of its
own: n2 = 4 giant steps with three j = 0 terms made 7 groups, which tiled ResNet-20's
double-hoisted SlotsToCoeffs (6 sums fit) into 2 tiles and spilled its rotated baby steps."""


def _bytes(program: HeProgram, node) -> int:
    """On-chip bytes of a ciphertext value, over Q·P for an extended one."""
    t, p = node.type, program.params
    if t.kind not in (ValueKind.CIPHER, ValueKind.EXTENDED) or t.level is None:
        return 0
    limbs = p.limbs_at(t.level) + (p.alpha_at(t.level) if t.kind is ValueKind.EXTENDED else 0)
    return t.parts * limbs * p.N * word_bytes_for(p.word_bits)


def sums_per_tile(capacity_bytes: int, hint: int, product: int) -> int:
    """Partial sums of `product` bytes that fit in `capacity_bytes` beside the room one baby
    step needs (its hint, its mod-up digits, the baby and its product: 2 x hint + 2 x
    product), at least 1: a tile's size (see the module doc)."""
    return max(1, (capacity_bytes - (2 * hint + 2 * product)) // max(1, product))


def streamed_sums(capacity_bytes: int, hint: int, product: int) -> int:
    """Partial sums of `product` bytes that fit in `capacity_bytes` beside a double-hoisted
    baby step run limb by limb (`fhec.passes.limb_order`): only the hoisted mod-up digits
    (half the hint's size: digits x (L + alpha) limbs) stay on chip through the transform;
    the key, the rotated digits and the products stream through a few limbs, for which one
    sum's room is kept."""
    return max(0, (capacity_bytes - (hint // 2 + product)) // max(1, product))


def is_tiled(sums: int, capacity_bytes: int, hint: int, product: int, double_hoisted: bool) -> bool:
    """Whether the GSC order tiles a transform of `sums` partial sums (see the module doc):
    they do not fit beside one baby step's room, a tile holds at least `MIN_TILE_SUMS`, and,
    with double hoisting, they do not fit beside a baby step run limb by limb either (then
    the pipeline's limb-major variant runs the untiled order without spilling)."""
    fit = sums_per_tile(capacity_bytes, hint, product)
    if sums <= fit or fit < MIN_TILE_SUMS:
        return False
    return not (double_hoisted and sums <= streamed_sums(capacity_bytes, hint, product))


def _tiles(program: HeProgram, nodes, users, babies, position, capacity_bytes) -> dict[int, int]:
    """Plaintext product -> its tile (see the module doc); empty if no transform needs
    more than one."""
    root: dict[int, int] = {}

    def chain_root(vid: int) -> int:  # the last addition of the chain `vid` feeds
        path = []
        while vid not in root:
            path.append(vid)
            us = users[vid]
            if len(us) != 1 or nodes[us[0]].op not in CHAIN_OPS:
                root[vid] = vid
                break
            vid = us[0]
        for v in path:
            root[v] = root[vid]
        return root[vid]

    groups: dict[int, dict[int, int]] = {}  # transform source -> sum root -> first product position
    double: set[int] = set()  # transform sources whose products are over Q·P
    hints: dict[int, int] = {}  # transform source -> bytes of a baby step's hint
    sums: dict[int, int] = {}  # transform source -> bytes of one partial sum
    product_root: dict[int, int] = {}
    for vid, n in nodes.items():
        if n.op in PLAIN_PRODUCTS and n.args and n.args[0] in babies:
            baby = nodes[n.args[0]]
            src = baby.args[0]
            r = chain_root(vid)
            product_root[vid] = r
            groups.setdefault(src, {}).setdefault(r, position[vid])
            sums[src] = max(sums.get(src, 0), _bytes(program, n))
            hints[src] = max(hints.get(src, 0), hint_bytes(program, baby))
            if n.op is HeOp.MUL_CONST_EXT:
                double.add(src)
    tile_of_root: dict[int, int] = {}
    for src, firsts in groups.items():
        if not is_tiled(len(firsts), capacity_bytes, hints[src], sums[src], src in double):
            continue
        fit = sums_per_tile(capacity_bytes, hints[src], sums[src])
        count = math.ceil(len(firsts) / fit)
        per = math.ceil(len(firsts) / count)  # balanced tiles
        for i, r in enumerate(sorted(firsts, key=firsts.__getitem__)):
            tile_of_root[r] = i // per
    return {vid: tile_of_root[r] for vid, r in product_root.items() if r in tile_of_root}


def _graph(program: HeProgram):
    """(id -> node, id -> program position, id -> its users, the baby-step rotations)."""
    nodes = {n.id: n for n in program.nodes}
    position = {n.id: i for i, n in enumerate(program.nodes)}
    users: dict[int, list[int]] = {n.id: [] for n in program.nodes}
    for n in program.nodes:
        for a in set(n.args):
            users[a].append(n.id)
    babies = {vid for vid, n in nodes.items()
              if n.op in BABY_STEP_ROTATIONS and any(nodes[u].op in PLAIN_PRODUCTS for u in users[vid])}
    return nodes, position, users, babies


def giant_step_centric_order(program, capacity_bytes: int | None = None) -> list[int]:
    """Node ids of `program` in the GSC order, tiled to `capacity_bytes` (see the module doc)."""
    program = as_he(program)
    nodes, position, users, babies = _graph(program)
    tile = {} if capacity_bytes is None else _tiles(program, nodes, users, babies, position, capacity_bytes)
    # a baby step's tile is the first tile that reads it; tile t > 0 of a transform sorts after
    # every baby step of its tile 0 (major key: its source's last baby step) and before the
    # nodes that follow it in the program
    last_baby = {}
    for b in babies:
        src = nodes[b].args[0]
        last_baby[src] = max(last_baby.get(src, -1), position[b])
    first_tile = {}
    for vid, t in tile.items():
        b = nodes[vid].args[0]
        first_tile[b] = min(first_tile.get(b, t), t)

    def baby_key(b: int, t: int) -> tuple[int, int, int]:
        return (position[b], 0, 0) if t == 0 else (last_baby[nodes[b].args[0]], t, position[b])

    rank: dict[int, tuple[int, int, int]] = {}
    finished: dict[int, tuple[int, int, int] | None] = {}  # sum chain node -> latest product rank (None: tiled)
    for n in program.nodes:  # program order is topological: every argument is ranked first
        if n.id in babies:
            rank[n.id] = baby_key(n.id, first_tile.get(n.id, 0))
        elif n.op in PLAIN_PRODUCTS and n.args and n.args[0] in babies:
            rank[n.id] = baby_key(n.args[0], tile.get(n.id, 0))
            finished[n.id] = None if n.id in tile else rank[n.id]
        else:
            rank[n.id] = min([(position[n.id], 0, 0), *(rank[a] for a in n.args if nodes[a].op is not HeOp.OUTPUT)])
            chains = [finished[a] for a in n.args if a in finished]
            if not chains:
                continue
            latest = None if None in chains else max(chains)
            if n.op in SUM_OPS or n.op is HeOp.ADD_EXT_Q:  # ADD_EXT_Q: a sum's j = 0 term joins its first product
                finished[n.id] = latest
            elif n.op is HeOp.MOD_DOWN_EXT and latest is not None:  # see the module doc
                rank[n.id] = (latest[0], latest[1], latest[2] + 1)
    waiting = {n.id: len(set(n.args)) for n in program.nodes}
    outputs = [n.id for n in program.nodes if n.op is HeOp.OUTPUT]
    ready = [(rank[vid], position[vid], vid) for vid, w in waiting.items() if w == 0 and nodes[vid].op is not HeOp.OUTPUT]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, _, vid = heapq.heappop(ready)
        order.append(vid)
        for u in users[vid]:
            waiting[u] -= 1
            if waiting[u] == 0 and nodes[u].op is not HeOp.OUTPUT:
                heapq.heappush(ready, (rank[u], position[u], u))
    return order + outputs




def rematerialize_tiled_baby_steps(program, capacity_bytes: int | None = None) -> HeProgram:
    """`program` in which a baby-step rotation (of `RECOMPUTED_BABY_STEPS`) whose products
    fall in several tiles (see the module doc) is computed once per tile: each later tile's products read a copy of
    the rotation (same op, attributes and argument), placed right after it. The program
    itself when nothing is tiled.

    Why: read in a later tile, the rotation's value (2 x (L + alpha) limbs with double
    hoisting) is otherwise spilled after the first tile and loaded back, twice its size in
    traffic, where recomputing it reloads its key (digits x (L + alpha) limbs per loaded
    half) and repeats automorphisms and key products on units the transform leaves idle
    (double hoisted, no NTT: the mod-up is hoisted and the mod-down comes after the sums).
    Measured: see the module doc.

    Preserves: every output's value on every limb (each copy computes what its original
    does); only which node a tile's products read changes."""
    program = as_he(program)
    if capacity_bytes is None:
        return program
    nodes, position, users, babies = _graph(program)
    tile = _tiles(program, nodes, users, babies, position, capacity_bytes)
    tiles_of: dict[int, set[int]] = {}
    for vid, t in tile.items():
        tiles_of.setdefault(program.node(vid).args[0], set()).add(t)
    again = {b: sorted(ts)[1:] for b, ts in tiles_of.items()
             if b in babies and len(ts) > 1 and nodes[b].op in RECOMPUTED_BABY_STEPS}
    if not again:
        return program
    b = HeBuilder(program.params, program.options, program.name, program.loc, source=program)
    new: dict[int, int] = {}
    copies: dict[tuple[int, int], int] = {}  # (baby, later tile) -> its copy
    for n in program.nodes:
        args = tuple(new[a] for a in n.args)
        if n.id in tile and n.args[0] in again and (n.args[0], tile[n.id]) in copies:
            args = (copies[(n.args[0], tile[n.id])], *args[1:])
        new[n.id] = b.copy(n, args)
        for t in again.get(n.id, ()):
            copies[(n.id, t)] = b.copy(n, args)
    out = b.program()
    return verify_he(out) if verify_by_default() else out


def order_giant_step_centric(program, capacity_bytes: int | None = None) -> HeProgram:
    """`program` with its nodes in the giant-step-centric order, tiled to `capacity_bytes`,
    every baby step computed in each tile that reads it (`rematerialize_tiled_baby_steps`;
    see the module doc)."""
    program = rematerialize_tiled_baby_steps(program, capacity_bytes)
    order = giant_step_centric_order(program, capacity_bytes)
    index = {n.id: n for n in program.nodes}
    reordered = HeProgram(program.name, program.params, tuple(index[i] for i in order), program.options, program.loc)
    return sum_in_arrival_order(rebuild(reordered, copy_node))


def _sum_chains(program: HeProgram) -> dict[int, tuple[list[int], list[int]]]:
    """Last node of each chain of two or more additions -> (the chain's nodes, first to
    last; its terms in the order the chain adds them). A chain is a run of nodes of one op
    in `SUM_OPS`, each but the last read only by the next, whose last node carries the
    recipe's hints (``bound`` for CKKS, ``noise``): its type is then the hints' whatever
    the association (`rebuild_sum`)."""
    users = program.users()
    nodes = {n.id: n for n in program.nodes}
    want = {"noise"} | ({"bound"} if program.params.scheme == "ckks" else set())

    def link(vid: int) -> int | None:  # the chain node `vid` continues, if any
        n = nodes[vid]
        for a in n.args:
            if nodes[a].op is n.op and users[a] == [vid] and n.args.count(a) == 1:
                return a
        return None

    out = {}
    for n in program.nodes:
        if n.op not in SUM_OPS or not want <= set(n.attr_dict):
            continue
        if any(nodes[u].op is n.op and link(u) == n.id for u in users[n.id]):
            continue  # not the last of its chain
        chain = [n.id]
        while (prev := link(chain[0])) is not None:
            chain.insert(0, prev)
        if len(chain) < 2:
            continue
        terms = [a for a in nodes[chain[0]].args]
        for c in chain[1:]:
            terms.extend(a for a in nodes[c].args if a not in chain)
        out[n.id] = (chain, terms)
    return out


def sum_in_arrival_order(program: HeProgram) -> HeProgram:
    """`program` in which a chain of additions (`_sum_chains`) adds its terms in the order
    the program computes them: each addition right after the term it adds, so a term is
    consumed as soon as it exists. The nodes of a reassociated chain but its last take the
    last's attributes (its hints bound every partial sum); a chain whose last node would
    change type is left as it was.

    Why: a BSGS transform's giant-step results are summed in giant-step order (double
    hoisting: over Q·P, 2 x (L + alpha) limbs each), but in the giant-step-centric order a
    giant step whose diagonals read only early baby steps finishes early, and its result
    then waited for every earlier giant step's addition (with double hoisting the chain
    starts with the unrotated g = 0 sum, which the last baby step finishes). Measured: see
    the module doc.

    Preserves: every value on every limb (additions mod each prime are associative and
    commutative, so the sum is the same residue whatever the order) and every chain's
    result type."""
    chains = _sum_chains(program)
    if not chains:
        return program
    position = {n.id: i for i, n in enumerate(program.nodes)}
    moved = {last: (chain, sorted(terms, key=position.__getitem__)) for last, (chain, terms) in chains.items()
             if sorted(terms, key=position.__getitem__) != terms}
    keep = set(moved)
    while keep:
        out, changed = _reassociate(program, {last: moved[last] for last in keep})
        if not changed:
            return verify_he(out) if verify_by_default() else out
        keep -= changed
    return program


def _reassociate(program: HeProgram, moved: dict) -> tuple[HeProgram, set[int]]:
    """(`program` with the chains of `moved` (last node -> (chain, terms in arrival order))
    rebuilt, the last nodes whose type changed)."""
    dropped = {c for chain, _ in moved.values() for c in chain}
    after: dict[int, list[tuple[int, int]]] = {}  # term -> (chain's last node, its index in the order)
    for last, (_, terms) in moved.items():
        for i, t in enumerate(terms[1:], start=1):
            after.setdefault(t, []).append((last, i))
    b = HeBuilder(program.params, program.options, program.name, program.loc, source=program)
    new: dict[int, int] = {}
    running: dict[int, int] = {}  # chain's last node -> the new partial sum
    changed = set()
    for n in program.nodes:
        if n.id not in dropped:
            new[n.id] = b.copy(n, tuple(new[a] for a in n.args))
        for last, i in after.get(n.id, ()):
            chain, terms = moved[last]
            final = program.node(last)
            acc = running.get(last, new[terms[0]])
            running[last] = b.emit(final.op, (acc, new[n.id]), final.attrs, final.loc)
            if i == len(terms) - 1:
                new[last] = running[last]
                if b.nodes[-1].type != final.type:
                    changed.add(last)
    return b.program(), changed
