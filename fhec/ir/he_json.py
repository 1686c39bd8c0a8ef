"""JSON form of an HE program; `program_from_json(program_to_json(p)) == p`.

Layout (``"format": "fhec.he/1"``)::

    {"format", "name", "loc",
     "params":  {"scheme": "ckks"|"bgv", <constructor arguments of CKKSParams/BGVParams>},
     "options": {"rescale", "rotation_keys", "max_rotation_keys"},
     "nodes":   [{"id", "op", "args", "attrs", "type", "loc"}, ...]}

Attribute values: numbers, strings, null, lists (tuples in memory), and
``{"const": {"dtype", "values"}}`` for `Const` arrays. Floats are written with
``repr`` precision, so they read back bit-identical. Types are stored and checked
against re-inferred types on reading (`verify_he`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from fhec.errors import InternalError, ParameterError, ProgramFormatError
from fhec.ir.he import Const, HeNode, HeOp, HeOptions, HeProgram, HeType, Key, KeyKind, ValueKind
from fhec.schemes.params import BGVParams, CKKSParams

FORMAT = "fhec.he/1"
_PARAM_CLASSES = {"ckks": CKKSParams, "bgv": BGVParams}


def params_to_dict(params) -> dict[str, Any]:
    d = {"scheme": params.scheme}
    d.update({f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init})
    if d.get("bootstrap") is not None:
        d["bootstrap"] = d["bootstrap"].model_dump()
    return d


def params_from_dict(d: dict[str, Any]):
    """The parameter set of a ``"params"`` object. Raises `ProgramFormatError` for an
    unknown scheme or field, and the parameter errors for bad values."""
    _expect(d, dict, "params")
    d = dict(d)
    scheme = d.pop("scheme", None)
    if not isinstance(scheme, str) or scheme not in _PARAM_CLASSES:
        raise ProgramFormatError(f"params.scheme = {scheme!r}: expected 'ckks' or 'bgv'.")
    cls = _PARAM_CLASSES[scheme]
    fields = [f for f in dataclasses.fields(cls) if f.init]
    known = {f.name for f in fields}
    unknown = sorted(set(d) - known, key=repr)
    if unknown:
        raise ProgramFormatError(f"params has unknown field {unknown[0]!r}; {cls.__name__} takes {sorted(known)}.")
    required = [f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [name for name in required if name not in d]
    if missing:
        raise ProgramFormatError(f"params lacks the field {missing[0]!r} ({cls.__name__} needs {required}).")
    if isinstance(d.get("bootstrap"), dict):
        from fhec.schemes.bootstrap_config import BootstrapConfig

        try:
            d = {**d, "bootstrap": BootstrapConfig(**d["bootstrap"])}
        except (ParameterError, TypeError) as exc:
            raise ProgramFormatError(f"params.bootstrap: {exc}") from None
    return cls(**d)


def _encode_value(v: Any) -> Any:
    if isinstance(v, Const):
        if v.array.dtype == np.complex128:  # JSON has no complex numbers: [real, imag] pairs
            values = [[float(z.real), float(z.imag)] for z in v.array]
            return {"const": {"dtype": v.array.dtype.str, "values": values}}
        return {"const": {"dtype": v.array.dtype.str, "values": v.array.tolist()}}
    if isinstance(v, tuple):
        return [_encode_value(x) for x in v]
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v


# Const arrays hold slot vectors: float64 (CKKS) or int64 (BGV); complex128 only in the
# bootstrap expansion's DFT diagonals.
_CONST_DTYPES = frozenset({"<f8", "<i8", "<c16"})


def _decode_value(v: Any, where: str) -> Any:
    if isinstance(v, dict):
        c = v.get("const")
        if set(v) != {"const"} or not isinstance(c, dict) or c.get("dtype") not in _CONST_DTYPES:
            raise ProgramFormatError(f"{where}: expected {{'const': {{'dtype': '<f8' or '<i8', 'values': [...]}}}}.")
        values = c.get("values")
        if c["dtype"] == "<c16" and isinstance(values, list) and all(
            isinstance(x, list) and len(x) == 2 and all(_is_number(y) for y in x) for x in values
        ):
            return Const(np.array([complex(a, b) for a, b in values], dtype=np.complex128))
        if not isinstance(values, list) or not all(_is_number(x) for x in values):
            raise ProgramFormatError(f"{where}: const values must be a list of numbers.")
        try:
            return Const(np.array(values, dtype=np.dtype(c["dtype"])))
        except (OverflowError, ValueError):
            raise ProgramFormatError(f"{where}: const values do not fit dtype {c['dtype']}.") from None
    if isinstance(v, list):
        return tuple(_decode_value(x, where) for x in v)
    if v is None or isinstance(v, (str, bool)) or _is_number(v):
        return v
    raise ProgramFormatError(f"{where}: unexpected attribute value {v!r}.")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_JSON_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer"}


def _expect(value: Any, kind: type | tuple, where: str, *, optional: bool = False) -> Any:
    """`value` if it has JSON type `kind` (None too when `optional`), else `ProgramFormatError`."""
    if value is None and optional:
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (int in kinds and isinstance(value, bool)):
        names = " or ".join(_JSON_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise ProgramFormatError(f"{where} must be {names}{' or null' if optional else ''}, got {value!r:.60}.")
    return value


def _field(obj: dict, key: str, kind: type | tuple, where: str, *, optional: bool = False) -> Any:
    if key not in obj:
        raise ProgramFormatError(f"{where} has no {key!r} field.")
    return _expect(obj[key], kind, f"{where}.{key}", optional=optional)


def _type_to_dict(t: HeType) -> dict[str, Any]:
    return {
        "kind": t.kind.value,
        "slots": t.slots,
        "level": t.level,
        "scale": t.scale,
        "parts": t.parts,
        "noise": t.noise,
        "keys": [[k.kind.value, k.step] for k in t.keys],
        "bound": t.bound,
    }


def _type_from_dict(d: Any, where: str) -> HeType:
    _expect(d, dict, where)
    kind = _field(d, "kind", str, where)
    if kind not in {k.value for k in ValueKind}:
        raise ProgramFormatError(f"{where}.kind = {kind!r} is not a value kind.")
    keys = []
    for i, pair in enumerate(_field(d, "keys", list, where)):
        ok = isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
        if not (ok and pair[0] in {k.value for k in KeyKind}):
            raise ProgramFormatError(f"{where}.keys[{i}] must be [kind, step], got {pair!r:.60}.")
        keys.append(Key(KeyKind(pair[0]), _expect(pair[1], int, f"{where}.keys[{i}][1]")))
    return HeType(
        ValueKind(kind),
        _field(d, "slots", int, where),
        _field(d, "level", int, where, optional=True),
        _field(d, "scale", (int, float), where, optional=True),
        _field(d, "parts", int, where),
        _field(d, "noise", (int, float), where, optional=True),
        tuple(keys),
        _optional_bound(d, where),
    )


def _optional_bound(d: dict, where: str) -> float | None:
    """The value bound of a type (absent in programs written before value ranges)."""
    bound = d.get("bound")
    if bound is None:
        return None
    return _expect(bound, (int, float), f"{where}.bound")


def _node_from_dict(n: Any, where: str) -> HeNode:
    _expect(n, dict, where)
    op = _field(n, "op", str, where)
    if op not in {o.value for o in HeOp}:
        raise ProgramFormatError(f"{where}.op = {op!r} is not an HE op.")
    args = tuple(_expect(a, int, f"{where}.args[{i}]") for i, a in enumerate(_field(n, "args", list, where)))
    attrs = _field(n, "attrs", dict, where)
    return HeNode(
        _field(n, "id", int, where),
        HeOp(op),
        args,
        tuple(sorted((k, _decode_value(v, f"{where}.attrs.{k}")) for k, v in attrs.items())),
        _type_from_dict(_field(n, "type", dict, where), f"{where}.type"),
        _field(n, "loc", str, where, optional=True),
    )


def program_to_json(program: HeProgram, indent: int | None = None) -> str:
    o = program.options
    doc = {
        "format": FORMAT,
        "name": program.name,
        "loc": program.loc,
        "params": params_to_dict(program.params),
        "options": {
            "rescale": o.rescale,
            "rotation_keys": None if o.rotation_keys is None else list(o.rotation_keys),
            "max_rotation_keys": o.max_rotation_keys,
        },
        "nodes": [
            {
                "id": n.id,
                "op": n.op.value,
                "args": list(n.args),
                "attrs": {k: _encode_value(v) for k, v in n.attrs},
                "type": _type_to_dict(n.type),
                "loc": n.loc,
            }
            for n in program.nodes
        ],
    }
    return json.dumps(doc, indent=indent, allow_nan=False)


def program_from_json(text: str | bytes) -> HeProgram:
    """Parse and verify a program written by `program_to_json`.

    Raises `ProgramFormatError` naming the field for text that is not JSON, a document
    of another format, a missing or mistyped field, or a program whose stored types and
    structure do not verify; the parameter errors for bad ``params`` values.
    """
    from fhec.ir.he_verify import verify_he

    if not isinstance(text, (str, bytes, bytearray)):
        raise ProgramFormatError(f"Program.from_json takes the JSON text (a str), not {type(text).__name__}.")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ProgramFormatError(f"not JSON text: {e}; pass the text written by Program.to_json().") from None
    _expect(doc, dict, "the document")
    if doc.get("format") != FORMAT:
        raise ProgramFormatError(f"not an fhec HE program (format {doc.get('format')!r:.60}, expected {FORMAT!r}).")
    o = _field(doc, "options", dict, "the document")
    rotation_keys = _field(o, "rotation_keys", list, "options", optional=True)
    options = HeOptions(
        _field(o, "rescale", str, "options"),
        None if rotation_keys is None else tuple(
            _expect(k, int, f"options.rotation_keys[{i}]") for i, k in enumerate(rotation_keys)
        ),
        _field(o, "max_rotation_keys", int, "options", optional=True),
    )
    nodes = tuple(_node_from_dict(n, f"nodes[{i}]") for i, n in enumerate(_field(doc, "nodes", list, "the document")))
    program = HeProgram(
        _field(doc, "name", str, "the document"),
        params_from_dict(_field(doc, "params", dict, "the document")),
        nodes,
        options,
        _field(doc, "loc", str, "the document", optional=True),
    )
    try:
        verify_he(program)
    except InternalError as e:
        # A document that parses but does not verify was edited or corrupted: its
        # types or structure disagree with what the program computes.
        raise ProgramFormatError(f"the JSON program is inconsistent: {e}") from None
    _check_as_traced(program)
    return program


def _check_as_traced(program: HeProgram) -> None:
    """Replay `program` through a builder, which checks what tracing checks (values that
    fit the modulus, allowed rotation keys, key-switch precision) and raises the same
    `FhecError` at the node's line. Passes copy a node's type without re-checking it
    (`HeBuilder.copy`), so a document must be held to it on reading."""
    from fhec.ir.he_build import HeBuilder

    b = HeBuilder(program.params, program.options, program.name, program.loc)
    new: dict[int, int] = {}
    for n in program.nodes:
        try:
            new[n.id] = b.emit(n.op, tuple(new[a] for a in n.args), n.attrs, n.loc)
        except (KeyError, TypeError, ValueError, ArithmeticError) as e:
            raise ProgramFormatError(
                f"the JSON program is inconsistent at node %{n.id}: {type(e).__name__}: {e}"
            ) from None
