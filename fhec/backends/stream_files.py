"""Instruction streams on disk, for every stream target: a readable text format and a compact binary encoding.

The format follows F1: it gives every functional unit and memory controller its own instruction stream, in
"a compact instruction format, which encodes a single operation followed by the
number of cycles to wait" (F1 §3). This module writes `Streams`
(fhec.backends.streams) in that spirit. ``docs/isa.md`` is the full specification;
this is a summary.

Text, one file per unit (``<unit>.txt``), one line per entry::

    # fhec-streams v1 target=f1 unit=c0.ntt0 kind=ntt cluster=0 N=16384 slots=1024 entries=2
    #     cycle      wait  op         operands
            143      +143  NTT        s12 <- s3 @q2              ; i17
            271      +128  AUT        s40 <- s12 @q2 k=5         ; i18

Operands: ``sK`` a scratchpad slot, ``mK`` a memory vector, ``@qK`` the modulus
index, ``k=`` a Galois element, ``c=`` a constant index. After ``;`` the tag:
``iK`` instruction K of the program, ``rK`` rvec K (memory ops), ``-`` none.

Binary, one file per unit (``<unit>.bin``), little-endian: a 32-byte header, then
16-byte records of four 32-bit words::

    w0  bits 0-5 op (StreamOp; 63 = WAIT)  bits 6-15 mod (1023 = none)  bits 16-31 wait
    w1  dst      w2  src0      w3  src1 (MUL/ADD/SUB) or imm (AUT/MUL_CONST/BCONV/ADD_CONST)
    (0xFFFFFFFF = none)

A wait above 65535 cycles is carried by WAIT records (w1 = cycles, at most
2^32 - 1 each) before the entry, whose own wait field is then 0. If the header's flag bit 0 is set, the
records are followed by one int32 tag per non-WAIT record.

`write_streams` writes both encodings of every unit and a ``manifest.json``;
`read_streams` reads either back into an identical `Streams`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import struct
from pathlib import Path

import numpy as np

from fhec.backends.onchip import OnChip
from fhec.backends.onchip_files import (NetworkFormatError, decode_network, encode_network, format_network,
                                        parse_network, transfers_from_columns)
from fhec.backends.streams import HAS_IMM, STREAM_ARITY, Streams, StreamOp, Unit
from fhec.errors import FhecError, InvalidArgumentError, OutputDirectoryError
from fhec.ir.limb_ops import LimbOp
from fhec.validate import is_int

__all__ = [
    "FORMAT_VERSION",
    "encode_stream",
    "decode_stream",
    "format_stream",
    "parse_stream",
    "write_streams",
    "read_streams",
    "prepare_output_dir",
    "isa_output_names",
    "check_columns",
    "StreamFormatError",
]

FORMAT_VERSION = 1
MAGIC = b"FHECSTRM"
_HEADER = struct.Struct("<8sHHIIIII")  # magic, version, flags, records, N, slots, unit, reserved
_WAIT_OP = 63
_NONE = 0xFFFFFFFF
_MOD_NONE = 1023
_FLAG_TAGS = 1
_FLAG_REGS = 2
"""Header flag bit 1: three int32 per entry follow the tags, the registers (of the unit's
cluster, -1 none) the entry writes and reads on a target with an on-chip data path."""

_FIELDS = ("cycle", "op", "dst", "src0", "src1", "mod", "imm", "tag")


class StreamFormatError(FhecError):
    """A stream file is malformed (bad magic, truncated, inconsistent fields) or a
    stream cannot be encoded (a field does not fit its bits)."""


def _unit_entries(streams: Streams, unit: int) -> dict[str, np.ndarray]:
    start = streams.unit_start
    a, b = int(start[unit]), int(start[unit + 1])
    return {f: getattr(streams, f)[a:b] for f in _FIELDS}


_REG_FIELDS = ("reg", "reg0", "reg1")


def _unit_registers(streams: Streams, unit: int) -> dict[str, np.ndarray] | None:
    """The registers of unit `unit`'s entries as numbered within its cluster (-1 none),
    or None when the streams carry no on-chip plan or the unit is in no cluster (the
    memory controller moves slots, not registers)."""
    plan = streams.onchip
    if plan is None or streams.units[unit].cluster < 0:
        return None
    start = streams.unit_start
    a, b = int(start[unit]), int(start[unit + 1])
    base = streams.units[unit].cluster * plan.registers
    return {f: np.where(getattr(plan, f)[a:b] >= 0, getattr(plan, f)[a:b] - base, -1) for f in _REG_FIELDS}


# --- binary -----------------------------------------------------------------------------------


def _field32(values: np.ndarray, name: str) -> np.ndarray:
    v = values.astype(np.int64)
    if len(v) and (v.max() >= _NONE or v.min() < -1):
        raise StreamFormatError(f"field {name} does not fit 32 bits")
    return np.where(v < 0, _NONE, v).astype(np.uint32)


def encode_stream(streams: Streams, unit: int, *, tags: bool = True) -> bytes:
    """The binary encoding of unit `unit`'s stream (layout in the module docstring).

    Raises StreamFormatError if a field does not fit (a modulus index above 1022,
    a location or immediate of 2^32 - 1 or more) or the stream is not sorted by cycle.
    """
    e = _unit_entries(streams, unit)
    n = len(e["op"])
    cycle = e["cycle"].astype(np.int64)
    wait = np.diff(cycle, prepend=0)
    if n and wait.min() < 0:
        raise StreamFormatError(f"unit {unit}: negative wait; stream not sorted by cycle")
    op = e["op"].astype(np.int64)
    mod = e["mod"].astype(np.int64)
    if n and mod.max() >= _MOD_NONE:
        raise StreamFormatError(f"unit {unit}: modulus index {mod.max()} does not fit 10 bits")
    mod = np.where(mod < 0, _MOD_NONE, mod)
    long_wait = wait > 0xFFFF
    w0 = (op | (mod << 6) | (np.where(long_wait, 0, wait) << 16)).astype(np.uint32)
    third = np.where(HAS_IMM[op], e["imm"], e["src1"])
    rec = np.stack([w0, _field32(e["dst"], "dst"), _field32(e["src0"], "src0"), _field32(third, "src1/imm")], axis=1)
    if long_wait.any():
        # each long wait becomes WAIT records of at most 2^32 - 1 cycles before its entry
        parts = []
        prev = 0
        for k in np.flatnonzero(long_wait).tolist():
            parts.append(rec[prev:k])
            left = int(wait[k])
            while left:
                chunk = min(left, _NONE)
                parts.append(np.array([[_WAIT_OP, chunk, 0, 0]], dtype=np.uint32))
                left -= chunk
            prev = k
        parts.append(rec[prev:])
        rec = np.concatenate(parts)
    regs = _unit_registers(streams, unit)
    flags = (_FLAG_TAGS if tags else 0) | (_FLAG_REGS if regs is not None else 0)
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, flags, len(rec), streams.N, streams.slots, unit, 0)
    body = rec.astype("<u4").tobytes()
    tail = e["tag"].astype("<i4").tobytes() if tags else b""
    if regs is not None:
        tail += np.stack([regs[f] for f in _REG_FIELDS], axis=1).astype("<i4").tobytes()
    return header + body + tail


def decode_stream(data: bytes) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Decode one binary stream: ``(header fields, columns)``.

    The header dict has ``N``, ``slots``, ``unit`` and ``records``; the columns are
    those of `Streams` except ``unit`` (``tag`` is all -1 without a tag section).
    Raises StreamFormatError for a bad magic, version or length (the file must be
    exactly header + records + tags long), and for entries `check_columns` refuses.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StreamFormatError(f"decode_stream takes the bytes of a .bin stream file, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEADER.size:
        raise StreamFormatError("stream file shorter than its header")
    magic, version, flags, count, N, slots, unit, _ = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise StreamFormatError(f"not an fhec stream (magic {magic!r})")
    if version != FORMAT_VERSION:
        raise StreamFormatError(f"stream format version {version}; this fhec reads version {FORMAT_VERSION}")
    if flags & ~(_FLAG_TAGS | _FLAG_REGS):
        raise StreamFormatError(f"unknown header flags {flags:#x}; this fhec knows bits 0 (tags) and 1 (registers)")
    if not _is_ring_degree(N):
        raise StreamFormatError(f"header N = {N} is not a power of two between 2 and 2^17")
    body_end = _HEADER.size + 16 * count
    if len(data) < body_end:
        raise StreamFormatError("stream file truncated")
    rec = np.frombuffer(data, dtype="<u4", count=4 * count, offset=_HEADER.size).reshape(count, 4).astype(np.int64)
    op = rec[:, 0] & 0x3F
    is_wait = op == _WAIT_OP
    wait = np.where(is_wait, rec[:, 1], rec[:, 0] >> 16)
    cycle = np.cumsum(wait)[~is_wait]
    rec, op = rec[~is_wait], op[~is_wait]
    n = len(rec)
    if np.any((op >= len(LimbOp)) & (op != StreamOp.LOAD) & (op != StreamOp.STORE) & (op != StreamOp.GEN)):
        raise StreamFormatError("unknown opcode in stream")
    mod = (rec[:, 0] >> 6) & 0x3FF

    def loc(col: np.ndarray) -> np.ndarray:
        return np.where(col == _NONE, -1, col)

    third = loc(rec[:, 3])
    has_imm = HAS_IMM[op]
    tags = np.full(n, -1, dtype=np.int64)
    tags_end = body_end + (4 * n if flags & _FLAG_TAGS else 0)
    expected = tags_end + (12 * n if flags & _FLAG_REGS else 0)
    if len(data) < expected:
        raise StreamFormatError("stream tag section truncated")
    if len(data) > expected:
        # e.g. a header count of 0 in front of a body: the records would be ignored.
        raise StreamFormatError(
            f"stream file has {len(data) - expected} bytes after its last record/tag; the header's record count "
            f"({count}) does not match the file"
        )
    if flags & _FLAG_TAGS:
        tags = np.frombuffer(data, dtype="<i4", count=n, offset=body_end).astype(np.int64)
    cols = {
        "cycle": cycle,
        "op": op,
        "dst": loc(rec[:, 1]),
        "src0": loc(rec[:, 2]),
        "src1": np.where(has_imm, -1, third),
        "mod": np.where(mod == _MOD_NONE, -1, mod),
        "imm": np.where(has_imm, third, -1),
        "tag": tags,
    }
    if flags & _FLAG_REGS:
        regs = np.frombuffer(data, dtype="<i4", count=3 * n, offset=tags_end).reshape(n, 3).astype(np.int64)
        cols.update({f: regs[:, j] for j, f in enumerate(_REG_FIELDS)})
    check_columns(cols, slots, "binary stream")
    return {"N": N, "slots": slots, "unit": unit, "records": count}, cols


def _is_ring_degree(n) -> bool:
    return is_int(n) and 2 <= n <= 2**17 and n & (n - 1) == 0


_LOC_MAX = 2**31 - 1  # locations, immediates and tags are int32 in `Streams`


def check_columns(cols: dict[str, np.ndarray], slots: int, where: str) -> None:
    """Refuse entries no fhec schedule can contain (StreamFormatError naming the entry).

    Cycles are non-negative and non-decreasing; every op is known; compute ops name a
    modulus index 0..1022, scratchpad slots below `slots` and the sources their arity
    needs; LOAD / GEN / STORE move between a slot and a memory vector and name no modulus;
    immediates are present exactly on the ops that take one; everything fits int32.
    """
    op, n = cols["op"], len(cols["op"])
    if n == 0:
        return
    known = np.isin(op, [int(o) for o in StreamOp])
    fill = (op == StreamOp.LOAD) | (op == StreamOp.GEN)
    mem = fill | (op == StreamOp.STORE)
    safe_op = np.where(known, op, 0)
    two = (STREAM_ARITY[safe_op] == 2) & ~mem
    imm = HAS_IMM[safe_op]
    is_slot = lambda v: (v >= 0) & (v < slots)  # noqa: E731
    is_mem = lambda v: (v >= 0) & (v <= _LOC_MAX)  # noqa: E731
    checks = (
        ("unknown opcode", ~known),
        ("negative cycle", cols["cycle"] < 0),
        ("cycles go backwards", np.diff(cols["cycle"], prepend=0) < 0),
        ("compute op without a modulus index 0..1022", ~mem & ((cols["mod"] < 0) | (cols["mod"] >= _MOD_NONE))),
        ("LOAD/STORE with a modulus index", mem & (cols["mod"] != -1)),
        (f"destination outside the {slots} scratchpad slots",
         np.where(op == StreamOp.STORE, ~is_mem(cols["dst"]), ~is_slot(cols["dst"]))),
        (f"source outside the {slots} scratchpad slots",
         np.where(fill, ~is_mem(cols["src0"]), ~is_slot(cols["src0"]))),
        ("second source missing or out of range", np.where(two, ~is_slot(cols["src1"]), cols["src1"] != -1)),
        ("immediate missing or out of range", np.where(imm, (cols["imm"] < 0) | (cols["imm"] > _LOC_MAX),
                                                       cols["imm"] != -1)),
        ("tag out of range", (cols["tag"] < -1) | (cols["tag"] > _LOC_MAX)),
    )
    for what, bad in checks:
        if bad.any():
            k = int(np.argmax(bad))
            row = ", ".join(f"{f}={int(cols[f][k])}" for f in _FIELDS)
            raise StreamFormatError(f"{where}: entry {k}: {what} ({row})")


# --- text --------------------------------------------------------------------------------------


def _operands(o: int, dst: int, src0: int, src1: int, mod: int, imm: int) -> str:
    if o in (StreamOp.LOAD, StreamOp.GEN):
        return f"s{dst} <- m{src0}"
    if o == StreamOp.STORE:
        return f"m{dst} <- s{src0}"
    srcs = f"s{src0}" + (f", s{src1}" if src1 >= 0 else "")
    text = f"s{dst} <- {srcs} @q{mod}"
    if o == StreamOp.AUT:
        text += f" k={imm}"
    elif HAS_IMM[o]:
        text += f" c={imm}"
    return text


def format_stream(streams: Streams, unit: int) -> str:
    """The text form of unit `unit`'s stream (layout in the module docstring)."""
    u = streams.units[unit]
    e = _unit_entries(streams, unit)
    n = len(e["op"])
    lines = [
        f"# fhec-streams v{FORMAT_VERSION} target={streams.target} unit={u.name} kind={u.kind} "
        f"cluster={u.cluster} N={streams.N} slots={streams.slots} entries={n}",
        f"# {'cycle':>9} {'wait':>9}  {'op':<10} operands",
    ]
    regs = _unit_registers(streams, unit)
    if regs is not None:
        lines[0] += f" registers={streams.onchip.registers}"
    cols = [e[f].tolist() for f in _FIELDS]
    reg_cols = [regs[f].tolist() for f in _REG_FIELDS] if regs is not None else [[None] * n] * 3
    prev = 0
    for (cyc, o, dst, s0, s1, mod, imm, tag), (r, r0, r1) in zip(zip(*cols), zip(*reg_cols)):
        prov = "-" if tag < 0 else (f"r{tag}" if o in (StreamOp.LOAD, StreamOp.STORE, StreamOp.GEN) else f"i{tag}")
        body = _operands(o, dst, s0, s1, mod, imm)
        if r is not None and o not in (StreamOp.LOAD, StreamOp.STORE, StreamOp.GEN):
            # the register view: a source streamed over the network reads no register ("net")
            srcs = ", ".join("net" if x < 0 else f"r{x}" for x in ((r0, r1) if s1 >= 0 else (r0,)))
            prov += f" | r{r} <- {srcs}"
        lines.append(f"  {cyc:>9} {'+' + str(cyc - prev):>9}  {StreamOp(o).name:<10} {body:<32} ; {prov}")
        prev = cyc
    return "\n".join(lines) + "\n"


