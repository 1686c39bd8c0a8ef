"""Hypothesis strategies for fhec: parameter sets, random DSL programs, their inputs.

    from hypothesis import given
    import fhec.testing as ft

    @given(ft.programs(scheme="ckks", max_depth=3).flatmap(ft.with_inputs))
    def test_eval(case):
        program, inputs = case
        ft.assert_matches_reference(program, inputs)

Programs are random DAGs of the DSL operations (arithmetic with ciphertexts, plain
inputs and constants, rotations, conjugation / row swap, level changes, sum_slots,
linear transforms, power and Chebyshev polynomials, on domains) over small insecure rings (N = 2^5..2^7,
``security=None``) within a multiplicative depth budget. They are built through the
DSL itself, so every program is one a user could write; an operation the DSL rejects
(level exhausted, a manual-mode mismatch) is simply skipped, since a failed DSL
operation leaves the program unchanged.

Magnitudes are kept decryptable: CKKS inputs are in [-1, 1] and the generator tracks a
bound on every value, refusing operations whose result could exceed the parameter
set's headroom (q_0 / scale, at most `MAX_CKKS_BOUND`). Values whose estimated
precision (CKKS) or noise budget (BGV) runs low are not used further.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fhec.errors import (InvalidArgumentError, LevelExhaustedError, LevelMismatchError, ProgramError, ScaleMismatchError,
                         ScaleOverflowError, TargetError, ValueOverflowError)
from fhec.frontend import Cipher, Plain, Program
from fhec.ir.he import HeOp
from fhec.ir.he_verify import used_values
from fhec.ir.he_types import row_length
from fhec.schemes.params import MAX_N, MIN_N, BGVParams, CKKSParams
from fhec.schemes.rules import rescale_prime

MAX_CKKS_BOUND = 4.0
"""Largest magnitude a random CKKS program lets a value reach."""

MIN_BITS = {"ckks": 11.0, "bgv": 16.0}
"""Values whose estimated precision (CKKS: of the worst slot, about 3 bits below the
σ-based figure at these N) / noise budget falls below this are not used further."""

BGV_PLAIN_MODULI = (257, 7681, 12289, 65537)
"""Primes t with t ≡ 1 mod 2N for small N (257: N <= 128; 7681: N <= 256; 12289: N <= 2048)."""

BGV_MAX_LOG_N = max((t - 1 & 1 - t).bit_length() - 2 for t in BGV_PLAIN_MODULI)
"""log2 of the largest N one of `BGV_PLAIN_MODULI` fits (65537: N <= 2^15)."""

DEFAULT_LOG_N = (5, 7)
"""`params`' ring degrees when no `log_n` is given (N = 2^5..2^7; with a target, moved
into its ring degrees)."""

LOG_N_RANGE = (MIN_N.bit_length() - 1, MAX_N.bit_length() - 1)
"""The log2 N a parameter set can have (N = 2..2^17)."""

_SKIPPED = (LevelExhaustedError, LevelMismatchError, ScaleMismatchError, ScaleOverflowError, ValueOverflowError)
"""DSL errors that drop a drawn operation. ValueOverflowError is among them because a
parameter set the user passes may have less headroom than the generator's bounds assume."""


# -- parameters ---------------------------------------------------------------------------------


