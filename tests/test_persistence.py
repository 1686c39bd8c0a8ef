"""`fhec.save` / `fhec.load`: every object kind round-trips bit for bit, mismatched
parameters and corrupt files are refused with clear errors, no pickle is ever read, and
a secret key is written only when asked."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile

import numpy as np
import pytest

import fhec
from fhec.backends.stream_files import encode_stream
from fhec.ir.he_json import program_to_json

CKKS = fhec.CKKSParams(N=2**10, levels=2, scale_bits=28, word_bits=32, base_limbs=2, security=None)
BGV = fhec.BGVParams(N=2**10, levels=2, plain_modulus=12289, security=None)


@pytest.fixture(scope="module", params=["ckks", "bgv"])
def keys(request):
    params = CKKS if request.param == "ckks" else BGV
    return fhec.keygen(params, rotations=[1, -3], seed=7)


def _same_keys(a, b) -> None:
    assert a.params.fingerprint == b.params.fingerprint and a.key_id == b.key_id
    assert a.rotations == b.rotations and a.methods == b.methods
    assert all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(a.public, b.public))
    assert set(a.switching) == set(b.switching)
    for k, key in a.switching.items():
        assert np.array_equal(key.b, b.switching[k].b) and np.array_equal(key.a, b.switching[k].a)


def test_parameter_sets_round_trip(tmp_path):
    for params in (CKKS, BGV, fhec.CKKSParams(N=2**13, levels=5)):
        loaded = fhec.load(fhec.save(params, tmp_path / "p.fhec"))
        assert loaded == params and loaded.fingerprint == params.fingerprint


def test_keys_round_trip_with_and_without_the_secret(tmp_path, keys):
    public = fhec.load(fhec.save(keys.public_only(), tmp_path / "public.fhec"))
    _same_keys(keys, public)
    assert public.secret_coeffs is None
    full = fhec.load(fhec.save(keys, tmp_path / "secret.fhec", include_secret=True))
    _same_keys(keys, full)
    assert np.array_equal(full.secret_coeffs, keys.secret_coeffs) and np.array_equal(full.secret_ntt, keys.secret_ntt)
    assert stat.S_IMODE(os.stat(tmp_path / "secret.fhec").st_mode) == 0o600


def test_a_secret_file_is_private_whatever_lies_beside_it(tmp_path, keys):
    # the temporary file a save goes through used to have a predictable name, opened without
    # O_EXCL: a stale or planted file of that name kept its mode (the secret came out
    # world-readable) and a planted symlink received the secret
    import glob

    stale = tmp_path / f".k.fhec.{os.getpid()}.tmp"
    stale.write_bytes(b"")
    os.chmod(stale, 0o644)
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    os.symlink(victim, tmp_path / f".k2.fhec.{os.getpid()}.tmp")
    for name in ("k.fhec", "k2.fhec"):
        fhec.save(keys, tmp_path / name, include_secret=True)
        assert not os.path.islink(tmp_path / name)
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
    assert victim.read_bytes() == b""
    # a public file gets what open() would give it, and no temporary file is left behind
    umask = os.umask(0o022)
    try:
        fhec.save(keys.public_only(), tmp_path / "pub.fhec")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "pub.fhec").st_mode) == 0o644
    assert sorted(glob.glob(str(tmp_path / ".*.tmp"))) == sorted(str(p) for p in (stale, tmp_path / f".k2.fhec.{os.getpid()}.tmp"))


def test_a_secret_is_never_written_unasked(tmp_path, keys):
    with pytest.raises(fhec.SecretKeyError, match="public_only"):
        fhec.save(keys, tmp_path / "k.fhec")
    assert not any(tmp_path.iterdir())  # nothing written, not even a temporary file


def test_ciphertexts_and_plaintexts_round_trip_and_decrypt(tmp_path, keys):
    params = keys.params
    values = np.arange(20) % 7 if params.scheme == "bgv" else np.linspace(-1, 1, 20)
    ev = fhec.Evaluator(keys)
    ct = fhec.encrypt(keys, values, seed=1)
    for obj in (ct, ev.multiply(ct, ct), ev.rotate(ct, 1), fhec.encode(params, values)):  # 2 and 3 parts
        loaded = fhec.load(fhec.save(obj, tmp_path / "x.fhec"), params=params)
        assert type(loaded) is type(obj) and np.array_equal(loaded.data, obj.data)
        assert (loaded.level, loaded.scale, type(loaded.scale)) == (obj.level, obj.scale, type(obj.scale))
        if isinstance(obj, fhec.Ciphertext):
            assert (loaded.key_id, loaded.noise) == (obj.key_id, obj.noise)
    # A ciphertext loaded on its own (parameters rebuilt) decrypts under keys loaded on their own.
    k = fhec.load(fhec.save(keys, tmp_path / "k.fhec", include_secret=True))
    assert np.array_equal(fhec.decrypt(k, fhec.load(fhec.save(ct, tmp_path / "c.fhec"))), fhec.decrypt(keys, ct))


@pytest.mark.parametrize("target", ["f1", "tiny", "osiris-tiny", "f1-datapath"])
def test_compiled_programs_round_trip(tmp_path, target):
    # load re-derives the report too (it refuses a stored one that differs): on every kind of target
    p = fhec.Program("walk", CKKS)
    x, w = p.input("x"), p.plain("w")
    p.output("y", ((x * x) * w).sum_slots(4) + x)
    compiled = fhec.compile(p, target=target)
    loaded = fhec.load(fhec.save(compiled, tmp_path / "c.fhec"))
    assert json.loads(program_to_json(loaded.program)) == json.loads(program_to_json(compiled.program))
    assert loaded.report == compiled.report and loaded.target == compiled.target
    units = range(len(compiled.streams.units))
    assert [encode_stream(loaded.streams, u) for u in units] == [encode_stream(compiled.streams, u) for u in units]
    inputs = {"x": np.linspace(-1, 1, 8), "w": np.linspace(0, 1, 8)}
    a, b = compiled.run(inputs, seed=3), loaded.run(inputs, seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("reserve", [None, 0.5])
def test_a_compile_that_climbed_past_the_default_reserves_round_trips(tmp_path, reserve):
    # BGV on osiris-tiny: the key-switch-paired variant climbs to reserve 0.5, where the plain
    # program, never scheduled there by the search, schedules faster; re-deriving at the stored
    # reserve alone kept the plain one, and load refused the file ("does not reproduce").
    # The case was found with every BCONV term at the array's per-term rate (no `rows`)
    from fhec.backends.target import UnitKind, load_target

    tiny = load_target("osiris-tiny")
    units = tuple(u.model_copy(update={"rows": None}) if u.kind == UnitKind.BCONV else u for u in tiny.cluster.units)
    per_term = tiny.model_copy(update={"cluster": tiny.cluster.model_copy(update={"units": units})})
    p = fhec.Program("climb", BGV)
    x, w = p.input("x"), p.plain("w")
    p.output("y", (x * x + w).rotate(1))
    p.output("z", (x * w).sum_slots(4))
    compiled = fhec.compile(p, target=per_term, prefetch_reserve=reserve)
    assert compiled.report.prefetch_reserve == 0.5
    loaded = fhec.load(fhec.save(compiled, tmp_path / "c.fhec"))
    units = range(len(compiled.streams.units))
    assert [encode_stream(loaded.streams, u) for u in units] == [encode_stream(compiled.streams, u) for u in units]
    assert loaded.report == compiled.report


def test_a_compile_with_stage_reserves_round_trips_its_report(tmp_path):
    # the re-derived report of a bootstrap whose stages got their own reserves (docs/scheduling.md)
    from fhec.backends.target import load_target

    cfg = fhec.BootstrapConfig(hamming_weight=4, hoisting="double", evalmod=fhec.EvalModConfig(
        K=4, degree=15, double_angle=2, arcsine_degree=3, message_ratio_bits=2))
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 1, security=None, bootstrap=cfg)
    p = fhec.Program("boot", params)
    p.output("y", p.input("x", level=1).bootstrap())
    tiny = load_target("tiny")
    target = tiny.model_copy(update={"scratchpad": tiny.scratchpad.model_copy(
        update={"capacity_bytes": 32 * tiny.rvec_bytes(params.N)})})
    compiled = fhec.compile(p, target)
    assert compiled.report.stage_reserves
    assert fhec.load(fhec.save(compiled, tmp_path / "c.fhec")).report == compiled.report


def test_loading_under_other_parameters_is_refused(tmp_path, keys):
    path = fhec.save(fhec.encrypt(keys, [1, 2, 3], seed=1), tmp_path / "c.fhec")
    other = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, base_limbs=2, security=None)
    with pytest.raises(fhec.MismatchedParametersError, match="another parameter set"):
        fhec.load(path, params=other)
    with pytest.raises(fhec.MismatchedParametersError):
        fhec.load(fhec.save(keys.public_only(), tmp_path / "k.fhec"), params=other)


def _rewrite(path, change) -> None:
    """Rewrite an fhec file with `change(header, arrays)` applied."""
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(arrays.pop("header").tobytes())
    change(header, arrays)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("corrupt, message", [
    (lambda h, a: h.update(format="fhec.save/99"), "this fhec reads"),
    (lambda h, a: h.update(kind="wallet"), "unknown kind"),
    (lambda h, a: h.update(kind=["ciphertext"]), r"unknown kind \['ciphertext'\]"),  # raised TypeError: unhashable
    (lambda h, a: h.update(level="2"), "level"),
    (lambda h, a: h["params"].update(levels=3), "derives other primes"),
    (lambda h, a: h["params"].update(N="big"), "parameter literal is not valid"),
    (lambda h, a: a.update(data=a["data"][:, :1]), "expected uint64"),
    (lambda h, a: a["data"].__setitem__((0, 0, 0), np.uint64(2**63)), "not below their primes"),
    (lambda h, a: a.pop("data"), "lacks the array 'data'"),
    # a scale decrypt takes the log of, a noise every precision figure inherits (JSON has NaN and Infinity)
    (lambda h, a: h.update(scale=-h["scale"]), r"'scale' = -\S+ is not a finite positive number"),
    (lambda h, a: h.update(scale=0.0), "'scale' = 0.0 is not a finite positive number"),
    (lambda h, a: h.update(scale=float("nan")), "'scale' = nan is not a finite positive number"),
    (lambda h, a: h.update(scale=float("inf")), "'scale' = inf is not a finite positive number"),
    (lambda h, a: h.update(noise=float("nan")), "'noise' = nan is not a finite number"),
    (lambda h, a: h.update(noise=float("-inf")), "'noise' = -inf is not a finite number"),
])
def test_corrupt_files_are_refused(tmp_path, corrupt, message):
    keys = fhec.keygen(CKKS, seed=1)
    path = fhec.save(fhec.encrypt(keys, [0.5], seed=1), tmp_path / "c.fhec")
    _rewrite(path, corrupt)
    with pytest.raises(fhec.PersistenceFormatError, match=message):
        fhec.load(path)


@pytest.mark.parametrize("corrupt", [
    lambda h, a: h.update(fingerprint="0" * 64),
    lambda h, a: h.update(format="fhec.save/99"),
])
def test_a_file_this_fhec_wrote_that_disagrees_with_itself_is_called_corrupt(tmp_path, corrupt):
    # it said "written by fhec 0.1.0; load it with the fhec version that wrote it", the
    # version running, as though another one could read it
    keys = fhec.keygen(CKKS, seed=1)
    path = fhec.save(fhec.encrypt(keys, [0.5], seed=1), tmp_path / "c.fhec")
    _rewrite(path, corrupt)
    with pytest.raises(fhec.PersistenceFormatError, match="though this fhec .* wrote it: the file is corrupt or was "
                                                          "edited since; save the object again") as e:
        fhec.load(path)
    assert "version that wrote it" not in str(e.value)
    _rewrite(path, lambda h, a: h.update(fhec_version="0.0.1"))  # another version: blamed on it
    with pytest.raises(fhec.PersistenceFormatError, match=r"written by fhec 0\.0\.1, this is fhec .*; load it with "
                                                          r"the fhec version that wrote it"):
        fhec.load(path)


@pytest.mark.parametrize("kind", ["ciphertext", "plaintext"])
@pytest.mark.parametrize("scale", [0, BGV.plain_modulus, -2 * BGV.plain_modulus])
def test_bgv_factors_not_invertible_mod_t_are_refused(tmp_path, kind, scale):
    # decrypt divides by the factor mod t (pow(scale, -1, t) raised ValueError)
    keys = fhec.keygen(BGV, seed=1)
    obj = fhec.encrypt(keys, [1, 2], seed=1) if kind == "ciphertext" else fhec.encode(BGV, [1, 2])
    path = fhec.save(obj, tmp_path / "x.fhec")
    _rewrite(path, lambda h, a: h.update(scale=scale))
    with pytest.raises(fhec.PersistenceFormatError, match=f"'scale' = {scale} is not a plaintext factor invertible"):
        fhec.load(path)


def _flip_secret_ntt(arrays) -> None:
    arrays["secret_ntt"] = arrays["secret_ntt"].copy()
    arrays["secret_ntt"][0, 0] ^= np.uint64(1)


@pytest.mark.parametrize("corrupt, message", [
    # an NTT form that is not the coefficients' used to decrypt to garbage, silently
    (lambda h, a: _flip_secret_ntt(a), "secret_ntt is not the NTT form of secret_coeffs"),
    (lambda h, a: h.update(methods=["foo"]), r"'methods' = \['foo'\] is not a non-empty list"),
    (lambda h, a: h.update(rotations=["x"]), r"'rotations' = \['x'\] is not a list of integer slot offsets"),
    (lambda h, a: h.update(methods=[]), r"'methods' = \[\] is not a non-empty list"),  # Evaluator takes methods[0]
    (lambda h, a: h.update(methods=["bv", "bv"]), "distinct key-switching methods"),
    (lambda h, a: h.update(methods="bv"), "'methods' = 'bv' is missing or of the wrong type"),
    (lambda h, a: h.update(methods=["bv"]), r"switching key \d+ is named \[\d+, 'hybrid'\]"),  # a method not listed
])
def test_corrupt_key_sets_are_refused(tmp_path, corrupt, message):
    path = fhec.save(fhec.keygen(CKKS, rotations=[1], seed=1), tmp_path / "k.fhec", include_secret=True)
    _rewrite(path, corrupt)
    with pytest.raises(fhec.PersistenceFormatError, match=message):
        fhec.load(path)


@pytest.fixture(scope="module")
def compiled_file(tmp_path_factory):
    p = fhec.Program("sq", CKKS)
    p.output("y", p.input("x") * 2)
    return fhec.save(fhec.compile(p, target="tiny"), tmp_path_factory.mktemp("compiled") / "c.fhec").read_bytes()


def _tamper_report(header, change) -> None:
    report = json.loads(header["report"])
    report.update(change)
    header["report"] = json.dumps(report)


@pytest.mark.parametrize("corrupt, message", [
    # back-end options the passes refused with a bare ValueError
    (lambda h, a: h.update(policy="zzz"), "'policy' = 'zzz' is not one of belady, lru"),
    (lambda h, a: h.update(hoisting="some"), "'hoisting' = 'some' is not one of auto, single, none"),
    (lambda h, a: h.update(keyswitch="ckks"), "'keyswitch' = 'ckks' is not one of bv, hybrid, auto"),
    (lambda h, a: h.update(prefetch_reserve=-3), r"'prefetch_reserve' = -3 is not a fraction in \[0, 1\)"),
    (lambda h, a: h.update(prefetch_reserve=1.0), r"'prefetch_reserve' = 1.0 is not a fraction in \[0, 1\)"),
    (lambda h, a: h.update(prefetch_reserve=float("nan")), r"'prefetch_reserve' = nan is not a fraction"),
    # a report the streams do not give used to load as it was
    (lambda h, a: _tamper_report(h, {"cycles": 1}), r"report's cycles = 1 is not what the re-derived streams give"),
    (lambda h, a: _tamper_report(h, {"time_us": 0.5, "bound_ratio": 0.1}),
     r"report's time_us = 0.5 is not what the re-derived streams give \(\S+\) \(and 1 more fields\)"),
    (lambda h, a: _tamper_report(h, {"program": "other"}), "report's program = 'other'"),
])
def test_corrupt_compiled_programs_are_refused(tmp_path, compiled_file, corrupt, message):
    path = tmp_path / "c.fhec"
    path.write_bytes(compiled_file)
    _rewrite(path, corrupt)
    with pytest.raises(fhec.PersistenceFormatError, match=message):
        fhec.load(path)


def test_an_edited_compiled_program_is_called_corrupt(tmp_path, compiled_file):
    path = tmp_path / "c.fhec"
    path.write_bytes(compiled_file)
    _rewrite(path, lambda h, a: h["target"]["memory"].update(bandwidth_gb_s=64.0))
    with pytest.raises(fhec.PersistenceFormatError, match="does not reproduce the stored ones, though this fhec .* wrote "
                                                          "it: the file is corrupt or was edited since; compile"):
        fhec.load(path)


def test_pickles_and_foreign_files_are_refused(tmp_path):
    evil = tmp_path / "evil.npz"
    np.savez(evil, header=np.array([{"kind": "ciphertext"}], dtype=object))  # an object array is a pickle
    (tmp_path / "text.fhec").write_text("hello")
    np.save(tmp_path / "one.npy", np.zeros(3))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("header.npy", b"not an array")
    (tmp_path / "zip.fhec").write_bytes(buffer.getvalue())
    for name in ("evil.npz", "text.fhec", "one.npy", "zip.fhec", "missing.fhec"):
        with pytest.raises(fhec.PersistenceFormatError) as e:
            fhec.load(tmp_path / name)
        assert "allow_pickle" not in str(e.value)  # numpy's advice to load pickles unsafely does not reach the user


def test_a_header_nested_past_the_recursion_limit_is_refused(tmp_path):
    # json.loads raised a raw RecursionError on it
    path = fhec.save(CKKS, tmp_path / "p.fhec")
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["header"] = np.frombuffer(("[" * 100_000 + "]" * 100_000).encode(), dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(fhec.PersistenceFormatError, match="no readable header"):
        fhec.load(path)


def test_a_member_header_claiming_an_unknown_compression_is_refused(tmp_path):
    # one flipped bit in a zip member's compression method raised zipfile's NotImplementedError
    path = fhec.save(CKKS, tmp_path / "p.fhec")
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the first central directory entry
    data[entry + 10] ^= 0x40  # its compression method: 0 (stored) -> 64
    path.write_bytes(bytes(data))
    with pytest.raises(fhec.PersistenceFormatError, match="compression method"):
        fhec.load(path)


def test_unsupported_objects_and_options_are_refused(tmp_path):
    with pytest.raises(fhec.InvalidArgumentError, match="cannot write a dict"):
        fhec.save({"x": 1}, tmp_path / "d.fhec")
    with pytest.raises(fhec.InvalidArgumentError, match="include_secret"):
        fhec.save(CKKS, tmp_path / "p.fhec", include_secret="yes")
    with pytest.raises(fhec.PersistenceFormatError, match="cannot write"):
        fhec.save(CKKS, tmp_path / "no" / "such" / "dir.fhec")
    p = fhec.Program("sq", CKKS)
    p.output("y", p.input("x") * 2)
    with pytest.raises(fhec.InvalidArgumentError, match=r"ISA machine \(rpu\) .* compiled.write\(out_dir\)"):
        fhec.save(fhec.compile(p, target="rpu"), tmp_path / "isa.fhec")
    # paths that are not file names raised a bare TypeError from pathlib; bytes names are file names
    for path in (None, 3, io.BytesIO()):
        with pytest.raises(fhec.InvalidArgumentError, match=r"path = .* must be a file name"):
            fhec.save(CKKS, path)
        with pytest.raises(fhec.InvalidArgumentError, match=r"path = .* must be a file name"):
            fhec.load(path)
    assert fhec.load(os.fsencode(fhec.save(CKKS, os.fsencode(tmp_path / "b.fhec")))) == CKKS


@pytest.mark.parametrize("params", ["abc", 5, fhec.keygen(CKKS, seed=1)], ids=["str", "int", "KeySet"])
def test_load_refuses_a_params_that_is_not_a_parameter_set(tmp_path, params):
    # used to raise AttributeError ('str' object has no attribute 'fingerprint')
    path = fhec.save(CKKS, tmp_path / "p.fhec")
    with pytest.raises(fhec.InvalidArgumentError, match="params must be the parameter set") as e:
        fhec.load(path, params=params)
    assert str(e.value).endswith(f"got {type(params).__name__}.")


def test_a_loaded_key_set_restarts_the_seed_count(tmp_path):
    """As docs/persistence.md says: like a rerun of the script that made the keys."""
    keys = fhec.keygen(CKKS, seed=7)
    first = fhec.encrypt(keys, [0.5], seed=1)
    loaded = fhec.load(fhec.save(keys, tmp_path / "k.fhec", include_secret=True))
    assert np.array_equal(fhec.encrypt(loaded, [0.5], seed=1).data, first.data)


def test_the_documented_example_runs_verbatim(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "persistence.md").read_text()
    block = re.findall(r"```python\n(.*?)```", doc, re.S)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/persistence.md", "exec"), {"__name__": "docs_persistence_md"})
    printed = [float(v) for v in capsys.readouterr().out.strip(" []\n").split()]
    assert np.allclose(printed, np.roll(np.linspace(-1, 1, 8), -1)[:3], atol=1e-4)
    assert stat.S_IMODE(os.stat(tmp_path / "client-keys.fhec").st_mode) == 0o600
