"""ISA machine files name only what their backend reads (docs/targets.md: "Unknown keys
are errors"): a typo, a table or parameter of another ISA, or a parameter no count can
be, is refused at load, naming the file and the key."""

from pathlib import Path

import pytest

import fhec
from fhec.backends.machine import ISA_LAYOUTS
from fhec.backends.target import load_target
from fhec.errors import TargetError
from fhec.isa.backend import BACKENDS
from fhec.isa.presto.machine import TIMING_PIPELINES
from fhec.isa.rpu.timing import PIPES

TARGETS = Path(fhec.backends.target.__file__).parent / "targets"


def test_every_backend_has_a_layout_and_the_layouts_name_what_the_backends_read():
    assert set(ISA_LAYOUTS) == set(BACKENDS)
    assert set(ISA_LAYOUTS["rpu"].pipelines) == set(PIPES)
    assert set(ISA_LAYOUTS["presto"].pipelines) == set(TIMING_PIPELINES)


def _edited(tmp_path: Path, machine: str, extra: str = "", old: str = "", new: str = "") -> Path:
    text = (TARGETS / f"{machine}.toml").read_text()
    assert old in text
    path = tmp_path / f"{machine}_edited.toml"
    path.write_text(text.replace(old, new, 1) + extra)
    return path


@pytest.mark.parametrize("machine, extra, old, new, match", [
    # each was loaded, and compiled, as if the line were not there
    ("rpu", "\n[params]\ngather_factr = 1000\n", "", "", r"\[params\] gather_factr: the rpu backend reads no such "
                                                         r"parameter \(it reads gather_factor\)"),
    ("rpu", "\n[registers.bogus]\ncount = 7\n", "", "", r"\[registers.bogus\]: the rpu backend reads no such table"),
    ("rpu", "\n[params]\npe_count = 4\nqueue_depth = 8\n", "", "", r"\[params\] pe_count, queue_depth: the rpu"),
    ("presto", "\n[memories.vdm]\nwords = 1\n", "", "", r"\[memories.vdm\]: the presto backend"),
    ("presto", "\n[pipelines.compute]\nlanes = 1\nlatency = 1\n", "", "", r"\[pipelines.compute\]"),
    # gather_factor = 0 timed gathers as free
    ("rpu", "\n[params]\ngather_factor = 0\n", "", "", r"\[params\] gather_factor = 0: must be a positive integer"),
    ("presto", "", "queue_depth = 32", "queue_depth = 2.5", r"\[params\] queue_depth = 2.5: must be a positive int"),
    ("rpu", "", 'isa = "rpu"', 'isa = "vax"', r"isa = 'vax' has no backend; known ISAs: presto, rpu"),
    # a flag is true or false: "no" and 1 were read as False and True
    ("rpu", "", "in_order = true", 'in_order = "no"', r"'no' is not a boolean; give true or false"),
    ("rpu", "", "in_order = true", "in_order = 1", r"1 is not a boolean; give true or false"),
    # a name with a space splits the stream files' text headers
    ("rpu", "", 'name = "rpu"', 'name = "rpu v2"', r"'rpu v2' is not one word"),
])
def test_what_the_backend_would_ignore_or_crash_on_is_refused_at_load(tmp_path, machine, extra, old, new, match):
    path = _edited(tmp_path, machine, extra, old, new)
    with pytest.raises(TargetError, match=match) as e:
        load_target(path)
    assert str(e.value).startswith(str(path))
