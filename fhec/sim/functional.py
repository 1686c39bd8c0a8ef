"""Functional model: execute a limb-level program on real residue vectors.

`execute` runs the instructions of a `LimbProgram` in array order with the op
semantics of `fhec.sim.semantics` (the table both executors share) and returns every
OUTPUT rvec. It never looks at priorities or at any schedule; the stream-level executor
checks those against this one.

Memory stays bounded by the program's live set, not its length: each value is
dropped right after its last reader (or right after it is produced, if nothing
reads it and it is not an OUTPUT). Consecutive independent instructions with the
same opcode (and, for AUT, the same Galois element) run as one batched kernel call
over a ``(k, N)`` array with one modulus per row.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb import LimbProgram, verify_limb_program
from fhec.ir.limb_ops import IMM_KIND, IS_LOADED, ImmKind, LimbOp, RVecClass
from fhec.sim.semantics import Operands, apply

__all__ = ["execute"]

_BATCH_WORDS = 1 << 16
"""Upper bound on words per batched kernel call (512 KB of uint64 per operand).

Measured on a key-switch program: batching gives 2.6x at N = 2^10 and 1.4x at
N = 2^12, but larger batches fall out of cache and lose to unbatched calls."""


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
        operands = Operands(
            a=a,
            b=b,
            moduli=row_moduli,
            src_moduli=tuple(moduli[m] for m in src_mod[start:end]),
            consts=constants[imm[start:end]] if IMM_KIND[first] == ImmKind.CONSTANT else constants[:0],
            galois=imm[start] if first == LimbOp.AUT else -1,
            N=program.N,
        )
        out = apply(first, operands)
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
