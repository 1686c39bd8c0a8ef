"""The typed handles a DSL program computes with: `Cipher` (encrypted) and `Plain`.

A handle is (program, value id); every operation appends typed nodes to its program's
builder (`fhec.ir.he_build.HeBuilder`) and returns a new handle. Operations record the
DSL line that called them; a failing operation leaves the program unchanged and raises
a `FhecError` naming that line.

Operands of ``+ - *`` may be a `Cipher`, a `Plain` of the same program, a Python or
numpy scalar, or a 1-D array-like of at most `slots` values (zero-padded). Python
integers multiply exactly (no rescale); floats and arrays are encoded plaintexts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from fhec.errors import (
    BootstrapError,
    LevelExhaustedError,
    MixedProgramsError,
    ParameterError,
    PlainAttributeError,
    PlaintextOperandError,
    PrecisionWarning,
    ProgramError,
    SchemeMismatchError,
    SlotCountError,
    ValueOverflowError,
    warn_at,
)
from fhec.frontend import constants
from fhec.frontend.location import caller_location
from fhec.frontend.signatures import checked_calls
from fhec.validate import as_real, is_int
from fhec.ir.he import HeOp, HeType
from fhec.ir.he_types import estimated_bits, row_length
from fhec.schemes import rules

if TYPE_CHECKING:
    from fhec.frontend.program import Program


class _Handle:
    __slots__ = ("_program", "_id")
    __array_ufunc__ = None  # numpy must defer to our reflected operators (array * cipher)

    def __init__(self, program: "Program", vid: int):
        self._program = program
        self._id = vid

    @property
    def program(self) -> "Program":
        return self._program

    @property
    def id(self) -> int:
        """The SSA value id in the program."""
        return self._id

    @property
    def loc(self) -> str | None:
        """The DSL line that created this value."""
        return self._program._builder.loc_of(self._id)

    def __bool__(self):
        raise ProgramError(
            "an encrypted program cannot branch on its values (they are not known while tracing); "
            "compute both sides and select with a mask multiply instead.",
            caller_location(),
        )


def _check_same_program(handle: _Handle, other: _Handle, loc: str | None) -> None:
    if other._program is not handle._program:
        raise MixedProgramsError(
            f"this operation combines a value of program {handle._program.name!r} (from {handle.loc}) with a value "
            f"of program {other._program.name!r} (from {other.loc}); a program can only use its own inputs — "
            f"declare the input again in {handle._program.name!r} with p.input(...).",
            loc,
        )


def _journaled(method):
    """Record a DSL call of a ``params="auto"`` program in its journal, so that it can be
    replayed under the parameters chosen at compile time (`fhec.frontend.auto`): the
    method's name, its raw arguments, the DSL line and the value it returned. Only the
    outermost call of a statement is recorded (``x.dot(w)`` calls ``*`` inside), and
    only when it succeeds (a failing operation leaves the program unchanged)."""

    def call(self, *args, **kwargs):
        program = self._program
        journal = program._journal
        if journal is None:
            return method(self, *args, **kwargs)
        program._journal_depth += 1
        try:
            loc = caller_location()
            result = method(self, *args, **kwargs)
        finally:
            program._journal_depth -= 1
        if program._journal_depth == 0:
            journal.append(("value", self._id, method.__name__, args, kwargs, loc, result._id))
        return result

    call.__name__ = method.__name__
    call.__qualname__ = method.__qualname__
    call.__doc__ = method.__doc__
    call.__wrapped__ = method  # its signature, for `checked_calls` and help()
    return call


_UFUNC_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"), "multiply": ("__mul__", "__rmul__"),
    "matmul": ("__matmul__", "__rmatmul__"), "true_divide": ("__truediv__", "__rtruediv__"),
    "divide": ("__truediv__", "__rtruediv__"), "power": ("__pow__", "__rpow__"),
}
"""numpy ufunc name -> (the Cipher operator with the Cipher on the left, on the right)."""

_UFUNC_COMPARISONS = {"equal": "__eq__", "not_equal": "__eq__", "less": "__lt__", "less_equal": "__lt__",
                      "greater": "__lt__", "greater_equal": "__lt__"}
"""numpy comparison ufunc (``np.int64(42) == x``) -> the Cipher operator whose refusal says
what to do instead."""

_NUMPY_FIXES = {
    "sum": "x.sum_slots() sums all slots into slot 0; x.sum(n) sums n slots",
    "dot": "x.dot(w) with the plaintext vector w",
    "inner": "x.dot(w) with the plaintext vector w",
    "mean": "x.mean()",
    "roll": "x.rotate(k)",
}
"""numpy function name -> the DSL operation that does its job on a ciphertext."""

_EQUALITY_FIXES = {
    "bgv": "its value is unknown while tracing (Python's == would only compare the handles). Compute an "
           "encrypted 0/1 indicator instead: by Fermat, 1 - (x - c) ** (t - 1) is 1 where x == c and 0 elsewhere "
           "mod a prime t (x.polynomial(...) of that series), then mask with a product; to ask whether two "
           "handles are the same value, use `x is y`",
    "ckks": "its value is unknown while tracing (Python's == would only compare the handles). Approximate an "
            "indicator of x - c near 0 with x.polynomial(fhec.approx(f, domain=..., degree=...)) and mask with "
            "a product; to ask whether two handles are the same value, use `x is y`",
}
"""scheme -> how to express an equality test on encrypted slots."""


@checked_calls
class Cipher(_Handle):
    """An encrypted value (a ciphertext) of a program being traced. Also the annotation
    of encrypted arguments of an ``@fhec.program`` function."""

    __slots__ = ()

    # -- metadata -----------------------------------------------------------------------

    @property
    def type(self) -> HeType:
        """The inferred type: level, scale, parts, estimated noise, keys."""
        return self._program._builder.type_of(self._id)

    @property
    def level(self) -> int:
        return self.type.level

    @property
    def scale(self):
        """CKKS scale (float) or BGV plaintext factor (int)."""
        return self.type.scale

    @property
    def parts(self) -> int:
        return self.type.parts

    @property
    def bound(self) -> float | None:
        """CKKS: the bound on |slot value| the compiler has proven (declared input bounds
        propagated through the ops; `fhec.schemes.ranges`); None for BGV."""
        return self.type.bound

    @property
    def estimated_bits(self) -> float:
        """Estimated precision bits (CKKS) or noise budget bits (BGV). A CKKS estimate
        that saturated (`fhec.ir.he_types.noise_saturated`, about -19 bits) bounds nothing:
        the precision may be lower still."""
        return estimated_bits(self._b.params, self.type)

    def __repr__(self) -> str:
        t = self.type
        scale = f"2^{math.log2(t.scale):.3f}" if self._b.params.scheme == "ckks" else f"factor {t.scale}"
        return f"<Cipher %{self._id} of {self._program.name!r}: level {t.level}, scale {scale}, {t.parts} parts>"

    # -- plumbing -----------------------------------------------------------------------

    @property
    def _b(self):
        return self._program._builder

    def _wrap(self, vid: int) -> "Cipher":
        return self if vid == self._id else Cipher(self._program, vid)

    def _apply(self, fn: Callable[[], int]) -> "Cipher":
        with self._b.transaction():
            return self._wrap(fn())

    def _combine(self, other: Any, loc: str | None, with_ct, with_pt, with_const):
        if isinstance(other, _Handle):
            _check_same_program(self, other, loc)
            fn = with_ct if isinstance(other, Cipher) else with_pt
            return self._apply(lambda: fn(other._id))
        if not constants.is_constant(other):
            raise ProgramError(
                f"cannot combine a ciphertext with {type(other).__name__} {other!r}; the other operand must be a "
                f"value of this program, a number, or a 1-D vector of numbers.",
                loc,
            )
        value = constants.constant(self._b.params, other, loc)
        return self._apply(lambda: with_const(value))

    # -- arithmetic -----------------------------------------------------------------------

    @_journaled
    def __add__(self, other):
        loc, b, x = caller_location(), self._b, self._id
        return self._combine(
            other, loc, lambda o: self._correlated(b.add(x, o, loc), x, o), lambda w: b.add_plain(x, w, loc),
            lambda c: b.add_const(x, c, loc)
        )

    def _correlated(self, vid: int, x: int, o: int) -> int:
        """The sum `vid` of x and o, its error estimate raised to the two errors' coherent
        sum where they are one error (`y + y`, in BGV too; `y + y.conjugate()` on CKKS's
        real slots) or read a common input slot through rotations
        (`fhec.frontend.correlation`): the rules add them as independent (`y + y` ten
        times was estimated at 15.5 bits where 12.1 were measured; a BGV budget 50 bits
        too high after 103 doublings)."""
        from fhec.frontend.correlation import coherent_noise, error_offsets, overlap_through_rotation

        b = self._b
        if not _one_error(b, x, o):
            if b.params.scheme != "ckks":
                return vid
            cache = self._program._offsets_cache  # node ids are stable once an op's transaction commits
            if not overlap_through_rotation(error_offsets(b, x, cache), error_offsets(b, o, cache)):
                return vid
        node = b.nodes[vid]
        na, nb = (b.type_of(v).noise for v in node.args[:2])
        coherent = coherent_noise(na, nb)
        return b.hint(vid, noise=coherent) if coherent > node.type.noise else vid

    __radd__ = __add__

    @_journaled
    def __sub__(self, other):
        loc, b, x = caller_location(), self._b, self._id
        return self._combine(
            other,
            loc,
            lambda o: self._correlated(b.add(x, o, loc, subtract=True), x, o),
            lambda w: b.add_plain(x, w, loc, subtract=True),
            lambda c: b.add_const(x, c, loc, subtract=True),
        )

    @_journaled
    def __rsub__(self, other):
        loc, b, x = caller_location(), self._b, self._id
        return self._combine(
            other,
            loc,
            None,  # a Cipher on the left is handled by its own __sub__
            lambda w: b.add_plain(b.negate(x, loc), w, loc),
            lambda c: b.add_const(b.negate(x, loc), c, loc),
        )

    @_journaled
    def __mul__(self, other):
        loc, b, x = caller_location(), self._b, self._id
        return self._combine(
            other,
            loc,
            lambda o: b.multiply(x, o, loc, coherent_square=True),
            lambda w: b.multiply_plain(x, w, loc),
            lambda c: b.multiply_const(x, c, loc),
        )

    __rmul__ = __mul__

    @_journaled
    def __truediv__(self, other):
        loc = caller_location()
        if self._b.params.scheme != "ckks":
            raise SchemeMismatchError("division by a constant is CKKS-only; in BGV multiply by an inverse mod t.", loc)
        fix = "a ciphertext can only be divided by a finite nonzero number"
        divisor = as_real(other, "the divisor", error=ProgramError, fix=fix, where=loc)
        if divisor == 0 or not math.isfinite(1.0 / divisor):
            raise ProgramError(f"{fix}, not {other!r}.", loc)
        return self._apply(lambda: self._b.multiply_const(self._id, 1.0 / divisor, loc))

    @_journaled
    def __neg__(self):
        loc = caller_location()
        return self._apply(lambda: self._b.negate(self._id, loc))

    def __pos__(self):
        return self

    @_journaled
    def __pow__(self, k, modulo=None):
        loc = caller_location()
        if modulo is not None:
            self._unsupported("pow(x, k, m)", "a modulus is the scheme's (BGV's plain_modulus); write x ** k")
        if not is_int(k) or k < 1:
            raise ProgramError(f"x ** k needs an integer k >= 1, got {k!r}.", loc)
        if k == 1:
            return self
        depth, levels = (int(k) - 1).bit_length(), self._b.params.levels
        if depth > levels + 1:
            # Refuse before building a coefficient tuple of k entries (x ** 10**9): a
            # product tree of that depth exceeds any parameter set of `levels` levels.
            raise LevelExhaustedError(
                f"x ** {k} needs {depth} levels of multiplication for its powers, but the parameters have "
                f"{levels}; increase `levels` or lower the exponent.",
                loc,
            )
        return self._polynomial((0,) * int(k) + (1,), loc)

    # -- Python protocols an encrypted value cannot support ---------------------------------

    def _unsupported(self, what: str, fix: str):
        raise ProgramError(f"{what} is not possible on an encrypted value: {fix}.", caller_location())

    def __lt__(self, other):
        self._unsupported("comparison (<, <=, >, >=)", "its value is unknown while tracing; approximate the "
                          "comparison with x.polynomial(...) (e.g. a sign approximation)")

    __le__ = __gt__ = __ge__ = __lt__

    def __eq__(self, other):
        # Python's default == compares the handles (object identity) and returns a plain
        # bool, so a ported `if x == 42:` or `mask = (x == key)` silently built a wrong program
        self._unsupported("an equality test (==, !=)", _EQUALITY_FIXES[self._b.params.scheme])

    __ne__ = __eq__
    # identity hashing, as before __eq__ was defined: handles may key dicts and sets, where
    # identical objects match without calling __eq__ (distinct live objects hash apart)
    __hash__ = object.__hash__

    def __abs__(self):
        self._unsupported("abs()", "approximate it with x.polynomial(...) (e.g. an even polynomial)")

    @_journaled
    def __matmul__(self, other):
        """``x @ M``: numpy's vector-matrix product, ``y[j] = sum_i x[i] M[i, j]``, that is
        ``M.T @ x`` through `linear_transform`."""
        return self._matmul(other, caller_location(), transpose=True)

    @_journaled
    def __rmatmul__(self, other):
        """``M @ x``: the plaintext matrix times this vector (`linear_transform(M)`)."""
        return self._matmul(other, caller_location(), transpose=False)

    def _matmul(self, other, loc: str | None, transpose: bool) -> "Cipher":
        if isinstance(other, _Handle):
            self._unsupported("@ between two program values", "one operand must be a plaintext matrix known "
                              "while tracing (x @ M, M @ x, x.linear_transform(M)); for an encrypted dot "
                              "product use x.dot(w)")
        matrix = np.asarray(other) if isinstance(other, (list, tuple, np.ndarray)) else None
        if matrix is None or matrix.ndim != 2:
            shape = "" if matrix is None else f" of shape {matrix.shape}"
            raise ProgramError(
                f"{'x @ M' if transpose else 'M @ x'} needs a 2-D plaintext matrix, got {type(other).__name__}"
                f"{shape}; for a vector use x.dot(w), for diagonals x.linear_transform({{k: v}}).", loc)
        from fhec.frontend.matrices import diagonals_of

        diagonals = diagonals_of(self._b.params, matrix.T if transpose else matrix, loc)
        return self._apply(lambda: self._b.linear_transform(self._id, diagonals, loc, hoisting=None))

    def __getitem__(self, index):
        self._unsupported("indexing", "slots cannot be read while tracing; to isolate slot i multiply by a "
                          "0/1 mask vector and rotate with x.rotate(i)")

    def __iter__(self):
        self._unsupported("iteration", "an encrypted value is one vector of slots; use sum_slots() or rotate()")

    def __len__(self):
        self._unsupported("len()", f"the value has {self._b.params.slots} slots (program.params.slots)")

    def __setitem__(self, index, value):
        self._unsupported("item assignment", "slots cannot be written one by one; build the vector with a 0/1 "
                          "mask product and an addition, x * mask + y * (1 - mask)")

    def __rtruediv__(self, other):
        self._unsupported("c / x", "approximate 1/x over the value's range with x.polynomial(...) or "
                          "fhec.approx")

    def __rpow__(self, other):
        self._unsupported("c ** x", "only x ** k with an integer k >= 1 is possible; approximate "
                          "c ** x over the value's range with x.polynomial(...) or fhec.approx")

    def __floordiv__(self, other):
        self._unsupported("x // c, x % c and divmod", "they need comparisons; divide by a constant with x / c (CKKS) or "
                          "approximate the rounding with x.polynomial(...)")

    __rfloordiv__ = __mod__ = __rmod__ = __divmod__ = __rdivmod__ = __floordiv__

    def __float__(self):
        self._unsupported("conversion to a Python number", "its value is known only after decryption: "
                          "compile and run the program, then read the outputs")

    __int__ = __complex__ = __index__ = __round__ = __trunc__ = __floor__ = __ceil__ = __float__

    def __and__(self, other):
        self._unsupported("bitwise operators (&, |, ^, ~, <<, >>)", "encrypted values are CKKS reals or BGV "
                          "integers mod t; use + - * (in BGV, x * y of 0/1 values is AND)")

    __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __and__
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __and__

    def __invert__(self):
        self.__and__(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's operators with an array on the left (``w * x``, ``M @ x``) are this
        value's reflected operators; any other ufunc (np.exp, np.sqrt) is refused."""
        names = _UFUNC_OPERATORS.get(ufunc.__name__)
        if method == "__call__" and not kwargs and names is not None and len(inputs) == 2:
            left, right = inputs
            return getattr(self, names[0])(right) if left is self else getattr(self, names[1])(left)
        if ufunc.__name__ in _UFUNC_COMPARISONS:
            getattr(self, _UFUNC_COMPARISONS[ufunc.__name__])(None)
        self._unsupported(f"numpy's {ufunc.__name__}", "numpy computes on plaintext arrays only; use the DSL's "
                          "operators, or approximate the function with x.polynomial(...) or fhec.approx")

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", str(func))
        self._unsupported(f"numpy's {name}()", _NUMPY_FIXES.get(name, "numpy computes on plaintext arrays only; "
                                                                "use the DSL's operations (docs/dsl.md)"))

    # -- slot movement --------------------------------------------------------------------

    @_journaled
    def rotate(self, k: int) -> "Cipher":
        """Slot i of the result holds slot i + k (``np.roll(x, -k)``); BGV rotates both rows."""
        loc = caller_location()
        if not is_int(k):
            raise ProgramError(f"rotate(k) needs an integer step, got {k!r}.", loc)
        return self._apply(lambda: self._b.rotate(self._id, int(k), loc))

    @_journaled
    def conjugate(self) -> "Cipher":
        """CKKS complex conjugation (the identity on the real values fhec computes with)."""
        loc = caller_location()
        if self._b.params.scheme != "ckks":
            raise SchemeMismatchError("conjugate() is a CKKS operation; BGV programs use swap_rows().", loc)
        return self._apply(lambda: self._b.conjugate(self._id, loc))

    @_journaled
    def swap_rows(self) -> "Cipher":
        """BGV: exchange the two rows (slots[:N/2] and slots[N/2:])."""
        loc = caller_location()
        if self._b.params.scheme != "bgv":
            raise SchemeMismatchError("swap_rows() is a BGV operation; CKKS programs use conjugate().", loc)
        return self._apply(lambda: self._b.conjugate(self._id, loc))

    # -- levels -----------------------------------------------------------------------------

    @_journaled
    def rescale(self) -> "Cipher":
        """CKKS: divide by the last prime (level - 1). Only in rescale='manual' programs."""
        loc = caller_location()
        if self._b.params.scheme != "ckks":
            raise SchemeMismatchError("rescale() is a CKKS operation; BGV programs use mod_switch().", loc)
        if self._b.options.rescale == "auto":
            raise ProgramError(
                "rescale() is automatic in a rescale='auto' program; drop the call, or create the program "
                "with rescale='manual' to place rescales yourself (use level_down() to just drop a level).",
                loc,
            )
        rules.check_rescale_keeps_a_bit(self._b.params, self.level, self.scale, loc)
        return self._apply(lambda: self._b.rescale(self._id, loc))

    @_journaled
    def mod_switch(self) -> "Cipher":
        """Drop one level (BGV modulus switching; CKKS: drop a limb keeping the scale, or in
        an auto program move onto the lower level's scale)."""
        loc = caller_location()
        return self._apply(lambda: self._b.mod_switch(self._id, loc))

    @_journaled
    def level_down(self, level: int) -> "Cipher":
        """Bring the value down to `level` (CKKS: at that level's canonical scale)."""
        loc = caller_location()
        if self._program._auto is not None:
            from fhec.frontend.auto import refuse_levels

            refuse_levels(f"level_down({level!r})", loc)
        if not is_int(level):
            raise ProgramError(f"level_down({level!r}) needs an integer level, not {type(level).__name__}: levels "
                               f"count primes; here 0 to {self.level - 1}.", loc)
        if not 0 <= level < self.level:
            raise ProgramError(
                f"level_down({level!r}) needs a level below the value's level {self.level} (and >= 0).", loc
            )
        return self._apply(lambda: self._b.level_down(self._id, int(level), None, loc))

    @_journaled
    def relinearize(self) -> "Cipher":
        """Turn a 3-part product back into 2 parts (a no-op on 2-part values)."""
        loc = caller_location()
        return self._apply(lambda: self._b.relinearize(self._id, loc))

    # -- high-level ops -----------------------------------------------------------------------

    @_journaled
    def sum_slots(self, n: int | None = None, stride: int = 1) -> "Cipher":
        """Slot i receives sum_{j<n} x[i + j·stride] (cyclically): with n=None every slot
        holds the total. CKKS: 1 <= n <= N/2. BGV: 1 <= n <= N/2 sums within each row,
        n = N (the default) over both rows (stride 1 only). `stride` (Lattigo's InnerSum
        batch size): sum every stride-th slot, e.g. the columns of a row-major matrix."""
        return self._sum(n, caller_location(), stride)

    @_journaled
    def sum(self, n: int | None = None) -> "Cipher":
        """numpy's ``x.sum()``: every slot holds the total of all slots (`sum_slots`);
        with `n`, slot i holds the sum of the n slots from i (slot 0: of the first n)."""
        return self._sum(n, caller_location())

    def _sum(self, n, loc: str | None, stride: int = 1) -> "Cipher":
        p = self._b.params
        full = p.slots
        n = full if n is None else n
        row = row_length(p)
        if not is_int(n) or not (1 <= n <= row or (n == full and stride == 1)):
            what = f"between 1 and {row}" + (f", or {full} for both rows" if full != row and stride == 1 else "")
            error = SlotCountError if is_int(n) and n > row else ProgramError
            raise error(f"sum_slots(n={n!r}): n must be {what}.", loc)
        step = self._stride(stride, "sum_slots", loc)
        if n == 1:
            return self
        return self._apply(lambda: self._b.sum_slots(self._id, int(n), loc, stride=step))

    @_journaled
    def replicate(self, n: int, stride: int = 1) -> "Cipher":
        """Slot i receives sum_{j<n} x[i − j·stride] (cyclically; Lattigo's Replicate):
        a vector held in the first `stride` slots, zero elsewhere, is copied n times, block
        after block. The mirror image of `sum_slots(n, stride)`, with the same cost."""
        loc = caller_location()
        row = row_length(self._b.params)
        if not is_int(n) or not 1 <= n <= row:
            error = SlotCountError if is_int(n) and n > row else ProgramError
            raise error(f"replicate(n={n!r}): n must be between 1 and {row}.", loc)
        step = self._stride(stride, "replicate", loc)
        if n == 1:
            return self
        return self._apply(lambda: self._b.sum_slots(self._id, int(n), loc, stride=(-step) % row))

    def _stride(self, stride, what: str, loc) -> int:
        row = row_length(self._b.params)
        if not is_int(stride) or not 1 <= stride < row:
            raise ProgramError(f"{what}(stride={stride!r}): the stride must be an integer between 1 and {row - 1}.", loc)
        return int(stride)

    @_journaled
    def dot(self, w, n: int | None = None) -> "Cipher":
        """numpy's ``x.dot(w)``: ``(x * w).sum(n)``, every slot (slot 0 at least) holding
        the dot product. `w` is a plaintext vector, a `Plain` input or a `Cipher`."""
        loc = caller_location()
        if not isinstance(w, _Handle) and not constants.is_constant(w):
            raise ProgramError(f"x.dot(w) needs a vector, a plain input or a ciphertext, not "
                               f"{type(w).__name__}.", loc)
        with self._b.transaction():
            return (self * w)._sum(n, loc)

    @_journaled
    def mean(self, n: int | None = None) -> "Cipher":
        """numpy's ``x.mean()`` over the first `n` slots (default: all `slots`): slot 0
        holds it (``x.sum(n) / n``). CKKS only: BGV has no division; use `sum` there.
        Zero-padded slots count: pass `n`, the length of the encrypted vector."""
        loc = caller_location()
        if self._b.params.scheme != "ckks":
            raise SchemeMismatchError("mean() divides, which is CKKS-only; in BGV use x.sum(n) and multiply "
                                      "by an inverse of n mod t.", loc)
        count = self._b.params.slots if n is None else n
        with self._b.transaction():
            total = self._sum(n, loc)
            return total._apply(lambda: self._b.multiply_const(total._id, 1.0 / count, loc))

    @_journaled
    def linear_transform(self, matrix, hoisting: str | None = None, n1: int | None = None) -> "Cipher":
        """Plaintext matrix times this encrypted vector (baby-step giant-step).

        `matrix` is a 2-D array-like (m x n, at most slots x slots, zero-padded), or a dict
        ``{k: vector}`` meaning ``sum_k vector ⊙ rotate(x, k)`` (for BGV also
        ``{("swap", k): vector}`` for terms on the swapped rows). Kept as one IR op.
        `hoisting`: how the baby-step rotations of this vector share their decomposition:
        "single" (one mod-up for all), "double" (also no mod-down per baby step: the
        baby-step products are summed over Q·P and each giant step divides by P once;
        its rotations use hybrid key switching whatever the default; the last division
        is merged with the rescale that follows, `fuse_mod_down_rescale`; with n1
        spanning every diagonal, all rotations come off one decomposition), "none", or
        None/"auto" (the compile option, `fhec.compile(..., hoisting=...)`, decides
        between single and none). "double" is chosen here, per transform, because it
        changes the algorithm, and with it the exact ciphertext every driver computes.
        `n1`: the baby-step count (default: the split with the fewest rotations, which is
        also the fewest rotation keys). The best n1 for a machine depends on its bandwidth
        (Osiris Fig. 11): `fhec.analysis.bsgs.best_n1` estimates it for a target. It is
        chosen here, not at compile time, so that every driver and target computes the
        same ciphertext.
        """
        loc = caller_location()
        from fhec.frontend.matrices import diagonals_of

        diagonals = diagonals_of(self._b.params, matrix, loc)
        if hoisting not in (None, "auto", "single", "double", "none"):
            raise ParameterError(
                f"linear_transform(hoisting={hoisting!r}): choose 'auto', 'single', 'double' or 'none'.", loc)
        mode = None if hoisting in (None, "auto") else hoisting
        if n1 is not None and not (is_int(n1) and n1 >= 1):
            raise ParameterError(f"linear_transform(n1={n1!r}): the baby-step count is a positive integer.", loc)
        n1 = None if n1 is None else int(n1)
        return self._apply(lambda: self._b.linear_transform(self._id, diagonals, loc, hoisting=mode, n1=n1))

    @_journaled
    def polynomial(self, coeffs, basis: str | None = None, domain=None) -> "Cipher":
        """sum_i coeffs[i] * B_i(u), B_i = u^i (basis="power", the default) or the
        Chebyshev T_i (basis="chebyshev"), u = (2x - a - b) / (b - a) for domain=(a, b)
        (u = x without one). `coeffs` may also be a numpy ``Polynomial`` / ``Chebyshev``
        (its basis and domain are used) or what `fhec.approx` returns.

        Evaluated by baby-step / giant-step Paterson–Stockmeyer (`fhec.ir.he_polynomial`):
        depth ceil(log2(d + 1)) levels, plus one when the domain map has a non-integer
        factor. A constant series gives x*0 + c (no level). Raises `PolynomialError` for
        bad coefficients, basis or domain and `LevelExhaustedError` (saying how many levels
        the series needs) when the operand has too few levels.
        """
        loc = caller_location()
        from fhec.frontend.series import series_of

        cs, basis, domain = series_of(self._b.params, coeffs, basis, domain, loc)
        if cs == (0, 1) and domain is None:  # u = x and B_1 = x in both bases
            return self
        return self._polynomial(cs, loc, basis, domain)

    def _outside_chebyshev_domain(self, basis: str, domain) -> str | None:
        """What to say when this operand's bound reaches outside the series' interval
        (`he_polynomial.series_interval`) further than the bounds take as inside it
        (`he_polynomial.within_domain`), else None."""
        from fhec.ir.he_polynomial import series_interval, within_domain

        interval = series_interval(basis, domain)
        b = self.bound
        if interval is None or b is None or within_domain(interval, b):
            return None
        a, z = interval
        return f"the operand can reach |x| = {b:.6g} (its bound), beyond the interval [{a:.6g}, {z:.6g}]"

    def _warn_beyond_domain(self, cs: tuple, basis: str, domain, loc: str | None) -> None:
        """A `PrecisionWarning` when the operand's bound reaches further beyond the series'
        interval than `he_polynomial.within_domain` allows: there an approximation no longer
        approximates and a Chebyshev series grows like (|u| + sqrt(u^2 - 1))^degree, so the
        estimates cover the whole range and the result is usually far from the function."""
        from fhec.ir.he_polynomial import series_interval, within_domain

        interval = series_interval(basis, domain)
        b = self.bound
        if interval is None or b is None or len(cs) <= 2 or within_domain(interval, b):
            return
        a, z = interval
        warn_at(f"{loc + ': ' if loc else ''}the operand of this degree-{len(cs) - 1} series can reach |x| = {b:.6g} "
                f"(its bound), beyond the series' interval [{a:.6g}, {z:.6g}]: outside it an approximation does not "
                f"approximate its function and a Chebyshev series grows exponentially with the degree; the "
                f"precision estimate covers that whole range, and every run checks its inputs against the interval "
                f"(fhec.reference.check_series_operands). Declare a bound within the interval (p.input(name, "
                f"bound=...)), scale the operand into it, or widen the domain (fhec.approx(f, domain=...)).",
                PrecisionWarning, loc)

    def bootstrap(self) -> "Cipher":
        """CKKS bootstrapping: the same values at a high level again (the parameters'
        `fhec.BootstrapConfig` says how, and how many levels it uses; docs/bootstrapping.md).

        Raises `SchemeMismatchError` for BGV and `BootstrapError` when the parameters have
        no bootstrap config or the value's level and scale leave ModRaise no room.
        """
        loc = caller_location()
        p = self._program.params
        if p.scheme != "ckks":
            raise SchemeMismatchError(
                "bootstrap() is a CKKS operation; BGV programs cannot be bootstrapped in fhec (use more levels).", loc)
        if p.bootstrap is None:
            raise BootstrapError(
                "bootstrap() needs parameters that say how to bootstrap: CKKSParams(..., "
                "bootstrap=fhec.BootstrapConfig(...)) with enough levels (see docs/bootstrapping.md).", loc)
        return self._apply(lambda: self._b.bootstrap(self._id, loc))

    def _polynomial(self, cs: tuple, loc: str | None, basis: str = "power", domain=None) -> "Cipher":
        self._warn_beyond_domain(cs, basis, domain, loc)
        try:
            return self._apply(lambda: self._b.polynomial(self._id, cs, loc, basis, domain))
        except ValueOverflowError as e:
            outside = self._outside_chebyshev_domain(basis, domain)
            if outside is None:
                if self._levels_short(cs, basis, domain):
                    # the series ran out of levels and an intermediate at level 0 overflowed
                    # first: tighter bounds would not help, more levels do
                    raise self._level_error(cs, basis, domain, loc) from None
                raise
            # more levels, the message's usual advice, cannot help here: outside its domain a
            # Chebyshev series grows like (|u| + sqrt(u^2 - 1))^degree
            raise ValueOverflowError(
                f"{outside}, outside the domain of this degree-{len(cs) - 1} Chebyshev series, where its terms "
                f"grow exponentially: {e.bare_message.split('. Declare')[0]}. More levels do not help. Declare a bound within the domain (p.input(name, "
                f"bound=...)), scale the operand into it, or widen the domain (fhec.approx(f, domain=...)).",
                loc,
            ) from None
        except LevelExhaustedError as e:
            raise self._level_error(cs, basis, domain, loc) from e

    def _levels_short(self, cs: tuple, basis: str, domain) -> bool:
        from fhec.ir.he_polynomial import coefficient_reducer, polynomial_depth

        return polynomial_depth(cs, basis, domain, coefficient_reducer(self._b.params)) > self.level

    def _level_error(self, cs: tuple, basis: str, domain, loc: str | None) -> LevelExhaustedError:
        from fhec.ir.he_polynomial import coefficient_reducer, polynomial_depth

        p = self._b.params
        need = polynomial_depth(cs, basis, domain, coefficient_reducer(p))
        more = max(1, need - self.level)
        return LevelExhaustedError(
            f"a polynomial of degree {len(cs) - 1} ({basis} basis{', with a domain map' if domain else ''}) "
            f"needs {need} level(s) but its operand is at level {self.level}: it needs {more} more level(s); "
            f"use levels={p.levels + more} in the parameters (increase `levels`, now {p.levels}), apply it "
            f"to a value at level {need} or more, or lower the degree.",
            loc,
        )


