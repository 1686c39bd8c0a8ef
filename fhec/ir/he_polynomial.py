"""Polynomial evaluation: a series in the power or Chebyshev basis, on a domain, by a
baby-step / giant-step Paterson–Stockmeyer recursion (the POLYNOMIAL recipe).

A POLYNOMIAL node holds ``coeffs`` and, when not the defaults, ``basis`` ("power" or
"chebyshev") and ``domain`` ``(a, b)``. Its value is ``sum_i coeffs[i] · B_i(u)`` with
``u = (2x − a − b) / (b − a)`` (``u = x`` without a domain) and ``B_i(u)`` = ``u^i`` or
the Chebyshev polynomial ``T_i(u)``, exactly numpy's ``Polynomial`` / ``Chebyshev`` with
that domain and the default window.

How it is evaluated (Bossuat et al., Eurocrypt 2021, §4; Lattigo's and OpenFHE's
``EvalChebyshevSeriesPS`` follow the same scheme):

* **basis values** ``B_i`` are built on demand from ``B_1 = u`` by the balanced product
  rule, ``a = ceil(i/2)``, ``b = floor(i/2)``: ``u^i = u^a · u^b`` and
  ``T_i = 2·T_a·T_b − T_{a−b}`` (``a − b`` is 0 or 1, so ``T_{a−b}`` is 1 or u). One
  ciphertext product each, at depth ``ceil(log2 i)`` below u.
* **giant steps**: a series of degree d with ``g = 2^floor(log2 d)`` is divided by
  ``B_g``: ``p = q·B_g + r`` with deg q, deg r < g (for Chebyshev,
  ``T_{g+j} = 2·T_g·T_j − T_{g−j}`` gives ``q = c_g + Σ 2c_{g+j} T_j`` and
  ``r_i = c_i − c_{2g−i}``); q and r are evaluated recursively and combined with one
  product.
* **leaves**: a series of degree below the baby-step bound k is summed directly,
  ``c_0 + Σ c_i·B_i``, when that fits its depth budget. Integer coefficients multiply
  exactly; a non-integer costs a rescale, i.e. a level, on its term.
* **depth budget**: the whole series may use ``ceil(log2(d+1))`` levels below u (the
  minimum: u^d alone needs ``ceil(log2 d)``). Dividing passes ``budget − 1`` to q (it is
  multiplied once more) and ``budget`` to r. A leaf whose direct sum would exceed its
  budget (a non-integer coefficient on a basis value at the full depth — this happens
  only on the chain of leading quotients) is divided further instead, down to
  ``B_1``, which always has a level to spare. So non-integer coefficients never add a
  level beyond ``ceil(log2(d+1))``, at the price of a product or two on that chain.
* **k** is chosen per series among the powers of two, minimising the depth, then the
  ciphertext products, of the static plan (`plan_polynomial`).

With a domain, ``u = α·x + β`` costs one level when α is not an integer (the +1 of the
depth bound). Everything keeps the builder's auto invariant (every value at one level
has that level's scale: `HeBuilder.canonical_scale`, a chain of two-prime scales inside
`HeBuilder.composite`, where a level step is two primes), with three places where one rescale serves several terms (CKKS;
each falls back to the plain rule when the unrescaled value could exceed the modulus):

* a leaf's terms c_i·B_i are multiplied at per-term plain scales onto one product scale,
  drop limbs (exact) to the lowest level, or to the level where the leaf is used (its
  giant step's level for a quotient, the product's for a remainder), and are summed
  before one rescale (`_Emitter.fused`);
* an odd Chebyshev value T_{2h+1} = 2·T_{h+1}·T_h − T_1 subtracts T_1, put on the
  product's scale and level the same way, before the product's rescale
  (`_Emitter.odd_chebyshev`);
* a giant step B_g above its leaf quotient q drops limbs to q's level (its scale stays)
  and q's constants are encoded at the scale that puts the rescaled q·B_g on the
  canonical scale (`_Emitter.giant_product`), where aligning B_g cost a LEVEL_DOWN.

BGV has no scales but plaintext factors (a modulus switch multiplies one by q^-1 mod t),
and a leaf's terms sit at different levels: each B_i is modulus-switched once to the
leaf's lowest level (shared by every leaf) and each term c_i·B_i is one MUL_CONST whose
``factor`` attribute folds the term's factor alignment into its coefficient (the
ciphertext is multiplied by c_i·a_i centered mod t), so the terms add with no MUL_FACTOR;
a remainder leaf is given its giant step's level and factor the same way
(`_Emitter.bgv_leaf`). The auto policy multiplied each term at its own level, levelled the
running sum down term by term and aligned every term with a MUL_FACTOR: a degree-127 series
in d² (the DB lookup's, docs/suites.md) from level 15 took 42,510 limb instructions with
its squaring, 37,514 folded.

Where the one-rescale-per-product policy aligned each term with a LEVEL_DOWN (a constant
multiply and a rescale), this drops limbs; a degree-63 series took 29 rescales and 6
LEVEL_DOWNs instead of 73 and 35 in EvalMod's setting before `giant_product`, which
leaves 4 there (docs/bootstrapping.md); a dense degree-63 series at N = 2^8, 8 levels,
takes 28 rescales and 4 LEVEL_DOWNs where it took 28 and 8.

Measured (tests/ir/test_he_polynomial.py, benchmarks/bench_polynomial.py): dense
degree 15 / 31 / 63 series take depth 4 / 5 / 6 and 8 / 13 / 18 ciphertext products in
either basis.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any, Callable, Union

import numpy as np

from fhec.ir.he import HeOp, attrs_of
from fhec.ir.he_types import NOISE_SATURATION_BITS, IRTypeError
from fhec.schemes import noise as nz
from fhec.schemes import ranges, rules

BASES = ("power", "chebyshev")
"""The bases a POLYNOMIAL's coefficients may be given in."""

