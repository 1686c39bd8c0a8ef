"""The semantics of every limb op: one table from `LimbOp` to its kernel, which both
executors use (`fhec.sim.functional` on the limb program, `fhec.sim.streams` on the
scheduled streams), so they cannot disagree on what an instruction computes.

An op reads k rows at once (one per instruction of a batch). Sources are residues of
the instruction's modulus m, except for the ops `fhec.ir.limb_ops.FOREIGN_SOURCE`
allows (NTT and BCONV), whose src0 may be a residue of another prime p: it is read as
its centered representative in (-p/2, p/2] reduced mod m (`fhec.ring.rns.lift_centered`),
exactly as the evaluator's key-switch digits and base conversions read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fhec.ir.limb_ops import FOREIGN_SOURCE, LimbOp
from fhec.ring import automorphism, modarith, ntt, rns


@dataclass(frozen=True)
class Operands:
    """The operands of k instructions of one op.

    Attributes:
        a: (k, N) src0 words (residues of `src_moduli`).
        b: (k, N) src1 words for binary ops, else None.
        moduli: per row, the instruction's prime m.
        src_moduli: per row, the prime src0's words are residues of.
        consts: per row, the constant C[imm] (MUL_CONST, BCONV, ADD_CONST), reduced mod m;
            else empty.
        galois: the Galois element (AUT), else -1.
        N: the ring degree.
    """

    a: np.ndarray
    b: np.ndarray | None
    moduli: tuple[int, ...]
    src_moduli: tuple[int, ...]
    consts: np.ndarray
    galois: int
    N: int

    @property
    def q(self) -> np.ndarray:
        return np.array(self.moduli, dtype=np.uint64)


Kernel = Callable[[np.ndarray, Operands], np.ndarray]
"""(src0 read mod m, operands) -> result rows."""

KERNELS: dict[LimbOp, Kernel] = {
    LimbOp.NTT: lambda a, o: ntt.ntt(a, o.moduli),
    LimbOp.INTT: lambda a, o: ntt.intt(a, o.moduli),
    LimbOp.MUL: lambda a, o: modarith.mul_mod(a, o.b, o.q),
    LimbOp.MUL_CONST: lambda a, o: modarith.mul_const_mod(a, o.consts, o.q),
    LimbOp.ADD: lambda a, o: modarith.add_mod(a, o.b, o.q),
    LimbOp.SUB: lambda a, o: modarith.sub_mod(a, o.b, o.q),
    LimbOp.NEG: lambda a, o: modarith.neg_mod(a, o.q),
    LimbOp.AUT: lambda a, o: automorphism.automorphism_ntt(a, o.galois, o.N),
    LimbOp.BCONV: lambda a, o: modarith.mul_const_mod(a, o.consts, o.q),
    LimbOp.ADD_CONST: lambda a, o: modarith.add_mod(a, np.broadcast_to(o.consts[:, None], a.shape).copy(), o.q),
}
"""What each op computes from its (already read) src0 and the other operands."""


def read_src0(op: LimbOp, o: Operands) -> np.ndarray:
    """src0 as residues of each row's modulus: the words themselves; for a foreign source
    of NTT or BCONV, their centered lift. (Other ops never read another prime's residue
    in a valid program; should a broken schedule make them, the words are reduced.)"""
    if o.src_moduli == o.moduli:
        return o.a
    if FOREIGN_SOURCE[op]:
        return rns.lift_centered(o.a, o.src_moduli, o.moduli)
    return modarith.reduce_mod(o.a, o.moduli)


def apply(op: LimbOp, o: Operands) -> np.ndarray:
    """The (k, N) results of k instructions of `op` on `o`."""
    return KERNELS[op](read_src0(op, o), o)
