"""Public testing helpers for fhec programs and for fhec itself.

* `assert_matches_reference`: an encrypted execution of a program (or of a `Compiled`
  one) against `fhec.reference` or the user's own expected values. Needs nothing
  beyond fhec itself.
* hypothesis strategies `params`, `programs`, `inputs_for`, `with_inputs`
  (`fhec.testing.strategies`) and `settings`, hypothesis settings fit for encrypted
  programs. These need the ``hypothesis`` package (``pip install 'fhec[test]'``); they
  load on first use, so ``import fhec.testing`` works without it.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Mapping

import numpy as np

from fhec.errors import InvalidArgumentError, MissingExtraError

_STRATEGIES = ("params", "programs", "inputs_for", "with_inputs")
"""Names loaded from `fhec.testing.strategies` (which imports hypothesis) on first use."""

WORST_SLOTS_SHOWN = 4
"""How many of an output's worst slots a failure prints with expected and actual values."""


def _hypothesis():
    try:
        return importlib.import_module("hypothesis")
    except ImportError:
        raise MissingExtraError(
            "fhec.testing's strategies and settings need the hypothesis package: pip install 'fhec[test]' "
            "(assert_matches_reference works without it)."
        ) from None


def settings(**overrides):
    """Hypothesis settings for properties of encrypted programs: no deadline (one
    encrypted execution takes far longer than hypothesis's 200 ms default, and numba
    compiles its kernels on the first one) and the too-slow and large-data health
    checks off (a ``suppress_health_check`` given adds to them). Keyword arguments
    (``max_examples=10``...) are passed on to
    ``hypothesis.settings``; the rest comes from the active profile. Use as a decorator:
    ``@ft.settings(max_examples=10)``.

    Raises `InvalidArgumentError` naming a setting hypothesis does not have or a value it
    refuses (``max_examples=-1``)."""
    hypothesis = _hypothesis()
    _check_setting_names(hypothesis, overrides)
    quiet = [hypothesis.HealthCheck.too_slow, hypothesis.HealthCheck.data_too_large]
    # health checks the caller suppresses come on top of these (hypothesis checks each one)
    extra = overrides.pop("suppress_health_check", ())
    quiet += [c for c in (extra if isinstance(extra, (list, tuple, set, frozenset)) else [extra]) if c not in quiet]
    try:
        return hypothesis.settings(**{"deadline": None, "suppress_health_check": quiet, **overrides})
    except hypothesis.errors.InvalidArgument as e:  # its message names the setting and the value
        raise InvalidArgumentError(f"fhec.testing.settings: {e}") from None


def _check_setting_names(hypothesis, overrides) -> None:
    """Refuse keyword arguments `hypothesis.settings` does not take (it raised a bare TypeError)."""
    known = [name for name in inspect.signature(hypothesis.settings.__init__).parameters if name != "self"]
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise InvalidArgumentError(
            f"fhec.testing.settings: no hypothesis setting named {', '.join(map(repr, unknown))}; the settings are "
            f"{', '.join(known)}."
        )