def params(
    scheme: str = "ckks",
    *,
    min_levels: int = 1,
    max_levels: int = 4,
    log_n: tuple[int, int] | None = None,
    base_limbs: int | None = None,
    keyswitch: str | None = None,
    target=None,
):
    """Small, insecure (``security=None``) parameter sets.

    CKKS: scale 2^30 on 32-bit words with a 2-prime q_0 by default (decryption headroom
    2^33, so values up to `MAX_CKKS_BOUND` are far from wrapping). BGV: t from
    `BGV_PLAIN_MODULI` compatible with N. With two special primes, half the draws add a
    residual key-switching basis (one special prime at and below a drawn level below the
    top), so every property test also covers key switches on two bases.

    `log_n`: (least, most) log2 N, within 1..17; None: `DEFAULT_LOG_N`.

    `target` (a shipped target name, a TOML path or a `Target`): draw only parameters the
    target accepts: N within its ring degrees and primes within its word size. Without
    `log_n`, the default is moved into [log2 n_min, log2 n_max] (``target="f1"`` draws
    N = 2^10, its smallest); a `log_n` given is narrowed to the target's ring degrees, and
    one with none of them is refused (`TargetError`).
    """
    _check_scheme(scheme)
    _check_int("min_levels", min_levels, 1)
    _check_int("max_levels", max_levels, min_levels)
    given_log_n = log_n is not None
    log_n = DEFAULT_LOG_N if log_n is None else log_n
    if not (isinstance(log_n, tuple) and len(log_n) == 2):
        raise InvalidArgumentError(f"log_n = {log_n!r:.40} must be a pair (least, most) of log2 N, e.g. (5, 7).")
    _check_int("log_n[0]", log_n[0], LOG_N_RANGE[0], LOG_N_RANGE[1])
    _check_int("log_n[1]", log_n[1], log_n[0], LOG_N_RANGE[1])
    if base_limbs is not None:
        _check_int("base_limbs", base_limbs, 1)
    if keyswitch not in (None, "hybrid", "bv"):
        raise InvalidArgumentError(f"keyswitch = {keyswitch!r:.40} must be None (drawn), 'hybrid' or 'bv'.")
    word = 32
    if target is not None:  # an unknown target is refused here, not inside a test
        log_n, word = _target_ring(target, log_n, given_log_n)
    if scheme == "bgv" and log_n[1] > BGV_MAX_LOG_N:
        raise InvalidArgumentError(
            f"log_n = {log_n!r}: the BGV plaintext moduli drawn ({', '.join(map(str, BGV_PLAIN_MODULI))}) need "
            f"t ≡ 1 mod 2N, which holds up to N = 2^{BGV_MAX_LOG_N}; draw log_n up to {BGV_MAX_LOG_N}, or pass "
            f"your own BGVParams to programs(params=...)."
        )
    return _params(scheme, min_levels, max_levels, log_n, base_limbs, keyswitch, word)


@st.composite
def _params(draw, scheme, min_levels, max_levels, log_n, base_limbs, keyswitch, word):
    scale = min(30, word - 2)
    N = 2 ** draw(st.integers(*log_n))
    levels = draw(st.integers(min_levels, max_levels))
    ks = keyswitch or draw(st.sampled_from(["hybrid", "bv"]))
    special = draw(st.integers(1, 2))
    residual = {}
    if special == 2 and draw(st.booleans()):
        residual = dict(residual_top=draw(st.integers(0, levels - 1)), residual_special_primes=1)
    if scheme == "ckks":
        base = base_limbs or 2
        # min_precision_bits=None: random programs use BV on purpose (the compiled BV path
        # must stay bit-exact even where it is imprecise); MIN_BITS filters the values.
        return CKKSParams(N=N, levels=levels, scale_bits=scale, word_bits=word, base_limbs=base,
                          special_primes=special, keyswitch=ks, security=None, min_precision_bits=None, **residual)
    t = draw(st.sampled_from([t for t in BGV_PLAIN_MODULI if (t - 1) % (2 * N) == 0]))
    return BGVParams(N=N, levels=levels, plain_modulus=t, word_bits=word, base_limbs=base_limbs or 1,
                     special_primes=special, keyswitch=ks, security=None, **residual)


params_strategy = params  # `programs` has an argument named params

_SCHEMES = ("ckks", "bgv")


def _check_scheme(scheme) -> None:
    if scheme not in _SCHEMES:
        raise InvalidArgumentError(f"scheme = {scheme!r:.40}: fhec.testing draws 'ckks' or 'bgv' programs.")


