"""Lowering: an expanded HE program becomes a limb-level program (`fhec.ir.limb`).

``lower(program, methods)`` walks the HE nodes in order and emits each one's limb
instructions through the emitter registered for its op in `EMITTERS` (the lowering
rule of each HE op, beside its type, reference and evaluator rules). The emitters use
`fhec.passes.lower_ops.LimbEmitter`, tagged with the node they implement. The result, a
`fhec.ir.lowered.LoweredProgram`, is data-free: it says which loaded rvecs hold which
input limb, key-switch-hint limb or plaintext constant limb, but holds no data;
`fhec.sim.bind` binds real ciphertexts, keys and encodings to it.

Preserves: the semantics of every node exactly, residue for residue, as the eager
evaluator computes them with the same per-node key-switching method (`methods`).
Instruction priorities are the emission order: HE nodes in program order and, within a
key switch, one digit at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from fhec.errors import InternalError
from fhec.ir.he import Const, HeNode, HeOp, HeProgram, HeType
from fhec.ir.he_types import is_int_scalar
from fhec.ir.limb import LimbOp, verify_limb_program
from fhec.ir.lowered import ConstRecipe, LoweredProgram
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.schemes import rules
from fhec.schemes.encryption import scalar_integer
from fhec.schemes.keys import RELIN, galois_for_conjugation, galois_for_rotation


def _key_label(source: int | str, method: str) -> str:
    return f"{'relin' if source == RELIN else f'galois:{source}'}/{method}"


def key_switch_source(params, node: HeNode) -> int | str | None:
    """The key a key-switching node needs ("relin" or a Galois element); None if no switch."""
    if node.op is HeOp.RELINEARIZE:
        return RELIN
    if node.op in (HeOp.ROTATE, HeOp.ROTATE_EXT):
        g = galois_for_rotation(params, int(node.attr("step")))
        return None if g == 1 else g
    if node.op in (HeOp.CONJUGATE, HeOp.SWAP_ROWS):
        return galois_for_conjugation(params)
    return None


@dataclass
class _Lowering:
    """What the emitters of one `lower` call share: the program, the root emitter and the
    tables the `LoweredProgram` is assembled from. Emitters add to the tables; they never
    change another node's rvecs."""

    program: HeProgram
    methods: Mapping[int, str] | str
    emitter: LimbEmitter
    users: dict[int, list[int]]
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    output_types: dict[str, HeType] = field(default_factory=dict)
    output_nodes: dict[str, int] = field(default_factory=dict)
    constants: dict[str, ConstRecipe] = field(default_factory=dict)
    const_rvecs: dict[ConstRecipe, np.ndarray] = field(default_factory=dict)
    key_sources: dict[str, tuple[int | str, str]] = field(default_factory=dict)
    chosen: dict[int, str] = field(default_factory=dict)

    @property
    def params(self):
        return self.program.params

    def const(self, recipe: ConstRecipe) -> np.ndarray:
        """The CONST rvecs of one plaintext operand (one set per distinct recipe)."""
        if recipe not in self.const_rvecs:
            name = f"c{len(self.constants)}"
            self.constants[name] = recipe
            limbs = self.params.limbs_at(recipe.level)
            mods = self.emitter.ext_mods(recipe.level) if recipe.extended else np.arange(limbs)
            self.const_rvecs[recipe] = self.emitter.const_rvecs(name, mods)
        return self.const_rvecs[recipe]

    def key(self, node: HeNode, source: int | str, method: str) -> str:
        """Record that `node` switches with `source`'s key by `method`; its KSH name."""
        name = _key_label(source, method)
        self.key_sources[name] = (source, method)
        self.chosen[node.id] = method
        return name

    def arg_type(self, node: HeNode) -> HeType:
        return self.program.node(node.args[0]).type

    def mul_scale(self, node: HeNode):
        """A plaintext multiplier's scale: the node's ``plain_scale`` (CKKS), factor 1 (BGV)."""
        return node.attr("plain_scale") if self.params.scheme == "ckks" else None


Emitter = Callable[[_Lowering, LimbEmitter, HeNode, list], Any]
"""(lowering, emitter tagged with the node, node, argument rvecs) -> the node's rvecs."""


