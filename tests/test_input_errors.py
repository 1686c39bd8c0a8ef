"""Bad inputs of every class of fhec issue 9 (parts 2-4): each raises an FhecError
subclass whose message names the fix, or gives the correct answer. One test per class;
`tests/fuzz/` throws random inputs of the same classes at every entry point."""

from __future__ import annotations

import json
import struct
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

import fhec
from fhec.backends.stream_files import StreamFormatError, decode_stream, encode_stream, read_streams
from fhec.backends.target import _parse, _shipped_dir
from fhec.cli import main
from fhec.sim.timing import load_report

CKKS = fhec.CKKSParams(N=2**10, levels=2, security=None)
BGV = fhec.BGVParams(N=2**10, levels=2, plain_modulus=12289, security=None)


@pytest.fixture(scope="module")
def ckks():
    keys = fhec.keygen(CKKS, rotations=[1], seed=1)
    return keys, fhec.Evaluator(keys), fhec.encrypt(keys, np.linspace(-1, 1, 16), seed=2)


@pytest.fixture(scope="module")
def bgv_keys():
    return fhec.keygen(BGV, seed=3)


@pytest.fixture(scope="module")
def compiled():
    p = fhec.Program("small", CKKS)
    x = p.input("x")
    p.output("y", x.rotate(1) * 2)
    return fhec.compile(p, target="tiny")


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# -- silent wrong answers --------------------------------------------------------------------


def test_truncated_floats_and_bools_are_refused_numpy_ints_accepted(ckks):
    keys, ev, ct = ckks
    with pytest.raises(fhec.InvalidArgumentError, match=r"k = 1.7 must be an integer"):
        ev.rotate(ct, 1.7)
    with pytest.raises(fhec.InvalidArgumentError, match=r"rotations\[0\] = 1.5 must be an integer"):
        fhec.keygen(CKKS, rotations=[1.5], seed=1)
    with pytest.raises(fhec.ProgramError, match=r"rotation_keys\[0\] = 1.5"):
        fhec.Program("p", CKKS, rotation_keys=[1.5])
    with pytest.raises(fhec.ParameterError, match=r"levels = True .* not bool"):
        fhec.CKKSParams(N=2**10, levels=True, security=None)
    p = fhec.CKKSParams(N=np.int64(2**10), levels=np.int32(2), security=None)
    assert p.N == 2**10 and type(p.N) is int and p == CKKS
    assert fhec.BGVParams(N=2**10, levels=2, plain_modulus=np.int64(12289), security=None) == BGV
    out = fhec.decrypt(keys, ev.rotate(ct, np.int64(1)))
    assert np.allclose(out[:15], np.linspace(-1, 1, 16)[1:], atol=1e-3)


def test_an_empty_input_is_refused_not_run_as_zeros(compiled):
    """A 0-length input vector would be zero-padded into all-zero slots: refused, naming
    the input, by the evaluator, a compiled run and fhec.reference alike."""
    p = fhec.Program("simple", CKKS)
    x = p.input("x")
    p.output("y", x * x + 1)
    for run in (lambda: fhec.evaluate(p, {"x": np.array([])}, seed=0), lambda: fhec.reference(p, {"x": []}),
                lambda: compiled.run({"x": []}, seed=0)):
        with pytest.raises(fhec.InvalidPlaintextError, match=r"input 'x' .* is an empty vector"):
            run()


def test_bgv_inputs_reduce_exactly_mod_t_and_floats_are_refused(bgv_keys):
    t = BGV.plain_modulus
    big = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    out = fhec.decrypt(bgv_keys, fhec.encrypt(bgv_keys, big, seed=1))
    assert out[:3].tolist() == [(2**64 - 1) % t, 2**63 % t, 5]  # no wrap through int64
    out = fhec.decrypt(bgv_keys, fhec.encrypt(bgv_keys, [2**100, -1], seed=1))
    assert out[:2].tolist() == [2**100 % t, t - 1]
    for bad in ([1.5], [1.0], [1, 2.5], np.array([True])):
        with pytest.raises(fhec.InvalidPlaintextError, match="integers"):
            fhec.encrypt(bgv_keys, bad, seed=1)
    p = fhec.Program("b", BGV)
    p.output("y", p.input("x") + np.array([2**64 - 1], dtype=np.uint64))
    assert fhec.reference(p, {"x": [0]})["y"][0] == (2**64 - 1) % t


