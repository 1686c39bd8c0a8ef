"""The B512 instruction set as fhec encodes it: opcodes, operand fields, addressing modes,
64-bit machine words and assembly text (RPU paper §III, Table I; docs/isa.md "B512").

Every instruction is one 64-bit word. Bit fields, as in Table I:

====================  =======  ======  ====  =======  ========  =======  =======  =======  ======
class                 [63:55]  [54:49] [48]  [47:44]  [43:24]   [23:18]  [17:12]  [11:6]   [5:0]
====================  =======  ======  ====  =======  ========  =======  =======  =======  ======
vector load/store     -        -       0     opcode   address   VD       mode     value    RM (ARF)
scalar/modulus/addr   -        -       0     opcode   address   -        -        RT       -
compute, vector       VD1      VT1     BFLY  opcode   -         VD       VS       VT       RM (MRF)
compute, scalar       -        -       0     opcode   -         VD       VS       RT (SRF) RM (MRF)
shuffle               -        -       0     opcode   -         VD       VS       VT       -
====================  =======  ======  ====  =======  ========  =======  =======  =======  ======

Unused fields are zero; a word with a non-zero unused field, an unknown opcode or mode
does not decode (`decode_word` raises `InternalError`). The 17 instructions are the 15
4-bit opcodes below plus the two butterflies (BFLY = 1 with the VMUL or VSUB opcode).
Three are fhec's reading of what the paper leaves open: MLOAD and ALOAD fill the modulus
and address register files from the scalar data memory (the paper has the files but no
instruction naming them), and the INDEXED addressing mode (a gather, used for
automorphisms; B512's four modes cannot permute across a whole ring).

Addressing (vector load/store): the first element's word address is ``ARF[RM] + address``;
element e of the register is at that base plus:

  CONTIGUOUS (0)   e
  STRIDED    (1)   e * 2**value
  SKIP       (2)   (e >> value) * 2**(value+1) + (e & (2**value - 1))  (take 2**value, skip 2**value)
  REPEATED   (3)   e >> value                                          (each word 2**value times)
  INDEXED    (4)   VR[value][e]                                        (fhec: a gather; loads only)

Compute semantics (all mod m = MRF[RM]; every operand word is first reduced mod m, so a
residue of another prime may be read, as the LAW engine's 128-bit datapath allows):
VADD/VSUB/VMUL vd = vs op vt; VADDS/VSUBS/VMULS vd = vs op SRF[rt];
BFLY_CT (vd, vd1) = (vs + vt*vt1, vs - vt*vt1); BFLY_GS (vd, vd1) = (vs + vt, (vs - vt)*vt1).
Shuffles (paper §III): UNPKLO vd[2i], vd[2i+1] = vs[i], vt[i] for i < 256; UNPKHI the
same from the upper halves; PKLO vd = (even elements of vs, even elements of vt);
PKHI the same with the odd elements.
"""

from __future__ import annotations

import enum
import re

import numpy as np

from fhec.errors import InternalError, ProgramFormatError
from fhec.isa.code import Instr

__all__ = ["Op", "Mode", "RegFile", "OPERANDS", "CLASS_OF", "encode_word", "decode_word", "format_instr",
           "parse_instr", "words_of", "USES_MULTIPLIER", "VECTOR_LENGTH", "ADDRESS_BITS"]

VECTOR_LENGTH = 512
ADDRESS_BITS = 20


class Op(enum.IntEnum):
    """B512 opcodes; a butterfly is its base opcode with bit 4 (the BFLY field) set."""

    VLOAD = 0
    VSTORE = 1
    SLOAD = 2
    MLOAD = 3
    ALOAD = 4
    VADD = 5
    VSUB = 6
    VMUL = 7
    VADDS = 8
    VSUBS = 9
    VMULS = 10
    UNPKLO = 11
    UNPKHI = 12
    PKLO = 13
    PKHI = 14
    BFLY_GS = 0x10 | 6
    BFLY_CT = 0x10 | 7


