"""Automatic parameters: `CKKSParams.for_program` / `BGVParams.for_program`.

As EVA and OpenFHE do, the user states what the program needs (its multiplicative depth,
the CKKS precision, the BGV plaintext modulus, a security level, the machine word) and
fhec chooses the rest: the ring degree N, the levels, the scale, q_0 and the special
primes. The choice is the smallest N, then the smallest scale, that meet the request:

* levels = depth (every rescale / modulus switch consumes one);
* CKKS scale: the smallest 2^s whose estimated worst-slot precision
  (`fhec.schemes.noise`) after a chain of `depth` squarings of a fresh encryption
  (each relinearized by hybrid key switching, then rescaled) is at least
  `precision_bits`: the deepest growth of error a program of that depth sees from
  products alone. Fresh inputs are modeled as the DSL types them (secret-key
  encryptions, as `fhec.evaluate` and `fhec.run` make them); a client encrypting with
  the public key loses a few bits more (about log2(N)/2 + 1);
* q_0: enough word-size primes to hold the scale times the largest value with two bits
  of headroom (`max_value`); BGV: one;
* P: one word-size special prime (hybrid key switching with one prime per digit: the
  smallest log2(Q·P), hence the smallest secure N);
* N: the smallest power of two (at least `min_N`) whose HE-standard bound at `security`
  holds log2(Q·P).

`explain(params, ...)` is the one line `for_program` prints.
"""

from __future__ import annotations

import math

from fhec.errors import InsecureParametersError, ParameterError
from fhec.schemes import noise as nz
from fhec.schemes.params import MAX_N, MIN_SCALE_BITS, BGVParams, CKKSParams, _check_word_bits, max_log_qp
from fhec.schemes.rules import rescale_prime
from fhec.validate import as_int, as_real

SMALLEST_SECURE_N = 2**10
"""The HE standard's smallest ring degree; also the smallest N chosen without security."""

VALUE_HEADROOM_BITS = 2
"""Bits q_0 keeps above scale · max_value (a centered value must stay below q_0 / 2)."""


def program_depth(program_or_depth) -> int:
    """The multiplicative depth of a program (levels its deepest value consumed: top
    level minus the lowest level of any ciphertext), or the int given.

    Accepts an int, a `fhec.Program` / traced ``@fhec.program`` function (its ``ir``), or
    an `HeProgram` (``params`` and ``nodes`` with typed values). Raises `ParameterError`
    otherwise."""
    if isinstance(program_or_depth, bool):
        raise ParameterError(f"depth = {program_or_depth!r}: give a multiplicative depth (an int) or a program.")
    if isinstance(program_or_depth, int) or hasattr(program_or_depth, "__index__"):
        return as_int(program_or_depth, "depth", min=0, fix="the multiplicative depth, an integer >= 0")
    ir = getattr(program_or_depth, "ir", program_or_depth)
    nodes, params = getattr(ir, "nodes", None), getattr(ir, "params", None)
    if nodes is None or params is None:
        raise ParameterError(
            f"for_program takes a multiplicative depth (an int) or an fhec.Program, not "
            f"{type(program_or_depth).__name__}."
        )
    levels = [n.type.level for n in nodes if n.type.is_cipher]
    return params.top_level - min(levels, default=params.top_level)


def _chain_precision(params: CKKSParams, depth: int) -> float:
    """Estimated worst-slot precision after `depth` squarings of a fresh encryption,
    each relinearized (hybrid) and rescaled (module doc)."""
    noise = nz.fresh_noise(params, public_key=False)
    level, scale = params.top_level, params.default_scale
    for _ in range(depth):
        noise = nz.multiply_noise(params, noise, scale, noise, scale)
        noise = nz.add_noise(noise, nz.keyswitch_noise(params, level, "hybrid"))
        noise = nz.rescale_noise(params, noise, rescale_prime(params, level))
        level -= 1
        scale = params.scale_at(level)
    return nz.precision_bits(params, scale, noise)


def _ring_degrees(min_N: int) -> list[int]:
    start = max(min_N, 2)
    return [2**k for k in range(start.bit_length() - 1, MAX_N.bit_length()) if 2**k >= start]


def _checked_common(security, word_bits, min_N) -> tuple[int | None, int, int]:
    if security is not None:
        security = as_int(security, "security", fix="128, 192 or 256 bits, or None for insecure toy parameters")
        max_log_qp(SMALLEST_SECURE_N, security)  # refuses an unknown level
    word_bits = _check_word_bits(word_bits)
    smallest = SMALLEST_SECURE_N if security is not None else 2**5
    if min_N is None:
        return security, word_bits, smallest
    min_N = as_int(min_N, "min_N", min=2, max=MAX_N, fix="a power of two")
    if min_N & (min_N - 1):
        raise ParameterError(f"min_N = {min_N} must be a power of two (a target's smallest ring degree).")
    return security, word_bits, max(min_N, smallest)


