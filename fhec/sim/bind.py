"""Binding a limb program's loaded rvecs (inputs, key-switch hints, constants) to data.

Scheduling is data-free; execution is data-full (ARCHITECTURE.md). This module is the
seam: given the real ciphertexts, keys and encoded plaintexts, it produces the
``{rvec id: words}`` mapping that `fhec.sim.functional.execute` consumes, by reading
each loaded rvec's identity tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fhec.ir.limb import LimbProgram, RVecClass
from fhec.ir.lowered import LoweredProgram, coefficient_bound, coefficient_digits, coefficient_limb, of_limb_prime
from fhec.schemes.ciphertext import Ciphertext, Plaintext
from fhec.schemes.keys import KeySet


def loaded_values(
    program: LimbProgram,
    ciphertexts: Mapping[str, Ciphertext],
    keys: KeySet,
    key_sources: Mapping[str, tuple[int | str, str]],
    plaintexts: Mapping[str, Plaintext],
) -> dict[int, np.ndarray]:
    """Words of every INPUT, KSH and CONST rvec of `program`.

    Args:
        ciphertexts: input name -> Ciphertext (INPUT tags: input, poly, limb).
        keys: the key set whose switching keys back the KSH rvecs.
        key_sources: key name -> (source, method), source "relin", a Galois element or
            "to-sparse"/"to-dense" (encapsulation), or (source, method, "residual") for a key
            of the residual key-switching basis (`KeySet.switching`'s entries; KSH tags:
            key, digit, component, key row; component 0 is b, 1 is a).
        plaintexts: constant name -> Plaintext (CONST tags: constant, limb).
    """
    out: dict[int, np.ndarray] = {}
    ids = program.tagged
    tags = program.tags
    cls = program.rvec_class[ids]
    for rid, tag in zip(ids[cls == RVecClass.INPUT], tags[cls == RVecClass.INPUT]):
        ct = ciphertexts[program.input_names[tag[0]]]
        out[int(rid)] = ct.data[tag[1], tag[2]]
    sel = cls == RVecClass.KSH
    for rid, tag in zip(ids[sel], tags[sel]):
        key = keys.switching[tuple(key_sources[program.key_names[tag[0]]])]
        part = key.b if tag[2] == 0 else key.a
        out[int(rid)] = part[tag[1], tag[3]]
    sel = cls == RVecClass.CONST
    for rid, tag in zip(ids[sel], tags[sel]):
        out[int(rid)] = plaintexts[program.const_names[tag[0]]].data[tag[1]]
    return out


def bind_lowered(
    lowered: LoweredProgram,
    ciphertexts: Mapping[str, Ciphertext],
    keys: KeySet,
    plain_inputs: Mapping[str, np.ndarray],
) -> dict[int, np.ndarray]:
    """`loaded_values` of a `LoweredProgram`: its CONST operands encoded from the plain
    inputs, its hints read from `keys` by the key sources its lowering recorded."""
    plaintexts: dict = lowered.plaintexts(plain_inputs)
    params = lowered.he.params
    q0 = of_limb_prime(params)  # OF-Limb's stored prime
    for name, recipe in lowered.constants.items():
        if recipe.of_limb and recipe.of_limb_digits > 1:  # digits of large coefficients (OF-Limb)
            bound = coefficient_bound(params, recipe)
            plaintexts[name] = _StoredLimbs(coefficient_digits(plaintexts[name], recipe.of_limb_digits, bound, q0))
        elif recipe.of_limb:  # one stored limb, in coefficient form (OF-Limb)
            plaintexts[name] = _StoredLimbs(coefficient_limb(plaintexts[name], q0)[None])
    return loaded_values(lowered.limb, ciphertexts, keys, lowered.key_sources, plaintexts)


@dataclass(frozen=True)
class _StoredLimbs:
    """The limbs a program loads for one constant, where they are not a `Plaintext`'s
    (OF-Limb: the coefficients mod one prime, in coefficient form)."""

    data: np.ndarray
