"""Running an HE program with the eager evaluator: keygen -> encrypt -> evaluate -> decrypt.

`evaluate(program, inputs, seed)` is the composition of reusable steps, which the
compiled execution path (`fhec.run`) reuses so that both see identical keys and
ciphertexts:

* `prepare(program)` — `fhec.pipeline` up to ``plan_rotations``: primitives only,
  rotation keys planned;
* `make_keys(program, seed)` — `fhec.keygen` with exactly the keys the program needs;
* `encrypt_inputs(program, keys, inputs, seed)` — one stream per input, fresh per call;
* `run_he(program, keys, ciphertexts, plains)` — one `Evaluator` call per node;
* `decrypt_outputs(keys, ciphertexts)`.

Import the helpers from this module (``from fhec.evaluate import run_he``):
``fhec.evaluate`` itself is the function.

Node -> Evaluator call (``ev = Evaluator(keys)``; ``a``, ``b`` the argument ciphertexts,
``w`` a plain input's slot vector; `plaintext_operand` encodes explicitly):

=================  ====================================================================
INPUT              the ciphertext from `encrypt_inputs` (``encrypt(keys, x, level=level)``)
PLAIN_INPUT        the slot vector itself (encoded where used)
ADD / SUB          ``ev.add(a, b)`` / ``ev.sub(a, b)``
NEG                ``ev.negate(a)``
ADD/SUB_PLAIN      ``ev.add(a, encode(w, a.level, a.scale))`` / ``ev.sub(...)``
ADD/SUB_CONST      ``ev.add(a, encode(value, a.level, a.scale))`` / ``ev.sub(...)``
MUL                ``ev.multiply(a, b, relinearize=False)``
RELINEARIZE        ``ev.relinearize(a)``
MUL_PLAIN          ``ev.multiply(a, encode(w, a.level, plain_scale))`` (BGV factor 1)
MUL_CONST          int: ``ev.multiply(a, value)``; with a BGV ``factor``: ``ev.multiply_integer(a, k, scale=a.scale ·
                   factor mod t)``, k = value·factor centered mod t; else ``ev.multiply(a, encode(value, a.level,
                   plain_scale))``
MUL_FACTOR (BGV)   ``ev.multiply_integer(a, c, scale=a.scale * c mod t)``
RESCALE            ``ev.rescale(a)`` (its ``noise`` attribute, if any, replaces the estimate)
MOD_SWITCH         ``ev.mod_switch(a)``
LEVEL_DOWN         ``ev.level_down(a, level, scale)``
MOD_RAISE          ``ev.mod_raise(a, level, scale)``
SWITCH_SECRET      ``ev.key_switch(a, "to-sparse" | "to-dense", keyswitch="hybrid")``
MUL_MONOMIAL       ``ev.multiply_monomial(a, power)``
ROTATE             ``ev.rotate(a, step)``
CONJUGATE          ``ev.conjugate(a)``
SWAP_ROWS          ``ev.swap_rows(a)``
OUTPUT             ``a``
AUTOMORPHISM       ``ev.automorphism(a, galois)``
MOD_UP             ``keyswitch.decompose(params, a.data[part], a.level, method)``
DIGITS_AUTOMORPHISM  ``automorphism_ntt(digit, galois)`` of every digit (hoisted rotation)
KEY_MULT           ``keyswitch.key_mult(params, digits, keys.key(source, method, level), level)``
MOD_DOWN           ``keyswitch.mod_down`` of both polynomials
KS_ADD             ``(a0 + u0, a1 + u1)`` for a 3-part a, else ``(a0 + u0, u1)``
ROTATE_EXT         ``ev.rotate_extended(a, step, keyswitch="hybrid")`` (over Q·P)
KS_ADD_EXT         ``(P·a0 + u0, u1)`` over Q·P (``(P·a0 + u0, P·a1 + u1)`` for a 3-part a)
MUL_CONST_EXT      ``ev.multiply_extended(a, encode(value, a.level, plain_scale, extended=True))``
ADD_EXT            ``ev.add_extended(a, b)``
MOD_DOWN_EXT       ``ev.mod_down(a)``
RELINEARIZE_EXT    ``ev.relinearize_extended(a)`` (hybrid, over Q·P)
ADD_EXT_Q          ``ev.add_lifted(a, b, subtract)``: a ± P·b over Q·P
RESCALE_EXT        ``ev.rescale_extended(a)`` (divided by P·q_l; its ``noise`` attribute, if any, replaces the estimate)
=================  ====================================================================

Any node's ``noise`` attribute (a recipe's error estimate, `fhec.ir.he_types.with_noise_hint`)
replaces the estimate of the value it computes, as its type rule does. A MUL_CONST /
MUL_CONST_EXT passes its constant's largest magnitude to the evaluator's plaintext
product, which scales the error estimate by it (`fhec.schemes.noise.plain_multiply_noise`).

Key-switching nodes use the method given to `run_he` (``methods=``: one for all or per
node id), else their ``keyswitch`` attribute, else the evaluator's default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Collection, Mapping

import numpy as np

from fhec.errors import FhecError, InternalError, NoiseBudgetExhaustedError
from fhec.ir.he import KEY_SWITCHING_OPS, Const, HeNode, HeOp, HeProgram, HeType
from fhec.ir.he_types import const_bound, declared_bound, estimated_bits, is_int_scalar, noise_saturated
from fhec.passes.he_rotations import key_requirements
from fhec.passes.he_rewrite import as_he
from fhec.pipeline import PREPARED, run_prefix
from fhec.reference import check_inputs, normalize_inputs, reference
from fhec.schemes.ciphertext import Ciphertext, ExtendedCiphertext, Plaintext
from fhec.schemes.encryption import decrypt, encode, encode_scalar, encrypt, encryption_sampler
from fhec.schemes.evaluator import Evaluator
from fhec.ring.automorphism import automorphism_ntt
from fhec.ring.modarith import add_mod
from fhec.schemes import keyswitch as ks
from fhec.schemes import rules
from fhec.schemes.keys import KeySet, keygen
from fhec.schemes.params import Params
from fhec.schemes.sampling import numpy_seed
from fhec.schemes.ranges import check_input_bound

# -- steps -----------------------------------------------------------------------------------


def prepare(program) -> HeProgram:
    """The program as the eager evaluator executes it: `fhec.pipeline` up to
    ``plan_rotations`` (traced, checked, expanded, cleaned, rotation keys planned)."""
    return run_prefix(PREPARED, program).last


def keygen_method(program: HeProgram, default: str | None = None) -> str:
    """The key-switching method(s) to generate keys for: "bv", "hybrid" or "both", from
    the ``keyswitch`` attributes `fhec.pipeline`'s ``choose_keyswitch`` recorded; a
    program without key switches gets `default` (the parameters' method if None;
    "hybrid" for "auto"), and so does a program some of whose key switches carry no
    attribute (run with the evaluator's default: a ``y * y`` after a
    ``BootstrapConfig(keyswitch="bv")`` bootstrap is relinearized with the parameters'
    method, so its keys are needed too)."""
    from fhec.passes.keyswitch_choice import FIXED_METHODS, KEY_SWITCH_OPS, annotated_methods

    default = default or program.params.keyswitch
    default = "hybrid" if default == "auto" else default
    annotated = annotated_methods(program)
    used = set(annotated.values())
    used.update(FIXED_METHODS.get(n.op, default) for n in program.nodes
                if n.op in KEY_SWITCH_OPS and n.id not in annotated)
    if len(used) == 2:
        return "both"
    return used.pop() if used else default


def make_keys(program, seed=None, keyswitch: str | None = None) -> KeySet:
    """`fhec.keygen` with exactly the keys `program` needs (`key_requirements`);
    `keyswitch`: "bv", "hybrid" or "both" (default: the parameters' method).
    `seed` as in `fhec.keygen` (None: OS entropy)."""
    program = as_he(program)
    req = key_requirements(program)
    method = keyswitch or program.params.keyswitch  # only the keys the run will use
    if method == "bv" and any(n.op in (HeOp.ROTATE_EXT, HeOp.RELINEARIZE_EXT) for n in program.nodes):
        method = "both"  # double-hoisted rotations and merged relinearizations are hybrid whatever the default
    return keygen(program.params, seed=seed, keyswitch=method, **req.keygen_kwargs())


def encrypt_inputs(program, keys: KeySet, inputs: Mapping[str, Any], seed=None) -> dict[str, Ciphertext]:
    """Encrypt every encrypted input at its declared level.

    The call takes one stream from `encryption_sampler(keys, seed)` (a new one per call
    for an explicit seed, OS entropy for None) and each input its child ``input/<name>``:
    the same fresh keys and seed give the same ciphertexts whatever the input order."""
    program = as_he(program)
    values = normalize_inputs(program, inputs)
    session = encryption_sampler(keys, seed)
    for name, node in program.inputs.items():
        check_input_bound(program.params, name, values[name], declared_bound(node.attr_dict), node.loc)
    return {
        name: encrypt(keys, values[name], level=node.attr("level"), seed=session.child(f"input/{name}"))
        for name, node in program.inputs.items()
    }


def plain_inputs(program, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The plain inputs as full slot vectors."""
    program = as_he(program)
    values = normalize_inputs(program, inputs)
    for name, node in program.plain_inputs.items():
        check_input_bound(program.params, name, values[name], declared_bound(node.attr_dict), node.loc)
    return {name: values[name] for name in program.plain_inputs}


def _slot_vector(params: Params, value) -> np.ndarray:
    return value.array if isinstance(value, Const) else np.full(params.slots, value)


def plaintext_operand(params: Params, node: HeNode, level: int, scale, values) -> Plaintext:
    """The plaintext an ADD/SUB/MUL_PLAIN or ADD/SUB/MUL_CONST node combines with its
    ciphertext operand (at `level` with `scale`), encoded exactly as the evaluator does:
    additions at the operand's level and scale, multiplies at the node's ``plain_scale``
    (CKKS) or with factor 1 (BGV). `values` is the plain input's vector or the constant."""
    if node.op in (HeOp.MUL_PLAIN, HeOp.MUL_CONST, HeOp.MUL_CONST_EXT):
        scale = node.attr("plain_scale") if params.scheme == "ckks" else None
    if node.op is HeOp.MUL_CONST_EXT:  # over Q·P, to multiply a double-hoisted value
        return encode(params, _slot_vector(params, values), level, scale, extended=True)
    if not isinstance(values, Const) and np.ndim(values) == 0:  # a scalar: exact constant polynomial
        return encode_scalar(params, values, level, scale)
    return encode(params, _slot_vector(params, values), level, scale)


Executor = Callable[[Evaluator, HeNode, list, dict], Any]
"""(evaluator, node, argument values, extra evaluator kwargs) -> value."""


def _with_plain(method: Callable) -> Executor:
    """ct (+ - ×) an encoded plain input; `method` is an unbound `Evaluator` method."""

    def run(ev: Evaluator, node: HeNode, args: list, kw: dict):
        ct, w = args
        return method(ev, ct, plaintext_operand(ev.params, node, ct.level, ct.scale, w))

    return run


def _with_const(method: Callable) -> Executor:
    """ct (+ - ×) a constant; Python integers multiply exactly (no encoding)."""

    def run(ev: Evaluator, node: HeNode, args: list, kw: dict):
        (ct,) = args
        value = node.attr("value")
        if method is Evaluator.multiply and is_int_scalar(value):
            factor = node.attr("factor", None)
            if factor is not None:  # BGV: message × value and factor × factor in one product
                k = rules.bgv_folded_constant(ev.params, int(value), int(factor))
                return ev.multiply_integer(ct, k, scale=(ct.scale * int(factor)) % ev.params.plain_modulus)
            return ev.multiply(ct, int(value))
        pt = plaintext_operand(ev.params, node, ct.level, ct.scale, value)
        if method is Evaluator.multiply:  # a known constant: its magnitude scales the error (he_types._mul_const)
            return ev.multiply_plain(ct, pt, magnitude=const_bound(value))
        return method(ev, ct, pt)

    return run


BOUND_SCALED = frozenset({HeOp.MUL, HeOp.MUL_PLAIN, HeOp.MUL_CONST, HeOp.MUL_CONST_EXT})
"""Products whose error estimate the operands' bounds scale (`fhec.schemes.noise.magnitude`):
the evaluator takes their noise from the node's type."""


def _with_noise_hint(ct: Ciphertext, node: HeNode) -> Ciphertext:
    """A RESCALE's ``noise`` attribute replaces the estimate (as its type rule does)."""
    hint = node.attr("noise", None)
    return ct if hint is None else ct.with_(noise=float(hint))


def _mul_factor(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (ct,) = args
    c = int(node.attr("value"))
    # The evaluator aligns BGV factors inside `add` by this very multiply (`_align`);
    # here it is an explicit node, so the factor is relabelled after the integer multiply.
    return ev.multiply_integer(ct, c, scale=(ct.scale * c) % ev.params.plain_modulus)


def _mod_up(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (ct,) = args
    return ks.decompose(ev.params, ct.data[node.attr("part")], ct.level, node.attr("method")), ct.level


def _digits_automorphism(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (digits, level) = args[0]
    g = int(node.attr("galois"))
    return [automorphism_ntt(d, g, ev.params.N) for d in digits], level


def _key_mult(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (digits, level) = args[0]
    key = ev.keys.key(node.attr("source"), node.attr("method"), level)
    return np.stack(ks.key_mult(ev.params, digits, key, level)), level


def _mod_down(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (u, level) = args[0]
    return np.stack([ks.mod_down(ev.params, p, level) for p in u]), level


def _ks_add_ext(ev: Evaluator, node: HeNode, args: list, kw: dict):
    ct, (u, level) = args
    c0 = ev.times_p_plus(ct.data[0], u[0], level)
    c1 = ev.times_p_plus(ct.data[1], u[1], level) if ct.parts == 3 else u[1]
    return ExtendedCiphertext(ev.params, np.stack([c0, c1]), ct.level, ct.scale, ct.key_id, node.type.noise)


def _mul_const_ext(ev: Evaluator, node: HeNode, args: list, kw: dict):
    (x,) = args
    value = node.attr("value")
    return ev.multiply_extended(x, plaintext_operand(ev.params, node, x.level, x.scale, value), const_bound(value))


def _ks_add(ev: Evaluator, node: HeNode, args: list, kw: dict):
    ct, (u, level) = args
    q = np.array(ct.moduli, dtype=np.uint64)
    c0 = add_mod(ct.data[0], u[0], q)
    c1 = add_mod(ct.data[1], u[1], q) if ct.parts == 3 else u[1]
    return Ciphertext(ev.params, np.stack([c0, c1]), ct.level, ct.scale, ct.key_id, node.type.noise)


EXECUTORS: dict[HeOp, Executor] = {
    HeOp.OUTPUT: lambda ev, n, a, kw: a[0],
    HeOp.ADD: lambda ev, n, a, kw: ev.add(a[0], a[1]),
    HeOp.SUB: lambda ev, n, a, kw: ev.sub(a[0], a[1]),
    HeOp.NEG: lambda ev, n, a, kw: ev.negate(a[0]),
    HeOp.ADD_PLAIN: _with_plain(Evaluator.add),
    HeOp.SUB_PLAIN: _with_plain(Evaluator.sub),
    HeOp.MUL_PLAIN: _with_plain(Evaluator.multiply),
    HeOp.ADD_CONST: _with_const(Evaluator.add),
    HeOp.SUB_CONST: _with_const(Evaluator.sub),
    HeOp.MUL_CONST: _with_const(Evaluator.multiply),
    HeOp.MUL: lambda ev, n, a, kw: ev.multiply(a[0], a[1], relinearize=False),
    HeOp.RELINEARIZE: lambda ev, n, a, kw: ev.relinearize(a[0], **kw),
    HeOp.MUL_FACTOR: _mul_factor,
    HeOp.RESCALE: lambda ev, n, a, kw: _with_noise_hint(ev.rescale(a[0]), n),
    HeOp.MOD_SWITCH: lambda ev, n, a, kw: ev.mod_switch(a[0]),
    HeOp.LEVEL_DOWN: lambda ev, n, a, kw: ev.level_down(a[0], n.attr("level"), n.attr("scale")),
    HeOp.MUL_MONOMIAL: lambda ev, n, a, kw: ev.multiply_monomial(a[0], n.attr("power")),
    HeOp.MOD_RAISE: lambda ev, n, a, kw: ev.mod_raise(a[0], n.attr("level"), n.attr("scale")),
    HeOp.ROTATE: lambda ev, n, a, kw: ev.rotate(a[0], n.attr("step"), **kw),
    HeOp.CONJUGATE: lambda ev, n, a, kw: ev.conjugate(a[0], **kw),
    HeOp.SWITCH_SECRET: lambda ev, n, a, kw: ev.key_switch(a[0], f"to-{n.attr('to')}", keyswitch="hybrid"),
    HeOp.SWAP_ROWS: lambda ev, n, a, kw: ev.swap_rows(a[0], **kw),
    # the pieces of an expanded key switch (fhec.passes.he_keyswitch): digits and pairs
    # travel as (arrays, level)
    HeOp.AUTOMORPHISM: lambda ev, n, a, kw: ev.automorphism(a[0], n.attr("galois")),
    HeOp.MOD_UP: _mod_up,
    HeOp.DIGITS_AUTOMORPHISM: _digits_automorphism,
    HeOp.KEY_MULT: _key_mult,
    HeOp.MOD_DOWN: _mod_down,
    HeOp.KS_ADD: _ks_add,
    # double hoisting: values over Q·P (always hybrid)
    HeOp.ROTATE_EXT: lambda ev, n, a, kw: ev.rotate_extended(a[0], n.attr("step"), keyswitch="hybrid"),
    HeOp.KS_ADD_EXT: _ks_add_ext,
    HeOp.MUL_CONST_EXT: _mul_const_ext,
    HeOp.ADD_EXT: lambda ev, n, a, kw: ev.add_extended(a[0], a[1]),
    HeOp.MOD_DOWN_EXT: lambda ev, n, a, kw: ev.mod_down(a[0]),
    # a mod-down merged with its rescale (fhec.passes.he_fuse_rescale; hybrid)
    HeOp.RELINEARIZE_EXT: lambda ev, n, a, kw: ev.relinearize_extended(a[0]),
    HeOp.ADD_EXT_Q: lambda ev, n, a, kw: ev.add_lifted(a[0], a[1], bool(n.attr("subtract", False))),
    HeOp.RESCALE_EXT: lambda ev, n, a, kw: _with_noise_hint(ev.rescale_extended(a[0]), n),
}


def _keyswitch_kwargs(node: HeNode, methods: Mapping[int, str] | str | None) -> dict:
    """The key-switching method of a node: `methods` (one for all, or per node id), else
    the node's ``keyswitch`` attribute, else the evaluator's default."""
    if node.op not in KEY_SWITCHING_OPS:
        return {}
    if isinstance(methods, str):
        return {"keyswitch": methods}
    method = (methods or {}).get(node.id) or node.attr("keyswitch", None)
    return {"keyswitch": method} if method else {}


def execute_nodes(
    program: HeProgram,
    keys: KeySet,
    ciphertexts: Mapping[str, Ciphertext],
    plains: Mapping[str, np.ndarray] | None = None,
    methods: Mapping[int, str] | str | None = None,
    keep: Collection[int] | None = None,
) -> dict[int, Ciphertext | np.ndarray]:
    """Every value of an expanded program: id -> Ciphertext (plain inputs: their vector).

    `methods`: key-switching method for every key switch ("bv" / "hybrid"), or a map
    node id -> method (e.g. `fhec.passes.keyswitch_choice.choose_methods`); the keys
    must exist for the methods used (`make_keys(..., keyswitch="both")`). `keep`: the
    ids whose values are returned; the others are dropped after their last use (None:
    every value is kept). A bootstrap at N = 2^16 holds thousands of 30 MB values, more
    than memory, when none is dropped.
    Raises `InternalError` for a program that still holds high-level ops.
    """
    program = as_he(program)
    if not program.is_expanded:
        raise InternalError("run_he needs an expanded program; call fhec.evaluate.prepare (or expand) first")
    ev = Evaluator(keys)
    plains = plains or {}
    values: dict[int, Any] = {}
    last_use = {a: n.id for n in program.nodes for a in n.args} if keep is not None else {}
    for n in program.nodes:
        if n.op is HeOp.INPUT:
            values[n.id] = ciphertexts[n.attr("name")]
        elif n.op is HeOp.PLAIN_INPUT:
            values[n.id] = plains[n.attr("name")]
        else:
            try:
                values[n.id] = EXECUTORS[n.op](ev, n, [values[a] for a in n.args], _keyswitch_kwargs(n, methods))
            except FhecError as e:  # the evaluator's errors (a BV key switch without precision) name the node's line
                if e.where is None and n.loc:
                    e.where, e.args = n.loc, (f"{n.loc}: {e.bare_message}",)
                raise
            if n.op in BOUND_SCALED and n.type is not None and isinstance(values[n.id], (Ciphertext, ExtendedCiphertext)):
                # the product's error scales with its operands' magnitudes, which the type
                # rule reads from their bounds (`noise.magnitude`) and ciphertexts do not carry
                values[n.id] = replace(values[n.id], noise=n.type.noise)
            hint = n.attr("noise", None)  # a recipe's error estimate (`he_types.with_noise_hint`)
            if hint is not None and isinstance(values[n.id], (Ciphertext, ExtendedCiphertext)):
                values[n.id] = replace(values[n.id], noise=float(hint))
        for a in set(n.args) if keep is not None else ():
            if last_use[a] == n.id and a not in keep:
                del values[a]
    return values


def run_he(
    program,
    keys: KeySet,
    ciphertexts: Mapping[str, Ciphertext],
    plains: Mapping[str, np.ndarray] | None = None,
    methods: Mapping[int, str] | str | None = None,
) -> dict[str, Ciphertext]:
    """Interpret an expanded program with the eager evaluator (one call per node, see
    the module table); output name -> Ciphertext. `methods` as in `execute_nodes`."""
    program = as_he(program)
    values = execute_nodes(program, keys, ciphertexts, plains, methods, keep=set(program.outputs.values()))
    return {name: values[vid] for name, vid in program.outputs.items()}


def decrypt_outputs(keys: KeySet, ciphertexts: Mapping[str, Ciphertext], program=None) -> dict[str, np.ndarray]:
    """Decrypt every output. With `program`, a BGV output whose noise overflowed raises
    `NoiseBudgetExhaustedError` naming the DSL line that computed it."""
    out = {}
    for name, ct in ciphertexts.items():
        try:
            out[name] = decrypt(keys, ct)
        except NoiseBudgetExhaustedError as e:
            if program is None:
                raise
            node = as_he(program).node(as_he(program).outputs[name])
            raise NoiseBudgetExhaustedError(f"output {name!r}: {e.bare_message}", node.loc) from None
    return out


def evaluate(program, inputs: Mapping[str, Any], seed=None) -> dict[str, np.ndarray]:
    """Run `program` on `inputs` under encryption with the eager evaluator.

    keygen (only the keys the prepared program needs) -> encrypt each input -> one
    evaluator call per node -> decrypt. Returns output name -> float64 (CKKS) / int64
    mod t (BGV) slot vector. `seed`: None (default) for OS randomness; an int or bytes
    to reproduce keys and ciphertexts (`fhec.run` and `Compiled.run` derive the same).

    Raises the errors of `reference` (missing inputs, no outputs, a sparse bootstrap of a
    value that is not periodic...), and the evaluator's (`NoiseBudgetExhaustedError` for a
    BGV result whose noise overflowed).
    """
    check_inputs(program, inputs)
    prepared = prepare(program)
    # the methods the program's key switches carry (a BootstrapConfig(keyswitch="bv") marks
    # its own), as fhec.run and Compiled.run generate them
    keys = make_keys(prepared, seed, keyswitch=keygen_method(prepared))
    cts = encrypt_inputs(prepared, keys, inputs, seed)
    return decrypt_outputs(keys, run_he(prepared, keys, cts, plain_inputs(prepared, inputs)), prepared)


# -- comparing with the reference -------------------------------------------------------------


@dataclass(frozen=True)
class OutputComparison:
    """How one output of an execution compares with `fhec.reference`.

    Attributes:
        name: the output.
        ok: within tolerance (CKKS) / identical (BGV).
        max_error: largest absolute slot error (BGV: 0 or 1 per wrong slot count).
        bits: CKKS: -log2(max_error / max(1, max|expected|)), inf when exact;
            BGV: inf when exact, else 0.
        required_bits: the precision demanded (CKKS); None for BGV.
        bad_slots: indices of the worst (CKKS) / all wrong (BGV) slots, at most 8.
        saturated: CKKS: the output's error estimate saturated
            (`fhec.ir.he_types.noise_saturated`), so `required_bits`, when derived from
            it, is only the floor of `default_required_bits`.
    """

    name: str
    ok: bool
    max_error: float
    bits: float
    required_bits: float | None
    bad_slots: tuple[int, ...]
    saturated: bool = False

    @property
    def floor_note(self) -> str:
        """Where a saturated estimate gave `required_bits`: that it is the floor, not what
        the estimate promises (which is nothing); else empty."""
        return ", the floor: its error estimate saturated" if self.saturated else ""

    def describe(self, scheme: str) -> str:
        if scheme == "bgv":
            if self.ok:
                return f"{self.name}: exact"
            return f"{self.name}: {int(self.max_error)} wrong slots, e.g. {list(self.bad_slots)}"
        bits = "exact" if math.isinf(self.bits) else f"{self.bits:.1f} bits"
        verdict = (f"ok (needs {self.required_bits:.1f}{self.floor_note})" if self.ok else
                   f"MISMATCH: needs {self.required_bits:.1f} bits{self.floor_note}; worst slots "
                   f"{list(self.bad_slots)}")
        return f"{self.name}: max error {self.max_error:.3g} ({bits}) {verdict}"


def default_required_bits(params: Params, t: HeType) -> float:
    """CKKS precision demanded of an output by default: its estimated worst-slot precision
    (`fhec.schemes.noise.precision_bits`) minus one bit of margin for programs whose
    error estimate runs low, capped to [8, 20]. The floor keeps a real bug (a wrong slot,
    an O(1) error) visible."""
    est = estimated_bits(params, t)
    return float(min(20.0, max(8.0, est - 1.0)))


def compare_outputs(
    program, got: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], rel_bits: float | None = None
) -> list[OutputComparison]:
    """Compare executed outputs with reference outputs, per output.

    CKKS: ``max|got - expected| <= 2^-bits * max(1, max|expected|)`` with bits =
    `rel_bits` or `default_required_bits` of the output's type. BGV: exact equality.
    Raises `InvalidArgumentError` for a `rel_bits` that is not a number of bits in [0, 64].
    """
    from fhec.errors import InvalidArgumentError
    from fhec.validate import as_real

    if rel_bits is not None:
        rel_bits = as_real(rel_bits, "rel_bits", min=0.0, max=64.0, error=InvalidArgumentError,
                           fix="the CKKS precision required, in bits (None: from each output's estimate)")
    program = as_he(program)
    params = program.params
    out = []
    for name, vid in program.outputs.items():
        g, e = np.asarray(got[name]), np.asarray(expected[name])
        if params.scheme == "bgv":
            wrong = np.flatnonzero(np.mod(g, params.plain_modulus) != np.mod(e, params.plain_modulus))
            out.append(OutputComparison(name, wrong.size == 0, float(wrong.size), math.inf if wrong.size == 0 else 0.0,
                                        None, tuple(int(i) for i in wrong[:8])))
            continue
        err = np.abs(g.astype(np.float64) - e.astype(np.float64))
        mag = max(1.0, float(np.max(np.abs(e), initial=0.0)))
        max_err = float(np.max(err, initial=0.0))
        bits = math.inf if max_err == 0 else -math.log2(max_err / mag)
        t = program.node(vid).type
        need = rel_bits if rel_bits is not None else default_required_bits(params, t)
        worst = tuple(int(i) for i in np.argsort(-err, kind="stable")[:8] if err[i] > 2.0**-need * mag)
        saturated = rel_bits is None and noise_saturated(params, t)
        out.append(OutputComparison(name, bits >= need, max_err, bits, float(need), worst, saturated))
    return out


def check_against_reference(
    program, inputs: Mapping[str, Any], seed=None, rel_bits: float | None = None
) -> list[OutputComparison]:
    """`evaluate` vs `reference` on the same inputs (what ``fhec check`` runs)."""
    got = evaluate(program, inputs, seed)
    return compare_outputs(program, got, reference(program, inputs), rel_bits)


VALUE_PRESERVING = frozenset({HeOp.ROTATE, HeOp.CONJUGATE, HeOp.LEVEL_DOWN, HeOp.MOD_SWITCH, HeOp.RESCALE,
                              HeOp.RELINEARIZE})
"""Ops whose result holds the same set of slot values as their operand (CKKS slots are
real, so a conjugate too): a series after them reads the input's values."""


def _feeding_input(program, vid: int) -> int:
    """The value `vid` comes from through `VALUE_PRESERVING` ops."""
    node = program.node(vid)
    while node.op in VALUE_PRESERVING:
        node = program.node(node.args[0])
    return node.id


def input_interval(program, node) -> tuple[float, float]:
    """Where a CKKS input's random values are drawn: [-B, B] for its declared bound B,
    narrowed to the domains of the series it feeds directly or through `VALUE_PRESERVING`
    ops (`x.polynomial(fhec.approx(f, (1, 100), d))`: a bound cannot say x lies in
    (1, 100), and the runs check the data against it, `fhec.reference.check_series_operands`).
    Raises `ProgramError` at the series' line when the bound does not reach into a domain."""
    from fhec.errors import ProgramError

    bound = declared_bound(node.attr_dict)
    lo, hi = -bound, bound
    for n in program.nodes:
        if n.op is HeOp.POLYNOMIAL and n.attr("domain", None) is not None and _feeding_input(program, n.args[0]) == node.id:
            a, b = sorted(float(v) for v in n.attr("domain"))
            if not max(lo, a) < min(hi, b):
                raise ProgramError(
                    f"the series here is fitted to [{a:g}, {b:g}], but its operand, input {node.attr('name')!r}, can "
                    f"only lie in [{lo:g}, {hi:g}] (its declared bound, and the domains of the series before): no "
                    f"value it may take lies in the domain. Declare the input's "
                    f"bound to cover the domain (p.input(name, bound={max(abs(a), abs(b)):g})) or fit the series "
                    f"where the input lies.", n.loc)
            lo, hi = max(lo, a), min(hi, b)
    return lo, hi


def random_inputs(program, seed=None) -> dict[str, np.ndarray]:
    """Random full-slot inputs: CKKS uniform in [-B, B] for each input's declared bound B
    (default 1), or in the part of it inside the domains of the series the input feeds
    (`input_interval`); BGV uniform in [0, t). With a sparse bootstrap of n slots
    (`BootstrapConfig(slots=n)`), n values repeated with period n, as it requires. Test
    data, not key material: numpy's generator, seeded by `numpy_seed(seed)`."""
    program = as_he(program)
    params = program.params
    rng = np.random.default_rng(numpy_seed(seed))
    nodes = {**program.inputs, **program.plain_inputs}
    if params.scheme == "ckks":
        period = params.slots if params.bootstrap is None else params.bootstrap.slot_count(params.N)
        def draw(node):
            lo, hi = input_interval(program, node)
            # [-B, B] as before (B times uniform(-1, 1)): the same values for the same seed
            return hi * rng.uniform(-1.0, 1.0, period) if lo == -hi else rng.uniform(lo, hi, period)

        return {n: np.tile(draw(node), params.slots // period) for n, node in nodes.items()}
    names = list(nodes)
    return {n: rng.integers(0, params.plain_modulus, params.slots, dtype=np.int64) for n in names}
