"""fhec/examples/tour.ipynb executes headlessly (nbclient, a fresh kernel): no cell raises, and
its outputs hold the reports' HTML and at least four PNG plots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")  # the notebook extra, which `make test` installs
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "fhec" / "examples" / "tour.ipynb"


def _outputs(nb, mime: str) -> list:
    return [o["data"][mime] for cell in nb.cells if cell.cell_type == "code"
            for o in cell.get("outputs", []) if mime in o.get("data", {})]


def test_tour_executes_with_reports_and_plots(tmp_path):
    nb = nbformat.read(TOUR, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the tour without outputs"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "FHEC_VERIFY": "1"}
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env)  # raises CellExecutionError, with the cell and traceback, if a cell fails
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    html = _outputs(nb, "text/html")
    assert sum("fhec report: tour on f1" in h for h in html) == 1
    assert sum("fhec report: tour on tiny" in h for h in html) == 1
    assert len(_outputs(nb, "image/png")) >= 4
    assert any("fhec-progress" in h and "compiling: done" in h for h in html)  # the notebook progress display
    text = "".join("".join(o.get("text", "")) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "f1 and tiny agree bit for bit: True" in text
    assert "%" in text and "mul" in text  # the printed IR
