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

import json
import os
import struct
from pathlib import Path

import numpy as np

from fhec.backends.streams import HAS_IMM, STREAM_ARITY, Streams, StreamOp, Unit
from fhec.errors import FhecError
from fhec.ir.limb_ops import LimbOp

__all__ = [
    "FORMAT_VERSION",
    "encode_stream",
    "decode_stream",
    "format_stream",
    "parse_stream",
    "write_streams",
    "read_streams",
    "StreamFormatError",
]

FORMAT_VERSION = 1
MAGIC = b"FHECSTRM"
_HEADER = struct.Struct("<8sHHIIIII")  # magic, version, flags, records, N, slots, unit, reserved
_WAIT_OP = 63
_NONE = 0xFFFFFFFF
_MOD_NONE = 1023
_FLAG_TAGS = 1

_FIELDS = ("cycle", "op", "dst", "src0", "src1", "mod", "imm", "tag")


class StreamFormatError(FhecError):
    """A stream file is malformed (bad magic, truncated, inconsistent fields) or a
    stream cannot be encoded (a field does not fit its bits)."""


def _unit_entries(streams: Streams, unit: int) -> dict[str, np.ndarray]:
    start = streams.unit_start
    a, b = int(start[unit]), int(start[unit + 1])
    return {f: getattr(streams, f)[a:b] for f in _FIELDS}


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
    flags = _FLAG_TAGS if tags else 0
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, flags, len(rec), streams.N, streams.slots, unit, 0)
    body = rec.astype("<u4").tobytes()
    tail = e["tag"].astype("<i4").tobytes() if tags else b""
    return header + body + tail


def decode_stream(data: bytes) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Decode one binary stream: ``(header fields, columns)``.

    The header dict has ``N``, ``slots``, ``unit`` and ``records``; the columns are
    those of `Streams` except ``unit`` (``tag`` is all -1 without a tag section).
    Raises StreamFormatError for a bad magic, version or length.
    """
    if len(data) < _HEADER.size:
        raise StreamFormatError("stream file shorter than its header")
    magic, version, flags, count, N, slots, unit, _ = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise StreamFormatError(f"not an fhec stream (magic {magic!r})")
    if version != FORMAT_VERSION:
        raise StreamFormatError(f"stream format version {version}; this fhec reads version {FORMAT_VERSION}")
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
    if np.any((op >= len(LimbOp)) & (op != StreamOp.LOAD) & (op != StreamOp.STORE)):
        raise StreamFormatError("unknown opcode in stream")
    mod = (rec[:, 0] >> 6) & 0x3FF

    def loc(col: np.ndarray) -> np.ndarray:
        return np.where(col == _NONE, -1, col)

    third = loc(rec[:, 3])
    has_imm = HAS_IMM[op]
    tags = np.full(n, -1, dtype=np.int64)
    if flags & _FLAG_TAGS:
        if len(data) < body_end + 4 * n:
            raise StreamFormatError("stream tag section truncated")
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
    return {"N": N, "slots": slots, "unit": unit, "records": count}, cols


# --- text --------------------------------------------------------------------------------------


def _operands(o: int, dst: int, src0: int, src1: int, mod: int, imm: int) -> str:
    if o == StreamOp.LOAD:
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
    cols = [e[f].tolist() for f in _FIELDS]
    prev = 0
    for cyc, o, dst, s0, s1, mod, imm, tag in zip(*cols):
        prov = "-" if tag < 0 else (f"r{tag}" if o in (StreamOp.LOAD, StreamOp.STORE) else f"i{tag}")
        body = _operands(o, dst, s0, s1, mod, imm)
        lines.append(f"  {cyc:>9} {'+' + str(cyc - prev):>9}  {StreamOp(o).name:<10} {body:<32} ; {prov}")
        prev = cyc
    return "\n".join(lines) + "\n"


def _int_after(token: str, prefix: str, line_no: int) -> int:
    if not token.startswith(prefix):
        raise StreamFormatError(f"line {line_no}: expected {prefix}<number>, got {token!r}")
    try:
        return int(token[len(prefix):])
    except ValueError:
        raise StreamFormatError(f"line {line_no}: bad number in {token!r}") from None


def parse_stream(text: str) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Parse one text stream: ``(header key=value fields, columns)`` (columns as in
    `decode_stream`). Raises StreamFormatError naming the line of any malformed entry,
    including a wait that disagrees with the cycles."""
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
        cyc = int(toks[0])
        wait = _int_after(toks[1], "+", no)
        if wait != cyc - prev:
            raise StreamFormatError(f"line {no}: wait +{wait} disagrees with cycles {prev} -> {cyc}")
        prev = cyc
        if toks[2] not in names:
            raise StreamFormatError(f"line {no}: unknown op {toks[2]!r}")
        o = names[toks[2]]
        dst = src0 = src1 = mod = imm = -1
        rest = toks[5:]
        if o == StreamOp.LOAD:
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
        p = prov.strip()
        tag = -1 if p in ("", "-") else _int_after(p, p[0], no)
        rows.append((cyc, o, dst, src0, src1, mod, imm, tag))
    arr = np.array(rows, dtype=np.int64).reshape(-1, len(_FIELDS))
    return header, {f: arr[:, i] for i, f in enumerate(_FIELDS)}


