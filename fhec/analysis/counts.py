"""Closed-form limb-instruction counts of one key switch, for documentation and checks.

They are derived from the emitters in `fhec.passes.lower_ops` (see docs/lowering.md) and
tested against what those emitters actually produce.
"""

from __future__ import annotations

import math


def bv_keyswitch_counts(L: int) -> dict[str, int]:
    """F1 §2.4: L INTT + L(L−1) NTT + 2L² MUL + 2L(L−1) ADD at L limbs."""
    return {"INTT": L, "NTT": L * (L - 1), "MUL": 2 * L * L, "ADD": 2 * L * (L - 1), "MUL_CONST": 0, "BCONV": 0}


def digit_sizes(L: int, alpha: int) -> list[int]:
    """Primes per hybrid digit at L limbs: ceil(L/alpha) digits of alpha, the last maybe fewer."""
    return [min(alpha, L - j * alpha) for j in range(-(-L // alpha))]


def hybrid_keyswitch_counts(L: int, alpha: int, bgv: bool = False) -> dict[str, int]:
    """Hybrid key switching at L limbs of Q with alpha special primes (digits of alpha primes).

    With digit sizes a_j (d = ceil(L/alpha) digits, a_j = alpha except possibly the last):

    * mod_up, per digit: a_j INTT; a_j MUL_CONST when a_j > 1 (the (B/b_i)^{-1} factors;
      they are 1 for a single prime); for each of the L + alpha − a_j other moduli,
      a_j BCONV + (a_j − 1) ADD + 1 NTT.
    * key_mult: 2·d·(L + alpha) MUL and 2·(d − 1)·(L + alpha) ADD.
    * mod_down, for each of the two polynomials: alpha INTT; alpha MUL_CONST if
      alpha > 1 or BGV (the −t^{-1} factor); per Q limb alpha BCONV + (alpha − 1) ADD +
      1 NTT + 1 MUL_CONST + 1 ADD.
    """
    sizes = digit_sizes(L, alpha)
    d, K = len(sizes), L + alpha
    c = {"INTT": 0, "NTT": 0, "MUL": 0, "ADD": 0, "MUL_CONST": 0, "BCONV": 0}
    for a in sizes:
        c["INTT"] += a
        c["MUL_CONST"] += a if a > 1 else 0
        others = K - a
        c["BCONV"] += others * a
        c["ADD"] += others * (a - 1)
        c["NTT"] += others
    c["MUL"] += 2 * d * K
    c["ADD"] += 2 * (d - 1) * K
    for _ in range(2):
        c["INTT"] += alpha
        c["MUL_CONST"] += alpha if (alpha > 1 or bgv) else 0
        c["BCONV"] += L * alpha
        c["ADD"] += L * (alpha - 1) + L
        c["NTT"] += L
        c["MUL_CONST"] += L
    return c


def _split(L: int, alpha: int, bgv: bool, method: str) -> tuple[dict[str, int], dict[str, int]]:
    """(mod_up, key_mult + mod_down) counts of one key switch, from the closed forms above."""
    if method == "bv":
        return {"INTT": L, "NTT": L * (L - 1)}, {"MUL": 2 * L * L, "ADD": 2 * L * (L - 1)}
    whole = hybrid_keyswitch_counts(L, alpha, bgv)
    sizes = digit_sizes(L, alpha)
    K = L + alpha
    up = {"INTT": sum(sizes), "MUL_CONST": sum(a for a in sizes if a > 1),
          "BCONV": sum((K - a) * a for a in sizes), "ADD": sum((K - a) * (a - 1) for a in sizes),
          "NTT": sum(K - a for a in sizes)}
    rest = {k: whole[k] - up.get(k, 0) for k in whole}
    return up, rest


def rotation_counts(L: int, alpha: int, rotations: int, *, method: str = "hybrid", hoisting: str = "none",
                    bgv: bool = False) -> dict[str, int]:
    """Limb instructions of `rotations` rotations of one 2-part ciphertext at L limbs.

    Every rotation: σ_g of both parts (2L AUT), a key switch, and c0 + u0 (L ADD).
    Without hoisting each rotation decomposes σ_g(c1) itself. With single hoisting
    (`fhec.passes.he_keyswitch`) c1 is decomposed once, and each rotation instead
    permutes every digit limb: d·(L + α) AUT for hybrid (d = ⌈L/α⌉ digits over L + α
    primes), L·L for BV; and σ_g(c1) itself is not needed (L AUT, of c0 only).
    """
    up, rest = _split(L, alpha, bgv, method)
    ops = ("INTT", "NTT", "MUL", "ADD", "MUL_CONST", "BCONV", "AUT")
    c = dict.fromkeys(ops, 0)
    digit_limbs = L * L if method == "bv" else -(-L // alpha) * (L + alpha)
    for k, v in up.items():
        c[k] += v * (1 if hoisting == "single" else rotations)
    for k, v in rest.items():
        c[k] += v * rotations
    c["AUT"] += rotations * (L + digit_limbs if hoisting == "single" else 2 * L)
    c["ADD"] += rotations * L
    return c


def _plus(*terms: tuple[int, dict[str, int]]) -> dict[str, int]:
    """Σ count · counts over (count, counts) pairs, over every op name."""
    c = dict.fromkeys(("INTT", "NTT", "MUL", "ADD", "MUL_CONST", "BCONV", "AUT"), 0)
    for times, counts in terms:
        for k, v in counts.items():
            c[k] += times * v
    return c


def bsgs_counts(L: int, alpha: int, n1: int, n2: int, *, hoisting: str = "none", bgv: bool = False) -> dict[str, int]:
    """Limb instructions of a hybrid BSGS linear transform (`fhec.ir.he_recipes`) of a
    2-part ciphertext at L limbs, alpha special primes (d = ⌈L/α⌉ digits, K = L + α),
    whose n1·n2 diagonals fill the grid k = g·n1 + j (0 ≤ j < n1, 0 ≤ g < n2; n1, n2 ≥ 2),
    without its rescale. Every mode multiplies each diagonal into its baby step and sums
    each giant step's products and the giant steps' results. With R = a rotation of
    `rotation_counts` (2L AUT, mod-up, key product, mod-down, L ADD):

    * "none":   (n1 − 1) + (n2 − 1) R; n1·n2 · 2L MUL; (n1·n2 − 1) · 2L ADD.
    * "single": the n1 − 1 baby steps share one mod-up and permute its digits instead
      (d·K AUT each); the n2 − 1 giant steps are R; the same MUL and ADD.
    * "double" (Bossuat et al. 2021): each baby step is L + d·K AUT, a key product and
      the Q·P result (P·c0 + u0, u1): L MUL_CONST + L ADD, with no mod-down; the
      n2·(n1 − 1) products with them are 2K MUL each, and their sums 2K ADD; the n2 j = 0
      products stay over Q (2L MUL) and join their giant step's sum as P times them
      (2L MUL_CONST + 2L ADD each). Each of the n2 − 1 giant steps divides its sum by P
      (a mod-down of both parts) and rotates it without mod-down (2L AUT, mod-up, key
      product, L MUL_CONST + L ADD); the n2 Q·P results are summed (2K ADD each) and
      divided by P once.

    A single baby step is not hoisted (nothing to share): it decomposes its own input.
    """
    if n1 < 2 or n2 < 2:
        raise ValueError("bsgs_counts covers grids with n1, n2 >= 2")
    up, rest = _split(L, alpha, bgv, "hybrid")
    d, K = -(-L // alpha), L + alpha
    key_product = {"MUL": 2 * d * K, "ADD": 2 * (d - 1) * K}
    mod_down = {k: v - key_product.get(k, 0) for k, v in rest.items()}
    digit_turns = {"AUT": d * K}
    if hoisting in ("none", "single"):
        babies = rotation_counts(L, alpha, n1 - 1, method="hybrid", hoisting=hoisting, bgv=bgv)
        giants = rotation_counts(L, alpha, n2 - 1, method="hybrid", bgv=bgv)
        return _plus((1, babies), (1, giants), (1, {"MUL": 2 * L * n1 * n2, "ADD": 2 * L * (n1 * n2 - 1)}))
    if hoisting != "double":
        raise ValueError(f"hoisting {hoisting!r}: 'none', 'single' or 'double'")
    to_qp = {"MUL_CONST": L, "ADD": L}
    shared = n1 - 1 >= 2
    babies = _plus((1 if shared else n1 - 1, up), (n1 - 1, {"AUT": L if shared else 2 * L}),
                   (n1 - 1 if shared else 0, digit_turns),
                   (n1 - 1, key_product), (n1 - 1, to_qp))
    products = {"MUL": 2 * K * n2 * (n1 - 1) + 2 * L * n2, "ADD": 2 * K * n2 * (n1 - 2)}
    lifts = {"MUL_CONST": 2 * L, "ADD": 2 * L}  # each j = 0 product joins its sum as P times it
    giants = _plus((n2 - 1, mod_down), (n2 - 1, {"AUT": 2 * L}), (n2 - 1, up), (n2 - 1, key_product),
                   (n2 - 1, to_qp))
    final = _plus((1, {"ADD": 2 * K * (n2 - 1)}), (1, mod_down))
    return _plus((1, babies), (1, products), (n2, lifts), (1, giants), (1, final))


def modular_multiplies(ops: dict[str, int], N: int) -> int:
    """Modular multiplies of a limb program with `ops` (op name -> instruction count) at
    ring degree N: N per MUL, MUL_CONST and BCONV instruction, N/2·log2 N butterflies per
    NTT or INTT (Osiris and SimFHE count the same way)."""
    butterflies = N // 2 * int(math.log2(N))
    return N * (ops.get("MUL", 0) + ops.get("MUL_CONST", 0) + ops.get("BCONV", 0)) + butterflies * (
        ops.get("NTT", 0) + ops.get("INTT", 0))
