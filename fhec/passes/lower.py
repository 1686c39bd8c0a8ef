"""Lowering: an expanded HE program becomes a limb-level program (`fhec.ir.limb`).

``lower(program, keyswitch=...)`` walks the HE nodes in order and emits each one's limb
instructions through `fhec.passes.lower_ops.LimbEmitter`. The result is data-free: it
says which loaded rvecs hold which input limb, key-switch-hint limb or plaintext
constant limb, but holds no data. `fhec.run` binds real ciphertexts, keys and
encodings to it (`LoweredProgram.loaded_values`).

Preserves: the semantics of every node exactly, residue for residue, as the eager
evaluator computes them with the same per-node key-switching method (`methods`).
Instruction priorities are the emission order: HE nodes in program order and, within a
key switch, one digit at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from fhec.errors import InternalError
from fhec.ir.he import Const, HeNode, HeOp, HeProgram, HeType
from fhec.ir.limb import LimbProgram, verify_limb_program
from fhec.passes.lower_ops import LimbEmitter
from fhec.passes.lower_outputs import finalize_outputs
from fhec.schemes import rules
from fhec.schemes.ciphertext import Ciphertext, Plaintext
from fhec.ir.he_types import is_int_scalar
from fhec.schemes.encryption import encode
from fhec.schemes.keys import RELIN, KeySet, galois_for_conjugation, galois_for_rotation


@dataclass(frozen=True)
class ConstRecipe:
    """How to encode one plaintext operand at run time, exactly as
    `fhec.evaluate.plaintext_operand` does: the slot vector of `source` at `level`
    with `scale` (an addend: the ciphertext's scale; a CKKS multiplier: the node's
    ``plain_scale``; a BGV multiplier: None, factor 1).
    `source` is ("plain", input name) or ("value", Python scalar or `Const`).
    """

    source: tuple[str, Any]
    level: int
    scale: float | int | None


@dataclass(frozen=True, eq=False)
class LoweredProgram:
    """A limb program plus what it means in HE terms.

    Attributes:
        limb: the `LimbProgram`.
        he: the (expanded) HE program it implements.
        inputs: input name -> INPUT rvec ids, shape (parts, limbs).
        outputs: output name -> OUTPUT rvec ids, shape (parts, limbs).
        output_types: output name -> `HeType` (level, scale, noise estimate).
        key_sources: KSH name -> (source, method): "relin" or a Galois element.
        constants: CONST name -> `ConstRecipe`.
        methods: HE node id -> key-switching method, for every key-switching node.
    """

    limb: LimbProgram
    he: HeProgram
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    output_types: dict[str, HeType]
    key_sources: dict[str, tuple[int | str, str]]
    constants: dict[str, ConstRecipe]
    methods: dict[int, str] = field(default_factory=dict)

    def plaintexts(self, plain_inputs: Mapping[str, np.ndarray]) -> dict[str, Plaintext]:
        """Encode every CONST operand (plain inputs given by name)."""
        params = self.he.params
        out = {}
        for name, r in self.constants.items():
            kind, value = r.source
            if kind == "plain":
                value = plain_inputs[value]
            vec = value.array if isinstance(value, Const) else np.full(params.slots, value) if np.ndim(value) == 0 else value
            out[name] = encode(params, vec, r.level, r.scale)
        return out

    def loaded_values(
        self, ciphertexts: Mapping[str, Ciphertext], keys: KeySet, plain_inputs: Mapping[str, np.ndarray]
    ) -> dict[int, np.ndarray]:
        """The words of every loaded rvec, for `fhec.sim.functional.execute`."""
        from fhec.sim.bind import loaded_values

        return loaded_values(self.limb, ciphertexts, keys, self.key_sources, self.plaintexts(plain_inputs))

    def output_ciphertexts(self, words: Mapping[int, np.ndarray], key_id: int) -> dict[str, Ciphertext]:
        """Assemble executed OUTPUT words into Ciphertexts (metadata from the HE types)."""
        params = self.he.params
        out = {}
        for name, ids in self.outputs.items():
            t = self.output_types[name]
            data = np.stack([[words[int(r)] for r in row] for row in ids]).astype(np.uint64)
            out[name] = Ciphertext(params, data, t.level, t.scale, key_id, t.noise if t.noise is not None else 0.0)
        return out

    def stats(self) -> dict[str, Any]:
        """Instruction counts per LimbOp and per HE op, and bytes per rvec class."""
        s = self.limb.stats()
        per_he: dict[str, dict[str, int]] = {}
        for node_id, counts in self.limb.counts_by_he_node().items():
            op = self.he.node(node_id).op.value if node_id >= 0 else "(none)"
            bucket = per_he.setdefault(op, {})
            for k, v in counts.items():
                bucket[k] = bucket.get(k, 0) + v
        s["by_he_op"] = per_he
        return s


def _key_label(source: int | str, method: str) -> str:
    return f"{'relin' if source == RELIN else f'galois:{source}'}/{method}"


def key_switch_source(params, node: HeNode) -> int | str | None:
    """The key a key-switching node needs ("relin" or a Galois element); None if no switch."""
    if node.op is HeOp.RELINEARIZE:
        return RELIN
    if node.op is HeOp.ROTATE:
        g = galois_for_rotation(params, int(node.attr("step")))
        return None if g == 1 else g
    if node.op in (HeOp.CONJUGATE, HeOp.SWAP_ROWS):
        return galois_for_conjugation(params)
    return None


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
    params = program.params
    em = LimbEmitter(params)
    vals: dict[int, np.ndarray] = {}
    consts: dict[str, ConstRecipe] = {}
    const_rvecs: dict[ConstRecipe, np.ndarray] = {}
    key_sources: dict[str, tuple[int | str, str]] = {}
    chosen: dict[int, str] = {}
    inputs: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    output_types: dict[str, HeType] = {}

    def const(recipe: ConstRecipe) -> np.ndarray:
        if recipe not in const_rvecs:
            name = f"c{len(consts)}"
            consts[name] = recipe
            const_rvecs[recipe] = em.const_rvecs(name, params.limbs_at(recipe.level))
        return const_rvecs[recipe]

    def plain_source(node_id: int) -> tuple[str, Any]:
        return ("plain", program.node(node_id).attr("name"))

    def value_source(v: Any) -> tuple[str, Any]:
        return ("value", v)

    users = program.users()

    def mul_scale(node: HeNode):
        return node.attr("plain_scale") if params.scheme == "ckks" else None

    for node in program.nodes:
        em.he_node = node.id
        op, a = node.op, [vals.get(i) for i in node.args]
        t_in = program.node(node.args[0]).type if node.args else None
        if op is HeOp.INPUT:
            r = em.input_rvecs(node.attr("name"), 2, params.limbs_at(node.type.level))
            inputs[node.attr("name")] = r
        elif op is HeOp.PLAIN_INPUT:
            r = None
        elif op is HeOp.OUTPUT:
            outputs[node.attr("name")] = a[0]
            output_types[node.attr("name")] = t_in
            continue
        elif op in (HeOp.ADD, HeOp.SUB):
            r = em.add(a[0], a[1], subtract=op is HeOp.SUB)
        elif op is HeOp.NEG:
            r = em.negate(a[0])
        elif op in (HeOp.ADD_PLAIN, HeOp.SUB_PLAIN):
            pt = const(ConstRecipe(plain_source(node.args[1]), t_in.level, t_in.scale))
            r = em.add_plain(a[0], pt, subtract=op is HeOp.SUB_PLAIN)
        elif op in (HeOp.ADD_CONST, HeOp.SUB_CONST):
            pt = const(ConstRecipe(value_source(node.attr("value")), t_in.level, t_in.scale))
            r = em.add_plain(a[0], pt, subtract=op is HeOp.SUB_CONST)
        elif op is HeOp.MUL:
            r = em.multiply(a[0], a[1])
        elif op is HeOp.MUL_PLAIN:
            r = em.mul_plain(a[0], const(ConstRecipe(plain_source(node.args[1]), t_in.level, mul_scale(node))))
        elif op is HeOp.MUL_CONST:
            v = node.attr("value")
            if is_int_scalar(v):
                r = em.mul_integer(a[0], int(v))
            else:
                r = em.mul_plain(a[0], const(ConstRecipe(value_source(v), t_in.level, mul_scale(node))))
        elif op is HeOp.MUL_FACTOR:
            r = em.mul_integer(a[0], int(node.attr("value")))
        elif op is HeOp.RESCALE:
            r = em.divide_last(a[0], None)
        elif op is HeOp.MOD_SWITCH:
            r = a[0][:, :-1] if params.scheme == "ckks" else em.divide_last(a[0], params.plain_modulus)
        elif op is HeOp.LEVEL_DOWN:
            r = _level_down(em, params, a[0], t_in, int(node.attr("level")), node.attr("scale"))
        elif op in (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS):
            source = key_switch_source(params, node)
            if source is None:
                r = a[0]
            else:
                method = methods if isinstance(methods, str) else methods[node.id]
                chosen[node.id] = method
                name = _key_label(source, method)
                key_sources[name] = (source, method)
                if source == RELIN:
                    r = em.relinearize(a[0], name, t_in.level, method)
                else:
                    r = em.rotate(a[0], source, name, t_in.level, method)
        elif op is HeOp.AUTOMORPHISM:
            r = em.automorphism(a[0], int(node.attr("galois")))
        elif op is HeOp.MOD_UP:
            x = a[0][node.attr("part")]
            if len(users[node.id]) == 1:
                # Emitted fused with its key_mult, one digit at a time (see LimbEmitter.key_switch).
                r = _PendingDigits(x, node.type.level, node.attr("method"), node.id)
            else:
                r = em.mod_up(x, node.type.level, node.attr("method"))
        elif op is HeOp.KEY_MULT:
            method, level = node.attr("method"), node.type.level
            src = node.attr("source")
            source = RELIN if src == "relin" else int(src)
            name = _key_label(source, method)
            key_sources[name] = (source, method)
            chosen[node.id] = method
            r = _key_mult(em, a[0], name, level, method, node.id)
        elif op is HeOp.MOD_DOWN:
            r = em.mod_down(a[0], node.type.level)
        elif op is HeOp.KS_ADD:
            ct, u = a
            if ct.shape[0] == 3:
                r = em.add(ct[:2], u)
            else:
                c0 = em.add(ct[:1], u[:1])[0]
                r = np.stack([c0, u[1]])
        else:
            raise InternalError(f"lower(): no lowering for {op}")
        vals[node.id] = r

    limb, final = finalize_outputs(em, outputs)
    if verify:
        verify_limb_program(limb)
    return LoweredProgram(limb, program, inputs, final, output_types, key_sources, consts, chosen)


@dataclass(frozen=True, eq=False)
class _PendingDigits:
    """A mod_up whose only user is a key_mult: lowered together with it."""

    x: np.ndarray
    level: int
    method: str
    node_id: int


def _key_mult(em: LimbEmitter, digits, key_name: str, level: int, method: str, node_id: int) -> np.ndarray:
    if isinstance(digits, _PendingDigits):
        # Same order as LimbEmitter.key_switch: all INTTs, then digit by digit.
        groups = em._digit_groups(level, method)
        em.he_node = digits.node_id
        ys = [em.digit_intt(digits.x, g) for g in groups]
        acc = [None, None]
        for d, (group, y) in enumerate(zip(groups, ys)):
            em.he_node = digits.node_id
            digit = em.digit_extend(digits.x, y, group, level, method)
            em.he_node = node_id
            acc = em.key_mult_digit(acc, d, digit, key_name, level, method)
        return np.stack(acc)
    return em.key_mult(digits, key_name, level, method)


def _level_down(em: LimbEmitter, params, x: np.ndarray, t_in: HeType, level: int, scale) -> np.ndarray:
    """Limb form of `Evaluator.level_down`."""
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