_EXACT_LIMIT = 2**24
"""Integer-valued coefficients below this multiply exactly (no rescale, no level)."""


# -- series arithmetic -------------------------------------------------------------------------


def degree(coeffs) -> int:
    """Index of the highest nonzero coefficient (0 for a constant)."""
    return max((i for i, c in enumerate(coeffs) if c != 0), default=0)


def exact_integer(c) -> int | None:
    """`c` as a Python int when multiplying by it is exact (an integer, or an
    integer-valued float below 2^24), else None."""
    if isinstance(c, numbers.Integral) and not isinstance(c, bool):
        return int(c)
    if isinstance(c, float) and c.is_integer() and abs(c) < _EXACT_LIMIT:
        return int(c)
    return None


def affine_map(domain) -> tuple[Any, Any]:
    """(α, β) with u = α·x + β mapping `domain` (a, b) onto [-1, 1] ((1, 0) for None).
    Integer-valued α and β are returned as ints."""
    if domain is None:
        return 1, 0
    a, b = (float(v) for v in domain)
    return _int_if_exact(2.0 / (b - a)), _int_if_exact(-(a + b) / (b - a))


def _int_if_exact(v):
    n = exact_integer(v)
    return v if n is None else n


def _divide_power(c: tuple, g: int) -> tuple[tuple, tuple]:
    return c[g:], c[:g]


def _divide_chebyshev(c: tuple, g: int) -> tuple[tuple, tuple]:
    # T_{g+j} = 2·T_g·T_j − T_{g−j} for 0 < j < g, and T_g·T_0 = T_g
    q = (c[g],) + tuple(2 * c[g + j] for j in range(1, len(c) - g))
    r = list(c[:g])
    for j in range(1, len(c) - g):
        r[g - j] = r[g - j] - c[g + j]
    return q, tuple(r)


DIVIDE: dict[str, Callable[[tuple, int], tuple[tuple, tuple]]] = {
    "power": _divide_power,
    "chebyshev": _divide_chebyshev,
}
"""(q, r) with p = q·B_g + r for a series p of degree < 2g (coefficients not reduced)."""


def factors(i: int) -> tuple[int, int]:
    """The halves (a, b) of the balanced product rule for B_i (i >= 2)."""
    return (i + 1) // 2, i // 2


def basis_depth(i: int) -> int:
    """Levels B_i lies below B_1 = u: ceil(log2 i)."""
    return (i - 1).bit_length()


# -- the static plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """c_0 + Σ c_i·B_i summed directly (degree >= 1)."""

    coeffs: tuple


@dataclass(frozen=True)
class Split:
    """q·B_g + r."""

    g: int
    q: "Node"
    r: "Node"


Node = Union[Leaf, Split, int, float]
"""A plan node; a bare number is a constant series."""


def _trim(c: tuple) -> tuple:
    return c[: degree(c) + 1]


def _leaf_depth(c: tuple) -> int:
    return max((basis_depth(i) + (exact_integer(v) is None) for i, v in enumerate(c) if i and v != 0), default=0)


def _plan(c: tuple, basis: str, k: int, budget: int, reduce: Callable) -> Node:
    c = tuple(reduce(v) for v in _trim(c))
    d = len(c) - 1
    if d == 0:
        return c[0]
    if d < k and _leaf_depth(c) <= budget:
        return Leaf(c)
    g = 1 << (d.bit_length() - 1)
    q, r = DIVIDE[basis](c, g)
    return Split(g, _plan(q, basis, k, budget - 1, reduce), _plan(r, basis, k, budget, reduce))


def _is_series(node: Node) -> bool:
    return isinstance(node, (Leaf, Split))


