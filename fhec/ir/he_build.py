"""Building HE programs: typed node emission and the operand-alignment policy.

`HeBuilder` appends nodes in topological order, inferring each node's type as it goes
(`infer_type`), so a program is typed by construction. On top of `emit` it offers the
*policy* layer the DSL and the expansion recipes share:

* ``rescale="auto"``: after every multiply that is not by a Python integer, CKKS
  rescales and BGV modulus-switches; operands of binary ops are brought to a common
  level with LEVEL_DOWN (CKKS: onto the other operand's / the level's canonical scale;
  BGV: modulus switching); a ct × ct product is relinearized at once.
* ``rescale="manual"``: only what the program asks for; operands at different levels
  or (CKKS) with different scales raise `LevelMismatchError` / `ScaleMismatchError`
  naming the DSL line. The product of two ciphertexts stays 3-part until the program
  calls ``relinearize()`` (ops that need 2 parts relinearize first, as the evaluator does).

In both modes BGV plaintext factors are aligned automatically (MUL_FACTOR): they are
invisible in the DSL.

Recipes may run part of their work with *composite scaling* (`HeBuilder.composite`): a
level step is then several primes, auto rescales divide by all of them, and the canonical
scale of a level is the composite chain's (about 2^(primes·scale_bits)), so that 32-bit
words can still evaluate at a ~2^60 scale (a bootstrap's EvalMod, docs/bootstrapping.md).

The builder is mutable scaffolding; what it produces (`HeBuilder.program`) is an
immutable `HeProgram`. `transaction()` rolls back the nodes of a failed DSL operation.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from fhec.errors import (
    LevelExhaustedError,
    LevelMismatchError,
    MissingRotationKeyError,
    ScaleMismatchError,
    ScaleOverflowError,
    ValueOverflowError,
)
from fhec.ir.he import (
    HIGH_LEVEL_OPS,
    KEY_SWITCHING_OPS,
    HeNode,
    HeOp,
    HeOptions,
    HeProgram,
    HeType,
    KeyKind,
    attrs_of,
)
from fhec.ir import he_types as ht
from fhec.schemes import noise as nz
from fhec.schemes import ranges, rules
from fhec.schemes.params import Params
from fhec.schemes.precision import check_keyswitch


def infer_type(params: Params, op: HeOp, attrs: dict[str, Any], arg_types: tuple[HeType, ...], loc: str | None) -> HeType:
    """The type of a node: the primitive rule, or for a high-level op the type of the
    last value of its expansion with the keys of every expanded node."""
    if len(arg_types) != ht.arity(op):
        raise ht.IRTypeError(f"{op.value} takes {ht.arity(op)} arguments, got {len(arg_types)}")
    if op in HIGH_LEVEL_OPS:
        from fhec.ir.he_recipes import dry_run

        return dry_run(params, op, attrs, arg_types[0], loc)
    return ht.with_noise_hint(ht.PRIMITIVE_RULES[op](params, attrs, arg_types, loc), attrs)


def _log2(scale) -> str:
    return f"2^{math.log2(scale):.3f}"


class HeBuilder:
    """Appends typed nodes; see the module docstring for the policy helpers.

    Args:
        params: the parameter set.
        options: `HeOptions` (rescale policy, allowed rotation keys).
        name, loc: name and source location of the program being built.
    """

    def __init__(self, params: Params, options: HeOptions = HeOptions(), name: str = "program", loc: str | None = None,
                 source: HeProgram | None = None):
        self.params = params
        self.options = options
        self.name = name
        self.loc = loc
        self.source = source
        self._source_types = {} if source is None else {n.id: n.type for n in source.nodes}
        self.nodes: list[HeNode] = []
        self._types: dict[int, HeType] = {}
        self._next_external = -1
        self._defaults: dict[str, Any] = {}
        self._step = 1  # primes per auto rescale (`composite`)
        self._scales: dict[int, float] = {}  # canonical scales inside `composite`

    # -- raw emission --------------------------------------------------------------------

    def type_of(self, vid: int) -> HeType:
        return self._types[vid]

    def loc_of(self, vid: int) -> str | None:
        return self.nodes[vid].loc if vid >= 0 else None

    def external(self, typ: HeType) -> int:
        """A value of a given type defined outside this builder (for dry runs); negative id."""
        vid = self._next_external
        self._next_external -= 1
        self._types[vid] = typ
        return vid

    def emit(self, op: HeOp, args: Iterable[int] = (), attrs: tuple[tuple[str, Any], ...] = (), loc: str | None = None) -> int:
        """Append one node after inferring its type; returns its value id.

        Raises what the type rule raises (a `FhecError` carrying `loc`, or `IRTypeError`).
        """
        args = tuple(args)
        attrs = self._with_defaults(op, attrs)
        attr_map = dict(attrs)  # read only, by the check and the type rule
        self._check_keyswitch(op, attr_map, args, loc)
        typ = infer_type(self.params, op, attr_map, tuple(self._types[a] for a in args), loc)
        self._check_allowed_keys(typ, op, loc)
        self._check_scale_fits(typ, loc)
        vid = len(self.nodes)
        self.nodes.append(HeNode(vid, op, args, attrs, typ, loc))
        self._types[vid] = typ
        return vid

    @contextmanager
    def defaults(self, stage: str | None = None, keyswitch: str | None = None) -> Iterator[None]:
        """Inside the block every emitted node gets the attribute ``stage`` (a recipe's
        phase, e.g. a bootstrap's "cts", which reports group costs by), and every key
        switch without its own ``keyswitch`` attribute gets `keyswitch` (when not None)."""
        saved = dict(self._defaults)
        self._defaults.update({k: v for k, v in (("stage", stage), ("keyswitch", keyswitch)) if v is not None})
        try:
            yield
        finally:
            self._defaults = saved

    @contextmanager
    def composite(self, bottom: int, bottom_scale: float, top: int, primes: int) -> Iterator[None]:
        """CKKS composite scaling inside the block: a level step is `primes` primes.

        Auto rescales (`after_multiply`) divide by `primes` primes in a row, alignments and
        constants aim at the composite canonical scales C(l) of the levels bottom,
        bottom + primes, ..., top: C(bottom) = `bottom_scale` and, going up,
        C(l + primes) = sqrt(C(l) · q_{l+1} ··· q_{l+primes}), so that a product of two
        values at C(l + primes) rescaled by those primes lands on C(l) exactly. (Defined
        upward from the bottom, each step takes a square root, which halves any drift from
        2^(primes·scale_bits); defined downward, squaring would double it per level.)
        With primes = 1 and bottom_scale = scale_at(bottom) this is the ordinary chain.
        """
        if (top - bottom) % primes or bottom < 0 or top > self.params.top_level:
            raise ht.IRTypeError(f"composite levels {bottom}..{top} are not a whole number of {primes}-prime steps")
        scales = {bottom: float(bottom_scale)}
        for level in range(bottom + primes, top + 1, primes):
            q = math.prod(float(rules.rescale_prime(self.params, j)) for j in range(level - primes + 1, level + 1))
            scales[level] = math.sqrt(scales[level - primes] * q)
        saved = (self._step, self._scales)
        self._step, self._scales = primes, scales
        try:
            yield
        finally:
            self._step, self._scales = saved

    @property
    def step(self) -> int:
        """Primes an auto rescale divides by: 1, or the composite step (`composite`)."""
        return self._step

    def canonical_scale(self, level: int) -> float:
        """The scale auto-mode values at `level` have: the parameters' `scale_at`, or
        inside `composite` the composite chain's."""
        if not self._scales:
            return float(self.params.scale_at(level))
        if level not in self._scales:
            raise ht.IRTypeError(f"level {level} is not a level of the composite chain {sorted(self._scales)}")
        return self._scales[level]

    def plain_scale_for(self, level: int, scale) -> float:
        """CKKS: the scale a constant multiplying a (level, scale) ciphertext is encoded at
        so that the product, rescaled by `step` primes, lands on the canonical scale there
        (`he_types.plain_scale_for` outside `composite`)."""
        if self._step == 1 or level - self._step not in self._scales:
            return ht.plain_scale_for(self.params, level, scale)
        q = math.prod(float(rules.rescale_prime(self.params, j)) for j in range(level - self._step + 1, level + 1))
        return self._scales[level - self._step] * q / float(scale)

    def _with_defaults(self, op: HeOp, attrs: tuple) -> tuple:
        if not self._defaults:
            return attrs
        extra = dict(attrs)
        if "stage" in self._defaults:
            extra.setdefault("stage", self._defaults["stage"])
        if "keyswitch" in self._defaults and op in KEY_SWITCHING_OPS and op is not HeOp.SWITCH_SECRET:  # hybrid
            extra.setdefault("keyswitch", self._defaults["keyswitch"])
        return attrs_of(**extra)

    def copy(self, node: HeNode, args: tuple[int, ...]) -> int:
        """Append `node` of the `source` program (the one being replayed, with the same
        params and options) on the mapped `args`; returns its value id.

        When every mapped argument has the type `node` was inferred from, the node keeps
        its type without re-inference: the type rule and the checks of `emit` are pure
        functions of those types, the attributes, the params and the options, and they
        passed when the source node was emitted. Otherwise (or with `defaults` in force,
        which may add attributes) it is `emit`.
        """
        if self.source is None or self._defaults:
            return self.emit(node.op, args, node.attrs, node.loc)
        types, source_types = self._types, self._source_types
        for new, old in zip(args, node.args):
            t, t_old = types[new], source_types[old]
            if t is not t_old and t != t_old:
                return self.emit(node.op, args, node.attrs, node.loc)
        vid = len(self.nodes)
        same = vid == node.id and args == node.args
        self.nodes.append(node if same else HeNode(vid, node.op, args, node.attrs, node.type, node.loc))
        types[vid] = node.type
        return vid

    def _check_keyswitch(self, op: HeOp, attrs: dict[str, Any], args: tuple[int, ...], loc: str | None) -> None:
        """CKKS: a key switch whose method (the node's ``keyswitch`` attribute or the
        parameters' method, both explicit choices) leaves no precision warns
        `PrecisionWarning` at its line (`fhec.schemes.precision`; running it raises)."""
        if op not in KEY_SWITCHING_OPS or not self.ckks:
            return
        t = self._types[args[0]]
        what = {HeOp.RELINEARIZE: "relinearization", HeOp.CONJUGATE: "conjugation",
                HeOp.SWITCH_SECRET: f"switch to the {attrs.get('to')} secret"}.get(op)
        what = what or f"rotation by {attrs.get('step')}"
        method = "hybrid" if op is HeOp.SWITCH_SECRET else ht.keyswitch_method(self.params, attrs)
        check_keyswitch(self.params, t.level, t.scale, t.noise, method, what, loc, strict=False)

    def _check_allowed_keys(self, typ: HeType, op: HeOp, loc: str | None) -> None:
        allowed = self.options.rotation_keys
        if allowed is None:
            return
        allowed_keys = {ht.rotation_key(self.params, k) for k in allowed}
        for key in typ.keys:
            if key.kind is KeyKind.ROTATION and key not in allowed_keys:
                raise MissingRotationKeyError(
                    f"{op.value} needs a rotation key for step {key.step}, but the program allows only "
                    f"rotation_keys={list(allowed)}; add {key.step} to rotation_keys, rotate by a sum of "
                    f"allowed steps, or use max_rotation_keys= to let the compiler decompose rotations.",
                    loc,
                )

    def _check_scale_fits(self, typ: HeType, loc: str | None) -> None:
        """CKKS: the value, |slot| <= typ.bound at this scale, must stay below Q_level / 2
        (`fhec.schemes.ranges`). `ScaleOverflowError` when even a message of magnitude 1
        does not fit (an unrescaled product), `ValueOverflowError` when the bound does not."""
        if not (self.ckks and typ.is_cipher):
            return
        log_q = self.params.log2_q_at(typ.level)
        if math.log2(typ.scale) + 1 >= log_q:
            raise ScaleOverflowError(
                f"the scale of this value, {_log2(typ.scale)}, reaches the modulus left at level {typ.level} "
                f"(2^{log_q:.1f}): it would not decrypt. Rescale products before multiplying them again "
                f"(x.rescale()), or use rescale='auto'.",
                loc,
            )
        limit = ranges.value_limit(self.params, typ.level, typ.scale, typ.noise)
        if typ.bound is not None and typ.bound > limit and typ.bound <= ranges.value_limit(
            self.params, typ.level, typ.scale
        ):
            # The message fits; its error tail does not. That is a precision failure (BV
            # key switching at small primes), which the precision guard reports
            # (`fhec.schemes.precision`: PrecisionError, or a warning, or nothing with
            # min_precision_bits=None), not a value overflow.
            limit = ranges.value_limit(self.params, typ.level, typ.scale)
        if typ.bound is not None and typ.bound > limit:
            p = self.params
            shown, fits = ranges.format_excess(typ.bound, limit)
            raise ValueOverflowError(
                f"this value can reach |slot| = {shown} (bounded from the inputs' declared "
                f"bounds and the constants), but at level {typ.level} with scale {_log2(typ.scale)} only "
                f"|slot| <= {fits} fits below Q_{typ.level}/2 = 2^{log_q - 1:.1f}; larger "
                f"values decrypt to garbage. Declare tighter input bounds (p.input(name, bound=...)), scale "
                f"large values down early (x * 0.01), use more levels (levels={p.levels + 1}) or base_limbs "
                f"(now {p.base_limbs}) for headroom, or lower scale_bits (now {p.scale_bits}).",
                loc,
            )

    def _check_level_left(self, a: int, loc: str | None, auto: bool | None) -> None:
        """Auto mode: a product that is not by an integer is rescaled (CKKS) or modulus-
        switched (BGV) at once (`after_multiply`), so its operand must not be at level 0
        (`LevelExhaustedError` naming the multiply, before the unrescaled product's scale
        could be reported as an overflow or the switch as the culprit)."""
        if not (self.auto if auto is None else auto):
            return
        if self._types[a].level < (self._step if self.ckks else 1):
            p = self.params
            verb = "rescaled" if self.ckks else "modulus-switched"
            raise LevelExhaustedError(
                f"this multiply is {verb} into the level below, but its operand is at level 0: the program "
                f"needs 1 more level here (more if later operations multiply again); use levels={p.levels + 1} "
                f"or more in the parameters (increase `levels`, now {p.levels}), or reduce the program's depth.",
                loc,
            )

    def scratch(self) -> "HeBuilder":
        """An empty builder with this one's parameters, options and policy state (the
        composite chain, the defaults): a recipe's what-if run (`he_polynomial`)."""
        other = HeBuilder(self.params, self.options, self.name, self.loc)
        other._step, other._scales, other._defaults = self._step, dict(self._scales), dict(self._defaults)
        return other

    def hint_noise(self, vid: int, noise: float) -> int:
        """Give the last emitted node, `vid`, the ``noise`` attribute `noise` (a recipe's
        tighter error estimate for its result, `he_types.with_noise_hint`); returns `vid`."""
        return self.hint(vid, noise=float(noise))

    def hint(self, vid: int, **hints: float) -> int:
        """Give the last emitted node, `vid`, the attributes `hints` (``noise``: a tighter
        error estimate for its result; ``bound``: a tighter value bound;
        `he_types.with_noise_hint`); returns `vid`. Only the last node: nothing has read
        its type yet."""
        node = self.nodes[-1]
        if node.id != vid:
            raise ht.IRTypeError(f"hint: node {vid} is not the last emitted ({node.id})")
        hints = {k: float(v) for k, v in hints.items()}
        if "bound" in hints and "bound" in node.attrs:  # a hint only tightens
            hints["bound"] = min(hints["bound"], float(node.attr("bound")))
        attrs = attrs_of(**{**dict(node.attrs), **hints})
        typ = ht.with_noise_hint(node.type, dict(attrs))
        self.nodes[-1] = HeNode(vid, node.op, node.args, attrs, typ, node.loc)
        self._types[vid] = typ
        return vid

    def program(self) -> HeProgram:
        """The nodes so far as an immutable program."""
        return HeProgram(self.name, self.params, tuple(self.nodes), self.options, self.loc)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo the nodes appended inside the block if it raises."""
        mark = len(self.nodes)
        try:
            yield
        except BaseException:
            for n in self.nodes[mark:]:
                del self._types[n.id]
            del self.nodes[mark:]
            raise

    # -- policy helpers -------------------------------------------------------------------

    @property
    def auto(self) -> bool:
        return self.options.rescale == "auto"

    @property
    def ckks(self) -> bool:
        return self.params.scheme == "ckks"

    def _describe(self, vid: int) -> str:
        t = self._types[vid]
        where = self.loc_of(vid)
        scale = _log2(t.scale) if self.ckks else f"factor {t.scale}"
        return f"the value from {where or 'the program'} (level {t.level}, scale {scale})"

    def two_parts(self, a: int, loc: str | None) -> int:
        """Relinearize a 3-part value (ops that key-switch or multiply need 2 parts)."""
        return self.emit(HeOp.RELINEARIZE, (a,), (), loc) if self._types[a].parts == 3 else a

    def after_multiply(self, a: int, loc: str | None, auto: bool | None = None) -> int:
        """In auto mode, rescale (CKKS) or modulus-switch (BGV) a fresh product."""
        if not (self.auto if auto is None else auto):
            return a
        for _ in range(self._step if self.ckks else 1):
            a = self.emit(HeOp.RESCALE if self.ckks else HeOp.MOD_SWITCH, (a,), (), loc)
        return a

    def level_down(self, a: int, level: int, scale=None, loc: str | None = None) -> int:
        """LEVEL_DOWN to `level` at `scale` (CKKS default: the level's canonical scale)."""
        if self.ckks:
            scale = float(self.canonical_scale(level) if scale is None else scale)
        else:
            scale = None
        return self.emit(HeOp.LEVEL_DOWN, (a,), attrs_of(level=level, scale=scale), loc)

    def align_factor(self, b: int, factor: int, loc: str | None) -> int:
        """BGV: give b the plaintext factor `factor` (no-op when it has it)."""
        fb = self._types[b].scale
        if fb == factor:
            return b
        c = rules.bgv_align_constant(self.params, fb, factor)
        return self.emit(HeOp.MUL_FACTOR, (b,), attrs_of(value=c), loc)

    def align_for_add(self, a: int, b: int, loc: str | None, auto: bool | None = None) -> tuple[int, int]:
        """Bring two ciphertexts to one level and matching scale / factor (see module doc)."""
        auto = self.auto if auto is None else auto
        ta, tb = self._types[a], self._types[b]
        if ta.level != tb.level:
            if not auto:
                low = min(ta.level, tb.level)
                raise LevelMismatchError(
                    f"cannot combine {self._describe(a)} with {self._describe(b)}: the operands are at different "
                    f"levels; bring the higher one down with .level_down({low}) (or .mod_switch()), "
                    f"or use rescale='auto'.",
                    loc,
                )
            if ta.level > tb.level:
                a = self.level_down(a, tb.level, tb.scale, loc)
            else:
                b = self.level_down(b, ta.level, ta.scale, loc)
            ta, tb = self._types[a], self._types[b]
        if self.ckks:
            if not rules.scales_match(self.params, ta.scale, tb.scale):
                raise ScaleMismatchError(
                    f"cannot add {self._describe(a)} and {self._describe(b)}: their scales differ; "
                    f"rescale() the product first, or use rescale='auto'.",
                    loc,
                )
            return a, b
        return a, self.align_factor(b, ta.scale, loc)

    def align_for_mul(self, a: int, b: int, loc: str | None, auto: bool | None = None) -> tuple[int, int]:
        """Two 2-part ciphertexts at one level; auto mode drops the higher onto the
        canonical scale of the lower level."""
        auto = self.auto if auto is None else auto
        a, b = self.two_parts(a, loc), self.two_parts(b, loc)
        ta, tb = self._types[a], self._types[b]
        if ta.level == tb.level:
            return a, b
        if not auto:
            raise LevelMismatchError(
                f"cannot multiply {self._describe(a)} by {self._describe(b)}: the operands are at different "
                f"levels; bring the higher one down with .level_down({min(ta.level, tb.level)}), "
                f"or use rescale='auto'.",
                loc,
            )
        if ta.level > tb.level:
            return self.level_down(a, tb.level, None, loc), b
        return a, self.level_down(b, ta.level, None, loc)

    # -- DSL-level operations (all take the location of the DSL statement) ---------------

    def add(
        self, a: int, b: int, loc: str | None, subtract: bool = False, auto: bool | None = None,
        bound: float | None = None,
    ) -> int:
        """a ± b. `bound`: a tighter CKKS value bound known by construction (a recipe's
        hint, applied by `he_types.with_noise_hint`)."""
        a, b = self.align_for_add(a, b, loc, auto)
        return self.emit(HeOp.SUB if subtract else HeOp.ADD, (a, b), self._hint(bound), loc)

    def _hint(self, bound: float | None, **attrs) -> tuple:
        if bound is not None and self.ckks:
            attrs["bound"] = float(bound)
        return attrs_of(**attrs)

    def add_plain(self, a: int, w: int, loc: str | None, subtract: bool = False) -> int:
        return self.emit(HeOp.SUB_PLAIN if subtract else HeOp.ADD_PLAIN, (a, w), (), loc)

    def add_const(self, a: int, value, loc: str | None, subtract: bool = False, bound: float | None = None) -> int:
        """a ± constant; `bound` as for `add`."""
        return self.emit(HeOp.SUB_CONST if subtract else HeOp.ADD_CONST, (a,), self._hint(bound, value=value), loc)

    def negate(self, a: int, loc: str | None) -> int:
        return self.emit(HeOp.NEG, (a,), (), loc)

    def multiply(self, a: int, b: int, loc: str | None, auto: bool | None = None,
                 coherent_square: bool = False) -> int:
        """ct × ct: align, MUL, and in auto mode RELINEARIZE and RESCALE / MOD_SWITCH.
        `coherent_square` (the DSL's `y * y`): a square's two cross terms carry one error,
        e·m·s twice, which the rule adds as independent (half a bit per squaring: eight
        squarings were estimated 2.3 bits above what was measured); a noise hint adds them
        coherently (CKKS)."""
        auto = self.auto if auto is None else auto
        a, b = self.align_for_mul(a, b, loc, auto)
        self._check_level_left(a, loc, auto)
        m = self.emit(HeOp.MUL, (a, b), (), loc)
        if coherent_square and a == b and self.ckks:
            t = self._types[a]
            square = nz.square_noise(t.noise, t.scale, nz.magnitude(t.bound))
            if square > self._types[m].noise:
                m = self.hint(m, noise=square)
        if auto:
            m = self.emit(HeOp.RELINEARIZE, (m,), (), loc)
        return self.after_multiply(m, loc, auto)

    def _plain_scale(self, a: int):
        t = self._types[a]
        return self.plain_scale_for(t.level, t.scale) if self.ckks else 1

    def multiply_plain(self, a: int, w: int, loc: str | None, auto: bool | None = None) -> int:
        self._check_level_left(a, loc, auto)
        m = self.emit(HeOp.MUL_PLAIN, (a, w), attrs_of(plain_scale=self._plain_scale(a)), loc)
        return self.after_multiply(m, loc, auto)

    def multiply_const(self, a: int, value, loc: str | None, auto: bool | None = None) -> int:
        """ct × constant. Python integers multiply exactly (no rescale); floats and arrays
        are encoded (`he_types.plain_scale_for`) and rescaled in auto mode."""
        if ht.is_int_scalar(value):
            return self.emit(HeOp.MUL_CONST, (a,), attrs_of(value=int(value), plain_scale=None), loc)
        self._check_level_left(a, loc, auto)
        m = self.emit(HeOp.MUL_CONST, (a,), attrs_of(value=value, plain_scale=self._plain_scale(a)), loc)
        return self.after_multiply(m, loc, auto)

    def rotate(self, a: int, step: int, loc: str | None) -> int:
        if step % ht.row_length(self.params) == 0:
            return a  # the identity; the evaluator needs no key for it either
        return self.emit(HeOp.ROTATE, (self.two_parts(a, loc),), attrs_of(step=int(step)), loc)

    def conjugate(self, a: int, loc: str | None) -> int:
        op = HeOp.CONJUGATE if self.ckks else HeOp.SWAP_ROWS
        return self.emit(op, (self.two_parts(a, loc),), (), loc)

    def rescale(self, a: int, loc: str | None) -> int:
        return self.emit(HeOp.RESCALE, (a,), (), loc)

    def mod_switch(self, a: int, loc: str | None) -> int:
        """Drop one level. In a CKKS auto-mode program this is a LEVEL_DOWN onto the
        lower level's canonical scale, which keeps the auto invariant (every value at a
        level has that level's scale)."""
        t = self._types[a]
        if self.ckks and self.auto:
            if t.level == 0:
                rules.check_level(self.params, 0, "mod_switch", loc)
            return self.level_down(a, t.level - 1, None, loc)
        return self.emit(HeOp.MOD_SWITCH, (a,), (), loc)

    def relinearize(self, a: int, loc: str | None) -> int:
        return self.two_parts(a, loc)

    def sum_slots(self, a: int, n: int, loc: str | None, stride: int = 1) -> int:
        """SUM_SLOTS(n); `stride` (in [1, row), a replicate's negative stride taken mod the
        row) is an attribute only when not 1."""
        extra = {"stride": int(stride)} if stride != 1 else {}
        return self.emit(HeOp.SUM_SLOTS, (self.two_parts(a, loc),), attrs_of(n=int(n), **extra), loc)

    def linear_transform(
        self, a: int, diagonals: tuple, loc: str | None, hoisting: str | None = None, n1: int | None = None
    ) -> int:
        """LINEAR_TRANSFORM of the diagonals; `hoisting` ("single" / "double" / "none") and
        the baby-step count `n1` are attributes only when given (None: the compile option
        decides the hoisting, `bsgs_split` the split)."""
        a = self.two_parts(a, loc)
        self._check_level_left(a, loc, None)
        ps = self._plain_scale(a)
        extra = {"hoisting": hoisting} if hoisting is not None else {}
        if n1 is not None:
            extra["n1"] = int(n1)
        m = self.emit(HeOp.LINEAR_TRANSFORM, (a,), attrs_of(diagonals=diagonals, plain_scale=ps, **extra), loc)
        return self.after_multiply(m, loc)

    def polynomial(self, a: int, coeffs: tuple, loc: str | None, basis: str = "power", domain=None) -> int:
        """POLYNOMIAL of a series (`fhec.ir.he_polynomial`); the basis and the domain are
        attributes only when not the defaults (power basis, no domain map)."""
        extra = {"basis": basis} if basis != "power" else {}
        if domain is not None:
            extra["domain"] = domain
        return self.emit(HeOp.POLYNOMIAL, (self.two_parts(a, loc),), attrs_of(coeffs=coeffs, **extra), loc)

    def bootstrap(self, a: int, loc: str | None) -> int:
        """BOOTSTRAP (CKKS with a `BootstrapConfig`; the frontend checks both first)."""
        return self.emit(HeOp.BOOTSTRAP, (self.two_parts(a, loc),), (), loc)