class Mode(enum.IntEnum):
    """Vector load/store addressing modes (the MODE field)."""

    CONTIGUOUS = 0
    STRIDED = 1
    SKIP = 2
    REPEATED = 3
    INDEXED = 4


class RegFile(enum.IntEnum):
    """Register files, as `Selected.reg_class` numbers them."""

    VECTOR = 0
    SCALAR = 1


# Operand layout per opcode: (dst register files, src register files, field names).
# fields of VLOAD/VSTORE: address, mode, value, arf; of SLOAD: address; of MLOAD/ALOAD:
# address, register; of compute: mrf. An INDEXED load reads its index register as src[0].
_V, _S = RegFile.VECTOR, RegFile.SCALAR
OPERANDS: dict[Op, tuple[tuple[RegFile, ...], tuple[RegFile, ...], tuple[str, ...]]] = {
    Op.VLOAD: ((_V,), (), ("address", "mode", "value", "arf")),
    Op.VSTORE: ((), (_V,), ("address", "mode", "value", "arf")),
    Op.SLOAD: ((_S,), (), ("address",)),
    Op.MLOAD: ((), (), ("address", "register")),
    Op.ALOAD: ((), (), ("address", "register")),
    Op.VADD: ((_V,), (_V, _V), ("mrf",)),
    Op.VSUB: ((_V,), (_V, _V), ("mrf",)),
    Op.VMUL: ((_V,), (_V, _V), ("mrf",)),
    Op.VADDS: ((_V,), (_V, _S), ("mrf",)),
    Op.VSUBS: ((_V,), (_V, _S), ("mrf",)),
    Op.VMULS: ((_V,), (_V, _S), ("mrf",)),
    Op.UNPKLO: ((_V,), (_V, _V), ()),
    Op.UNPKHI: ((_V,), (_V, _V), ()),
    Op.PKLO: ((_V,), (_V, _V), ()),
    Op.PKHI: ((_V,), (_V, _V), ()),
    Op.BFLY_CT: ((_V, _V), (_V, _V, _V), ("mrf",)),
    Op.BFLY_GS: ((_V, _V), (_V, _V, _V), ("mrf",)),
}

CLASS_OF: dict[Op, str] = {
    **{op: "load_store" for op in (Op.VLOAD, Op.VSTORE, Op.SLOAD, Op.MLOAD, Op.ALOAD)},
    **{op: "compute" for op in (Op.VADD, Op.VSUB, Op.VMUL, Op.VADDS, Op.VSUBS, Op.VMULS, Op.BFLY_CT, Op.BFLY_GS)},
    **{op: "shuffle" for op in (Op.UNPKLO, Op.UNPKHI, Op.PKLO, Op.PKHI)},
}
"""The pipeline (paper §IV-A: three decoupled queues) that executes each opcode."""

USES_MULTIPLIER = frozenset({Op.VMUL, Op.VMULS, Op.BFLY_CT, Op.BFLY_GS})

_MNEMONIC = {op: op.name.lower().replace("_", ".") for op in Op}
_BY_MNEMONIC = {v: k for k, v in _MNEMONIC.items()}
_MODE_NAME = {m: m.name.lower() for m in Mode}
_BY_MODE_NAME = {v: k for k, v in _MODE_NAME.items()}

# (shift, width) of each bit field of Table I
_F = {
    "vd1": (55, 9), "vt1": (49, 6), "bfly": (48, 1), "opcode": (44, 4), "address": (24, 20),
    "vd": (18, 6), "vs": (12, 6), "mode": (12, 6), "vt": (6, 6), "value": (6, 6), "rt": (6, 6), "rm": (0, 6),
}


def _put(word: int, name: str, value: int) -> int:
    shift, width = _F[name]
    if not 0 <= value < (1 << width):
        raise InternalError(f"B512 field {name} = {value} does not fit in {width} bits")
    return word | (value << shift)


def _get(word: int, name: str) -> int:
    shift, width = _F[name]
    return (word >> shift) & ((1 << width) - 1)


