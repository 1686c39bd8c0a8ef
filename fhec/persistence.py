"""`fhec.save` / `fhec.load`: parameter sets, keys, ciphertexts, plaintexts and compiled
programs on disk, without pickle.

A file is one numpy ``.npz`` archive (a zip of ``.npy`` arrays) read with
``np.load(allow_pickle=False)``: arbitrary code never runs on loading. Its member
``header`` holds a UTF-8 JSON header as bytes; the others are the object's arrays::

    header = {"format": "fhec.save/1", "kind": "ciphertext", "fhec_version": "0.1.0",
              "params": {"scheme": "ckks", "N": 8192, ...},      # the constructor literal
              "fingerprint": "3f0c...",                           # sha-256 of the primes
              ...kind-specific fields (level, scale, key_id...)}

`KINDS` lists each kind's writer and reader. The parameter literal makes every file
self-contained (`load` rebuilds the parameter set), and the fingerprint makes a
mismatch a clear error: `load(path, params=p)` refuses a file written under other
parameters, and a literal that no longer derives the recorded primes (a different fhec)
is refused too.

Secret keys are written only when asked: `save(keys, path)` of a `KeySet` that holds
its secret raises `SecretKeyError` unless ``include_secret=True``; ``keys.public_only()``
is what a server receives. A file holding a secret is created readable by its owner
only (mode 0600).

A compiled program is stored as what determines it (its HE program after
``choose_keyswitch``, the target, the back-end options) plus its streams and report;
`load` re-runs the deterministic back end (``expand_key_switches`` →
``schedule_cycles``) and refuses the file unless the streams come out identical, bit
for bit, and the stored report is the one they give.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from fhec.errors import (
    FhecError,
    InvalidArgumentError,
    MismatchedParametersError,
    PersistenceFormatError,
    SecretKeyError,
)

FORMAT = "fhec.save/1"
HEADER = "header"
SECRET_FILE_MODE = 0o600


# -- parameters -----------------------------------------------------------------------------------


def params_fingerprint(params) -> str:
    """64 hex digits of SHA-256 over the parameter set's `fingerprint` (scheme, N, every
    prime, the BGV plaintext modulus): equal exactly when objects may mix."""
    return hashlib.sha256(json.dumps(params.fingerprint).encode()).hexdigest()


def _params_literal(params) -> dict[str, Any]:
    from fhec.ir.he_json import params_to_dict

    return _jsonable(params_to_dict(params))


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


_KIND_NAMES = {"keyset": "key set", "compiled": "compiled program", "params": "parameter set"}


def _params_difference(header: dict, expected) -> str:
    """The constructor fields in which the file's parameter literal and `expected` differ
    ("plain_modulus 65537 in the file, 786433 given"), or the N of each when the literal
    names no difference (the primes themselves differ)."""
    recorded = header.get("params")
    given = _params_literal(expected)
    if isinstance(recorded, dict):
        diffs = [f"{k} {recorded.get(k)!r:.40} in the file, {given.get(k)!r:.40} given"
                 for k in sorted(set(recorded) | set(given)) if recorded.get(k) != given.get(k)]
        if diffs:
            return "; ".join(diffs[:4]) + ("; ..." if len(diffs) > 4 else "")
        return f"N = {recorded.get('N')} in both, other primes"
    return f"N = {expected.N} given"


def _params_from_header(header: dict, path, expected) -> Any:
    """The file's parameter set: `expected` when given (after checking the fingerprint),
    else rebuilt from the literal and checked against the recorded primes."""
    from fhec.ir.he_json import params_from_dict

    recorded = header.get("fingerprint")
    if expected is not None:
        if params_fingerprint(expected) != recorded:
            kind = header.get("kind")
            redo = {"ciphertext": "re-encrypt under these", "plaintext": "re-encode under these",
                    "compiled": "compile the program again under these", "keyset": "generate keys under these"}
            raise MismatchedParametersError(
                f"{path} holds a {_KIND_NAMES.get(kind, kind)} of another parameter set than the one given "
                f"({_params_difference(header, expected)}, "
                f"fingerprint {str(recorded)[:16]} against {params_fingerprint(expected)[:16]}); load it with its own "
                f"parameters (fhec.load(path) rebuilds them) or {redo.get(kind, 'rebuild it under these')}."
            )
        return expected
    try:
        params = params_from_dict(header.get("params"))
    except FhecError as e:
        raise PersistenceFormatError(f"{path}: its parameter literal is not valid: {e}") from None
    if params_fingerprint(params) != recorded:
        raise _disagreement(path, header, "its parameter literal derives other primes than the file records",
                            other_version="load it with the fhec version that wrote it",
                            same_version="save the object again")
    return params


def _disagreement(path, header: dict, what: str, *, other_version: str, same_version: str) -> PersistenceFormatError:
    """The error for a file that disagrees with itself (`what`). Written by another fhec
    version, the difference may be that version's: `other_version` says what to do. Written
    by this one, which reads what it writes, the file is corrupt or was edited:
    `same_version` says what to do (blaming the version there sent users looking for one)."""
    from fhec.version import package_version

    written, running = header.get("fhec_version"), package_version()
    if written == running:
        return PersistenceFormatError(f"{path}: {what}, though this fhec ({running}) wrote it: the file is corrupt or "
                                      f"was edited since; {same_version}.")
    return PersistenceFormatError(f"{path}: {what} (written by fhec {written!s:.40}, this is fhec {running}); "
                                  f"{other_version}.")


# -- array checks -------------------------------------------------------------------------------


def _residues(arrays: dict, name: str, shape: tuple, moduli, path) -> np.ndarray:
    """Array `name`: uint64 of `shape`, limb i (axis -2) below moduli[i]."""
    a = _array(arrays, name, path)
    if a.dtype != np.uint64 or a.shape != shape:
        raise PersistenceFormatError(f"{path}: {name} is {a.dtype}{list(a.shape)}, expected uint64{list(shape)}.")
    bound = np.asarray(moduli, dtype=np.uint64).reshape(-1, 1)
    if a.size and np.any(a >= bound):
        raise PersistenceFormatError(f"{path}: {name} holds residues not below their primes: the file is corrupt.")
    return a


def _array(arrays: dict, name: str, path) -> np.ndarray:
    if name not in arrays:
        raise PersistenceFormatError(f"{path}: the file lacks the array {name!r}; it is truncated or not fhec's.")
    return arrays[name]


def _field(header: dict, name: str, kind, path):
    """Header field `name`, of type `kind` (a bool is not an int here)."""
    value = header.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise PersistenceFormatError(f"{path}: header field {name!r} = {value!r:.40} is missing or of the wrong type.")
    return value


def _level(header: dict, params, path) -> int:
    level = _field(header, "level", int, path)
    if not 0 <= level <= params.top_level:
        raise PersistenceFormatError(f"{path}: level {level} is outside 0..{params.top_level}.")
    return level


def _scale(header: dict, params, path):
    """CKKS: a finite positive float (JSON has NaN and Infinity, and decrypt takes its log);
    BGV: a plaintext factor invertible mod t, which decrypt divides by (not necessarily
    reduced mod t: `encode_scalar` and `multiply_integer` keep the factor given)."""
    if params.scheme == "ckks":
        scale = _field(header, "scale", float, path)
        valid, expected = math.isfinite(scale) and scale > 0, "a finite positive number"
    else:
        scale = _field(header, "scale", int, path)
        t = params.plain_modulus
        valid, expected = math.gcd(scale, t) == 1, f"a plaintext factor invertible mod t = {t}"
    if not valid:
        raise PersistenceFormatError(f"{path}: header field 'scale' = {scale!r} is not {expected}.")
    return scale


def _noise(header: dict, path) -> float:
    """The noise estimate, log2 of a standard deviation: any finite real (negative is a
    deviation below 1), never NaN or infinite, which every precision figure would inherit."""
    noise = float(_field(header, "noise", (int, float), path))
    if not math.isfinite(noise):
        raise PersistenceFormatError(f"{path}: header field 'noise' = {noise!r} is not a finite number.")
    return noise


# -- the kinds ------------------------------------------------------------------------------------


def _write_params(params, _options) -> tuple[dict, dict]:
    return {}, {}


def _read_params(header, arrays, params, path):
    return params


def _write_ciphertext(ct, _options) -> tuple[dict, dict]:
    scale = float(ct.scale) if ct.params.scheme == "ckks" else int(ct.scale)
    return {"level": ct.level, "scale": scale, "key_id": ct.key_id, "noise": float(ct.noise)}, {"data": ct.data}


def _read_ciphertext(header, arrays, params, path):
    from fhec.schemes.ciphertext import Ciphertext

    level = _level(header, params, path)
    data = _array(arrays, "data", path)
    parts = data.shape[0] if data.ndim == 3 else 0
    if parts not in (2, 3):
        raise PersistenceFormatError(f"{path}: a ciphertext has 2 or 3 parts, the file holds shape {list(data.shape)}.")
    data = _residues(arrays, "data", (parts, params.limbs_at(level), params.N), params.moduli_at(level), path)
    return Ciphertext(params, data, level, _scale(header, params, path), _field(header, "key_id", int, path),
                      _noise(header, path))


def _write_plaintext(pt, _options) -> tuple[dict, dict]:
    scale = float(pt.scale) if pt.params.scheme == "ckks" else int(pt.scale)
    return {"level": pt.level, "scale": scale}, {"data": pt.data}


def _read_plaintext(header, arrays, params, path):
    from fhec.schemes.ciphertext import Plaintext

    level = _level(header, params, path)
    data = _residues(arrays, "data", (params.limbs_at(level), params.N), params.moduli_at(level), path)
    return Plaintext(params, data, level, _scale(header, params, path))


def _write_keyset(keys, options) -> tuple[dict, dict]:
    if keys.secret_coeffs is not None and not options.get("include_secret"):
        raise SecretKeyError(
            "this KeySet holds the secret key, which save() writes only when asked: save keys.public_only() "
            "for whoever evaluates (public and evaluation keys), or pass include_secret=True to write the "
            "secret too, into a file only its owner can read."
        )
    switching = sorted(keys.switching.items(), key=lambda kv: (str(kv[0][0]), kv[0][1:]))
    header = {
        "key_id": keys.key_id,
        "rotations": list(keys.rotations),
        "methods": list(keys.methods),
        "switching": [list(slot) for slot, _ in switching],  # [source, method] or [source, method, "residual"]
        "uniform_seeds": [key.uniform_seed.hex() for _, key in switching],  # public (fhec.schemes.keys)
        "secret": keys.secret_coeffs is not None,
    }
    arrays = {"public_b": keys.public[0], "public_a": keys.public[1]}
    for i, (_, key) in enumerate(switching):
        arrays[f"switch{i}_b"], arrays[f"switch{i}_a"] = key.b, key.a
    if header["secret"]:
        arrays["secret_coeffs"], arrays["secret_ntt"] = keys.secret_coeffs, keys.secret_ntt
    return header, arrays


def _read_keyset(header, arrays, params, path):
    from typing import get_args

    from fhec.schemes.keys import SECRET_SWITCHES, KeySet, Method, SwitchingKey
    from fhec.schemes.sampling import small_ntt

    q, qp = params.moduli, params.moduli + params.special_moduli
    public = tuple(_residues(arrays, f"public_{c}", (params.max_limbs, params.N), q, path) for c in "ba")
    # the Evaluator picks its default method among these (the first, when the parameters' is absent)
    methods = _field(header, "methods", list, path)
    if not (methods and all(m in get_args(Method) for m in methods) and len(set(methods)) == len(methods)):
        raise PersistenceFormatError(f"{path}: header field 'methods' = {methods!r:.40} is not a non-empty list of "
                                     f"distinct key-switching methods ({', '.join(get_args(Method))}).")
    switching = {}
    seeds = header.get("uniform_seeds", [])  # absent in files written before seeds were kept
    for i, entry in enumerate(_field(header, "switching", list, path)):
        if not (isinstance(entry, list) and len(entry) in (2, 3)
                and (entry[1] in methods or entry[0] in SECRET_SWITCHES and entry[1] == "hybrid")  # always hybrid
                and (entry[0] in ("relin", *SECRET_SWITCHES)
                     or isinstance(entry[0], int) and not isinstance(entry[0], bool))
                and (len(entry) == 2 or entry[1] == "hybrid" and entry[2] in params.key_bases[1:])):
            raise PersistenceFormatError(f"{path}: switching key {i} is named {entry!r:.40}, not [source, method] "
                                         f"(or [source, 'hybrid', 'residual'] with a residual basis) of a method "
                                         f"in the header's methods {methods}.")
        source, method = entry[:2]
        basis = entry[2] if len(entry) == 3 else params.MAIN_BASIS
        moduli = q if method == "bv" else q + params.special_moduli[: params.basis_special_primes(basis)]
        digits = params.max_limbs if method == "bv" else len(params.digit_groups(params.basis_top_level(basis)))
        shape = (digits, len(moduli), params.N)
        b, a = (_residues(arrays, f"switch{i}_{c}", shape, moduli, path) for c in "ba")
        seed = seeds[i] if i < len(seeds) else ""
        try:
            uniform_seed = bytes.fromhex(seed)
        except (TypeError, ValueError):
            raise PersistenceFormatError(f"{path}: switching key {i}'s uniform seed {seed!r:.40} is not hex.") from None
        switching[tuple(entry)] = SwitchingKey(method, source, b, a, uniform_seed, basis)
    secret_coeffs = secret_ntt = None
    if _field(header, "secret", bool, path):
        secret_coeffs = _array(arrays, "secret_coeffs", path)
        if secret_coeffs.dtype != np.int64 or secret_coeffs.shape != (params.N,) or np.any(np.abs(secret_coeffs) > 1):
            raise PersistenceFormatError(f"{path}: the secret key is not a ternary int64 vector of N = {params.N}.")
        # the NTT form is re-derived, not trusted: one that is not the coefficients' would decrypt to garbage
        secret_ntt = small_ntt(secret_coeffs, qp)
        secret_ntt.setflags(write=False)
        if not np.array_equal(_residues(arrays, "secret_ntt", (len(qp), params.N), qp, path), secret_ntt):
            raise PersistenceFormatError(f"{path}: secret_ntt is not the NTT form of secret_coeffs: the file is "
                                         f"corrupt.")
    rotations = tuple(_field(header, "rotations", list, path))
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in rotations):
        raise PersistenceFormatError(f"{path}: header field 'rotations' = {list(rotations)!r:.40} is not a list of "
                                     f"integer slot offsets.")
    return KeySet(params, _field(header, "key_id", int, path), secret_coeffs, secret_ntt, public, switching,
                  rotations, tuple(methods))


def _write_compiled(compiled, _options) -> tuple[dict, dict]:
    from fhec.backends.stream_files import encode_stream
    from fhec.ir.he_json import program_to_json

    header = {
        "program": program_to_json(compiled.program),
        "target": _target_literal(compiled.target),
        "keyswitch": compiled.keyswitch,
        "policy": compiled.data_schedule.policy,
        "prefetch_reserve": compiled.report.prefetch_reserve,
        "hoisting": compiled.hoisting,
        "report": compiled.report.to_json(indent=None),
        "units": len(compiled.streams.units),
    }
    if compiled.source is not None:  # a bootstrap or a domain series: the program as traced (`Compiled.source`)
        header["source"] = program_to_json(compiled.source)
    arrays = {f"stream{u}": np.frombuffer(encode_stream(compiled.streams, u), dtype=np.uint8)
              for u in range(len(compiled.streams.units))}
    return header, arrays


def _target_literal(target) -> dict:
    """The target as the literal its TOML would give (ops by name, not by number)."""
    from fhec.ir.limb_ops import LimbOp

    literal = target.model_dump(mode="json")
    for unit in literal["cluster"]["units"]:
        unit["ops"] = [LimbOp(op).name for op in unit["ops"]]
    return literal


def _back_end_options(header: dict, report, path) -> dict:
    """The back end's options from the header, each checked as `fhec.compile` checks its
    own (the passes would raise a bare ValueError)."""
    from fhec.passes.he_keyswitch import HOISTING
    from fhec.passes.offchip import POLICIES
    from fhec.pipeline import KEYSWITCH_POLICIES

    options = {}
    for name, choices in (("keyswitch", KEYSWITCH_POLICIES), ("policy", POLICIES), ("hoisting", HOISTING)):
        options[name] = _field(header, name, str, path)
        if options[name] not in choices:
            raise PersistenceFormatError(f"{path}: header field {name!r} = {options[name]!r:.40} is not one of "
                                         f"{', '.join(choices)}.")
    # a compile that gave stages their own reserves re-runs the same (deterministic) search
    options["prefetch_reserve"] = None
    if not report.stage_reserves:
        reserve = options["prefetch_reserve"] = _field(header, "prefetch_reserve", (int, float), path)
        if not 0.0 <= reserve < 1.0:  # also refuses NaN
            raise PersistenceFormatError(f"{path}: header field 'prefetch_reserve' = {reserve!r} is not a fraction "
                                         f"in [0, 1).")
    return options


def _check_report(report, program, lowered, scheduled, target, bounds, path) -> None:
    """Refuse a stored report that is not the one the re-derived streams give: the report is
    rebuilt as `fhec.compile` builds it, taking from the stored one only what the back end
    cannot re-derive (compile times and passes, the hint order of the front end)."""
    from collections import Counter

    from fhec.sim.timing import make_report

    derived = make_report(
        program_name=program.name, scheme=program.params.scheme, target=target, data=scheduled.data,
        streams=scheduled.streams, bounds=bounds,
        keyswitch=dict(Counter(lowered.methods.values())), prefetch_reserve=scheduled.prefetch_reserve,
        stage_reserves=scheduled.stage_reserves, compile_seconds=report.compile_seconds,
        compile_passes=report.compile_passes, he_program=lowered.he, hint_order=report.hint_order,
        hint_order_bounded=report.hint_order_bounded,
    ).model_dump()
    stored = report.model_dump()
    differ = [name for name in derived if derived[name] != stored[name]]
    if differ:
        name, more = differ[0], f" (and {len(differ) - 1} more fields)" if len(differ) > 1 else ""
        raise PersistenceFormatError(
            f"{path}: the stored report's {name} = {stored[name]!r:.40} is not what the re-derived streams give "
            f"({derived[name]!r:.40}){more}; the file is corrupt."
        )


def _read_compiled(header, arrays, params, path):
    from fhec.analysis.bounds import lower_bounds
    from fhec.backends.stream_files import encode_stream
    from fhec.backends.target import Target
    from fhec.compiler import Compiled
    from fhec.reference import has_bootstrap, has_domain_series
    from fhec.ir.he_json import program_from_json
    from fhec.pipeline import COMPILED, HE_DONE, LOWERED, PASS_NAMES, PIPELINE, options_for, run_passes
    from fhec.sim.timing import Report

    try:
        program = program_from_json(_field(header, "program", str, path))
        source = program_from_json(_field(header, "source", str, path)) if "source" in header else None
        target = Target.model_validate(_field(header, "target", dict, path))
        report = Report.model_validate_json(_field(header, "report", str, path))
    except PersistenceFormatError:
        raise  # names the file already
    except FhecError as e:
        raise PersistenceFormatError(f"{path}: {e}") from None
    except ValueError as e:  # pydantic's ValidationError
        raise PersistenceFormatError(f"{path}: the stored target or report is not valid: {str(e)[:200]}") from None
    if any(params_fingerprint(p.params) != params_fingerprint(params) for p in (program, source) if p is not None):
        raise PersistenceFormatError(f"{path}: the stored program's parameters differ from the file's header.")
    options = options_for(target, **_back_end_options(header, report, path))
    back_end = PIPELINE[PASS_NAMES.index(HE_DONE) + 1:]
    if source is not None and (not (has_bootstrap(source) or has_domain_series(source))
                               or set(source.outputs) != set(program.outputs)):
        raise PersistenceFormatError(f"{path}: the stored source program is not the traced program (with a "
                                     f"bootstrap or a series) this one was compiled from.")
    units = _field(header, "units", int, path)
    stored = [_array(arrays, f"stream{u}", path).tobytes() for u in range(units)]

    def derive(options):
        try:
            done = run_passes(back_end, program, options)
        except FhecError as e:  # a stored target the program does not fit, say
            raise PersistenceFormatError(f"{path}: re-deriving the streams failed: {e}") from None
        streams = done[COMPILED].streams
        return done, [encode_stream(streams, u) for u in range(len(streams.units))]

    done, rebuilt = derive(options)
    if stored != rebuilt and options.prefetch_reserve is not None:
        # a compile that searched the reserves may have kept a variant (key-switch pairing) at a
        # reserve it climbed to, where the plain program was never scheduled: re-run that search
        done, rebuilt = derive(dataclasses.replace(options, prefetch_reserve=None))
    lowered, scheduled = done[LOWERED], done[COMPILED]
    if stored != rebuilt:
        raise _disagreement(path, header, "re-deriving the program's streams does not reproduce the stored ones",
                            other_version="load it with that version, or compile the program again",
                            same_version="compile the program again")
    bounds = lower_bounds(lowered.limb, target)
    _check_report(report, program, lowered, scheduled, target, bounds, path)
    return Compiled(program, lowered, target, scheduled.data, scheduled.streams, bounds,
                    report, header["keyswitch"], header["hoisting"], source)


@dataclasses.dataclass(frozen=True)
class Kind:
    """One kind of object a file can hold: its writer (object, options → header fields,
    arrays) and reader (header, arrays, parameter set, path → object)."""

    name: str
    write: Callable[[Any, dict], tuple[dict, dict]]
    read: Callable[[dict, dict, Any, Any], Any]


def _kinds() -> dict[type, Kind]:
    """Python type → its kind (imported here: `fhec.persistence` loads with `fhec.save`)."""
    from fhec.compiler import Compiled
    from fhec.schemes.ciphertext import Ciphertext, Plaintext
    from fhec.schemes.keys import KeySet
    from fhec.schemes.params import BGVParams, CKKSParams

    return {
        CKKSParams: Kind("params", _write_params, _read_params),
        BGVParams: Kind("params", _write_params, _read_params),
        KeySet: Kind("keyset", _write_keyset, _read_keyset),
        Ciphertext: Kind("ciphertext", _write_ciphertext, _read_ciphertext),
        Plaintext: Kind("plaintext", _write_plaintext, _read_plaintext),
        Compiled: Kind("compiled", _write_compiled, _read_compiled),
    }


KINDS = ("params", "keyset", "ciphertext", "plaintext", "compiled")
"""The kinds of object a file can hold, in the header's ``kind`` field."""


