"""The ``fhec`` command: show, check, program selection, error reporting, the examples."""

from __future__ import annotations

import pathlib
import textwrap

import pytest
from click.testing import CliRunner

from fhec.cli import load_program, main

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "fhec" / "examples"

ONE = """
import fhec

@fhec.program(fhec.CKKSParams(N=2**6, levels=2, security=None))
def f(x: fhec.Cipher, w: fhec.Plain):
    return x * w + x.rotate(2)
"""

TWO = """
import fhec

params = fhec.BGVParams(N=2**5, levels=1, plain_modulus=257, security=None)
first = fhec.Program("first", params)
first.output("y", first.input("x") * 3)
second = fhec.Program("second_name", params)
second.output("y", second.input("x").rotate(1))
"""

DEEP = """
import fhec

p = fhec.Program("deep", fhec.CKKSParams(N=2**6, levels=1, security=None))
x = p.input("x")
p.output("y", x * x * x)
"""


@pytest.fixture
def write(tmp_path):
    def make(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return str(path)

    return make


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_help_lists_the_commands():
    r = run("--help")
    assert r.exit_code == 0 and "show" in r.output and "check" in r.output


def test_show_prints_the_typed_ir(write):
    r = run("show", write("one.py", ONE))
    assert r.exit_code == 0, r.output
    assert r.output.startswith('program "f" (ckks N=64')
    assert "mul_plain %0, %1" in r.output and "needs rot(2)" in r.output and "one.py:6" in r.output


def test_check_reports_max_error_and_exactness(write):
    r = run("check", "--seed", "0", write("one.py", ONE), write("two.py", TWO))
    assert r.exit_code == 0, r.output
    assert "[f, ckks, N=64]: OK" in r.output and "out: max error" in r.output
    assert "[first, bgv, N=32]: OK" in r.output and "y: exact" in r.output
    assert "[second_name, bgv, N=32]: OK" in r.output


def test_check_exits_1_on_a_mismatch(write):
    r = run("check", "--seed", "0", "--rel-bits", "60", write("one.py", ONE))  # no CKKS result has 60 bits
    assert r.exit_code == 1 and "MISMATCH" in r.output


def test_program_selection(write):
    two = write("two.py", TWO)
    assert load_program(two + ":first").name == "first"
    assert load_program(two + ":second").name == "second_name"  # by variable name
    assert load_program(two + ":second_name").name == "second_name"  # by program name
    r = run("show", two)
    assert r.exit_code == 2 and "defines 2 programs (first, second)" in r.output
    r = run("show", two + ":third")
    assert r.exit_code == 2 and "no program 'third'" in r.output


def test_user_errors_print_without_traceback(write):
    deep = write("deep.py", DEEP)
    r = run("check", "--seed", "0", deep)
    assert r.exit_code == 2
    assert r.stderr.startswith("error: ") and "deep.py:6" in r.stderr and "Traceback" not in r.stderr
    r = run("show", str(pathlib.Path(deep).with_name("missing.py")))
    assert r.exit_code == 2 and "no such file" in r.output


def test_files_without_programs_are_skipped_in_a_batch(write):
    helper = write("helper.py", "X = 1\n")
    r = run("check", "--seed", "0", helper, write("one.py", ONE))
    assert r.exit_code == 0 and "helper.py: skipped" in r.output
    assert run("check", "--seed", "0", helper).exit_code == 2


@pytest.mark.parametrize("name", ["logistic_regression.py", "private_lookup.py", "lola_mnist.py", "lola_cifar.py", "osiris_nets.py",
                                  "db_lookup.py"])
def test_examples_pass_check(name):
    r = run("check", "--seed", "0", str(EXAMPLES / name))
    assert r.exit_code == 0, r.output
    assert ": OK" in r.output


@pytest.mark.slow
def test_f1_matvec_example_passes_check():
    r = run("check", "--seed", "0", str(EXAMPLES / "matvec.py"))
    assert r.exit_code == 0, r.output
    assert r.output.count(": max error") == 4


def test_check_rejects_a_negative_seed_with_the_fix(write):
    r = run("check", "--seed", "-1", write("one.py", ONE))
    assert r.exit_code == 2 and "seed=-1 is negative" in r.stderr and "Traceback" not in r.stderr


def test_a_warning_names_the_dsl_line_once(write):
    # `fhec check` traces, evaluates and takes the reference: the unused-input warning used
    # to print twice, and a precision warning named fhec's own source line
    import subprocess
    import sys

    path = write("u.py", """
        import fhec
        p = fhec.Program("u", fhec.CKKSParams(N=2**10, levels=2, security=None))
        x = p.input("x")
        z = p.input("unused")
        p.output("y", x.rotate(1))
    """)
    r = subprocess.run([sys.executable, "-m", "fhec.cli", "check", path], capture_output=True, text=True,
                       cwd=pathlib.Path(path).parent)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("UnusedInputWarning") == 1 and "u.py:5: UnusedInputWarning" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "fhec.cli", "compile", path, "--target", "tiny", "--keyswitch", "bv"],
                       capture_output=True, text=True, cwd=pathlib.Path(path).parent)
    assert "u.py:6: PrecisionWarning" in r.stderr and "fhec/" not in r.stderr, r.stderr


