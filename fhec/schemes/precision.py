"""Precision guards for explicitly requested key-switching methods (CKKS).

BV key switching (F1's digits, no special primes) adds an error proportional to the
word-size primes q_i; with 32-bit words and a 2^30 scale that error is about 2^46 in
scaled units, so a BV rotation leaves ~−16 bits of precision: a silent garbage result.
`check_keyswitch` turns that into `PrecisionError` (below 1 bit) or a `PrecisionWarning`
(below the parameters' ``min_precision_bits``, default 8).

Executions (the eager evaluator, compiled runs) are *strict*: they raise before
computing a result that would be noise. Tracing and compiling only warn: a program
compiled with BV for a cost study (F1's own method) is legitimate as long as nobody
trusts what its run would decrypt to.

It fires only for BV, and only when the key switch is what costs the precision (its
error exceeds the operand's by more than a bit, the test of
`fhec.passes.keyswitch_choice`): a value that was already imprecise is not blamed on the
key switch, and the "auto" policy, which picks BV only when it is noise-neutral, never
triggers it. Hybrid is the most precise method there is, so it is never blamed: the
worst-slot estimate in the IR (``prec=``) reports what it leaves.

``min_precision_bits=None`` in the parameters turns the guard off, for studying
imprecise configurations on purpose (e.g. the bit-exactness of compiled BV key switches).
"""

from __future__ import annotations

import math

from fhec.errors import PrecisionError, PrecisionWarning, warn_at
from fhec.schemes import noise as nz
from fhec.schemes.params import Params


def min_precision_bits(params: Params) -> float | None:
    """The precision below which a warning is raised (CKKS parameters' field); None for
    BGV or when the parameters turn the guard off."""
    return getattr(params, "min_precision_bits", None) if params.scheme == "ckks" else None


def check_keyswitch(
    params: Params,
    level: int,
    scale: float,
    noise: float,
    method: str,
    what: str,
    where: str | None = None,
    *,
    strict: bool = True,
) -> None:
    """Check a CKKS key switch by `method` of a value at (`level`, `scale`) with error
    `noise` (log2 std); `what` names the op ("rotation by 2"), `where` its DSL line.

    Raises `PrecisionError` when the key switch leaves less than 1 bit of estimated
    worst-slot precision (with ``strict=False`` it warns instead, saying a run would
    raise); warns `PrecisionWarning` below ``min_precision_bits``.
    Does nothing for BGV, for hybrid, when the guard is off, or when the key switch does
    not dominate the error.
    """
    floor = min_precision_bits(params)
    if floor is None or method == "hybrid":
        return
    ks = nz.keyswitch_noise(params, level, method)
    if ks <= noise + 1:
        return
    bits = nz.precision_bits(params, scale, nz.add_noise(noise, ks))
    advice = (
        f"its key-switching error (2^{ks:.1f} at scale 2^{math.log2(scale):.1f}) swamps the value. "
        f"Use keyswitch='hybrid' (or 'auto' when compiling, which picks BV only where it costs no precision)"
    )
    # the warnings are attributed to `where`, the DSL line (their filename and lineno)
    if bits < 1.0:
        message = f"{what} with keyswitch={method!r} leaves an estimated {bits:.1f} bits of precision: {advice}."
        if strict:
            raise PrecisionError(message, where)
        warn_at(f"{message} Running this program will raise PrecisionError.", PrecisionWarning, where,
                stacklevel=3)
    elif bits < floor:
        warn_at(
            f"{what} with keyswitch={method!r} leaves an estimated {bits:.1f} bits of precision, below "
            f"min_precision_bits={floor:g}: {advice}, or lower min_precision_bits in the parameters.",
            PrecisionWarning,
            where,
            stacklevel=3,
        )

