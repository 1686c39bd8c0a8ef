"""Ciphertexts and plaintexts: immutable RNS polynomials plus their metadata.

Polynomials are always kept in the NTT domain (as F1 and SEAL do), shape
``(limbs, N)`` for a plaintext and ``(parts, limbs, N)`` for a ciphertext
(2 parts; 3 after a multiply without relinearization). ``limbs`` is
``params.limbs_at(level)``.

``scale`` is the CKKS scale (a float: the decrypted polynomial is ``scale · message``)
or, for BGV, the plaintext factor f in Z_t (the decryption is ``f · message mod t``;
modulus switching multiplies f by q^{-1} mod t, as in OpenFHE).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fhec.schemes.params import Params


def _frozen(arr: np.ndarray) -> np.ndarray:
    if arr.flags.writeable:
        arr = arr.copy() if not arr.flags.owndata else arr
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Plaintext:
    """An encoded message: NTT-domain residues at a level, with its scale. `extended`:
    encoded over Q_l·P, to multiply an `ExtendedCiphertext` (double hoisting)."""

    params: Params
    data: np.ndarray
    level: int
    scale: float | int
    extended: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _frozen(self.data))

    @property
    def moduli(self) -> tuple[int, ...]:
        return self.params.moduli_at(self.level) + (self.params.special_moduli_at(self.level) if self.extended else ())

    def __repr__(self) -> str:
        # The message is the user's data: show the shape, never the residues.
        return (
            f"Plaintext({self.params.scheme}, N={self.params.N}, level={self.level}, "
            f"limbs={self.data.shape[0]}, scale={_scale_text(self)})"
        )


def _scale_text(x) -> str:
    return f"{x.scale:.4g}" if x.params.scheme == "ckks" else str(x.scale)


@dataclass(frozen=True, eq=False)
class _Parts:
    """The fields a `Ciphertext` and an `ExtendedCiphertext` share (neither is the other,
    so nothing takes one for the other by mistake).

    Attributes:
        params: the parameter set.
        data: uint64 array (parts, limbs, N), NTT domain.
        level: number of rescales / modulus switches still available.
        scale: CKKS scale (float) or BGV plaintext factor (int mod t).
        key_id: the key set it belongs to.
        noise: estimated noise, log2 of its standard deviation in the decrypted
            polynomial's units (slot domain for CKKS, coefficients for BGV).
    """

    params: Params
    data: np.ndarray
    level: int
    scale: float | int
    key_id: int
    noise: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _frozen(self.data))

    @property
    def parts(self) -> int:
        return self.data.shape[0]


@dataclass(frozen=True, eq=False)
class Ciphertext(_Parts):
    """An encryption of a message under the key set `key_id` (fields: see `_Parts`)."""

    @property
    def limbs(self) -> int:
        return self.data.shape[1]

    @property
    def moduli(self) -> tuple[int, ...]:
        return self.params.moduli_at(self.level)

    def with_(self, **changes) -> "Ciphertext":
        """A copy with some fields replaced (the IR-style `replace`)."""
        return replace(self, **changes)

    @property
    def precision_bits(self) -> float:
        """CKKS: estimated bits of precision, log2(scale) − log2(noise). BGV: see `noise_budget_bits`."""
        from fhec.schemes.noise import estimated_precision_bits

        return estimated_precision_bits(self)

    @property
    def noise_budget_bits(self) -> float:
        """BGV: estimated remaining noise budget in bits (log2 of Q_l / 2 over the noise bound)."""
        from fhec.schemes.noise import estimated_noise_budget_bits

        return estimated_noise_budget_bits(self)

    def __repr__(self) -> str:
        return (
            f"Ciphertext({self.params.scheme}, N={self.params.N}, level={self.level}, "
            f"limbs={self.limbs}, parts={self.parts}, scale={_scale_text(self)})"
        )


@dataclass(frozen=True, eq=False)
class ExtendedCiphertext(_Parts):
    """A ciphertext over the key-switching basis Q_l·P whose message is scaled by P: what a
    hybrid rotation holds before its mod-down (double hoisting, Bossuat et al. 2021).

    ``(d0, d1)`` with d0 + d1·s = P·(c0 + c1·s) + (key-switching error) over Q_l·P.
    Such values add and multiply by plaintexts encoded over Q_l·P like ciphertexts;
    `fhec.Evaluator.mod_down` divides by P and returns the `Ciphertext` they stand for.
    Level, scale and noise are those of that ciphertext. It is not a `Ciphertext`, so
    nothing decrypts or serializes one by mistake.
    """

    @property
    def moduli(self) -> tuple[int, ...]:
        return self.params.moduli_at(self.level) + self.params.special_moduli_at(self.level)

    def __repr__(self) -> str:
        return (
            f"ExtendedCiphertext({self.params.scheme}, N={self.params.N}, level={self.level}, "
            f"limbs={self.data.shape[1]} (Q·P), scale={_scale_text(self)})"
        )
