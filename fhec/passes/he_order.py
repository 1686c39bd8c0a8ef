"""Key-switch-hint reuse ordering under a working-set bound (F1 §4.2, "Ordering
homomorphic operations").

A program as written may cycle through its key-switch hints once per data item: F1's
matrix-vector example rotates row 0 by 1, 2, 4, ..., then row 1 by 1, 2, 4, ..., so
each of its 14 hints is loaded four times when they do not all fit on chip. F1's
compiler "first clusters independent homomorphic operations that reuse the same hint,
then orders all clusters through simple list-scheduling". Clustering without a limit
has the opposite failure: a program of a thousand independent products, or a deep
chain whose inputs are needed at every level, gets every ready value computed at once,
and the working set spills.

This pass is a list scheduler over heaps in program order (the order the program was
written in, which is usually the order that consumes values soonest). Each step takes
the first of:

* a ready key-free node that does not grow the working set (its result is no larger
  than the values it reads last: the add that folds a rotation into its running sum,
  a rescale, a reduction step). It frees room, so it always runs; without this rule a
  reduction written after many independent chains (LoLa's sum of 7,987 rows) waits
  behind them, and its inputs fill the budget;
* a ready node that switches with the *current* key, whose hint is on chip (hint
  reuse, F1);
* a ready node that switches no key (cheap, and running it makes more key switches
  ready, so that clusters grow: F1 runs these first), if it leaves room for one more
  value of its size (the key switch that reads it): a pile of started chains that
  fills the budget would block its own key switches;
* past the budget, a ready node of the current key (each step of a rotate-and-sum is a
  key switch and an add, which leaves the working set as it was);
* past the budget, when the current hint alone fills the live values' share of the
  scratchpad (`BUDGET_FRACTION` of it) and its key has users left, a ready key-free
  node whose value is under half the hint (`_stays_with_hint`);
* the earliest ready node in program order; if it switches a key, that key becomes
  current (its hint is loaded now, so its other users gather behind it).

Together these interleave independent chains that use the same hints (many
rotate-and-sums, F1's LoLa-CIFAR): the started chains all take their rotation by one
key, then by the next, so each hint is read once per group and the chains' latencies
overlap; the group is as large as the budget allows.

The working set is estimated in bytes, per HE value: parts × limbs at its level × N ×
word bytes, live from its producer to its last user. A program input is live from its
first user, not from the top of the program: the data scheduler loads an input when an
instruction first reads it, so an input waits off chip until then. Counted from the top,
the inputs alone can exceed the budget before anything runs, so every step is past it
and program order decides: LoLa-MNIST with encrypted weights loads 173 ciphertext inputs
(188 MiB; the scratchpad is 64 MiB), and counted from the top they would also make F1's
unbounded order look far larger than the scratchpad (below, "Where the bound applies").
In the order, each input sits just before its first user. The budget is half the scratchpad
left by the hints kept for reuse (the other half holds the current hint, the transient
digits of a key switch, and the prefetches of the data-movement scheduler), less the
current hint's bytes. A hint is kept once its key has switched and while the key has
users left to order: the data scheduler's Belady rule keeps such hints, and a group of
chains that cycles through 13 keys reuses all of them (counting only the current hint
let groups fill the scratchpad beside 13 resident hints, and every load of a plaintext
then waited for a free slot). Before the first key switch, the current hint is that key switch's: it is loaded
before anything after it can finish, so key-free work may not fill its room (a deep
chain would otherwise level its inputs down to every level first, and those values
would be spilled when its 60 MB relinearization hint arrives). Where reuse would exceed
the budget, program order wins: the cost model is bytes moved, and spilling a working
set moves more than reloading one hint. Except beside a hint that alone fills the
budget's share of the scratchpad (F1's relinearization hint at level 15 is 34 MiB of
64 MiB): no working set fits beside it, every step is past the budget, and program order
then switches keys as soon as the current key's next switch waits for key-free work, so
the hint is evicted and loaded again by that switch. There a key-free node runs first
when its value is under half the hint: spilled, it is stored and loaded once each, which
moves less than the reload it saves. The DB lookup (F1 Table 3) is the case: its 47
entries' series, each a chain of relinearizations, alternated with the entries' window
rotations and reloaded the hint per entry (1.18 GiB of hints moved, 7.49 ms); with this
rule every series runs beside the resident hint, then all windows in lockstep by
rotation key (0.52 GiB, 4.96 ms). Without a target
the budget is unbounded (pure F1 clustering within program order).

Where the bound applies (`bounded_order`). The budget is a guard against spilling, and
a conservative one: it keeps half the scratchpad for hints and prefetches and counts
every hint that will be used again as resident. Where F1's clustering without it fits
anyway, the guard only costs overlap. LoLa's MNIST program with encrypted weights keeps
31 keys (173 MiB of hints) in use across its layers, so the room beside the kept hints is
empty, every step is past the budget, and program order runs its 13 packed rows' rotate-
and-sums one row after another (0.84 ms on `f1`, memory and units both idle most of the
time), where F1's clustering runs them in lockstep with a working set of 38 MiB (0.44 ms).
So the pass first orders without the bound and keeps that order when its largest working
set, plus the largest hint, fits the scratchpad; otherwise it orders with the bound. On
F1 Table 3's programs the unbounded order is kept for LoLa-MNIST (plaintext weights: the
same order either way; encrypted weights in LoLa's layout) and CKKS bootstrapping
(0.305 -> 0.304 ms), and the bounded one for LoLa-CIFAR (4.9 GiB unbounded), logistic
regression (42 MiB beside a 34 MiB hint), the DB lookup and the hybrid-layout LoLa-MNIST.

The heaps use lazy deletion: O(n log n) in the number of nodes, plus the kept hints
summed at each step (a few dozen keys).

Preserves: semantics exactly (the result is a topological reordering: every node keeps
its operation, attributes and arguments, so every value, type and ciphertext is the
same); outputs keep their relative order at the end.
"""