def _int_after(token: str, prefix: str, line_no: int) -> int:
    if not token.startswith(prefix):
        raise StreamFormatError(f"line {line_no}: expected {prefix}<number>, got {token!r}")
    digits = token[len(prefix):]
    # Plain decimal digits only (int() would also take "1_000", " 7" or "٣").
    if not re.fullmatch(r"-?[0-9]{1,18}", digits):
        raise StreamFormatError(f"line {line_no}: bad number in {token!r}")
    return int(digits)


def parse_stream(text: str) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Parse one text stream: ``(header key=value fields, columns)`` (columns as in
    `decode_stream`). Raises StreamFormatError naming the line of any malformed entry,
    including a wait that disagrees with the cycles, a line count that disagrees with the
    header's ``entries=`` (when it has one), and entries `check_columns` refuses
    (slots are checked against the header's ``slots=`` when it has one)."""
    if not isinstance(text, str):
        raise StreamFormatError(f"parse_stream takes the text of a .txt stream file, not {type(text).__name__}")
    header: dict[str, str] = {}
    rows: list[tuple[int, ...]] = []
    names = {o.name: int(o) for o in StreamOp}
    prev = 0
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not header and "fhec-streams" in line:
                header = dict(tok.split("=", 1) for tok in line[1:].split() if "=" in tok)
            continue
        body, _, prov = line.partition(";")
        toks = body.replace(",", " ").split()
        if len(toks) < 5 or toks[4] != "<-":
            raise StreamFormatError(f"line {no}: expected 'cycle +wait OP dst <- src...', got {raw!r}")
        cyc = _int_after(toks[0], "", no)
        wait = _int_after(toks[1], "+", no)
        if wait != cyc - prev:
            raise StreamFormatError(f"line {no}: wait +{wait} disagrees with cycles {prev} -> {cyc}")
        prev = cyc
        if toks[2] not in names:
            raise StreamFormatError(f"line {no}: unknown op {toks[2]!r}")
        o = names[toks[2]]
        dst = src0 = src1 = mod = imm = -1
        rest = toks[5:]
        if not rest:
            raise StreamFormatError(f"line {no}: {toks[2]} has no source operand")
        if o in (StreamOp.LOAD, StreamOp.GEN):
            dst, src0 = _int_after(toks[3], "s", no), _int_after(rest[0], "m", no)
        elif o == StreamOp.STORE:
            dst, src0 = _int_after(toks[3], "m", no), _int_after(rest[0], "s", no)
        else:
            dst = _int_after(toks[3], "s", no)
            srcs = [t for t in rest if t.startswith("s")]
            if len(srcs) != STREAM_ARITY[o]:
                raise StreamFormatError(f"line {no}: {toks[2]} takes {STREAM_ARITY[o]} source slot(s)")
            src0 = _int_after(srcs[0], "s", no)
            src1 = _int_after(srcs[1], "s", no) if len(srcs) > 1 else -1
            for t in rest:
                if t.startswith("@q"):
                    mod = _int_after(t, "@q", no)
                elif t.startswith("k=") or t.startswith("c="):
                    imm = _int_after(t, t[:2], no)
        p, bar, reg_text = prov.partition("|")
        p = p.strip()
        tag = -1 if p in ("", "-") else _int_after(p, p[0], no)
        if p not in ("", "-") and p[0] not in "ir":
            raise StreamFormatError(f"line {no}: tag {p!r} must be iK, rK or -")
        regs = _parse_registers(reg_text, int(STREAM_ARITY[o]), no) if bar else (-1, -1, -1)
        rows.append((cyc, o, dst, src0, src1, mod, imm, tag, *regs))
    try:
        arr = np.array(rows, dtype=np.int64).reshape(-1, len(_FIELDS) + len(_REG_FIELDS))
    except OverflowError:
        raise StreamFormatError("a number in the stream does not fit 64 bits") from None
    cols = {f: arr[:, i] for i, f in enumerate(_FIELDS + _REG_FIELDS)}
    if "registers" not in header:
        for f in _REG_FIELDS:
            del cols[f]
    # The header's entry count is what makes a truncated (or padded) text file
    # detectable, as the record count does for a binary one.
    entries = _header_int(header, "entries", len(rows))
    if entries != len(rows):
        raise StreamFormatError(f"header says entries={entries}, but the stream has {len(rows)} entries")
    slots = _header_int(header, "slots", 2**31)
    check_columns(cols, slots, "text stream")
    return header, cols


def _parse_registers(text: str, arity: int, no: int) -> tuple[int, int, int]:
    """(reg, reg0, reg1) of a unit line's register view ``rK <- rA[, rB]`` (``net``: a
    source streamed over the network; -1 for what is absent)."""
    toks = text.replace(",", " ").split()
    if len(toks) != 2 + arity or toks[1] != "<-":
        raise StreamFormatError(f"line {no}: expected the register view 'rK <- src' with {arity} source(s), "
                                f"got {text.strip()!r}")
    regs = [-1 if t == "net" else _int_after(t, "r", no) for t in [toks[0]] + toks[2:]]
    if any(r < 0 and t != "net" for r, t in zip(regs, [toks[0]] + toks[2:])):
        raise StreamFormatError(f"line {no}: a register number is negative in {text.strip()!r}")
    if regs[0] < 0:
        raise StreamFormatError(f"line {no}: a functional unit writes a register, not {toks[0]!r}")
    regs += [-1] * (3 - len(regs))
    return regs[0], regs[1], regs[2]


def _header_int(header: dict[str, str], key: str, default: int) -> int:
    if key not in header:
        return default
    try:
        value = int(header[key])
    except ValueError:
        raise StreamFormatError(f"header field {key}={header[key]!r} is not an integer") from None
    if value < 0:
        raise StreamFormatError(f"header field {key}={value} is negative")
    return value


# --- directories ------------------------------------------------------------------------------


def _file_stem(u: Unit) -> str:
    return u.name


def isa_output_names(program: str) -> list[str]:
    """The files `IsaCompiled.write` writes for program `program`: ``<stem>.s``,
    ``<stem>.bin``, ``<stem>.memory.npz`` and ``report.json``, the stem being the
    program name with every character but letters, digits, ``-`` and ``_`` made ``_``."""
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in program) or "program"
    return [f"{stem}.s", f"{stem}.bin", f"{stem}.memory.npz", "report.json"]


