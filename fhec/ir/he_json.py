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

from fhec.errors import InternalError
from fhec.ir.he import Const, HeNode, HeOp, HeOptions, HeProgram, HeType, Key, KeyKind, ValueKind
from fhec.schemes.params import BGVParams, CKKSParams

FORMAT = "fhec.he/1"
_PARAM_CLASSES = {"ckks": CKKSParams, "bgv": BGVParams}


def params_to_dict(params) -> dict[str, Any]:
    d = {"scheme": params.scheme}
    d.update({f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init})
    return d


def params_from_dict(d: dict[str, Any]):
    d = dict(d)
    return _PARAM_CLASSES[d.pop("scheme")](**d)


def _encode_value(v: Any) -> Any:
    if isinstance(v, Const):
        return {"const": {"dtype": v.array.dtype.str, "values": v.array.tolist()}}
    if isinstance(v, tuple):
        return [_encode_value(x) for x in v]
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v


def _decode_value(v: Any) -> Any:
    if isinstance(v, dict):
        c = v["const"]
        return Const(np.array(c["values"], dtype=np.dtype(c["dtype"])))
    if isinstance(v, list):
        return tuple(_decode_value(x) for x in v)
    return v


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


def _type_from_dict(d: dict[str, Any]) -> HeType:
    return HeType(
        ValueKind(d["kind"]),
        d["slots"],
        d["level"],
        d["scale"],
        d["parts"],
        d["noise"],
        tuple(Key(KeyKind(kind), step) for kind, step in d["keys"]),
        d.get("bound"),
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


def program_from_json(text: str) -> HeProgram:
    """Parse and verify. Raises `InternalError` for a document that is not a valid program."""
    from fhec.ir.he_verify import verify_he

    try:
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise InternalError(f"not an fhec HE program (format {doc.get('format')!r}, expected {FORMAT!r})")
        o = doc["options"]
        options = HeOptions(
            o["rescale"],
            None if o["rotation_keys"] is None else tuple(o["rotation_keys"]),
            o["max_rotation_keys"],
        )
        nodes = tuple(
            HeNode(
                n["id"],
                HeOp(n["op"]),
                tuple(n["args"]),
                tuple(sorted((k, _decode_value(v)) for k, v in n["attrs"].items())),
                _type_from_dict(n["type"]),
                n["loc"],
            )
            for n in doc["nodes"]
        )
        program = HeProgram(doc["name"], params_from_dict(doc["params"]), nodes, options, doc["loc"])
    except (KeyError, ValueError, TypeError) as e:
        raise InternalError(f"malformed HE program JSON: {e!r}") from e
    verify_he(program)
    return program
