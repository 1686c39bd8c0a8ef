"""fhec/examples/resnet20.py: the convolution diagonals are convolutions, the program has
Lee et al.'s shape, the rows follow the suite-row convention; the split and the rotated
constants that let it scale are exact."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fhec
from fhec.examples import resnet20 as r
from fhec.ir.he import Const, RotatedConst
from fhec.ir.he_recipes import _best_split, signed_step


def _convolve(w, img, stride):
    k = w.shape[-1]
    pad = np.pad(img, ((0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    side = img.shape[1] // stride
    out = np.zeros((w.shape[0], side, side))
    for o in range(w.shape[0]):
        for a in range(side):
            for b in range(side):
                out[o, a, b] = (w[o] * pad[:, stride * a:stride * a + k, stride * b:stride * b + k]).sum()
    return out


def _packed(layout, tensor, slots):
    x = np.zeros(slots)
    c, i, j = np.meshgrid(*(np.arange(n) for n in tensor.shape), indexing="ij")
    x[layout.slot(c, i, j)] = tensor
    return x


@pytest.mark.parametrize("c_in, g_in, c_out, g_out, stride, k", [
    (3, 1, 2, 1, 1, 3),   # first layer
    (2, 1, 2, 1, 1, 3),   # stage 1
    (4, 2, 4, 2, 1, 3),   # stage 2 (gap 2)
    (2, 1, 4, 2, 2, 3),   # strided 3 x 3
    (4, 2, 8, 4, 2, 1),   # strided 1 x 1 shortcut
])
def test_conv_diagonals_compute_the_zero_padded_convolution(c_in, g_in, c_out, g_out, stride, k):
    rng = np.random.default_rng(c_in * 100 + c_out)
    src, dst, slots = r.Layout(c_in, g_in, 8), r.Layout(c_out, g_out, 8), 512
    w, img = rng.standard_normal((c_out, c_in, k, k)), rng.standard_normal((c_in, src.side, src.side))
    diagonals = r.conv_diagonals(w, src, dst, stride, slots)
    x = _packed(src, img, slots)
    y = sum(v * np.roll(x, -step) for step, v in diagonals.items())
    want = _packed(dst, _convolve(w, img, stride), slots)
    used = _packed(dst, np.ones((c_out, dst.side, dst.side)), slots) > 0
    assert np.allclose(y[used], want[used])


@pytest.mark.parametrize("c_in, g_in, c_out, g_out, stride, k", [
    (3, 1, 2, 1, 1, 3),   # first layer
    (2, 1, 4, 2, 2, 3),   # strided 3 x 3
    (4, 2, 8, 4, 2, 1),   # strided 1 x 1
])
def test_conv_diagonals_keep_a_periodic_packing_periodic(c_in, g_in, c_out, g_out, stride, k):
    # a sparse bootstrap refreshes period-n vectors only: the layer must map the tiled
    # input to the tiled convolution, in every period
    rng = np.random.default_rng(7 * c_in + c_out)
    src, dst, period, slots = r.Layout(c_in, g_in, 8), r.Layout(c_out, g_out, 8), 256, 1024
    w, img = rng.standard_normal((c_out, c_in, k, k)), rng.standard_normal((c_in, src.side, src.side))
    diagonals = r.conv_diagonals(w, src, dst, stride, slots, period)
    x = np.tile(_packed(src, img, period), slots // period)
    y = sum(v * np.roll(x, -step) for step, v in diagonals.items())
    want = _packed(dst, _convolve(w, img, stride), period)
    used = _packed(dst, np.ones((c_out, dst.side, dst.side)), period) > 0
    periods = y.reshape(-1, period)
    assert np.allclose(periods, periods[0]) and np.allclose(periods[0][used], want[used])
    # the steps are signed within the period, as a full-packing layer's are within the slots
    assert all(min(step, slots - step) < period // 2 + 1 for step in diagonals)


def test_downsampling_shortcut_subsamples_and_pads_channels_with_zeros():
    rng = np.random.default_rng(5)
    src, dst, slots = r.Layout(4, 2, 8), r.Layout(8, 4, 8), 512
    img = rng.standard_normal((4, src.side, src.side))
    w = r.downsampling_weights(4, 8, 0.5)
    diagonals = r.conv_diagonals(w, src, dst, 2, slots)
    y = sum(v * np.roll(_packed(src, img, slots), -step) for step, v in diagonals.items())
    want = np.concatenate([0.5 * img[:, ::2, ::2], np.zeros((4, dst.side, dst.side))])
    used = _packed(dst, np.ones((8, dst.side, dst.side)), slots) > 0
    assert np.allclose(y[used], _packed(dst, want, slots)[used])
    assert len(diagonals) <= 4  # one per input channel at most: a data movement, not a dense layer


def test_small_variant_has_the_shape_of_a_resnet():
    ops = Counter(n.op.name for n in r.small().ir.nodes)
    # first conv + relu (on the fresh image's levels, no bootstrap, as Lee et al.), one block
    # (conv, bootstrap + relu, conv, shortcut, bootstrap + relu), the dense layer
    assert ops["BOOTSTRAP"] == 2 and ops["POLYNOMIAL"] == 9 and ops["LINEAR_TRANSFORM"] == 4


@pytest.mark.slow
def test_full_program_bootstraps_twice_per_relu_but_the_first():
    # set IV leaves 9 levels after a bootstrap and a ReLU needs 14 (Lee et al.'s degrees
    # 15, 15, 27: depth 4 + 4 + 5, then the product): each ReLU after the first is split
    # once; a shallower network of the same layers keeps the tracing short
    p = r.full("SH", blocks=1)
    ops = Counter(n.op.name for n in p.ir.nodes)
    relus = 1 + 2 * 3
    assert ops["POLYNOMIAL"] == 3 * relus and ops["BOOTSTRAP"] == 2 * (relus - 1)
    assert p.params.bootstrap.slot_count(p.params.N) == r.SPARSE_SLOTS == 2**14
    image = next(n for n in p.ir.nodes if n.op.name == "INPUT")
    assert image.type.level == 17  # conv, ReLU (14), the next conv, ModRaise's level
    # every convolution runs at level 2, right above the bootstrap's ModRaise level
    assert {n.type.level for n in p.ir.nodes if n.op.name == "LINEAR_TRANSFORM"} - {17} == {2}


def test_a_packing_larger_than_the_bootstrap_period_is_refused():
    params = r.small_params(slots=64)
    with pytest.raises(fhec.ParameterError, match="slots=256"):
        r.build(params, channels=(2,), blocks=1, relu_degrees=(3, 3, 7), side=8)


def test_relu_stages_have_lee_et_al_degrees_and_stay_bounded():
    stages = r.sign_stages()
    assert [len(c) - 1 for c in stages] == list(r.RELU_DEGREES)
    assert all(np.abs(c).sum() <= 1 + 1e-12 for c in stages)
    assert all(not c[0::2].any() for c in stages)  # odd, as the steps they interpolate


def test_suite_rows_follow_the_convention():
    rows = r.suite_rows()
    assert {(row["target"], row["variant"]) for row in rows} == {
        (t, v) for t in ("osiris", "osiris-2tb") for v in ("NH", "SH", "DH")}
    for row in rows:
        assert row["suite"] == "osiris" and row["name"] == "ResNet-20" and callable(row["build"])
        assert row["paper_ms"] == r.OSIRIS_MS[row["target"]][row["variant"]]


def _set_split(signed):
    lo, span = signed[0], signed[-1] - signed[0] + 1
    best, best_cost = span, None
    for n1 in range(span, 0, -1):
        babies = {(k - lo) % n1 + lo for k in signed}
        giants = {k - ((k - lo) % n1 + lo) for k in signed}
        cost = len(babies - {0}) + len(giants - {0})
        if best_cost is None or cost < best_cost:
            best, best_cost = n1, cost
    return best


@given(st.integers(0, 2**32))
def test_vectorized_split_equals_the_set_definition(seed):
    rng = random.Random(seed)
    row = rng.choice([8, 64, 1024])
    steps = rng.sample(range(row), rng.randint(1, min(row, 40)))
    signed = tuple(sorted({signed_step(k, row) for k in steps}))
    assert _best_split(signed) == _set_split(signed)


def test_rotated_const_is_the_rotated_array_by_value():
    base = Const(np.arange(16.0))
    lazy = RotatedConst(base, 3, 8)
    stored = Const(np.roll(np.arange(16.0).reshape(2, 8), -3, axis=1).reshape(-1))
    assert lazy == stored and stored == lazy and hash(lazy) == hash(stored)
    assert "array" not in vars(lazy) and not lazy.array.flags.writeable  # nothing stored
    assert lazy == RotatedConst(base, 3 - 8, 8) and lazy != RotatedConst(base, 4, 8) and lazy != base
    assert lazy.abs_max() == 15.0 and lazy.shape == (16,)


def test_noise_estimate_saturates_instead_of_overflowing():
    from fhec.ir.he_types import NOISE_SATURATION_BITS, cipher

    params = fhec.CKKSParams.preset("bootstrap-toy")
    t = cipher(params, 3, 2.0**30, 2, 5000.0)  # 2**5000 overflows a float
    assert t.noise == 30 + NOISE_SATURATION_BITS
    assert cipher(params, 3, 2.0**30, 2, 12.5).noise == 12.5


def test_a_pickled_constant_does_not_carry_its_process_salted_hash():
    import pickle

    c = RotatedConst(Const(np.arange(8.0)), 1, 8)
    hash(c)
    back = pickle.loads(pickle.dumps(c))
    assert "_hash" not in vars(back) and back == c


@pytest.mark.slow
def test_small_variant_passes_fhec_check():
    from fhec.cli import check_program

    ok, lines = check_program(r.__file__, seed=0)
    assert ok, lines


@pytest.mark.slow
@pytest.mark.parametrize("target", ["tiny"])
def test_small_variant_streams_match_the_evaluator_on_every_limb(target):
    from fhec.verify_run import run_compiled_checked

    # bit identity does not need the small variant's 40-bit words and 2^36 scale; the sparse
    # bootstrap and the periodic packing are the small variant's
    literal = fhec.CKKSParams.preset("bootstrap-toy")
    params = r.small_params(scale_bits=literal.scale_bits, word_bits=literal.word_bits, min_precision_bits=None)
    p = r.build(params, "single", channels=(2,), blocks=1, relu_degrees=(3, 3, 7), side=8, name="resnet_toy")
    period = r.SMALL_SLOTS
    inputs = {"image": np.tile(np.random.default_rng(3).uniform(-1, 1, period), p.params.slots // period)}
    run_compiled_checked(fhec.compile(p, target), inputs, seed=5, check=True)


def test_split_for_is_the_cost_models_choice_and_fits_the_scratchpad():
    # a stage-3 layer's 1,575 diagonals at level 2, double hoisted on osiris: the fewest
    # rotations keep their giant-step sums over Q·P' (the residual basis's 5 special primes),
    # more than the scratchpad holds; split_for takes
    # best_n1's split among SPLIT_CANDIDATES, whose GSC working set fits
    from fhec.analysis.bsgs import gsc_working_set, n1_costs
    from fhec.backends.target import load_target
    from fhec.ir.he_recipes import bsgs_groups, bsgs_split
    from fhec.ir.he_types import row_length

    params = r.set_iv(40, "double")
    p = fhec.Program("t", params)
    x = p.input("x", level=2)
    rng = np.random.default_rng(0)
    steps = sorted({int(s) for s in rng.choice(np.arange(-8192, 8192), 1575, replace=False)})
    diagonals = {s % params.slots: np.ones(params.slots) for s in steps}
    n1 = r.split_for(x, diagonals, "double", "osiris")
    row = row_length(params)
    fewest = bsgs_split(sorted(diagonals), row)
    costs = n1_costs(sorted(diagonals), params, level=2, hoisting="double", target="osiris",
                     candidates=sorted({fewest, *r.SPLIT_CANDIDATES}))
    assert n1 == min(costs, key=lambda c: (c.cycles, c.rotations)).n1 != fewest
    osiris = load_target("osiris")
    L, alpha = params.limbs_at(2), params.alpha_at(2)
    giants = len(bsgs_groups(sorted(diagonals), row, n1)[2])
    assert gsc_working_set(L, alpha, giants, "double", 1) <= osiris.scratchpad_rvecs(params.N)
    assert gsc_working_set(L, alpha, len(bsgs_groups(sorted(diagonals), row, fewest)[2]), "double", 1) > \
        osiris.scratchpad_rvecs(params.N)


def test_a_targeted_build_changes_only_the_splits():
    # the same network, with n1 from the cost model instead of the fewest rotations: the
    # transforms read the same diagonals, and at least one split differs
    kw = dict(channels=(2,), blocks=1, relu_degrees=(3, 3, 7), side=8)
    plain = r.build(r.small_params(), "double", **kw)
    split = r.build(r.small_params(), "double", target="osiris-tiny", **kw)

    def transforms(p):
        return [n for n in p.ir.nodes if n.op.name == "LINEAR_TRANSFORM"]

    a, b = transforms(plain), transforms(split)
    assert [sorted(k for k, _, _ in n.attr("diagonals")) for n in a] == \
        [sorted(k for k, _, _ in n.attr("diagonals")) for n in b]
    assert all(n.attr("n1", None) is None for n in a)
    assert any(n.attr("n1", None) is not None for n in b)


def test_bootstrap_pair_is_two_bootstraps_at_the_cap_asked_for():
    ops = Counter(n.op.name for n in r.bootstrap_pair("DH").ir.nodes)
    assert ops["BOOTSTRAP"] == 2
    assert r.bootstrap_pair("DH", max_giant_steps=4).params.bootstrap.max_giant_steps == 4
    assert None in r.GIANT_STEP_CAPS


def test_a_giant_step_cap_applies_to_the_stages_asked_for():
    # double hoisting: one MOD_DOWN_EXT per giant step, so their count per stage is the sum of n2
    from fhec.passes.he_expand import expand

    def giant_steps(cap, stages):
        program = expand(r.bootstrap_pair("DH", 40, cap, stages).ir)
        return Counter(n.attr("stage", None) for n in program.nodes if n.op.name == "MOD_DOWN_EXT")

    both, cts_only, uncapped = giant_steps(2, ("cts", "stc")), giant_steps(2, ("cts",)), giant_steps(None, ("cts",))
    factors = 2 * 3  # two bootstraps of 3 CoeffsToSlots and 3 SlotsToCoeffs factors (set IV, sparse)
    assert both["cts"] == cts_only["cts"] <= 2 * factors and both["stc"] <= 2 * factors
    assert cts_only["stc"] == uncapped["stc"] > both["stc"]
    assert (r.cap_label(None), r.cap_label(4), r.cap_label(4, ("cts",))) == ("-", "4", "4 (CtS)")


@pytest.mark.slow
def test_targeted_splits_stream_match_the_evaluator_on_every_limb():
    from fhec.verify_run import run_compiled_checked

    # the cost model's splits (split_for on osiris-tiny) with double hoisting, on that target
    p = r.build(r.small_params(), "double", channels=(2,), blocks=1, relu_degrees=(3, 3, 7), side=8,
                name="resnet_toy", target="osiris-tiny")
    assert all(n.attr("n1", None) for n in p.ir.nodes if n.op.name == "LINEAR_TRANSFORM")
    period = r.SMALL_SLOTS
    inputs = {"image": np.tile(np.random.default_rng(3).uniform(-1, 1, period), p.params.slots // period)}
    run_compiled_checked(fhec.compile(p, "osiris-tiny"), inputs, seed=5, check=True)