def node_depth(node: Node) -> int:
    """Levels the plan's result lies below u (0 for a constant)."""
    if isinstance(node, Leaf):
        return _leaf_depth(node.coeffs)
    if isinstance(node, Split):
        gd = basis_depth(node.g)
        top = max(node_depth(node.q), gd) + 1 if _is_series(node.q) else gd + (exact_integer(node.q) is None)
        return max(top, node_depth(node.r))
    return 0


def _used_basis(node: Node, out: set[int]) -> set[int]:
    if isinstance(node, Leaf):
        out.update(i for i, v in enumerate(node.coeffs) if i and v != 0)
    elif isinstance(node, Split):
        out.add(node.g)
        _used_basis(node.q, out)
        _used_basis(node.r, out)
    return out


def basis_closure(indices, basis: str) -> set[int]:
    """Every B_i (i >= 1) that building `indices` computes."""
    todo, seen = list(indices), set()
    while todo:
        i = todo.pop()
        if i in seen or i < 1:
            continue
        seen.add(i)
        if i >= 2:
            a, b = factors(i)
            todo += [a, b] + ([a - b] if basis == "chebyshev" else [])
    return seen


def _splits_with_products(node: Node) -> int:
    if not isinstance(node, Split):
        return 0
    return _is_series(node.q) + _splits_with_products(node.q) + _splits_with_products(node.r)


@dataclass(frozen=True)
class Plan:
    """How a series is evaluated: the tree, the baby-step bound k, its depth below u and
    its ciphertext products (basis values plus giant-step products)."""

    root: Node
    k: int
    depth: int
    products: int


def plan_polynomial(coeffs: tuple, basis: str, reduce: Callable = lambda v: v) -> Plan:
    """The cheapest plan for `coeffs` in `basis` within depth ceil(log2(d+1)) below u.

    `reduce` normalises derived coefficients (BGV: centered mod t). Tries every
    power-of-two baby-step bound k up to 2d and keeps the smallest depth (below the
    budget when the coefficients allow, e.g. integers), then the fewest products, then
    the smallest k: deterministic.
    """
    d = degree(coeffs)
    budget = d.bit_length()  # ceil(log2(d + 1))
    best = None
    for j in range(1, max(1, d.bit_length()) + 1):
        root = _plan(tuple(coeffs), basis, 1 << j, budget, reduce)
        used = basis_closure(_used_basis(root, set()), basis)
        plan = Plan(root, 1 << j, node_depth(root), len(used - {1}) + _splits_with_products(root))
        if best is None or (plan.depth, plan.products) < (best.depth, best.products):
            best = plan
    return best


def polynomial_depth(coeffs: tuple, basis: str, domain, reduce: Callable = lambda v: v) -> int:
    """Levels the POLYNOMIAL of these attributes consumes (the domain map included)."""
    alpha, _ = affine_map(domain)
    return plan_polynomial(coeffs, basis, reduce).depth + (exact_integer(alpha) is None)


# -- emission -------------------------------------------------------------------------------------


