"""The plaintext semantics of an HE program: the spec every other execution path
(eager evaluator, compiled limb programs, emitted streams) is checked against.

CKKS values are float64 slot vectors (real arithmetic; conjugation is the identity on
reals); BGV values are int64 slot vectors mod t, arranged as two rows of N/2 that
rotations cycle separately and `swap_rows` exchanges. Rescaling, modulus switching,
level changes, relinearization and plaintext-factor alignment do not change a value.
Inputs shorter than the slot count are zero-padded; a scalar fills every slot.

This module deliberately shares no code with the recipes of `fhec.ir.he_recipes`:
SUM_SLOTS is a windowed prefix sum, POLYNOMIAL is Horner's rule or numpy's own
Polynomial / Chebyshev series (BGV: the Chebyshev three-term recurrence mod t).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from fhec.errors import BootstrapError, InternalError, InvalidPlaintextError, MissingInputError, PrecisionError
from fhec.validate import as_1d_array, as_mapping
from fhec.frontend import constants
from fhec.ir.he import Const, HeNode, HeOp, HeProgram
from fhec.ir.he_verify import check_complete
from fhec.passes.he_rewrite import as_he
from fhec.schemes.params import Params


def normalize_inputs(program, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every input (encrypted and plain) as a full slot vector: float64 (CKKS) or int64
    in [0, t) (BGV).

    Raises `MissingInputError` for a missing or unknown name, `TooManyValuesError` for
    more values than slots and `InvalidPlaintextError` for non-real / non-integer
    values; errors name the line declaring the input.
    """
    program = as_he(program)
    params = program.params
    inputs = as_mapping(inputs, "inputs", error=MissingInputError, where=program.loc,
                        fix=f"give every input of program {program.name!r} by name")
    declared = {**program.inputs, **program.plain_inputs}
    unknown = sorted(set(inputs) - set(declared), key=repr)
    if unknown:
        raise MissingInputError(
            f"program {program.name!r} has no input named {unknown[0]!r}; its inputs are {sorted(declared)}.",
            program.loc,
        )
    out = {}
    for name, node in declared.items():
        if name not in inputs:
            raise MissingInputError(
                f"input {name!r} of program {program.name!r} has no value; pass it in inputs={{{name!r}: ...}}.",
                node.loc,
            )
        value = as_1d_array(inputs[name], f"input {name!r}", error=InvalidPlaintextError, where=node.loc)
        if value.ndim == 0:
            value = np.full(params.slots, value, dtype=value.dtype)
        elif value.size == 0:  # zero-padding nothing would silently run on all zeros
            raise InvalidPlaintextError(
                f"input {name!r} of program {program.name!r} is an empty vector; give it 1 to {params.slots} values "
                f"(fewer are zero-padded to the {params.slots} slots) or one number for every slot.",
                node.loc,
            )
        out[name] = constants.vector(params, value, node.loc, f"input {name!r}")
    return out


# -- modular helpers (BGV) --------------------------------------------------------------


def _mod(params: Params, x: np.ndarray) -> np.ndarray:
    return np.mod(x, params.plain_modulus) if params.scheme == "bgv" else x


def _mul(params: Params, a, b) -> np.ndarray:
    if params.scheme == "ckks":
        return a * b
    t = params.plain_modulus
    # Products of residues below 2^31 fit int64; larger t goes through Python integers.
    if t < 2**31:
        return np.mod(np.asarray(a, dtype=np.int64) * np.asarray(b, dtype=np.int64), t)
    prod = np.asarray(a, dtype=object) * np.asarray(b, dtype=object)
    return np.mod(prod, t).astype(np.int64)


def _const(params: Params, value) -> np.ndarray | int | float:
    if isinstance(value, Const):
        return value.array
    return value % params.plain_modulus if params.scheme == "bgv" else value


def _rotate(params: Params, x: np.ndarray, k: int) -> np.ndarray:
    if params.scheme == "ckks":
        return np.roll(x, -k)
    return np.roll(x.reshape(2, -1), -k, axis=1).reshape(-1)


def _swap_rows(x: np.ndarray) -> np.ndarray:
    return x.reshape(2, -1)[::-1].reshape(-1)


