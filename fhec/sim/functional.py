"""Functional model: execute a limb-level program on real residue vectors.

`execute` is the executable definition of the limb IR's semantics (listed on
`fhec.ir.limb_ops.LimbOp`): it runs the instructions of a `LimbProgram` in array
order with the numpy/numba ring kernels of `fhec.ring` and returns every OUTPUT
rvec. It never looks at priorities or at any schedule; the stream-level executor
checks those against this one.

Memory stays bounded by the program's live set, not its length: each value is
dropped right after its last reader (or right after it is produced, if nothing
reads it and it is not an OUTPUT). Consecutive independent instructions with the
same opcode (and, for AUT, the same Galois element) run as one batched kernel call
over a ``(k, N)`` array with one modulus per row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb import LimbProgram, verify_limb_program
from fhec.ir.limb_ops import IS_LOADED, LimbOp, RVecClass
from fhec.ring import automorphism, modarith, ntt

__all__ = ["execute"]

_BATCH_WORDS = 1 << 16
"""Upper bound on words per batched kernel call (512 KB of uint64 per operand).

Measured on a key-switch program: batching gives 2.6x at N = 2^10 and 1.4x at
N = 2^12, but larger batches fall out of cache and lose to unbatched calls."""


@dataclass(frozen=True)
class _Operands:
    """The gathered operands of one batch of k instructions."""

    a: np.ndarray  # (k, N) src0 values
    b: np.ndarray | None  # (k, N) src1 values for binary ops
    moduli: tuple[int, ...]  # per row: the instruction's modulus
    q: np.ndarray  # the same as uint64
    consts: np.ndarray  # per row: C[imm] (MUL_CONST, BCONV), else empty
    k: int  # Galois element (AUT), else -1
    foreign: bool  # some src0 is a residue of another modulus
    N: int


def _ntt(o: _Operands) -> np.ndarray:
    a = modarith.reduce_mod(o.a, o.q) if o.foreign else o.a
    return ntt.ntt(a, o.moduli)


def _intt(o: _Operands) -> np.ndarray:
    return ntt.intt(o.a, o.moduli)


def _mul(o: _Operands) -> np.ndarray:
    return modarith.mul_mod(o.a, o.b, o.q)


def _add(o: _Operands) -> np.ndarray:
    return modarith.add_mod(o.a, o.b, o.q)


def _sub(o: _Operands) -> np.ndarray:
    return modarith.sub_mod(o.a, o.b, o.q)


def _neg(o: _Operands) -> np.ndarray:
    return modarith.neg_mod(o.a, o.q)


def _mul_const(o: _Operands) -> np.ndarray:
    # mul_const_mod accepts any uint64 `a`, so it also computes BCONV's
    # (a mod m) * c mod m for a residue `a` of another modulus.
    return modarith.mul_const_mod(o.a, o.consts, o.q)


def _aut(o: _Operands) -> np.ndarray:
    return automorphism.automorphism_ntt(o.a, o.k, o.N)


_KERNELS: dict[LimbOp, Callable[[_Operands], np.ndarray]] = {
    LimbOp.NTT: _ntt,
    LimbOp.INTT: _intt,
    LimbOp.MUL: _mul,
    LimbOp.MUL_CONST: _mul_const,
    LimbOp.ADD: _add,
    LimbOp.SUB: _sub,
    LimbOp.NEG: _neg,
    LimbOp.AUT: _aut,
    LimbOp.BCONV: _mul_const,
}


def execute(
    program: LimbProgram,
    inputs: Mapping[int, np.ndarray],
    *,
    verify: bool = True,
) -> dict[int, np.ndarray]:
    """Run `program` on `inputs`; return ``{output rvec id: uint64 array of length N}``.

    `inputs` maps every INPUT, KSH and CONST rvec id to its N words (residues mod
    that rvec's modulus, any integer dtype). Other keys are not allowed. With
    `verify` (the default) the program is first checked by `verify_limb_program`.

    Raises InternalError if the program is invalid, an input is missing or
    unexpected, has the wrong shape, or holds a value not below its modulus.
    Raises the ring kernels' errors (e.g. `InvalidModulusError` for a modulus of
    more than 62 bits) unchanged.
    """
    if verify:
        verify_limb_program(program)
    values: list[np.ndarray | None] = [None] * program.num_rvecs
    _load_inputs(program, inputs, values)

    n = len(program)
    free_order, free_start = _free_schedule(program)
    run_ends = _batch_runs(program)
    op, mod, src0, src1, dst, imm = (
        program.op.tolist(),
        program.mod.tolist(),
        program.src0.tolist(),
        program.src1.tolist(),
        program.dst.tolist(),
        program.imm.tolist(),
    )
    src_mod = program.rvec_mod[program.src0].tolist() if n else []
    moduli = program.moduli
    constants = program.constants

    start = 0
    for end in run_ends:
        first = LimbOp(op[start])
        row_moduli = tuple(moduli[m] for m in mod[start:end])
        a = np.stack([values[s] for s in src0[start:end]])
        b = np.stack([values[s] for s in src1[start:end]]) if src1[start] >= 0 else None
        operands = _Operands(
            a=a,
            b=b,
            moduli=row_moduli,
            q=np.array(row_moduli, dtype=np.uint64),
            consts=constants[imm[start:end]] if first in (LimbOp.MUL_CONST, LimbOp.BCONV) else constants[:0],
            k=imm[start] if first == LimbOp.AUT else -1,
            foreign=src_mod[start:end] != mod[start:end],  # list inequality: any row differs
            N=program.N,
        )
        out = _KERNELS[first](operands)
        if end - start == 1:
            values[dst[start]] = out[0]
        else:
            # Copy rows so that one long-lived row does not pin the whole batch.
            for r, d in enumerate(dst[start:end]):
                values[d] = out[r].copy()
        for rvec in free_order[free_start[start] : free_start[end]]:
            values[rvec] = None
        start = end

    return {int(r): values[r] for r in program.rvec_ids(RVecClass.OUTPUT).tolist()}


def _load_inputs(program: LimbProgram, inputs: Mapping[int, np.ndarray], values: list) -> None:
    loaded = np.flatnonzero(IS_LOADED[program.rvec_class])
    given = {int(r) for r in inputs}
    missing = sorted(set(loaded.tolist()) - given)
    if missing:
        labels = ", ".join(program.rvec_label(r) for r in missing[:5])
        raise InternalError(f"execute: no value for {len(missing)} loaded rvec(s), e.g. {labels}")
    extra = sorted(given - set(loaded.tolist()))
    if extra:
        raise InternalError(f"execute: inputs given for rvecs that are not INPUT/KSH/CONST, e.g. %{extra[0]}")
    q_of = program.moduli_array[program.rvec_mod]
    for r in loaded.tolist():
        arr = np.asarray(inputs[r])
        if arr.shape != (program.N,):
            raise InternalError(f"execute: {program.rvec_label(r)} has shape {arr.shape}, expected ({program.N},)")
        if arr.dtype.kind not in "ui" or (arr.size and (arr.min() < 0 or arr.max() >= q_of[r])):
            raise InternalError(f"execute: {program.rvec_label(r)} holds values that are not residues mod {q_of[r]}")
        values[r] = arr.astype(np.uint64, copy=False)


def _free_schedule(program: LimbProgram) -> tuple[list[int], list[int]]:
    """Rvecs to drop after each instruction: ``order[start[i]:start[i+1]]`` are the
    rvecs whose last use is instruction i (dead intermediates: their producer)."""
    n = len(program)
    free_at = program.last_use().astype(np.int64)
    cls = program.rvec_class
    dead = (free_at < 0) & (cls == RVecClass.INTERMEDIATE)
    free_at[dead] = program.producer()[dead]
    free_at[cls == RVecClass.OUTPUT] = -1
    order = np.argsort(free_at, kind="stable")
    start = np.searchsorted(free_at[order], np.arange(n + 1), side="left")
    return order.tolist(), start.tolist()


def _batch_runs(program: LimbProgram) -> list[int]:
    """Exclusive end index of each batch: maximal runs of instructions with equal op
    (and Galois element for AUT) where no instruction reads a value written inside
    the run, capped at `_BATCH_WORDS` words per operand."""
    n = len(program)
    if n == 0:
        return []
    cap = max(1, _BATCH_WORDS // program.N)
    imm_key = np.where(program.op == LimbOp.AUT, program.imm, 0)
    key_change = np.ones(n, dtype=bool)
    key_change[1:] = (program.op[1:] != program.op[:-1]) | (imm_key[1:] != imm_key[:-1])
    producer = program.producer()
    p0 = producer[program.src0].tolist()
    p1 = np.where(program.src1 >= 0, producer[np.maximum(program.src1, 0)], -1).tolist()
    change = key_change.tolist()
    ends = []
    run_start = 0
    for i in range(1, n):
        if change[i] or p0[i] >= run_start or p1[i] >= run_start or i - run_start >= cap:
            ends.append(i)
            run_start = i
    ends.append(n)
    return ends
