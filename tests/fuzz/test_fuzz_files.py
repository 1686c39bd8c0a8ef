"""Fuzzing every file format fhec reads: random bytes and structure-aware mutations of a
target TOML, program JSON, report JSON, binary and text streams and the stream manifest.

Property (see `support`): each read either succeeds or raises an FhecError subclass,
never another exception, never a hang. A read that succeeds returns a usable object.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import fhec
from fhec.backends.stream_files import decode_stream, encode_stream, format_stream, parse_stream, read_streams
from fhec.backends.target import _shipped_dir, load_target
from fhec.sim.timing import load_report

from tests.fuzz.support import fuzz_settings, mutated_bytes, mutated_json, mutated_text, only_fhec_errors

TINY_TOML = _shipped_dir().joinpath("tiny.toml").read_text(encoding="utf-8")


def _write(suffix: str, content: str | bytes) -> Path:
    f = tempfile.NamedTemporaryFile("wb", suffix=suffix, delete=False)
    f.write(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    f.close()
    return Path(f.name)


def _load_target_file(content: str | bytes):
    path = _write(".toml", content)
    try:
        return only_fhec_errors(lambda: load_target(path))
    finally:
        path.unlink()


@fuzz_settings()
@given(mutated_text(TINY_TOML))
def test_target_toml_mutations(text):
    ok, target = _load_target_file(text)
    if ok:  # a target that loads is usable by the schedulers
        assert target.cluster.count >= 1 and target.memory.bandwidth_gb_s > 0
        assert target.scratchpad_rvecs(target.n_min) >= 3


RPU_TOML = _shipped_dir().joinpath("rpu.toml").read_text(encoding="utf-8")


@fuzz_settings()
@given(mutated_text(RPU_TOML))
def test_isa_machine_toml_mutations(text):
    """A mutated ISA machine either fails to load or compile with an FhecError, or
    compiles a 1K NTT."""
    from fhec.isa.rpu.kernels import compile_transform

    ok, machine = _load_target_file(text)
    if ok and getattr(machine, "isa", None) == "rpu" and machine.supports(1024):
        only_fhec_errors(lambda: compile_transform(machine, 1024, 12289))


@fuzz_settings()
@given(st.binary(max_size=300))
def test_target_random_bytes(data):
    _load_target_file(data)


@fuzz_settings()
@given(data=st.data())
def test_program_json_mutations(small_program, data):
    text = data.draw(mutated_json(json.loads(small_program.to_json())))
    ok, program = only_fhec_errors(lambda: fhec.Program.from_json(text))
    if ok:  # what reads back verifies and serializes again
        assert fhec.Program.from_json(program.to_json()) == program


@fuzz_settings()
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200)))
def test_program_json_random_input(data):
    only_fhec_errors(lambda: fhec.Program.from_json(data))


@fuzz_settings()
@given(data=st.data())
def test_report_json_mutations(compiled, data):
    text = data.draw(st.one_of(mutated_json(json.loads(compiled.report.to_json())), st.text(max_size=100)))
    path = _write(".json", text)
    try:
        ok, report = only_fhec_errors(lambda: load_report(path))
    finally:
        path.unlink()
    if ok:
        assert report.cycles >= 0 and report.N >= 2
        report.rich_table()


@fuzz_settings()
@given(data=st.data())
def test_binary_stream_mutations(compiled, data):
    unit = data.draw(st.integers(0, len(compiled.streams.units) - 1))
    good = encode_stream(compiled.streams, unit)
    blob = data.draw(st.one_of(mutated_bytes(good), st.binary(max_size=120)))
    ok, decoded = only_fhec_errors(lambda: decode_stream(blob))
    if ok:
        header, cols = decoded
        assert all(len(c) == len(cols["op"]) for c in cols.values())


@fuzz_settings()
@given(data=st.data())
def test_text_stream_mutations(compiled, data):
    unit = data.draw(st.integers(0, len(compiled.streams.units) - 1))
    text = data.draw(st.one_of(mutated_text(format_stream(compiled.streams, unit)), st.text(max_size=120)))
    only_fhec_errors(lambda: parse_stream(text))


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_stream_directory_mutations(compiled, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("streams")
    compiled.write(out)
    manifest = json.loads((out / "manifest.json").read_text())
    target = data.draw(st.sampled_from(["manifest", "bin", "txt"]))
    if target == "manifest":
        (out / "manifest.json").write_text(data.draw(mutated_json(manifest)))
    else:
        name = data.draw(st.sampled_from(manifest["units"]))["binary" if target == "bin" else "text"]
        path = out / name
        if target == "bin":
            path.write_bytes(data.draw(mutated_bytes(path.read_bytes())))
        else:
            path.write_text(data.draw(mutated_text(path.read_text())))
    fmt = data.draw(st.sampled_from(["bin", "txt"]))
    ok, streams = only_fhec_errors(lambda: read_streams(out, fmt=fmt))
    if ok:
        assert len(streams.units) == len(streams.unit_start) - 1