def _window_sum(params: Params, x: np.ndarray, n: int, stride: int = 1) -> np.ndarray:
    """slot i <- sum_{j<n} x[i + j·stride], cyclic within a CKKS vector / each BGV row."""
    if stride != 1:
        rows = x.reshape(1 if params.scheme == "ckks" else 2, -1)
        rows = rows.astype(np.float64 if params.scheme == "ckks" else object)
        out = sum(np.roll(rows, -j * stride, axis=1) for j in range(n))
        if params.scheme == "bgv":
            out = np.mod(out, params.plain_modulus).astype(np.int64)
        return out.reshape(-1)
    if params.scheme == "bgv" and n == params.N:
        total = int(np.sum(x.astype(object))) % params.plain_modulus
        return np.full(params.N, total, dtype=np.int64)
    rows = x.reshape(1 if params.scheme == "ckks" else 2, -1)
    width = rows.shape[1]
    dtype = np.float64 if params.scheme == "ckks" else object
    ext = np.concatenate([rows, rows], axis=1).astype(dtype)
    prefix = np.concatenate([np.zeros((rows.shape[0], 1), dtype=dtype), np.cumsum(ext, axis=1)], axis=1)
    out = prefix[:, n : n + width] - prefix[:, :width]
    if params.scheme == "bgv":
        out = np.mod(out, params.plain_modulus).astype(np.int64)
    return out.reshape(-1)


def _linear_transform(params: Params, x: np.ndarray, diagonals) -> np.ndarray:
    acc = np.zeros_like(x)
    for step, swap, vec in diagonals:
        acc = _mod(params, acc + _mul(params, vec.array, _rotate(params, _swap_rows(x) if swap else x, step)))
    return acc


def _horner(params: Params, x: np.ndarray, coeffs) -> np.ndarray:
    acc = np.zeros_like(x)
    for c in reversed(coeffs):
        acc = _mod(params, _mul(params, acc, x) + _const(params, c))
    return acc


def _chebyshev_mod_t(params: Params, x: np.ndarray, coeffs) -> np.ndarray:
    """sum c_i T_i(x) mod t by the three-term recurrence T_{i+1} = 2x·T_i − T_{i−1}."""
    prev, cur = np.ones_like(x), x
    acc = _mod(params, np.full_like(x, _const(params, coeffs[0])))
    for i, c in enumerate(coeffs[1:], start=1):
        if i > 1:
            prev, cur = cur, _mod(params, 2 * _mul(params, x, cur) - prev)
        acc = _mod(params, acc + _mul(params, cur, _const(params, c)))
    return acc


_NUMPY_SERIES = {"power": np.polynomial.Polynomial, "chebyshev": np.polynomial.Chebyshev}


def _polynomial(params: Params, x: np.ndarray, node: HeNode) -> np.ndarray:
    """POLYNOMIAL: numpy's own Polynomial / Chebyshev with the node's domain (CKKS);
    Horner or the Chebyshev recurrence mod t (BGV, which has no domains)."""
    coeffs, basis, domain = node.attr("coeffs"), node.attr("basis", "power"), node.attr("domain", None)
    if params.scheme == "bgv":
        return _horner(params, x, coeffs) if basis == "power" else _chebyshev_mod_t(params, x, coeffs)
    if basis == "power" and domain is None:
        return _horner(params, x, coeffs)
    return _numpy_series(node)(x)


def _numpy_series(node: HeNode):
    """A CKKS POLYNOMIAL node's series as numpy's Polynomial / Chebyshev, with its domain."""
    coeffs, basis, domain = node.attr("coeffs"), node.attr("basis", "power"), node.attr("domain", None)
    return _NUMPY_SERIES[basis](np.asarray(coeffs, dtype=np.float64), domain=domain or (-1.0, 1.0))


def _automorphism(params: Params, x: np.ndarray, step: int | None) -> np.ndarray:
    """A rotation by `step`, or (step None) conjugation (CKKS, identity on reals) / row swap (BGV)."""
    if step is not None:
        return _rotate(params, x, step)
    return _swap_rows(x) if params.scheme == "bgv" else x