from __future__ import annotations

import heapq
import math
import weakref
from collections import defaultdict

from fhec.ir.he import INPUT_OPS, HeNode, HeOp, HeProgram
from fhec.ir.limb import word_bytes_for
from fhec.passes.he_rewrite import as_he, copy_node, rebuild

BUDGET_FRACTION = 0.5
"""Share of the scratchpad the ordering lets live values fill (see the module doc)."""

HINT_ORDERS = ("bounded", "unbounded")
"""The pipeline's choices (``fhec.compile(hint_order=...)``): "bounded" clusters key switches
under the working-set budget above where clustering without it would not fit the
scratchpad (fhec's default, `bounded_order`); "unbounded" is F1 §4.2 as the paper
describes it, clusters without regard to the scratchpad, for comparing against F1's own
compiler (F1 Table 3's LoLa-CIFAR spills 75% of its traffic as intermediates this way)."""


def _key_of(node: HeNode):
    """The key a node switches with, or None (type.keys of a primitive node)."""
    keys = node.type.keys
    return keys[0] if keys else None


def value_bytes(program: HeProgram, node: HeNode) -> int:
    """Bytes of a ciphertext value on chip (0 for plaintexts and outputs)."""
    t = node.type
    if node.op is HeOp.OUTPUT or not t.is_cipher or t.level is None:
        return 0
    p = program.params
    return t.parts * p.limbs_at(t.level) * p.N * word_bytes_for(p.word_bits)


def hint_bytes(program: HeProgram, node: HeNode) -> int:
    """Bytes of the hint a key-switching node reads, as hybrid key switching lays it out:
    2 components × digits × (limbs + special primes) limbs at the input's level."""
    p = program.params
    level = program.node(node.args[0]).type.level if node.args else p.top_level
    limbs = p.limbs_at(level)
    alpha = max(1, p.alpha_at(level))
    return 2 * math.ceil(limbs / alpha) * (limbs + alpha) * p.N * word_bytes_for(p.word_bits)


def _stays_with_hint(current_hint: int, capacity: float, pending: int) -> bool:
    """Whether the order should stay with the current key past the budget, running
    key-free work before switching keys: when the current hint alone fills the live
    values' share of the scratchpad (no working set fits beside it, so the budget cannot
    guide the order; switching keys evicts the hint, which the key's `pending` later
    switches load again). Smaller hints keep program order past the budget: beside them
    a working set fits, and the kept-hint model expects several hints resident."""
    return pending > 0 and current_hint >= BUDGET_FRACTION * capacity


