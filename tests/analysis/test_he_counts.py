"""The closed-form counts of `fhec.analysis.he_counts` equal what the lowering emits,
per HE node, on random programs (whole key switches and expanded ones, both methods,
every hoisting mode), and the modular-operation costs follow their documented forms."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

import fhec
import fhec.testing as ft
from fhec.analysis.counts import modular_multiplies
from fhec.analysis.he_counts import modular_ops, node_limb_counts, program_limb_counts
from fhec.evaluate import prepare
from fhec.ir.he import HeOp
from fhec.ir.limb_ops import LimbOp
from fhec.passes.he_keyswitch import expand_key_switches
from fhec.passes.keyswitch_choice import choose_methods
from fhec.passes.lower import lower


def _lowered_by_node(lowered) -> dict[int, Counter]:
    """Instructions per HE node, without the output copies (not counted by design)."""
    outputs = {n.id for n in lowered.he.nodes if n.op is HeOp.OUTPUT}
    return {node: Counter(c) for node, c in lowered.limb.counts_by_he_node().items() if node not in outputs}


def _assert_counts_match(program, methods, karatsuba=False):
    lowered = lower(program, methods, karatsuba=karatsuba)
    got = _lowered_by_node(lowered)
    for node in program.nodes:
        if node.op is HeOp.OUTPUT:
            continue
        want = +node_limb_counts(program, node, methods, karatsuba)
        assert want == got.get(node.id, Counter()), f"{node.op.value} (node {node.id}): {want} != {got.get(node.id)}"


@settings(deadline=None)
@given(
    ft.programs(scheme="ckks", max_depth=3) | ft.programs(scheme="bgv", max_depth=2),
    st.sampled_from(["hybrid", "bv"]),
    st.sampled_from(["whole", "none", "single", "auto"]),
    st.booleans(),
)
def test_closed_forms_equal_the_lowering(program, method, hoisting, karatsuba):
    prepared = prepare(program)
    methods = choose_methods(prepared, method)
    if hoisting == "whole":
        _assert_counts_match(prepared, methods, karatsuba)
    else:
        _assert_counts_match(expand_key_switches(prepared, methods, hoisting), "hybrid", karatsuba)


@pytest.mark.parametrize("karatsuba", [False, True])
def test_tensor_products_take_three_limb_products(karatsuba):
    """A square takes three products per limb whatever the choice; a product of two
    different ciphertexts takes four (schoolbook) or three (Karatsuba)."""
    params = fhec.CKKSParams(N=2**6, levels=2, scale_bits=26, word_bits=32, security=None, min_precision_bits=None)
    p = fhec.Program("t", params)
    x, y = p.input("x"), p.input("y")
    p.output("sq", x * x)
    p.output("xy", x * y)
    prepared = prepare(p)
    by_node = _lowered_by_node(lower(prepared, "hybrid", karatsuba=karatsuba))
    square, product = (n for n in prepared.nodes if n.op is HeOp.MUL)
    L = params.limbs_at(prepared.node(square.args[0]).type.level)
    assert by_node[square.id] == Counter({"MUL": 3 * L, "ADD": L})
    want = {"MUL": 3 * L, "ADD": 2 * L, "SUB": 2 * L} if karatsuba else {"MUL": 4 * L, "ADD": L}
    assert by_node[product.id] == Counter(want)


@pytest.mark.parametrize("special_primes", [1, 2, 3])
def test_whole_program_total_equals_the_lowering(special_primes):
    params = fhec.CKKSParams(N=2**6, levels=4, scale_bits=26, word_bits=32, special_primes=special_primes,
                             security=None, min_precision_bits=None)
    p = fhec.Program("t", params)
    x, w = p.input("x"), p.plain("w")
    y = (x * x * w).rotate(1) + x.rotate(3) + x.conjugate()
    p.output("y", y.rescale() if y.level == x.level else y)
    prepared = expand_key_switches(prepare(p), "hybrid", "auto")
    lowered = lower(prepared, "hybrid")
    total = Counter()
    for c in _lowered_by_node(lowered).values():
        total += c
    assert +program_limb_counts(prepared) == total


def test_modular_costs():
    """An (i)NTT of N words is N/2·log2 N butterflies (1 multiply, 2 additions each)."""
    N = 2**10
    assert modular_ops({"NTT": 1}, N) == (512 * 10, 1024 * 10)
    assert modular_ops({"INTT": 1}, N) == (512 * 10, 1024 * 10)
    assert modular_ops({"MUL": 2, "BCONV": 1, "MUL_CONST": 1, "ADD": 3, "AUT": 5}, N) == (4 * N, 3 * N)
    every = {op.name: 3 + i for i, op in enumerate(LimbOp)}
    assert modular_ops(every, N)[0] == modular_multiplies(every, N)  # one cost model for multiplies


@pytest.mark.parametrize("hoisting", ["none", "single", "double", "full"])
def test_closed_forms_equal_the_lowering_of_a_bootstrap(hoisting):
    """MOD_RAISE, MUL_MONOMIAL and the bootstrap's transforms and series, at a small ring."""
    config = fhec.BootstrapConfig(cts_depth=2, stc_depth=2, evalmod=fhec.EvalModConfig(degree=7, double_angle=1),
                                  hoisting=hoisting)
    params = fhec.CKKSParams(N=2**6, levels=config.depth(2**6) + 1, scale_bits=40, word_bits=60, special_primes=3,
                             security=None, min_precision_bits=None, bootstrap=config)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=0).bootstrap())
    prepared = prepare(p)
    expanded = expand_key_switches(prepared, "hybrid", "auto" if hoisting == "full" else hoisting)
    assert {HeOp.MOD_RAISE, HeOp.MUL_MONOMIAL} <= {n.op for n in expanded.nodes}
    _assert_counts_match(expanded, "hybrid")