Semantics = Callable[[Params, HeNode, list, dict], np.ndarray]


def _no_plain_meaning(p: Params, n: HeNode, a: list, env: dict) -> np.ndarray:
    # ModRaise adds q_0·I, which depends on the ciphertext, not on the slot values, and a
    # monomial makes real slots complex: only the whole BOOTSTRAP (the identity) has a
    # plaintext meaning.
    raise InternalError(f"{n.op.value} has no plaintext semantics on fhec's real slots; take the reference of "
                        f"the program before expansion")

_IDENTITY: Semantics = lambda p, n, a, env: a[0]  # noqa: E731


def _bootstrap(p: Params, n: HeNode, a: list, env: dict) -> np.ndarray:
    """The identity; a sparse bootstrap (n slots < N/2) refuses a value that does not
    repeat with period n: its SubSum would average the periods (docs/bootstrapping.md)."""
    (x,) = a
    cfg = getattr(p, "bootstrap", None)
    slots = cfg.slot_count(p.N) if cfg is not None else p.slots
    if slots < p.slots:
        periods = x.reshape(-1, slots)
        spread = float(np.max(np.abs(periods - periods[0])))
        if spread > 1e-9 * max(1.0, float(np.max(np.abs(x)))):
            raise BootstrapError(
                f"bootstrap() with BootstrapConfig(slots={slots}) refreshes {slots} slots that repeat every {slots}, "
                f"but this value differs by {spread:.3g} between slot j and slot j + {slots}·i: the bootstrap would "
                f"return the average over the {p.slots // slots} periods. Replicate the values "
                f"(np.tile(v, {p.slots // slots}) for an input) or use slots=None (full packing).",
                n.loc,
            )
    if cfg is not None:
        _check_message_range(p, n, x)
    return x


_RANGE_MARGIN_BITS = 1.0
"""How far below the bootstrap's estimated precision EvalMod's truncation at a value's
largest coefficient may take it before `_check_message_range` refuses the value: the
estimate assumes a typical coefficient, and a small N's largest one (a uniform input at
N = 2^5 with a degree-3 arcsine) costs up to a bit without making the result wrong. At 2
bits a sparse bootstrap-toy bootstrap (slots=2, promising 4.4 bits) of a constant 0.9
passed and returned 2.6 bits."""


def _check_message_range(p: Params, n: HeNode, x: np.ndarray) -> None:
    """Refuse a value whose largest coefficient (a constant coefficient is the slots'
    mean) brings m/q_0 = coefficient·2^-R so close to 1/4 that EvalMod's sine or arcsine
    truncation alone exceeds the error the bootstrap's result promises (its estimated
    worst-slot precision) by more than `_RANGE_MARGIN_BITS`: the encrypted result would
    be silently wrong (a constant 0.99 at R = 2 came back with 2.5 bits)."""
    from fhec.ir.he_bootstrap import message_error
    from fhec.schemes.encoding import ckks_encode
    from fhec.schemes.noise import precision_bits

    cfg = p.bootstrap
    R = cfg.evalmod.message_ratio_bits
    coeff = float(np.max(np.abs(ckks_encode(x, p.N, 2.0**40)))) / 2.0**40
    u = min(coeff * 2.0**-R, 0.5)
    error = message_error(cfg, u) * 2.0**R  # in slot units: SlotsToCoeffs multiplies by q_0/Δ
    promised = precision_bits(p, n.type.scale, n.type.noise)
    if error > 2.0 ** -(promised - _RANGE_MARGIN_BITS):
        bits = -math.log2(error)
        raise BootstrapError(
            f"bootstrap() gets a value whose largest coefficient is {coeff:.3g} (a constant coefficient is the "
            f"slots' mean; this value's mean is {float(np.mean(x)):.3g}): with message_ratio_bits={R} that is "
            f"m/q_0 = {u:.3g}, too close to 1/4 for EvalMod"
            + (f" (its degree-{cfg.evalmod.arcsine_degree} arcsine)" if cfg.evalmod.arcsine_degree else "")
            + f": the result would keep {bits:.1f} bits where the bootstrap promises {promised:.1f}. Bootstrap a "
            f"scaled-down value (x * 0.25, multiplied back after the bootstrap), or raise "
            f"BootstrapConfig.evalmod.message_ratio_bits (to {R + 2}) or arcsine_degree.",
            n.loc,
        )


