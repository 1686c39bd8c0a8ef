"""Tests of the limb-level IR: builder, program views, verifier."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.errors import InternalError
from fhec.ir.limb import (
    LimbOp,
    LimbProgram,
    LimbProgramBuilder,
    RVecClass,
    verify_limb_program,
)

N = 16
Q0, Q1 = 97, 193  # both 1 mod 32


def small_program() -> LimbProgram:
    """out = INTT(NTT(x0) * NTT(x1 mod q1 -> q0)) + const, plus a key-switch-ish BCONV."""
    b = LimbProgramBuilder(N, 32, (Q0, Q1))
    xi = b.add_name(RVecClass.INPUT, "x")
    x = b.new_rvecs(RVecClass.INPUT, [0, 1], [[xi, 0, 0], [xi, 0, 1]])
    k = b.new_rvecs(RVecClass.KSH, 0, [b.add_name(RVecClass.KSH, "relin"), 0, 1, 0])
    w = b.new_rvecs(RVecClass.CONST, 0, [b.add_name(RVecClass.CONST, "w"), 0])
    c = b.add_constants([5, 96])
    t0 = b.emit_new(LimbOp.NTT, x[0], mod=0, he_node=1)
    t1 = b.emit_new(LimbOp.NTT, x[1], mod=0, he_node=1)  # reads a residue of q1
    m = b.emit_new(LimbOp.MUL, t0, t1, mod=0, he_node=1)
    mk = b.emit_new(LimbOp.MUL, m, k, mod=0, he_node=2)
    s = b.emit_new(LimbOp.ADD, mk, w, mod=0, he_node=2)
    bc = b.emit_new(LimbOp.BCONV, x[1], mod=0, imm=c[1], he_node=3)
    a = b.emit_new(LimbOp.AUT, s, mod=0, imm=5, he_node=3)
    out = b.new_rvecs(RVecClass.OUTPUT, 0, [b.add_name(RVecClass.OUTPUT, "y"), 0, 0])
    b.emit(LimbOp.SUB, out, a, bc, he_node=3)
    return b.build()


def with_columns(p: LimbProgram, **cols) -> LimbProgram:
    return dataclasses.replace(p, **cols)


def patched(p: LimbProgram, column: str, index: int, value) -> LimbProgram:
    arr = np.array(getattr(p, column))
    arr[index] = value
    return with_columns(p, **{column: arr})


def test_small_program_is_valid_and_described():
    p = small_program()
    verify_limb_program(p)
    assert len(p) == 8
    assert p.num_rvecs == 4 + 7 + 1
    assert repr(p) == "LimbProgram(N=16, 8 instructions, 12 rvecs, 2 moduli)"
    stats = p.stats()
    assert stats["ops"]["NTT"] == 2 and stats["ops"]["MUL"] == 2 and stats["ops"]["INTT"] == 0
    assert stats["rvecs_by_class"] == {"INPUT": 2, "KSH": 1, "CONST": 1, "INTERMEDIATE": 7, "OUTPUT": 1}
    assert stats["bytes"]["INPUT"] == 2 * N * 4
    assert stats["bytes"]["INTERMEDIATE"] == 7 * N * 4
    assert p.counts_by_he_node() == {1: {"NTT": 2, "MUL": 1}, 2: {"MUL": 1, "ADD": 1}, 3: {"BCONV": 1, "AUT": 1, "SUB": 1}}
    text = p.text()
    assert "NTT %1(x.p0.l1) @q0" in text
    assert "%11(out:y.p0.l0) = SUB" in text
    assert "ksh:relin.d0.c1.l0" in text
    assert "k=5" in text and "C[1]" in text
    assert "more" in p.text(limit=3) and len(p.text(limit=3).splitlines()) == 5


def test_program_views():
    p = small_program()
    assert p.rvec_ids(RVecClass.INPUT).tolist() == [0, 1]
    assert p.rvec_tags([0, 1, 2, 4, 11]).tolist() == [
        [0, 0, 0, -1],
        [0, 0, 1, -1],
        [0, 0, 1, 0],
        [-1, -1, -1, -1],
        [0, 0, 0, -1],
    ]
    assert p.name_table(RVecClass.KSH) == ("relin",)
    producer = p.producer()
    assert producer[:4].tolist() == [-1] * 4
    assert producer[p.dst].tolist() == list(range(len(p)))
    last = p.last_use()
    assert last[1] == 5  # x1 is read by the NTT (1) and the BCONV (5)
    assert last[11] == -1  # the output is never read
    assert p.prio.tolist() == list(range(len(p)))


def test_arrays_are_read_only():
    p = small_program()
    with pytest.raises(ValueError):
        p.dst[0] = 3
    with pytest.raises(ValueError):
        p.tags[0, 0] = 3


def test_instruction_columns_fit_in_40_bytes_per_instruction():
    p = small_program()
    cols = (p.op, p.dst, p.src0, p.src1, p.mod, p.imm, p.prio, p.he_node)
    assert sum(c.nbytes for c in cols) / len(p) < 40
    assert (p.rvec_class.nbytes + p.rvec_mod.nbytes) / p.num_rvecs <= 3


@pytest.mark.parametrize(
    "column, index, value, message",
    [
        ("dst", 1, 4, "writes an rvec that another instruction also writes"),
        ("dst", 0, 0, "writes a loaded"),
        ("src0", 2, 7, "src0 is not written by an earlier instruction"),
        ("mod", 0, 1, "dst modulus differs"),
        ("src1", 4, 1, "src1 modulus differs"),
        ("src0", 2, 1, "src0 modulus differs"),
        ("src1", 4, -1, "binary op needs src1"),
        ("src1", 6, 3, "unary op must have src1 = -1"),
        ("imm", 6, 4, "AUT Galois element must be odd"),
        ("imm", 6, 33, "AUT Galois element must be odd and in \\[1, 32\\)"),
        ("imm", 5, 2, "constant index out of range"),
        ("op", 0, 42, "unknown opcode"),
        ("mod", 0, 9, "modulus index out of range"),
    ],
)
def test_verifier_catches_each_violation(column, index, value, message):
    p = patched(small_program(), column, index, value)
    with pytest.raises(InternalError, match=message):
        verify_limb_program(p)


def test_verifier_names_the_instruction():
    p = patched(small_program(), "imm", 6, 4)
    with pytest.raises(InternalError, match=r"instruction 6 \(%10 = AUT %8 @q0, imm=4\)"):
        verify_limb_program(p)


def test_verifier_rejects_unreduced_constant():
    p = small_program()
    p = with_columns(p, constants=np.array([5, Q0], dtype=np.uint64))
    with pytest.raises(InternalError, match="constant is not reduced"):
        verify_limb_program(p)


def test_verifier_rejects_unwritten_intermediate():
    b = LimbProgramBuilder(N, 32, (Q0,))
    b.new_rvecs(RVecClass.INTERMEDIATE, [0])
    with pytest.raises(InternalError, match=r"rvec %0 \(INTERMEDIATE\): computed .* is never written"):
        verify_limb_program(b.build())


def test_verifier_rejects_bad_moduli_and_tags():
    p = small_program()
    with pytest.raises(InternalError, match="not 1 mod 2N"):
        verify_limb_program(with_columns(p, moduli=(Q0, 101)))
    with pytest.raises(InternalError, match="does not fit in a 32-bit word"):
        verify_limb_program(with_columns(p, moduli=(Q0, 2**32 + 1 + 32 * 3)))
    with pytest.raises(InternalError, match="name index out of range of key_names"):
        verify_limb_program(patched(p, "tags", 2, [1, 0, 1, 0]))
    with pytest.raises(InternalError, match="unused tag columns must be -1"):
        verify_limb_program(patched(p, "tags", 0, [0, 0, 0, 7]))
    with pytest.raises(InternalError, match="has no identity tag"):
        verify_limb_program(patched(p, "rvec_class", 5, RVecClass.OUTPUT))


def test_builder_rejects_malformed_tags():
    b = LimbProgramBuilder(N, 32, (Q0,))
    with pytest.raises(InternalError, match="KSH tags must have 4 columns"):
        b.new_rvecs(RVecClass.KSH, 0, [0, 0, 0])
    with pytest.raises(InternalError, match="carry no tags"):
        b.new_rvecs(RVecClass.INTERMEDIATE, 0, [0])


def test_explicit_priorities_and_scalar_emits_match_vectorized():
    def build(vectorized: bool) -> LimbProgram:
        b = LimbProgramBuilder(N, 32, (Q0,))
        b.add_name(RVecClass.INPUT, "x")
        x = b.new_rvecs(RVecClass.INPUT, np.zeros(3, int), [[0, 0, i] for i in range(3)])
        dst = b.new_rvecs(RVecClass.INTERMEDIATE, np.zeros(100, int))
        src = np.arange(100) % 3
        if vectorized:
            b.emit(LimbOp.NEG, dst, x[src], prio=np.arange(100)[::-1])
        else:
            for i in range(100):
                b.emit(LimbOp.NEG, dst[i], x[src[i]], prio=99 - i)
        return b.build()

    a, s = build(True), build(False)
    verify_limb_program(a)
    for col in ("op", "dst", "src0", "src1", "mod", "imm", "prio", "he_node", "rvec_class", "tags"):
        assert np.array_equal(getattr(a, col), getattr(s, col)), col
    assert a.prio[0] == 99


def test_million_instruction_vectorized_emission_verifies():
    n = 1_000_000
    b = LimbProgramBuilder(1 << 12, 32, (40961,))  # 40961 = 5 * 2^13 + 1
    x = b.new_rvecs(RVecClass.INPUT, [0, 0], [[b.add_name(RVecClass.INPUT, "x"), p, 0] for p in (0, 1)])
    chain = b.new_rvecs(RVecClass.INTERMEDIATE, np.zeros(n, dtype=np.int64))
    src0 = np.concatenate([x[:1], chain[:-1]])
    ops = np.where(np.arange(n) % 2 == 0, LimbOp.ADD, LimbOp.MUL)
    b.emit(ops, chain, src0, x[1], he_node=np.arange(n) // 1000)
    p = b.build()
    assert len(p) == n
    verify_limb_program(p)
    assert p.stats()["ops"]["ADD"] == n // 2
    assert len(p.counts_by_he_node()) == n // 1000
    # Break one dependence near the end: the verifier must see it.
    bad = patched(p, "src0", n - 10, chain[n - 5])
    with pytest.raises(InternalError, match=f"instruction {n - 10} "):
        verify_limb_program(bad)


@st.composite
def random_programs(draw):
    """Random valid DAGs over two moduli, built through the vectorized builder API."""
    b = LimbProgramBuilder(N, 32, (Q0, Q1))
    n_in = draw(st.integers(1, 4))
    ins = b.new_rvecs(RVecClass.INPUT, [i % 2 for i in range(n_in)], [[0, 0, i] for i in range(n_in)])
    b.add_name(RVecClass.INPUT, "x")
    cidx = b.add_constants([3, 4])
    avail = list(ins)
    for _ in range(draw(st.integers(0, 25))):
        op = draw(st.sampled_from(list(LimbOp)))
        s0 = draw(st.sampled_from(avail))
        mod = int(b.rvec_mod(s0))
        if op in (LimbOp.NTT, LimbOp.BCONV):
            mod = draw(st.integers(0, 1))
        same = [r for r in avail if int(b.rvec_mod(r)) == mod]
        s1 = draw(st.sampled_from(same)) if op in (LimbOp.MUL, LimbOp.ADD, LimbOp.SUB) else -1
        imm = {LimbOp.AUT: draw(st.sampled_from([1, 3, 5, 31])), LimbOp.MUL_CONST: cidx[0], LimbOp.BCONV: cidx[1],
               LimbOp.ADD_CONST: cidx[0]}
        avail.append(int(b.emit_new(op, s0, s1, mod=mod, imm=imm.get(op, -1))[0]))
    return b.build()


@settings(max_examples=50, deadline=None)
@given(random_programs(), st.data())
def test_random_programs_verify_and_reject_rewrites_of_inputs(p, data):
    verify_limb_program(p)
    assert p.text(limit=None).count("\n") == len(p)
    if len(p):
        i = data.draw(st.integers(0, len(p) - 1))
        with pytest.raises(InternalError, match="writes a loaded"):
            verify_limb_program(patched(p, "dst", i, 0))