def __getattr__(name: str):
    if name in _STRATEGIES:
        _hypothesis()
        value = getattr(importlib.import_module("fhec.testing.strategies"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fhec.testing' has no attribute {name!r}")


Expected = Mapping[str, Any] | Callable[[Mapping[str, Any]], Any]


def assert_matches_reference(
    program,
    inputs: Mapping[str, Any] | None = None,
    target: str | None = None,
    rel_bits: float | None = None,
    seed=None,
    *,
    expected: Expected | None = None,
) -> None:
    """Run `program` under encryption and assert it matches `fhec.reference` (or `expected`).

    `program` is a `fhec.Program`, a traced ``@fhec.program`` function, an `HeProgram`,
    or a `Compiled` (`fhec.compile(...)`), whose streams are then executed as compiled (an
    `IsaCompiled`: its machine words).

    `target` picks the execution of a program: None, the eager evaluator
    (`fhec.evaluate`); ``"limbs"``, the compiled limb-level program run by the functional
    model (`fhec.run`); a target name or TOML path (``"f1"``, ``"tiny"``), the program
    compiled for that accelerator with its streams executed (`fhec.compile(...).run`), or,
    for an ISA machine (``"rpu"``), its encoded instructions executed in the ISA's simulator;
    a ``params="auto"`` program's parameters are then chosen for that target, as by `fhec.compile`.
    With a `Compiled`, `target` must be None or that program's target's name.

    `expected`: the values to compare with instead of `fhec.reference`: a mapping
    ``{output: values}`` or a function of the inputs returning one (or, for a program
    with one output, its values); a vector shorter than the slots is compared on its
    first slots only (the rest hold what the program computes on zero padding). CKKS outputs must agree to `rel_bits` bits relative to
    max(1, max|expected|) (default: per output, from its estimated worst-slot precision,
    `fhec.evaluate.default_required_bits`); BGV outputs exactly, mod t. `inputs`
    default to random ones (`fhec.evaluate.random_inputs`). `seed` drives the keys,
    encryptions and random inputs: None (default) for fresh randomness; pass an int in
    tests so that a failure can be reproduced. A compiled execution (any `target`, or a
    `Compiled`) must also equal the eager evaluator's ciphertexts in every limb, bit for
    bit (`fhec.verify_run.compare_limbs`): decryption alone reads only a few limbs.

    Raises AssertionError naming each failing output, the bits reached versus required,
    and the expected and actual values of its worst slots; `CompiledMismatchError`
    naming the first differing (output, part, limb) and the limb instruction that wrote
    it; `InvalidArgumentError` for an `expected` that does not name every output, names
    another or gives an empty vector, or a
    `target` that contradicts a `Compiled`.
    """
    from fhec.compiler import Compiled, IsaCompiled, input_program, judged_program
    from fhec.evaluate import as_he, compare_outputs, random_inputs

    if isinstance(program, (Compiled, IsaCompiled)) and target is not None and target != program.target.name:
        raise InvalidArgumentError(
            f"target={target!r} but the program was compiled for {program.target.name!r}; pass target=None "
            f"to run a Compiled program as compiled, or {_other_execution(target)}."
        )
    compiled = _compiled_for(program, target)
    he = as_he(program) if compiled is None else judged_program(compiled)
    if inputs is None:
        inputs = random_inputs(he if compiled is None else input_program(compiled), seed)
    got = _execute(compiled, he, inputs, target, seed)
    want = _expected_values(he, inputs, expected)
    got = {name: np.asarray(got[name])[: want[name].size] for name in he.outputs}
    failures = [r for r in compare_outputs(he, got, want, rel_bits) if not r.ok]
    if failures:
        name = getattr(program, "name", None) or getattr(he, "name", "?")
        against = "fhec.reference" if expected is None else "the expected values"
        lines = [f"program {name!r} does not match {against}:"]
        for r in failures:
            lines.append(_describe_failure(he.params, r))
            lines += _worst_slots(he.params, r, np.asarray(got[r.name]), np.asarray(want[r.name]))
        raise AssertionError("\n".join(lines))


UNCOMPILED_TARGETS = (None, "limbs")
"""`target` values that execute a program without compiling it for an accelerator."""


def _other_execution(target) -> str:
    """How to get the execution `target` names instead of a Compiled program's own."""
    if target == "limbs":  # not a compile target: the functional model of an uncompiled program
        return "pass the uncompiled fhec.Program with target='limbs' to run its limb-level program (fhec.run)"
    return f"compile it for {target!r}"


def _compiled_for(program, target):
    """`program` compiled for the accelerator `target` names (a `Compiled` as it is), or
    None for an uncompiled execution. Compiled first, so that a params="auto" program's
    parameters are chosen for the target, as `fhec.compile` chooses them, before the
    inputs and the reference are drawn for its slots."""
    from fhec.compiler import Compiled, IsaCompiled

    if isinstance(program, (Compiled, IsaCompiled)):
        return program
    if target in UNCOMPILED_TARGETS:
        return None
    from fhec import compile as compile_program

    return compile_program(program, target=target)


def _execute(compiled, he, inputs, target, seed) -> Mapping[str, np.ndarray]:
    """Decrypted outputs of the program on `inputs` by the execution `target` names."""
    from fhec.evaluate import evaluate
    from fhec.verify_run import run_checked, run_compiled_checked

    if compiled is not None:
        return run_compiled_checked(compiled, inputs, seed)["outputs"]
    if target is None:
        return evaluate(he, inputs, seed)
    return run_checked(he, inputs, seed).outputs  # target "limbs"


def _expected_values(he, inputs, expected: Expected | None) -> dict[str, np.ndarray]:
    """`fhec.reference`'s outputs (every slot), or the user's `expected` (a mapping or a
    function of the inputs), one float/int vector per output, as long as given."""
    from fhec.frontend.constants import vector
    from fhec.reference import reference

    if expected is None:
        return reference(he, inputs)
    values = expected(inputs) if callable(expected) else expected
    if not isinstance(values, Mapping):
        if len(he.outputs) != 1:
            raise InvalidArgumentError(
                f"expected= gave one {type(values).__name__} but the program has outputs {sorted(he.outputs)}; "
                f"return a mapping {{output: values}}."
            )
        values = {next(iter(he.outputs)): values}
    missing = sorted(set(he.outputs) - set(values))
    if missing:
        raise InvalidArgumentError(
            f"expected= has no values for output(s) {missing}; give every output of the program "
            f"({sorted(he.outputs)})."
        )
    unknown = sorted(map(repr, set(values) - set(he.outputs)))
    if unknown:  # a misspelt name would check nothing it names
        raise InvalidArgumentError(
            f"expected= names {', '.join(unknown)}, which the program does not output; its outputs are "
            f"{sorted(he.outputs)}."
        )
    out = {}
    for name in he.outputs:
        full = vector(he.params, values[name], None, f"expected[{name!r}]")  # checked, converted, padded
        out[name] = full[: np.asarray(values[name]).size]
        if not out[name].size:
            raise InvalidArgumentError(f"expected[{name!r}] is empty, so nothing of it would be compared; give "
                                       f"the values of its first slots at least.")
    return out


def _describe_failure(params, r) -> str:
    if params.scheme == "bgv":
        return f"  output {r.name!r}: {int(r.max_error)} slots differ, e.g. slots {list(r.bad_slots)}"
    return (
        f"  output {r.name!r}: max error {r.max_error:.3g} = {r.bits:.1f} bits of precision, "
        f"{r.required_bits - r.bits:.1f} bits short of the {r.required_bits:.1f} required{r.floor_note}; "
        f"worst slots {list(r.bad_slots)}"
    )


def _worst_slots(params, r, got: np.ndarray, want: np.ndarray) -> list[str]:
    """Expected vs actual of the output's worst slots out of tolerance (CKKS: largest
    error first; BGV: the first wrong ones), one line each."""
    slots = r.bad_slots[:WORST_SLOTS_SHOWN]
    if params.scheme == "bgv":
        t = params.plain_modulus
        return [f"    slot {i}: expected {int(want[i]) % t}, got {int(got[i]) % t}" for i in slots]
    return [f"    slot {i}: expected {want[i]:.9g}, got {got[i]:.9g} (error {abs(got[i] - want[i]):.3g})" for i in slots]


__all__ = ["params", "programs", "inputs_for", "with_inputs", "settings", "assert_matches_reference"]