class _Emitter:
    """Emits a plan through a `HeBuilder` with the auto policy (see module doc)."""

    def __init__(self, b, u: int, basis: str, loc: str | None):
        self.b, self.basis, self.loc = b, basis, loc
        self.values: dict[int, int] = {1: u}
        self.lowered: dict[tuple[int, int], int] = {}  # (i, level) -> B_i brought down there (BGV leaves)

    def basis_value(self, i: int) -> int:
        if i not in self.values:
            b, loc = self.b, self.loc
            a, h = factors(i)
            if self.basis == "chebyshev" and a != h:
                fused = self.odd_chebyshev(a, h, chebyshev_bound(i, b.type_of(self.values[1]).bound))
                if fused is not None:
                    self.values[i] = fused
                    return fused
            m = b.multiply(self.basis_value(a), self.basis_value(h), loc, auto=True)
            if self.basis == "chebyshev":
                m = b.add(m, m, loc, auto=True)  # 2·T_a·T_h
                hint = chebyshev_bound(i, b.type_of(self.values[1]).bound)
                if a == h:  # T_0 = 1
                    m = b.add_const(m, 1, loc, subtract=True, bound=hint)
                else:
                    m = b.add(m, self.basis_value(1), loc, subtract=True, auto=True, bound=hint)
            self.values[i] = m
        return self.values[i]

    def odd_chebyshev(self, a: int, h: int, hint: float | None) -> int | None:
        """CKKS: T_{a+h} = 2·T_a·T_h − T_1 (a = h + 1) with T_1 subtracted *before* the
        product's rescale: T_1 is multiplied by 1 encoded at the scale that puts it on the
        product's scale and drops limbs to the product's level (exact), so one rescale
        serves both, where aligning T_1 after the rescale costs a LEVEL_DOWN (a constant
        multiply and a rescale). None (use the plain rule) when the unrescaled value could
        exceed the modulus or T_1 is not above the product."""
        b, loc = self.b, self.loc
        if not b.ckks:
            return None
        ta, th = b.align_for_mul(self.basis_value(a), self.basis_value(h), loc, True)
        x1, level = self.values[1], b.type_of(ta).level
        t1 = b.type_of(x1)
        S = b.type_of(ta).scale * b.type_of(th).scale
        limit = ranges.value_limit(b.params, level, S, max(t1.noise, b.type_of(ta).noise) + 2)
        bounds = (hint, t1.bound, b.type_of(ta).bound, b.type_of(th).bound)
        if level < b.step or t1.level < level or None in bounds or 2 * bounds[2] * bounds[3] + bounds[1] >= limit:
            return None
        m = b.emit(HeOp.RELINEARIZE, (b.emit(HeOp.MUL, (ta, th), (), loc),), (), loc)
        m = b.emit(HeOp.ADD, (m, m), (), loc)
        t = b.emit(HeOp.MUL_CONST, (x1,), attrs_of(value=1.0, plain_scale=S / t1.scale), loc)
        while b.type_of(t).level > level:
            t = b.emit(HeOp.MOD_SWITCH, (t,), (), loc)
        m = b.emit(HeOp.SUB, (m, t), attrs_of(bound=float(hint)), loc)
        return b.after_multiply(m, loc, auto=True)

    def scaled(self, v: int, c) -> int:
        """c·v: exact for integers (±1 without a node), encoded and rescaled otherwise."""
        n = exact_integer(c)
        if n == 1:
            return v
        if n == -1:
            return self.b.negate(v, self.loc)
        return self.b.multiply_const(v, n if n is not None else float(c), self.loc, auto=True)

    def plus(self, acc: int | None, term: int) -> int:
        return term if acc is None else self.b.add(acc, term, self.loc, auto=True)

    def plus_const(self, v: int, c) -> int:
        return v if c == 0 else self.b.add_const(v, c, self.loc)

    def fused(self, items: list[tuple[int, Any]], land: int | None = None, scale: float | None = None) -> list[int]:
        """CKKS: the terms c·T_i of a leaf with a non-integer coefficient, summed before a
        single rescale (what the auto policy would do with one rescale per term and a
        LEVEL_DOWN per alignment). Each T_i (level l_i, scale s_i) is multiplied by c
        encoded at scale S/s_i, where S is the scale a product at the lowest level `low`
        has (`he_types.plain_scale_for`), so every product has scale S; the higher ones
        drop limbs down to `low` (exact in CKKS); they add, and one rescale lands on the
        canonical scale of low − 1: the level the per-term policy ends at too. With
        `land` (a level below low − 1: where the sum will be added to a giant step's
        product) the terms drop to land + 1 instead, so that the sum lands on that level
        and needs no LEVEL_DOWN (a constant multiply and a rescale) to meet it; a single
        term takes this path only then (alone, its own rescale would land above `land`) or
        with `scale`: the scale the sum must have after its rescale instead of the canonical
        one (`giant_product`: a quotient whose giant step meets it by dropping limbs).
        Falls back to `scaled` per term when the unrescaled sum could exceed Q_low / 2 or
        nothing is left to rescale. Integer terms below every non-integer one stay out of
        the sum (`scaled`, at their own level: exact, no rescale)."""
        b = self.b
        if not b.ckks or all(exact_integer(c) is not None for _, c in items) or not items:
            return [self.scaled(v, c) for v, c in items]
        # An integer term below every non-integer one costs no level where it is: summed
        # with them it would be rescaled once more than the plan counts (`_leaf_depth`).
        fractional = min(b.type_of(v).level for v, c in items if exact_integer(c) is None)
        deep = [(v, c) for v, c in items if b.type_of(v).level < fractional]
        if deep:
            rest = [(v, c) for v, c in items if b.type_of(v).level >= fractional]
            return self.fused(rest, land, scale) + [self.scaled(v, c) for v, c in deep]
        if len(items) == 1 and scale is None and (land is None or land + b.step >= b.type_of(items[0][0]).level):
            return [self.scaled(v, c) for v, c in items]
        params = b.params
        bounds = [b.type_of(v).bound for v, _ in items]
        noise = max(b.type_of(v).noise for v, _ in items)
        total = None if None in bounds else sum(abs(float(c)) * x for (_, c), x in zip(items, bounds))

        def product_scale(low: int) -> float | None:
            """The common product scale at `low`, or None when the sum would not fit."""
            s_low = b.canonical_scale(low)
            if scale is not None:
                target = scale * math.prod(float(rules.rescale_prime(params, j)) for j in range(low - b.step + 1, low + 1))
            else:
                target = s_low * b.plain_scale_for(low, s_low)
            ok = low >= b.step and total is not None and total < ranges.value_limit(params, low, target, noise + 1)
            return target if ok else None

        low = min(b.type_of(v).level for v, _ in items)
        if land is not None and 0 <= land and land + b.step < low and product_scale(land + b.step) is not None:
            low = land + b.step
        target = product_scale(low)
        if target is None:
            return [self.scaled(v, c) for v, c in items]
        acc = None
        for v, c in items:
            term = b.emit(HeOp.MUL_CONST, (v,), attrs_of(value=float(c), plain_scale=target / b.type_of(v).scale),
                          self.loc)
            while b.type_of(term).level > low:
                term = b.emit(HeOp.MOD_SWITCH, (term,), (), self.loc)
            acc = term if acc is None else b.emit(HeOp.ADD, (acc, term), (), self.loc)
        return [b.after_multiply(acc, self.loc, auto=True)]

    def giant_product(self, q: Leaf, g: int) -> int | None:
        """CKKS: q·B_g for a leaf quotient q whose terms sit below B_g, so that its sum
        lands below g's level: B_g drops limbs to that level (MOD_SWITCH, exact; its scale
        stays), and q's constants are encoded so that q's sum has the scale that puts the
        rescaled product on the canonical scale of the level below. This replaces the
        LEVEL_DOWN of B_g (a constant multiply and a rescale) that aligning it onto the
        canonical scale would cost. None (use the plain rule) when q lands on g's level
        anyway, there is no level to rescale, or q's sum cannot take that scale (`fused`
        fell back)."""
        b = self.b
        items = [(self.basis_value(i), c) for i, c in enumerate(q.coeffs) if i and c != 0]
        if not b.ckks or not items:
            return None
        land, tg = min(b.type_of(v).level for v, _ in items) - b.step, b.type_of(g)
        if land >= tg.level or land < b.step:
            return None
        # the product q·B_g, rescaled by `step` primes, must land on the canonical scale there
        # (dropping limbs leaves B_g's scale as it is)
        dropped = math.prod(float(rules.rescale_prime(b.params, j)) for j in range(land - b.step + 1, land + 1))
        try:
            want = b.canonical_scale(land - b.step) * dropped / tg.scale
        except IRTypeError:  # below the bottom of a composite chain: no canonical scale there
            return None
        low_g = b.two_parts(g, self.loc)
        while b.type_of(low_g).level > land:
            low_g = b.emit(HeOp.MOD_SWITCH, (low_g,), (), self.loc)
        terms = self.fused(items, scale=want)
        if len(terms) != 1 or b.type_of(terms[0]).level != land or not rules.scales_match(
                b.params, b.type_of(terms[0]).scale, want):
            return None
        qv = self.plus_const(terms[0], q.coeffs[0])
        return b.multiply(qv, low_g, self.loc, auto=True)

    def basis_at(self, i: int, level: int) -> int:
        """B_i modulus-switched down to `level`, once per (i, level): BGV leaves share them."""
        v = self.basis_value(i)
        if self.b.type_of(v).level == level:
            return v
        if (i, level) not in self.lowered:
            self.lowered[(i, level)] = self.b.level_down(v, level, None, self.loc)
        return self.lowered[(i, level)]

    def bgv_leaf(self, leaf: Leaf, land: int | None, factor: int | None) -> int:
        """BGV: c_0 + Σ c_i·B_i with every plaintext-factor alignment folded into its
        coefficient. The B_i are brought down to the lowest term's level (`basis_at`,
        shared by the leaves), where each term is one integer product MUL_CONST(c_i,
        factor a_i): message × c_i and factor × a_i, so that every term has one factor and
        the adds need no MUL_FACTOR. With `land` below that level the sum is brought down
        to it after the adds (one LEVEL_DOWN), and with `factor` the a_i are chosen so the
        sum arrives there with that factor (the giant step's product it is added to): its
        add needs no MUL_FACTOR either. The auto policy instead multiplied each term at
        its basis value's level, levelled the running sum down term by term, and aligned
        factors with a MUL_FACTOR per term (a second constant multiply, which also grows
        the noise by up to t/2 more). The message is the same; the ciphertexts differ by
        multiples of t in the constants, i.e. only in noise."""
        b, params = self.b, self.b.params
        items = [(i, c) for i, c in enumerate(leaf.coeffs) if i and c != 0]
        low = min(b.type_of(self.basis_value(i)).level for i, _ in items)
        end = low if land is None or land >= low else land
        if factor is None:
            target = b.type_of(self.basis_at(items[-1][0], low)).scale
        else:  # the factor at `low` that bringing the sum down to `end` turns into `factor`
            drop = 1
            for level in range(low, end, -1):
                drop = rules.mod_switch_result(params, level, drop)[1]
            target = rules.bgv_align_constant(params, drop, factor)
        acc = None
        for i, c in items:
            v = self.basis_at(i, low)
            a = rules.bgv_align_constant(params, b.type_of(v).scale, target) % params.plain_modulus
            if a == 1:
                term = self.scaled(v, c)
            else:
                term = b.emit(HeOp.MUL_CONST, (v,), attrs_of(value=int(c), plain_scale=None, factor=int(a)), self.loc)
            acc = self.plus(acc, term)
        acc = self.plus_const(acc, leaf.coeffs[0])
        return acc if end == low else b.level_down(acc, end, None, self.loc)

    def emit(self, node: Node, land: int | None = None, factor: int | None = None) -> int:
        """The value of a plan node; `land`: the level its sum meets (see `fused`);
        `factor`: the BGV plaintext factor it is added to there (see `bgv_leaf`)."""
        if isinstance(node, Leaf):
            if not self.b.ckks:
                return self.bgv_leaf(node, land, factor)
            items = [(self.basis_value(i), c) for i, c in enumerate(node.coeffs) if i and c != 0]
            terms = self.fused(items, land)
            terms.sort(key=lambda v: -self.b.type_of(v).level)  # stable: highest level first, fewest alignments
            acc = None
            for t in terms:
                acc = self.plus(acc, t)
            return self.plus_const(acc, node.coeffs[0])
        g = self.basis_value(node.g)
        level = self.b.type_of
        top = self.giant_product(node.q, g) if isinstance(node.q, Leaf) else None
        if top is not None:
            pass
        elif _is_series(node.q):
            # a leaf quotient lands on g's level: the product needs no alignment
            q = self.emit(node.q, level(g).level if isinstance(node.q, Leaf) else None)
            top = self.b.multiply(q, g, self.loc, auto=True)
        else:
            top = self.scaled(g, node.q)
        if _is_series(node.r):
            # a leaf remainder lands on the product's level (and BGV factor): the sum needs no alignment
            if isinstance(node.r, Leaf):
                return self.plus(top, self.emit(node.r, level(top).level, None if self.b.ckks else level(top).scale))
            return self.plus(top, self.emit(node.r))
        return self.plus_const(top, node.r)


