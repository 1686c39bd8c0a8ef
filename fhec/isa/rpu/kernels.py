"""Stand-alone B512 kernels: one NTT or INTT of one limb, memory to memory, compiled by
the same passes as whole programs (the paper's Fig. 9 experiment; `benchmarks/bench_rpu.py`).
"""

from __future__ import annotations

import math

from fhec.backends.machine import IsaMachine
from fhec.ir.limb import LimbProgramBuilder
from fhec.ir.limb_ops import LimbOp, RVecClass
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Encoded

__all__ = ["transform_program", "compile_transform", "theoretical_cycles"]


def transform_program(N: int, q: int, inverse: bool = False) -> LoweredProgram:
    """The limb program ``y = NTT(x)`` (or INTT) for one prime `q`: x loaded, y stored."""
    b = LimbProgramBuilder(N, 64, (q,))
    x = b.new_rvecs(RVecClass.INPUT, 0, [b.add_name(RVecClass.INPUT, "x"), 0, 0])[0]
    y = b.new_rvecs(RVecClass.OUTPUT, 0, [b.add_name(RVecClass.OUTPUT, "y"), 0, 0])[0]
    b.emit(LimbOp.INTT if inverse else LimbOp.NTT, y, x)
    limb = b.build()
    return LoweredProgram(limb, None, {}, {}, {}, {}, {})


def compile_transform(machine: IsaMachine, N: int, q: int, inverse: bool = False) -> Encoded:
    """`transform_program` through the rpu backend's four passes."""
    from fhec.isa.rpu import BACKEND

    lowered = transform_program(N, q, inverse)
    sel = BACKEND.select(lowered, machine)
    return BACKEND.encode(BACKEND.schedule(BACKEND.allocate(sel, machine), machine), machine)


def theoretical_cycles(N: int, hples: int) -> float:
    """The paper's ideal NTT time in cycles (§VI-G): N log2 N / HPLEs."""
    return N * math.log2(N) / hples
