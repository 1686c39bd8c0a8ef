"""fhec.pipeline: the pass list, the pass manager (verification, timing, dumps), and the
drivers as prefixes of it."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import fhec
from fhec.backends.target import load_target
from fhec.cli import main
from fhec.ir.he import HeProgram
from fhec.ir.lowered import LoweredProgram
from fhec.pipeline import (
    COMPILED,
    ISA_TAIL,
    PASS_NAMES,
    PIPELINE,
    VERIFIERS,
    Options,
    Scheduled,
    describe,
    prefix,
    run_passes,
    run_prefix,
    verify_by_default,
)


def small_program():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("walk", params)
    x, w = p.input("x"), p.plain("w")
    p.output("y", ((x * x) * w).sum_slots(4) + x)
    return p


def test_the_pipeline_is_one_ordered_list_of_documented_passes():
    assert PASS_NAMES[0] == "trace" and PASS_NAMES[-1] == "schedule_cycles"
    assert PASS_NAMES.index("plan_rotations") < PASS_NAMES.index("lower") < PASS_NAMES.index("schedule_offchip")
    assert len(set(PASS_NAMES)) == len(PASS_NAMES)
    for p in PIPELINE:
        assert "Preserves" in p.doc or "preserves" in p.doc, p.name
    lines = describe().splitlines()
    assert len(lines) == len(PIPELINE) + 1 + len(ISA_TAIL)
    assert all(name in line for name, line in zip(PASS_NAMES, lines))
    for p, line in zip(ISA_TAIL, lines[len(PIPELINE) + 1:]):
        assert p.name in line and ("Preserves" in p.doc or "preserves" in p.doc), p.name


def test_prefix_ends_at_the_named_pass():
    assert [p.name for p in prefix("lower")][-1] == "lower"
    assert len(prefix("trace")) == 1


def test_each_pass_output_is_kept_timed_and_measured():
    done = run_prefix(COMPILED, small_program(), Options(target=load_target("f1")))
    assert [r.name for r in done.records] == list(PASS_NAMES)
    assert isinstance(done["trace"], HeProgram) and isinstance(done["lower"], LoweredProgram)
    assert isinstance(done.last, Scheduled)
    assert done.records[PASS_NAMES.index("lower")].size == len(done["lower"].limb)
    assert all(r.seconds >= 0 for r in done.records)


def test_keep_drops_the_outputs_nobody_reads():
    done = run_prefix(COMPILED, small_program(), Options(target=load_target("f1")), keep=("lower",))
    assert [r.name for r in done.records] == list(PASS_NAMES)  # every pass ran and was timed
    assert set(done.outputs) == {"lower", COMPILED}
    assert isinstance(done.last, Scheduled) and done.last.lowered is done["lower"]


def test_compile_reports_per_pass_seconds_and_sizes():
    c = fhec.compile(small_program(), target="f1")
    assert list(c.report.compile_seconds) == list(PASS_NAMES)
    assert [d["name"] for d in c.report.compile_passes] == list(PASS_NAMES)
    assert c.report.compile_passes[PASS_NAMES.index("lower")]["size"] == c.report.limb_instructions


def test_dump_after_prints_the_ir_after_that_pass(capsys):
    fhec.compile(small_program(), target="f1", dump_after=["lower"])
    out = capsys.readouterr().out
    assert "IR after lower" in out and "LimbProgram N=1024" in out and "BCONV" in out


def test_dump_after_writes_numbered_files(tmp_path):
    fhec.compile(small_program(), target="f1", dump_after=["trace", "expand_key_switches", "schedule_cycles"],
                 dump_dir=tmp_path)
    names = sorted(f.name for f in tmp_path.iterdir())
    number = {name: PASS_NAMES.index(name) + 1 for name in PASS_NAMES}
    ks, last = f"{number['expand_key_switches']:02d}-expand_key_switches.txt", f"{len(PASS_NAMES):02d}-schedule_cycles.txt"
    assert names == ["01-trace.txt", ks, last]
    assert "mod_up" in (tmp_path / ks).read_text()
    assert "fhec-streams v1" in (tmp_path / last).read_text()


def test_dump_after_an_unknown_pass_is_a_clear_error():
    with pytest.raises(fhec.ParameterError, match="not a pass of this pipeline.*fhec passes"):
        fhec.lower(small_program(), dump_after=["bsgs"])
    with pytest.raises(fhec.ParameterError, match="schedule_cycles"):  # fhec.lower stops at lower
        fhec.lower(small_program(), dump_after=["schedule_cycles"])


def test_a_dump_dir_without_passes_is_refused(tmp_path):
    # it wrote nothing, silently
    with pytest.raises(fhec.ParameterError, match="without dump_after writes nothing"):
        fhec.compile(small_program(), target="f1", dump_dir=tmp_path)


def test_verification_runs_after_every_pass_that_has_a_verifier(monkeypatch):
    seen = []
    for ir_type, verify in list(VERIFIERS.items()):
        monkeypatch.setitem(VERIFIERS, ir_type, lambda ir, o, _v=verify, _t=ir_type: (seen.append(_t.__name__), _v(ir, o)))
    run_prefix(COMPILED, small_program(), Options(target=load_target("f1")), verify=True)
    assert seen.count("HeProgram") == PASS_NAMES.index("lower")
    assert seen[-3:] == ["LoweredProgram", "DataSchedules", "Scheduled"]
    seen.clear()
    run_prefix(COMPILED, small_program(), Options(target=load_target("f1")), verify=False)
    assert seen == []


def test_verification_is_on_under_pytest_and_follows_the_environment(monkeypatch):
    assert verify_by_default()
    monkeypatch.setenv("FHEC_VERIFY", "0")
    assert not verify_by_default()
    monkeypatch.setenv("FHEC_VERIFY", "1")
    assert verify_by_default()


def test_a_pass_that_breaks_the_ir_is_caught_by_the_verifier():
    """A pass that returns a limb program with a dangling source fails verification."""
    import dataclasses

    from fhec.errors import InternalError
    from fhec.pipeline import Pass

    def corrupt(lowered, o):
        limb = lowered.limb
        src0 = limb.src0.copy()
        src0[0] = limb.num_rvecs + 5
        return dataclasses.replace(lowered, limb=dataclasses.replace(limb, src0=src0))

    passes = (*prefix("lower"), Pass("corrupt", corrupt))
    with pytest.raises(InternalError):
        run_passes(passes, small_program(), Options(), verify=True)


def test_the_drivers_are_prefixes_of_the_same_pipeline():
    p = small_program()
    inputs = {"x": np.linspace(-1, 1, 512), "w": np.linspace(1, 0, 512)}
    ev = fhec.evaluate(p, inputs, seed=3)
    ran = fhec.run(p, inputs, seed=3)
    compiled = fhec.compile(p, target="f1").run(inputs, seed=3)
    np.testing.assert_array_equal(ran["y"], compiled["y"])
    assert np.max(np.abs(ev["y"] - ran["y"])) < 1e-3
    assert len(fhec.lower(p).limb) == fhec.stats(p)["instructions"]


def test_cli_lists_the_passes_and_dumps():
    r = CliRunner().invoke(main, ["passes"])
    assert r.exit_code == 0
    assert r.output.splitlines()[0].startswith(" 1. trace")
    assert len(r.output.splitlines()) == len(PIPELINE) + 1 + len(ISA_TAIL)


def test_cli_compile_dump_after(tmp_path):
    prog = tmp_path / "walk.py"
    prog.write_text(
        "import fhec\n"
        "p = fhec.Program('walk', fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, security=None))\n"
        "x = p.input('x')\n"
        "p.output('y', x * x + x.rotate(1))\n"
    )
    r = CliRunner().invoke(main, ["compile", str(prog), "--dump-after", "expand_key_switches"])
    assert r.exit_code == 0, r.output
    assert "IR after expand_key_switches" in r.output and "key_mult" in r.output
    r = CliRunner().invoke(main, ["compile", str(prog), "--dump-after", "nope"])
    assert r.exit_code != 0 and "error:" in r.output and "fhec passes" in r.output


def test_an_isa_machine_runs_the_isa_tail_and_dumps_assembly(capsys):
    """For an ISA machine the passes after `lower` are the ISA tail; dumping after
    `encode` prints the assembly, and the encode verifier runs."""
    done = run_prefix("encode", small_program(), Options(target=load_target("rpu")), verify=True,
                      dump_after=["encode"])
    assert [r.name for r in done.records][-4:] == [p.name for p in ISA_TAIL]
    out = capsys.readouterr().out
    assert "// ---- IR after encode ----" in out and "bfly.ct" in out


# -- a reserve per bootstrap stage ---------------------------------------------------------


def _small_bootstrap_on(slots: int):
    """A double-hoisted N = 2^5 bootstrap and `tiny` with a scratchpad of `slots` RVecs: at
    32, CoeffsToSlots and SlotsToCoeffs run fastest at another reserve than the whole."""
    cfg = fhec.BootstrapConfig(hamming_weight=4, hoisting="double", evalmod=fhec.EvalModConfig(
        K=4, degree=15, double_angle=2, arcsine_degree=3, message_ratio_bits=2))
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 1, security=None, bootstrap=cfg)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=1).bootstrap())
    tiny = load_target("tiny")
    target = tiny.model_copy(update={"scratchpad": tiny.scratchpad.model_copy(
        update={"capacity_bytes": slots * tiny.rvec_bytes(params.N)})})
    return p, target


def test_stages_get_their_own_reserve_only_when_that_is_faster_and_the_streams_stay_exact(tmp_path):
    from fhec.backends.stream_files import encode_stream
    from fhec.pipeline import RESERVES
    from fhec.verify_run import run_compiled_checked

    p, target = _small_bootstrap_on(32)
    c = fhec.compile(p, target)
    r = c.report
    assert r.stage_reserves and set(r.stage_reserves) <= set(r.stages)
    assert all(v in RESERVES and v != r.prefetch_reserve for v in r.stage_reserves.values())
    assert "prefetch reserve" in str(r) and all(k in str(r) for k in r.stage_reserves)
    # kept only when strictly faster than every one-reserve schedule
    assert all(c.report.cycles < fhec.compile(p, target, prefetch_reserve=f).report.cycles for f in RESERVES)
    c.check()
    x = np.random.default_rng(1).uniform(-1, 1, p.params.slots)
    run_compiled_checked(c, {"x": x}, seed=2, check=True)  # every limb equals the evaluator's
    # fhec.load re-derives the same streams (it re-runs the same search)
    loaded = fhec.load(fhec.save(c, tmp_path / "c.fhec"))
    assert loaded.report.stage_reserves == r.stage_reserves
    units = range(len(c.streams.units))
    assert [encode_stream(loaded.streams, u) for u in units] == [encode_stream(c.streams, u) for u in units]


def test_the_staged_choice_takes_each_stage_fastest_reserve_and_untagged_code_the_base():
    from fhec.pipeline import _reserve_fractions, _staged_reserves

    names = ("cts", "evalmod", "stc")
    spans = {0.0: np.array([10, 30, 30]), 0.125: np.array([20, 30, 25]), 0.25: np.array([30, 20, 25])}
    assert _staged_reserves(names, spans, base=0.0) == {"evalmod": 0.25, "stc": 0.125}  # ties: the first
    assert _staged_reserves(names, {0.0: np.array([1, 1, 1]), 0.25: np.array([1, 1, 1])}, base=0.25) == {}
    stage = np.array([-1, 0, 1, 2, -1])
    assert _reserve_fractions(stage, names, 0.0, {"evalmod": 0.25}).tolist() == [0.0, 0.0, 0.25, 0.0, 0.0]
