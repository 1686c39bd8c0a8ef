"""A lowered program: the limb program (`fhec.ir.limb`) plus what it means in HE terms.

`fhec.passes.lower` produces it; the executors (`fhec.sim.bind`) bind data to its loaded
rvecs and read its outputs back as ciphertexts; `fhec.analysis.stats` counts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from fhec.errors import InternalError
from fhec.ir.he import Const, HeProgram, HeType
from fhec.ring import ntt, rns
from fhec.ir.limb import LimbProgram
from fhec.schemes.ciphertext import Ciphertext, Plaintext
from fhec.schemes.encryption import encode, encode_scalar
from fhec.schemes.evaluator import monomial_plaintext


@dataclass(frozen=True)
class ConstRecipe:
    """How to encode one plaintext operand at run time, exactly as
    `fhec.evaluate.plaintext_operand` does: the slot vector of `source` at `level`
    with `scale` (an addend: the ciphertext's scale; a CKKS multiplier: the node's
    ``plain_scale``; a BGV multiplier: None, factor 1).
    `source` is ("plain", input name), ("value", Python scalar or `Const`) or
    ("monomial", power): the exact polynomial X^power (`Evaluator.multiply_monomial`).
    `extended`: encoded over Q_level·P (a double-hoisted multiply).
    `of_limb`: the program loads only one limb, the coefficients mod the widest prime q0 of
    Q·P (`of_limb_seed`), *in coefficient form* and generates every limb on chip (OF-Limb,
    `fhec.passes.lower`); its one CONST rvec, tag (constant, 0), holds `coefficient_limb` of
    the encoding. With `of_limb_digits` = k > 1 the integer
    coefficients c are too large for one limb and are stored as k balanced digits in base
    B = `digit_base(q0)` (c = sum_j d_j B^j, tags (constant, j)), each a coefficient-form
    residue mod q0 (`coefficient_digits`); limb i is sum_j (B^j mod q_i) NTT_i(d_j).
    """

    source: tuple[str, Any]
    level: int
    scale: float | int | None
    extended: bool = False
    of_limb: bool = False
    of_limb_digits: int = 1


def coefficient_bound(params, recipe: ConstRecipe) -> float | None:
    """A proven bound on |coefficient| of `recipe`'s CKKS plaintext, or None if unknown at
    compile time (a plain input, a scalar, BGV encodings in [0, t)).

    A CKKS encoding's coefficients are bounded by ``scale x max |slot value|`` plus the
    rounding (each is an average of the slots times roots of unity); a monomial X^k has
    coefficients in {-1, 0, 1}."""
    kind, value = recipe.source
    if params.scheme != "ckks":
        return None
    if kind == "monomial":
        return 1.0
    if kind != "value" or (not isinstance(value, Const) and np.ndim(value) == 0):
        return None
    values = value.array if isinstance(value, Const) else np.asarray(value)
    vmax = float(np.max(np.abs(values))) if values.size else 0.0
    return float(recipe.scale) * vmax + 1


def of_limb_seed(params) -> int:
    """Which prime's residues OF-Limb stores, as an index into Q's primes then P's: the
    widest of them all (the first of equals). The stored limb need not be one of the
    plaintext's own (an NTT reads a foreign residue centered whatever its prime), so a
    40-bit special prime holds a DFT diagonal's 38-bit coefficients in one digit where
    Osiris's 24-bit q_0 primes, or a 38-bit level prime, would need two."""
    moduli = params.moduli + params.special_moduli
    return max(range(len(moduli)), key=lambda i: (moduli[i], -i))


def of_limb_prime(params) -> int:
    """The prime of `of_limb_seed`."""
    return (params.moduli + params.special_moduli)[of_limb_seed(params)]


def digit_base(q0: int) -> int:
    """The base B = 2^(bits(q0) - 1) of multi-digit OF-Limb: a balanced digit, in [-B/2, B/2),
    is below q0/2 in magnitude, so an NTT reading it centered mod q0 gets it back exactly."""
    return 1 << (q0.bit_length() - 1)


def _coefficients(pt: Plaintext, bound: float | None) -> np.ndarray:
    """`pt`'s integer coefficients (object array), by CRT from the fewest limbs whose product
    exceeds 2 (bound + 1) (every limb without a bound)."""
    moduli = pt.moduli
    m = len(moduli) if bound is None else 1
    while m < len(moduli) and rns.product(moduli[:m]) <= 2 * (int(bound) + 1):
        m += 1
    return rns.centered(rns.crt_compose(ntt.intt(pt.data[:m], moduli[:m]), moduli[:m]), rns.product(moduli[:m]))