def chebyshev_bound(i: int, u_bound: float | None) -> float | None:
    """A bound on |T_i(u)| for |u| <= u_bound: 1 inside [-1, 1], T_i(u_bound) outside
    (|T_i| is increasing beyond 1). None when there is no bound (BGV)."""
    if u_bound is None:
        return None
    if u_bound <= 1.0:
        return 1.0
    return math.cosh(i * math.acosh(u_bound)) if i * math.acosh(u_bound) < 700 else math.inf


def _bgv_reduce(t: int) -> Callable:
    def reduce(v):
        v = int(v) % t
        return v - t if v > t // 2 else v

    return reduce


def coefficient_reducer(params) -> Callable:
    """How derived coefficients are normalised: BGV centered mod t, CKKS as they are."""
    return _bgv_reduce(params.plain_modulus) if params.scheme == "bgv" else (lambda v: v)


def check_attrs(params, attrs: dict[str, Any]) -> tuple[tuple, str, Any]:
    """(coeffs, basis, domain) of a POLYNOMIAL node; IRTypeError when malformed (the DSL
    validates user input first, so that is a bug)."""
    coeffs, basis, domain = attrs["coeffs"], attrs.get("basis", "power"), attrs.get("domain")
    if not isinstance(coeffs, tuple) or not coeffs or not all(isinstance(c, numbers.Real) for c in coeffs):
        raise IRTypeError(f"polynomial needs a non-empty tuple of coefficients, got {coeffs!r}")
    if any(not math.isfinite(c) for c in coeffs):
        raise IRTypeError(f"polynomial coefficients must be finite, got {coeffs!r}")
    if basis not in BASES:
        raise IRTypeError(f"polynomial basis {basis!r} is not one of {BASES}")
    if domain is not None:
        pair = isinstance(domain, tuple) and len(domain) == 2
        ok = pair and all(isinstance(v, float) and math.isfinite(v) for v in domain)
        if not ok or domain[0] == domain[1] or params.scheme != "ckks":
            raise IRTypeError(f"polynomial domain {domain!r} is not a CKKS pair of distinct floats")
    return coeffs, basis, domain