def _earlier_isa_output(out: Path) -> list[str]:
    """The files of an earlier `IsaCompiled.write` into `out`, found from its
    ``report.json`` (an ISA report names its ``isa`` and ``program``); [] when there is none."""
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none, or not fhec's: nothing known to clear
        return []
    if not (isinstance(report, dict) and isinstance(report.get("isa"), str) and isinstance(report.get("program"), str)):
        return []  # a stream target's report (Compiled.write overwrites it) or not fhec's
    return isa_output_names(report["program"])


def prepare_output_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create `out_dir` if needed and remove fhec's output of an earlier write there
    (the stream files of `write_streams`, the files of `IsaCompiled.write`), so that no
    stale file of another target or program sits next to the new output. Both writers call it.

    Only files the old ``manifest.json`` names (its units' text and binary files, and
    the manifest itself) and, when ``report.json`` is an ISA report, the files
    `isa_output_names` gives for its program are removed; nothing else in the directory
    is touched. Raises OutputDirectoryError when the path is not a writable directory, or
    when it holds a ``manifest.json`` that is not fhec's (then fhec does not know what to clear).
    """
    if not isinstance(out_dir, (str, os.PathLike)):
        raise OutputDirectoryError(f"the output directory must be a path, not {type(out_dir).__name__}")
    out = Path(out_dir)
    try:
        if out.exists() and not out.is_dir():
            raise OutputDirectoryError(f"{out} exists and is not a directory; pass a directory for the output")
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirectoryError(f"cannot create the output directory {out}: {e.strerror or e}") from None
    except ValueError as e:  # a NUL byte in the path
        raise OutputDirectoryError(f"{str(out)!r} is not a usable path ({e})") from None
    names = _earlier_isa_output(out)
    if (out / "manifest.json").exists():
        try:
            manifest = _read_manifest(out)
            names += [u[key] for u in _manifest_units(manifest, out) for key in ("text", "binary")]
            names += [n[key] for n in _manifest_networks(manifest, out) for key in ("text", "binary")]
        except StreamFormatError as e:
            raise OutputDirectoryError(
                f"{out} holds a manifest.json fhec cannot read ({e}); write to an empty directory, or remove it "
                f"so that no stale stream files remain next to the new ones"
            ) from None
        names.append("manifest.json")
    try:
        for name in names:
            (out / name).unlink(missing_ok=True)
    except OSError as e:
        raise OutputDirectoryError(f"cannot remove the earlier output in {out}: {e.strerror or e}") from None
    return out


def write_streams(streams: Streams, out_dir: str | os.PathLike[str], *, tags: bool = True) -> list[Path]:
    """Write every unit's stream as ``<unit>.txt`` and ``<unit>.bin`` into `out_dir`
    (created if needed; the files of an earlier `write_streams` there are removed
    first, see `prepare_output_dir`), plus ``manifest.json`` describing the units.
    Returns the paths written. Raises StreamFormatError if a stream cannot be encoded,
    OutputDirectoryError if the directory cannot be written."""
    out = prepare_output_dir(out_dir)
    # Encode everything before touching the disk: a stream that cannot be encoded
    # leaves no half-written directory behind.
    files = []
    for i, u in enumerate(streams.units):
        files.append((out / f"{_file_stem(u)}.txt", format_stream(streams, i)))
        files.append((out / f"{_file_stem(u)}.bin", encode_stream(streams, i, tags=tags)))
    plan = streams.onchip
    if plan is not None:
        for c in _plan_clusters(streams):
            files.append((out / f"c{c}.net.txt", format_network(streams, c)))
            files.append((out / f"c{c}.net.bin", encode_network(streams, c)))
    manifest = {
        "format": "fhec-streams",
        "version": FORMAT_VERSION,
        "target": streams.target,
        "N": streams.N,
        "slots": streams.slots,
        "total_cycles": streams.total_cycles,
        "entries": len(streams),
        "units": [
            {"name": u.name, "kind": u.kind, "cluster": u.cluster, "index": u.index,
             "text": f"{_file_stem(u)}.txt", "binary": f"{_file_stem(u)}.bin"}
            for u in streams.units
        ],
    }
    if plan is not None:
        manifest["onchip"] = {
            "registers": plan.registers,
            "transfers": len(plan.transfers),
            "networks": [{"cluster": c, "text": f"c{c}.net.txt", "binary": f"c{c}.net.bin"}
                         for c in _plan_clusters(streams)],
        }
    files.append((out / "manifest.json", json.dumps(manifest, indent=1) + "\n"))
    for path, content in files:
        write_file(path, content)
    return [path for path, _ in files]


def _plan_clusters(streams: Streams) -> list[int]:
    """The clusters that get a network stream: every cluster a unit belongs to."""
    return sorted({u.cluster for u in streams.units if u.cluster >= 0})


def write_file(path: Path, content: str | bytes) -> None:
    """Write one output file; OutputDirectoryError (naming it) if that fails."""
    try:
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    except OSError as e:
        raise OutputDirectoryError(f"cannot write {path}: {e.strerror or e}") from None


def _manifest_units(manifest: dict, src: Path) -> list[dict]:
    """The manifest's unit list, each unit checked (StreamFormatError naming the field)."""
    units = _manifest_field(manifest, "units", list, src)
    if len(units) > 2**15 - 1:
        raise StreamFormatError(f"{src}/manifest.json: {len(units)} units; at most 32767")
    for i, u in enumerate(units):
        where = f"units[{i}]"
        if not isinstance(u, dict):
            raise StreamFormatError(f"{src}/manifest.json: {where} must be an object")
        for key in ("name", "kind", "text", "binary"):
            _manifest_field(u, key, str, src, where)
        for key, least in (("cluster", -1), ("index", 0)):
            if _manifest_field(u, key, int, src, where) < least:
                raise StreamFormatError(f"{src}/manifest.json: {where}.{key} = {u[key]} is below {least}")
        for key in ("text", "binary"):
            _plain_name(u[key], src, f"{where}.{key}")
    return units


