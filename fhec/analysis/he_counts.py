"""Closed-form counts of a whole HE program: limb instructions per HE op, then modular
multiplies and additions, without lowering it.

`program_limb_counts(program, methods)` sums, over the primitive nodes of an expanded HE
program, the limb instructions `fhec.passes.lower` would emit for each node, from the
node's level, part count and key-switching method alone. The per-op rules are the table
`OP_COUNTS` (one closed form per `HeOp`, beside the key-switching closed forms of
`fhec.analysis.counts`); `tests/analysis/test_he_counts.py` checks them against the real
lowering of random programs, instruction for instruction per HE node.

The counts exclude one thing the lowering adds: the multiply-by-one copies that give an
output limb its own OUTPUT rvec (`fhec.passes.lower_outputs`). They are bookkeeping, not
arithmetic, and depend on which values the outputs share.

`modular_ops(counts, N)` turns limb-instruction counts into word operations with the
per-`LimbOp` costs of `MODULAR_COSTS` (docs/bootstrapping.md, "Counts against SimFHE").
Because nothing is lowered, this scales to N = 2^17 bootstraps of tens of millions of
limb instructions.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping

from fhec.analysis.counts import bv_keyswitch_counts, digit_sizes, hybrid_keyswitch_counts, rotation_counts
import numpy as np

from fhec.ir.he import Const, HeNode, HeOp, HeProgram
from fhec.ir.he_types import is_int_scalar
from fhec.ir.limb_ops import LimbOp
from fhec.schemes import rules
from fhec.schemes.keys import galois_for_rotation


@dataclass(frozen=True)
class OpShape:
    """What the count of one HE op depends on.

    L: limbs of Q of the operand (the first argument) at its level; parts: its parts;
    other_parts: parts of the second ciphertext operand (ADD/SUB/KS_ADD), else 0;
    alpha: special primes (hybrid digit size); method: "hybrid" or "bv" for key-switching
    ops; bgv: the scheme is BGV; scalar: a constant operand that is one number (added
    or multiplied as an immediate); key_switch: a rotate/conjugate/swap whose Galois
    element is not 1 (a rotation by a multiple of the row length needs no key switch);
    levels: for LEVEL_DOWN, the divisions by a last prime it performs; level_mul: for
    LEVEL_DOWN, whether it first multiplies by a correction constant; target_limbs: for
    MOD_RAISE, the limbs of the level it raises to; subtract: for ADD_EXT_Q, whether it
    subtracts; square: for MUL, whether both operands are one value; karatsuba: for MUL, the
    lowering's choice for two different operands (`lower(..., karatsuba=True)`); c0_only:
    for AUTOMORPHISM, a hoisted rotation's, of c0 alone (`fhec.passes.he_keyswitch`).
    """

    L: int
    parts: int = 2
    other_parts: int = 0
    alpha: int = 1
    method: str = "hybrid"
    bgv: bool = False
    scalar: bool = False
    key_switch: bool = True
    levels: int = 0
    level_mul: bool = False
    target_limbs: int = 0
    subtract: bool = False
    square: bool = False
    karatsuba: bool = False
    c0_only: bool = False


def _zero() -> Counter:
    return Counter()


def _per_part(op: LimbOp) -> Callable[[OpShape], Counter]:
    return lambda s: Counter({op.name: s.parts * s.L})


def _add_sub(op: LimbOp) -> Callable[[OpShape], Counter]:
    """Part-wise a ± b; a part only b has is passed through (ADD) or negated (SUB)."""

    def count(s: OpShape) -> Counter:
        c = Counter({op.name: min(s.parts, s.other_parts) * s.L})
        if op is LimbOp.SUB and s.other_parts > s.parts:
            c["NEG"] += (s.other_parts - s.parts) * s.L
        return c

    return count


def _tensor_product(s: OpShape) -> Counter:
    """A square doubles its one cross product; any other product is schoolbook (four
    products, one ADD) or Karatsuba's (three products; two sums, then two subtractions)."""
    if s.square:
        return Counter({"MUL": 3 * s.L, "ADD": s.L})
    if s.karatsuba:
        return Counter({"MUL": 3 * s.L, "ADD": 2 * s.L, "SUB": 2 * s.L})
    return Counter({"MUL": 4 * s.L, "ADD": s.L})