def _one_error(b, x: int, o: int) -> bool:
    """Whether values x and o carry one error: the same value, or (CKKS, whose slots hold
    reals) one the conjugate of the other."""
    if x == o:
        return True
    if b.params.scheme != "ckks":
        return False
    return any(b.nodes[v].op is HeOp.CONJUGATE and b.nodes[v].args[0] == u for u, v in ((x, o), (o, x)))


def _plain_error(op: str):
    def method(self, *args, **kwargs):
        raise PlaintextOperandError(
            f"{op} needs a ciphertext, but {self._name!r} is a plain input (declared at {self.loc}); "
            f"plain inputs can only be added to / subtracted from / multiplied with a ciphertext. "
            f"Declare it with p.input({self._name!r}) to encrypt it.",
            caller_location(),
        )

    method.__name__ = op
    return method


@checked_calls
class Plain(_Handle):
    """An unencrypted input vector (given at run time, encoded where it is used). Also the
    annotation of plaintext arguments of an ``@fhec.program`` function.

    A plain value is only an operand of ``+ - *`` with a `Cipher`.
    """

    __slots__ = ()

    @property
    def _name(self) -> str:
        return self._program._builder.nodes[self._id].attr("name")

    def __repr__(self) -> str:
        return f"<Plain {self._name!r} of {self._program.name!r}>"

    def __getattr__(self, attr: str):
        # only missing attributes get here: a ciphertext method on a plain input
        # (w.rotate(1), w.bootstrap()) was a bare AttributeError
        if not attr.startswith("_") and hasattr(Cipher, attr):
            raise PlainAttributeError(
                f"{attr} applies to encrypted values, but {self._name!r} (declared at {self.loc}) is a plain input, "
                f"only an operand of + - * with a ciphertext; declare it with p.input(...) to encrypt it, or "
                f"transform the plain data before the program.",
                caller_location(),
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _with_cipher(self, other, reflected: Callable[[Cipher, "Plain"], Cipher]):
        if isinstance(other, Cipher):
            return reflected(other, self)
        if isinstance(other, _Handle) or constants.is_constant(other):
            raise PlaintextOperandError(
                f"at least one operand must be a ciphertext, but this combines the plain input {self._name!r} "
                f"(declared at {self.loc}) with a {'plain input' if isinstance(other, Plain) else 'constant'}; "
                f"declare one of them with p.input(...) to encrypt it, or combine the plain values before the program.",
                caller_location(),
            )
        raise ProgramError(
            f"cannot combine the plain input {self._name!r} with {type(other).__name__} {other!r:.60}; plain inputs "
            f"are only operands of + - * with a ciphertext.",
            caller_location(),
        )

    def __add__(self, other):
        return self._with_cipher(other, Cipher.__radd__)

    __radd__ = __add__

    def __sub__(self, other):
        return self._with_cipher(other, Cipher.__rsub__)

    def __rsub__(self, other):
        return self._with_cipher(other, Cipher.__sub__)

    def __mul__(self, other):
        return self._with_cipher(other, Cipher.__rmul__)

    __rmul__ = __mul__

    __neg__ = _plain_error("negation")
    __pow__ = _plain_error("x ** k")
    __truediv__ = _plain_error("division")
    rotate = _plain_error("rotate()")
    conjugate = _plain_error("conjugate()")
    swap_rows = _plain_error("swap_rows()")
    rescale = _plain_error("rescale()")
    mod_switch = _plain_error("mod_switch()")
    level_down = _plain_error("level_down()")
    relinearize = _plain_error("relinearize()")
    sum_slots = _plain_error("sum_slots()")
    sum = _plain_error("sum()")
    dot = _plain_error("dot()")
    mean = _plain_error("mean()")
    linear_transform = _plain_error("linear_transform()")
    polynomial = _plain_error("polynomial()")
    # every other Python and numpy protocol: the same error, not Python's bare TypeError
    __rpow__ = _plain_error("c ** w")
    __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _plain_error("division")
    __divmod__ = __rdivmod__ = _plain_error("divmod()")
    __matmul__ = __rmatmul__ = _plain_error("@")
    __pos__ = __abs__ = _plain_error("unary + and abs()")
    __invert__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _plain_error("bitwise operators")
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _plain_error("bitwise operators")
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _plain_error("comparison")
    __hash__ = object.__hash__  # identity, as for Cipher
    __getitem__ = __setitem__ = __iter__ = __len__ = _plain_error("indexing, iteration and len()")
    __float__ = __int__ = __complex__ = __index__ = _plain_error("conversion to a Python number")
    __round__ = __trunc__ = __floor__ = __ceil__ = _plain_error("conversion to a Python number")
    __array_ufunc__ = _plain_error("a numpy function")
    __array_function__ = _plain_error("a numpy function")


__all__ = ["Cipher", "Plain"]