def _plain_name(name: str, src: Path, where: str) -> None:
    # Stream files live in the directory itself: no paths, no escaping it.
    if not name or name in (".", "..") or "/" in name or "\\" in name or os.sep in name or "\0" in name:
        raise StreamFormatError(f"{src}/manifest.json: {where} = {name!r} must be a plain file name")


def _manifest_networks(manifest: dict, src: Path) -> list[dict]:
    """The manifest's network streams (none without an ``onchip`` section), each checked."""
    if "onchip" not in manifest:
        return []
    onchip = _manifest_field(manifest, "onchip", dict, src)
    for key in ("registers", "transfers"):
        if _manifest_field(onchip, key, int, src, "onchip") < (1 if key == "registers" else 0):
            raise StreamFormatError(f"{src}/manifest.json: onchip.{key} = {onchip[key]} is out of range")
    nets = _manifest_field(onchip, "networks", list, src, "onchip")
    for i, n in enumerate(nets):
        where = f"onchip.networks[{i}]"
        if not isinstance(n, dict):
            raise StreamFormatError(f"{src}/manifest.json: {where} must be an object")
        if _manifest_field(n, "cluster", int, src, where) < 0:
            raise StreamFormatError(f"{src}/manifest.json: {where}.cluster = {n['cluster']} is negative")
        for key in ("text", "binary"):
            _plain_name(_manifest_field(n, key, str, src, where), src, f"{where}.{key}")
    return nets


