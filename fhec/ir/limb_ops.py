"""The opcodes and rvec classes of the limb-level IR, with their per-op rule tables.

Each `LimbOp` is declared once here together with the facts every consumer needs
(arity, whether its source may be a residue of another modulus, what its immediate
means), as numpy tables indexed by the opcode so the verifier, the functional
executor and the schedulers read the same rules vectorized. The layout of a whole
program is documented in `fhec.ir.limb`.
"""

from __future__ import annotations

import enum

import numpy as np


class LimbOp(enum.IntEnum):
    """One operation on residue vectors (RVecs) of N words mod one prime m.

    m is ``moduli[mod]`` of the instruction. Sources are residues of m, except that NTT
    and BCONV may read a residue of a *different* prime p (F1 Listing 1, line 8:
    ``NTT(y[i], q_j)``): it is read as its centered representative in (-p/2, p/2],
    reduced mod m (one comparison and one conditional subtraction per element;
    `fhec.ring.rns.lift_centered`, `fhec.sim.semantics`).

    NTT        dst = ntt(src0 read mod m): negacyclic, coefficient -> evaluation domain
    INTT       dst = intt(src0): evaluation -> coefficient domain
    MUL        dst = src0 * src1
    MUL_CONST  dst = src0 * C[imm]         (C = constant table, C[imm] < m)
    ADD        dst = src0 + src1
    SUB        dst = src0 - src1
    NEG        dst = -src0
    AUT        dst = sigma_imm(src0) on the evaluation (NTT) domain; imm odd in [1, 2N)
    BCONV      dst = (src0 read mod m) * C[imm]  (one term of a fast base conversion;
               the lowering sums the terms with ADD)
    ADD_CONST  dst = src0 + C[imm]          (a scalar constant added to every word: a
               CKKS/BGV scalar plaintext is a constant polynomial, the same number at
               every NTT evaluation point, so it needs one word per limb, not N)
    """

    NTT = 0
    INTT = 1
    MUL = 2
    MUL_CONST = 3
    ADD = 4
    SUB = 5
    NEG = 6
    AUT = 7
    BCONV = 8
    ADD_CONST = 9


class RVecClass(enum.IntEnum):
    """What an rvec is, which decides whether it is loaded or computed and what its
    identity tag means (tag columns, -1 = unused):

    INPUT         loaded; (input_index, poly, limb)          a ciphertext input limb
    KSH           loaded; (key_index, digit, component, limb) a key-switch hint limb
    CONST         loaded; (const_index, limb)                 a plaintext-constant limb
    INTERMEDIATE  computed; no tag (all -1)
    OUTPUT        computed and read out at the end; (output_index, poly, limb)
    """

    INPUT = 0
    KSH = 1
    CONST = 2
    INTERMEDIATE = 3
    OUTPUT = 4


class ImmKind(enum.IntEnum):
    """What the `imm` column of an instruction holds."""

    NONE = 0
    GALOIS = 1  # an odd Galois element k in [1, 2N)
    CONSTANT = 2  # an index into the program's constant table


TAG_WIDTH = 4
"""Number of int64 identity-tag columns per tagged rvec (KSH needs all four)."""

NUM_OPS = len(LimbOp)

ARITY = np.zeros(NUM_OPS, dtype=np.int8)
"""Number of sources (1 or 2) per opcode."""

FOREIGN_SOURCE = np.zeros(NUM_OPS, dtype=bool)
"""True for ops whose src0 may be a residue of another modulus (reduced first)."""

IMM_KIND = np.zeros(NUM_OPS, dtype=np.int8)
"""`ImmKind` per opcode."""

for _op in LimbOp:
    ARITY[_op] = 2 if _op in (LimbOp.MUL, LimbOp.ADD, LimbOp.SUB) else 1
    FOREIGN_SOURCE[_op] = _op in (LimbOp.NTT, LimbOp.BCONV)
    IMM_KIND[_op] = {
        LimbOp.AUT: ImmKind.GALOIS,
        LimbOp.MUL_CONST: ImmKind.CONSTANT,
        LimbOp.BCONV: ImmKind.CONSTANT,
        LimbOp.ADD_CONST: ImmKind.CONSTANT,
    }.get(_op, ImmKind.NONE)
del _op
for _table in (ARITY, FOREIGN_SOURCE, IMM_KIND):
    _table.flags.writeable = False
del _table

LOADED_CLASSES = (RVecClass.INPUT, RVecClass.KSH, RVecClass.CONST)
"""Rvec classes that are loaded data: available from the start, never written."""

IS_LOADED = np.zeros(len(RVecClass), dtype=bool)
IS_LOADED[list(LOADED_CLASSES)] = True
IS_LOADED.flags.writeable = False

TAG_FIELDS: dict[RVecClass, tuple[str, ...]] = {
    RVecClass.INPUT: ("input_index", "poly", "limb"),
    RVecClass.KSH: ("key_index", "digit", "component", "limb"),
    RVecClass.CONST: ("const_index", "limb"),
    RVecClass.INTERMEDIATE: (),
    RVecClass.OUTPUT: ("output_index", "poly", "limb"),
}
"""Meaning of the leading tag columns per class; the remaining columns are -1."""

NAME_TABLE_FIELD: dict[RVecClass, str] = {
    RVecClass.INPUT: "input_names",
    RVecClass.KSH: "key_names",
    RVecClass.CONST: "const_names",
    RVecClass.OUTPUT: "output_names",
}
"""The `LimbProgram` name table that the first tag column of each tagged class indexes."""
