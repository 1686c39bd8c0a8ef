"""The HE IR verifier, run after tracing and after every pass.

`verify_he(program)` checks the structural invariants and re-infers every node's type:

* node ids are unique and every argument names an earlier, non-OUTPUT node;
* each op has its arity; plaintext inputs appear only as the plain operand of
  ADD_PLAIN / SUB_PLAIN / MUL_PLAIN; input and output names are unique;
* the options are well formed;
* the type stored in each node equals the type inferred from its arguments (this also
  enforces the primitive contract: ADD operands at one level with matching scale, MUL
  and rotations on 2-part ciphertexts, scheme-specific ops in their scheme, ...), and
  no rotation needs a key outside ``options.rotation_keys``.

Any violation is a bug of fhec, not of the user program: it raises `InternalError`
naming the node.
"""

from __future__ import annotations

import os
import sys

from fhec.errors import FhecError, InternalError
from fhec.ir.he import HeOp, HeProgram, KeyKind, RESCALE_POLICIES
from fhec.ir.he_build import infer_type
from fhec.ir.he_types import arity, rotation_key

_PLAIN_USERS = frozenset({HeOp.ADD_PLAIN, HeOp.SUB_PLAIN, HeOp.MUL_PLAIN})


def verify_by_default() -> bool:
    """Whether IR verification runs (after every pass, `fhec.pipeline`; after every HE
    rebuild; on every `fhec.Program.ir` snapshot): on under pytest and with
    ``FHEC_VERIFY=1``, off with ``FHEC_VERIFY=0`` and otherwise (production)."""
    env = os.environ.get("FHEC_VERIFY")
    if env is not None:
        return env not in ("", "0", "false", "no")
    return "pytest" in sys.modules


def _fail(program: HeProgram, message: str) -> None:
    raise InternalError(f"invalid HE program {program.name!r}: {message}")


def verify_he(program: HeProgram) -> HeProgram:
    """Check `program`; return it unchanged. Raises `InternalError` on any violation."""
    o = program.options
    if o.rescale not in RESCALE_POLICIES:
        _fail(program, f"rescale policy {o.rescale!r}")
    if o.max_rotation_keys is not None and (not isinstance(o.max_rotation_keys, int) or o.max_rotation_keys < 1):
        _fail(program, f"max_rotation_keys={o.max_rotation_keys!r}")
    allowed = None if o.rotation_keys is None else {rotation_key(program.params, k) for k in o.rotation_keys}
    types = {}
    ops = {}
    names: dict[HeOp, set[str]] = {HeOp.INPUT: set(), HeOp.PLAIN_INPUT: set(), HeOp.OUTPUT: set()}
    for n in program.nodes:
        where = f"node %{n.id} ({n.op.value})"
        if n.id in types:
            _fail(program, f"{where}: duplicate id")
        if len(n.args) != arity(n.op):
            _fail(program, f"{where}: {len(n.args)} arguments, expected {arity(n.op)}")
        for i, a in enumerate(n.args):
            if a not in types:
                _fail(program, f"{where}: argument %{a} is not defined before it")
            if ops[a] is HeOp.OUTPUT:
                _fail(program, f"{where}: uses output node %{a} as a value")
            is_plain_slot = n.op in _PLAIN_USERS and i == 1
            if (ops[a] is HeOp.PLAIN_INPUT) != is_plain_slot:
                _fail(program, f"{where}: argument %{a} {'must' if is_plain_slot else 'must not'} be a plain input")
        if n.op in names:
            name = n.attr("name", None)
            if not isinstance(name, str) or name in names[n.op]:
                _fail(program, f"{where}: missing or duplicate name {name!r}")
            names[n.op].add(name)
        try:
            inferred = infer_type(program.params, n.op, n.attr_dict, tuple(types[a] for a in n.args), n.loc)
        except (FhecError, InternalError, KeyError, TypeError, ValueError, ArithmeticError) as e:
            _fail(program, f"{where}: {type(e).__name__}: {e}")
        if inferred != n.type:
            _fail(program, f"{where}: stored type {n.type} differs from inferred {inferred}")
        if allowed is not None:
            bad = [k for k in n.type.keys if k.kind is KeyKind.ROTATION and k not in allowed]
            if bad:
                _fail(program, f"{where}: needs rotation key {bad[0]} outside rotation_keys")
        types[n.id] = n.type
        ops[n.id] = n.op
    if names[HeOp.INPUT] & names[HeOp.PLAIN_INPUT]:
        _fail(program, f"names used for both an input and a plain input: {sorted(names[HeOp.INPUT] & names[HeOp.PLAIN_INPUT])}")
    return program


def used_values(program: HeProgram) -> set[int]:
    """Ids of the values some output depends on (outputs included)."""
    live: set[int] = set()
    for n in reversed(program.nodes):
        if n.op is HeOp.OUTPUT or n.id in live:
            live.add(n.id)
            live.update(n.args)
    return live


def check_complete(program: HeProgram) -> HeProgram:
    """User-level checks before running a program: it has at least one output
    (`UnsetOutputError`, naming the line that created the program), and every input is
    used by some output (an `UnusedInputWarning` attributed to the input's line)."""
    from fhec.errors import UnsetOutputError, UnusedInputWarning, warn_at

    if not program.outputs:
        raise UnsetOutputError(
            f"program {program.name!r} has no outputs; set one with p.output(name, value) "
            f"(or return the result from the @fhec.program function).",
            program.loc,
        )
    live = used_values(program)
    for n in program.nodes:
        if n.op in (HeOp.INPUT, HeOp.PLAIN_INPUT) and n.id not in live:
            warn_at(f"input {n.attr('name')!r} of program {program.name!r} is never used by any output; "
                    f"remove it or use it.", UnusedInputWarning, n.loc)
    return program