def _add_plain(op: LimbOp) -> Callable[[OpShape], Counter]:
    """c0 ± plaintext: one op per limb of c0; a scalar is an immediate (ADD_CONST)."""
    return lambda s: Counter({("ADD_CONST" if s.scalar else op.name): s.L})


def _mul_const(s: OpShape) -> Counter:
    """Every part times a constant: an integer or scalar is MUL_CONST, a vector a plaintext MUL."""
    return Counter({("MUL_CONST" if s.scalar else "MUL"): s.parts * s.L})


def divide_last_counts(L: int, parts: int, bgv: bool) -> Counter:
    """Division of every part by its last prime at L limbs (rescale, BGV modulus switch):
    per part 1 INTT of the dropped limb; per kept limb 1 BCONV + 1 NTT + 1 MUL_CONST
    (times the inverse of the dropped prime) + 1 ADD; BGV adds 1 MUL_CONST (−t⁻¹ on the
    dropped limb; for CKKS that factor is 1 and skipped)."""
    k = L - 1
    per = Counter({"INTT": 1, "BCONV": k, "NTT": k, "MUL_CONST": k + (1 if bgv else 0), "ADD": k})
    return Counter({op: parts * n for op, n in per.items()})


def _mod_switch(s: OpShape) -> Counter:
    return divide_last_counts(s.L, s.parts, True) if s.bgv else _zero()


def _level_down(s: OpShape) -> Counter:
    """`Evaluator.level_down` in limbs: BGV divides `levels` times; CKKS either drops limbs
    (free) or multiplies by a correction at one level above the target and divides once."""
    if s.bgv:
        c = Counter()
        for i in range(s.levels):
            c += divide_last_counts(s.L - i, s.parts, True)
        return c
    if not s.level_mul:
        return _zero()
    L1 = s.L  # the shape's L is the limb count at target level + 1 (see shape_of)
    return Counter({"MUL_CONST": s.parts * L1}) + divide_last_counts(L1, s.parts, False)


def _mod_raise(s: OpShape) -> Counter:
    """Per part: INTT of the L level-0 limbs, a base conversion onto the other primes of
    the target level (MUL_CONST by the (B/b_i)⁻¹ unless L = 1, BCONV per term, ADD to sum
    them), NTT of each new limb."""
    new = s.target_limbs - s.L
    per = Counter({"INTT": s.L, "MUL_CONST": s.L if s.L > 1 else 0, "BCONV": s.L * new,
                   "ADD": (s.L - 1) * new, "NTT": new})
    return +Counter({k: s.parts * v for k, v in per.items()})


def keyswitch_counts(L: int, alpha: int, method: str, bgv: bool) -> Counter:
    """One whole key switch of one polynomial at L limbs (`fhec.analysis.counts`)."""
    whole = hybrid_keyswitch_counts(L, alpha, bgv) if method == "hybrid" else bv_keyswitch_counts(L)
    return Counter({k: v for k, v in whole.items() if v})


def _relinearize(s: OpShape) -> Counter:
    if s.parts == 2:
        return _zero()
    return keyswitch_counts(s.L, s.alpha, s.method, s.bgv) + Counter({"ADD": 2 * s.L})


def _switch_secret(s: OpShape) -> Counter:
    """A key switch of c1 and c0 + u0 (`LimbEmitter.switch_secret`): a rotation without σ_g."""
    return keyswitch_counts(s.L, s.alpha, s.method, s.bgv) + Counter({"ADD": s.L})


def _rotate(s: OpShape) -> Counter:
    if not s.key_switch:
        return _zero()
    c = rotation_counts(s.L, s.alpha, 1, method=s.method, bgv=s.bgv)
    return Counter({k: v for k, v in c.items() if v})


def mod_up_counts(L: int, alpha: int, method: str) -> Counter:
    """Decomposition of one polynomial over the key-switching basis (`LimbEmitter.mod_up`)."""
    if method == "bv":
        return Counter({"INTT": L, "NTT": L * (L - 1)})
    K = L + alpha
    c = Counter()
    for a in digit_sizes(L, alpha):
        c["INTT"] += a
        c["MUL_CONST"] += a if a > 1 else 0
        c["BCONV"] += (K - a) * a
        c["ADD"] += (K - a) * (a - 1)
        c["NTT"] += K - a
    return +c