def test_ctrl_c_prints_an_error_and_exits_130(write, monkeypatch):
    """Not click's bare "Aborted!" with exit 1: an ``error:`` line, and the shell's SIGINT code."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("fhec.cli.show_text", interrupted)
    r = CliRunner().invoke(main, ["show", write("one.py", ONE)])
    assert r.exit_code == 130
    assert "error: interrupted (Ctrl-C)" in r.output and "Aborted" not in r.output


# -- fhec report: a report.json no run can give -----------------------------------------------

def _saved_report(tmp_path, **edits):
    """The report.json of a small tiny compile, with `edits` applied to its fields."""
    import json

    import fhec

    p = fhec.Program("small", fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None))
    p.output("y", p.input("x").rotate(1) * 2)
    report = json.loads(fhec.compile(p, target="tiny").report.to_json())
    report.update(edits)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path, report


def test_report_command_refuses_cycles_below_the_bounds_or_a_time_no_clock_gives(tmp_path):
    """An edited report.json printed "cycles 10 (1.5 µs)", below every bound and at a
    time its cycles do not take at any clock."""
    from click.testing import CliRunner

    from fhec.cli import main

    path, report = _saved_report(tmp_path)
    assert CliRunner().invoke(main, ["report", str(path)]).exit_code == 0
    path, _ = _saved_report(tmp_path, cycles=10)
    res = CliRunner().invoke(main, ["report", str(path)])
    assert res.exit_code == 2 and "corrupt fhec report: cycles = 10 is below the" in res.output, res.output
    assert "no schedule beats a lower bound" in res.output
    path, _ = _saved_report(tmp_path, cycles=report["cycles"] * 2, time_us=report["time_us"] * 2)
    res = CliRunner().invoke(main, ["report", str(path)])
    assert res.exit_code == 2 and "bound_ratio" in res.output and "is not cycles / the largest bound" in res.output
    path, _ = _saved_report(tmp_path, time_us=report["time_us"] * 1e6)
    res = CliRunner().invoke(main, ["report", str(path)])
    assert res.exit_code == 2 and "implies a" in res.output and "GHz clock" in res.output, res.output


ISA_REPORT = dict(program="p", target="rpu", isa="rpu", scheme="ckks", N=1024, limb_instructions=3, instructions=9,
                  by_class={"compute": 9}, cycles=100, time_us=100 / 1.68e3, busy={"compute": 50},
                  utilization={"compute": 0.5}, stalls={}, spills=0, reloads=0, data_memory_words=1,
                  data_memory_capacity=2)
"""A consistent rpu report.json's fields."""


def test_isa_report_refuses_a_time_or_utilization_its_cycles_do_not_give(tmp_path):
    import pytest

    from fhec.errors import ReportFormatError
    from fhec.isa.report import IsaReport, load_isa_report

    good = dict(ISA_REPORT)
    path = tmp_path / "report.json"
    path.write_text(IsaReport(**good).to_json())
    assert load_isa_report(path).cycles == 100
    for edit, match in [({"time_us": 1e6}, r"implies a 1e-07 GHz clock"),
                        ({"utilization": {"compute": 0.9}}, r"utilization of compute is not busy / cycles")]:
        path.write_text(IsaReport.model_construct(**{**good, **edit}).model_dump_json())
        with pytest.raises(ReportFormatError, match=match):
            load_isa_report(path)


def test_report_refuses_figures_that_contradict_each_other(tmp_path):
    """QA: an edited report.json named the compute bound binding where bandwidth was
    larger, and printed 0 MiB of traffic against 0.40 MiB compulsory."""
    from click.testing import CliRunner

    from fhec.cli import main

    path, report = _saved_report(tmp_path)
    bounds = {"compute": report["compute_bound_cycles"], "bandwidth": report["bandwidth_bound_cycles"],
              "dependency": report["dependency_bound_cycles"], "load-aware": report["load_aware_bound_cycles"]}
    wrong = min(bounds, key=bounds.__getitem__)
    traffic = {**report["offchip_bytes"], "total": report["offchip_bytes"]["total"] + 1}
    for edits, said in [({"binding_bound": wrong}, "but the largest bound is"),
                        ({"offchip_bytes": traffic}, "is not compulsory + noncompulsory"),
                        ({"peak_scratchpad_slots": report["scratchpad_slots"] + 1}, "exceeds the"),
                        ({"busiest_kind": "zzz"}, "names no unit kind")]:
        path, _ = _saved_report(tmp_path, **edits)
        res = CliRunner().invoke(main, ["report", str(path)])
        assert res.exit_code == 2 and said in res.output, (edits, res.output)


def test_a_damaged_isa_report_gets_the_isa_loaders_reason(tmp_path):
    from click.testing import CliRunner

    from fhec.cli import main
    from fhec.isa.report import IsaReport

    bad = {**ISA_REPORT, "utilization": {"compute": 0.9}}  # busy 50 of 100 cycles
    path = tmp_path / "report.json"
    path.write_text(IsaReport.model_construct(**bad).model_dump_json())
    res = CliRunner().invoke(main, ["report", str(path)])
    assert res.exit_code == 2 and "utilization of compute is not busy / cycles" in res.output, res.output
