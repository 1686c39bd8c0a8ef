"""Every-limb comparison of compiled runs with the eager evaluator (`fhec.verify_run`)."""

from __future__ import annotations

import numpy as np
import pytest

import fhec
from fhec.errors import CompiledMismatchError
from fhec.ir.limb import LimbOp
from fhec.run import run_detailed
from fhec.testing import assert_matches_reference
from fhec.verify_run import compare_limbs, first_mismatch, run_checked

PARAMS = fhec.CKKSParams(N=2**6, levels=5, base_limbs=2, security=None)  # outputs keep 6 limbs


def _program():
    p = fhec.Program("limbs", PARAMS)
    x, y = p.input("x"), p.input("y")
    p.output("a", (x * y).rotate(1) + x)
    p.output("b", x * 0.5)
    return p


def _inputs():
    rng = np.random.default_rng(0)
    return {n: rng.uniform(-1, 1, PARAMS.slots) for n in ("x", "y")}


def test_identical_runs_pass():
    r = run_checked(_program(), _inputs(), seed=1)
    assert first_mismatch(r.lowered, r.ciphertexts, r.eager()) is None
    assert_matches_reference(_program(), target="limbs", seed=1)
    assert_matches_reference(_program(), target="tiny", seed=1)


def test_one_corrupt_limb_beyond_what_decryption_reads_is_caught():
    r = run_detailed(_program(), _inputs(), seed=1)
    ct = r.ciphertexts["a"]
    last = ct.limbs - 1  # CKKS decryption reads only the first limbs: this one is invisible there
    data = ct.data.copy()
    data[1, last, 7] = (int(data[1, last, 7]) + 1) % ct.moduli[last]
    corrupt = {**r.ciphertexts, "a": ct.with_(data=data)}
    assert np.array_equal(fhec.decrypt(r.keys, corrupt["a"]), r.outputs["a"])  # decryption cannot tell
    m = first_mismatch(r.lowered, corrupt, r.eager())
    assert (m.output, m.part, m.limb, m.coefficient) == ("a", 1, last, 7)
    rvec = int(r.lowered.outputs["a"][1, last])
    assert m.instruction == int(r.lowered.limb.producer()[rvec]) >= 0
    with pytest.raises(CompiledMismatchError) as e:
        compare_limbs(r.lowered, corrupt, r.eager())
    msg = str(e.value)
    assert f"output 'a', part 1, limb {last}" in msg and f"limb instruction #{m.instruction}" in msg
    assert LimbOp(int(r.lowered.limb.op[m.instruction])).name in msg
    assert "test_verify_run.py" in (e.value.where or "")


def test_shape_differences_are_reported():
    r = run_detailed(_program(), _inputs(), seed=1)
    eager = r.eager()
    short = {**r.ciphertexts, "b": r.ciphertexts["b"].with_(data=r.ciphertexts["b"].data[:, :-1])}
    with pytest.raises(CompiledMismatchError, match="shape"):
        compare_limbs(r.lowered, short, eager)


def test_fhec_run_reports_a_corrupt_limb_of_the_executed_streams(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import fhec.sim.streams as streams_mod
    from fhec.cli import main
    from fhec.ir.limb import RVecClass

    path = tmp_path / "prog.py"
    path.write_text(
        "import fhec\n"
        "p = fhec.Program('p', fhec.CKKSParams(N=2**6, levels=5, base_limbs=2, security=None))\n"
        "x = p.input('x')\n"
        "p.output('y', x.rotate(1) + x)\n"
    )
    real = streams_mod.execute_streams

    def corrupting(streams, target, limb, loaded, *a, **k):
        words = real(streams, target, limb, loaded, *a, **k)
        outs = np.flatnonzero(limb.rvec_class == RVecClass.OUTPUT)
        tags = limb.rvec_tags(outs)  # (output, part, limb) of each
        victim = int(max((r for r, t in zip(outs, tags) if t[1] == 1), key=lambda r: limb.rvec_tags([r])[0][2]))
        words[victim] = words[victim].copy()
        words[victim][3] ^= 1
        return words

    monkeypatch.setattr(streams_mod, "execute_streams", corrupting)
    r = CliRunner().invoke(main, ["run", str(path), "--target", "tiny"])
    assert r.exit_code == 2, r.output
    assert "not bit-identical" in r.output and "output 'y', part 1" in r.output and "limb instruction #" in r.output


def test_fhec_run_judges_a_bv_compile_by_its_own_estimate(tmp_path):
    """`fhec run --keyswitch bv` compares the outputs with the precision the BV-compiled
    program is estimated to reach, not the parameters' default (hybrid) method's: a
    correct BV run is OK (it reported MISMATCH, 13.1 bits against 15.1 required)."""
    from click.testing import CliRunner

    from fhec.cli import main

    path = tmp_path / "poly.py"
    path.write_text(
        "import fhec\n"
        "p = fhec.Program('poly3', fhec.CKKSParams(N=2**10, levels=4, scale_bits=28, word_bits=32, security=None))\n"
        "x = p.input('x')\n"
        "p.output('y', x * x * x + 0.5 * (x * x) - 2)\n"
    )
    for seed in ("1", "2"):
        r = CliRunner().invoke(main, ["run", str(path), "--target", "f1", "--keyswitch", "bv", "--seed", seed])
        assert r.exit_code == 0, r.output
        assert ": OK" in r.output


def test_fhec_run_draws_inputs_for_an_auto_program_as_compiled(tmp_path):
    """`fhec run` of a params="auto" program takes its random inputs and reference from
    the program as compiled for the target (N = 2^10 on f1), not from a second load of
    the file, which chose N = 2^5 without the target (it crashed: operands could not be
    broadcast together with shapes (512,) (16,))."""
    from click.testing import CliRunner

    from fhec.cli import main

    path = tmp_path / "auto.py"
    path.write_text(
        "import fhec\n"
        "a = fhec.Program('a', params=fhec.AutoParams(security=None))\n"
        "x = a.input('x')\n"
        "a.output('y', x * x * x)\n"
    )
    r = CliRunner().invoke(main, ["run", str(path), "--target", "f1", "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert ": OK" in r.output
