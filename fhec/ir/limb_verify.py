"""The verifier of the limb-level IR (its encoding is specified in `fhec.ir.limb`).

Run after lowering and after any pass that rewrites a `LimbProgram`. Every check is
a handful of numpy operations over whole columns, so verification of 10^6
instructions takes well under a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb_ops import (
    ARITY,
    FOREIGN_SOURCE,
    IMM_KIND,
    IS_LOADED,
    NAME_TABLE_FIELD,
    NUM_OPS,
    TAG_FIELDS,
    TAG_WIDTH,
    ImmKind,
    LimbOp,
    RVecClass,
)

if TYPE_CHECKING:
    from fhec.ir.limb import LimbProgram

def verify_limb_program(p: LimbProgram) -> None:
    """Check every invariant of the limb IR; return None or raise InternalError.

    Checked: N is a power of two; moduli are distinct primes-to-be (not tested for
    primality) below ``2**word_bits`` and congruent to 1 mod 2N; rvec classes,
    moduli and tags are well formed (tagged = exactly the non-INTERMEDIATE rvecs,
    tag indices inside their name tables); opcodes and modulus indices exist;
    arity per op; SSA (each INTERMEDIATE/OUTPUT rvec written by exactly one
    instruction, INPUT/KSH/CONST never written, every source loaded or written by
    an earlier instruction in array order); ``rvec_mod[dst] == mod``; sources have
    the instruction's modulus except for NTT and BCONV; AUT's imm is odd in
    [1, 2N); MUL_CONST's, BCONV's and ADD_CONST's imm index the constant table and that constant
    is reduced mod the instruction's modulus. The message names the first offending
    instruction or rvec and how many violate the same rule.
    """
    _check_scalars(p)
    _check_rvecs(p)
    _check_instructions(p)


def _fail(what: str, bad: np.ndarray, describe) -> None:
    """Raise for the first True in `bad` (if any), with a count of all offenders."""
    idx = np.flatnonzero(bad)
    if len(idx):
        more = f" ({len(idx)} in total)" if len(idx) > 1 else ""
        raise InternalError(f"invalid limb program: {describe(int(idx[0]))}: {what}{more}")


def _check_scalars(p: LimbProgram) -> None:
    N = p.N
    if N < 1 or N & (N - 1):
        raise InternalError(f"invalid limb program: N={N} is not a power of two")
    if not p.moduli:
        raise InternalError("invalid limb program: no moduli")
    if len(set(p.moduli)) != len(p.moduli):
        raise InternalError(f"invalid limb program: moduli are not distinct: {p.moduli}")
    for i, q in enumerate(p.moduli):
        if not 2 <= q < 2**p.word_bits:
            raise InternalError(
                f"invalid limb program: modulus q{i}={q} does not fit in a {p.word_bits}-bit word"
            )
        if q % (2 * N) != 1:
            raise InternalError(
                f"invalid limb program: modulus q{i}={q} is not 1 mod 2N={2 * N} (no negacyclic NTT)"
            )


def _check_rvecs(p: LimbProgram) -> None:
    def rvec(i: int) -> str:
        return f"rvec %{i}"

    _fail("unknown rvec class", p.rvec_class >= len(RVecClass), rvec)
    _fail(f"modulus index out of range (have {len(p.moduli)} moduli)", p.rvec_mod >= len(p.moduli), rvec)

    expected = np.flatnonzero(p.rvec_class != RVecClass.INTERMEDIATE)
    if not np.array_equal(p.tagged, expected):
        missing = np.setdiff1d(expected, p.tagged)
        if len(missing):
            raise InternalError(
                f"invalid limb program: rvec %{missing[0]} "
                f"({RVecClass(int(p.rvec_class[missing[0]])).name}) has no identity tag"
            )
        raise InternalError("invalid limb program: `tagged` must list exactly the non-INTERMEDIATE rvecs, ascending")
    tag_cls = p.rvec_class[p.tagged]
    for cls, field in NAME_TABLE_FIELD.items():
        rows = tag_cls == cls
        if not rows.any():
            continue
        tags = p.tags[rows]
        ids = p.tagged[rows]
        width = len(TAG_FIELDS[cls])
        names = getattr(p, field)

        def tagged(i: int, ids=ids, cls=cls) -> str:
            return f"rvec %{ids[i]} ({cls.name}, tag {p.tags[np.searchsorted(p.tagged, ids[i])].tolist()})"

        _fail(f"negative tag field, fields are {TAG_FIELDS[cls]}", (tags[:, :width] < 0).any(axis=1), tagged)
        _fail("unused tag columns must be -1", (tags[:, width:TAG_WIDTH] != -1).any(axis=1), tagged)
        _fail(f"name index out of range of {field} (length {len(names)})", tags[:, 0] >= len(names), tagged)


def _check_instructions(p: LimbProgram) -> None:
    n, R = len(p), p.num_rvecs
    if n == 0:
        _check_outputs_written(p, np.zeros(R, dtype=np.int64))
        return

    def instr(i: int) -> str:
        op = int(p.op[i])
        name = LimbOp(op).name if op < NUM_OPS else f"op#{op}"
        srcs = ", ".join(f"%{s}" for s in (p.src0[i], p.src1[i]) if s >= 0)
        return f"instruction {i} (%{p.dst[i]} = {name} {srcs} @q{p.mod[i]}, imm={p.imm[i]})"

    _fail("unknown opcode", p.op >= NUM_OPS, instr)
    _fail(f"modulus index out of range (have {len(p.moduli)} moduli)", p.mod >= len(p.moduli), instr)
    _fail(f"dst out of range [0, {R})", (p.dst < 0) | (p.dst >= R), instr)
    arity = ARITY[p.op]
    _fail(f"src0 out of range [0, {R})", (p.src0 < 0) | (p.src0 >= R), instr)
    two = arity == 2
    _fail(f"binary op needs src1 in [0, {R})", two & ((p.src1 < 0) | (p.src1 >= R)), instr)
    _fail("unary op must have src1 = -1", ~two & (p.src1 != -1), instr)

    # SSA: one writer per computed rvec, none for loaded ones.
    writes = np.bincount(p.dst, minlength=R)
    loaded = IS_LOADED[p.rvec_class]
    _fail("writes a loaded (INPUT/KSH/CONST) rvec", loaded[p.dst], instr)
    producer = p.producer()
    _fail(
        "writes an rvec that another instruction also writes (not SSA)",
        (writes[p.dst] > 1) & (producer[p.dst] != np.arange(n)),
        instr,
    )
    _check_outputs_written(p, writes)

    idx = np.arange(n)
    for name, src, present in (("src0", p.src0, np.ones(n, bool)), ("src1", p.src1, two)):
        s = np.where(present, src, 0)
        early = present & ~loaded[s] & (producer[s] >= idx)
        _fail(f"{name} is not written by an earlier instruction", early, instr)

    _fail("dst modulus differs from the instruction's modulus", p.rvec_mod[p.dst] != p.mod, instr)
    same_mod = ~FOREIGN_SOURCE[p.op]
    _fail(
        "src0 modulus differs from the instruction's (only NTT and BCONV may read another modulus)",
        same_mod & (p.rvec_mod[p.src0] != p.mod),
        instr,
    )
    _fail(
        "src1 modulus differs from the instruction's",
        two & (p.rvec_mod[np.where(two, p.src1, 0)] != p.mod),
        instr,
    )

    kind = IMM_KIND[p.op]
    galois = kind == ImmKind.GALOIS
    imm = p.imm.astype(np.int64)
    _fail(
        f"AUT Galois element must be odd and in [1, {2 * p.N})",
        galois & ((imm < 1) | (imm >= 2 * p.N) | (imm % 2 == 0)),
        instr,
    )
    const = kind == ImmKind.CONSTANT
    nc = len(p.constants)
    _fail(f"constant index out of range [0, {nc})", const & ((imm < 0) | (imm >= nc)), instr)
    if const.any():
        c = p.constants[np.where(const, imm, 0)] if nc else np.zeros(n, np.uint64)
        _fail("constant is not reduced mod the instruction's modulus", const & (c >= p.moduli_array[p.mod]), instr)


def _check_outputs_written(p: LimbProgram, writes: np.ndarray) -> None:
    computed = ~IS_LOADED[p.rvec_class]
    _fail(
        "computed (INTERMEDIATE/OUTPUT) rvec is never written",
        computed & (writes == 0),
        lambda i: f"rvec %{i} ({RVecClass(int(p.rvec_class[i])).name})",
    )
