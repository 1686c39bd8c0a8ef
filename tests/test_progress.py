"""Progress displays of compile and run: on when interactive, off otherwise, silenced by
progress=False; the pass manager reports every pass and the stream executor every entry."""

from __future__ import annotations

import io

import numpy as np
import pytest

import fhec
from fhec import progress as displays
from fhec.errors import InvalidArgumentError
from fhec.pipeline import COMPILED, prefix
from fhec.sim.streams import execute_streams


def _program():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("progressed", params)
    x = p.input("x")
    p.output("y", x * x + x)
    return p


def test_off_when_not_interactive_on_when_asked(monkeypatch):
    monkeypatch.setattr(displays, "in_notebook", lambda: False)
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a TTY: nobody watching
    assert displays.wanted(None) is False and displays.wanted(True) is True and displays.wanted(False) is False
    monkeypatch.setattr(displays, "in_notebook", lambda: True)
    assert displays.wanted(None) is True
    with pytest.raises(InvalidArgumentError, match="True, False or None"):
        displays.wanted("yes")


def test_compile_reports_every_pass_to_a_function_and_to_a_display(monkeypatch):
    seen = []
    fhec.compile(_program(), "tiny", progress=seen.append)
    assert seen == [p.name for p in prefix(COMPILED)]
    updates = []

    def recording(label, total):
        import contextlib

        @contextlib.contextmanager
        def cm():
            yield lambda done, what: updates.append((label, total, done, what))
        return cm()

    monkeypatch.setitem(displays._DISPLAYS, "terminal", recording)
    monkeypatch.setattr(displays, "in_notebook", lambda: False)
    c = fhec.compile(_program(), "tiny", progress=True)
    total = len(prefix(COMPILED))
    assert updates[0][:2] == ("compiling", total) and updates[-1][2:] == (total, "done")
    assert [u[3] for u in updates[:-1]] == [p.name for p in prefix(COMPILED)]
    updates.clear()
    fhec.compile(_program(), "tiny", progress=False)
    assert updates == []
    out = c.run({"x": np.linspace(-1, 1, 512)}, seed=3, progress=True)
    assert updates[-1][:3] == ("running streams", len(c.streams), len(c.streams))
    np.testing.assert_array_equal(out["y"], c.run({"x": np.linspace(-1, 1, 512)}, seed=3, progress=False)["y"])


def _recording(updates):
    """A display kind that records its updates (label, total, done, what)."""
    import contextlib

    def recording(label, total):
        @contextlib.contextmanager
        def cm():
            yield lambda done, what: updates.append((label, total, done, what))
        return cm()

    return recording


@pytest.mark.parametrize("target", ["rpu", "presto"])
def test_isa_run_takes_progress_as_compiled_run_does(monkeypatch, target):
    # IsaCompiled.run raised TypeError: unexpected keyword argument 'progress'
    updates = []
    monkeypatch.setitem(displays._DISPLAYS, "terminal", _recording(updates))
    monkeypatch.setattr(displays, "in_notebook", lambda: False)
    c = fhec.compile(_program(), target, progress=False)
    inputs = {"x": np.linspace(-1, 1, 512)}
    out = c.run(inputs, seed=3, progress=True)
    words = len(c.code.words)
    assert updates[0][:3] == ("simulating machine words", words, 0) and updates[-1][:3] == (
        "simulating machine words", words, words)
    updates.clear()
    np.testing.assert_array_equal(out["y"], c.run(inputs, seed=3, progress=False)["y"])
    assert updates == []
    with pytest.raises(InvalidArgumentError, match="progress"):
        c.run(inputs, seed=3, progress="loud")


def test_terminal_display_draws_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(displays, "in_notebook", lambda: False)
    with displays.display("compiling", 3, True) as update:
        update(1, "trace")
    assert capsys.readouterr().out == ""  # stdout stays clean for what the command prints


def test_executor_reports_entries():
    c = fhec.compile(_program(), "tiny", progress=False)
    from fhec.evaluate import encrypt_inputs, make_keys, plain_inputs
    from fhec.sim.bind import bind_lowered

    keys = make_keys(c.program, 1)
    cts = encrypt_inputs(c.program, keys, {"x": np.zeros(512)}, 1)
    done = []
    execute_streams(c.streams, c.target, c.lowered.limb, bind_lowered(c.lowered, cts, keys, plain_inputs(c.program, {"x": np.zeros(512)})),
                    progress=done.append)
    assert done[0] == 0 and done[-1] == len(c.streams) and done == sorted(done)


def test_bad_progress_argument():
    with pytest.raises(InvalidArgumentError, match="progress"):
        fhec.compile(_program(), "tiny", progress="loud")
