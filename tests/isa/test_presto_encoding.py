"""Presto's instruction words: hand-checked against the RISC-V field layouts, and
encode / decode / assemble / disassemble round trips."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fhec.errors import MachineCodeError
from fhec.isa.code import Instr
from fhec.isa.presto.asm import assemble, disassemble, parse_line
from fhec.isa.presto.encoding import SPECS, PrestoOp, decode, encode, from_args, operand_kinds


def r_type(funct7, rs2, rs1, funct3, rd, opcode):
    return (funct7 << 25) | (rs2 << 20) | (rs1 << 15) | (funct3 << 12) | (rd << 7) | opcode


def word(text: str) -> int:
    return int(assemble(text)[0])


CUSTOM0, CUSTOM2, CUSTOM3 = 0b0001011, 0b1011011, 0b1111011


def test_custom_opcodes_are_the_risc_v_custom_spaces():
    """custom-0 = inst[6:5] 00, inst[4:2] 010; custom-2 = 10/110; custom-3 = 11/110; 32-bit
    instructions have inst[1:0] = 11 (RISC-V base opcode map)."""
    assert CUSTOM0 == (0b00 << 5) | (0b010 << 2) | 0b11
    assert CUSTOM2 == (0b10 << 5) | (0b110 << 2) | 0b11
    assert CUSTOM3 == (0b11 << 5) | (0b110 << 2) | 0b11
    space = {"he.vld": CUSTOM2, "he.vst": CUSTOM3}
    for spec in SPECS:
        if spec.mnemonic.startswith("he."):
            assert spec.opcode == space.get(spec.mnemonic, CUSTOM0), spec.mnemonic


@pytest.mark.parametrize(
    "text, expected",
    [
        # R-type: funct7 | rs2 | rs1 | funct3 | rd | opcode, funct3 = class, funct7[3:0] = op
        ("he.vadd v3, v1, v2", r_type(0b0000000, 2, 1, 0b000, 3, CUSTOM0)),
        ("he.vmul v3, v1, v2", r_type(0b0000010, 2, 1, 0b000, 3, CUSTOM0)),
        # bit 5 of rd / rs1 / rs2 in funct7[6] / [5] / [4]
        ("he.vsub v35, v33, v34", r_type(0b1110001, 2, 1, 0b000, 3, CUSTOM0)),
        ("he.vmulx.c v35, v2, x6", r_type(0b1001010, 6, 2, 0b001, 3, CUSTOM0)),
        ("he.ntt.c v4, v40", r_type(0b0101000, 0, 8, 0b010, 4, CUSTOM0)),
        ("he.intt v4, v5", r_type(0b0000001, 0, 5, 0b010, 4, CUSTOM0)),
        ("he.aut v5, v4, x5", r_type(0b0000000, 5, 4, 0b011, 5, CUSTOM0)),
        ("he.setmod q2, x6, x7", r_type(0b0000001, 7, 6, 0b111, 2, CUSTOM0)),
        ("he.setq q1, q0", r_type(0b0000010, 0, 0, 0b111, 1, CUSTOM0)),
        ("he.setn x7", r_type(0b0000000, 0, 7, 0b111, 0, CUSTOM0)),
        # I-type load: imm[11:0] | rs1 | funct3 (bit 0 = vd[5]) | rd | opcode
        ("he.vld v33, -256(x10)", (0xF00 << 20) | (10 << 15) | (0b001 << 12) | (1 << 7) | CUSTOM2),
        # S-type store: imm[11:5] | rs2 | rs1 | funct3 | imm[4:0] | opcode; 40 = 0b0000001_01000
        ("he.vst v3, 40(x10)", (0b0000001 << 25) | (3 << 20) | (10 << 15) | (0b000 << 12) | (0b01000 << 7) | CUSTOM3),
        # base RV64I, as the GNU assembler encodes them
        ("addi x10, x10, -12", 0xFF450513),
        ("ld x6, 8(x11)", 0x0085B303),
        ("lui x10, 0x12345", 0x12345537),
        ("addi x5, x0, 1", 0x00100293),
    ],
)
def test_hand_checked_encodings(text, expected):
    assert word(text) == expected
    assert disassemble([expected]).split()[0] == text.split()[0]


@st.composite
def instructions(draw):
    spec = draw(st.sampled_from(SPECS))
    lim = {"v": 63, "x": 31, "q": 31}
    imm = {"R": (0, 0), "I": (-2048, 2047), "S": (-2048, 2047), "U": (0, (1 << 20) - 1)}[spec.fmt.value]
    args = tuple(draw(st.integers(0, lim[k]) if k in lim else st.integers(*imm)) for k in operand_kinds(spec))
    return from_args(spec.op, args)


@given(instructions())
def test_encode_decode_round_trip(ins):
    w = encode(ins)
    assert 0 <= w < 1 << 32
    assert decode(w) == ins


@given(st.lists(instructions(), max_size=20))
def test_assembly_round_trip(code):
    words = np.array([encode(i) for i in code], dtype=np.uint32)
    text = disassemble(words)
    assert np.array_equal(assemble(text), words)
    assert disassemble(assemble(text)) == text


@given(st.integers(0, (1 << 32) - 1))
def test_every_word_decodes_canonically_or_is_illegal(w):
    """No two words mean the same instruction: a legal word re-encodes to itself."""
    try:
        ins = decode(w)
    except MachineCodeError:
        return
    assert encode(ins) == w


def test_illegal_words_and_bad_assembly_raise_machine_code_errors():
    with pytest.raises(MachineCodeError, match="illegal instruction"):
        decode(0x00000033)  # an RV64I `add`: not an instruction fhec emits
    with pytest.raises(MachineCodeError, match="unused fields zero"):
        decode(r_type(0, 3, 1, 0b000, 2, CUSTOM0) | (0b0011 << 25))  # he.vneg with rs2 set
    with pytest.raises(MachineCodeError, match="prog.s:2: unknown mnemonic"):
        assemble("he.vadd v1, v2, v3\nhe.vfoo v1", "prog.s")
    with pytest.raises(MachineCodeError, match="out of range"):
        parse_line("he.vadd v64, v1, v2")
    with pytest.raises(MachineCodeError, match="memory operand"):
        parse_line("he.vld v1, x10")
    with pytest.raises(MachineCodeError, match="word 1"):
        disassemble([word("he.vadd v1, v2, v3"), 0x00000033])
    with pytest.raises(MachineCodeError, match="not an encodable"):
        encode(Instr(PrestoOp.P_VLD, (1,), (), (4096,)))