def hint_reuse_order(program, capacity_bytes: int | None = None) -> list[int]:
    """The node ids of `program` in key-switch-hint reuse order under a working-set
    budget of `BUDGET_FRACTION` × what `capacity_bytes` leaves beside the hints kept for
    reuse (unbounded if None; see the module doc)."""
    program = as_he(program)
    nodes = {n.id: n for n in program.nodes}
    rank = {n.id: i for i, n in enumerate(program.nodes)}
    # Inputs are placed when their first user is (module doc): they wait in `unplaced`
    # and count as no one's dependence.
    unplaced = {n.id for n in program.nodes if n.op in INPUT_OPS}
    waiting = {n.id: len(set(n.args) - unplaced) for n in program.nodes}
    users: dict[int, list[int]] = defaultdict(list)
    for n in program.nodes:
        for a in set(n.args):
            users[a].append(n.id)
    remaining = {vid: sum(1 for u in us if nodes[u].op is not HeOp.OUTPUT) for vid, us in users.items()}
    size = {n.id: value_bytes(program, n) for n in program.nodes}
    outputs = [n.id for n in program.nodes if n.op is HeOp.OUTPUT]
    capacity = math.inf if capacity_bytes is None else capacity_bytes
    pending_uses: dict = defaultdict(int)  # key -> its key switches not yet ordered
    for n in program.nodes:
        if _key_of(n) is not None:
            pending_uses[_key_of(n)] += 1
    kept_hint: dict = {}  # key -> hint bytes, for keys already used that will be used again

    ready: list[tuple[int, int]] = []  # (rank, id) of every ready node
    free: list[tuple[int, int]] = []  # (rank, id) of the ready nodes that switch no key
    by_key: dict = defaultdict(list)  # key -> (rank, id) of its ready key switches
    shrink: list[tuple[int, int]] = []  # (rank, id) of ready key-free nodes that do not grow the working set
    done: set[int] = set()

    def arriving(vid: int) -> int:
        """Bytes of the inputs `vid` is the first to read that other users read later:
        running it brings them on chip to stay."""
        return sum(size[a] for a in set(nodes[vid].args) if a in unplaced and remaining[a] > 1)

    def growth(vid: int) -> int:
        """Bytes the working set grows by when `vid` runs: its result and the inputs it
        brings on chip to stay, less the args it reads last (an input read first and last
        comes and goes)."""
        kept = (size[vid] if remaining.get(vid, 0) else 0) + arriving(vid)
        return kept - sum(size[a] for a in set(nodes[vid].args) if remaining[a] == 1 and a not in unplaced)

    def check_shrink(vid: int) -> None:
        if vid not in done and waiting[vid] == 0 and nodes[vid].op is not HeOp.OUTPUT \
                and _key_of(nodes[vid]) is None and growth(vid) <= 0:
            heapq.heappush(shrink, (rank[vid], vid))

    def make_ready(vid: int) -> None:
        node = nodes[vid]
        if node.op is HeOp.OUTPUT:
            return
        heapq.heappush(ready, (rank[vid], vid))
        k = _key_of(node)
        heapq.heappush(free if k is None else by_key[k], (rank[vid], vid))
        check_shrink(vid)

    def top(heap: list[tuple[int, int]]) -> int | None:
        while heap and heap[0][1] in done:
            heapq.heappop(heap)
        return heap[0][1] if heap else None

    for n in program.nodes:
        if waiting[n.id] == 0 and n.id not in unplaced:
            make_ready(n.id)
    order: list[int] = []
    live = 0
    # The first key switch's hint is loaded before anything it feeds can finish, so it
    # counts against the budget from the start: key-free work cannot fill its room.
    first = next((n for n in program.nodes if _key_of(n) is not None), None)
    current, current_hint = None, 0 if first is None else hint_bytes(program, first)

    def emit(vid: int) -> None:
        nonlocal live
        for a in sorted(set(nodes[vid].args) & unplaced, key=rank.__getitem__):
            unplaced.discard(a)
            order.append(a)
            live += size[a]
        done.add(vid)
        order.append(vid)
        k = _key_of(nodes[vid])
        if k is not None:
            pending_uses[k] -= 1
            if pending_uses[k]:
                kept_hint.setdefault(k, hint_bytes(program, nodes[vid]))
            else:
                kept_hint.pop(k, None)
        if remaining.get(vid, 0):
            live += size[vid]
        for a in set(nodes[vid].args):
            remaining[a] -= 1
            if remaining[a] == 0:
                live -= size[a]
            elif remaining[a] == 1:  # its last reader may now shrink the working set
                for u in users[a]:
                    check_shrink(u)
        for u in users[vid]:
            waiting[u] -= 1
            if waiting[u] == 0:
                make_ready(u)

    def room() -> float:
        """Bytes the live values may fill: their share of the scratchpad left by the
        hints that stay for reuse, less the current hint."""
        others = sum(b for k, b in kept_hint.items() if k != current)
        return BUDGET_FRACTION * max(0.0, capacity - others) - current_hint

    def fits(vid: int | None) -> bool:
        return vid is not None and live + arriving(vid) + size[vid] <= room()

    def fits_free(vid: int | None) -> bool:
        if vid is None:
            return False
        if growth(vid) <= 0:
            return True
        return live + arriving(vid) + 2 * size[vid] <= room()

    while True:
        vid = top(shrink)
        if vid is None:
            vid = top(by_key[current]) if current is not None else None
            if not fits(vid):
                vid = top(free)
                if not fits_free(vid):  # past the budget: the current cluster, then program order
                    vid = top(by_key[current]) if current is not None else None
                    if vid is None and current is not None and _stays_with_hint(current_hint, capacity, pending_uses[current]):
                        vid = top(free)
                        if vid is not None and 2 * size[vid] >= current_hint:
                            vid = None
        if vid is None:
            vid = top(ready)
            if vid is None:
                break
            k = _key_of(nodes[vid])
            if k is not None and k != current:
                current, current_hint = k, hint_bytes(program, nodes[vid])
        emit(vid)
    unused = sorted(unplaced, key=rank.__getitem__)  # inputs only outputs read, or none
    return unused + order + outputs


