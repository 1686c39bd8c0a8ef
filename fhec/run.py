"""Running a program through the compiler: keygen → encrypt → lower → execute limbs → decrypt.

`fhec.run(program, inputs, seed=..., keyswitch=...)` is the compiled counterpart of
`fhec.evaluate`: both share `fhec.evaluate`'s steps (same prepared program, same keys,
same ciphertexts for the same seed), so their ciphertexts can be compared limb by limb.
`run_detailed` returns everything needed for that comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from fhec.errors import ParameterError
from fhec.evaluate import decrypt_outputs, encrypt_inputs, make_keys, plain_inputs, prepare, run_he
from fhec.ir.he import HeProgram
from fhec.passes.he_keyswitch import expand_key_switches
from fhec.passes.he_order import order_for_hint_reuse
from fhec.passes.keyswitch_choice import choose_methods
from fhec.passes.lower import LoweredProgram, lower
from fhec.schemes.ciphertext import Ciphertext
from fhec.schemes.keys import KeySet
from fhec.sim.functional import execute

KEYSWITCH_POLICIES = ("bv", "hybrid", "auto")


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one compiled run produced.

    Attributes:
        outputs: output name -> decrypted slot vector.
        ciphertexts: output name -> Ciphertext assembled from the executed limbs.
        lowered: the `LoweredProgram` that was executed.
        program: the prepared HE program (primitives; `lowered.he` is the same program
            with its key switches expanded into pieces, which is what was lowered).
        keys: the key set (with the secret key) used for the run.
        inputs: input name -> the encrypted input Ciphertexts.
        plains: plain input name -> slot vector.
        methods: key-switching node id -> method used.
    """

    outputs: dict[str, np.ndarray]
    ciphertexts: dict[str, Ciphertext]
    lowered: LoweredProgram
    program: HeProgram
    keys: KeySet
    inputs: dict[str, Ciphertext]
    plains: dict[str, np.ndarray]
    methods: dict[int, str]

    def eager(self) -> dict[str, Ciphertext]:
        """The same program on the same ciphertexts with the eager evaluator."""
        return run_he(self.program, self.keys, self.inputs, self.plains, self.methods)


def _keygen_methods(methods: Mapping[int, str], policy: str) -> str:
    used = set(methods.values())
    if len(used) == 2:
        return "both"
    if used:
        return used.pop()
    return "hybrid" if policy == "auto" else policy


def compile_he(program, keyswitch: str | None = None) -> tuple[HeProgram, str, dict[int, str]]:
    """The HE half of compilation: prepare (expand, CSE, DCE, rotation planning), order
    for key-switch-hint reuse (F1 §4.2), choose each key switch's method.
    Returns (program, key-switch policy, node id -> method).

    `keyswitch`: "bv", "hybrid", "auto" or None (the parameters' method).
    Raises `ParameterError` for an unknown policy.
    """
    prepared = order_for_hint_reuse(prepare(program))
    policy = _policy(prepared, keyswitch)
    return prepared, policy, choose_methods(prepared, policy)


def lower_program(program, keyswitch: str | None = None) -> LoweredProgram:
    """Compile `program` to the limb level without running it: `compile_he`, then expand
    key switches into their pieces and lower. Data-free: it scales to N = 2^16 and
    millions of instructions. `keyswitch` as for `compile_he`.
    """
    prepared, _, methods = compile_he(program, keyswitch)
    return lower(expand_key_switches(prepared, methods))


def stats(program, keyswitch: str | None = None) -> dict[str, Any]:
    """Limb-instruction statistics of `program` (see `LoweredProgram.stats`): counts per
    LimbOp ("ops") and per HE op ("by_he_op"), rvecs and bytes per value class."""
    return lower_program(program, keyswitch).stats()


def _policy(prepared: HeProgram, keyswitch: str | None) -> str:
    keyswitch = keyswitch or prepared.params.keyswitch
    if keyswitch not in KEYSWITCH_POLICIES:
        raise ParameterError(f"keyswitch={keyswitch!r}: choose one of {', '.join(KEYSWITCH_POLICIES)}.")
    return keyswitch


def run_detailed(program, inputs: Mapping[str, Any], seed: int = 0, keyswitch: str | None = None) -> RunResult:
    """Compile `program` to limb instructions, execute them on real ciphertexts, decrypt.

    Args:
        program: a `fhec.Program`, a traced `@fhec.program` function or an `HeProgram`.
        inputs: input name -> slot values (encrypted and plain inputs alike).
        seed: keys and encryptions are derived from it (as in `fhec.evaluate`).
        keyswitch: "bv", "hybrid", "auto" (per key switch, see
            `fhec.passes.keyswitch_choice.choose_methods`), or None for the parameters'
            method (the one their noise estimates assume, and `fhec.evaluate` uses).

    Raises `ParameterError` for an unknown keyswitch policy, and what `fhec.evaluate` raises.
    """
    prepared, keyswitch, methods = compile_he(program, keyswitch)
    keys = make_keys(prepared, seed, keyswitch=_keygen_methods(methods, keyswitch))
    cts = encrypt_inputs(prepared, keys, inputs, seed)
    plains = plain_inputs(prepared, inputs)
    lowered = lower(expand_key_switches(prepared, methods))
    words = execute(lowered.limb, lowered.loaded_values(cts, keys, plains))
    compiled = lowered.output_ciphertexts(words, keys.key_id)
    return RunResult(decrypt_outputs(keys, compiled), compiled, lowered, prepared, keys, cts, plains, methods)


def run(program, inputs: Mapping[str, Any], seed: int = 0, keyswitch: str | None = None) -> dict[str, np.ndarray]:
    """Run `program` compiled: keygen, encrypt, lower to limb instructions, execute them
    in the functional model, decrypt. Returns output name -> slot vector (float64 for
    CKKS, int64 mod t for BGV), like `fhec.evaluate`.

    `keyswitch`: "bv", "hybrid", "auto" (a per-key-switch choice by noise and cost), or
    None (default) for the parameters' method.
    """
    return run_detailed(program, inputs, seed, keyswitch).outputs