def coefficient_digits(pt: Plaintext, digits: int, bound: float, q0: int) -> np.ndarray:
    """The `digits` stored limbs of a multi-digit OF-Limb constant (`ConstRecipe.of_limb_digits`),
    shape (digits, N): the balanced base-`digit_base` digits of `pt`'s integer coefficients
    (|c| <= `bound`, proven by lowering), as residues mod the seed prime q0 (`of_limb_seed`).
    The digits are then checked to regenerate every limb of `pt` exactly (InternalError
    otherwise, as `coefficient_limb`)."""
    moduli = pt.moduli
    coeffs = _coefficients(pt, bound)
    B = digit_base(q0)
    out = np.empty((digits, pt.data.shape[1]), dtype=np.uint64)
    rest = coeffs
    for j in range(digits):
        d = rest if j == digits - 1 else (rest + B // 2) % B - B // 2
        out[j] = (d % q0).astype(np.uint64)
        rest = (rest - d) // B
    regenerated = np.zeros_like(pt.data)
    for j in range(digits):
        limbs = ntt.ntt(rns.lift_centered(np.repeat(out[j][None], len(moduli), axis=0), (q0,) * len(moduli), moduli),
                        moduli)
        for i, q in enumerate(moduli):
            regenerated[i] = (regenerated[i].astype(object) + limbs[i].astype(object) * (pow(B, j, q))) % q
    if not np.array_equal(regenerated, pt.data):
        raise InternalError(
            f"OF-Limb: {digits} digits in base 2^{B.bit_length() - 1} do not regenerate a plaintext's limbs; this is "
            "a compiler bug (its coefficient bound was wrong): compile for a target without [lowering] plaintexts = "
            "\"of-limb\" meanwhile"
        )
    return out


def coefficient_limb(pt: Plaintext, q0: int) -> np.ndarray:
    """The one stored limb of an OF-Limb constant (`ConstRecipe.of_limb`): `pt`'s coefficients
    mod the seed prime q0 (`of_limb_seed`; `pt`'s own limb when q0 is one of its primes), in
    coefficient form, after checking that NTTs of it read centered regenerate every limb of
    `pt` exactly (coefficients in (-q0/2, q0/2]). InternalError otherwise: lowering chose
    OF-Limb only for plaintexts it proved small enough (`fhec.passes.lower.of_limb_fits`)."""
    moduli = pt.moduli
    if q0 in moduli:
        seed = ntt.intt(pt.data[moduli.index(q0)], (q0,))
    else:
        # from the fewest limbs that determine a coefficient below q0/2; a larger one fails the check below
        seed = (_coefficients(pt, q0 / 2) % q0).astype(np.uint64)
    regenerated = ntt.ntt(rns.lift_centered(np.repeat(seed[None], len(moduli), axis=0), (q0,) * len(moduli), moduli),
                          moduli)
    if not np.array_equal(regenerated, pt.data):
        raise InternalError(
            f"OF-Limb: a plaintext's coefficients exceed q0/2 = {q0 // 2}, so one limb cannot regenerate the others; "
            "this is a compiler bug (of_limb_fits admitted it): compile for a target without [lowering] plaintexts = "
            "\"of-limb\" meanwhile"
        )
    return seed


@dataclass(frozen=True, eq=False)
class LoweredProgram:
    """A limb program plus what it means in HE terms.

    Attributes:
        limb: the `LimbProgram`.
        he: the (expanded) HE program it implements.
        inputs: input name -> INPUT rvec ids, shape (parts, limbs).
        outputs: output name -> OUTPUT rvec ids, shape (parts, limbs).
        output_types: output name -> `HeType` (level, scale, noise estimate).
        key_sources: KSH name -> (source, method): "relin", a Galois element or
            "to-sparse"/"to-dense", and the basis, (source, method, "residual"), for a
            residual-basis key (`KeySet.switching`).
        constants: CONST name -> `ConstRecipe`.
        methods: HE node id -> key-switching method, for every key-switching node.
    """

    limb: LimbProgram
    he: HeProgram
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    output_types: dict[str, HeType]
    key_sources: dict[str, tuple]
    constants: dict[str, ConstRecipe]
    methods: dict[int, str] = field(default_factory=dict)

    def plaintexts(self, plain_inputs: Mapping[str, np.ndarray]) -> dict[str, Plaintext]:
        """Encode every CONST operand (plain inputs given by name)."""
        params = self.he.params
        out = {}
        for name, r in self.constants.items():
            kind, value = r.source
            if kind == "monomial":  # exact X^power, as `Evaluator.multiply_monomial` multiplies by
                out[name] = monomial_plaintext(params, value, r.level)
                continue
            if kind == "plain":
                value = plain_inputs[value]
            if not isinstance(value, Const) and np.ndim(value) == 0:
                out[name] = encode_scalar(params, value, r.level, r.scale)
                continue
            out[name] = encode(params, value.array if isinstance(value, Const) else value, r.level, r.scale,
                               extended=r.extended)
        return out

    def output_ciphertexts(self, words: Mapping[int, np.ndarray], key_id: int) -> dict[str, Ciphertext]:
        """Assemble executed OUTPUT words into Ciphertexts (metadata from the HE types)."""
        params = self.he.params
        out = {}
        for name, ids in self.outputs.items():
            t = self.output_types[name]
            data = np.stack([[words[int(r)] for r in row] for row in ids]).astype(np.uint64)
            out[name] = Ciphertext(params, data, t.level, t.scale, key_id, t.noise if t.noise is not None else 0.0)
        return out