def polynomial_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    """Expand a POLYNOMIAL (see module doc). A constant series gives x·0 + c (no level)."""
    coeffs, basis, domain = check_attrs(b.params, attrs)
    if degree(coeffs) == 0:
        zero = b.multiply_const(x, 0, loc, auto=True)
        return b.add_const(zero, coeffs[0], loc) if coeffs[0] != 0 else zero
    alpha, beta = affine_map(domain)
    em = _Emitter(b, x, basis, loc)
    # A series on a domain is meant for operands inside it: u = αx + β is taken to lie in
    # [-1, 1] (the value bound of the map's output; a symmetric domain maps without an
    # add, and then u keeps the bound the operand's declared bound gives it).
    scaled = em.scaled(x, alpha)
    u = scaled if beta == 0 else b.add_const(scaled, beta, loc, bound=1.0 if domain is not None else None)
    em.values[1] = u
    return em.emit(plan_polynomial(coeffs, basis, coefficient_reducer(b.params)).root)


DERIVATIVE_GRID_MAX = 1 << 20
"""Most points `derivative_bound` samples; a degree whose Markov margin would need more
gets no bound (the generic rules' estimate stays)."""


DOMAIN_SLACK = 1 / 16
"""How far (a fraction of the domain's half-width) an operand's bound may reach beyond a
series' domain and still be taken to lie inside it: a bound derived through a series
(`value_bound`'s margin, 1/63) or a sum of rounded terms overshoots the value it bounds
by a few percent, and a Chebyshev series of degree 63 at 1.016 is already 40,000 times
its size on the domain. Beyond the slack the estimates cover the whole operand range
(`_operand_range`), as the values can reach it. Domains with an offset are trusted
whatever the bound (`within_domain`)."""


