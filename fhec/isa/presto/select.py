"""Instruction selection for Presto: each limb instruction becomes one Presto vector
instruction over virtual registers (one per rvec), with the configuration it needs.

`select` preserves every residue of every output: each `LimbOp` maps to the
instruction computing exactly its `fhec.sim.semantics` kernel (`SELECT`), under the
modulus register of the instruction's prime; a foreign source of NTT or BCONV (a residue
of another prime) is read by the centered variant (``he.ntt.c``, ``he.vmulx.c``) with
the source modulus selected by ``he.setq``. Each OUTPUT rvec is stored to its home right
after it is computed.

Operands that live in RISC-V integer registers on the machine (constants, Galois
elements, addresses, N, the moduli) stay values here, in pseudo-instructions
(`PrestoOp.P_*`); `fhec.isa.presto.materialize` turns them into ``ld``/``lui``/``addi``
plus the real instruction after register allocation.

Memory map (byte addresses, `layout`): the constant pool (64-bit words: N, then q_i and
psi_i for every modulus i, then the limb program's constant table) at `POOL_BASE`; then,
4 KB aligned, one home of N words per loaded (INPUT, KSH, CONST) and OUTPUT rvec, in rvec
id order; then the spill slots the allocator uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fhec.errors import MachineCodeError
from fhec.ir.limb import word_bytes_for
from fhec.ir.limb_ops import IS_LOADED, LimbOp, RVecClass
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Instr, MemoryLayout, RomSegment, Selected
from fhec.isa.presto.encoding import PrestoOp
from fhec.isa.presto.machine import PrestoMachine
from fhec.ring.ntt import primitive_2n_root

POOL_BASE = 0x1000
"""Byte address of the constant pool."""
ADDRESS_LIMIT = (1 << 31) - (1 << 12)
"""Addresses stay below this, so that ``lui`` + ``addi`` reach each (positive, 32-bit)."""
DATA_MEMORY = "dram"


def _align(x: int, a: int = 1 << 12) -> int:
    return (x + a - 1) // a * a


@dataclass(frozen=True)
class Pool:
    """The constant pool: `words` (uint64) at `POOL_BASE`; entry positions of N, of each
    modulus's q and psi, and of constant table entry 0."""

    words: np.ndarray
    q_at: int
    const_at: int

    def address(self, entry: int) -> int:
        return POOL_BASE + 8 * entry


def make_pool(N: int, moduli: tuple[int, ...], constants: np.ndarray) -> Pool:
    qpsi = [v for q in moduli for v in (q, primitive_2n_root(N, q))]
    words = np.array([N, *qpsi, *np.asarray(constants, dtype=np.uint64).tolist()], dtype=np.uint64)
    return Pool(words, 1, 1 + len(qpsi))


_P = PrestoOp
SELECT: dict[LimbOp, tuple[PrestoOp, PrestoOp | None]] = {
    LimbOp.NTT: (_P.NTT, _P.NTT_C),
    LimbOp.INTT: (_P.INTT, None),
    LimbOp.MUL: (_P.VMUL, None),
    LimbOp.MUL_CONST: (_P.P_VMULX, None),
    LimbOp.ADD: (_P.VADD, None),
    LimbOp.SUB: (_P.VSUB, None),
    LimbOp.NEG: (_P.VNEG, None),
    LimbOp.AUT: (_P.P_AUT, None),
    LimbOp.BCONV: (_P.P_VMULX, _P.P_VMULX_C),
    LimbOp.ADD_CONST: (_P.P_VADDX, None),
}
"""Limb op -> (Presto instruction, its centered variant for a foreign src0, if any)."""
del _P

_IMM_FIELD = {
    PrestoOp.P_VMULX: "const",
    PrestoOp.P_VMULX_C: "const",
    PrestoOp.P_VADDX: "const",
    PrestoOp.P_AUT: "galois",
}
"""What the pseudo-instruction's field holds: a constant-pool address or a Galois element."""


def select(lowered: LoweredProgram, pm: PrestoMachine) -> Selected:
    """`lowered` as Presto instructions over virtual registers (rvec ids), with the
    memory layout. Raises `MachineCodeError` when the program does not fit the machine
    (its N, more moduli than modulus registers, more data than the address space)."""
    prog = lowered.limb
    N = prog.N
    pm.check_ring_degree(N)
    if len(prog.moduli) > pm.modulus_registers:
        raise MachineCodeError(
            f"program {lowered.he.name!r} uses {len(prog.moduli)} primes; {pm.name} has {pm.modulus_registers} "
            f"modulus registers. Use fewer levels or special primes."
        )
    pool = make_pool(N, prog.moduli, prog.constants)
    vec_bytes = N * word_bytes_for(prog.word_bits)
    homed = np.flatnonzero(IS_LOADED[prog.rvec_class] | (prog.rvec_class == RVecClass.OUTPUT)).tolist()
    base = _align(POOL_BASE + 8 * len(pool.words))
    address = {r: base + k * vec_bytes for k, r in enumerate(homed)}
    end = base + len(homed) * vec_bytes
    if end > ADDRESS_LIMIT:
        raise MachineCodeError(f"program {lowered.he.name!r} needs {end:,} bytes of memory; the layout addresses 2 GiB")

    code: list[Instr] = [Instr(PrestoOp.P_SETN, fields=(N,))]
    code += [
        Instr(PrestoOp.P_SETMOD, fields=(i, q, int(pool.words[pool.q_at + 2 * i + 1]))) for i, q in enumerate(prog.moduli)
    ]
    qa = qs = -1
    is_output = (prog.rvec_class == RVecClass.OUTPUT).tolist()
    rvec_mod = prog.rvec_mod.tolist()
    for i, (op, dst, s0, s1, mod, imm) in enumerate(
        zip(prog.op.tolist(), prog.dst.tolist(), prog.src0.tolist(), prog.src1.tolist(), prog.mod.tolist(),
            prog.imm.tolist())
    ):
        plain, centered = SELECT[LimbOp(op)]
        foreign = rvec_mod[s0] != mod
        if foreign and centered is None:
            raise MachineCodeError(f"limb instruction {i}: {LimbOp(op).name} reads a residue of another prime")
        want_qs = rvec_mod[s0] if foreign else (qs if qs >= 0 else mod)
        if (qa, qs) != (mod, want_qs):
            qa, qs = mod, want_qs
            code.append(Instr(PrestoOp.SETQ, fields=(qa, qs), origin=i))
        pop = centered if foreign else plain
        srcs = (s0,) if s1 < 0 else (s0, s1)
        kind = _IMM_FIELD.get(pop)
        fields = () if kind is None else (pool.address(pool.const_at + imm),) if kind == "const" else (imm,)
        code.append(Instr(pop, (dst,), srcs, fields, i))
        if is_output[dst]:
            code.append(Instr(PrestoOp.P_VST, (), (dst,), (address[dst],), i))

    layout = MemoryLayout(
        data_memory=DATA_MEMORY,
        rvec_address=address,
        rom=(RomSegment(DATA_MEMORY, POOL_BASE, pool.words, "constant pool: N, (q, psi) per modulus, constants"),),
        spill_base=_align(end),
        spill_words=0,
        words_used={DATA_MEMORY: end // word_bytes_for(prog.word_bits)},
    )
    homes = {r: address[r] for r in homed if IS_LOADED[prog.rvec_class[r]]}
    return Selected(lowered, tuple(code), np.zeros(prog.num_rvecs, dtype=np.int8), homes, layout)