SEMANTICS: dict[HeOp, Semantics] = {
    HeOp.INPUT: lambda p, n, a, env: env[n.attr("name")],
    HeOp.PLAIN_INPUT: lambda p, n, a, env: env[n.attr("name")],
    HeOp.OUTPUT: _IDENTITY,
    HeOp.ADD: lambda p, n, a, env: _mod(p, a[0] + a[1]),
    HeOp.SUB: lambda p, n, a, env: _mod(p, a[0] - a[1]),
    HeOp.NEG: lambda p, n, a, env: _mod(p, -a[0]),
    HeOp.ADD_PLAIN: lambda p, n, a, env: _mod(p, a[0] + a[1]),
    HeOp.SUB_PLAIN: lambda p, n, a, env: _mod(p, a[0] - a[1]),
    HeOp.ADD_CONST: lambda p, n, a, env: _mod(p, a[0] + _const(p, n.attr("value"))),
    HeOp.SUB_CONST: lambda p, n, a, env: _mod(p, a[0] - _const(p, n.attr("value"))),
    HeOp.MUL: lambda p, n, a, env: _mul(p, a[0], a[1]),
    HeOp.MUL_PLAIN: lambda p, n, a, env: _mul(p, a[0], a[1]),
    HeOp.MUL_CONST: lambda p, n, a, env: _mul(p, a[0], _const(p, n.attr("value"))),
    HeOp.MUL_FACTOR: _IDENTITY,
    HeOp.MUL_MONOMIAL: _no_plain_meaning,
    HeOp.RELINEARIZE: _IDENTITY,
    HeOp.RESCALE: _IDENTITY,
    HeOp.MOD_SWITCH: _IDENTITY,
    HeOp.LEVEL_DOWN: _IDENTITY,
    HeOp.CONJUGATE: _IDENTITY,
    HeOp.SWITCH_SECRET: _IDENTITY,
    HeOp.ROTATE: lambda p, n, a, env: _rotate(p, a[0], n.attr("step")),
    HeOp.SWAP_ROWS: lambda p, n, a, env: _swap_rows(a[0]),
    HeOp.SUM_SLOTS: lambda p, n, a, env: _window_sum(p, a[0], n.attr("n"), n.attr("stride", 1)),
    HeOp.BOOTSTRAP: _bootstrap,
    HeOp.MOD_RAISE: _no_plain_meaning,
    HeOp.LINEAR_TRANSFORM: lambda p, n, a, env: _linear_transform(p, a[0], n.attr("diagonals")),
    HeOp.POLYNOMIAL: lambda p, n, a, env: _polynomial(p, a[0], n),
    # key-switch pieces: the automorphism moves the slots; the rest carries no message
    # of its own (ks_add's value is its ciphertext operand's, now under the right key)
    HeOp.AUTOMORPHISM: lambda p, n, a, env: _automorphism(p, a[0], n.attr("step")),
    HeOp.MOD_UP: lambda p, n, a, env: None,
    HeOp.DIGITS_AUTOMORPHISM: lambda p, n, a, env: None,
    HeOp.KEY_MULT: lambda p, n, a, env: None,
    HeOp.MOD_DOWN: lambda p, n, a, env: None,
    HeOp.KS_ADD: _IDENTITY,
    # double hoisting: a value over Q·P carries the message of the ciphertext it becomes
    HeOp.ROTATE_EXT: lambda p, n, a, env: _rotate(p, a[0], n.attr("step")),
    HeOp.KS_ADD_EXT: _IDENTITY,
    HeOp.MUL_CONST_EXT: lambda p, n, a, env: _mul(p, a[0], _const(p, n.attr("value"))),
    HeOp.ADD_EXT: lambda p, n, a, env: _mod(p, a[0] + a[1]),
    HeOp.MOD_DOWN_EXT: _IDENTITY,
    HeOp.RELINEARIZE_EXT: _IDENTITY,
    HeOp.ADD_EXT_Q: lambda p, n, a, env: _mod(p, a[0] - a[1] if n.attr("subtract", False) else a[0] + a[1]),
    HeOp.RESCALE_EXT: _IDENTITY,
}


