"""What an installed fhec ships: its version, its license and typing marker, the example
programs (`fhec examples`), and a README whose links resolve inside the repository."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from click.testing import CliRunner

import fhec
from fhec.bundled_examples import copy_examples, list_examples
from fhec.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_version_is_the_pyproject_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert fhec.__version__ == version
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and r.output == f"fhec {version}\n"


def test_license_and_typing_marker_ship():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0" in (ROOT / "LICENSE").read_text()
    assert (ROOT / "fhec" / "py.typed").exists()
    data = project["tool"]["setuptools"]["package-data"]["fhec"]
    assert "py.typed" in data and "examples/*.py" in data


def test_extras_split_users_tests_from_fhecs_own():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"test", "dev", "bench", "plot", "explore"} <= set(extras)
    assert not any(d.startswith("galois") for d in extras["test"])
    assert any(d.startswith("galois") for d in extras["dev"]) and any("test" in d for d in extras["dev"])
    assert "'.[dev]'" in (ROOT / "Makefile").read_text()


def test_examples_are_listed_with_their_summaries():
    names = {e.name: e.summary for e in list_examples()}
    assert {"matvec.py", "demo.py", "private_lookup.py"} <= set(names)
    assert names["matvec.py"].startswith("F1's running example")
    r = CliRunner().invoke(main, ["examples"])
    assert r.exit_code == 0 and "matvec.py" in r.output and "fhec examples copy DIR" in r.output


def test_examples_copy_writes_runnable_programs_and_never_overwrites(tmp_path):
    r = CliRunner().invoke(main, ["examples", "copy", str(tmp_path / "ex")])
    assert r.exit_code == 0, r.output
    copied = sorted(p.name for p in (tmp_path / "ex").iterdir())
    assert copied == sorted(e.name for e in list_examples())
    r = CliRunner().invoke(main, ["show", str(tmp_path / "ex" / "private_lookup.py")])
    assert r.exit_code == 0 and "%0 = input" in r.output
    (tmp_path / "ex" / "matvec.py").write_text("# edited\n")
    r = CliRunner().invoke(main, ["examples", "copy", str(tmp_path / "ex")])
    assert r.exit_code == 2 and "already holds" in r.output and "--overwrite" in r.output
    assert (tmp_path / "ex" / "matvec.py").read_text() == "# edited\n"
    assert len(copy_examples(tmp_path / "ex", overwrite=True)) == len(copied)
    r = CliRunner().invoke(main, ["examples", "copy", str(tmp_path / "ex" / "demo.py")])
    assert r.exit_code == 2 and "is a file" in r.output


def test_readme_links_resolve_inside_the_repository():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert links
    for link in links:
        assert not re.match(r"[a-z]+://", link) and not link.startswith(".."), link
        assert (ROOT / link.split("#")[0]).exists(), link