def _manifest_field(obj: dict, key: str, kind: type, src: Path, where: str = "") -> object:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        at = f"{where}.{key}" if where else key
        raise StreamFormatError(
            f"{src}/manifest.json: field {at} = {value!r:.60} must be {'an integer' if kind is int else kind.__name__}"
        )
    return value


def _read_manifest(src: Path) -> dict:
    try:
        manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # ValueError: bad JSON or not UTF-8
        raise StreamFormatError(f"{src}: cannot read manifest.json ({e})") from None
    if not isinstance(manifest, dict):
        raise StreamFormatError(f"{src}/manifest.json must hold a JSON object")
    if manifest.get("format") != "fhec-streams" or manifest.get("version") != FORMAT_VERSION:
        raise StreamFormatError(
            f"{src}/manifest.json: format {manifest.get('format')!r:.40} version {manifest.get('version')!r:.20}; "
            f"this fhec reads fhec-streams version {FORMAT_VERSION}"
        )
    _manifest_field(manifest, "target", str, src)
    N = _manifest_field(manifest, "N", int, src)
    if not _is_ring_degree(N):
        raise StreamFormatError(f"{src}/manifest.json: N = {N} is not a power of two between 2 and 2^17")
    for key in ("slots", "total_cycles"):
        if _manifest_field(manifest, key, int, src) < 0:
            raise StreamFormatError(f"{src}/manifest.json: {key} = {manifest[key]} is negative")
    if manifest["slots"] > _LOC_MAX:
        raise StreamFormatError(f"{src}/manifest.json: slots = {manifest['slots']} does not fit 32 bits")
    return manifest