def test_implausible_targets_and_reports_are_refused(compiled, tmp_path):
    tiny = _shipped_dir().joinpath("tiny.toml").read_text()
    for old, new, field in [
        ("bandwidth_gb_s = 32.0", "bandwidth_gb_s = inf", "memory.bandwidth_gb_s"),
        ("capacity_bytes = 49152", "capacity_bytes = 8", "register_file.capacity_bytes"),
        ("[cluster]\ncount = 2", "[cluster]\ncount = 100000", "cluster.count"),
        ("lanes = 16", "lanes = true", "lanes"),
    ]:
        assert old in tiny
        with pytest.raises(fhec.TargetError, match=field.replace(".", r"\.")):
            _parse(tiny.replace(old, new, 1), "my.toml")
    report = json.loads(compiled.report.to_json())
    report["cycles"] = -5
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(fhec.ReportFormatError, match="cycles"):
        load_report(path)
    r = _cli("report", path)
    assert r.exit_code == 2 and "cycles" in r.output
    report = json.loads(compiled.report.to_json())
    report["utilization"]["mul"] = 1.7  # a busy fraction above 1 is no schedule's
    path.write_text(json.dumps(report))
    with pytest.raises(fhec.ReportFormatError, match="utilization.mul"):
        load_report(path)


def test_corrupt_streams_are_refused(compiled, tmp_path):
    good = encode_stream(compiled.streams, 0)
    header = bytearray(good[:32])
    struct.pack_into("<I", header, 12, 0)  # record count 0, body still there
    with pytest.raises(StreamFormatError, match="record count"):
        decode_stream(bytes(header) + good[32:])
    compute = int(np.flatnonzero(compiled.streams.op < 16)[0])  # a compute entry: it needs a modulus
    unit = int(compiled.streams.unit[compute])
    mod = compiled.streams.mod.copy()
    mod[compute] = -1  # encoded as 1023, "no modulus"
    with pytest.raises(StreamFormatError, match="without a modulus"):
        decode_stream(encode_stream(compiled.streams.replace_columns(mod=mod), unit))
    compiled.write(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    for field, value, match in [("N", 1024.5, "N"), ("slots", -3, "slots"), ("N", 1000, "power of two")]:
        bad = dict(manifest, **{field: value})
        (tmp_path / "manifest.json").write_text(json.dumps(bad))
        with pytest.raises(StreamFormatError, match=match):
            read_streams(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    text_file = tmp_path / manifest["units"][0]["text"]
    text_file.write_text(text_file.read_text().replace(" @q", " @q9999", 1))
    with pytest.raises(StreamFormatError, match="modulus"):
        read_streams(tmp_path, fmt="txt")


def test_check_exits_nonzero_for_a_missing_file(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import fhec
        p = fhec.Program("g", fhec.CKKSParams(N=2**6, levels=1, security=None))
        p.output("y", p.input("x") * 2)
    """))
    r = _cli("check", good, tmp_path / "nope.py")
    assert r.exit_code == 2 and "no such file" in r.output and "good.py [g" in r.output


def test_compile_out_replaces_its_own_earlier_files_only(compiled, tmp_path):
    compiled.write(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["units"].append(dict(manifest["units"][0], name="old", text="old.txt", binary="old.bin"))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    for name in ("old.txt", "old.bin", "notes.md"):
        (tmp_path / name).write_text("x")
    compiled.write(tmp_path)
    assert not (tmp_path / "old.txt").exists() and not (tmp_path / "old.bin").exists()
    assert (tmp_path / "notes.md").exists()  # not fhec's: untouched
    assert read_streams(tmp_path).total_cycles == compiled.streams.total_cycles
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(fhec.OutputDirectoryError, match="manifest.json"):
        compiled.write(tmp_path)
    with pytest.raises(fhec.OutputDirectoryError, match="not a directory"):
        compiled.write(tmp_path / "notes.md")


def test_encode_scale_must_fit_the_modulus(ckks):
    with pytest.raises(fhec.InvalidArgumentError, match=r"scale = 2\^200.0 does not fit"):
        fhec.encode(CKKS, [1.0], scale=2**200)
    for bad in (0, -1.0, float("nan"), "2**30"):
        with pytest.raises(fhec.InvalidArgumentError, match="scale"):
            fhec.encode(CKKS, [1.0], scale=bad)
    pt = fhec.encode(CKKS, [0.5], scale=2**40)
    keys, _, _ = ckks
    assert abs(fhec.decrypt(keys, fhec.encrypt(keys, pt, seed=1))[0] - 0.5) < 1e-6


# -- only FhecError reaches the user --------------------------------------------------------------


@pytest.mark.parametrize("kwargs,error", [
    (dict(base_limbs="1"), fhec.ParameterError),
    (dict(special_primes=2.5), fhec.ParameterError),
    (dict(security=[]), fhec.ParameterError),
    (dict(keyswitch=None), fhec.ParameterError),
    (dict(N=2**10.0), fhec.InvalidRingDegreeError),
])
def test_parameter_types(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        fhec.CKKSParams(**{**dict(N=2**10, levels=2, security=None), **kwargs})
    with pytest.raises(fhec.ParameterError, match="plain_modulus = 65537.0 must be an integer"):
        fhec.BGVParams(N=2**10, levels=2, plain_modulus=65537.0, security=None)


def test_scheme_calls_with_wrong_arguments(ckks):
    keys, ev, ct = ckks
    for level in (5, -1, 1.5):
        with pytest.raises(fhec.InvalidArgumentError, match="level"):
            fhec.encrypt(keys, [1.0], level=level, seed=1)
    with pytest.raises(fhec.InvalidArgumentError, match="Ciphertext.*not ndarray"):
        fhec.decrypt(keys, np.ones(4))
    with pytest.raises(fhec.InvalidArgumentError, match="KeySet"):
        fhec.Evaluator("keys")
    with pytest.raises(fhec.InvalidArgumentError, match="Galois element"):
        ev.apply_galois(ct, 2)
    with pytest.raises(fhec.InvalidArgumentError, match="shape"):
        fhec.measure_precision(np.ones(3), np.ones(4))


def test_dsl_program_and_driver_misuse():
    p = fhec.Program("p", CKKS)
    x = p.input("x")
    for operand in (None, {1: 2}, object()):
        with pytest.raises(fhec.ProgramError, match="cannot combine a ciphertext"):
            x * operand
    for misuse, match in [(lambda: x < 0, "comparison"), (lambda: abs(x), "abs"), (lambda: x[0], "indexing"),
                          (lambda: x @ x, "linear_transform"), (lambda: {p: 1}, "dict key")]:
        with pytest.raises(fhec.ProgramError, match=match):
            misuse()
    with pytest.raises(fhec.ProgramError, match=r"fhec.Program .* got str"):
        fhec.compile("str")
    p.output("y", x * 2)
    with pytest.raises(fhec.ParameterError, match=r"policy = 'x': choose one of 'belady', 'lru'"):
        fhec.compile(p, target="tiny", policy="x")
    with pytest.raises(fhec.MissingInputError, match="mapping"):
        fhec.evaluate(p, [1.0, 2.0], seed=1)
    with pytest.raises(fhec.InvalidPlaintextError, match="1-D"):
        fhec.evaluate(p, {"x": np.ones((2, 2))}, seed=1)
    with pytest.raises(fhec.InvalidPlaintextError, match="1-D"):
        fhec.encrypt(fhec.keygen(CKKS, seed=1), np.ones((2, 2)), seed=1)


@pytest.mark.parametrize("text,match", [
    ("[]", "must be an object"), ("null", "must be an object"), ("{", "not JSON"), (b"\xff\xfe", "not JSON"),
    ('{"format": "fhec.he/1"}', "options"), (3, "JSON text"),
])
def test_malformed_program_json(text, match):
    with pytest.raises(fhec.ProgramFormatError, match=match):
        fhec.Program.from_json(text)


def test_malformed_program_json_fields():
    p = fhec.Program("p", CKKS)
    p.output("y", p.input("x").rotate(1))
    doc = json.loads(p.to_json())
    for edit, match in [
        (lambda d: d["nodes"][1].update(op="nope"), "op"),
        (lambda d: d["nodes"][1].update(args=["0"]), "args"),
        (lambda d: d["params"].update(scheme="rsa"), "scheme"),
        (lambda d: d["params"].update(colour=1), "unknown field"),
        (lambda d: d["nodes"][1]["type"].update(level=0), "inconsistent"),
    ]:
        bad = json.loads(json.dumps(doc))
        edit(bad)
        with pytest.raises(fhec.ProgramFormatError, match=match):
            fhec.Program.from_json(json.dumps(bad))


@pytest.mark.parametrize("source,match", [
    ("import fhec\nx = (\n", r"bad\.py:2: syntax error"),
    ("import fhec\n\ny = undefined_name\n", r"bad\.py:3: .*NameError"),
    ("import not_a_module_fhec_test\n", r"bad\.py:1: .*ModuleNotFoundError"),
    # SystemExit is no Exception: it used to end fhec with the file's own exit code (0)
    ("import sys\n\nsys.exit(0)\n", r"bad\.py:3: .*sys\.exit\(0\).*__main__"),
    # an FhecError without a DSL location (a parameter set refused) gets the file's line
    ("import fhec\n\np = fhec.Program('i', fhec.CKKSParams(N=2**11, levels=10))\n", r"bad\.py:3: log2\(Q"),
])
def test_cli_program_file_errors_name_file_and_line(tmp_path, source, match):
    path = tmp_path / "bad.py"
    path.write_text(source)
    r = _cli("show", path)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.startswith("error: ") and __import__("re").search(match, r.output), r.output


def test_cli_binary_files_and_unwritable_out(tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)))
    for args in (("show", blob), ("targets", blob), ("report", blob)):
        r = _cli(*args)
        assert r.exit_code == 2 and r.output.startswith("error: ") and "Traceback" not in r.output, args
    prog = tmp_path / "p.py"
    prog.write_text("import fhec\np = fhec.Program('p', fhec.CKKSParams(N=2**6, levels=1, security=None))\n"
                    "p.output('y', p.input('x') * 2)\n")
    r = _cli("compile", prog, "--target", "tiny", "--out", blob / "sub")
    assert r.exit_code == 2 and "error: " in r.output and "Traceback" not in r.output


# -- wrong advice and hangs ---------------------------------------------------------------------


def test_level0_scale_above_q0_is_refused():
    # refused while the chain is built, once the scale outgrows what q_0 can hold
    with pytest.raises(fhec.ParameterError, match=r"(level-0 scale|the scale grows past) .* Lower scale_bits"):
        fhec.CKKSParams(N=2**10, levels=6, word_bits=20, scale_bits=20, security=None)


def test_keyswitch_argument_advice(ckks):
    keys, ev, ct = ckks
    with pytest.raises(fhec.ParameterError, match=r"keyswitch = 'nonsense': choose one of 'bv', 'hybrid'\."):
        fhec.Evaluator(keys, keyswitch="nonsense")
    hybrid_only = fhec.keygen(CKKS, seed=1, keyswitch="hybrid")
    with pytest.raises(fhec.MissingKeyError, match=r"keygen\(params, \.\.\., keyswitch='bv'\)"):
        fhec.Evaluator(hybrid_only, keyswitch="bv")


def test_absurd_level_counts_are_refused_at_once():
    with pytest.raises(fhec.InsecureParametersError, match="security=None"):
        fhec.CKKSParams(N=2**13, levels=100000)
    with pytest.raises(fhec.ParameterError, match="more than fhec supports"):
        fhec.CKKSParams(N=2**13, levels=10**9, security=None)
    p = fhec.Program("p", CKKS)
    with pytest.raises(fhec.LevelExhaustedError, match="levels"):
        p.input("x") ** (10**9)


# -- messages that name the actual fix (BGV porting, 2026-11-25) -------------------------------


def test_bgv_messages_name_the_real_limit_and_fix(tmp_path):
    # t's limit as enforced: 5 bits fewer than the primes (a 26-bit t on 30-bit level primes is refused)
    with pytest.raises(fhec.ParameterError, match=r"\(26 bits\) is too large .* at most 25 bits"):
        fhec.BGVParams(N=2**10, levels=2, plain_modulus=67104769, modulus_bits=30, security=None)
    # a fraction: its inverse mod t, not "pass 0" (which would zero the product)
    p = fhec.Program("b", BGV)
    with pytest.raises(fhec.InvalidPlaintextError, match=r"1/2 mod t is 1·2\^-1 = 6145: multiply by 6145"):
        p.input("x") * 0.5
    # precision_bits means nothing for BGV
    with pytest.raises(fhec.ParameterError, match="CKKS setting"):
        fhec.AutoParams(scheme="bgv", precision_bits=20)
    # a file of another parameter set says which field differs and what to rebuild
    other = fhec.BGVParams(N=2**10, levels=2, plain_modulus=40961, security=None)
    fhec.save(fhec.keygen(BGV, seed=1).public_only(), tmp_path / "k.fhec")
    with pytest.raises(fhec.MismatchedParametersError,
                       match=r"key set .*plain_modulus 12289 in the file, 40961 given.*generate keys under these"):
        fhec.load(tmp_path / "k.fhec", params=other)
    # a directory on the command line is not "no such file"
    r = _cli("check", tmp_path)
    assert r.exit_code == 2 and "is a directory, not a program file" in r.output


def test_with_inputs_given_a_strategy_names_the_flatmap_form():
    import fhec.testing as ft

    with pytest.raises(fhec.ProgramError, match=r"programs\(\.\.\.\)\.flatmap\(fhec.testing.with_inputs\)"):
        ft.with_inputs(ft.programs(scheme="bgv"))


def test_dsl_inputs_from_the_porting_pass_raise_fhec_errors_or_work():
    """Found by a black-box pass over the DSL (2026-11-25): each raised a raw exception,
    was silently coerced, or returned noise without a word."""
    import functools
    import warnings
    from fractions import Fraction

    p = fhec.Program("p", CKKS)
    x, w = p.input("x"), p.plain("w")
    x + Fraction(1, 3), x * Fraction(4, 2), x.dot(Fraction(1, 3))  # noqa: B018 (rationals are numbers)
    with pytest.raises(fhec.InvalidPlaintextError, match="holds text"):
        x + ["1", "2.5"]
    with pytest.raises(fhec.InvalidPlaintextError, match="memoryview"):
        x.linear_transform({1: memoryview(b"ab")})
    for use in (lambda: w >> 1, lambda: np.exp(w), lambda: abs(w), lambda: len(w), lambda: w < 1, lambda: float(w)):
        with pytest.raises(fhec.PlaintextOperandError):
            use()
    with pytest.raises(fhec.ProgramError, match=r"pow\(x, k, m\)"):
        pow(x, 2, 3)
    with pytest.raises(fhec.PolynomialError, match="complex values"):
        fhec.approx(lambda t: np.exp(1j * t), domain=(-1, 1), degree=7)
    # manual rescale of a value whose scale is one prime: no bit of it would be left
    m = fhec.Program("m", CKKS, rescale="manual")
    with pytest.raises(fhec.PrecisionError, match="leaving no bit of the value"):
        m.input("x").rescale()
    # an output of noise warns even with the BV guard off
    bv = fhec.Program("bv", fhec.CKKSParams(N=2**10, levels=2, keyswitch="bv", min_precision_bits=None,
                                            security=None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bv.output("a", bv.input("x").rotate(1))
    assert any("estimated worst-slot" in str(c.message) for c in caught)

    def f(x, k):
        return x.rotate(k)

    traced = fhec.program(CKKS)(functools.partial(f, k=3))  # settings bound by partial, as docs/dsl.md says
    assert list(traced.ir.inputs) == ["x"]


def test_an_input_just_over_its_bound_is_named_with_enough_digits():
    p = fhec.Program("p", CKKS)
    p.output("y", p.input("x") * 0.5)
    with pytest.raises(fhec.ValueOverflowError, match=r"\|value\| = 1.0000001, above its declared bound 1:.*"
                                                      r"bound=1.0000001\)"):
        fhec.evaluate(p, {"x": np.full(CKKS.slots, 1.0000001)}, seed=1)


def test_bgv_outputs_centered_as_seal_and_openfhe_decode_them():
    p = fhec.Program("n", BGV)
    x = p.input("x")
    p.output("y", x * -3)
    out = fhec.evaluate(p, {"x": [1, 2, -4]}, seed=1)["y"]
    assert out[:3].tolist() == [12289 - 3, 12289 - 6, 12]
    assert fhec.centered(out, BGV)[:3].tolist() == [-3, -6, 12]
    with pytest.raises(fhec.InvalidArgumentError, match="BGV"):
        fhec.centered(out, CKKS)
    with pytest.raises(fhec.InvalidPlaintextError, match="integer"):
        fhec.centered([1.5], BGV)
