"""F1 stream files: text and binary encodings round-trip exactly; malformed files are rejected."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import fhec
from hypothesis import given
from hypothesis import strategies as st

from fhec.backends.stream_files import (
    StreamFormatError,
    decode_stream,
    encode_stream,
    format_stream,
    parse_stream,
    read_streams,
    write_streams,
)
from fhec.backends.streams import HAS_IMM, STREAM_ARITY, StreamOp, Streams, unit_layout
from fhec.backends.target import load_target
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip

from tests.passes.test_offchip import he_program

TINY = load_target("tiny")
SLOTS = 4096
COLUMNS = ("unit", "cycle", "op", "dst", "src0", "src1", "mod", "imm", "tag")


def same(a: Streams, b: Streams) -> bool:
    return (
        all(np.array_equal(getattr(a, c), getattr(b, c)) for c in COLUMNS)
        and (a.target, a.N, a.slots, a.units, a.total_cycles) == (b.target, b.N, b.slots, b.units, b.total_cycles)
    )


@pytest.fixture(scope="module")
def real():
    prog = he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    return schedule_cycles(schedule_offchip(prog, TINY), TINY)


@st.composite
def random_streams(draw):
    """Arbitrary well-formed entries (not a valid schedule): every op, big waits, big fields."""
    units = unit_layout(TINY)
    n = draw(st.integers(0, 40))
    rows = []
    for _ in range(n):
        op = draw(st.sampled_from(list(StreamOp)))
        mem = op in (StreamOp.LOAD, StreamOp.STORE, StreamOp.GEN)  # GEN: the key generator's LOAD
        unit = len(units) - 1 if mem else draw(st.integers(0, len(units) - 2))
        slot, memory = st.integers(0, SLOTS - 1), st.integers(0, 2**31 - 1)
        two = STREAM_ARITY[op] == 2 and not mem
        rows.append((
            unit,
            draw(st.integers(0, 2**34)),  # cycles far apart need WAIT records
            int(op),
            draw(memory if op == StreamOp.STORE else slot),
            draw(memory if op in (StreamOp.LOAD, StreamOp.GEN) else slot),
            draw(slot) if two else -1,
            -1 if mem else draw(st.integers(0, 1022)),
            draw(st.integers(0, 2**31 - 1)) if HAS_IMM[op] else -1,
            draw(st.integers(-1, 2**31 - 1)),
        ))
    cols = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    # one entry per (unit, cycle): a stream issues at most one op per cycle
    _, first = np.unique(cols[:, :2], axis=0, return_index=True)
    cols = cols[np.sort(first)]
    return Streams.from_entries(target="tiny", N=16, slots=SLOTS, units=units, total_cycles=2**40,
                                **{c: cols[:, i] for i, c in enumerate(COLUMNS)})


def test_real_schedule_round_trips(real, tmp_path):
    paths = write_streams(real, tmp_path)
    names = {p.name for p in paths}
    assert "manifest.json" in names
    assert all(f"{u.name}.txt" in names and f"{u.name}.bin" in names for u in real.units)
    assert same(read_streams(tmp_path, fmt="bin"), real)
    assert same(read_streams(tmp_path, fmt="txt"), real)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["entries"] == len(real) and manifest["total_cycles"] == real.total_cycles


@given(s=random_streams())
def test_binary_round_trip(s):
    for u in range(len(s.units)):
        header, cols = decode_stream(encode_stream(s, u))
        a, b = s.unit_start[u], s.unit_start[u + 1]
        assert header["unit"] == u and header["N"] == s.N
        for c in COLUMNS[1:]:
            assert np.array_equal(cols[c], getattr(s, c)[a:b]), c


@given(s=random_streams())
def test_text_round_trip(s):
    for u in range(len(s.units)):
        header, cols = parse_stream(format_stream(s, u))
        a, b = s.unit_start[u], s.unit_start[u + 1]
        assert header["unit"] == s.units[u].name
        for c in COLUMNS[1:]:
            assert np.array_equal(cols[c], getattr(s, c)[a:b]), c


def test_records_are_16_bytes_and_long_waits_use_wait_records(real):
    u = real.unit_index("mem0")
    n = int(real.unit_start[u + 1] - real.unit_start[u])
    data = encode_stream(real, u, tags=False)
    waits = real.waits()[real.unit == u]
    extra = int(np.count_nonzero(waits > 0xFFFF))
    assert len(data) == 32 + 16 * (n + extra)
    header, cols = decode_stream(data)
    assert header["records"] == n + extra
    assert (cols["tag"] == -1).all()  # no tag section
    # a record's first word: op in bits 0-5, mod in 6-15, wait in 16-31
    w0 = struct.unpack_from("<I", data, 32 + 16 * extra if waits[0] > 0xFFFF else 32)[0]
    assert w0 & 0x3F == real.op[real.unit == u][0]


def test_text_is_readable(real):
    text = format_stream(real, real.unit_index("mem0"))
    first = text.splitlines()[2].split()
    assert first[2] == "LOAD" and first[3].startswith("s") and first[5].startswith("m")
    mul = format_stream(real, real.unit_index("c0.mul0")).splitlines()
    assert mul[0].startswith("# fhec-streams v1 target=tiny unit=c0.mul0")
    assert "@q" in mul[2] and "; i" in mul[2]


def test_encoding_limits(real):
    mod = real.mod.copy()
    mod[np.flatnonzero(real.op < StreamOp.LOAD)[0]] = 1023
    bad = real.replace_columns(mod=mod)
    with pytest.raises(StreamFormatError, match="10 bits"):
        encode_stream(bad, int(bad.unit[np.argmax(bad.mod)]))


def test_malformed_files(real, tmp_path):
    good = encode_stream(real, 0)
    with pytest.raises(StreamFormatError, match="magic"):
        decode_stream(b"NOTFHEC!" + good[8:])
    with pytest.raises(StreamFormatError, match="truncated"):
        decode_stream(good[:40])
    with pytest.raises(StreamFormatError, match="version"):
        decode_stream(good[:8] + struct.pack("<H", 99) + good[10:])
    with pytest.raises(StreamFormatError, match="shorter"):
        decode_stream(b"FHEC")
    text = format_stream(real, 0).splitlines()
    line = text[2].split()
    line[1] = "+9999999"
    with pytest.raises(StreamFormatError, match="line 3: wait"):
        parse_stream("\n".join(text[:2] + [" ".join(line)] + text[3:]))
    with pytest.raises(StreamFormatError, match="unknown op"):
        parse_stream("  0 +0 FOO s1 <- s2 @q0 ; i0\n")
    with pytest.raises(StreamFormatError, match="manifest"):
        read_streams(tmp_path / "nowhere")
    with pytest.raises(fhec.InvalidArgumentError, match="fmt"):
        read_streams(tmp_path, fmt="xml")


def test_lost_entries_and_bad_unit_lists_are_refused(real, tmp_path):
    """A truncated text stream, an empty or repeated unit list and an entry total the files
    do not hold are damaged directories, not schedules: each names the file and field."""
    write_streams(real, tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    unit = manifest["units"][real.unit_index("mem0")]
    text_file = tmp_path / unit["text"]
    text = text_file.read_text()
    text_file.write_text("".join(text.splitlines(keepends=True)[:5]))  # the header says more entries
    with pytest.raises(StreamFormatError, match=rf"{unit['text']}: header says entries=\d+, but the stream has 3"):
        read_streams(tmp_path, fmt="txt")
    text_file.write_text(text)
    for change, match in [
        (dict(units=[]), "manifest.json: units is empty"),
        (dict(entries=len(real) + 1), rf"manifest.json: entries = {len(real) + 1}, but its unit files hold {len(real)}"),
        (dict(units=manifest["units"] + [unit]), rf"manifest.json: units\[{len(real.units)}\].name = 'mem0' is listed twice"),
        (dict(units=manifest["units"] + [dict(unit, name="mem1")]), r"units\[\d+\].text = 'mem0.txt' is listed twice"),
    ]:
        (tmp_path / "manifest.json").write_text(json.dumps(dict(manifest, **change)))
        for fmt in ("bin", "txt"):
            with pytest.raises(StreamFormatError, match=match):
                read_streams(tmp_path, fmt=fmt)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert same(read_streams(tmp_path, fmt="txt"), real)


@pytest.fixture(scope="module")
def isa_compiled():
    p = fhec.Program("isa-prog", fhec.CKKSParams(N=2**10, levels=2, security=None))
    p.output("y", p.input("x").rotate(1))
    return fhec.compile(p, target="rpu", progress=False)


def test_stream_and_isa_writers_remove_each_others_output(real, isa_compiled, tmp_path):
    """Writing streams where an ISA program was written (and the reverse) leaves no file of
    the earlier output: no old manifest beside a new report, no old .s beside new streams.
    Files fhec did not write stay."""
    (tmp_path / "notes.md").write_text("mine")
    isa_files = {p.name for p in isa_compiled.write(tmp_path)}
    assert isa_files == {"isa-prog.s", "isa-prog.bin", "isa-prog.memory.npz", "report.json"}
    stream_files = {p.name for p in write_streams(real, tmp_path)}
    assert {p.name for p in tmp_path.iterdir()} == stream_files | {"notes.md"}
    assert {p.name for p in isa_compiled.write(tmp_path)} == isa_files
    assert {p.name for p in tmp_path.iterdir()} == isa_files | {"notes.md"}
    assert (tmp_path / "notes.md").read_text() == "mine"


def test_a_text_header_naming_another_unit_or_target_is_refused(real, tmp_path):
    write_streams(real, tmp_path)
    first = real.units[0].name
    path = tmp_path / f"{first}.txt"
    text = path.read_text()
    path.write_text(text.replace(f"unit={first}", f"unit={real.units[1].name}", 1))
    with pytest.raises(StreamFormatError, match="disagrees with manifest"):
        read_streams(tmp_path, fmt="txt")
    path.write_text(text.replace(f"target={real.target}", "target=osiris", 1))
    with pytest.raises(StreamFormatError, match="header names target 'osiris'"):
        read_streams(tmp_path, fmt="txt")
