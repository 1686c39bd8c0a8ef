"""``fhec compile --trace FILE --plots DIR``: the Chrome trace and the PNG plots."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fhec.cli import main

PROGRAM = """
import fhec
params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
p = fhec.Program("cli_outputs", params)
x = p.input("x")
p.output("y", (x * x).rotate(2) + x)
"""


def test_compile_writes_trace_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["compile", str(prog), "--target", "tiny", "--out", str(out),
                                    "--trace", str(out / "trace.json"), "--plots", str(out / "plots")])
    assert res.exit_code == 0, res.output
    trace = json.loads((out / "trace.json").read_text())
    assert any(e["ph"] == "X" for e in trace["traceEvents"])
    pngs = sorted(p.name for p in (out / "plots").iterdir())
    assert pngs == ["roofline.png", "scratchpad.png", "traffic.png", "utilization.png"]
    assert "wrote 4 plots" in res.output and "wrote the Chrome trace" in res.output


def test_unwritable_trace_is_an_error_line(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    res = CliRunner().invoke(main, ["compile", str(prog), "--target", "tiny", "--trace", str(tmp_path / "no" / "t.json")])
    assert res.exit_code == 2 and "error: cannot write" in res.output


def test_trace_and_plots_are_for_stream_targets(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    res = CliRunner().invoke(main, ["compile", str(prog), "--target", "rpu", "--trace", str(tmp_path / "t.json")])
    assert res.exit_code == 2 and "error: --trace and --plots draw per-unit streams" in res.output


def test_compile_hint_order_option(tmp_path):
    """``--hint-order unbounded`` reaches the pipeline and the report says so; a value
    outside the choices is a usage error, not a traceback."""
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["compile", str(prog), "--target", "tiny", "--hint-order", "unbounded",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "report.json").read_text())["hint_order"] == "unbounded"
    bad = CliRunner().invoke(main, ["compile", str(prog), "--target", "tiny", "--hint-order", "f1"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_an_unwritable_output_directory_is_refused_before_compiling(tmp_path):
    """``--out`` / ``--plots`` that cannot be written fail at once with ``error:``, without
    compiling first (a full-size compile takes minutes)."""
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for flag in ("--out", "--plots"):
        res = CliRunner().invoke(main, ["compile", str(prog), "--target", "tiny", flag, str(blocker / "sub")])
        assert res.exit_code == 2 and "error: cannot create the output directory" in res.output, res.output
        assert "cycles" not in res.output  # no report: nothing was compiled


@pytest.mark.parametrize("args, message", [
    (["compile", "PROG", "--keyswitch", "foo"], "error: Invalid value for '--keyswitch': 'foo' is not one of"),
    (["nosuch"], "error: No such command 'nosuch'; see `fhec --help`."),
    (["compile"], "error: Missing argument 'PROGRAM'; see `fhec compile --help`."),
    (["check", "PROG", "--bogus"], "error: No such option '--bogus'; see `fhec check --help`."),
    (["examples", "nosuch"], "error: No such command 'nosuch'; see `fhec examples --help`."),
])
def test_usage_errors_print_as_errors(tmp_path, args, message):
    """A usage error (unknown command or option, bad choice, missing argument) is an
    ``error: ...`` line and exit 2 like every other error, not click's usage text."""
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    res = CliRunner().invoke(main, [str(prog) if a == "PROG" else a for a in args], prog_name="fhec")
    assert res.exit_code == 2 and message in res.output and "Usage:" not in res.output, res.output


def test_fhec_alone_prints_its_help():
    res = CliRunner().invoke(main, [], prog_name="fhec")
    assert res.exit_code == 0 and "Usage: fhec" in res.output and "compile" in res.output