def _digit_limbs(s: OpShape) -> int:
    return s.L * s.L if s.method == "bv" else len(digit_sizes(s.L, s.alpha)) * (s.L + s.alpha)


def _key_mult(s: OpShape) -> Counter:
    """Σ_d digit_d · (hint_d0, hint_d1) over the key-switching basis."""
    if s.method == "bv":
        return Counter({"MUL": 2 * s.L * s.L, "ADD": 2 * s.L * (s.L - 1)})
    d, K = len(digit_sizes(s.L, s.alpha)), s.L + s.alpha
    return +Counter({"MUL": 2 * d * K, "ADD": 2 * (d - 1) * K})


def _mod_down(s: OpShape) -> Counter:
    """Both key-switch outputs divided by P (`LimbEmitter.mod_down`)."""
    a, L = s.alpha, s.L
    one = Counter({"INTT": a, "MUL_CONST": (a if (a > 1 or s.bgv) else 0) + L, "BCONV": L * a,
                   "ADD": L * (a - 1) + L, "NTT": L})
    return +Counter({k: 2 * v for k, v in one.items()})


def _ks_add_ext(s: OpShape) -> Counter:
    """(P·t0 + u0, u1) over Q·P (P·t1 + u1 too for a 3-part t): P·t and the sum on Q's
    limbs only."""
    k = 2 if s.parts == 3 else 1
    return Counter({"MUL_CONST": k * s.L, "ADD": k * s.L})


def _relinearize_ext(s: OpShape) -> Counter:
    """A relinearization without its mod-down: the digits of c2 times the key, then
    (P·c0 + u0, P·c1 + u1) (`_ks_add_ext` of 3 parts)."""
    K = s.L + s.alpha
    d = len(digit_sizes(s.L, s.alpha))
    return (Counter({"MUL": 2 * d * K, "ADD": 2 * (d - 1) * K}) + mod_up_counts(s.L, s.alpha, "hybrid")
            + _ks_add_ext(s))


def _add_ext_q(s: OpShape) -> Counter:
    """x ± P·c: P·c and the sum (difference) on Q's limbs of both parts."""
    return Counter({"MUL_CONST": 2 * s.L, ("SUB" if s.subtract else "ADD"): 2 * s.L})


def _rescale_ext(s: OpShape) -> Counter:
    """Both parts divided by P·q_l (`LimbEmitter.rescale_ext`): per part, INTT of the k =
    α + 1 dropped limbs, their (B/b_i)⁻¹ MUL_CONSTs (skipped when k = 1), a base
    conversion onto the L − 1 kept limbs (BCONV per term, ADDs to sum them), NTT, and
    times (P·q_l)⁻¹ plus the conversion (MUL_CONST + ADD) per kept limb."""
    k, kept = s.alpha + 1, s.L - 1
    one = Counter({"INTT": k, "MUL_CONST": (k if k > 1 else 0) + kept, "BCONV": kept * k,
                   "ADD": kept * (k - 1) + kept, "NTT": kept})
    return +Counter({op: 2 * n for op, n in one.items()})


def _rotate_ext(s: OpShape) -> Counter:
    """A double-hoisted rotation without its mod-down: σ_g of both parts, the digits of
    σ_g(c1) times the key, then `_ks_add_ext`."""
    K = s.L + s.alpha
    d = len(digit_sizes(s.L, s.alpha))
    return (Counter({"AUT": 2 * s.L, "MUL": 2 * d * K, "ADD": 2 * (d - 1) * K})
            + mod_up_counts(s.L, s.alpha, "hybrid") + _ks_add_ext(s))


def _ext_per_part(op: LimbOp) -> Callable[[OpShape], Counter]:
    """One op per limb of Q_level·P of every part (values of double hoisting)."""
    return lambda s: Counter({op.name: s.parts * (s.L + s.alpha)})


def _ks_add(s: OpShape) -> Counter:
    return Counter({"ADD": (2 if s.parts == 3 else 1) * s.L})


