"""The giant-step-centric order of BSGS products (Osiris §V): per baby-step rotation, its
n2 diagonal products, before the next baby step; values unchanged on every limb."""

import numpy as np
import pytest

import fhec
from fhec.backends.target import load_target
from fhec.ir.he import HeOp
from fhec.passes.he_gsc import BABY_STEP_ROTATIONS, PLAIN_PRODUCTS, giant_step_centric_order
from fhec.pipeline import options_for, run_prefix
from fhec.verify_run import run_compiled_checked

OSIRIS_TINY = load_target("osiris-tiny")
PROGRAM_ORDER = OSIRIS_TINY.model_copy(update={"ordering": OSIRIS_TINY.ordering.model_copy(
    update={"linear_transforms": "program"})})
ROOMY = OSIRIS_TINY.model_copy(update={"scratchpad": OSIRIS_TINY.scratchpad.model_copy(
    update={"capacity_bytes": 2**24})})  # every partial sum fits: one tile


def _matvec(hoisting=None, skip=()):
    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("mv", params)
    x = p.input("x")
    rng = np.random.default_rng(5)
    diagonals = {k: rng.uniform(-0.5, 0.5, params.slots) for k in range(16) if k not in skip}  # n1 = n2 = 4
    p.output("y", x.linear_transform(diagonals, hoisting=hoisting))
    return p, diagonals


def _he(p, target):
    return run_prefix("order_giant_step_centric", p, options_for(target)).last


def _baby_runs(program):
    """Per baby-step rotation in order: the plaintext products that read it, and whether
    they all come before the next baby-step rotation."""
    nodes = program.nodes
    users = program.users()
    babies = [n.id for n in nodes if n.op in BABY_STEP_ROTATIONS and any(
        program.node(u).op in PLAIN_PRODUCTS for u in users[n.id])]
    pos = {n.id: i for i, n in enumerate(nodes)}
    runs = []
    for b, nxt in zip(babies, babies[1:] + [None]):
        prods = [u for u in users[b] if program.node(u).op in PLAIN_PRODUCTS]
        runs.append((len(prods), all(nxt is None or pos[u] < pos[nxt] for u in prods)))
    return runs


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_every_baby_steps_products_come_before_the_next_baby_step(hoisting):
    p, _ = _matvec(hoisting)
    gsc = _baby_runs(_he(p, ROOMY))
    assert len(gsc) >= 3 and all(n > 1 and before for n, before in gsc)
    # the recipe's own (giant-step major) order does not have this property; with double
    # hoisting the hint-reuse order already has it (each baby step's last product frees
    # it, and nodes that shrink the working set run first), so the contrast is unhoisted
    if hoisting is None:
        assert not all(before for _, before in _baby_runs(_he(p, PROGRAM_ORDER)))


def _baby_sequence(program, order):
    """The position of the baby step each plaintext product reads, in `order`."""
    users = program.users()
    babies = [n.id for n in program.nodes if n.op in BABY_STEP_ROTATIONS and any(
        program.node(u).op in PLAIN_PRODUCTS for u in users[n.id])]
    index = {b: i for i, b in enumerate(babies)}
    return [index[program.node(v).args[0]] for v in order
            if program.node(v).op in PLAIN_PRODUCTS and program.node(v).args[0] in index]


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_partial_sums_that_do_not_fit_are_tiled(hoisting, monkeypatch):
    """With room for every partial sum the products walk the baby steps once; with room for
    one sum at a time (a 128 KB scratchpad), once per giant step (4 tiles of one sum each):
    the sequence of baby steps restarts 3 times, if tiles that small are allowed (by
    default a tile holds at least `MIN_TILE_SUMS`, so this transform stays untiled).
    Without a capacity: untiled."""
    from fhec.passes import he_gsc

    p, _ = _matvec(hoisting)
    he = _he(p, PROGRAM_ORDER)
    descents = lambda seq: sum(b < a for a, b in zip(seq, seq[1:]))
    small = OSIRIS_TINY.onchip_bytes
    assert descents(_baby_sequence(he, giant_step_centric_order(he))) == 0
    assert descents(_baby_sequence(he, giant_step_centric_order(he, 2**24))) == 0
    assert descents(_baby_sequence(he, giant_step_centric_order(he, small))) == 0
    monkeypatch.setattr(he_gsc, "MIN_TILE_SUMS", 1)
    assert descents(_baby_sequence(he, giant_step_centric_order(he, small))) == 3
    assert sorted(giant_step_centric_order(he, small)) == sorted(n.id for n in he.nodes)


