"""Rotation-key planning: which key-switching keys a program needs, and fitting its
rotations into a bounded key set.

Every distinct rotation step needs its own Galois key (a key-switch hint of
dnum x (L + alpha) limb pairs, tens of MB at F1's sizes), so bounding the key set
trades a few extra rotations for key memory and traffic. `plan_rotations` decomposes
each rotation whose step is not kept into a chain of rotations by signed powers of two
(NAF, at most about log2(row)/2 + 1 rotations per step) or by powers of two (binary),
chosen so that the union of the digits fits the cap; leftover budget keeps the most
profitable original steps as direct keys. The extra rotations are ordinary ROTATE
nodes, visible in the printed IR.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fhec.errors import ProgramError
from fhec.ir.he import HeNode, HeOp, HeProgram, KeyKind
from fhec.ir.he_build import HeBuilder
from fhec.ir.he_types import row_length
from fhec.passes.he_expand import expand
from fhec.passes.he_rewrite import as_he, copy_node, rebuild

METHODS = ("naf", "pow2")


@dataclass(frozen=True)
class KeyRequirements:
    """The keys `fhec.keygen` must generate for a program.

    Attributes:
        rotations: rotation steps, normalized to 0 < step < row length, sorted.
        relinearization: whether some ct x ct product is relinearized.
        conjugation: whether CKKS conjugation / BGV row swap is used.
    """

    rotations: tuple[int, ...]
    relinearization: bool
    conjugation: bool
    encapsulation: bool = False

    def keygen_kwargs(self) -> dict:
        """Keyword arguments for `fhec.keygen` (rotations, relinearization, conjugation,
        encapsulation)."""
        return {
            "rotations": list(self.rotations),
            "relinearization": self.relinearization,
            "conjugation": self.conjugation,
            "encapsulation": self.encapsulation,
        }


def key_requirements(program) -> KeyRequirements:
    """The keys the program's nodes need (high-level nodes included, via their types)."""
    program = as_he(program)
    keys = {k for n in program.nodes for k in n.type.keys}
    return KeyRequirements(
        tuple(sorted(k.step for k in keys if k.kind is KeyKind.ROTATION)),
        any(k.kind is KeyKind.RELIN for k in keys),
        any(k.kind is KeyKind.CONJUGATION for k in keys),
        any(k.kind in (KeyKind.TO_SPARSE, KeyKind.TO_DENSE) for k in keys),
    )


def naf(k: int) -> tuple[int, ...]:
    """The non-adjacent form of k: signed powers of two summing to k, no two adjacent,
    lowest first (e.g. 7 -> (-1, 8)). Empty for 0."""
    digits, bit = [], 1
    while k:
        if k & 1:
            d = 2 - (k & 3)  # +1 if k = 1 mod 4, -1 if k = 3 mod 4
            digits.append(d * bit)
            k -= d
        k >>= 1
        bit <<= 1
    return tuple(digits)


def decompose(step: int, row: int, method: str = "naf") -> tuple[int, ...]:
    """Rotation steps whose composition rotates by `step` (mod `row`), as signed powers
    of two ("naf", on the representative of step in (-row/2, row/2]) or as powers of two
    ("pow2", on step mod row)."""
    s = step % row
    if method == "pow2":
        return tuple(1 << i for i in range(s.bit_length()) if s >> i & 1)
    if method == "naf":
        signed = s - row if s > row // 2 else s
        return naf(signed)
    raise ProgramError(f"rotation decomposition method {method!r}: choose one of {METHODS}.")


def rotation_counts(program: HeProgram) -> Counter:
    """Normalized step -> number of ROTATE nodes using it."""
    row = row_length(program.params)
    return Counter(n.attr("step") % row for n in program.nodes_of(HeOp.ROTATE))


def choose_keys(counts: Counter, row: int, max_keys: int, method: str = "naf", where: str | None = None,
                fixed: frozenset[int] = frozenset()) -> tuple[set[int], str]:
    """The kept rotation steps (at most `max_keys`) and the decomposition method.
    `fixed`: steps that must keep their own key (rotations that are not decomposed).

    Raises `ProgramError` when even the power-of-two basis does not fit.
    """
    order = (method,) + tuple(m for m in METHODS if m != method)
    for m in order:
        basis = {d % row for s in counts for d in decompose(s, row, m)} | fixed
        if len(basis) <= max_keys:
            break
    else:
        # the fewest keys that work: a decomposition, or every step keeping its own key
        need = min(len({d % row for s in counts for d in decompose(s, row, m)} | fixed) for m in METHODS)
        need = min(need, len(set(counts) | fixed))
        raise ProgramError(
            f"max_rotation_keys={max_keys} is too small: this program rotates by {len(set(counts) | fixed)} "
            f"distinct steps, and decomposing them into powers of two does not bring its keys down to "
            f"{max_keys}; allow at least {need}.",
            where,
        )
    # Spend what is left of the budget on the steps whose decomposition costs the most.
    savings = sorted(
        ((counts[s] * (len(decompose(s, row, m)) - 1), s) for s in counts if s not in basis),
        key=lambda x: (-x[0], x[1]),
    )
    extra = [s for gain, s in savings if gain > 0][: max_keys - len(basis)]
    return basis | set(extra), m


def plan_rotations(program, max_keys: int | None = None, method: str = "naf") -> HeProgram:
    """Bound the number of rotation keys (default cap: ``options.max_rotation_keys``).

    Expands the program first (rotations inside high-level ops count). Returns it
    unchanged when there is no cap or the rotations already fit; otherwise every
    rotation whose step is not kept becomes a chain of ROTATE nodes by kept steps.
    Preserves the semantics and every output's level and scale (rotations do not
    change them); noise grows by one key switch per extra rotation.

    Raises `ProgramError` (naming the program's line) when the cap cannot be met.
    """
    program = expand(as_he(program))
    cap = program.options.max_rotation_keys if max_keys is None else max_keys
    counts = rotation_counts(program)
    # rotations this pass cannot decompose (a double-hoisted transform's ROTATE_EXT, kept
    # over Q·P): their steps keep their own keys and count against the cap
    fixed = {}
    for n in program.nodes:
        if n.op is not HeOp.ROTATE:
            for k in n.type.keys:
                if k.kind is KeyKind.ROTATION:
                    fixed.setdefault(k.step, n)
    if cap is None or len(set(counts) | set(fixed)) <= cap:
        return program
    if len(fixed) > cap:
        first = next(iter(fixed.values()))
        raise ProgramError(
            f"max_rotation_keys={cap} is too small for the {len(fixed)} rotation steps of a double-hoisted "
            f"linear transform ({first.op.value}), which keep one key each: their rotations are not decomposed. "
            f"Allow at least {len(fixed)} keys, or use linear_transform(..., hoisting='single').",
            first.loc or program.loc,
        )
    row = row_length(program.params)
    kept, m = choose_keys(counts, row, cap, method, program.loc, frozenset(fixed))

    def rewrite(b: HeBuilder, node: HeNode, args: tuple[int, ...]) -> int:
        step = node.attr("step", 0) % row if node.op is HeOp.ROTATE else None
        if step is None or step in kept:
            return copy_node(b, node, args)
        v = args[0]
        for d in decompose(step, row, m):
            v = b.emit(HeOp.ROTATE, (v,), (("step", d),), node.loc)
        return v

    return rebuild(program, rewrite)