OP_COUNTS: dict[HeOp, Callable[[OpShape], Counter]] = {
    HeOp.INPUT: lambda s: _zero(),
    HeOp.PLAIN_INPUT: lambda s: _zero(),
    HeOp.OUTPUT: lambda s: _zero(),
    HeOp.ADD: _add_sub(LimbOp.ADD),
    HeOp.SUB: _add_sub(LimbOp.SUB),
    HeOp.NEG: _per_part(LimbOp.NEG),
    HeOp.ADD_PLAIN: _add_plain(LimbOp.ADD),
    HeOp.SUB_PLAIN: _add_plain(LimbOp.SUB),
    HeOp.ADD_CONST: _add_plain(LimbOp.ADD),
    HeOp.SUB_CONST: _add_plain(LimbOp.SUB),
    HeOp.MUL: _tensor_product,
    HeOp.MUL_PLAIN: _per_part(LimbOp.MUL),
    HeOp.MUL_CONST: _mul_const,
    HeOp.MUL_FACTOR: _per_part(LimbOp.MUL_CONST),
    HeOp.MUL_MONOMIAL: _per_part(LimbOp.MUL),       # times the plaintext X^power
    HeOp.MOD_RAISE: _mod_raise,
    HeOp.RESCALE: lambda s: divide_last_counts(s.L, s.parts, False),
    HeOp.MOD_SWITCH: _mod_switch,
    HeOp.LEVEL_DOWN: _level_down,
    HeOp.RELINEARIZE: _relinearize,
    HeOp.ROTATE: _rotate,
    HeOp.CONJUGATE: _rotate,
    HeOp.SWITCH_SECRET: _switch_secret,
    HeOp.SWAP_ROWS: _rotate,
    HeOp.AUTOMORPHISM: lambda s: Counter({"AUT": (1 if s.c0_only else s.parts) * s.L}),
    HeOp.MOD_UP: lambda s: mod_up_counts(s.L, s.alpha, s.method),
    HeOp.DIGITS_AUTOMORPHISM: lambda s: Counter({"AUT": _digit_limbs(s)}),
    HeOp.KEY_MULT: _key_mult,
    HeOp.MOD_DOWN: _mod_down,
    HeOp.KS_ADD: _ks_add,
    HeOp.ROTATE_EXT: _rotate_ext,
    HeOp.KS_ADD_EXT: _ks_add_ext,
    HeOp.MUL_CONST_EXT: _ext_per_part(LimbOp.MUL),
    HeOp.ADD_EXT: _ext_per_part(LimbOp.ADD),
    HeOp.MOD_DOWN_EXT: _mod_down,
    HeOp.RELINEARIZE_EXT: _relinearize_ext,
    HeOp.ADD_EXT_Q: _add_ext_q,
    HeOp.RESCALE_EXT: _rescale_ext,
}
"""The limb instructions of each primitive HE op, as a function of its `OpShape`."""


def _constant_is_scalar(value) -> bool:
    """As the lowering decides: an int, or a number that is not a `Const` vector."""
    return is_int_scalar(value) or (not isinstance(value, Const) and np.ndim(value) == 0)


