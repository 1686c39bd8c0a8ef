"""`fhec.Program`, the object a DSL program is traced into, and the `@fhec.program` decorator.

    p = fhec.Program("matvec", fhec.CKKSParams(N=2**14, levels=16, security=None))
    rows = [p.input(f"row{i}") for i in range(4)]
    v = p.input("v")
    for i in range(4):
        p.output(f"y{i}", (rows[i] * v).sum_slots())

A `Program` grows as the Python code runs; `p.ir` is an immutable, verified
`HeProgram` snapshot of it, which is what passes, `fhec.reference` and
`fhec.evaluate` consume (they accept a `Program` too). ``print(p)`` shows the typed IR.
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
from typing import Any, Callable, Iterable

import numpy as np

from fhec.errors import (
    MixedProgramsError,
    PlaintextOperandError,
    ParametersChangedWarning,
    PrecisionWarning,
    ProgramError,
    UnhashableProgramError,
    UnsetOutputError,
    warn_at,
)
from fhec.frontend.auto import AutoParams, as_auto, refuse_levels, resolve, trace_params
from fhec.frontend.location import caller_location, format_location
from fhec.frontend.signatures import checked_calls
from fhec.frontend.values import Cipher, Plain, _Handle
from fhec.ir.he import HeOp, HeOptions, HeProgram, RESCALE_POLICIES, attrs_of
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_types import NOISE_SATURATION_BITS, noise_saturated
from fhec.ir.he_verify import verify_by_default, verify_he
from fhec.schemes.params import BGVParams, CKKSParams
from fhec.schemes.ranges import DEFAULT_BOUND
from fhec.validate import as_int_list, as_optional_int, is_int


def _options(rescale: str, rotation_keys, max_rotation_keys, where) -> HeOptions:
    if not isinstance(rescale, str) or rescale not in RESCALE_POLICIES:
        raise ProgramError(f"rescale={rescale!r}: choose 'auto' or 'manual'.", where)
    if rotation_keys is not None:
        rotation_keys = as_int_list(rotation_keys, "rotation_keys", error=ProgramError, where=where)
    max_rotation_keys = as_optional_int(max_rotation_keys, "max_rotation_keys", min=1, error=ProgramError,
                                        where=where)
    return HeOptions(rescale, rotation_keys, max_rotation_keys)


@checked_calls
class Program:
    """A CKKS or BGV program traced from Python.

    Args:
        name: the program's name.
        params: a `CKKSParams` or `BGVParams`; or ``"auto"`` (an `AutoParams` for
            more control) to have them chosen when the program is compiled or run
            (`fhec.frontend.auto`: depth and value range measured, N, levels, scale and
            primes chosen by `CKKSParams.for_program`, for the target's ring degrees).
        rescale: "auto" (rescale / modulus-switch after multiplies and align operands
            automatically, as OpenFHE FLEXIBLEAUTO and Lattigo do) or "manual".
        rotation_keys: if given, the only rotation steps keys may exist for; any other
            rotation raises `MissingRotationKeyError` at the line that asks for it.
        max_rotation_keys: if given, rotation-key planning decomposes rotations so that
            at most this many rotation keys are needed.
        loc: source location to record (default: the line creating the program).

    Raises `ProgramError` for bad arguments.
    """

    def __hash__(self):  # mutable while tracing; equality is structural
        raise UnhashableProgramError(
            f"a Program is mutable while it is traced, so it cannot be a dict key or set member; key by its name "
            f"({self.name!r}) or use id(program)."
        )

    def __init__(
        self,
        name: str,
        params: CKKSParams | BGVParams | str | AutoParams,
        *,
        rescale: str = "auto",
        rotation_keys: Iterable[int] | None = None,
        max_rotation_keys: int | None = None,
        loc: str | None = None,
    ):
        where = loc or caller_location()
        if not isinstance(name, str) or not name:
            raise ProgramError(f"the program name must be a non-empty string, got {name!r}.", where)
        self._auto = as_auto(params)
        self._journal: list | None = None if self._auto is None else []
        self._journal_depth = 0
        self._resolved: dict = {}
        if self._auto is not None:
            if rescale != "auto":
                refuse_levels(f"rescale={rescale!r}", where)
            params = trace_params(self._auto)
        if not isinstance(params, (CKKSParams, BGVParams)):
            raise ProgramError(
                f"params must be fhec.CKKSParams(...), fhec.BGVParams(...) or 'auto', got {type(params).__name__}.",
                where,
            )
        options = _options(rescale, rotation_keys, max_rotation_keys, where)
        self._builder = HeBuilder(params, options, name, where)
        self._snapshot: HeProgram | None = None
        self._offsets_cache: dict = {}  # `fhec.frontend.correlation`: node id -> error offsets

    @classmethod
    def _from_ir(cls, ir: HeProgram) -> "Program":
        """A Program holding an existing (verified) HE program; tracing may continue on it."""
        p = cls.__new__(cls)
        p._auto, p._journal, p._journal_depth, p._resolved = None, None, 0, {}
        if any(n.id != i for i, n in enumerate(ir.nodes)):
            ir = _renumbered(ir)
        b = HeBuilder(ir.params, ir.options, ir.name, ir.loc)
        for n in ir.nodes:
            b.nodes.append(n)
            b._types[n.id] = n.type
        p._builder = b
        p._snapshot = ir
        p._offsets_cache = {}
        return p

    # -- properties -----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._builder.name

    @property
    def params(self):
        """The parameter set (of an automatic program: the chosen one, `resolved`)."""
        return self._builder.params if self._auto is None else self.resolved().params

    @property
    def is_auto(self) -> bool:
        """True for a ``params="auto"`` program (parameters chosen at compile time)."""
        return self._auto is not None

    def resolved(self, target=None) -> "Program":
        """This program itself, or for an automatic program the program it stands for
        under the parameters chosen for `target` (a `Target`, or None for any):
        `fhec.frontend.auto.resolve`, kept until the program grows. Once chosen, the
        parameters stay as long as they suit the target asked for, so that
        `fhec.reference`, `fhec.evaluate` and a compiled run of one program all see the
        same slots."""
        if self._auto is None:
            return self
        latest = self._resolved.get(len(self._journal))
        if latest is not None:
            p = latest.params
            if target is None or (target.supports(p.N) and p.word_bits <= target.word_bits):
                return latest
        chosen = resolve(self, target)
        if latest is not None and chosen.params.slots != latest.params.slots:
            # not silent: a Compiled for the earlier target keeps its own slots, but
            # fhec.reference and fhec.evaluate of this program now mean the new ones
            warn_at(f"params=\"auto\" chose N = {chosen.params.N} for target {target.name!r}, which cannot run "
                    f"the earlier choice N = {p.N}: this program now has {chosen.params.slots} slots instead of "
                    f"{p.slots}, so its rotations and sums wrap elsewhere and fhec.reference / fhec.evaluate of "
                    f"it no longer match a program compiled before. Ask for N >= {chosen.params.N} "
                    f"(AutoParams(min_N={chosen.params.N})) to keep one meaning for every target.", ParametersChangedWarning, self._builder.loc)
        self._resolved = {len(self._journal): chosen}
        return chosen

    def _traced_ir(self) -> HeProgram:
        """The program as traced (for an automatic program: under the tracing parameters)."""
        if self._snapshot is None or len(self._snapshot.nodes) != len(self._builder.nodes):
            snapshot = self._builder.program()
            self._snapshot = verify_he(snapshot) if verify_by_default() else snapshot
        return self._snapshot

    def _record(self, name: str, args: tuple, kwargs: dict, where, result) -> None:
        if self._journal is not None:
            self._journal.append(("program", None, name, args, kwargs, where, result))

    @property
    def options(self) -> HeOptions:
        return self._builder.options

    @property
    def ir(self) -> HeProgram:
        """The immutable HE program traced so far (of an automatic program: under the
        chosen parameters, `resolved`); typed by construction, and verified too when
        verification is on (`fhec.ir.he_verify.verify_by_default`)."""
        return self._traced_ir() if self._auto is None else self.resolved().ir

    # -- declarations -----------------------------------------------------------------------

    def _check_name(self, name: str, kind: str, taken: Iterable[str], where) -> None:
        """`kind`: "input" or "output"."""
        if not isinstance(name, str) or not name:
            raise ProgramError(f"{kind} names must be non-empty strings (p.{kind}(\"x\", ...)), got {name!r:.60}.",
                               where)
        if name in taken:
            raise ProgramError(f"program {self.name!r} already has an {kind} named {name!r}; choose another name.",
                               where)

    def _input_names(self) -> set[str]:
        return {n.attr("name") for n in self._builder.nodes if n.op in (HeOp.INPUT, HeOp.PLAIN_INPUT)}

    def input(self, name: str, level: int | None = None, *, bound: float | None = None) -> Cipher:
        """Declare an encrypted input, fresh at `level` (default: the top level).

        `bound` (CKKS): the largest |slot value| the input will hold (default 1). The
        compiler propagates it to every value and raises `ValueOverflowError` at the
        line whose value could outgrow the modulus left at its level; encryption checks
        the actual values against it.

        Raises `ProgramError` for a duplicate name, a level outside 0..levels, or a bad bound.
        """
        where = caller_location()
        self._check_name(name, "input", self._input_names(), where)
        if self._auto is not None and level is not None:
            refuse_levels(f"input {name!r}: level={level!r}", where)
        top = self._builder.params.top_level
        level = top if level is None else level
        if not is_int(level) or not 0 <= level <= top:
            raise ProgramError(f"input {name!r}: level={level!r} must be an integer between 0 and {top}.", where)
        level = int(level)
        extra = self._bound_attr(name, bound, where)
        vid = self._builder.emit(HeOp.INPUT, (), attrs_of(name=name, level=level, **extra), where)
        self._record("input", (name,), {} if bound is None else {"bound": bound}, where, vid)
        return Cipher(self, vid)

    def plain(self, name: str, *, bound: float | None = None) -> Plain:
        """Declare an unencrypted input vector (given at run time, encoded where used).
        `bound` (CKKS) as for `input`: its largest |slot value| (default 1)."""
        where = caller_location()
        self._check_name(name, "input", self._input_names(), where)
        extra = self._bound_attr(name, bound, where)
        vid = self._builder.emit(HeOp.PLAIN_INPUT, (), attrs_of(name=name, **extra), where)
        self._record("plain", (name,), {} if bound is None else {"bound": bound}, where, vid)
        return Plain(self, vid)

    def _bound_attr(self, name: str, bound, where) -> dict:
        """The ``bound`` attribute of an input: absent for the default (so programs
        that declare none print and serialize as before), a positive float otherwise."""
        if bound is None:
            return {}
        if self._builder.params.scheme != "ckks":
            raise ProgramError(
                f"input {name!r}: bound= is a CKKS notion; BGV computes exactly on integers mod t. Drop it.", where
            )
        ok = isinstance(bound, (int, float, np.integer, np.floating)) and not isinstance(bound, bool)
        if not ok or not math.isfinite(float(bound)) or float(bound) <= 0:
            raise ProgramError(f"input {name!r}: bound={bound!r} must be a positive finite number.", where)
        return {} if float(bound) == DEFAULT_BOUND else {"bound": float(bound)}

    def output(self, name: str, value: Cipher) -> None:
        """Name a result of the program.

        Raises `UnsetOutputError` for None, `PlaintextOperandError` for a plain input or a
        constant, `MixedProgramsError` for a value of another program, `ProgramError` for
        a duplicate name.
        """
        where = caller_location()
        outputs = [n.attr("name") for n in self._builder.nodes if n.op is HeOp.OUTPUT]
        self._check_name(name, "output", outputs, where)
        if value is None:
            raise UnsetOutputError(
                f"output {name!r} is given None: no value was ever computed for it; assign the result "
                f"of an operation on the program's inputs before calling p.output({name!r}, ...).",
                where,
            )
        if isinstance(value, _Handle) and value._program is not self:
            raise MixedProgramsError(
                f"output {name!r} of program {self.name!r} is a value of program {value._program.name!r} "
                f"(from {value.loc}); compute it from this program's inputs.",
                where,
            )
        if not isinstance(value, Cipher):
            what = "the plain input" if isinstance(value, Plain) else f"a {type(value).__name__}"
            raise PlaintextOperandError(
                f"output {name!r} must be a ciphertext, but it is {what}; outputs are encrypted results "
                f"computed from the program's encrypted inputs.",
                where,
            )
        self._builder.emit(HeOp.OUTPUT, (value.id,), attrs_of(name=name), where)
        if self._auto is None:  # an automatic program's replay under its chosen parameters warns
            self._warn_if_noise(name, value, where)
        self._record("output", (name, value), {}, where, None)

    def _warn_if_noise(self, name: str, value: Cipher, where: str | None) -> None:
        """CKKS: a `PrecisionWarning` when an output's estimated worst-slot precision is
        below 1 bit (its error swamps the value), whatever the parameters'
        ``min_precision_bits`` (None turns off the refusal of an explicit BV key switch, not
        this: an output of noise is never returned silently); BGV: when its estimated noise
        budget is below 1 bit. A warning, not an error: the estimate is an upper bound on the
        error and can be pessimistic."""
        params = self._builder.params
        if params.scheme == "bgv":
            budget = value.estimated_bits
            if budget < 1.0:  # measured: estimates of 0 bits and below fail to decrypt, 0.6 may still work
                warn_at(f"output {name!r} has an estimated noise budget of {budget:.1f} bits: its noise is "
                        f"likely to overflow the modulus, and decrypting it to raise NoiseBudgetExhaustedError. "
                        f"Use more levels (levels=...), a smaller plain_modulus, or fewer products in a row.",
                        PrecisionWarning, where)
            return
        bits = value.estimated_bits
        if bits < 1.0:
            # attributed to the output's line, not to a frame count (`checked_calls` wraps the method)
            warn_at(
                f"{where + ': ' if where else ''}output {name!r} has {_low_precision(params, value, bits)}. Use more "
                f"precise parameters (a larger scale, hybrid key switching, fewer operations between rescales) or "
                f"check the run against fhec.reference.", PrecisionWarning, where, stacklevel=4)

    # -- views --------------------------------------------------------------------------------

    def __str__(self) -> str:
        return str(self.ir)

    def _repr_html_(self) -> str:
        return self.ir._repr_html_()

    def __repr__(self) -> str:
        p = self._builder.params
        ring = f"N={p.N}" if self._auto is None else "params=auto"
        return f"<fhec.Program {self.name!r}: {len(self._builder.nodes)} nodes, {p.scheme}, {ring}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Program):
            return self.ir == other.ir
        if isinstance(other, HeProgram):
            return self.ir == other
        return NotImplemented

    def to_json(self) -> str:
        """JSON text of the program (`fhec.ir.he_json`)."""
        return self.ir.to_json()

    @classmethod
    def from_json(cls, text: str) -> "Program":
        """Read a program written by `to_json` (verified; `InternalError` if inconsistent)."""
        return cls._from_ir(HeProgram.from_json(text))


def _low_precision(params, value: Cipher, bits: float) -> str:
    """What a CKKS output estimated below 1 bit has, for its `PrecisionWarning`."""
    bound = value.bound
    if noise_saturated(params, value.type):
        # the cap cut the estimate off: it bounds nothing, so no precision may be derived
        # from it, relative to the values or otherwise (x * 2**63 claimed 44.2 bits, measured 21.9)
        reach = f" (up to {bound:.3g})" if bound is not None else ""
        return (f"no estimated precision: its error estimate saturated (fhec stops tracking an error beyond "
                f"2^{NOISE_SATURATION_BITS:.0f}) and bounds nothing, so the error may be as large as the values{reach} "
                f"or larger")
    # the estimate is absolute (fhec's precision assumes values about 1): for an output
    # proven to reach far beyond 1, say what that error is against its largest values
    relative = bits + math.log2(bound) if bound is not None and bound > 2.0 else None
    if relative is not None and relative >= 1.0:
        return (f"an estimated worst-slot error of 2^{-bits:.1f} ({bits:.1f} bits of precision); its values "
                f"may reach {bound:.3g}, and against those that is {relative:.1f} bits, but a slot whose "
                f"value lies below about 2^{-bits:.1f} is swamped")
    return f"an estimated worst-slot precision of {bits:.1f} bits: its error may swamp the value"


def _renumbered(ir: HeProgram) -> HeProgram:
    """The same program with ids 0..n-1 (passes may leave gaps)."""
    from dataclasses import replace

    new_id = {n.id: i for i, n in enumerate(ir.nodes)}
    nodes = tuple(replace(n, id=new_id[n.id], args=tuple(new_id[a] for a in n.args)) for n in ir.nodes)
    return replace(ir, nodes=nodes)


def as_he_program(program: Program | HeProgram) -> HeProgram:
    """The `HeProgram` of a `Program` (or the argument itself)."""
    if isinstance(program, Program):
        return program.ir
    if isinstance(program, HeProgram):
        return program
    raise ProgramError(
        f"expected an fhec.Program (or a function decorated with @fhec.program), got {type(program).__name__} "
        f"{_short(program)}; build one with fhec.Program(name, params) or load it with fhec.Program.from_json."
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _input_kind(annotation: Any) -> str | None:
    """"plain", "cipher" (also for no annotation) or None (an annotation that is neither)."""
    if annotation is inspect.Parameter.empty:
        return "cipher"
    for kind, cls in (("plain", Plain), ("cipher", Cipher)):
        if annotation is cls or (isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] == cls.__name__):
            return kind
    return None


def _input_of(p: "Program", fn, param: inspect.Parameter, annotation: Any, where):
    """The traced input for one parameter of an ``@fhec.program`` function, or a
    `ProgramError` naming the parameter when it cannot be an input."""
    pname = param.name
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
        raise ProgramError(
            f"@fhec.program function {fn.__name__!r}: {'*' if param.kind is param.VAR_POSITIONAL else '**'}{pname} "
            f"cannot be an input; declare each input as a named parameter, or build the program with "
            f"fhec.Program and p.input(...) in a loop.", where)
    if param.default is not param.empty:
        raise ProgramError(
            f"@fhec.program function {fn.__name__!r}: parameter {pname!r} has a default ({param.default!r:.40}), "
            f"but every parameter is an input; bind settings with a closure or functools.partial before "
            f"decorating.", where)
    kind = _input_kind(annotation)
    if kind is None:
        raise ProgramError(
            f"@fhec.program function {fn.__name__!r}: parameter {pname!r} is annotated {annotation!r:.40}; "
            f"parameters are inputs, annotated fhec.Cipher (or not at all) for encrypted ones and fhec.Plain "
            f"for plain ones.", where)
    return p.plain(pname) if kind == "plain" else p.input(pname)


def program(
    params: CKKSParams | BGVParams | str | AutoParams,
    *,
    name: str | None = None,
    rescale: str = "auto",
    rotation_keys: Iterable[int] | None = None,
    max_rotation_keys: int | None = None,
) -> Callable[[Callable[..., Any]], Program]:
    """Decorator: trace a function into a `Program` at once.

    Arguments annotated `fhec.Plain` become plain inputs, all others encrypted inputs
    (named after the parameters). The function returns a `Cipher` (output "out"), a
    tuple/list of them ("out0", "out1", ...) or a dict name -> Cipher.

        @fhec.program(fhec.CKKSParams(N=2**13, levels=4))
        def f(x: fhec.Cipher, w: fhec.Plain):
            return x * w + x.rotate(2)

    Raises `UnsetOutputError` when the function returns None (naming its ``def`` line),
    and whatever tracing the body raises.
    """

    if callable(params) and hasattr(params, "__code__"):  # @fhec.program without its parentheses
        raise ProgramError(
            f"@fhec.program needs the parameters: write @fhec.program(fhec.CKKSParams(...)) (or "
            f"@fhec.program(\"auto\")) above def {params.__name__}.", caller_location())

    def trace(fn: Callable[..., Any]) -> Program:
        # a functools.partial binds settings (docs/dsl.md): trace the function it wraps, with
        # the parameters it leaves open as the inputs
        base = fn.func if isinstance(fn, functools.partial) else fn
        bound = set(fn.keywords) if isinstance(fn, functools.partial) else set()
        code = getattr(base, "__code__", None)
        if code is None:
            raise ProgramError(
                f"@fhec.program(...) decorates a Python function (def f(x): ...), not {type(fn).__name__} {fn!r:.40}.",
                caller_location(),
            )
        where = format_location(code.co_filename, code.co_firstlineno)
        p = Program(name or base.__name__, params, rescale=rescale, rotation_keys=rotation_keys,
                    max_rotation_keys=max_rotation_keys, loc=where)
        try:
            hints = typing.get_type_hints(base)
        except Exception:  # unresolvable string annotations: fall back to their text
            hints = {}
        args, kwargs = [], {}
        for pname, param in inspect.signature(fn).parameters.items():
            if pname in bound:
                continue
            value = _input_of(p, base, param, hints.get(pname, param.annotation), where)
            if param.kind is param.KEYWORD_ONLY:
                kwargs[pname] = value
            else:
                args.append(value)
        result = fn(*args, **kwargs)
        if result is None:
            raise UnsetOutputError(
                f"@fhec.program function {base.__name__!r} returned None; return the result ciphertext "
                f"(or a tuple / dict of them).",
                where,
            )
        if isinstance(result, dict):
            items = list(result.items())
        elif isinstance(result, (tuple, list)):
            items = [(f"out{i}", r) for i, r in enumerate(result)]
        else:
            items = [("out", result)]
        for out_name, value in items:
            p.output(out_name, value)
        return p

    return trace
