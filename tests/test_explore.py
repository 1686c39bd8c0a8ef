"""`fhec.explore` / ``fhec explore``: sweeps over target variants on a real two-worker Dask
LocalCluster (loopback, processes), whose table equals the same compiles run serially."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

import fhec
from fhec.cli import main
from fhec.errors import MissingExtraError, TargetError
from fhec.explore import ExploreError, explore, pareto_front, parse_value, parse_vary, variants

PROGRAM_FILE = """
import fhec
params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
p = fhec.Program("swept", params)
x, w = p.input("x"), p.plain("w")
p.output("y", ((x * x) * w).sum_slots(4) + x)
"""

# 4 scratchpads x 3 bandwidths = 12 variants of f1; the small scratchpads spill at N = 2^10
VARY = {"scratchpad.capacity_bytes": ["64KiB", "128KiB", "256KiB", "1MiB"], "memory.bandwidth_gb_s": [256, 512, 1024]}


def _program():
    scope: dict = {}
    exec(PROGRAM_FILE, scope)  # noqa: S102  (the test's own program text)
    return scope["p"]


def test_values_and_specs_parse():
    assert parse_value("16MiB") == 16 * 2**20 and parse_value("2kB") == 2000 and parse_value("512") == 512
    assert parse_value("0.5") == 0.5 and parse_value(" 1.5GiB ") == 3 * 2**29 and parse_value(7) == 7
    assert parse_vary("memory.bandwidth_gb_s=512,1024") == ("memory.bandwidth_gb_s", [512, 1024])
    for bad in ("16 parsecs", "x", ""):
        with pytest.raises(ExploreError, match="not a number"):
            parse_value(bad)
    for bad in ("memory.bandwidth_gb_s", "=1,2", "memory.bandwidth_gb_s="):
        with pytest.raises(ExploreError, match="FIELD=V1,V2"):
            parse_vary(bad)
    with pytest.raises(ExploreError, match="'-1' is negative"):  # it said "not a number"
        parse_value("-1")


def test_a_field_varied_twice_is_refused():
    # a dict kept the last --vary of a field silently
    with pytest.raises(ExploreError, match="clock_ghz is given more than once"):
        explore(_program(), "tiny", ["clock_ghz=1,2", "clock_ghz=3"], scheduler="serial")


def test_variants_are_the_cartesian_product_and_validated():
    f1 = fhec.backends.target.load_target("f1")
    found = variants(f1, {**VARY, "cluster.units.ntt.count": [1, 2]})
    assert len(found) == 24
    settings, t = found[-1]
    assert settings == {"scratchpad.capacity_bytes": 2**20, "memory.bandwidth_gb_s": 1024, "cluster.units.ntt.count": 2}
    assert t.scratchpad.capacity_bytes == 2**20 and t.cluster.units[0].count == 2
    assert t.name == "f1[scratchpad.capacity_bytes=1048576,memory.bandwidth_gb_s=1024,cluster.units.ntt.count=2]"
    with pytest.raises(ExploreError, match="has no field 'capacity'"):
        variants(f1, {"scratchpad.capacity": [1]})
    with pytest.raises(ExploreError, match="no unit of kind 'fft'"):
        variants(f1, {"cluster.units.fft.count": [1]})
    with pytest.raises(TargetError, match="scratchpad.capacity_bytes"):
        variants(f1, {"scratchpad.capacity_bytes": [0]})
    with pytest.raises(ExploreError, match="non-empty list of values"):
        variants(f1, {"scratchpad.capacity_bytes": "16MiB"})
    with pytest.raises(ExploreError, match="names a table"):
        variants(f1, {"cluster.units": [1]})
    # an optional table f1 leaves out (was: "register_file has no field 'capacity_bytes' (it has: none)")
    with pytest.raises(ExploreError, match=r"the target has no \[register_file\] table \(it is optional\)"):
        variants(f1, {"register_file.capacity_bytes": [2**19]})


def test_pareto_front():
    rows = [{"a": 1, "cycles": 9}, {"a": 2, "cycles": 5}, {"a": 3, "cycles": 7}, {"a": 4, "cycles": 1},
            {"a": None, "cycles": 0}]
    assert pareto_front(rows, "a") == [0, 1, 3]


def test_twelve_variants_on_a_two_worker_local_cluster_equal_serial_compiles():
    pytest.importorskip("distributed")  # the explore extra, which `make test` installs
    p = _program()
    on_dask = explore(p, "f1", VARY, workers=2)
    serial = explore(p, "f1", VARY, scheduler="serial")
    assert len(on_dask.rows) == 12 and on_dask.rows == serial.rows
    # and each row is what fhec.compile says for that variant
    settings, target = variants(fhec.backends.target.load_target("f1"), VARY)[5]
    r = fhec.compile(p, target, progress=False).report
    row = serial.rows[5]
    assert {k: row[k] for k in settings} == settings
    assert (row["cycles"], row["area_mm2"], row["peak_scratchpad_slots"]) == (r.cycles, r.area_mm2, r.peak_scratchpad_slots)
    # the sweep moves what it should: more bandwidth never costs cycles, a bigger scratchpad never adds traffic
    cyc = [[row["cycles"] for row in serial.rows[i * 3:(i + 1) * 3]] for i in range(4)]
    assert all(a >= b for line in cyc for a, b in zip(line, line[1:]))
    traffic = [serial.rows[i * 3]["offchip_mib"] for i in range(4)]
    assert traffic == sorted(traffic, reverse=True) and traffic[0] > traffic[-1]


def test_table_outputs(tmp_path):
    pytest.importorskip("matplotlib")
    result = explore(_program(), "f1", ["memory.bandwidth_gb_s=512,1024"], scheduler="serial")
    path = result.to_csv(tmp_path / "t.csv")
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == result.columns and len(lines) == 3
    assert "<table>" in result._repr_html_()
    assert result.plot_pareto()._repr_png_().startswith(b"\x89PNG")
    if importlib.util.find_spec("pyarrow") is None:  # not a dependency: the error names it
        with pytest.raises(MissingExtraError, match="pip install pyarrow"):
            result.write(tmp_path / "t.parquet")
    else:
        assert result.write(tmp_path / "t.parquet").stat().st_size > 0


def test_cli_explore(tmp_path):
    prog = tmp_path / "swept.py"
    prog.write_text(PROGRAM_FILE)
    out = tmp_path / "table.csv"
    res = CliRunner().invoke(main, ["explore", str(prog), "--target", "f1", "--vary", "memory.bandwidth_gb_s=512,1024",
                                    "--vary", "scratchpad.capacity_bytes=64KiB,1MiB", "--scheduler", "serial",
                                    "--out", str(out), "--plot", str(tmp_path / "pareto.png")])
    assert res.exit_code == 0, res.output
    assert "4 variants of f1" in res.output and len(out.read_text().splitlines()) == 5
    assert (tmp_path / "pareto.png").read_bytes().startswith(b"\x89PNG")
    res = CliRunner().invoke(main, ["explore", str(prog), "--vary", "memory.speed=1", "--scheduler", "serial"])
    assert res.exit_code == 2 and "error: --vary memory.speed: memory has no field 'speed'" in res.output
    res = CliRunner().invoke(main, ["explore", str(prog), "--vary", "memory.bandwidth_gb_s=1",
                                    "--scheduler", "nope://127.0.0.1:9"])
    assert res.exit_code == 2 and "cannot reach the Dask scheduler" in res.output


def test_cli_explore_plot_formats(tmp_path):
    pytest.importorskip("matplotlib")
    prog = tmp_path / "swept.py"
    prog.write_text(PROGRAM_FILE)
    args = ["explore", str(prog), "--vary", "memory.bandwidth_gb_s=512,1024", "--scheduler", "serial", "--plot"]
    res = CliRunner().invoke(main, [*args, str(tmp_path / "pareto.txt")])  # was matplotlib's ValueError, after the sweep
    assert res.exit_code == 2 and "error: --plot" in res.output and "cannot write .txt files" in res.output
    assert not isinstance(res.exception, Exception), res.exception
    res = CliRunner().invoke(main, [*args, str(tmp_path / "pareto")])  # no suffix: PNG, at that path (not pareto.png)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "pareto").read_bytes().startswith(b"\x89PNG") and not (tmp_path / "pareto.png").exists()


def test_isa_machines_are_not_swept():
    with pytest.raises(ExploreError, match="ISA machine"):
        explore(_program(), "rpu", {"clock_ghz": [1.0, 2.0]}, scheduler="serial")


def test_sweep_mistakes_are_named_before_anything_compiles(tmp_path):
    """A lowercase b (bits) where fields take bytes, a list field, an output that is not
    CSV or Parquet, and a variant whose scratchpad cannot hold three RVecs at the
    program's N (named, before any variant compiles; it aborted the sweep mid-way,
    unnamed)."""
    with pytest.raises(ExploreError, match="lowercase b means bits.*16MiB"):
        parse_value("16Mib")
    with pytest.raises(ExploreError, match="names a list"):
        variants(fhec.backends.target.load_target("f1"), {"cluster.units.ntt.ops": [1]})
    big = fhec.Program("n2048", fhec.CKKSParams(N=2**11, levels=2, scale_bits=28, word_bits=32, security=None))
    big.output("y", big.input("x") * 2.0)
    # 12 KiB holds 3 RVecs at f1's n_min (a valid target) but 1 at the program's N = 2^11
    with pytest.raises(TargetError, match=r"variant f1\[scratchpad.capacity_bytes=12288\].*at least 3"):
        explore(big, "f1", ["scratchpad.capacity_bytes=12288,64MiB"], scheduler="serial")
    result = explore(_program(), "f1", ["memory.bandwidth_gb_s=512"], scheduler="serial")
    with pytest.raises(ExploreError, match=r"\.csv or \.parquet"):
        result.write(tmp_path / "t.xlsx")
    # to_csv wrote CSV text into a .txt without complaint
    with pytest.raises(ExploreError, match=r"x.txt: write the table to a \.csv file \(not \.txt\)"):
        result.to_csv(tmp_path / "x.txt")
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(ExploreError, match=r"\.parquet file \(not \.csv\)"):
        result.to_parquet(tmp_path / "t.csv")


def test_cli_explore_outputs_are_checked_before_anything_compiles(tmp_path, monkeypatch):
    """`--out sweep.txt` was refused only after every variant had compiled; `--plot` for a
    target with nothing to plot likewise."""
    prog = tmp_path / "swept.py"
    prog.write_text(PROGRAM_FILE)
    monkeypatch.setattr(importlib.import_module("fhec.explore"), "explore", lambda *a, **k: pytest.fail("the sweep ran"))
    args = ["explore", str(prog), "--vary", "memory.bandwidth_gb_s=512,1024", "--scheduler", "serial"]
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "sweep.txt")])
    assert res.exit_code == 2 and "write the table to a .csv or .parquet file (not .txt)" in res.output, res.output
    if importlib.util.find_spec("pyarrow") is None:
        res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "sweep.parquet")])
        assert res.exit_code != 0 and "pip install pyarrow" in res.output, res.output
    bare = tmp_path / "bare.toml"  # f1 without [energy] and [area] (and the units' figures they need)
    text = (Path(fhec.backends.target.__file__).parent / "targets" / "f1.toml").read_text()
    keep = [line for line in text.split("[energy]")[0].splitlines()
            if not line.startswith(("pj_per_element", "area_mm2"))]
    bare.write_text("\n".join(keep) + "\n")
    res = CliRunner().invoke(main, [*args, "--target", str(bare), "--plot", str(tmp_path / "p.png")])
    assert res.exit_code == 2 and "gives neither area nor energy" in res.output, res.output


def test_cli_explore_plot_writes_the_format_of_its_suffix(tmp_path):
    """docs/explore.md said another suffix than .png was an error while a .jpg was written:
    every format matplotlib writes is one."""
    pytest.importorskip("matplotlib")
    prog = tmp_path / "swept.py"
    prog.write_text(PROGRAM_FILE)
    res = CliRunner().invoke(main, ["explore", str(prog), "--vary", "memory.bandwidth_gb_s=512,1024", "--scheduler",
                                    "serial", "--plot", str(tmp_path / "p.svg")])
    assert res.exit_code == 0, res.output
    assert b"<svg" in (tmp_path / "p.svg").read_bytes()[:400]
