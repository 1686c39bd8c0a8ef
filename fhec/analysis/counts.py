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
    primes), L·L for BV.
    """
    up, rest = _split(L, alpha, bgv, method)
    ops = ("INTT", "NTT", "MUL", "ADD", "MUL_CONST", "BCONV", "AUT")
    c = dict.fromkeys(ops, 0)
    digit_limbs = L * L if method == "bv" else -(-L // alpha) * (L + alpha)
    for k, v in up.items():
        c[k] += v * (1 if hoisting == "single" else rotations)
    for k, v in rest.items():
        c[k] += v * rotations
    c["AUT"] += rotations * (2 * L + (digit_limbs if hoisting == "single" else 0))
    c["ADD"] += rotations * L
    return c


def modular_multiplies(ops: dict[str, int], N: int) -> int:
    """Modular multiplies of a limb program with `ops` (op name -> instruction count) at
    ring degree N: N per MUL, MUL_CONST and BCONV instruction, N/2·log2 N butterflies per
    NTT or INTT (Osiris and SimFHE count the same way)."""
    butterflies = N // 2 * int(math.log2(N))
    return N * (ops.get("MUL", 0) + ops.get("MUL_CONST", 0) + ops.get("BCONV", 0)) + butterflies * (
        ops.get("NTT", 0) + ops.get("INTT", 0))
