"""Readable SSA text of an HE program (``print(program)``) and its notebook HTML.

One line per node::

    %7 = rescale %6                      : ct L15 s=2^30.000 |v|<=4 prec=21.4b  # matvec.py:12

CKKS scales print as log2 with three decimals, BGV plaintext factors as integers;
``|v|<=`` is the CKKS value bound (`fhec.schemes.ranges`);
``prec`` is the estimated CKKS precision (``prec<`` where the estimate saturated,
`fhec.ir.he_types.noise_saturated`: the precision lies below it by an unknown amount) and
``budget`` the estimated BGV noise budget (`fhec.ir.he_types.estimated_bits`); ``needs`` lists the key-switching keys of the op.
Locations print as ``basename:line`` so that the text does not depend on where the
program file lives.
"""

from __future__ import annotations

import html
import math
import os
from typing import Any

from fhec.ir.he import ValueKind, Const, HeNode, HeOp, HeProgram, HeType, format_values
from fhec.ir.he_types import estimated_bits, noise_saturated
from fhec.schemes.ranges import format_bound

_COLUMN = 44
_MAX_KEYS = 6
_MAX_DIAGONALS = 8


def _num(v: Any) -> str:
    if isinstance(v, Const):
        return format_values(v.array)
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _scale(v) -> str:
    return "None" if v is None else f"2^{math.log2(v):.3f}"


def _attrs(node: HeNode) -> str:
    a = node.attr_dict
    op = node.op
    if op in (HeOp.INPUT, HeOp.PLAIN_INPUT, HeOp.OUTPUT):
        extra = f" level={a['level']}" if op is HeOp.INPUT else ""
        return f'"{a["name"]}"{extra}'
    parts = []
    # the payload first, encoding details last; absent (None) attributes are not shown
    for k, v in sorted(node.attrs, key=lambda kv: kv[0] in ("plain_scale", "keyswitch")):
        if v is None:
            continue
        if k in ("plain_scale", "scale"):
            parts.append(f"{k}={_scale(v) if isinstance(v, float) else v}")
        elif k == "diagonals":
            shown = [f"{'swap+' if swap else ''}{step}" for step, swap, _ in v[:_MAX_DIAGONALS]]
            more = f", … {len(v)} diagonals" if len(v) > _MAX_DIAGONALS else ""
            parts.append(f"diagonals=[{', '.join(shown)}{more}]")
        elif k == "coeffs" and len(v) > _MAX_DIAGONALS:  # long and usually sparse: nonzero terms only
            terms = [f"{i}: {_num(c)}" for i, c in enumerate(v) if c != 0]
            parts.append(f"coeffs={{{', '.join(terms)}}}")
        elif k == "coeffs":
            parts.append(f"coeffs=({', '.join(_num(c) for c in v)})")
        else:
            parts.append(f"{k}={_num(v)}")
    return " ".join(parts)


def format_type(program: HeProgram, t: HeType) -> str:
    """``ct L3 s=2^30.000 |v|<=1 prec=21.4b`` / ``ct L2 f=1 budget=40.2b`` / ``pt``."""
    if t.kind is ValueKind.PLAIN:
        return "pt"
    if not t.is_cipher:  # key-switch pieces: digits, or a (u0, u1) pair
        keys = f" needs {','.join(str(k) for k in t.keys)}" if t.keys else ""
        return f"{t.kind.value} L{t.level}{keys}"
    kind = "ct" if t.parts == 2 else f"ct{t.parts}"
    bits = estimated_bits(program.params, t)
    if program.params.scheme == "ckks":
        bound = f" |v|<={format_bound(t.bound)}" if t.bound is not None else ""
        # a saturated estimate bounds nothing: the precision is below it, by an unknown amount
        relation = "<" if noise_saturated(program.params, t) else "="
        text = f"{kind} L{t.level} s={_scale(t.scale)}{bound} prec{relation}{bits:.1f}b"
    else:
        text = f"{kind} L{t.level} f={t.scale} budget={bits:.1f}b"
    if t.keys:
        names = [str(k) for k in t.keys]
        if len(names) > _MAX_KEYS:
            names = names[:_MAX_KEYS] + [f"… {len(t.keys)} keys"]
        text += f" needs {','.join(names)}"
    return text


def _loc(loc: str | None) -> str:
    if not loc:
        return ""
    path, _, line = loc.rpartition(":")
    return f"  # {os.path.basename(path)}:{line}"


def format_node(program: HeProgram, node: HeNode, locations: bool = True) -> str:
    """One line of the listing."""
    if node.op is HeOp.OUTPUT:
        head = f"  output {_attrs(node)} = %{node.args[0]}"
        return head + (_loc(node.loc) if locations else "")
    args = ", ".join(f"%{a}" for a in node.args)
    attrs = _attrs(node)
    head = f"  %{node.id} = {node.op.value}" + (f" {args}" if args else "") + (f" {attrs}" if attrs else "")
    return f"{head.ljust(_COLUMN)} : {format_type(program, node.type)}" + (_loc(node.loc) if locations else "")


def format_header(program: HeProgram) -> str:
    p = program.params
    extra = f" t={p.plain_modulus}" if p.scheme == "bgv" else f" scale_bits={p.scale_bits}"
    opts = program.options
    text = (
        f'program "{program.name}" ({p.scheme} N={p.N} slots={p.slots} levels={p.levels}{extra} '
        f"word_bits={p.word_bits} rescale={opts.rescale}"
    )
    if opts.rotation_keys is not None:
        text += f" rotation_keys={list(opts.rotation_keys)}"
    if opts.max_rotation_keys is not None:
        text += f" max_rotation_keys={opts.max_rotation_keys}"
    return text + ")"


def format_program(program: HeProgram, locations: bool = True) -> str:
    """The whole listing: a header line, then one line per node."""
    lines = [format_header(program)]
    lines.extend(format_node(program, n, locations) for n in program.nodes)
    return "\n".join(lines)


def format_html(program: HeProgram) -> str:
    """The listing for notebooks (`_repr_html_`)."""
    return f"<pre>{html.escape(format_program(program))}</pre>"