def _input(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    r = em.input_rvecs(node.attr("name"), 2, lw.params.limbs_at(node.type.level))
    lw.inputs[node.attr("name")] = r
    return r


def _output(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    lw.outputs[node.attr("name")] = a[0]
    lw.output_types[node.attr("name")] = lw.arg_type(node)
    lw.output_nodes[node.attr("name")] = node.id
    return a[0]


def _plain_source(lw: _Lowering, node: HeNode) -> tuple[str, Any]:
    return ("plain", lw.program.node(node.args[1]).attr("name"))


def _is_scalar(value) -> bool:
    return not isinstance(value, Const) and np.ndim(value) == 0


def _add_plain(subtract: bool, from_input: bool) -> Emitter:
    def emit(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
        t = lw.arg_type(node)
        if not from_input and _is_scalar(node.attr("value")):
            # a scalar is a constant polynomial: one word per limb, added as an immediate
            k = scalar_integer(lw.params, node.attr("value"), t.scale)
            return em.add_scalar(a[0], -k if subtract else k)
        source = _plain_source(lw, node) if from_input else ("value", node.attr("value"))
        return em.add_plain(a[0], lw.const(ConstRecipe(source, t.level, t.scale)), subtract=subtract)

    return emit


def _mul_plain(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    recipe = ConstRecipe(_plain_source(lw, node), lw.arg_type(node).level, lw.mul_scale(node))
    return em.mul_plain(a[0], lw.const(recipe))


def _mul_const(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    v = node.attr("value")
    if is_int_scalar(v):
        return em.mul_integer(a[0], int(v))
    if _is_scalar(v):  # a CKKS scalar encodes to the constant round(v · plain_scale)
        return em.mul_integer(a[0], scalar_integer(lw.params, v, lw.mul_scale(node)))
    recipe = ConstRecipe(("value", v), lw.arg_type(node).level, lw.mul_scale(node))
    return em.mul_plain(a[0], lw.const(recipe))


def _mul_const_ext(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    level = lw.arg_type(node).level
    recipe = ConstRecipe(("value", node.attr("value")), level, lw.mul_scale(node), extended=True)
    return em.ext_mul_plain(a[0], lw.const(recipe), level)


def _rotate_ext(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    """A double-hoisted rotation not yet split into pieces (always hybrid)."""
    source = key_switch_source(lw.params, node)
    name = lw.key(node, source, "hybrid")
    return em.rotate_ext(a[0], source, name, lw.arg_type(node).level)


def _mul_monomial(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    recipe = ConstRecipe(("monomial", int(node.attr("power"))), lw.arg_type(node).level, 1)
    return em.mul_plain(a[0], lw.const(recipe))


def _mod_switch(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    if lw.params.scheme == "ckks":
        return a[0][:, :-1]
    return em.divide_last(a[0], lw.params.plain_modulus)


def _level_down(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    """Limb form of `Evaluator.level_down`."""
    params, x, t_in = lw.params, a[0], lw.arg_type(node)
    level, scale = int(node.attr("level")), node.attr("scale")
    if t_in.level == level:
        return x
    if params.scheme == "bgv":
        for _ in range(t_in.level - level):
            x = em.divide_last(x, params.plain_modulus)
        return x
    target = params.scale_at(level) if scale is None else scale
    if rules.scales_match(params, t_in.scale, target):
        return x[:, : params.limbs_at(level)]
    c = rules.level_down_constant(params, t_in.scale, t_in.level, level, target_scale=target)
    x = x[:, : params.limbs_at(level + 1)]
    return em.divide_last(em.mul_integer(x, c), None)


def _mod_raise(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    """Limb form of `Evaluator.mod_raise`: per part, INTT of the level-0 limbs, a fast base
    conversion onto the other primes of the level (BCONV reads the residues centered), NTT."""
    x = a[0]
    base = np.arange(x.shape[1], dtype=np.int64)
    dst = np.arange(x.shape[1], lw.params.limbs_at(int(node.attr("level"))), dtype=np.int64)
    raised = []
    for part in x:
        coeffs = em.op(LimbOp.INTT, part, mod=base)
        ext = em.op(LimbOp.NTT, em.fast_base_convert(coeffs, base, dst), mod=dst)
        raised.append(np.concatenate([part, ext]))
    return np.stack(raised)


def _whole_key_switch(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    """A key switch not yet split into pieces (rotate, conjugate, swap_rows, relinearize)."""
    source = key_switch_source(lw.params, node)
    if source is None:
        return a[0]
    method = lw.methods if isinstance(lw.methods, str) else lw.methods[node.id]
    name = lw.key(node, source, method)
    level = lw.arg_type(node).level
    if source == RELIN:
        return em.relinearize(a[0], name, level, method)
    return em.rotate(a[0], source, name, level, method)


@dataclass(frozen=True, eq=False)
class _PendingDigits:
    """A mod_up whose only user is a key_mult: emitted fused with it, digit by digit
    (`LimbEmitter.digits_times_hint`), so that one extended digit is live at a time."""

    x: np.ndarray
    level: int
    method: str
    emitter: LimbEmitter


def _mod_up(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    x = a[0][node.attr("part")]
    users = lw.users[node.id]
    if len(users) == 1 and lw.program.node(users[0]).op is HeOp.KEY_MULT:
        return _PendingDigits(x, node.type.level, node.attr("method"), em)
    return em.mod_up(x, node.type.level, node.attr("method"))


def _digits_automorphism(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    """σ_g on every limb of every digit (each over the key-switching basis)."""
    digits, level = a[0], node.type.level
    method = lw.program.node(node.args[0]).attr("method")
    mods = em.key_rows(level, method)
    return [em.op(LimbOp.AUT, d, mod=mods, imm=int(node.attr("galois"))) for d in digits]


def _key_mult(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    method, level, src = node.attr("method"), node.type.level, node.attr("source")
    name = lw.key(node, RELIN if src == "relin" else int(src), method)
    digits = a[0]
    if isinstance(digits, _PendingDigits):
        return digits.emitter.digits_times_hint(digits.x, name, level, method, key_mult=em)
    return em.key_mult(digits, name, level, method)


def _ks_add(lw: _Lowering, em: LimbEmitter, node: HeNode, a: list):
    ct, u = a
    if ct.shape[0] == 3:
        return em.add(ct[:2], u)
    c0 = em.add(ct[:1], u[:1])[0]
    return np.stack([c0, u[1]])


EMITTERS: dict[HeOp, Emitter] = {
    HeOp.INPUT: _input,
    HeOp.PLAIN_INPUT: lambda lw, em, n, a: None,
    HeOp.OUTPUT: _output,
    HeOp.ADD: lambda lw, em, n, a: em.add(a[0], a[1]),
    HeOp.SUB: lambda lw, em, n, a: em.add(a[0], a[1], subtract=True),
    HeOp.NEG: lambda lw, em, n, a: em.negate(a[0]),
    HeOp.ADD_PLAIN: _add_plain(subtract=False, from_input=True),
    HeOp.SUB_PLAIN: _add_plain(subtract=True, from_input=True),
    HeOp.ADD_CONST: _add_plain(subtract=False, from_input=False),
    HeOp.SUB_CONST: _add_plain(subtract=True, from_input=False),
    HeOp.MUL: lambda lw, em, n, a: em.multiply(a[0], a[1]),
    HeOp.MUL_PLAIN: _mul_plain,
    HeOp.MUL_CONST: _mul_const,
    HeOp.MUL_MONOMIAL: _mul_monomial,
    HeOp.MUL_FACTOR: lambda lw, em, n, a: em.mul_integer(a[0], int(n.attr("value"))),
    HeOp.RESCALE: lambda lw, em, n, a: em.divide_last(a[0], None),
    HeOp.MOD_SWITCH: _mod_switch,
    HeOp.LEVEL_DOWN: _level_down,
    HeOp.MOD_RAISE: _mod_raise,
    HeOp.RELINEARIZE: _whole_key_switch,
    HeOp.ROTATE: _whole_key_switch,
    HeOp.CONJUGATE: _whole_key_switch,
    HeOp.SWAP_ROWS: _whole_key_switch,
    HeOp.AUTOMORPHISM: lambda lw, em, n, a: em.automorphism(a[0], int(n.attr("galois"))),
    HeOp.MOD_UP: _mod_up,
    HeOp.DIGITS_AUTOMORPHISM: _digits_automorphism,
    HeOp.KEY_MULT: _key_mult,
    HeOp.MOD_DOWN: lambda lw, em, n, a: em.mod_down(a[0], n.type.level),
    HeOp.KS_ADD: _ks_add,
    HeOp.ROTATE_EXT: _rotate_ext,
    HeOp.KS_ADD_EXT: lambda lw, em, n, a: em.ks_add_ext(a[0], a[1], n.type.level),
    HeOp.MUL_CONST_EXT: _mul_const_ext,
    HeOp.ADD_EXT: lambda lw, em, n, a: em.ext_add(a[0], a[1], n.type.level),
    HeOp.MOD_DOWN_EXT: lambda lw, em, n, a: em.mod_down(a[0], n.type.level),
}
"""The lowering rule of every primitive HE op (high-level ops are expanded before)."""


def lower(program: HeProgram, methods: Mapping[int, str] | str = "hybrid", *, verify: bool = True) -> LoweredProgram:
    """Lower an expanded HE program to limb instructions.

    Key switches may be whole nodes (relinearize, rotate, ...) or already split into
    pieces by `fhec.passes.he_keyswitch.expand_key_switches` (which carry their method).
    `methods`: for whole key-switching nodes, one method ("bv" or "hybrid") for all, or a
    map node id -> method (see `fhec.passes.keyswitch_choice.choose_methods`).
    Raises `InternalError` if the program still holds high-level ops.
    """
    if not program.is_expanded:
        raise InternalError("lower() needs an expanded program: run fhec.passes.he_expand.expand first")
    lw = _Lowering(program, methods, LimbEmitter(program.params), program.users())
    vals: dict[int, Any] = {}
    for node in program.nodes:
        emit = EMITTERS.get(node.op)
        if emit is None:
            raise InternalError(f"lower(): no lowering for {node.op}")
        vals[node.id] = emit(lw, lw.emitter.for_node(node.id), node, [vals.get(i) for i in node.args])
    limb, final = finalize_outputs(lw.emitter, lw.outputs, lw.output_nodes)
    if verify:
        verify_limb_program(limb)
    return LoweredProgram(limb, program, lw.inputs, final, lw.output_types, lw.key_sources, lw.constants, lw.chosen)