@pytest.mark.parametrize("slots", [1, 4])
def test_closed_forms_equal_the_lowering_of_a_sparse_bootstrap(slots):
    """Sparse packing (`BootstrapConfig(slots=n)`): every node equals the lowering, and the
    SubSum stage is log2(N/2n) rotations at the top level (`rotation_counts`) plus their
    additions."""
    from fhec.analysis.counts import rotation_counts

    N = 2**6
    config = fhec.BootstrapConfig(slots=slots, cts_depth=2, stc_depth=2,
                                  evalmod=fhec.EvalModConfig(degree=7, double_angle=1, message_ratio_bits=4))
    params = fhec.CKKSParams(N=N, levels=config.depth(N) + 1, scale_bits=40, word_bits=60, special_primes=3,
                             security=None, min_precision_bits=None, bootstrap=config)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=0).bootstrap())
    expanded = expand_key_switches(prepare(p), "hybrid", "none")
    _assert_counts_match(expanded, "hybrid")
    subsum = sum((node_limb_counts(expanded, n, "hybrid") for n in expanded.nodes
                  if n.attr("stage", None) == "subsum"), Counter())
    L, steps = params.max_limbs, (N // (2 * slots)).bit_length() - 1
    want = Counter(rotation_counts(L, params.special_primes, steps)) + Counter(ADD=steps * 2 * L)
    assert +subsum == +want


def test_closed_forms_equal_the_lowering_of_a_composite_bootstrap():
    """EvalMod at a two-prime scale: its double rescales and ~2^60 constants count as lowered."""
    config = fhec.BootstrapConfig(cts_depth=2, stc_depth=2, hamming_weight=4, evalmod=fhec.EvalModConfig(
        K=4, degree=7, double_angle=1, arcsine_degree=3, scale_primes=2))
    params = fhec.CKKSParams(N=2**6, levels=config.depth(2**6) + 1, scale_bits=30, word_bits=32, special_primes=3,
                             security=None, min_precision_bits=None, bootstrap=config)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=1).bootstrap())
    expanded = expand_key_switches(prepare(p), "hybrid", "single")
    _assert_counts_match(expanded, "hybrid")


@pytest.mark.parametrize("expanded", [False, True])
def test_closed_forms_equal_the_lowering_of_double_hoisting(expanded):
    """The Q·P ops of double hoisting: rotate_ext (whole or in pieces), mul_const_ext,
    add_ext, ks_add_ext, mod_down_ext."""
    params = fhec.CKKSParams(N=2**6, levels=2, scale_bits=26, word_bits=32, special_primes=2, security=None,
                             min_precision_bits=None)
    p = fhec.Program("dh", params)
    x = p.input("x")
    diags = {k: [0.1 * (k + 1)] * params.slots for k in range(6)}
    p.output("y", x.linear_transform(diags, hoisting="double"))
    prepared = prepare(p)
    program = expand_key_switches(prepared, "hybrid", "auto") if expanded else prepared
    ops = {n.op for n in program.nodes}
    assert {HeOp.MUL_CONST_EXT, HeOp.ADD_EXT, HeOp.MOD_DOWN_EXT} <= ops
    assert (HeOp.KS_ADD_EXT if expanded else HeOp.ROTATE_EXT) in ops
    _assert_counts_match(program, "hybrid")


@pytest.mark.slow
def test_double_hoisted_bootstrap_is_bit_identical_small():
    """BootstrapConfig(hoisting="double") (the DFT's baby steps over Q·P): the limb program
    matches the eager evaluator on every limb and decrypts to the reference."""
    from fhec.testing import assert_matches_reference

    config = fhec.BootstrapConfig(hamming_weight=16, hoisting="double", evalmod=fhec.EvalModConfig(
        K=7, message_ratio_bits=2, arcsine_degree=3, double_angle=2))
    params = fhec.CKKSParams(N=2**8, levels=config.depth(2**8) + 3, scale_bits=30, word_bits=32, security=None,
                             bootstrap=config)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x").level_down(1).bootstrap())
    assert HeOp.ROTATE_EXT in {n.op for n in prepare(p).nodes}
    assert_matches_reference(p, target="limbs", seed=2)


@pytest.mark.slow
def test_fully_hoisted_bootstrap_is_bit_identical_small():
    """BootstrapConfig(hoisting="full"): each DFT factor's rotations off one decomposition,
    its mod-down merged with its rescale, and EvalMod's relinearizations merged with theirs
    (`fuse_mod_down_rescale`): the limb program matches the eager evaluator on every limb
    and decrypts to the reference."""
    from fhec.testing import assert_matches_reference

    config = fhec.BootstrapConfig(hamming_weight=16, hoisting="full", evalmod=fhec.EvalModConfig(
        K=7, message_ratio_bits=2, arcsine_degree=3, double_angle=2))
    params = fhec.CKKSParams(N=2**8, levels=config.depth(2**8) + 3, scale_bits=30, word_bits=32, security=None,
                             bootstrap=config)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x").level_down(1).bootstrap())
    ops = {n.op for n in prepare(p).nodes}
    assert {HeOp.ROTATE_EXT, HeOp.RELINEARIZE_EXT, HeOp.RESCALE_EXT} <= ops and HeOp.RELINEARIZE not in ops
    assert_matches_reference(p, target="limbs", seed=2)
