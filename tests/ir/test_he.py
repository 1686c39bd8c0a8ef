"""The HE IR data structures, the verifier and the JSON round trip."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given

import fhec
from fhec.passes.he_expand import expand
from fhec.passes.he_fuse_rescale import fuse_mod_down_rescale
from fhec.passes.he_keyswitch import expand_key_switches
import fhec.testing as ft
from fhec.errors import InternalError
from fhec.ir.he import Const, HeOp, HeProgram, RotatedConst, SparseConst, compact_const
from fhec.ir.he_verify import verify_he

CKKS = fhec.CKKSParams(N=2**6, levels=3, base_limbs=2, security=None)
BGV = fhec.BGVParams(N=2**6, levels=3, plain_modulus=257, security=None)


def every_op_program(params) -> fhec.Program:
    """A program using every DSL operation of the scheme (and so every HeOp)."""
    p = fhec.Program("every", params)
    x, y, w = p.input("x"), p.input("y", level=params.top_level - 1), p.plain("w")
    a = x * y + x * w - w + (x - 3) + np.arange(4) - (-x) + w
    b = a.rotate(3) + (a.conjugate() if params.scheme == "ckks" else a.swap_rows())
    c = b.sum_slots(4) + x.linear_transform(np.eye(4, dtype=np.int64)) + x.polynomial([1, 2, 1])
    c = c + x.linear_transform(np.ones((4, 4), dtype=np.int64), hoisting="double")
    p.output("c", c)
    p.output("d", x.mod_switch() * 2)
    p.output("e", (x * y) * x + x.mod_switch())  # BGV: plaintext factors differ, aligned by mul_factor
    return p


@pytest.fixture(params=[CKKS, BGV], ids=["ckks", "bgv"])
def program(request):
    return every_op_program(request.param)


def test_const_compares_and_hashes_by_value():
    a, b = Const(np.arange(4.0)), Const(np.arange(4.0))
    assert a == b and hash(a) == hash(b)
    assert a != Const(np.arange(4)) and a != Const(np.arange(5.0))
    with pytest.raises(ValueError):
        a.array[0] = 1.0  # read-only


def test_rotations_of_one_constant_hash_apart():
    """Masks are rotations of one vector; hashing them alike made every dict lookup of a
    mask compare arrays with all the others (quadratic lowering of LoLa-CIFAR)."""
    from fhec.ir.he import RotatedConst

    one_hot = [Const(np.eye(64)[i]) for i in range(64)]
    assert len({hash(c) for c in one_hot}) == 64
    lazy = RotatedConst(one_hot[0], -5, 64)
    assert lazy == one_hot[5] and hash(lazy) == hash(one_hot[5]) and "array" not in vars(lazy)


def test_sparse_const_is_its_dense_values():
    """A mostly-zero vector is stored as positions and values; it reads, compares,
    hashes, bounds, rotates and pickles as the dense `Const` of the same values."""
    import pickle

    dense = np.zeros(64)
    dense[[3, 17, 40]] = [1.5, -2.25, 0.5]
    c = compact_const(dense)
    assert isinstance(c, SparseConst) and c.values.size == 3
    assert np.array_equal(c.array, dense) and not c.array.flags.writeable and c.shape == (64,)
    assert c == Const(dense) and Const(dense) == c and hash(c) == hash(Const(dense))
    assert c.abs_max() == 2.25
    assert RotatedConst(c, 5, 64) == Const(np.roll(dense, -5))
    back = pickle.loads(pickle.dumps(c))
    assert back == c and np.array_equal(back.array, dense)
    assert c != compact_const(np.where(dense == 0.5, 0.25, dense))
    full = np.arange(1.0, 65.0)  # more than half nonzero: dense
    assert type(compact_const(full)) is Const and compact_const(full) == Const(full)


def test_nodes_and_programs_are_immutable(program):
    ir = program.ir
    with pytest.raises(dataclasses.FrozenInstanceError):
        ir.nodes[0].op = HeOp.NEG
    with pytest.raises(dataclasses.FrozenInstanceError):
        ir.name = "other"


def test_program_lookups(program):
    ir = program.ir
    assert list(ir.inputs) == ["x", "y"] and list(ir.plain_inputs) == ["w"]
    assert list(ir.outputs) == ["c", "d", "e"]
    g = ir.graph()
    assert g.number_of_nodes() == len(ir.nodes)
    users = ir.users()
    assert all(n.id in users[a] for n in ir.nodes for a in n.args)
    assert ir.node(ir.outputs["c"]).type.is_cipher


def bootstrap_program(hoisting=None):
    """A bootstrap (BOOTSTRAP; MOD_RAISE and MUL_MONOMIAL in its expansion; with
    hoisting="full", the Q·P ops and, after `fuse_mod_down_rescale`, the merged ones, and
    sparse-secret encapsulation's SWITCH_SECRET)."""
    cfg = fhec.BootstrapConfig(hamming_weight=4, hoisting=hoisting,
                               ephemeral_hamming_weight=None if hoisting is None else 4,
                               evalmod=fhec.EvalModConfig(degree=15, double_angle=1, arcsine_degree=0))
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 1, security=None, bootstrap=cfg)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=1).bootstrap())
    return p


