"""fhec.suites and `fhec bench --suite`: row discovery, the runner's statuses, and the CLI on a
tiny fake suite (no paper-size compile here; `fhec bench --suite f1` runs those)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import fhec
from fhec.cli import main
from fhec.errors import SuiteError
from fhec.suites import PAPER_ROWS, SuiteRow, run_row, suite_rows

ROOT = Path(__file__).resolve().parent.parent

FAKE_SUITE = '''"""A fake suite: one tiny program on f1, one on a missing target, one that needs bootstrapping."""
import fhec
from fhec.suites import SuiteRow, benchmark_rows


def tiny():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("tiny", params)
    x = p.input("x")
    p.output("y", x * x + x)
    return p


ROWS = [
    SuiteRow("f1", "LoLa-MNIST unencrypted weights", None, "f1", 0.17, "F1 Table 3", tiny),
    SuiteRow("f1", "DB lookup", None, "no-such-target", 4.36, "F1 Table 3", tiny),
    SuiteRow("f1", "CKKS bootstrapping", None, "f1", 1.30, "F1 Table 3", None, needs="needs bootstrapping"),
]


def run(quick=False):
    return benchmark_rows("f1", rows=ROWS)
'''

OTHER = '''"""Another benchmark module."""


def run(quick=False):
    return [{"group": "other", "name": "x", "fhec_us": 1.0}]
'''


def _tiny():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("tiny", params)
    x = p.input("x")
    p.output("y", x * x + x)
    return p


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A directory shaped like an fhec checkout: benchmarks/run.py, the fake suite, docs/."""
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "benchmarks" / "run.py", tmp_path / "benchmarks" / "run.py")
    (tmp_path / "benchmarks" / "bench_suite_fake.py").write_text(FAKE_SUITE)
    (tmp_path / "benchmarks" / "bench_other.py").write_text(OTHER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["fhec"])
    return tmp_path


def test_bench_suite_prints_the_table_and_writes_its_own_section(checkout):
    r = CliRunner().invoke(main, ["bench", "--suite", "fake"])
    assert r.exit_code == 0, r.output
    assert "fhec bench --suite f1" in r.output  # the rich table's title
    assert "needs the no-such-target target" in r.output and "needs bootstrapping" in r.output
    results = json.loads((checkout / "benchmarks" / "results" / "latest.json").read_text())
    assert list(results["modules"]) == ["bench_suite_fake"]  # exactly the suite's module ran
    rows = {row["name"]: row for row in results["modules"]["bench_suite_fake"]["rows"]}
    # The one row that ran gives the compiled program's time, beside the paper's.
    report = fhec.compile(_tiny(), "f1").report
    ran = rows["LoLa-MNIST unencrypted weights"]
    assert ran["status"] == "ok" and ran["fhec_ms"] == pytest.approx(report.time_us / 1000)
    assert ran["ratio"] == pytest.approx(ran["fhec_ms"] / 0.17) and ran["cycles"] == report.cycles
    assert ran["keys_MiB"] >= 0 and ran["ciphertexts_MiB"] > 0
    # Rows that cannot run give no number, only their reason; paper rows nobody built show.
    for name in ("DB lookup", "CKKS bootstrapping", "BGV bootstrapping", "Logistic regression"):
        assert rows[name]["fhec_ms"] is None and rows[name]["status"] != "ok", name
    assert rows["BGV bootstrapping"]["status"].startswith("not built: needs BGV bootstrapping")
    assert len(rows) == sum(1 for p in PAPER_ROWS if p.suite == "f1")
    # A later benchmarks/run.py of another module keeps the suite's section.
    assert CliRunner().invoke(main, ["bench", "other"]).exit_code == 0
    doc = (checkout / "docs" / "benchmarks.md").read_text()
    assert "## suite f1" in doc and "## other" in doc and "needs the no-such-target target" in doc


def test_bench_suite_refuses_an_unknown_suite_and_module_names(checkout):
    r = CliRunner().invoke(main, ["bench", "--suite", "nope"])
    assert r.exit_code == 2 and "error: no suite 'nope' in benchmarks/; choose one of fake" in r.output
    r = CliRunner().invoke(main, ["bench", "--suite", "fake", "other"])
    assert r.exit_code == 2 and "--suite runs one suite" in r.output
    assert not (checkout / "docs" / "benchmarks.md").exists()