def test_double_hoisted_sums_that_fit_beside_a_limb_major_baby_step_are_not_tiled():
    """Osiris set III's SlotsToCoeffs at n2 = 7 (in RVecs of a 588-RVec scratchpad): sums of
    2 x 27 limbs, a one-digit key of 2 x 27. Beside a baby step run node by node (its key,
    digits, baby and product: 216) 6 sums fit, so the GSC order would tile; run limb by limb
    only the hoisted digits (27) and one product's room stay, and 9 fit: double hoisting
    stays untiled, single hoisting (whose baby steps are not streamed) is tiled. ResNet-20's
    40 sums fit neither way."""
    from fhec.passes.he_gsc import MIN_TILE_SUMS, is_tiled, streamed_sums, sums_per_tile

    assert sums_per_tile(588, 54, 54) == 6 and streamed_sums(588, 54, 54) == 9
    assert not is_tiled(7, 588, 54, 54, double_hoisted=True)
    assert is_tiled(7, 588, 54, 54, double_hoisted=False)
    assert is_tiled(40, 588, 76, 38, double_hoisted=True)
    assert not is_tiled(6, 588, 54, 54, double_hoisted=False)  # they fit: one tile
    assert sums_per_tile(588, 160, 80) < MIN_TILE_SUMS and not is_tiled(8, 588, 160, 80, double_hoisted=False)


def test_the_order_is_a_permutation_that_keeps_outputs_last():
    p, _ = _matvec()
    he = _he(p, PROGRAM_ORDER)
    order = giant_step_centric_order(he)
    assert sorted(order) == sorted(n.id for n in he.nodes)
    assert all(he.node(i).op is HeOp.OUTPUT for i in order[-1:])


def _run_checked_on_osiris_tiny(p):
    """Compile `p` for osiris-tiny, check its streams, run them on a random x against the
    evaluator on every limb: (compiled, x, the run)."""
    c = fhec.compile(p, OSIRIS_TINY)
    c.check()
    x = np.random.default_rng(2).uniform(-1, 1, p.params.slots)
    return c, x, run_compiled_checked(c, {"x": x}, seed=4, check=True)


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_streams_equal_the_evaluator_on_every_limb(hoisting):
    p, diagonals = _matvec(hoisting)
    c, x, out = _run_checked_on_osiris_tiny(p)
    want = sum(d * np.roll(x, -k) for k, d in diagonals.items())
    assert np.allclose(out["outputs"]["y"], want, atol=1e-2)


def _late_mod_downs(program, order):
    """Per MOD_DOWN_EXT that divides a giant-step sum: whether it comes after every product
    of the last baby step (in `order`) whose product feeds that sum."""
    nodes = {n.id: n for n in program.nodes}
    users = program.users()
    pos = {v: i for i, v in enumerate(order)}
    babies = [v for v in order if nodes[v].op in BABY_STEP_ROTATIONS and any(
        nodes[u].op in PLAIN_PRODUCTS for u in users[v])]
    feeds = {}  # node -> the babies whose products it accumulates

    for v in order:
        n = nodes[v]
        if n.op in PLAIN_PRODUCTS and n.args[0] in babies:
            feeds[v] = {n.args[0]}
        elif any(a in feeds for a in n.args) and n.op is not HeOp.MOD_DOWN_EXT:
            feeds[v] = set().union(*(feeds[a] for a in n.args if a in feeds))
    out = []
    for v in order:
        if nodes[v].op is HeOp.MOD_DOWN_EXT and nodes[v].args[0] in feeds:
            last = max(feeds[nodes[v].args[0]], key=pos.__getitem__)
            products = [u for u in users[last] if nodes[u].op in PLAIN_PRODUCTS]
            out.append(all(pos[u] < pos[v] for u in products))
    return out