# --- directories ------------------------------------------------------------------------------


def _file_stem(u: Unit) -> str:
    return u.name


def write_streams(streams: Streams, out_dir: str | os.PathLike[str], *, tags: bool = True) -> list[Path]:
    """Write every unit's stream as ``<unit>.txt`` and ``<unit>.bin`` into `out_dir`
    (created if needed), plus ``manifest.json`` describing the units. Returns the
    paths written. Raises StreamFormatError if a stream cannot be encoded."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, u in enumerate(streams.units):
        txt = out / f"{_file_stem(u)}.txt"
        txt.write_text(format_stream(streams, i))
        binf = out / f"{_file_stem(u)}.bin"
        binf.write_bytes(encode_stream(streams, i, tags=tags))
        written += [txt, binf]
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
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    written.append(path)
    return written


def read_streams(in_dir: str | os.PathLike[str], *, fmt: str = "bin") -> Streams:
    """Read a directory written by `write_streams` back into `Streams`, from the
    binary (``fmt="bin"``) or text (``fmt="txt"``) files. Raises StreamFormatError
    for a missing or malformed file, ValueError for an unknown `fmt`."""
    if fmt not in ("bin", "txt"):
        raise ValueError(f"fmt must be 'bin' or 'txt', not {fmt!r}")
    src = Path(in_dir)
    try:
        manifest = json.loads((src / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        raise StreamFormatError(f"{src}: cannot read manifest.json ({e})") from None
    units = tuple(Unit(u["name"], u["kind"], u["cluster"], u["index"]) for u in manifest["units"])
    parts = {f: [] for f in _FIELDS}
    unit_col = []
    for i, u in enumerate(manifest["units"]):
        path = src / u["binary" if fmt == "bin" else "text"]
        try:
            if fmt == "bin":
                _, cols = decode_stream(path.read_bytes())
            else:
                _, cols = parse_stream(path.read_text())
        except OSError as e:
            raise StreamFormatError(f"{path}: {e.strerror or e}") from None
        for f in _FIELDS:
            parts[f].append(cols[f])
        unit_col.append(np.full(len(cols["op"]), i, dtype=np.int64))
    cols = {f: np.concatenate(parts[f]) if parts[f] else np.zeros(0, np.int64) for f in _FIELDS}
    return Streams.from_entries(
        target=manifest["target"], N=manifest["N"], slots=manifest["slots"], units=units,
        total_cycles=manifest["total_cycles"], unit=np.concatenate(unit_col) if unit_col else np.zeros(0), **cols,
    )