def shape_of(program: HeProgram, node: HeNode, methods: Mapping[int, str] | str, karatsuba: bool = False) -> OpShape:
    """The `OpShape` of one node of an expanded program (what its count depends on);
    `karatsuba` as for `fhec.passes.lower.lower`."""
    params = program.params
    arg = program.node(node.args[0]).type if node.args else node.type
    level = arg.level
    method = node.attr("method", None)
    if method is None and node.op in (HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS):
        method = methods if isinstance(methods, str) else methods.get(node.id, "hybrid")
    if node.op is HeOp.SWITCH_SECRET:
        method = "hybrid"
    if node.op is HeOp.DIGITS_AUTOMORPHISM:
        method = program.node(node.args[0]).attr("method")
    if node.op in (HeOp.MOD_UP, HeOp.DIGITS_AUTOMORPHISM, HeOp.KEY_MULT, HeOp.MOD_DOWN, HeOp.ADD_EXT,
                   HeOp.MOD_DOWN_EXT, HeOp.KS_ADD_EXT):
        level = node.type.level
    other = program.node(node.args[1]).type.parts if node.op in (HeOp.ADD, HeOp.SUB, HeOp.KS_ADD) else 0
    scalar = node.op in (HeOp.ADD_CONST, HeOp.SUB_CONST, HeOp.MUL_CONST) and _constant_is_scalar(node.attr("value"))
    key_switch = True
    if node.op is HeOp.ROTATE:
        key_switch = galois_for_rotation(params, int(node.attr("step"))) != 1
    levels, level_mul = 0, False
    if node.op is HeOp.LEVEL_DOWN and arg.level != int(node.attr("level")):
        target_level = int(node.attr("level"))
        levels = arg.level - target_level
        if params.scheme == "ckks":
            target = params.scale_at(target_level) if node.attr("scale") is None else node.attr("scale")
            level_mul = not rules.scales_match(params, arg.scale, target)
            level = target_level + 1
    target_limbs = params.limbs_at(int(node.attr("level"))) if node.op is HeOp.MOD_RAISE else 0
    return OpShape(
        L=0 if level is None else params.limbs_at(level), parts=arg.parts, other_parts=other,
        alpha=params.alpha if level is None else params.alpha_at(level),
        method=method or "hybrid", bgv=params.scheme == "bgv", scalar=scalar, key_switch=key_switch,
        levels=levels, level_mul=level_mul, target_limbs=target_limbs,
        subtract=node.op is HeOp.ADD_EXT_Q and bool(node.attr("subtract", False)),
        square=node.op is HeOp.MUL and node.args[0] == node.args[1], karatsuba=karatsuba,
        c0_only=node.op is HeOp.AUTOMORPHISM and bool(node.attr("c0_only", False)),
    )


def node_limb_counts(program: HeProgram, node: HeNode, methods: Mapping[int, str] | str = "hybrid",
                     karatsuba: bool = False) -> Counter:
    """Limb instructions `fhec.passes.lower` emits for one primitive node (LimbOp name -> count)."""
    return OP_COUNTS[node.op](shape_of(program, node, methods, karatsuba))


def program_limb_counts(program: HeProgram, methods: Mapping[int, str] | str = "hybrid",
                        karatsuba: bool = False) -> Counter:
    """Limb instructions of a whole expanded program, by closed form (LimbOp name -> count).

    `methods` and `karatsuba` as for `fhec.passes.lower.lower` (whole key-switching nodes;
    pieces carry their own). Output copies are not counted (module doc)."""
    total = Counter()
    for node in program.nodes:
        total += node_limb_counts(program, node, methods, karatsuba)
    return total


# -- modular operations ------------------------------------------------------------------

def _ntt_mults(N: int) -> int:
    return N // 2 * int(math.log2(N))


MODULAR_COSTS: dict[LimbOp, Callable[[int], tuple[int, int]]] = {
    # (modular multiplies, modular additions) of one limb instruction on N words
    # N/2·log2 N butterflies of 1 multiply, 1 add, 1 subtract (the INTT's N⁻¹ is folded
    # into its twiddles and not counted, as in SimFHE's model and bench_passes)
    LimbOp.NTT: lambda N: (_ntt_mults(N), N * int(math.log2(N))),
    LimbOp.INTT: lambda N: (_ntt_mults(N), N * int(math.log2(N))),
    LimbOp.MUL: lambda N: (N, 0),
    LimbOp.MUL_CONST: lambda N: (N, 0),
    LimbOp.BCONV: lambda N: (N, 0),     # one term of a base conversion; its sum is the ADDs
    LimbOp.ADD: lambda N: (0, N),
    LimbOp.SUB: lambda N: (0, N),
    LimbOp.NEG: lambda N: (0, N),
    LimbOp.ADD_CONST: lambda N: (0, N),
    LimbOp.AUT: lambda N: (0, 0),       # a permutation
}
"""Word operations of one limb instruction, as fhec's kernels perform them."""


def modular_ops(counts: Mapping[str, int], N: int) -> tuple[int, int]:
    """(modular multiplies, modular additions) of limb-instruction counts at ring degree N."""
    mults = adds = 0
    for name, n in counts.items():
        m, a = MODULAR_COSTS[LimbOp[name]](N)
        mults += n * m
        adds += n * a
    return mults, adds