def read_streams(in_dir: str | os.PathLike[str], *, fmt: str = "bin") -> Streams:
    """Read a directory written by `write_streams` back into `Streams`, from the
    binary (``fmt="bin"``) or text (``fmt="txt"``) files.

    Raises StreamFormatError for a missing or malformed manifest or stream file (a
    field of the wrong type, N not a power of two, negative slots or cycles, no units or
    a unit listed twice, a unit file whose header disagrees with the manifest, a text file
    with fewer or more lines than its ``entries=``, an ``entries`` total the files do not
    hold, entries `check_columns` refuses), and InvalidArgumentError for an unknown `fmt`."""
    if fmt not in ("bin", "txt"):
        raise InvalidArgumentError(f"fmt = {fmt!r}: choose 'bin' (the .bin files) or 'txt' (the .txt files)")
    if not isinstance(in_dir, (str, os.PathLike)):
        raise InvalidArgumentError(f"read_streams takes a directory path, not {type(in_dir).__name__}")
    src = Path(in_dir)
    manifest = _read_manifest(src)
    N, slots = manifest["N"], manifest["slots"]
    unit_list = _manifest_units(manifest, src)
    # Every target has at least the memory controller, and a unit (or file) listed twice
    # would be read twice: both mean a damaged manifest, not a schedule.
    if not unit_list:
        raise StreamFormatError(f"{src}/manifest.json: units is empty; every target has at least the unit mem0")
    for key in ("name", "text", "binary"):
        seen: set[str] = set()
        for i, u in enumerate(unit_list):
            if u[key] in seen:
                raise StreamFormatError(f"{src}/manifest.json: units[{i}].{key} = {u[key]!r} is listed twice")
            seen.add(u[key])
    entries = _manifest_field(manifest, "entries", int, src)
    units = tuple(Unit(u["name"], u["kind"], u["cluster"], u["index"]) for u in unit_list)
    parts = {f: [] for f in _FIELDS}
    reg_parts: list[dict[str, np.ndarray] | None] = []
    unit_col = []
    for i, u in enumerate(unit_list):
        path = src / u["binary" if fmt == "bin" else "text"]
        try:
            if fmt == "bin":
                header, cols = decode_stream(path.read_bytes())
                got = {"N": header["N"], "slots": header["slots"], "unit": header["unit"]}
            else:
                header, cols = parse_stream(path.read_text(encoding="utf-8"))
                # the text header names its unit and target: an edited one names another file's
                named = header.get("unit", u["name"])
                got = {"N": _header_int(header, "N", N), "slots": _header_int(header, "slots", slots),
                       "unit": i if named == u["name"] else named}
                if header.get("target", manifest["target"]) != manifest["target"]:
                    raise StreamFormatError(f"header names target {header.get('target')!r}, manifest.json "
                                            f"{manifest['target']!r}")
        except OSError as e:
            raise StreamFormatError(f"{path}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise StreamFormatError(f"{path}: not a text stream (not UTF-8); use fmt='bin' for .bin files") from None
        except StreamFormatError as e:
            raise StreamFormatError(f"{path}: {e}") from None
        want = {"N": N, "slots": slots, "unit": i}
        if got != want:
            raise StreamFormatError(f"{path}: header {got} disagrees with manifest.json {want}")
        check_columns(cols, slots, str(path))
        if len(cols["cycle"]) and cols["cycle"][-1] > manifest["total_cycles"]:
            raise StreamFormatError(
                f"{path}: an entry issues at cycle {int(cols['cycle'][-1])}, after total_cycles = "
                f"{manifest['total_cycles']} in manifest.json"
            )
        for f in _FIELDS:
            parts[f].append(cols[f])
        reg_parts.append({f: cols[f] for f in _REG_FIELDS} if "reg" in cols else None)
        unit_col.append(np.full(len(cols["op"]), i, dtype=np.int64))
    cols = {f: np.concatenate(parts[f]) if parts[f] else np.zeros(0, np.int64) for f in _FIELDS}
    if len(cols["op"]) != entries:
        raise StreamFormatError(
            f"{src}/manifest.json: entries = {entries}, but its unit files hold {len(cols['op'])} entries"
        )
    streams = Streams.from_entries(
        target=manifest["target"], N=N, slots=slots, units=units,
        total_cycles=manifest["total_cycles"], unit=np.concatenate(unit_col) if unit_col else np.zeros(0), **cols,
    )
    if "onchip" not in manifest:
        return streams
    return _with_plan(streams, manifest, src, fmt, reg_parts, units)


def _with_plan(streams: Streams, manifest: dict, src: Path, fmt: str, reg_parts: list, units) -> Streams:
    """`streams` with the on-chip plan the manifest's ``onchip`` section and the files
    describe: the units' registers (as read with their entries) and the network streams."""
    nets = _manifest_networks(manifest, src)
    K = manifest["onchip"]["registers"]
    missing = [units[i].name for i, r in enumerate(reg_parts) if r is None and units[i].cluster >= 0
               and int(streams.unit_start[i + 1] - streams.unit_start[i])]
    if missing:
        raise StreamFormatError(f"{src}/manifest.json has an onchip section, but the streams of {missing[0]} name "
                                f"no registers")
    flat = {}
    for f in _REG_FIELDS:
        pieces = []
        for i, r in enumerate(reg_parts):
            n = int(streams.unit_start[i + 1] - streams.unit_start[i])
            local = r[f] if r is not None else np.full(n, -1, dtype=np.int64)
            if len(local) and (local.max() >= K or local.min() < -1):
                raise StreamFormatError(f"{src}: a register of {units[i].name} is outside the {K} of its cluster")
            pieces.append(np.where(local >= 0, local + max(units[i].cluster, 0) * K, -1))
        flat[f] = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    by_name = {u.name: i for i, u in enumerate(units)}
    parts = []
    for n in nets:
        path = src / n["binary" if fmt == "bin" else "text"]
        try:
            if fmt == "bin":
                header, cols = decode_network(path.read_bytes())
            else:
                header, cols = parse_network(path.read_text(encoding="utf-8"), by_name)
            if int(header["cluster"]) != n["cluster"] or int(header["registers"]) != K:
                raise StreamFormatError(f"header cluster={header['cluster']} registers={header['registers']} "
                                        f"disagrees with manifest.json (cluster={n['cluster']}, registers={K})")
        except OSError as e:
            raise StreamFormatError(f"{path}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise StreamFormatError(f"{path}: not a text network stream (not UTF-8)") from None
        except (NetworkFormatError, StreamFormatError) as e:
            raise StreamFormatError(f"{path}: {e}") from None
        if len(cols["unit"]) and (cols["unit"].max() >= len(units) or cols["unit"].min() < -1):
            raise StreamFormatError(f"{path}: a transfer names unit {int(cols['unit'].max())}, which is not listed")
        parts.append((n["cluster"], cols))
    try:
        transfers = transfers_from_columns(streams, parts)
    except NetworkFormatError as e:
        raise StreamFormatError(f"{src}: {e}") from None
    if len(transfers) != manifest["onchip"]["transfers"]:
        raise StreamFormatError(f"{src}/manifest.json: onchip.transfers = {manifest['onchip']['transfers']}, but "
                                f"its network files hold {len(transfers)}")
    return dataclasses.replace(streams, onchip=OnChip(K, flat["reg"], flat["reg0"], flat["reg1"], transfers))