# -- the public functions ----------------------------------------------------------------------


def save(obj, path, *, include_secret: bool = False) -> Path:
    """Write `obj` to `path` (see module doc for the format); returns the path.

    `obj`: a `CKKSParams`/`BGVParams`, a `KeySet` (public and evaluation keys; its
    secret only with ``include_secret=True``), a `Ciphertext`, a `Plaintext`, or a
    `Compiled` program. The file is written whole or not at all (a temporary file,
    then renamed).

    Raises `SecretKeyError` for a `KeySet` holding its secret without
    ``include_secret=True``; `InvalidArgumentError` for another type of object or a
    non-boolean `include_secret`; `PersistenceFormatError` when the file cannot be written.
    """
    from fhec.version import package_version

    if not isinstance(include_secret, bool):
        raise InvalidArgumentError(f"include_secret = {include_secret!r:.40} must be True or False.")
    path = _as_path(path, "save")
    kind = _kinds().get(type(obj))
    if kind is None:
        from fhec.compiler import IsaCompiled

        hint = "" if not isinstance(obj, IsaCompiled) else (
            f" A program compiled for an ISA machine ({obj.target.name}) is not one: write its machine code and "
            f"report with compiled.write(out_dir), or save the program's inputs and compile it again.")
        raise InvalidArgumentError(
            f"fhec.save cannot write a {type(obj).__name__}; it writes parameter sets, KeySets, Ciphertexts, "
            f"Plaintexts and Compiled programs (for stream targets such as f1).{hint}"
        )
    params = obj if kind.name == "params" else obj.program.params if kind.name == "compiled" else obj.params
    fields, arrays = kind.write(obj, {"include_secret": include_secret})
    header = {"format": FORMAT, "kind": kind.name, "fhec_version": package_version(),
              "params": _params_literal(params), "fingerprint": params_fingerprint(params), **fields}
    buffer = io.BytesIO()
    np.savez(buffer, **{HEADER: np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}, **arrays)
    secret = kind.name == "keyset" and header["secret"]
    return _write_atomically(path, buffer.getvalue(), SECRET_FILE_MODE if secret else None)


