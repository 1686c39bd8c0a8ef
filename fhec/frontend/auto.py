"""``fhec.Program(name, params="auto")``: parameters chosen when the program is compiled.

A program with automatic parameters is traced twice.

1. While the user's code runs, under *tracing parameters* (`trace_params`: a roomy,
   insecure set with `TRACE_LEVELS` levels), so that every DSL statement is checked at
   its line as usual; each successful statement is also written to the program's
   journal (`fhec.frontend.values._journaled`): the call, its raw arguments, its DSL
   line and the value it returned.
2. When the program is first used (`Program.ir`, `fhec.compile`...), `resolve` measures
   the traced program's multiplicative depth and largest value, chooses parameters with
   `CKKSParams.for_program` / `BGVParams.for_program` (taking the compile target's ring
   degrees and word size into account), and replays the journal into a fresh `Program`
   under them, every statement at its own DSL line. The replayed program is what runs:
   it means exactly what the same code means written with those parameters (``x.sum()``
   sums the chosen N/2 slots, scalars fill them).

A statement whose meaning depends on absolute levels (``p.input(name, level=...)``,
``x.level_down(l)``, ``rescale="manual"``) is refused in an automatic program: the
levels do not exist until the parameters are chosen. Handles (`Cipher`) keep the
tracing parameters' levels and scales; the program's `params` and `ir` are the chosen ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from fhec.errors import ParameterError, ProgramError, SlotCountError, TargetError, TooManyValuesError
from fhec.frontend.location import end_replay, replaying_at
from fhec.schemes.auto_params import (
    _chain_precision,
    bgv_for_program,
    ckks_for_program,
    explain_bgv,
    explain_ckks,
)
from fhec.schemes.params import MAX_N, MIN_SCALE_BITS, BGVParams, CKKSParams, _check_word_bits
from fhec.validate import as_choice, as_int, as_optional_int, as_real

TRACE_LEVELS = 30
"""Levels of the tracing parameters: the deepest program an automatic program may be."""

TRACE_N = 2**16
"""Ring degree of the CKKS tracing parameters (32,768 slots: the longest vector a statement
may use while tracing; BGV: the largest N that batches t, at most this)."""


@dataclass(frozen=True)
class AutoParams:
    """What an automatic program asks of its parameters (``params="auto"`` is
    ``AutoParams()``): the scheme, the CKKS precision of its outputs in bits, the BGV
    plaintext modulus, the security level (None: insecure, for toys), the machine word
    and the smallest ring degree. See `CKKSParams.for_program`.

    Raises `ParameterError` for a value `for_program` would refuse.
    """

    scheme: str = "ckks"
    precision_bits: float = 12.0
    security: int | None = 128
    word_bits: int = 32
    plain_modulus: int = 65537
    min_N: int | None = None

    def __post_init__(self) -> None:
        as_choice(self.scheme, "scheme", ("ckks", "bgv"))
        as_real(self.precision_bits, "precision_bits", min=1.0, max=60.0, fix="the bits of precision, e.g. 12")
        if self.scheme == "bgv" and self.precision_bits != 12.0:
            raise ParameterError(f"precision_bits={self.precision_bits!r} is a CKKS setting: BGV computes exactly mod "
                                 f"plain_modulus; leave it out for scheme=\"bgv\".")
        if self.security is not None:
            as_int(self.security, "security", fix="128, 192 or 256 bits, or None for insecure toy parameters")
        _check_word_bits(self.word_bits)
        as_int(self.plain_modulus, "plain_modulus", min=3, fix="a prime t ≡ 1 mod 2N such as 65537")
        as_optional_int(self.min_N, "min_N", min=2, max=MAX_N, fix="a power of two")


def as_auto(params) -> AutoParams | None:
    """The `AutoParams` that ``params`` asks for ("auto" or an `AutoParams`), else None."""
    if isinstance(params, AutoParams):
        return params
    if isinstance(params, str) and params == "auto":
        return AutoParams()
    return None


@lru_cache(maxsize=8)
def trace_params(auto: AutoParams):
    """The roomy, insecure parameters an automatic program is traced under (immutable,
    so shared by every program asking the same)."""
    word = auto.word_bits
    if auto.scheme == "ckks":
        return CKKSParams(N=TRACE_N, levels=TRACE_LEVELS, scale_bits=max(MIN_SCALE_BITS, min(30, word - 2)),
                          word_bits=word,
                          base_limbs=2, security=None, min_precision_bits=None)
    t = auto.plain_modulus
    batching = (t - 1) & -(t - 1)
    return BGVParams(N=max(2, min(TRACE_N, batching // 2)), levels=TRACE_LEVELS, plain_modulus=t, word_bits=word,
                     security=None)


def measure(ir) -> tuple[int, float]:
    """(multiplicative depth, largest CKKS value bound) of a traced program."""
    ciphers = [n.type for n in ir.nodes if n.type.is_cipher]
    depth = ir.params.top_level - min((t.level for t in ciphers), default=ir.params.top_level)
    bound = max((t.bound for t in ciphers if t.bound is not None), default=1.0)
    return depth, max(bound, 1.0)


def choose(auto: AutoParams, depth: int, max_value: float, min_N: int, word_bits: int):
    """The parameter set `for_program` chooses (without printing)."""
    if auto.scheme == "ckks":
        return ckks_for_program(depth, auto.precision_bits, auto.security, word_bits, max_value=max_value,
                                min_N=min_N, explain=False)
    return bgv_for_program(depth, auto.plain_modulus, auto.security, word_bits, min_N=min_N, explain=False)


def explanation(auto: AutoParams, params, depth: int, max_value: float) -> str:
    if auto.scheme == "ckks":
        return explain_ckks(params, depth, auto.precision_bits, _chain_precision(params, depth), max_value)
    return explain_bgv(params, depth)


def resolve(program, target=None):
    """The `Program` an automatic `program` stands for (module doc), for `target` (a
    `Target` or None). Prints the one-line explanation of the choice. Raises what
    `for_program` raises when no parameters fit, and whatever a replayed statement
    raises under the chosen parameters (at its own DSL line)."""
    auto = program._auto
    depth, max_value = measure(program._traced_ir())
    wanted = [n for n in (auto.min_N, None if target is None else target.n_min) if n is not None]
    min_N = max(wanted) if wanted else None
    word_bits = min(auto.word_bits, target.word_bits) if target is not None else auto.word_bits
    chosen = {}
    while True:
        params = choose(auto, depth, max_value, min_N, word_bits)
        if params in chosen.values():
            break
        try:
            replayed = replay(program, params)
        except (TooManyValuesError, SlotCountError):
            if params.N >= MAX_N:
                raise
            # a vector or a slot count (sum_slots(n)) beyond these slots: the next ring holds twice as many
            min_N = params.N * 2
            continue
        chosen[max_value] = params
        # Value bounds such as a sum over every slot depend on N: measured while tracing
        # (32,768 slots) they overstate q_0's need; re-choose with the replayed program's.
        _, replayed_max = measure(replayed.ir)
        if replayed_max >= max_value:
            break
        max_value = replayed_max
    print(explanation(auto, params, depth, max_value))
    if target is not None and params.N > target.n_max:
        raise TargetError(
            f"params=\"auto\" needs N = {params.N} for this program (the choice above), "
            f"but target {target.name!r} runs N <= {target.n_max}: ask for less ({_less(auto)} or, for a test "
            f"machine, security=None) or compile for a larger target.", program._builder.loc)
    return replayed


def _less(auto) -> str:
    """What asks for a smaller ring: CKKS less precision; BGV a smaller t or fewer
    products in a row (its depth sets the modulus)."""
    if auto.scheme == "ckks":
        return "fhec.AutoParams(precision_bits=...)"
    return "a smaller plain_modulus in fhec.AutoParams(scheme=\"bgv\", plain_modulus=...), fewer products in a row"


def replay(program, params):
    """`program`'s journal replayed into a new `Program` under `params`."""
    from fhec.frontend.program import Program
    from fhec.frontend.values import _Handle

    o = program._builder.options
    new = Program(program.name, params, rescale=o.rescale, rotation_keys=o.rotation_keys,
                  max_rotation_keys=o.max_rotation_keys, loc=program._builder.loc)
    handles: dict[int, object] = {}

    def mapped(value):
        return handles[value._id] if isinstance(value, _Handle) else value

    for kind, receiver, name, args, kwargs, loc, result in program._journal:
        token = replaying_at(loc)
        try:
            target = new if kind == "program" else handles[receiver]
            out = getattr(target, name)(*[mapped(a) for a in args], **{k: mapped(v) for k, v in kwargs.items()})
        finally:
            end_replay(token)
        if result is not None:
            handles[result] = out
    return new


def refuse_levels(what: str, where) -> None:
    """Raise the `ProgramError` for a statement that names absolute levels."""
    raise ProgramError(
        f"{what} names a level, but a params='auto' program has no levels until its parameters are chosen at "
        f"compile time; drop it (fhec places rescales and level changes itself), or give explicit parameters "
        f"(fhec.CKKSParams.for_program(depth, ...) chooses them for you).",
        where,
    )


__all__ = ["AutoParams", "TRACE_LEVELS", "resolve"]