def reference_values(program: HeProgram, inputs: Mapping[str, Any]) -> dict[int, np.ndarray]:
    """The plaintext value of every node (id -> slot vector)."""
    params = program.params
    env = normalize_inputs(program, inputs)
    values: dict[int, np.ndarray] = {}
    for n in program.nodes:
        values[n.id] = SEMANTICS[n.op](params, n, [values[a] for a in n.args], env)
    return values


SERIES_GROWTH = 2.0
"""`check_series_operands` warns of a series whose value at an operand outside its
interval exceeds this many times its largest on the interval: a series fitted to a
function there (`fhec.approx`) no longer approximates it (measured: an approximation of
tanh(20x) of degree 31 at 1.04 reaches 63; a degree-7 one stays at 1.29 up to 1.06, as on
[-1, 1])."""


SERIES_STEEPER = 4.0
"""`check_series_operands` refuses a series whose slope at an operand outside its interval
exceeds this many times the slope its precision estimate assumed (2 bits: the estimates
are usually 2-3 bits pessimistic, docs/dsl.md, so a smaller excess still meets them)."""


def _series_interval(params: Params, node: HeNode):
    """The interval of a CKKS POLYNOMIAL node of degree 2 or more
    (`he_polynomial.series_interval`), else None (BGV has no intervals; a linear series
    does not grow outside one)."""
    from fhec.ir.he_polynomial import series_interval

    if params.scheme != "ckks" or len(node.attr("coeffs")) <= 2:
        return None
    return series_interval(node.attr("basis", "power"), node.attr("domain", None))