def test_a_double_hoisted_sums_mod_down_waits_for_the_last_baby_steps_products():
    """With double hoisting the giant-step key switch of the first finished sum does not run
    among the last baby step's products (the module doc); the final mod-down does either way."""
    p, _ = _matvec("double")
    he = _he(p, PROGRAM_ORDER)
    late = _late_mod_downs(he, giant_step_centric_order(he, OSIRIS_TINY.onchip_bytes))
    assert len(late) >= 3 and all(late)


def test_a_double_hoisted_sum_with_its_j0_term_is_one_sum_when_tiling():
    """With double hoisting a giant step's j = 0 term (over Q) joins its first product by
    ADD_EXT_Q; the sum is still one sum. A scratchpad with room for exactly the n2 = 4
    sums (beside one baby step's room) leaves the transform untiled. Counting each j = 0
    product as a sum of its own made 7 groups (diagonal 4, giant step 1's j = 0 term, is
    left out, as ResNet-20's SlotsToCoeffs leaves out zero diagonals), and tiled it in
    two: giant step 1's sum, begun at the first baby step, in the first tile with the
    three j = 0 products, the other sums' baby steps walked again in the second."""
    from fhec.passes import he_gsc
    from fhec.passes.he_order import hint_bytes

    p, _ = _matvec("double", skip=(4,))
    he = _he(p, PROGRAM_ORDER)
    users = he.users()
    products = [n for n in he.nodes if n.op in PLAIN_PRODUCTS and he.node(n.args[0]).op in BABY_STEP_ROTATIONS]
    assert any(he.node(u).op is HeOp.ADD_EXT_Q for n in products for u in users[n.id])
    product = max(he_gsc._bytes(he, n) for n in products)
    hint = max(hint_bytes(he, he.node(n.args[0])) for n in products)
    descents = lambda seq: sum(b < a for a, b in zip(seq, seq[1:]))
    room = 2 * hint + 2 * product
    assert he_gsc.sums_per_tile(room + 4 * product, hint, product) == 4
    with pytest.MonkeyPatch.context() as m:
        # the tiling by count alone: without the exemption of sums that fit beside a
        # limb-major baby step (`streamed_sums`), which would leave both untiled
        m.setattr(he_gsc, "streamed_sums", lambda *args: 0)
        assert descents(_baby_sequence(he, giant_step_centric_order(he, room + 4 * product))) == 0
        # room for 2 sums (tiles that small allowed): 2 tiles, the baby steps walked twice
        m.setattr(he_gsc, "MIN_TILE_SUMS", 1)
        assert descents(_baby_sequence(he, giant_step_centric_order(he, room + 2 * product))) == 1


def _ragged_matvec(hoisting):
    """`_matvec` without diagonals 6 and 7: giant step 1 reads baby steps 0 and 1 only, so in
    the GSC order its sum finishes two baby steps before giant step 0's, which begins the
    recipe's sum of the giant steps."""
    return _matvec(hoisting, skip=(6, 7))


