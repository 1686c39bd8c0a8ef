"""Every-limb comparison of a compiled run with the eager evaluator.

Decrypting a CKKS ciphertext reads only the first few limbs (enough for the value,
`fhec.schemes.encryption.decrypt`), so a compiled run whose other limbs are wrong
still decrypts to the right numbers, and a comparison of decrypted outputs passes.
Such a run is still broken: the next rescale or key switch would read those limbs.

`compare_limbs` checks every limb of every part of every output ciphertext, bit for
bit, against the eager evaluator's ciphertext on the same keys and inputs, and
`CompiledMismatchError` reports the first difference in (output, part, limb) order
with the limb instruction that wrote it (the `LimbProgram`'s producer of the output's
rvec) and the HE node and DSL line it came from. `fhec run` and
`fhec.testing.assert_matches_reference(target=...)` run it on every check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from fhec.errors import CompiledMismatchError
from fhec.ir.limb import LimbOp


@dataclass(frozen=True)
class LimbMismatch:
    """The first limb in which a compiled output differs from the eager one.

    Attributes:
        output, part, limb: where (limb index into the output's moduli).
        coefficient: first differing coefficient (NTT-domain word) of that limb; -1 when
            the ciphertexts differ in shape or metadata instead.
        got, want: the two words there (0 when shapes differ).
        instruction: index of the limb instruction that wrote the rvec (-1: none).
        detail: a human-readable description of the writer (op, modulus, HE node, line).
    """

    output: str
    part: int
    limb: int
    coefficient: int
    got: int
    want: int
    instruction: int
    detail: str

    def describe(self) -> str:
        where = f"output {self.output!r}, part {self.part}, limb {self.limb}"
        if self.coefficient < 0:
            return f"{where}: {self.detail}"
        return (
            f"{where}: coefficient {self.coefficient} is {self.got} in the compiled run but {self.want} in the "
            f"eager evaluator; written by {self.detail}"
        )


def _writer(lowered, output: str, part: int, limb: int) -> tuple[int, str]:
    """(instruction index, description) of the limb instruction that wrote an output limb."""
    limb_prog = lowered.limb
    rvec = int(lowered.outputs[output][part, limb])
    instr = int(limb_prog.producer()[rvec])
    if instr < 0:
        return -1, f"no instruction (rvec {limb_prog.rvec_label(rvec)} is never written)"
    op = LimbOp(int(limb_prog.op[instr])).name
    text = f"limb instruction #{instr} ({op} @q{int(limb_prog.mod[instr])} into {limb_prog.rvec_label(rvec)})"
    node_id = int(limb_prog.he_node[instr])
    if node_id >= 0:
        node = lowered.he.node(node_id)
        text += f" of HE node %{node_id} ({node.op.value}" + (f", {node.loc})" if node.loc else ")")
    return instr, text


def first_mismatch(lowered, compiled: Mapping[str, Any], eager: Mapping[str, Any]) -> LimbMismatch | None:
    """The first differing (output, part, limb) between two sets of output ciphertexts,
    in output order; None when every limb of every output is identical.

    `lowered` is the `LoweredProgram` that produced `compiled` (for the writers).
    """
    for name in lowered.outputs:
        got, want = compiled[name], eager[name]
        if got.data.shape != want.data.shape or got.level != want.level:
            return LimbMismatch(
                name, 0, 0, -1, 0, 0, -1,
                f"the compiled ciphertext has shape {got.data.shape} at level {got.level}, the eager one "
                f"{want.data.shape} at level {want.level}",
            )
        diff = got.data != want.data
        if not diff.any():
            continue
        part, limb, coeff = (int(i) for i in np.argwhere(diff)[0])
        instr, detail = _writer(lowered, name, part, limb)
        return LimbMismatch(
            name, part, limb, coeff, int(got.data[part, limb, coeff]), int(want.data[part, limb, coeff]), instr, detail
        )
    return None


def compare_limbs(lowered, compiled: Mapping[str, Any], eager: Mapping[str, Any], what: str = "compiled run") -> None:
    """Raise `CompiledMismatchError` unless every limb of every output of `compiled`
    equals `eager`'s, bit for bit (see `first_mismatch`)."""
    m = first_mismatch(lowered, compiled, eager)
    if m is not None:
        raise CompiledMismatchError(
            f"the {what} of program {lowered.he.name!r} is not bit-identical to the eager evaluator: "
            f"{m.describe()}. Decrypted values may still look right (decryption reads only the first limbs), "
            f"but the ciphertext is corrupt; this is a bug of the compiler or of the target model, please "
            f"report it with the program.",
            lowered.he.node(lowered.he.outputs[m.output]).loc,
        )


def run_checked(program, inputs: Mapping[str, Any], seed=None, keyswitch: str | None = None):
    """`fhec.run.run_detailed`, then `compare_limbs` against the eager evaluator on the
    same keys and ciphertexts. Returns the `RunResult`."""
    from fhec.run import run_detailed

    r = run_detailed(program, inputs, seed, keyswitch)
    compare_limbs(r.lowered, r.ciphertexts, r.eager(), "limb-level run")
    return r


def run_compiled_checked(compiled, inputs: Mapping[str, Any], seed=None, *, check: bool = False) -> dict[str, Any]:
    """`Compiled.run_detailed` (the streams executed on the target model; `check` replays
    them in the hazard checker first), then `compare_limbs` against the eager evaluator.
    Returns the `run_detailed` dict."""
    from fhec.evaluate import run_he
    from fhec.passes.keyswitch_choice import annotated_methods

    d = compiled.run_detailed(inputs, seed, check=check)
    eager = run_he(compiled.program, d["keys"], d["inputs"], d["plains"], annotated_methods(compiled.program))
    compare_limbs(compiled.lowered, d["ciphertexts"], eager, f"run of the streams compiled for {compiled.target.name}")
    return d