def series_interval(basis: str, domain) -> tuple[float, float] | None:
    """The interval a series is meant for, ascending: its domain, or [-1, 1] for a
    Chebyshev series without one; None for a power series without one (no interval
    bounds its growth)."""
    if domain is not None:
        return tuple(sorted((float(domain[0]), float(domain[1]))))
    return (-1.0, 1.0) if basis == "chebyshev" else None


def within_domain(interval, bound: float) -> bool:
    """Whether an operand of bound `bound` is taken to lie in `interval` (a, b): an interval
    with an offset (a + b != 0, such as (0, 1) or (1, 100): the domains of inverses, square
    roots and logarithms) always, as a bound |x| <= B cannot say that x lies in it and
    every run checks the data (`fhec.reference.check_series_operands`); a symmetric one
    when the bound reaches at most `DOMAIN_SLACK` of the half-width beyond it."""
    a, b = sorted(float(v) for v in interval)
    if a + b != 0:
        return True
    slack = DOMAIN_SLACK * (b - a) / 2
    return -float(bound) >= a - slack and float(bound) <= b + slack


def _operand_range(domain, bound: float) -> tuple[float, float]:
    """The interval the estimates of a series on an operand of bound `bound` cover:
    [-bound, bound], clipped to the domain when it is `within_domain` (the domain itself
    when the bound does not reach it)."""
    lo, hi = -float(bound), float(bound)
    if domain is None or not within_domain(domain, bound):
        return lo, hi
    a, b = sorted(float(v) for v in domain)
    lo, hi = max(lo, a), min(hi, b)
    return (lo, hi) if lo <= hi else (a, b)


def derivative_bound(coeffs: tuple, basis: str, domain, bound: float) -> float | None:
    """An upper bound on max |p'(x)| over |x| <= `bound` for the series (x the operand,
    before the domain map; with a domain, the range `_operand_range` covers): the
    maximum over G evenly spaced points, divided by 1 − (d−1)²/(G−1). Why that holds:
    between two grid points (spacing h = 2w/(G−1) on an interval of half-width w) |p'|
    rises by at most (h/2)·max|p''|, and Markov's
    inequality for the degree-(d−1) polynomial p' on that interval gives
    max|p''| <= (d−1)²/w · max|p'|. G is chosen so the margin is at most 1/16 (1/15
    more than the grid maximum)."""
    d = degree(coeffs)
    if d <= 1:
        return abs(float(coeffs[1])) * abs(affine_map(domain)[0]) if d == 1 else 0.0
    points = 16 * (d - 1) ** 2 + 1
    if points > DERIVATIVE_GRID_MAX:
        return None
    points = max(points, 257)
    window = [-1.0, 1.0] if domain is None else [float(v) for v in domain]
    cls = np.polynomial.Chebyshev if basis == "chebyshev" else np.polynomial.Polynomial
    series = cls(np.asarray(coeffs, dtype=np.float64), domain=window) if domain is not None else cls(coeffs)
    lo, hi = _operand_range(domain, bound)
    grid = np.linspace(lo, hi, points)
    peak = float(np.max(np.abs(series.deriv()(grid))))
    return peak / (1.0 - (d - 1) ** 2 / (points - 1))


VALUE_BOUND_MARGIN = 64
"""`value_bound` samples 64·d² + 1 points, so its Markov margin is 1/63 of the grid maximum."""