def series_outside(params: Params, node: HeNode, operand: HeNode, x: np.ndarray) -> None:
    """Check the plaintext operand `x` of the POLYNOMIAL `node` (whose operand node is
    `operand`) against the series' interval. Where it leaves the interval:

    * `ValueOverflowError` when the series there exceeds the bound the compiler proved for
      it (`node.type.bound`): a series on a domain is bounded by its values there (an input
      bound, |x| <= B, cannot say x lies in [0, 1]; within `DOMAIN_SLACK` beyond a domain
      the estimates take the operand as inside it too), so values computed from the series
      could overflow their moduli unseen;
    * `PrecisionError` when its slope there exceeds `SERIES_STEEPER` times the slope the
      precision estimate used (`derivative_bound`): the estimate would be that many bits
      optimistic;
    * a `PrecisionWarning` when it only grows beyond `SERIES_GROWTH` times its largest value
      on the interval (the series no longer approximates the function it was fitted to), or
      when the estimates took the operand to stay inside (`within_domain`: a domain with an
      offset, or a bound within the slack), whose error estimate then does not cover the data."""
    from fhec.errors import PrecisionWarning, ValueOverflowError, warn_at
    from fhec.ir.he_polynomial import derivative_bound, within_domain

    interval = _series_interval(params, node)
    if interval is None:
        return
    a, b = interval
    tol = 2.0**-30 * max(1.0, abs(a), abs(b))  # float rounding of data normalized to the edge
    outside = np.flatnonzero((x < a - tol) | (x > b + tol))
    if not len(outside):
        return
    coeffs, basis, domain = node.attr("coeffs"), node.attr("basis", "power"), node.attr("domain", None)
    series = _numpy_series(node)
    d = len(coeffs) - 1
    where = f"{node.loc}: " if node.loc else ""
    far = np.abs(series(x[outside]))

    def said(k: int) -> str:
        return (f"on these inputs the operand of this degree-{d} series reaches {x[k]:.6g} (slot {k}), outside "
                f"the series' interval [{a:.6g}, {b:.6g}]")

    fix = "Scale the operand into the interval or widen the domain (fhec.approx(f, domain=...))"
    worst = int(np.argmax(far))
    bound = node.type.bound
    if bound is not None and far[worst] > bound * (1 + 1e-9):
        raise ValueOverflowError(
            f"{said(int(outside[worst]))}, where the series reaches {far[worst]:.4g}, above the bound {bound:.4g} "
            f"the compiler proved for it from its values on the interval (a series on a domain takes its operand to "
            f"stay inside, as symmetric input bounds cannot say x is in [{a:.6g}, {b:.6g}]): values computed from it "
            f"could overflow their moduli. {fix}.", node.loc)
    slope = derivative_bound(coeffs, basis, domain, operand.type.bound) if operand.type.bound is not None else None
    steep = np.abs(series.deriv()(x[outside]))
    s = int(np.argmax(steep))
    if slope is not None and steep[s] > SERIES_STEEPER * slope:
        raise PrecisionError(
            f"{said(int(outside[s]))}, where the series' slope reaches {steep[s]:.4g} against the {slope:.4g} its "
            f"precision estimate assumed: the result could be {np.log2(steep[s] / slope):.1f} bits less precise "
            f"than estimated. {fix}.", node.loc)
    inside = float(np.max(np.abs(series(np.linspace(a, b, min(16 * d * d + 1, 1 << 16))))))
    grows = far[worst] > SERIES_GROWTH * max(inside, 2.0**-30)
    # where the estimates took the operand to stay inside (`within_domain`), its error
    # estimate does not cover these data either: outside, the Chebyshev pieces T_i(u) grow
    # like (|u| + sqrt(u^2 - 1))^i and amplify the roundings they carry, even where the
    # series itself stays small (exp fitted on (1, 3) fed 0: estimated 15 bits, measured 10.7)
    # (a Chebyshev series without a domain is estimated over its operand's whole bound)
    trusted = domain is not None and operand.type.bound is not None and within_domain((a, b), operand.type.bound)
    if grows or trusted:
        what = (f"where the series reaches {far[worst]:.4g} against at most {inside:.4g} on the interval: it no "
                f"longer approximates the function it was fitted to (the run computes the series itself, as "
                f"fhec.reference does)") if grows else ""
        estimate = ("the precision estimate takes the operand to stay in the interval and does not cover these "
                    "inputs") if trusted else ""
        warn_at(f"{where}{said(int(outside[worst]))}, {'; '.join(t for t in (what, estimate) if t)}. {fix}.",
                PrecisionWarning, node.loc)


def check_series_operands(program: HeProgram, values: Mapping[int, np.ndarray], refuse: bool = True) -> None:
    """`series_outside` for every series of `program` on the plaintext values of its nodes
    (`reference_values`): only the data can tell whether an operand whose bound the
    estimates take as inside a series' interval really stays there. `refuse=False` (what
    `reference`, the plaintext semantics, passes) warns where a run would refuse."""
    from fhec.errors import FhecError, PrecisionWarning, warn_at

    for n in program.nodes:
        if n.op is HeOp.POLYNOMIAL:
            try:
                series_outside(program.params, n, program.node(n.args[0]), values[n.args[0]])
            except FhecError as e:
                if refuse:
                    raise
                warn_at(str(e), PrecisionWarning, n.loc)


def has_domain_series(program: HeProgram) -> bool:
    """Whether `program` (unexpanded) evaluates a series `check_series_operands` checks
    (`_series_interval`)."""
    return any(n.op is HeOp.POLYNOMIAL and _series_interval(program.params, n) is not None for n in program.nodes)


def check_inputs(program, inputs: Mapping[str, Any]) -> None:
    """What every driver (`fhec.evaluate`, `fhec.run`, `Compiled.run`) checks on the
    plaintext inputs before encrypting: `check_bootstrap_inputs`, and
    `check_series_operands`. Evaluates `program` in plaintext once, only when it has a
    bootstrap or a series with an interval."""
    program = as_he(program)
    if has_bootstrap(program):
        check_bootstrap_inputs(program, inputs, then=check_series_operands)
    elif has_domain_series(program):
        check_series_operands(program, reference_values(program, inputs))


