"""Public testing helpers for fhec programs and for fhec itself.

* hypothesis strategies (need the ``hypothesis`` package): `params`, `programs`,
  `inputs_for`, `with_inputs` (see `fhec.testing.strategies`);
* `assert_matches_reference`: an execution of a program against `fhec.reference`.
"""

from __future__ import annotations

from typing import Any, Mapping

from fhec.testing.strategies import inputs_for, params, programs, with_inputs


def assert_matches_reference(
    program,
    inputs: Mapping[str, Any] | None = None,
    target: str | None = None,
    rel_bits: float | None = None,
    seed=None,
) -> None:
    """Run `program` under encryption and assert it matches `fhec.reference`.

    `target` picks the execution: None, the eager evaluator (`fhec.evaluate`);
    ``"limbs"``, the compiled limb-level program run by the functional model
    (`fhec.run`); a target name or TOML path (``"f1"``, ``"tiny"``), the program compiled
    for that accelerator with its streams executed (`fhec.compile(...).run`). CKKS outputs must agree to
    `rel_bits` bits relative to max(1, max|expected|) (default: per output, from its
    estimated worst-slot precision, `fhec.evaluate.default_required_bits`); BGV outputs exactly.
    `inputs` default to random ones (`fhec.evaluate.random_inputs`). `seed` drives the
    keys, encryptions and random inputs: None (default) for fresh randomness; pass an
    int in tests so that a failure can be reproduced. A compiled execution (any `target`)
    must also equal the eager evaluator's ciphertexts in every limb, bit for bit
    (`fhec.verify_run.compare_limbs`): decryption alone reads only a few limbs.

    Raises AssertionError naming each failing output, its worst slots and the bits
    reached versus required; `CompiledMismatchError` naming the first differing
    (output, part, limb) and the limb instruction that wrote it.
    """
    from fhec.evaluate import compare_outputs, evaluate, random_inputs
    from fhec.reference import reference

    inputs = random_inputs(program, seed) if inputs is None else inputs
    results = compare_outputs(program, _execute(program, inputs, target, seed), reference(program, inputs), rel_bits)
    failures = [r for r in results if not r.ok]
    if failures:
        scheme = getattr(program, "params").scheme
        lines = [f"program {getattr(program, 'name', '?')!r} does not match fhec.reference:"]
        for r in failures:
            if scheme == "bgv":
                lines.append(f"  output {r.name!r}: {int(r.max_error)} slots differ, e.g. slots {list(r.bad_slots)}")
            else:
                lines.append(
                    f"  output {r.name!r}: max error {r.max_error:.3g} = {r.bits:.1f} bits of precision, "
                    f"{r.required_bits - r.bits:.1f} bits short of the {r.required_bits:.1f} required; "
                    f"worst slots {list(r.bad_slots)}"
                )
        raise AssertionError("\n".join(lines))


def _execute(program, inputs, target, seed):
    """Decrypted outputs of `program` on `inputs` by the execution `target` names."""
    from fhec.evaluate import evaluate

    from fhec.verify_run import run_checked, run_compiled_checked

    if target is None:
        return evaluate(program, inputs, seed)
    if target == "limbs":
        return run_checked(program, inputs, seed).outputs
    from fhec import compile as compile_program

    return run_compiled_checked(compile_program(program, target=target), inputs, seed)["outputs"]


__all__ = ["params", "programs", "inputs_for", "with_inputs", "assert_matches_reference"]
