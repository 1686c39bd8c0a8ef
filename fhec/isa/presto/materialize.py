"""Pseudo-instructions to real Presto code: scalar operands into RISC-V registers.

After register allocation, the vector registers are physical but constants, Galois
elements, addresses, N and the moduli are still values (`PrestoOp.P_*`). `materialize`
puts each in a RISC-V integer register the way a RISC-V assembler expands ``li``:
``lui`` + ``addi`` for a small integer or an address, ``ld`` from the constant pool for a
word of the pool (constants, moduli, psi). It remembers what each register holds and
skips a load or ``li`` whose value is already there.

Register convention (docs/isa.md): x5 Galois element, x6 and x7 scalar operands, x10
vector-memory base, x11 constant-pool base.

Preserves: every vector instruction, in order, with the same registers and the same
operand values.
"""

from __future__ import annotations

from collections.abc import Sequence

from fhec.errors import InternalError
from fhec.isa.code import Instr
from fhec.isa.presto.encoding import PrestoOp
from fhec.isa.presto.select import Pool, POOL_BASE

X_GALOIS, X_OP1, X_OP2, X_VBASE, X_POOL = 5, 6, 7, 10, 11

_REAL_OF = {
    PrestoOp.P_VADDX: PrestoOp.VADDX,
    PrestoOp.P_VMULX: PrestoOp.VMULX,
    PrestoOp.P_VMULX_C: PrestoOp.VMULX_C,
}


class _Expander:
    """Emits real instructions and tracks the known contents of x registers."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.out: list[Instr] = []
        self.known: dict[int, int] = {}

    def emit(self, op: PrestoOp, dst=(), src=(), fields=(), origin=-1) -> None:
        self.out.append(Instr(op, tuple(dst), tuple(src), tuple(fields), origin))

    def li(self, rd: int, value: int, origin: int) -> None:
        """x[rd] = value (0 <= value < 2**31 - 2048), as lui/addi, unless it holds it."""
        if self.known.get(rd) == value:
            return
        hi = (value + 0x800) >> 12
        lo = value - (hi << 12)
        if hi:
            self.emit(PrestoOp.LUI, fields=(rd, hi), origin=origin)
        if lo or not hi:
            self.emit(PrestoOp.ADDI, fields=(rd, rd if hi else 0, lo), origin=origin)
        self.known[rd] = value

    def base_offset(self, base: int, addr: int, origin: int) -> int:
        """An immediate such that x[base] + imm == addr, moving x[base] if needed."""
        cur = self.known.get(base)
        if cur is None or not -2048 <= addr - cur <= 2047:
            self.li(base, addr, origin)
            cur = addr
        return addr - cur

    def load_pool(self, rd: int, addr: int, origin: int) -> None:
        """x[rd] = the pool word at `addr`, unless x[rd] already holds it."""
        entry = (addr - POOL_BASE) // 8
        value = int(self.pool.words[entry])
        key = ("pool", value)
        if self.known.get(rd) == key:
            return
        imm = self.base_offset(X_POOL, addr, origin)
        self.emit(PrestoOp.LD, fields=(rd, imm, X_POOL), origin=origin)
        self.known[rd] = key


def materialize(code: Sequence[Instr], pool: Pool) -> tuple[Instr, ...]:
    """`code` with every pseudo-instruction replaced by real ones (see the module docstring)."""
    x = _Expander(pool)
    for ins in code:
        op, o = PrestoOp(ins.op), ins.origin
        if op < PrestoOp.P_VLD:
            x.out.append(ins)
        elif op in (PrestoOp.P_VLD, PrestoOp.P_VST):
            imm = x.base_offset(X_VBASE, ins.fields[0], o)
            real = PrestoOp.VLD if op == PrestoOp.P_VLD else PrestoOp.VST
            x.emit(real, ins.dst, ins.src, (imm, X_VBASE), o)
        elif op in _REAL_OF:
            x.load_pool(X_OP1, ins.fields[0], o)
            x.emit(_REAL_OF[op], ins.dst, ins.src, (X_OP1,), o)
        elif op == PrestoOp.P_AUT:
            x.li(X_GALOIS, ins.fields[0], o)
            x.emit(PrestoOp.AUT, ins.dst, ins.src, (X_GALOIS,), o)
        elif op == PrestoOp.P_SETN:
            x.load_pool(X_OP2, POOL_BASE, o)
            x.emit(PrestoOp.SETN, fields=(X_OP2,), origin=o)
        elif op == PrestoOp.P_SETMOD:
            qi = ins.fields[0]
            x.load_pool(X_OP1, pool_address(pool, qi, 0), o)
            x.load_pool(X_OP2, pool_address(pool, qi, 1), o)
            x.emit(PrestoOp.SETMOD, fields=(qi, X_OP1, X_OP2), origin=o)
        else:
            raise InternalError(f"materialize: no expansion for {op.name}")
    return tuple(x.out)


def pool_address(pool: Pool, modulus: int, which: int) -> int:
    """Byte address of modulus register `modulus`'s q (which = 0) or psi (1) in the pool."""
    return pool.address(pool.q_at + 2 * modulus + which)