def _as_path(path, function: str) -> Path:
    """`path` (a str, bytes or os.PathLike naming a file) as a Path; InvalidArgumentError otherwise."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise InvalidArgumentError(f"fhec.{function}(..., path): path = {path!r:.40} ({type(path).__name__}) must "
                                   f"be a file name, a str or a pathlib.Path (open files are not taken).")
    return Path(path)


def _write_atomically(path: Path, data: bytes, mode: int | None) -> Path:
    """Write `data` to `path` through a fresh temporary file beside it, renamed into place.

    The temporary name is random and created exclusively (`tempfile.mkstemp`: O_EXCL, mode
    0600), so a stale or planted file or symlink of a predictable name can neither widen a
    secret file's mode nor redirect its bytes. A file without `mode` then gets what a plain
    `open` would have given it (0666 less the umask)."""
    import tempfile

    tmp = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        tmp = Path(name)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), _public_mode() if mode is None else mode)
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise PersistenceFormatError(f"cannot write {path}: {e.strerror or e}.") from None
    return path


def _public_mode() -> int:
    """0666 less the process's umask (read by setting it and restoring it at once)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def load(path, *, params=None):
    """Read an object `save` wrote.

    `params`: the parameter set the object must belong to (e.g. ``keys.params``); a
    file written under another one raises `MismatchedParametersError`. Without it the
    parameter set is rebuilt from the file (objects loaded separately then mix, since
    parameter sets compare by their primes).

    Raises `PersistenceFormatError` for a file that is missing, not fhec's, of an
    unknown format version, or corrupt (wrong shapes, residues not below their primes,
    a header field out of range or inconsistent with the arrays, streams or a report
    that do not re-derive); `MismatchedParametersError` as above;
    `InvalidArgumentError` for a `params` that is not a parameter set.
    """
    from fhec.schemes.params import BGVParams, CKKSParams

    if params is not None and not isinstance(params, (CKKSParams, BGVParams)):
        raise InvalidArgumentError(
            f"fhec.load(path, params=...): params must be the parameter set the object belongs to, a "
            f"CKKSParams or BGVParams (e.g. keys.params), or None to rebuild it from the file; got "
            f"{type(params).__name__}."
        )
    header, arrays = _read_archive(_as_path(path, "load"))
    kind = header.get("kind")
    readers = {k.name: k.read for k in _kinds().values()}
    if not isinstance(kind, str) or kind not in readers:  # (a list is no dict key)
        raise PersistenceFormatError(f"{path}: unknown kind {kind!r:.40}; fhec files hold one of {', '.join(KINDS)}.")
    resolved = _params_from_header(header, path, params)
    return readers[kind](header, arrays, resolved, path)