def value_bound(coeffs: tuple, basis: str, domain, bound: float) -> float | None:
    """An upper bound on max |p(x)| over the operand's range |x| <= `bound` (with a domain,
    the interval `_operand_range` gives: clipped to the domain only when the bound reaches
    at most `DOMAIN_SLACK` beyond it), or None when the degree needs more than
    `DERIVATIVE_GRID_MAX` points.

    The maximum over G evenly spaced points of that interval (half-width w, spacing
    h = 2w/(G−1)), plus numpy's float64 evaluation error, divided by 1 − d²/(G−1): between
    two grid points |p| rises by at most (h/2)·max|p'|, and Markov's inequality on the
    interval gives max|p'| <= d²/w · max|p|. With G = 64·d² + 1 the margin is 1/63. The
    evaluation error (Horner's rule for a power series, Clenshaw's recurrence for a
    Chebyshev one) is taken as 4(d + 1)²·2^-53 times the coefficients' mass Σ|c_i|·|B_i|
    over the interval, B_i bounded by U^i or `chebyshev_bound(i, U)` for U the series
    variable's bound: a power series of large alternating coefficients (T_40 written in
    the power basis) evaluates 0.3% below its true maximum.

    Why: the generic rules bound a series by its Paterson–Stockmeyer pieces one by one,
    several times its true maximum (Cheon et al.'s f_3, whose maximum on [-1, 1] is 1,
    got 2.19), and composing such series, as comparison and sign approximations do,
    compounds the excess until a bootstrap refuses the value."""
    d = degree(coeffs)
    points = VALUE_BOUND_MARGIN * d * d + 1
    if points > DERIVATIVE_GRID_MAX:
        return None
    lo, hi = _operand_range(domain, bound)
    c = np.asarray(coeffs, dtype=np.float64)
    cls = np.polynomial.Chebyshev if basis == "chebyshev" else np.polynomial.Polynomial
    series = cls(c, domain=[float(v) for v in domain]) if domain is not None else cls(c)
    peak = float(np.max(np.abs(series(np.linspace(lo, hi, max(points, 2))))))
    alpha, beta = affine_map(domain)
    u = max(abs(float(alpha) * lo + float(beta)), abs(float(alpha) * hi + float(beta)))
    sizes = [u**i if basis == "power" else chebyshev_bound(i, u) for i in range(len(c))]
    error = 4.0 * (d + 1) ** 2 * 2.0**-53 * float(np.sum(np.abs(c) * np.asarray(sizes, dtype=np.float64)))
    margin = 1.0 - d * d / (points - 1) if d > 0 and hi > lo else 1.0
    return (peak + error) / margin


def polynomial_node_recipe(b, x: int, attrs: dict[str, Any], loc: str | None) -> int:
    """The POLYNOMIAL node's recipe: `polynomial_recipe`, with the CKKS result's error
    stated as a ``noise`` hint (`HeBuilder.hint_noise`), bounded as the sum in variance of

    * the operand's error carried through p: p(x + e) − p(x) = p'(ξ)·e with ξ between x
      and x + e, so |p(x + e) − p(x)| <= max|p'|·|e| over the operand's bound
      (`derivative_bound`; e is far below the bound), independently of the basis and
      the evaluation order;
    * the evaluation's own error: the generic rules' estimate of the same recipe on an
      operand that carries one rounding's error (the rescales' roundings and encodings
      along the way, propagated as those rules do).

    The generic rules instead carried the operand's error through every product and
    coefficient as if each factor were 1 and the terms independent: a bit or more per
    stage for ResNet's sign polynomials whatever their slope, and too little for a steep
    one. Recipes that call `polynomial_recipe` directly (the bootstrap's EvalMod, whose
    error its own hints state) are unchanged."""
    out = polynomial_recipe(b, x, attrs, loc)
    tx = b.type_of(x)
    coeffs, basis, domain = check_attrs(b.params, attrs)
    if not b.ckks or degree(coeffs) == 0 or out != b.nodes[-1].id or tx.bound is None:
        return out
    slope = derivative_bound(coeffs, basis, domain, tx.bound)
    peak = value_bound(coeffs, basis, domain, tx.bound)
    if peak is not None and b.type_of(out).bound is not None and peak < b.type_of(out).bound:
        b.hint(out, bound=peak)
    if slope is None:
        return out
    scratch = b.scratch()
    quiet = scratch.external(replace(tx, noise=nz.rounding_noise(b.params)))
    evaluation = scratch.type_of(polynomial_recipe(scratch, quiet, attrs, loc)).noise
    t = b.type_of(out)
    carried = tx.noise - math.log2(tx.scale) + math.log2(t.scale) + (math.log2(slope) if slope > 0 else -math.inf)
    noise = nz.add_noise(carried, evaluation) if carried > -math.inf else evaluation
    return b.hint_noise(out, min(noise, math.log2(t.scale) + NOISE_SATURATION_BITS))
