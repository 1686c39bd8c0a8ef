"""fhec: a compiler for fully homomorphic encryption (CKKS, BGV) targeting accelerator ISAs.

The user API is re-exported here; everything else is internal and may change.

`import fhec` is cheap (well under half a second): the errors are imported at once, every
other public name is loaded from its module on first use (`_LAZY`), so that numba, sympy
and the numeric kernels load only when a program actually needs them.
"""

import importlib
import types

from fhec.errors import (
    FhecError,
    InternalError,
    ParameterError,
    InvalidRingDegreeError,
    InvalidModulusError,
    WordSizeError,
    InsecureParametersError,
    SeedError,
    TooManyValuesError,
    MismatchedParametersError,
    MissingKeyError,
    MissingRelinearizationKeyError,
    MissingRotationKeyError,
    LevelExhaustedError,
    ScaleMismatchError,
    NoiseBudgetExhaustedError,
    SchemeMismatchError,
    InvalidPlaintextError,
    TargetError,
)
from fhec.errors import (
    ProgramError,
    SlotCountError,
    UnsetOutputError,
    PlaintextOperandError,
    MixedProgramsError,
    MissingInputError,
    PolynomialError,
    BootstrapError,
    LevelMismatchError,
    UnusedInputWarning,
    ParametersChangedWarning,
)
from fhec.errors import ScaleOverflowError
from fhec.errors import ValueOverflowError, PrecisionError, PrecisionWarning, CompiledMismatchError

# -- input validation (issue 9: only FhecError reaches the user) --
from fhec.errors import (
    InvalidArgumentError,
    ProgramFormatError,
    ProgramFileError,
    ReportFormatError,
    OutputDirectoryError,
)
from fhec.errors import MissingExtraError, PersistenceFormatError, SecretKeyError

_LAZY: dict[str, str] = {
    # the scheme layer
    "BGVParams": "fhec.schemes",
    "CKKSParams": "fhec.schemes",
    "BootstrapConfig": "fhec.schemes.bootstrap_config",
    "EvalModConfig": "fhec.schemes.bootstrap_config",
    "Ciphertext": "fhec.schemes",
    "Evaluator": "fhec.schemes",
    "KeySet": "fhec.schemes",
    "Plaintext": "fhec.schemes",
    "decrypt": "fhec.schemes",
    "encode": "fhec.schemes",
    "encrypt": "fhec.schemes",
    "keygen": "fhec.schemes",
    "measure_noise_budget": "fhec.schemes",
    "measure_precision": "fhec.schemes",
    # the DSL
    "Cipher": "fhec.frontend",
    "Plain": "fhec.frontend",
    "Program": "fhec.frontend",
    "program": "fhec.frontend",
    "AutoParams": "fhec.frontend",
    # the drivers: plaintext semantics, eager evaluation, limb execution, compilation
    "reference": "fhec.reference",
    "centered": "fhec.reference",
    "evaluate": "fhec.evaluate",
    "run": "fhec.run",
    "lower": "fhec.compiler",
    "stats": "fhec.compiler",
    "Compiled": "fhec.compiler",
    "compile": "fhec.compiler",
    # files: parameter sets, keys, ciphertexts, plaintexts, compiled programs
    "save": "fhec.persistence",
    "load": "fhec.persistence",
    # design-space sweeps on Dask (the explore extra)
    "explore": "fhec.explore",
    # polynomial approximation (numpy only)
    "Approximation": "fhec.frontend.approx",
    "approx": "fhec.frontend.approx",
}
"""Public name -> the module it is loaded from on first use."""

_SUBMODULES = ("analysis", "backends", "frontend", "ir", "passes", "pipeline", "plot", "ring", "schemes", "sim", "testing")

_FUNCTION_OVER_MODULE = ("reference", "evaluate", "run", "explore")
"""Public functions named like the module that defines them."""


def __getattr__(name: str):
    if name == "__version__":  # reading package metadata costs a few ms: only when asked
        from fhec.version import package_version

        globals()[name] = package_version()
        return globals()[name]
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"fhec.{name}")
    raise AttributeError(f"module 'fhec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"__version__"})


class _Package(types.ModuleType):
    """The `fhec` package object. Importing a submodule binds it as an attribute of its
    package; for `fhec.evaluate`, `fhec.run`, `fhec.reference` and `fhec.explore` the public name is the
    function the submodule defines, so binding the submodule binds that function instead
    (as the eager ``from fhec.run import run`` used to). Documented Python: module
    ``__class__`` assignment, "Customizing module attribute access"."""

    def __setattr__(self, name: str, value) -> None:
        if name in _FUNCTION_OVER_MODULE and isinstance(value, types.ModuleType):
            value = getattr(value, name, None)
            if value is None:  # the submodule is still initializing: resolve on first use
                return
        super().__setattr__(name, value)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _Package