def ckks_for_program(
    program_or_depth,
    precision_bits: float = 12.0,
    security: int | None = 128,
    word_bits: int = 32,
    *,
    max_value: float = 1.0,
    min_N: int | None = None,
    explain: bool = True,
) -> CKKSParams:
    """The CKKS parameter set `CKKSParams.for_program` documents (see module doc)."""
    depth = program_depth(program_or_depth)
    precision_bits = as_real(precision_bits, "precision_bits", min=1.0, max=60.0,
                             fix="the bits of precision the outputs need, e.g. 20")
    max_value = as_real(max_value, "max_value", min=0.0, min_exclusive=True,
                        fix="the largest |value| the program computes, e.g. 1.0")
    security, word_bits, min_N = _checked_common(security, word_bits, min_N)
    value_bits = max(0, math.ceil(math.log2(max_value)))
    best_effort: tuple[float, int] | None = None
    for N in _ring_degrees(min_N):
        for scale_bits in range(max(MIN_SCALE_BITS, math.floor(precision_bits)), word_bits + 1):
            base_limbs = -(-(scale_bits + value_bits + VALUE_HEADROOM_BITS + 1) // word_bits)
            lower = (base_limbs + 1) * (word_bits - 1) + depth * (scale_bits - 1)
            if security is not None and lower > max_log_qp(N, security):
                break  # a larger scale only adds bits: try the next N
            try:
                params = CKKSParams(N=N, levels=depth, scale_bits=scale_bits, word_bits=word_bits,
                                    base_limbs=base_limbs, special_primes=1, security=security)
            except InsecureParametersError:
                break
            except ParameterError:
                continue  # e.g. no room below q_0 at this scale: a larger one may fit
            reached = _chain_precision(params, depth)
            if reached >= precision_bits:
                if explain:
                    print(explain_ckks(params, depth, precision_bits, reached, max_value))
                return params
            if best_effort is None or reached > best_effort[0]:
                best_effort = (reached, scale_bits)
    reach = ""
    if best_effort and best_effort[0] >= 0:
        reach = f"; the best reached was {best_effort[0]:.1f} bits"
    elif best_effort:  # the estimated error outgrows the values themselves
        reach = f"; none kept a single bit (at best the error is 2^{-best_effort[0]:.1f} times the values)"
    raise ParameterError(
        f"no CKKS parameter set with {word_bits}-bit words reaches {precision_bits:g} bits of precision at depth "
        f"{depth}{' within ' + str(security) + '-bit security' if security else ''} up to N = 2^17{reach}. Ask for "
        f"fewer bits, a wider word (word_bits, up to 62 outside F1-style targets), or a shallower program."
    )


def explain_ckks(params: CKKSParams, depth: int, precision_bits: float, reached: float, max_value: float) -> str:
    """The one line `for_program` prints about a CKKS choice."""
    security = (f"<= {max_log_qp(params.N, params.security)} for {params.security}-bit security"
                if params.security is not None else "(security=None: no bound)")
    return (
        f"fhec: CKKS N=2^{params.N.bit_length() - 1} ({params.slots} slots), levels={params.levels} for depth {depth}, "
        f"scale 2^{params.scale_bits} for {precision_bits:g} bits (estimated {reached:.1f}), q_0 = "
        f"{params.base_limbs}x{params.word_bits}-bit for |values| <= {max_value:g}, P = 1x{params.word_bits}-bit; "
        f"log2(QP) = {params.log_qp:.0f} {security}"
    )


def bgv_for_program(
    program_or_depth,
    plain_modulus: int = 65537,
    security: int | None = 128,
    word_bits: int = 32,
    *,
    min_N: int | None = None,
    explain: bool = True,
) -> BGVParams:
    """The BGV parameter set `BGVParams.for_program` documents (see module doc): levels =
    depth, one word-size base and special prime, level primes of word_bits − 2 bits (the
    `BGVParams` default), the smallest secure N that batches t (t ≡ 1 mod 2N)."""
    depth = program_depth(program_or_depth)
    t = as_int(plain_modulus, "plain_modulus", min=3, fix="a prime t ≡ 1 mod 2N such as 65537")
    security, word_bits, min_N = _checked_common(security, word_bits, min_N)
    batching = (t - 1) & -(t - 1)  # the largest power of two dividing t - 1: 2N must divide it
    for N in _ring_degrees(min_N):
        if 2 * N > batching:
            break
        lower = 2 * (word_bits - 1) + depth * (word_bits - 3)
        if security is not None and lower > max_log_qp(N, security):
            continue
        try:
            params = BGVParams(N=N, levels=depth, plain_modulus=t, word_bits=word_bits, security=security)
        except InsecureParametersError:
            continue
        if explain:
            print(explain_bgv(params, depth))
        return params
    largest = batching // 2
    raise ParameterError(
        f"no BGV parameter set batches t = {t} (N <= {largest}: t ≡ 1 mod 2N) at depth {depth} with "
        f"{word_bits}-bit words{' and ' + str(security) + '-bit security' if security else ''}; use a t ≡ 1 mod "
        f"2N for a larger N (65537 batches up to N = 2^15), a shallower program, or security=None for a toy."
    )


def explain_bgv(params: BGVParams, depth: int) -> str:
    """The one line `for_program` prints about a BGV choice."""
    security = (f"<= {max_log_qp(params.N, params.security)} for {params.security}-bit security"
                if params.security is not None else "(security=None: no bound)")
    bits = params.modulus_bits or params.word_bits - 2
    return (
        f"fhec: BGV N=2^{params.N.bit_length() - 1} ({params.slots} slots), t={params.plain_modulus}, "
        f"levels={params.levels} for depth {depth} ({bits}-bit switching primes), q_0 = 1x{params.word_bits}-bit, "
        f"P = 1x{params.word_bits}-bit; log2(QP) = {params.log_qp:.0f} {security}"
    )