def _read_archive(path: Path) -> tuple[dict, dict]:
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise PersistenceFormatError(f"{path}: a single numpy array, not an fhec file (an .npz archive).")
        with archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise PersistenceFormatError(f"no such file: {path}") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as e:
        # NotImplementedError, RuntimeError: zipfile's for a member compressed by an unknown
        # method or encrypted (a flipped bit in its header can say either)
        # numpy's reason here suggests loading pickles (allow_pickle=True), which fhec never does
        reason = str(e) if "pickle" not in str(e) else (
            "a member holds pickled Python objects, which fhec never loads" if zipfile.is_zipfile(path)
            else "it is not an .npz archive")
        raise PersistenceFormatError(f"{path}: not an fhec file (an .npz archive written by fhec.save): "
                                     f"{reason}.") from None
    raw = arrays.pop(HEADER, None)
    try:
        header = json.loads(raw.tobytes().decode()) if isinstance(raw, np.ndarray) and raw.dtype == np.uint8 else None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # RecursionError: nested past Python's limit
        header = None
    if not isinstance(header, dict):
        raise PersistenceFormatError(f"{path}: no readable header; not a file written by fhec.save.")
    if header.get("format") != FORMAT:
        raise _disagreement(path, header, f"format {header.get('format')!r:.40}, this fhec reads {FORMAT!r}",
                            other_version="load it with the fhec version that wrote it",
                            same_version="save the object again")
    return header, arrays