def peak_live_bytes(program, order: list[int] | None = None) -> int:
    """The largest estimated working set (bytes of values computed and still to be
    read) over `order` (default: the program's own order)."""
    program = as_he(program)
    nodes = {n.id: n for n in program.nodes}
    remaining: dict[int, int] = defaultdict(int)
    for n in program.nodes:
        if n.op is not HeOp.OUTPUT:
            for a in set(n.args):
                remaining[a] += 1
    live = peak = 0
    for vid in order if order is not None else [n.id for n in program.nodes]:
        node = nodes[vid]
        if node.op is HeOp.OUTPUT:
            continue
        if remaining[vid]:
            live += value_bytes(program, node)
        peak = max(peak, live)
        for a in set(node.args):
            remaining[a] -= 1
            if remaining[a] == 0:
                live -= value_bytes(program, nodes[a])
    return peak


def largest_hint_bytes(program) -> int:
    """Bytes of the largest hint any node of `program` switches with (0 if none)."""
    program = as_he(program)
    return max((hint_bytes(program, n) for n in program.nodes if _key_of(n) is not None), default=0)


_last_unbounded: tuple[weakref.ref, list[int]] | None = None
"""(the last program `_unbounded_order` ordered, weakly; its order)."""


def _unbounded_order(program: HeProgram) -> list[int]:
    """`hint_reuse_order(program)`, remembered for the last program asked (by identity):
    `fhec.compile` asks `bound_applies` of the very program the pass just ordered, for its
    report, and F1's order of a large program takes seconds (2.4 s for LoLa-CIFAR's first
    1,500 rows). Callers must not modify the list."""
    global _last_unbounded
    last = _last_unbounded
    if last is not None and last[0]() is program:
        return last[1]
    order = hint_reuse_order(program)
    _last_unbounded = (weakref.ref(program), order)
    return order


def bound_applies(program, capacity_bytes: int | None) -> bool:
    """Whether `order_for_hint_reuse` bounds `program`'s order under `capacity_bytes`: F1's
    clustering without the bound needs more than the scratchpad beside the largest hint
    (module doc, "Where the bound applies")."""
    if capacity_bytes is None:
        return False
    program = as_he(program)
    return peak_live_bytes(program, _unbounded_order(program)) + largest_hint_bytes(program) > capacity_bytes


def bounded_order(program, capacity_bytes: int | None) -> list[int]:
    """The order `order_for_hint_reuse` takes: F1's clustering without a bound when its
    working set fits the scratchpad beside the largest hint, else the bounded order
    (`bound_applies`)."""
    program = as_he(program)
    if bound_applies(program, capacity_bytes):
        return hint_reuse_order(program, capacity_bytes)
    return list(_unbounded_order(program))


def order_for_hint_reuse(program, capacity_bytes: int | None = None) -> HeProgram:
    """`program` with its nodes reordered for key-switch-hint reuse under a working-set
    bound from `capacity_bytes` (the target's scratchpad), where the bound is needed
    (`bounded_order`; see the module doc)."""
    program = as_he(program)
    order = bounded_order(program, capacity_bytes)
    index = {n.id: n for n in program.nodes}
    reordered = HeProgram(program.name, program.params, tuple(index[i] for i in order), program.options, program.loc)
    return rebuild(reordered, copy_node)