def check_bootstrap_inputs(program, inputs: Mapping[str, Any], then: Callable | None = None) -> None:
    """Raise `BootstrapError` (naming the line) when a bootstrap of `program` (a
    `fhec.Program` or an unexpanded `HeProgram`) would get a value on `inputs` that a
    sparse bootstrap cannot refresh (it does not repeat with its period) or whose
    coefficients are too large for EvalMod (`_check_message_range`), by evaluating the
    program in plaintext; nothing to do without a bootstrap. `PrecisionError` when the
    parameters cannot bootstrap correctly whatever the input (`fhec.ir.he_bootstrap.execution_problem`:
    K too small for the secret, or a scale-down constant that rounds away). `then(program,
    values)`, when given, is called with the plaintext values of every node (`check_inputs`
    passes `check_series_operands`, so that the program is evaluated once)."""
    from fhec.ir.he_bootstrap import execution_problem

    program = as_he(program)
    if has_bootstrap(program):
        problem = execution_problem(program.params)
        if problem is not None:
            loc = next(n.loc for n in program.nodes if n.op is HeOp.BOOTSTRAP)
            raise PrecisionError(problem, loc)
        values = reference_values(program, inputs)
        if then is not None:
            then(program, values)


def has_sparse_bootstrap(program: HeProgram) -> bool:
    """Whether `program` (unexpanded) bootstraps with fewer slots than the ring has
    (`BootstrapConfig(slots=n)`): its values must repeat with period n."""
    cfg = getattr(program.params, "bootstrap", None)  # BGV parameters have none
    if cfg is None or cfg.slot_count(program.params.N) == program.params.slots:
        return False
    return any(n.op is HeOp.BOOTSTRAP for n in program.nodes)


def has_bootstrap(program: HeProgram) -> bool:
    """Whether `program` (unexpanded) bootstraps: `check_bootstrap_inputs` checks the
    range of every bootstrapped value (`_check_message_range`)."""
    return getattr(program.params, "bootstrap", None) is not None and any(
        n.op is HeOp.BOOTSTRAP for n in program.nodes)


def centered(values, params) -> np.ndarray:
    """BGV slot values (as `reference`, `fhec.evaluate` and the runs return them, in
    [0, t)) as signed integers in (-t/2, t/2], the form SEAL's and OpenFHE's decoders give:
    ``x * -3`` on ``[1, 2, -4]`` decrypts to ``[t-3, t-6, 12]``, centered ``[-3, -6, 12]``.
    Raises `InvalidArgumentError` for CKKS parameters (their slots are already signed
    reals) and `InvalidPlaintextError` for values that are not integers."""
    from fhec.errors import InvalidArgumentError
    from fhec.validate import as_1d_array

    if getattr(params, "scheme", None) != "bgv":
        raise InvalidArgumentError("centered() maps BGV values mod t to (-t/2, t/2]; give the program's BGVParams "
                                   "(CKKS slots are signed reals already).")
    t = params.plain_modulus
    arr = as_1d_array(values, "values", error=InvalidPlaintextError)
    if arr.dtype.kind not in "iuO" or (arr.dtype.kind == "O" and not all(isinstance(v, int) for v in arr.ravel())):
        raise InvalidPlaintextError(f"centered() takes the integer values a BGV run returns, not {arr.dtype} values.")
    residues = np.mod(arr.astype(object), t)
    return np.where(residues > t // 2, residues - t, residues).astype(np.int64)


def reference(program, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The outputs of `program` (a `fhec.Program` or `HeProgram`) on plaintext `inputs`
    (name -> array or scalar, encrypted and plain inputs alike), each a full slot
    vector: float64 (CKKS) or int64 in [0, t) (BGV).

    Raises `UnsetOutputError` for a program without outputs and the errors of
    `normalize_inputs`; warns (`UnusedInputWarning`) about inputs no output uses, and
    (`PrecisionWarning`, `check_series_operands`) about a series whose operand leaves its
    interval on these inputs.
    """
    program = check_complete(as_he(program))
    values = reference_values(program, inputs)
    check_series_operands(program, values, refuse=False)
    return {name: np.array(values[vid], copy=True) for name, vid in program.outputs.items()}
