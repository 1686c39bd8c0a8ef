"""Presto assembly text: one instruction per line, RISC-V style.

``he.vmulx v3, v1, x6``, ``he.vld v2, 256(x10)``, ``lui x10, 0x12``; registers are
``vK`` (PE vector registers), ``xK`` (RISC-V integer registers), ``qK`` (modulus
registers); ``#`` starts a comment. `assemble` turns text into words (via
`fhec.isa.presto.encoding`), `disassemble` turns words back into text, and
``assemble(disassemble(w)) == w`` for every legal word list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from fhec.errors import MachineCodeError
from fhec.isa.code import Instr
from fhec.isa.presto.encoding import BY_MNEMONIC, SPEC, Fmt, PrestoOp, args_of, decode, encode, from_args, operand_kinds

_PREFIX = {"v": "v", "x": "x", "q": "q"}


def format_instr(ins: Instr) -> str:
    """``mnemonic op, op, ...`` for one instruction."""
    spec = SPEC[PrestoOp(ins.op)]
    kinds = operand_kinds(spec)
    text = [f"{_PREFIX[k]}{a}" if k in _PREFIX else _imm_text(spec.fmt, a) for k, a in zip(kinds, args_of(ins))]
    if spec.operands.endswith("i(x)"):  # memory operand: imm(base)
        *head, imm, base = text
        text = [*head, f"{imm}({base})"]
    return f"{spec.mnemonic:<11}" + ", ".join(text)


def _imm_text(fmt: Fmt, value: int) -> str:
    return f"{value:#x}" if fmt is Fmt.U else str(value)


_MEM = re.compile(r"^(-?(?:0x[0-9a-fA-F]+|\d+))\((\w+)\)$")


def _operand(token: str, kind: str, where: str) -> int:
    if kind in _PREFIX:
        if not re.fullmatch(rf"{kind}\d+", token):
            raise MachineCodeError(f"{where}: expected a {kind}-register like {kind}3, got {token!r}")
        return int(token[1:])
    try:
        return int(token, 0)
    except ValueError:
        raise MachineCodeError(f"{where}: expected an integer immediate, got {token!r}") from None


def parse_line(line: str, where: str = "line") -> Instr | None:
    """The instruction on one line of assembly; None for a blank or comment line.
    Raises `MachineCodeError` naming `where` for anything else that does not parse."""
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    mnemonic, _, rest = text.partition(" ")
    spec = BY_MNEMONIC.get(mnemonic)
    if spec is None:
        raise MachineCodeError(f"{where}: unknown mnemonic {mnemonic!r}")
    tokens = [t.strip() for t in rest.split(",")] if rest.strip() else []
    if spec.operands.endswith("i(x)") and tokens:
        m = _MEM.match(tokens[-1].replace(" ", ""))
        if not m:
            raise MachineCodeError(f"{where}: {mnemonic} needs a memory operand like 256(x10), got {tokens[-1]!r}")
        tokens[-1:] = [m.group(1), m.group(2)]
    kinds = operand_kinds(spec)
    if len(tokens) != len(kinds):
        raise MachineCodeError(f"{where}: {mnemonic} takes operands {spec.operands!r}, got {rest.strip()!r}")
    ins = from_args(spec.op, tuple(_operand(t, k, where) for t, k in zip(tokens, kinds)))
    try:
        encode(ins)
    except MachineCodeError as e:
        raise MachineCodeError(f"{where}: {e}") from None
    return ins


def parse(text: str, name: str = "<asm>") -> list[Instr]:
    """Every instruction of an assembly text (errors name ``name:LINE``)."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        ins = parse_line(line, f"{name}:{i}")
        if ins is not None:
            out.append(ins)
    return out


def assemble(text: str, name: str = "<asm>") -> np.ndarray:
    """The uint32 words of an assembly text."""
    return np.array([encode(i) for i in parse(text, name)], dtype=np.uint32)


def disassemble(words: Iterable[int]) -> str:
    """Assembly text of instruction words, one line each (`MachineCodeError` for an
    illegal word, naming its index)."""
    lines = []
    for k, w in enumerate(words):
        try:
            lines.append(format_instr(decode(int(w))))
        except MachineCodeError as e:
            raise MachineCodeError(f"word {k}: {e}") from None
    return "\n".join(lines) + ("\n" if lines else "")