def test_every_op_appears_in_the_expanded_programs():
    seen = set()
    for p in (every_op_program(CKKS), every_op_program(BGV), bootstrap_program(), bootstrap_program("full")):
        expanded = fuse_mod_down_rescale(expand(p))
        pieces = expand_key_switches(expanded, "hybrid")
        seen |= {n.op for n in p.ir.nodes} | {n.op for n in expanded.nodes} | {n.op for n in pieces.nodes}
    assert seen == set(HeOp)


@pytest.mark.parametrize("hoisting", [None, "full"])
def test_expanded_bootstrap_round_trips_through_json(hoisting):
    expanded = fuse_mod_down_rescale(expand(bootstrap_program(hoisting)))  # complex DFT diagonals, a BootstrapConfig
    assert any(isinstance(v, Const) and v.array.dtype == np.complex128
               for n in expanded.nodes for _, v in n.attrs)
    assert HeProgram.from_json(expanded.to_json()) == expanded


def test_json_round_trip(program):
    text = program.to_json()
    back = fhec.Program.from_json(text)
    assert back == program
    assert back.ir == program.ir and str(back) == str(program)
    assert json.loads(text)["format"] == "fhec.he/1"
    expanded = expand(program)
    assert HeProgram.from_json(expanded.to_json()) == expanded
    for method in ("bv", "hybrid"):
        pieces = expand_key_switches(expanded, method)
        assert HeProgram.from_json(pieces.to_json()) == pieces


@given(ft.programs(scheme="ckks", max_depth=3))
def test_json_round_trip_random_ckks(p):
    assert fhec.Program.from_json(p.to_json()) == p


@given(ft.programs(scheme="bgv", max_depth=3))
def test_json_round_trip_random_bgv(p):
    assert fhec.Program.from_json(p.to_json()) == p


def test_from_json_continues_tracing(program):
    back = fhec.Program.from_json(program.to_json())
    from fhec.frontend.values import Cipher

    c = Cipher(back, back.ir.outputs["c"])
    back.output("f", c + 1)
    assert list(back.ir.outputs) == ["c", "d", "e", "f"]


def _corrupt(ir: HeProgram, index: int, **changes) -> HeProgram:
    nodes = list(ir.nodes)
    nodes[index] = dataclasses.replace(nodes[index], **changes)
    return dataclasses.replace(ir, nodes=tuple(nodes))


def test_verifier_accepts_traced_programs(program):
    assert verify_he(program.ir) is program.ir


@pytest.mark.parametrize(
    "corruption",
    [
        lambda ir, i: _corrupt(ir, i, args=(i + 5,)),                         # argument defined later
        lambda ir, i: _corrupt(ir, i, type=dataclasses.replace(ir.nodes[i].type, level=0)),  # wrong type
        lambda ir, i: _corrupt(ir, i, op=HeOp.MUL),                           # arity
        lambda ir, i: _corrupt(ir, 1, attrs=(("level", 2), ("name", "x"))),   # duplicate input name
        lambda ir, i: _corrupt(ir, i, args=(2,)),                             # the plain input as a ciphertext
        lambda ir, i: dataclasses.replace(ir, options=dataclasses.replace(ir.options, rescale="never")),
    ],
    ids=["forward-arg", "wrong-type", "arity", "dup-name", "plain-as-cipher", "options"],
)
def test_verifier_rejects_corrupted_programs(program, corruption):
    ir = program.ir
    neg = next(n for n in ir.nodes if n.op is HeOp.NEG)
    with pytest.raises(InternalError) as e:
        verify_he(corruption(ir, ir.nodes.index(neg)))
    assert "invalid HE program" in str(e.value)


def test_verifier_enforces_the_primitive_contract():
    """An ADD of operands at different levels is not a primitive (the builder aligns them)."""
    p = fhec.Program("c", CKKS)
    x = p.input("x")
    y = x * x
    z = y + x
    ir = p.ir
    add = ir.node(z.id)
    bad = _corrupt(ir, ir.nodes.index(add), args=(y.id, x.id))
    with pytest.raises(InternalError, match="levels"):
        verify_he(bad)


def test_from_json_rejects_garbage():
    # A malformed document is the user's input, not fhec's bug: ProgramFormatError, not InternalError.
    with pytest.raises(fhec.ProgramFormatError, match="format"):
        HeProgram.from_json('{"format": "something else"}')
    with pytest.raises(fhec.ProgramFormatError, match="options"):
        HeProgram.from_json('{"format": "fhec.he/1", "nodes": []}')
