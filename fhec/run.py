"""`fhec.run`: a program compiled to limb instructions and executed in the functional model.

keygen → encrypt → `fhec.pipeline` up to ``lower`` → execute every limb instruction on
real residues (`fhec.sim.functional`) → decrypt. This executes the *limb program*, before
any scheduling; `fhec.compile(...).run` executes the scheduled per-unit *streams*.

`fhec.run` is the compiled counterpart of `fhec.evaluate`: both share `fhec.evaluate`'s
steps (same keys, same ciphertexts for the same seed), so their ciphertexts can be
compared limb by limb; `run_detailed` returns everything needed for that comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from fhec.evaluate import decrypt_outputs, encrypt_inputs, keygen_method, make_keys, plain_inputs, run_he
from fhec.ir.he import HeProgram
from fhec.ir.lowered import LoweredProgram
from fhec.reference import check_inputs
from fhec.pipeline import HE_DONE, LOWERED, Options, keyswitch_policy, run_prefix
from fhec.schemes.ciphertext import Ciphertext
from fhec.schemes.keys import KeySet


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one compiled run produced.

    Attributes:
        outputs: output name -> decrypted slot vector.
        ciphertexts: output name -> Ciphertext assembled from the executed limbs.
        lowered: the `LoweredProgram` that was executed.
        program: the HE program after ``choose_keyswitch`` (primitives, every key switch
            annotated with its method; `lowered.he` is the same program with its key
            switches expanded into pieces, which is what was lowered).
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


def run_detailed(
    program, inputs: Mapping[str, Any], seed=None, keyswitch: str | None = None, *, hoisting: str = "auto"
) -> RunResult:
    """Compile `program` to limb instructions, execute them on real ciphertexts, decrypt.

    Args:
        program: a `fhec.Program`, a traced `@fhec.program` function or an `HeProgram`.
        inputs: input name -> slot values (encrypted and plain inputs alike).
        seed: keys and encryptions are derived from it (as in `fhec.evaluate`); None (the
            default): fresh OS randomness.
        keyswitch: "bv", "hybrid", "auto" (per key switch, see
            `fhec.passes.keyswitch_choice.choose_methods`), or None for the parameters'
            method (the one their noise estimates assume, and `fhec.evaluate` uses).
        hoisting: "auto", "single" or "none" (see `fhec.passes.he_keyswitch`).

    Raises `ParameterError` for an unknown keyswitch policy, `PrecisionError` when an
    explicit method leaves a CKKS value without precision, and what `fhec.evaluate` raises.
    """
    from fhec.passes.keyswitch_choice import annotated_methods, check_run_methods
    from fhec.sim.bind import bind_lowered
    from fhec.sim.functional import execute

    check_inputs(program, inputs)
    compiled = run_prefix(LOWERED, program, Options(keyswitch=keyswitch, hoisting=hoisting))
    annotated, lowered = compiled[HE_DONE], compiled[LOWERED]
    policy = keyswitch_policy(annotated, keyswitch)
    check_run_methods(annotated, policy)  # PrecisionError for an explicit method left without precision
    keys = make_keys(annotated, seed, keyswitch=keygen_method(annotated, policy))
    cts = encrypt_inputs(annotated, keys, inputs, seed)
    plains = plain_inputs(annotated, inputs)
    words = execute(lowered.limb, bind_lowered(lowered, cts, keys, plains))
    outs = lowered.output_ciphertexts(words, keys.key_id)
    methods = annotated_methods(annotated)
    return RunResult(decrypt_outputs(keys, outs, annotated), outs, lowered, annotated, keys, cts, plains, methods)


def run(
    program, inputs: Mapping[str, Any], seed=None, keyswitch: str | None = None, *, hoisting: str = "auto"
) -> dict[str, np.ndarray]:
    """Run `program` compiled: keygen, encrypt, lower to limb instructions, execute them
    in the functional model (the limb program, unscheduled), decrypt. Returns output name
    -> slot vector (float64 for CKKS, int64 mod t for BGV), like `fhec.evaluate`.

    `keyswitch`: "bv", "hybrid", "auto" (a per-key-switch choice by noise and cost), or
    None (default) for the parameters' method.
    """
    return run_detailed(program, inputs, seed, keyswitch, hoisting=hoisting).outputs