def _eager_in_program_order(p, d):
    """The eager evaluator's outputs for `p` as the recipe writes it (no GSC order, no
    reassociation, no recomputed baby steps), on the keys and inputs of the run `d`."""
    from fhec.evaluate import run_he
    from fhec.passes.keyswitch_choice import annotated_methods

    he = run_prefix("choose_keyswitch", p, options_for(PROGRAM_ORDER)).last
    return run_he(he, d["keys"], d["inputs"], d["plains"], annotated_methods(he))


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_a_sum_adds_its_terms_in_the_order_they_are_computed(hoisting):
    """In the GSC order giant step 1's result exists before giant step 0's sum; the sum of
    the giant steps (and every other chain of additions) then adds each term right after it
    is computed instead of in giant-step order, where the early result waited (ResNet-20's
    DH convolutions below the chosen split spilled such results)."""
    from fhec.passes.he_gsc import _sum_chains, order_giant_step_centric

    p, _ = _ragged_matvec(hoisting)
    he = _he(p, PROGRAM_ORDER)
    ordered = order_giant_step_centric(he, OSIRIS_TINY.onchip_bytes)
    position = {n.id: i for i, n in enumerate(ordered.nodes)}
    chains = _sum_chains(ordered)
    assert any(ordered.node(t).op in BABY_STEP_ROTATIONS for _, terms in chains.values() for t in terms)
    for chain, terms in chains.values():
        assert [position[t] for t in terms] == sorted(position[t] for t in terms)
        # each addition comes right after its term (or the partial sum it extends)
        for add, term in zip(chain, terms[1:]):
            assert position[add] > position[term]
    assert sorted(n.op.name for n in ordered.nodes) == sorted(n.op.name for n in he.nodes)


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_reassociated_sums_are_bit_identical_to_the_recipe_order(hoisting):
    from fhec.verify_run import compare_limbs

    p, diagonals = _ragged_matvec(hoisting)
    c, x, d = _run_checked_on_osiris_tiny(p)
    compare_limbs(c.lowered, d["ciphertexts"], _eager_in_program_order(p, d), "run in the recipe's order")
    want = sum(dg * np.roll(x, -k) for k, dg in diagonals.items())
    assert np.allclose(d["outputs"]["y"], want, atol=1e-2)


@pytest.mark.parametrize("hoisting", [None, "double"])
def test_a_tiled_transform_recomputes_its_baby_steps_in_each_tile(hoisting, monkeypatch):
    """With room for one sum at a time and tiles that small allowed (4 tiles), every tile
    reads its own copy of each double-hoisted baby-step rotation: a rotation's products are
    one run, none read across tiles (kept from the first tile, its value was spilled and
    loaded back: ResNet-20's stage-3 convolution at n1 = 96, 538 MB). Unhoisted and
    single-hoisted baby steps, whose recomputation repeats a mod-down, are read across
    tiles as before. The compiled streams equal the eager evaluator on every limb, also in
    the recipe's order."""
    from fhec.passes import he_gsc
    from fhec.verify_run import compare_limbs

    monkeypatch.setattr(he_gsc, "MIN_TILE_SUMS", 1)
    p, diagonals = _matvec(hoisting)
    he = _he(p, PROGRAM_ORDER)
    ordered = he_gsc.order_giant_step_centric(he, OSIRIS_TINY.onchip_bytes)
    count = lambda prog: sum(n.op in BABY_STEP_ROTATIONS and any(
        prog.node(u).op in PLAIN_PRODUCTS for u in prog.users()[n.id]) for n in prog.nodes)
    reads = [n.args[0] for n in ordered.nodes if n.op in PLAIN_PRODUCTS and ordered.node(n.args[0]).op in BABY_STEP_ROTATIONS]
    runs = [b for i, b in enumerate(reads) if i == 0 or reads[i - 1] != b]
    if hoisting == "double":
        assert count(ordered) == 4 * count(he)  # 3 baby steps (j = 1..3) in each of 4 tiles
        assert len(runs) == len(set(runs))  # each rotation's products are one run
    else:
        assert count(ordered) == count(he) and len(runs) == 4 * len(set(runs))
    c = fhec.compile(p, OSIRIS_TINY)
    x = np.random.default_rng(2).uniform(-1, 1, p.params.slots)
    d = run_compiled_checked(c, {"x": x}, seed=4, check=True)
    compare_limbs(c.lowered, d["ciphertexts"], _eager_in_program_order(p, d), "run in the recipe's order")