def test_shipped_examples_give_every_f1_row_in_the_papers_order():
    rows = suite_rows("f1")
    assert [r.name for r in rows] == [p.name for p in PAPER_ROWS if p.suite == "f1"]
    for r in rows:
        assert r.build is not None or r.needs, r.name
    built = {r.name for r in rows if r.build is not None}
    assert {"LoLa-MNIST unencrypted weights", "LoLa-MNIST encrypted weights", "DB lookup",
            "CKKS bootstrapping"} <= built


def test_every_osiris_row_compiles_in_the_suite():
    # the bootstrap and ResNet-20 rows are compiled too, not pointed elsewhere
    rows = suite_rows("osiris")
    assert {(p.name, p.variant) for p in PAPER_ROWS if p.suite == "osiris"} <= {(r.name, r.variant) for r in rows}
    assert all(r.build is not None and not r.needs for r in rows), [r.name for r in rows if r.needs]
    boot = {r.variant: r for r in rows if r.name == "Bootstrap"}
    assert set(boot) == {"NH", "SH", "DH"} and {r.target for r in boot.values()} == {"osiris"}
    from fhec.bundled_examples import examples_dir
    from fhec.suites import _import_example

    example = _import_example(examples_dir() / "bootstrap.py")
    params = example.osiris_bootstrap("DH", 4, ("cts",)).params  # built, not compiled (a full-size row)
    assert (params.N, params.word_bits, params.special_primes) == (2**16, 40, 14)
    assert params.bootstrap.hoisting == "double" and params.bootstrap.max_giant_steps_stages == ("cts",)


def test_malformed_rows_and_unknown_suites_are_refused():
    good = {"suite": "f1", "name": "x", "target": "f1", "build": _tiny}
    assert SuiteRow.from_dict(good, "m").build is _tiny
    with pytest.raises(SuiteError, match="suite 'f2' is not one of f1, osiris"):
        SuiteRow.from_dict({**good, "suite": "f2"}, "m")
    with pytest.raises(SuiteError, match=r"m.suite_rows\(\): a row lacks \['target'\]"):
        SuiteRow.from_dict({k: v for k, v in good.items() if k != "target"}, "m")
    with pytest.raises(SuiteError, match="unknown keys \\['colour'\\]"):
        SuiteRow.from_dict({**good, "colour": 1}, "m")
    with pytest.raises(SuiteError, match="no build function and no 'needs'"):
        SuiteRow.from_dict({**good, "build": None}, "m")
    with pytest.raises(SuiteError, match="no suite 'f3'"):
        suite_rows("f3", rows=[])


def test_a_row_whose_program_fails_reports_the_error_and_no_time():
    def broken():
        raise fhec.errors.ProgramError("this program is broken")

    out = run_row(SuiteRow("f1", "x", None, "f1", 1.0, "", broken))
    assert out["status"] == "error: this program is broken" and out["fhec_ms"] is None


def test_a_row_of_windows_sums_each_window_times_its_count():
    """`Windows`: each distinct window is compiled once and counted as often as it runs."""
    from fhec.suites import Windows

    one, other = fhec.compile(_tiny(), "f1").report, fhec.compile(_square(), "f1").report
    out = run_row(SuiteRow("f1", "x", None, "f1", 1.0, "", lambda: Windows("w", ((_tiny(), 3), (_square(), 2)))))
    assert out["status"] == "ok"
    assert out["cycles"] == 3 * one.cycles + 2 * other.cycles
    assert out["fhec_ms"] == pytest.approx((3 * one.time_us + 2 * other.time_us) / 1000)
    assert out["limb_instructions"] == 3 * one.limb_instructions + 2 * other.limb_instructions
    assert Windows("w", ((_tiny(), 3), (_square(), 2))).runs == 5
    amortized = run_row(SuiteRow("f1", "x", None, "f1", 1.0, "", lambda: Windows("w", ((_tiny(), 3),), per=4)))
    assert amortized["fhec_ms"] == pytest.approx(3 * one.time_us / 1000 / 4)
    with pytest.raises(SuiteError, match="per must be a positive integer"):
        Windows("w", ((_tiny(), 1),), per=0)
    for bad in ((), ((_tiny(), 0),), ((_tiny(), 2.0),), (("tiny", 1),), [(_tiny(), 1)]):
        with pytest.raises(SuiteError, match="non-empty tuple of"):
            Windows("w", bad)
    out = run_row(SuiteRow("f1", "x", None, "f1", 1.0, "", lambda: Windows("w", ())))
    assert out["status"].startswith("error: Windows 'w'") and out["fhec_ms"] is None


