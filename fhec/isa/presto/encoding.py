"""Presto's FHE extension as 32-bit RISC-V instruction words, and the few base RV64I
instructions the emitted code needs for setup.

Presto (Lei et al., "Presto: a unified RISC-V-compatible SoC for multi-scheme FHE
acceleration over module lattice", slides "RISC-V compatible ISA") places its FHE
instructions in three opcode spaces the RISC-V base map leaves to custom extensions:

=========  ========  ===========  =============================================
space      opcode    name         what fhec encodes there
=========  ========  ===========  =============================================
custom-0   0001011   OP-HE        vector arithmetic, NTT/INTT, automorphism, config
custom-2   1011011   OP-HE-LOAD   vector load: memory -> the PE vectors
custom-3   1111011   OP-HE-STORE  vector store: the PE vectors -> memory
=========  ========  ===========  =============================================

The slides name the spaces but not the fields; the field layout below is fhec's choice
(docs/isa.md, "Presto"). It keeps the standard RISC-V formats so that any RISC-V
disassembler splits the words correctly:

* OP-HE is R-type: ``funct7 | rs2 | rs1 | funct3 | rd | opcode``. ``funct3`` is the
  operand class (`CLASS_*`), ``funct7[3:0]`` the operation within it. Vector registers
  have 6 bits (64 PE vectors of 512 words at N <= 512); their bit 5 travels in
  ``funct7[6]`` (rd), ``funct7[5]`` (rs1) and ``funct7[4]`` (rs2) of vector operands.
* OP-HE-LOAD is I-type (``imm[11:0] | rs1 | funct3 | rd | opcode``) and OP-HE-STORE is
  S-type (``imm[11:5] | rs2 | rs1 | funct3 | imm[4:0] | opcode``); the byte address is
  ``x[rs1] + imm`` as for ``ld``/``sd``, and ``funct3[0]`` holds bit 5 of the vector
  register.

Operands are named by kind: ``v`` vector register, ``x`` RISC-V integer register, ``q``
modulus register, ``i`` a signed immediate, ``u`` a 20-bit upper immediate.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fhec.errors import MachineCodeError
from fhec.isa.code import Instr

OPCODE_OP_HE = 0b0001011  # custom-0
OPCODE_OP_HE_LOAD = 0b1011011  # custom-2
OPCODE_OP_HE_STORE = 0b1111011  # custom-3
OPCODE_LUI = 0b0110111
OPCODE_OP_IMM = 0b0010011
OPCODE_LOAD = 0b0000011

CLASS_VV = 0b000  # vector (op) vector
CLASS_VX = 0b001  # vector (op) scalar register
CLASS_XFORM = 0b010  # NTT / INTT
CLASS_PERM = 0b011  # automorphism
CLASS_CFG = 0b111  # ring degree, modulus registers, active moduli

CENTERED = 0b1000
"""funct7[3]: src0 is read as its centered lift from the source modulus register
(`fhec.ring.rns.lift_centered`), the foreign-residue read of NTT and BCONV."""


class Fmt(enum.Enum):
    """The RISC-V instruction format an op is encoded in."""

    R = "R"
    I = "I"  # noqa: E741 (the RISC-V name)
    S = "S"
    U = "U"


class PrestoOp(enum.IntEnum):
    """Presto's instructions (`SPECS` gives each one's mnemonic and encoding), then the
    pseudo-instructions instruction selection and register allocation use before
    `fhec.isa.presto.materialize` expands them into real ones (never encoded)."""

    VADD = 0
    VSUB = 1
    VMUL = 2
    VNEG = 3
    VADDX = 4
    VMULX = 5
    VMULX_C = 6
    NTT = 7
    INTT = 8
    NTT_C = 9
    AUT = 10
    SETN = 11
    SETMOD = 12
    SETQ = 13
    VLD = 14
    VST = 15
    LUI = 16
    ADDI = 17
    LD = 18
    # pseudo-instructions: operands are values and addresses, not scalar registers
    P_VLD = 32  # dst <- N words at byte address fields[0]
    P_VST = 33  # N words at byte address fields[0] <- src
    P_VADDX = 34  # dst <- src + fields[0]
    P_VMULX = 35  # dst <- src * fields[0]
    P_VMULX_C = 36  # dst <- lift(src) * fields[0]
    P_AUT = 37  # dst <- sigma_k(src), k = fields[0]
    P_SETN = 38  # N = fields[0]
    P_SETMOD = 39  # q[fields[0]] = (q = fields[1], psi = fields[2])


@dataclass(frozen=True)
class Spec:
    """One instruction: mnemonic, format, fixed fields, and its operands in assembly order.

    `operands` gives each operand's kind (v, x, q, i, u; ``i(x)`` is a memory operand
    ``imm(base)``), `fields` the encoding field each goes to (rd, rs1, rs2, imm), and
    `roles` for each ``v`` operand whether the instruction writes (``d``) or reads (``s``)
    it: written vector registers are the `Instr`'s ``dst``, read ones its ``src``, every
    other operand is in its ``fields``, all in assembly order."""

    op: PrestoOp
    mnemonic: str
    fmt: Fmt
    opcode: int
    funct3: int
    funct7: int
    operands: str
    fields: tuple[str, ...]
    roles: str
    doc: str


_R, _I, _S, _U = Fmt.R, Fmt.I, Fmt.S, Fmt.U
_RD_RS1_RS2, _RD_RS1 = ("rd", "rs1", "rs2"), ("rd", "rs1")
O = PrestoOp
SPECS: tuple[Spec, ...] = (
    Spec(O.VADD, "he.vadd", _R, OPCODE_OP_HE, CLASS_VV, 0b0000, "vvv", _RD_RS1_RS2, "dss", "vd = vs1 + vs2 mod qa"),
    Spec(O.VSUB, "he.vsub", _R, OPCODE_OP_HE, CLASS_VV, 0b0001, "vvv", _RD_RS1_RS2, "dss", "vd = vs1 - vs2 mod qa"),
    Spec(O.VMUL, "he.vmul", _R, OPCODE_OP_HE, CLASS_VV, 0b0010, "vvv", _RD_RS1_RS2, "dss", "vd = vs1 * vs2 mod qa"),
    Spec(O.VNEG, "he.vneg", _R, OPCODE_OP_HE, CLASS_VV, 0b0011, "vv", _RD_RS1, "ds", "vd = -vs1 mod qa"),
    Spec(O.VADDX, "he.vaddx", _R, OPCODE_OP_HE, CLASS_VX, 0b0000, "vvx", _RD_RS1_RS2, "ds", "vd = vs1 + x[rs2] mod qa"),
    Spec(O.VMULX, "he.vmulx", _R, OPCODE_OP_HE, CLASS_VX, 0b0010, "vvx", _RD_RS1_RS2, "ds", "vd = vs1 * x[rs2] mod qa"),
    Spec(
        O.VMULX_C, "he.vmulx.c", _R, OPCODE_OP_HE, CLASS_VX, CENTERED | 0b0010, "vvx", _RD_RS1_RS2, "ds",
        "vd = lift(vs1 from qs) * x[rs2] mod qa (one base-conversion term)",
    ),
    Spec(O.NTT, "he.ntt", _R, OPCODE_OP_HE, CLASS_XFORM, 0b0000, "vv", _RD_RS1, "ds", "vd = NTT_qa(vs1)"),
    Spec(O.INTT, "he.intt", _R, OPCODE_OP_HE, CLASS_XFORM, 0b0001, "vv", _RD_RS1, "ds", "vd = INTT_qa(vs1)"),
    Spec(
        O.NTT_C, "he.ntt.c", _R, OPCODE_OP_HE, CLASS_XFORM, CENTERED | 0b0000, "vv", _RD_RS1, "ds",
        "vd = NTT_qa(lift(vs1 from qs))",
    ),
    Spec(O.AUT, "he.aut", _R, OPCODE_OP_HE, CLASS_PERM, 0b0000, "vvx", _RD_RS1_RS2, "ds", "vd = sigma_k(vs1), k = x[rs2]"),
    Spec(O.SETN, "he.setn", _R, OPCODE_OP_HE, CLASS_CFG, 0b0000, "x", ("rs1",), "", "ring degree N = x[rs1]"),
    Spec(
        O.SETMOD, "he.setmod", _R, OPCODE_OP_HE, CLASS_CFG, 0b0001, "qxx", _RD_RS1_RS2, "",
        "modulus register qd = (q = x[rs1], psi = x[rs2])",
    ),
    Spec(O.SETQ, "he.setq", _R, OPCODE_OP_HE, CLASS_CFG, 0b0010, "qq", _RD_RS1, "", "active modulus qa = qd, source qs = qs1"),
    Spec(O.VLD, "he.vld", _I, OPCODE_OP_HE_LOAD, 0b000, 0, "vi(x)", ("rd", "imm", "rs1"), "d", "vd = N words at x[rs1] + imm"),
    Spec(O.VST, "he.vst", _S, OPCODE_OP_HE_STORE, 0b000, 0, "vi(x)", ("rs2", "imm", "rs1"), "s", "N words at x[rs1] + imm = vs"),
    Spec(O.LUI, "lui", _U, OPCODE_LUI, 0, 0, "xu", ("rd", "imm"), "", "x[rd] = sext(imm << 12)"),
    Spec(O.ADDI, "addi", _I, OPCODE_OP_IMM, 0b000, 0, "xxi", ("rd", "rs1", "imm"), "", "x[rd] = x[rs1] + sext(imm)"),
    Spec(O.LD, "ld", _I, OPCODE_LOAD, 0b011, 0, "xi(x)", ("rd", "imm", "rs1"), "", "x[rd] = mem64[x[rs1] + sext(imm)]"),
)
del O

SPEC: dict[PrestoOp, Spec] = {s.op: s for s in SPECS}
BY_MNEMONIC: dict[str, Spec] = {s.mnemonic: s for s in SPECS}

_VECTOR_EXT_BIT = {"rd": 6, "rs1": 5, "rs2": 4}
"""funct7 bit carrying bit 5 of a vector register in an OP-HE word."""


def operand_kinds(spec: Spec) -> str:
    """The operand kinds of `spec` without the memory-operand punctuation: 'vi(x)' -> 'vix'."""
    return spec.operands.replace("(", "").replace(")", "")


def args_of(ins: Instr) -> tuple[int, ...]:
    """`ins`'s operands in assembly order (vector registers from dst / src, the rest from
    fields). Raises `MachineCodeError` for a pseudo-instruction or a wrong operand count."""
    spec = SPEC.get(PrestoOp(ins.op)) if ins.op in PrestoOp._value2member_map_ else None
    if spec is None:
        raise MachineCodeError(f"op {ins.op!r} is not an encodable Presto instruction")
    kinds = operand_kinds(spec)
    n_v = kinds.count("v")
    if len(ins.dst) + len(ins.src) != n_v or len(ins.fields) != len(kinds) - n_v:
        raise MachineCodeError(f"{spec.mnemonic} takes operands {spec.operands}, got {ins}")
    dst, src, other = list(ins.dst), list(ins.src), list(ins.fields)
    roles = iter(spec.roles)
    return tuple((dst if next(roles) == "d" else src).pop(0) if k == "v" else other.pop(0) for k in kinds)


def from_args(op: PrestoOp, args: tuple[int, ...], origin: int = -1) -> Instr:
    """The `Instr` of `op` with operands `args` in assembly order (inverse of `args_of`)."""
    spec = SPEC[op]
    roles = iter(spec.roles)
    dst, src, other = [], [], []
    for k, a in zip(operand_kinds(spec), args):
        (dst if k == "v" and next(roles) == "d" else src if k == "v" else other).append(int(a))
    return Instr(op, tuple(dst), tuple(src), tuple(other), origin)


_RANGES = {"v": (0, 63), "x": (0, 31), "q": (0, 31)}
_IMM_RANGES = {Fmt.I: (-2048, 2047), Fmt.S: (-2048, 2047), Fmt.U: (0, (1 << 20) - 1)}


def check(ins: Instr) -> tuple[Spec, tuple[int, ...]]:
    """(spec, operands) of `ins`; `MachineCodeError` unless it is an encodable Presto
    instruction with every operand in range."""
    args = args_of(ins)
    spec = SPEC[PrestoOp(ins.op)]
    for kind, value in zip(operand_kinds(spec), args):
        lo, hi = _RANGES.get(kind) or _IMM_RANGES[spec.fmt]
        if not lo <= value <= hi:
            raise MachineCodeError(f"{spec.mnemonic}: operand {value} out of range [{lo}, {hi}] for kind {kind!r}")
    return spec, args


def _bits(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def encode(ins: Instr) -> int:
    """The 32-bit word of `ins` (raises `MachineCodeError` for a bad instruction)."""
    spec, args = check(ins)
    values = dict(zip(spec.fields, args))
    rd, rs1, rs2, imm = (values.get(f, 0) for f in ("rd", "rs1", "rs2", "imm"))
    kinds = dict(zip(spec.fields, operand_kinds(spec)))
    funct3, funct7 = spec.funct3, spec.funct7
    if spec.opcode == OPCODE_OP_HE:
        for name, bit in _VECTOR_EXT_BIT.items():
            if kinds.get(name) == "v":
                funct7 |= _bits(values[name], 5, 5) << bit
        rd, rs1, rs2 = rd & 31, rs1 & 31, rs2 & 31
    elif spec.opcode in (OPCODE_OP_HE_LOAD, OPCODE_OP_HE_STORE):
        vreg = rd if spec.fmt is Fmt.I else rs2
        funct3 |= _bits(vreg, 5, 5)
        rd, rs2 = rd & 31, rs2 & 31
    imm &= 0xFFF if spec.fmt in (Fmt.I, Fmt.S) else 0xFFFFF
    return _ENCODERS[spec.fmt](spec.opcode, rd, funct3, rs1, rs2, funct7, imm)


_ENCODERS = {
    Fmt.R: lambda op, rd, f3, rs1, rs2, f7, imm: (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op,
    Fmt.I: lambda op, rd, f3, rs1, rs2, f7, imm: (imm << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op,
    Fmt.S: lambda op, rd, f3, rs1, rs2, f7, imm: (
        (_bits(imm, 11, 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (_bits(imm, 4, 0) << 7) | op
    ),
    Fmt.U: lambda op, rd, f3, rs1, rs2, f7, imm: (imm << 12) | (rd << 7) | op,
}


def _sext12(v: int) -> int:
    return v - 4096 if v & 0x800 else v


_DECODE_KEY: dict[tuple[int, int, int], Spec] = {}
for _s in SPECS:
    _DECODE_KEY[(_s.opcode, _s.funct3, _s.funct7 if _s.opcode == OPCODE_OP_HE else 0)] = _s
del _s


def decode(word: int) -> Instr:
    """The instruction a 32-bit word encodes; raises `MachineCodeError` for a word that is
    not one of `SPECS` (an illegal instruction)."""
    word = int(word)
    if not 0 <= word < 1 << 32:
        raise MachineCodeError(f"{word:#x} is not a 32-bit instruction word")
    opcode, rd, funct3 = _bits(word, 6, 0), _bits(word, 11, 7), _bits(word, 14, 12)
    rs1, rs2, funct7 = _bits(word, 19, 15), _bits(word, 24, 20), _bits(word, 31, 25)
    ext = {"rd": 0, "rs1": 0, "rs2": 0}
    if opcode == OPCODE_OP_HE:
        key = (opcode, funct3, funct7 & 0b1111)
        ext = {name: _bits(funct7, bit, bit) << 5 for name, bit in _VECTOR_EXT_BIT.items()}
    elif opcode in (OPCODE_OP_HE_LOAD, OPCODE_OP_HE_STORE):
        key = (opcode, funct3 & 0b110, 0)
        ext = {"rd" if opcode == OPCODE_OP_HE_LOAD else "rs2": (funct3 & 1) << 5}
    elif opcode == OPCODE_LUI:
        key = (opcode, 0, 0)
    else:
        key = (opcode, funct3, 0)
    spec = _DECODE_KEY.get(key)
    if spec is None:
        raise MachineCodeError(f"illegal instruction {word:#010x} (opcode {opcode:07b}, funct3 {funct3:03b})")
    kinds = dict(zip(spec.fields, operand_kinds(spec)))
    if spec.opcode == OPCODE_OP_HE and funct7 >> 4:
        for name, bit in _VECTOR_EXT_BIT.items():
            if _bits(funct7, bit, bit) and kinds.get(name) != "v":
                raise MachineCodeError(f"illegal instruction {word:#010x}: funct7 bit {bit} set on a non-vector operand")
    imm = {
        Fmt.R: 0,
        Fmt.I: _sext12(_bits(word, 31, 20)),
        Fmt.S: _sext12((funct7 << 5) | rd),
        Fmt.U: _bits(word, 31, 12),
    }[spec.fmt]
    values = {"rd": rd | ext.get("rd", 0), "rs1": rs1, "rs2": rs2 | ext.get("rs2", 0), "imm": imm}
    values["rs1"] |= ext.get("rs1", 0)
    unused = {"rd", "rs1", "rs2"} - set(spec.fields)
    if spec.fmt is Fmt.R and any(values[f] for f in unused):
        raise MachineCodeError(f"illegal instruction {word:#010x}: {spec.mnemonic} must have unused fields zero")
    return from_args(spec.op, tuple(values[f] for f in spec.fields))