def _layout(op: Op) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(register field names of dst, of src) in the word, per opcode."""
    if op in (Op.VLOAD,):
        return ("vd",), ("value",)  # src only for INDEXED
    if op is Op.VSTORE:
        return (), ("vd",)
    if op is Op.SLOAD:
        return ("rt",), ()
    if op in (Op.MLOAD, Op.ALOAD):
        return (), ()
    if op in (Op.BFLY_CT, Op.BFLY_GS):
        return ("vd", "vd1"), ("vs", "vt", "vt1")
    if op in (Op.VADDS, Op.VSUBS, Op.VMULS):
        return ("vd",), ("vs", "rt")
    return ("vd",), ("vs", "vt")


def encode_word(ins: Instr) -> int:
    """The 64-bit word of `ins` (physical registers). Raises `InternalError` when an
    operand does not fit its field or does not match the opcode's layout."""
    op = Op(ins.op)
    word = _put(0, "opcode", op & 0xF)
    word = _put(word, "bfly", op >> 4)
    dst_f, src_f = _layout(op)
    if op is Op.VLOAD and (len(ins.fields) != 4 or (ins.fields[1] == Mode.INDEXED) != bool(ins.src)):
        raise InternalError(f"B512 {op.name}: an INDEXED load reads one index register, other modes none: {ins}")
    src_f = src_f[: len(ins.src)]
    if len(ins.dst) != len(dst_f) or len(ins.src) != len(src_f):
        raise InternalError(f"B512 {op.name}: registers {ins.dst} <- {ins.src} do not match its operands")
    for name, reg in zip(dst_f + src_f, ins.dst + ins.src):
        word = _put(word, name, reg)
    f = ins.fields
    if op in (Op.VLOAD, Op.VSTORE):
        address, mode, value, arf = f
        word = _put(_put(_put(word, "address", address), "mode", mode), "rm", arf)
        if mode != Mode.INDEXED:
            word = _put(word, "value", value)
        elif value:
            raise InternalError("B512: an INDEXED load names its index register as a source, not as a value")
    elif op is Op.SLOAD:
        word = _put(word, "address", f[0])
    elif op in (Op.MLOAD, Op.ALOAD):
        word = _put(_put(word, "address", f[0]), "rt", f[1])
    elif CLASS_OF[op] == "compute":
        word = _put(word, "rm", f[0])
    return word


def decode_word(word: int) -> Instr:
    """The instruction a 64-bit word encodes (inverse of `encode_word`). Raises
    `InternalError` for an unknown opcode or mode, or a non-zero unused field."""
    word = int(word)
    code = _get(word, "opcode") | (_get(word, "bfly") << 4)
    try:
        op = Op(code)
    except ValueError:
        raise InternalError(f"B512: word {word:#018x} has no opcode {code:#x}") from None
    dst_f, src_f = _layout(op)
    used = {"opcode", "bfly", *dst_f, *src_f}
    fields: tuple[int, ...] = ()
    if op in (Op.VLOAD, Op.VSTORE):
        mode = _get(word, "mode")
        try:
            Mode(mode)
        except ValueError:
            raise InternalError(f"B512: word {word:#018x} has no addressing mode {mode}") from None
        indexed = mode == Mode.INDEXED
        if op is Op.VSTORE and indexed:
            raise InternalError(f"B512: word {word:#018x} is an INDEXED store (gathers are loads only)")
        if op is Op.VLOAD and not indexed:
            src_f = ()
        fields = (_get(word, "address"), mode, 0 if indexed else _get(word, "value"), _get(word, "rm"))
        used |= {"address", "mode", "value", "rm"}
    elif op is Op.SLOAD:
        fields = (_get(word, "address"),)
        used |= {"address"}
    elif op in (Op.MLOAD, Op.ALOAD):
        fields = (_get(word, "address"), _get(word, "rt"))
        used |= {"address", "rt"}
    elif CLASS_OF[op] == "compute":
        fields = (_get(word, "rm"),)
        used |= {"rm"}
    rest = word
    for name in used:
        shift, width = _F[name]
        rest &= ~(((1 << width) - 1) << shift)
    if rest:
        raise InternalError(f"B512: word {word:#018x} ({op.name}) sets unused bits {rest:#018x}")
    dst = tuple(_get(word, n) for n in dst_f)
    src = tuple(_get(word, n) for n in src_f)
    return Instr(op, dst, src, fields)