def _check_int(name: str, value, least: int, most: int | None = None) -> None:
    """An argument that must be an int >= least (and <= most, if given; InvalidArgumentError naming it)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least or (
            most is not None and value > most):
        upto = "" if most is None else f" and <= {most}"
        raise InvalidArgumentError(f"{name} = {value!r:.40} must be an integer >= {least}{upto}.")


def _target_ring(target, log_n: tuple[int, int], given: bool) -> tuple[tuple[int, int], int]:
    """(`log_n` within the target's ring degrees, the word size to draw primes of): the
    default moved into them, a `log_n` the caller `given` narrowed to them (TargetError
    when it holds none: moving it would silently draw rings the caller did not ask for)."""
    from fhec.ring.primes import MIN_WORD_BITS

    t = _target(target)
    least, most = t.n_min.bit_length() - 1, t.n_max.bit_length() - 1
    if given and (log_n[1] < least or log_n[0] > most):
        raise TargetError(
            f"log_n = {log_n!r} draws N = 2^{log_n[0]}..2^{log_n[1]}, but target {t.name!r} supports ring degrees "
            f"N = 2^{least}..2^{most}; pass log_n within ({least}, {most}), or leave log_n out to draw N = 2^{least}."
        )
    lo = min(max(log_n[0], least), most)
    hi = min(max(log_n[1], lo), most)
    return (lo, hi), max(MIN_WORD_BITS, min(32, t.word_bits))


def _target(target):
    """`target` as a `Target` or `IsaMachine` (a name or TOML path is loaded)."""
    from fhec.backends.machine import IsaMachine
    from fhec.backends.target import Target, load_target

    return target if isinstance(target, (Target, IsaMachine)) else load_target(target)


def _headroom(p) -> float:
    """Largest CKKS magnitude the random programs allow for these parameters."""
    q0_bits = sum(math.log2(q) for q in p.moduli[: p.base_limbs])
    return min(MAX_CKKS_BOUND, 2.0 ** (q0_bits - p.scale_bits - 2))


# -- programs ------------------------------------------------------------------------------------


class _Gen:
    """State of one random program: its values and a magnitude bound for each."""

    def __init__(self, draw, program: Program):
        self.draw = draw
        self.p = program
        self.params = program.params
        self.ckks = self.params.scheme == "ckks"
        self.limit = _headroom(self.params) if self.ckks else math.inf
        self.values: list[tuple[Cipher, float]] = []
        self.plains: list = []

    def pick(self) -> tuple[Cipher, float]:
        return self.draw(st.sampled_from(self.values))

    def keep(self, value, bound: float) -> None:
        if not isinstance(value, Cipher) or bound > self.limit:
            return
        if value.estimated_bits < MIN_BITS[self.params.scheme]:
            return
        if self.ckks and math.log2(value.scale * max(bound, 1.0)) + 3 > sum(
            math.log2(q) for q in self.params.moduli_at(value.level)
        ):
            return  # the scaled message would come too close to the modulus to decrypt
        self.values.append((value, bound))

    def small_float(self) -> float:
        return self.draw(st.floats(-1.0, 1.0, allow_nan=False, width=32).map(float))

    def small_int(self) -> int:
        return self.draw(st.integers(-3, 3))

    def constant(self):
        """(constant, its magnitude bound): an int, a float (CKKS) or a short vector."""
        kind = self.draw(st.sampled_from(["int", "float", "vector"] if self.ckks else ["int", "vector"]))
        if kind == "int":
            c = self.small_int()
            return c, abs(c)
        if kind == "float":
            c = self.small_float()
            return c, abs(c)
        n = self.draw(st.integers(1, self.params.slots))
        if self.ckks:
            vec = np.array(self.draw(st.lists(st.floats(-1, 1, width=32), min_size=n, max_size=n)), dtype=np.float64)
            return vec, float(np.max(np.abs(vec), initial=0.0))
        t = self.params.plain_modulus
        return np.array(self.draw(st.lists(st.integers(0, t - 1), min_size=n, max_size=n)), dtype=np.int64), 0.0

    # Each op: draw operands, apply, keep the result. A DSL error in _SKIPPED drops it.

    def op_add(self):
        (a, ba), (b, bb) = self.pick(), self.pick()
        sub = self.draw(st.booleans())
        self.keep(a - b if sub else a + b, ba + bb)

    def op_add_other(self):
        a, ba = self.pick()
        if self.plains and self.draw(st.booleans()):
            w = self.draw(st.sampled_from(self.plains))
            form = self.draw(st.integers(0, 2))
            self.keep((a + w, a - w, w - a)[form], ba + 1.0)
        else:
            c, bc = self.constant()
            form = self.draw(st.integers(0, 2))
            self.keep((a + c, a - c, c - a)[form], ba + bc)

    def op_mul(self):
        (a, ba), (b, bb) = self.pick(), self.pick()
        m = a * b
        if self.p.options.rescale == "manual" and self.draw(st.booleans()):
            m = m.relinearize()
            if self.ckks:
                m = m.rescale()
        self.keep(m, ba * bb)

    def op_mul_other(self):
        a, ba = self.pick()
        if self.plains and self.draw(st.booleans()):
            m, bound = a * self.draw(st.sampled_from(self.plains)), ba
        else:
            c, bc = self.constant()
            m, bound = (c * a if self.draw(st.booleans()) else a * c), ba * bc
        if self.p.options.rescale == "manual" and self.ckks and m.scale > 2.0 ** 45 and self.draw(st.booleans()):
            m = m.rescale()
        self.keep(m, bound)

    def op_neg(self):
        a, ba = self.pick()
        self.keep(-a, ba)

    def op_rotate(self):
        a, ba = self.pick()
        row = row_length(self.params)
        k = self.draw(st.integers(-row + 1, row - 1))
        self.keep(a.rotate(k), ba)

    def op_conjugate(self):
        a, ba = self.pick()
        self.keep(a.conjugate() if self.ckks else a.swap_rows(), ba)

    def op_level(self):
        a, ba = self.pick()
        choice = self.draw(st.integers(0, 2))
        if choice == 0 and self.p.options.rescale == "manual" and self.ckks and a.level > 0 \
                and math.log2(a.scale) - math.log2(rescale_prime(self.params, a.level)) >= 1.0:
            self.keep(a.rescale(), ba)  # a product's (a single-prime scale rescaled is noise, refused)
        elif choice == 1 or a.level == 0:
            self.keep(a.mod_switch(), ba)
        else:
            self.keep(a.level_down(self.draw(st.integers(0, a.level - 1))), ba)

    def op_sum_slots(self):
        a, ba = self.pick()
        row = row_length(self.params)
        cap = row if not self.ckks else max(1, min(row, int(self.limit / max(ba, 1e-9))))
        choices = [n for n in range(2, cap + 1)] + ([self.params.N] if not self.ckks else [])
        if not choices:
            return
        n = self.draw(st.sampled_from(choices))
        kind = self.draw(st.sampled_from(["sum", "strided", "replicate"])) if n <= row else "sum"
        if kind == "sum":
            self.keep(a.sum_slots(n), ba * n)
            return
        stride = self.draw(st.integers(1, row - 1))
        self.keep(a.sum_slots(n, stride=stride) if kind == "strided" else a.replicate(n, stride=stride), ba * n)

    def op_linear_transform(self):
        a, ba = self.pick()
        row, slots = row_length(self.params), self.params.slots
        # every hoisting mode (the drawn parameters always have special primes)
        hoisting = self.draw(st.sampled_from([None, "single", "double", "none"]))
        if self.draw(st.booleans()):
            m = self.draw(st.integers(1, min(8, slots)))
            n = self.draw(st.integers(1, min(8, slots)))
            if self.ckks:
                mat = np.array(self.draw(st.lists(st.floats(-1, 1, width=32), min_size=m * n, max_size=m * n)))
                mat = mat.reshape(m, n) / n
                bound = ba * float(np.max(np.sum(np.abs(mat), axis=1)))
            else:
                t = self.params.plain_modulus
                mat = np.array(self.draw(st.lists(st.integers(0, t - 1), min_size=m * n, max_size=m * n)), dtype=np.int64)
                mat, bound = mat.reshape(m, n), 0.0
            if not np.any(mat):
                return
            self.keep(a.linear_transform(mat, hoisting=hoisting), bound)
            return
        steps = self.draw(st.lists(st.integers(0, row - 1), min_size=1, max_size=3, unique=True))
        diag = {}
        for k in steps:
            c, _ = self.constant()
            vec = np.full(slots, c) if np.ndim(c) == 0 else c
            if self.ckks:
                vec = np.asarray(vec, dtype=np.float64) / len(steps)
            diag[k] = vec
        if not any(np.any(np.asarray(v)) for v in diag.values()):
            return
        bound = ba * sum(float(np.max(np.abs(v))) for v in diag.values()) if self.ckks else 0.0
        self.keep(a.linear_transform(diag, hoisting=hoisting), bound)

    def op_polynomial(self):
        """A power-basis series (as before), a Chebyshev series (CKKS: on a domain around
        the operand's bound, as a list or a numpy object), or a constant."""
        kind = self.draw(st.sampled_from(["power", "power", "chebyshev", "chebyshev", "constant"]))
        if kind == "power":
            self.op_power_series()
        elif kind == "chebyshev":
            self.op_chebyshev_series()
        else:
            a, ba = self.pick()
            c = self.small_float() if self.ckks else self.small_int()
            self.keep(a.polynomial([c]), abs(c))

    def op_power_series(self):
        a, ba = self.pick()
        degree = self.draw(st.integers(1, 4 if self.ckks else 8))
        if self.ckks:
            coeffs = [self.draw(st.sampled_from([0, 1, -1, 2])) if self.draw(st.booleans()) else self.small_float()
                      for _ in range(degree + 1)]
        else:
            coeffs = [self.draw(st.integers(-5, 5)) for _ in range(degree + 1)]
        if all(c == 0 for c in coeffs[1:]):
            coeffs[-1] = 1
        bound = sum(abs(c) * max(ba, 1.0) ** i for i, c in enumerate(coeffs))
        self.keep(a.polynomial(coeffs), bound)

    def op_chebyshev_series(self):
        a, ba = self.pick()
        # a domain map costs a level unless its factor is an integer; without one the values
        # must already lie in [-1, 1]
        use_domain = self.ckks and (ba > 1.0 or self.draw(st.booleans()))
        # at most the degree the operand's levels allow (depth ceil(log2(d+1))), so few attempts are wasted
        cap = 2 ** max(0, a.level - use_domain) - 1
        degree = self.draw(st.integers(1, max(1, min(7 if self.ckks else 8, cap))))
        if not self.ckks:
            coeffs = [self.draw(st.integers(-5, 5)) for _ in range(degree + 1)]
            coeffs[-1] = coeffs[-1] or 1
            self.keep(a.polynomial(coeffs, basis="chebyshev"), 0.0)
            return
        coeffs = [self.draw(st.sampled_from([0, 1, -1])) if self.draw(st.booleans()) else self.small_float()
                  for _ in range(degree + 1)]
        coeffs[-1] = coeffs[-1] or 0.5
        total = sum(abs(c) for c in coeffs)
        coeffs = [c * min(1.0, 0.9 * self.limit / total) for c in coeffs]  # the value stays within the headroom
        bound = sum(abs(c) for c in coeffs)  # |T_i(u)| <= 1 while u = map(x) stays in [-1, 1]
        if not use_domain:
            self.keep(a.polynomial(coeffs, basis="chebyshev"), bound)
            return
        m = max(ba, 0.25)  # the domain holds every value of a
        widen = st.sampled_from([0.0, 0.5, 2.0])
        domain = (-m * (1 + self.draw(widen)), m * (1 + self.draw(widen)))
        if self.draw(st.booleans()):
            self.keep(a.polynomial(np.polynomial.Chebyshev(coeffs, domain=domain)), bound)
        else:
            self.keep(a.polynomial(coeffs, basis="chebyshev", domain=domain), bound)


_OPS = (
    _Gen.op_add, _Gen.op_add_other, _Gen.op_mul, _Gen.op_mul_other, _Gen.op_neg, _Gen.op_rotate,
    _Gen.op_conjugate, _Gen.op_level, _Gen.op_sum_slots, _Gen.op_linear_transform, _Gen.op_polynomial,
)


def programs(
    scheme: str | None = None,
    max_depth: int = 3,
    params=None,
    max_ops: int = 10,
    rescale: str | None = None,
    target=None,
):
    """Random `fhec.Program`s (see module doc).

    Args:
        scheme: "ckks" or "bgv"; None: "ckks", or the scheme of `params` when given
            (a scheme that differs from `params`' is refused).
        max_depth: the multiplicative depth budget: the parameter sets have at most this
            many levels (an integer >= 1).
        params: a fixed parameter set instead of drawn ones.
        max_ops: number of DSL operations attempted.
        rescale: "auto", "manual" or None (drawn).
        target: draw parameters this target accepts (see `params`), e.g. "f1", so that
            the programs compile for it; with `params`, a target whose ring degrees
            exclude params' N is refused (`TargetError`) when the strategy is built.
    """
    if params is not None and not isinstance(params, (CKKSParams, BGVParams)):
        raise InvalidArgumentError(f"params = {params!r:.60} must be a CKKSParams or BGVParams (or None: drawn).")
    if scheme is not None:
        _check_scheme(scheme)
        if params is not None and params.scheme != scheme:
            raise InvalidArgumentError(f"scheme = {scheme!r} but params is a {params.scheme.upper()} parameter set; "
                                       f"drop scheme or pass {params.scheme.upper()} parameters.")
    _check_int("max_depth", max_depth, 1)
    _check_int("max_ops", max_ops, 1)
    if rescale not in (None, "auto", "manual"):
        raise InvalidArgumentError(f"rescale = {rescale!r:.40} must be None (drawn), 'auto' or 'manual'.")
    if params is not None and target is not None:  # the target would draw nothing: check the two agree
        _target(target).check_ring_degree(params.N)
    # the parameter strategy is built here, so that its errors (an unknown target) come
    # when this strategy is built, not at the first draw inside a test
    drawn = st.just(params) if params is not None else params_strategy(scheme or "ckks", max_levels=max_depth,
                                                                       target=target)
    return _programs(drawn, max_ops, rescale)


@st.composite
def _programs(draw, drawn_params, max_ops, rescale):
    params = draw(drawn_params)
    policy = rescale or draw(st.sampled_from(["auto", "auto", "manual"]))
    p = Program("random", params, rescale=policy, loc="<random program>")
    g = _Gen(draw, p)
    for i in range(draw(st.integers(1, 3))):
        level = params.top_level if draw(st.integers(0, 3)) else draw(st.integers(0, params.top_level))
        g.values.append((p.input(f"x{i}", level=level), 1.0))
    for i in range(draw(st.integers(0, 2))):
        g.plains.append(p.plain(f"w{i}"))
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(_OPS))
        try:
            op(g)
        except _SKIPPED:
            pass
    # Outputs: the most recent value, plus a few others; then every input no output uses
    # gets an output of its own, so that programs never warn about unused inputs.
    chosen = [len(g.values) - 1] + draw(st.lists(st.integers(0, len(g.values) - 1), max_size=2))
    for j, idx in enumerate(dict.fromkeys(chosen)):
        p.output(f"y{j}", g.values[idx][0])
    live = used_values(p.ir)
    for node in list(p.ir.nodes_of(HeOp.INPUT, HeOp.PLAIN_INPUT)):
        if node.id not in live:
            name = f"use_{node.attr('name')}"
            p.output(name, _plain_user(p, node.id, name) if node.op is HeOp.PLAIN_INPUT else Cipher(p, node.id))
    return p


def _plain_user(p, plain_id, name):
    """A ciphertext using plain input `plain_id`: the highest-level ciphertext input plus it,
    or, where that sum could overflow (a user's parameter set with little headroom at that
    level), a fresh top-level input plus it."""
    x = max((Cipher(p, n.id) for n in p.ir.nodes_of(HeOp.INPUT)), key=lambda c: c.level)
    try:
        return x + Plain(p, plain_id)
    except ValueOverflowError:
        return p.input(f"{name}_x", level=p.params.top_level) + Plain(p, plain_id)


def inputs_for(program, *, full: bool = False):
    """A strategy of input dicts for `program`: CKKS floats within each input's declared
    bound (``p.input(name, bound=b)``; [-1, 1] by default), BGV integers in [0, t), for
    every encrypted and plain input; vectors of 1..slots values (all slots when `full`).
    An input feeding a series on a domain directly draws in its part of the domain, every
    slot (`fhec.evaluate.input_interval`: zero padding would leave a domain like (1, 100)).
    A program with a sparse bootstrap (`BootstrapConfig(slots=n)`) gets vectors that
    repeat with period n in every slot, the only values such a bootstrap refreshes."""
    from fhec.evaluate import input_interval
    from fhec.frontend.program import as_he_program
    from fhec.reference import has_sparse_bootstrap

    program = as_he_program(program)
    p = program.params
    nodes = {**program.inputs, **program.plain_inputs}
    period = p.bootstrap.slot_count(p.N) if has_sparse_bootstrap(program) else None

    def vector(node):
        every = full
        if p.scheme == "ckks":
            lo, hi = input_interval(program, node)
            every = every or lo != -hi  # a domain's part: padding zeros would leave it
            elements, dtype = st.floats(lo, hi, allow_nan=False, width=64), np.float64
        else:
            elements, dtype = st.integers(0, p.plain_modulus - 1), np.int64
        if period is not None:  # one period, repeated over every slot
            return hnp.arrays(dtype, period, elements=elements).map(lambda v: np.tile(v, p.slots // period))
        sizes = st.just(p.slots) if every else st.integers(1, p.slots)
        return sizes.flatmap(lambda n: hnp.arrays(dtype, n, elements=elements))

    return st.fixed_dictionaries({name: vector(node) for name, node in nodes.items()})


def with_inputs(program):
    """A strategy of (program, inputs) pairs (use with ``programs(...).flatmap``).
    Raises `ProgramError` for a strategy in place of a program, naming that form."""
    if isinstance(program, st.SearchStrategy):
        raise ProgramError(
            "with_inputs takes one program, not a strategy of programs: write "
            "programs(...).flatmap(fhec.testing.with_inputs) to draw (program, inputs) pairs.")
    return inputs_for(program).map(lambda inputs: (program, inputs))