def _square():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("square", params)
    p.output("y", p.input("x") * p.input("z"))
    return p


def test_f1_rows_start_with_the_papers_limbs_or_say_why_not():
    """F1's L counts RNS limbs (F1 §2). The logistic-regression program starts with F1's
    L, the DB lookup's inputs within it; the three that need more (LoLa's layout in CKKS
    rescales after each real weight and mask product; LoLa-CIFAR's overflow proof) say so
    in their note or module doc. Built (cheap) except LoLa-CIFAR, whose level count is read from its
    module."""
    from fhec.bundled_examples import examples_dir
    from fhec.suites import _import_example

    paper = {p.name: p.paper_limbs for p in PAPER_ROWS if p.suite == "f1"}
    rows = {r.name: r for r in suite_rows("f1")}
    name = "Logistic regression"
    assert rows[name].build().params.max_limbs == paper[name], name
    encrypted = rows["LoLa-MNIST encrypted weights"]
    assert encrypted.build().params.max_limbs == paper[encrypted.name] + 3 and "9 limbs" in encrypted.note
    lookup = rows["DB lookup"].build()  # a chain of 18 limbs; the lookup starts as low as its depth allows
    start = max(n.type.level for n in lookup.ir.nodes if n.op.name == "INPUT")
    assert start + 1 <= paper["DB lookup"] < lookup.params.max_limbs
    plain = rows["LoLa-MNIST unencrypted weights"]
    assert plain.build().params.max_limbs == paper[plain.name] + 4 and "8 limbs" in plain.note
    cifar = _import_example(examples_dir() / "lola_cifar.py")
    assert "levels=8" in (examples_dir() / "lola_cifar.py").read_text() and "9 limbs" in cifar.__doc__


def test_bench_suite_runs_from_an_installed_package_outside_a_checkout(tmp_path, monkeypatch):
    # a user who pip-installed fhec: no benchmarks/ here, so the suite comes from fhec.suites
    # (its example modules stubbed with the tiny row, the rest "not built") and no file is written
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("fhec.suites.example_rows", lambda: [
        SuiteRow("f1", "LoLa-MNIST unencrypted weights", None, "f1", 0.17, "F1 Table 3", _tiny)])
    r = CliRunner().invoke(main, ["bench", "--suite", "f1"])
    assert r.exit_code == 0, r.output
    assert "fhec bench --suite f1" in r.output and "not a source checkout" in r.output
    assert "LoLa-MNIST unencrypted" in r.output and "not built" in r.output
    assert list(tmp_path.iterdir()) == []
    r = CliRunner().invoke(main, ["bench", "--suite", "nope"])
    assert r.exit_code == 2 and "error: no suite 'nope'; choose one of f1, osiris" in r.output
    r = CliRunner().invoke(main, ["bench"])
    assert r.exit_code == 2 and "error: no fhec benchmarks/run.py here" in r.output
    # --quick would be ignored by a suite (it used to start the full run silently)
    r = CliRunner().invoke(main, ["bench", "--suite", "f1", "--quick"])
    assert r.exit_code == 2 and "--quick does not apply to --suite" in r.output
    # another project's benchmarks/run.py is not fhec's: the suite still comes from fhec.suites
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "run.py").write_text("raise SystemExit('not fhec')\n")
    r = CliRunner().invoke(main, ["bench", "--suite", "f1"])
    assert r.exit_code == 0 and "not a source checkout" in r.output, r.output
    r = CliRunner().invoke(main, ["bench"])
    assert r.exit_code == 2 and "error: no fhec benchmarks/run.py here" in r.output