def format_instr(ins: Instr) -> str:
    """One line of B512 assembly: ``mnemonic operands`` (docs/isa.md "B512 assembly")."""
    op = Op(ins.op)
    m = _MNEMONIC[op]
    f = ins.fields
    if op in (Op.VLOAD, Op.VSTORE):
        reg = ins.dst[0] if op is Op.VLOAD else ins.src[0]
        mode = Mode(f[1])
        tail = f" v{ins.src[0]}" if mode is Mode.INDEXED else (f" {f[2]}" if mode is not Mode.CONTIGUOUS or f[2] else "")
        return f"{m} v{reg}, {f[0]:#x}(a{f[3]}), {_MODE_NAME[mode]}{tail}"
    if op is Op.SLOAD:
        return f"{m} s{ins.dst[0]}, {f[0]:#x}"
    if op is Op.MLOAD:
        return f"{m} m{f[1]}, {f[0]:#x}"
    if op is Op.ALOAD:
        return f"{m} a{f[1]}, {f[0]:#x}"
    dsts = ", ".join(f"v{r}" for r in ins.dst)
    kinds = OPERANDS[op][1]
    srcs = ", ".join(("s" if k == RegFile.SCALAR else "v") + str(r) for k, r in zip(kinds, ins.src))
    mod = f", m{f[0]}" if f else ""
    return f"{m} {dsts}, {srcs}{mod}"


_TOKEN = re.compile(r"[\s,()]+")


def parse_instr(line: str) -> Instr:
    """The instruction of one assembly line (inverse of `format_instr`). Raises
    `ProgramFormatError` naming the line when it is not B512 assembly."""
    parts = [p for p in _TOKEN.split(line.strip()) if p]
    try:
        op = _BY_MNEMONIC[parts[0]]

        def reg(tok: str, prefix: str) -> int:
            if not tok.startswith(prefix):
                raise ValueError(tok)
            return int(tok[len(prefix):])

        if op in (Op.VLOAD, Op.VSTORE):
            r = reg(parts[1], "v")
            address, arf, mode = int(parts[2], 0), reg(parts[3], "a"), _BY_MODE_NAME[parts[4]]
            src: tuple[int, ...] = ()
            value = 0
            if mode is Mode.INDEXED:
                src = (reg(parts[5], "v"),)
            elif mode is not Mode.CONTIGUOUS or len(parts) > 5:
                value = int(parts[5])
            if len(parts) > 6:
                raise ValueError("operand count")
            if op is Op.VLOAD:
                return Instr(op, (r,), src, (address, mode, value, arf))
            return Instr(op, (), (r,), (address, mode, value, arf))
        if op is Op.SLOAD:
            return Instr(op, (reg(parts[1], "s"),), (), (int(parts[2], 0),))
        if op in (Op.MLOAD, Op.ALOAD):
            return Instr(op, (), (), (int(parts[2], 0), reg(parts[1], "m" if op is Op.MLOAD else "a")))
        dst_k, src_k, fields = OPERANDS[op]
        regs = parts[1:]
        dst = tuple(reg(t, "v") for t in regs[: len(dst_k)])
        src = tuple(reg(t, "s" if k == RegFile.SCALAR else "v") for t, k in zip(regs[len(dst_k):], src_k))
        rest = regs[len(dst_k) + len(src_k):]
        mrf = (reg(rest[0], "m"),) if fields else ()
        if len(rest) != len(mrf):
            raise ValueError("operand count")
        return Instr(op, dst, src, mrf)
    except (KeyError, IndexError, ValueError):
        raise ProgramFormatError(f"not B512 assembly: {line.strip()!r} (docs/isa.md lists the syntax)") from None


def words_of(code: tuple[Instr, ...]) -> np.ndarray:
    """The machine words of `code` (uint64)."""
    return np.array([encode_word(i) for i in code], dtype=np.uint64)
