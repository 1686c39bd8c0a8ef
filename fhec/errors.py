"""The two error families of fhec.

`FhecError` is the user's fault: bad parameters, a program that exhausts its levels,
a missing key. Its message says what is wrong and what to change, and when the error
comes from a DSL program it names the file and line that created the offending value.
`InternalError` is ours: an invariant of the compiler broke.
The CLI prints an `FhecError` without a traceback and exits non-zero.
"""

from __future__ import annotations


class FhecError(Exception):
    """Base class of every error a user can cause.

    `where` is an optional ``"file.py:LINE"`` source location of the DSL value
    involved; when given, it is prefixed to the message.
    """

    def __init__(self, message: str, where: str | None = None):
        self.where = where
        self.bare_message = message
        super().__init__(f"{where}: {message}" if where else message)


class InternalError(Exception):
    """An invariant of fhec itself failed; please report it."""


_WARNED: dict = {}
"""The registry of `warn_at`: Python's default filter shows a warning once per text and
location, as it does for `warnings.warn` (a program checked twice, by `fhec.evaluate` and
`fhec.reference`, warns once)."""


def warn_at(message: str, category: type[Warning], where: str | None, stacklevel: int = 2) -> None:
    """Warn `message`, attributed to the DSL line `where` (``"file.py:LINE"``) when given,
    so that the warning names the user's line rather than the fhec code that noticed it."""
    import warnings

    path, _, line = (where or "").rpartition(":")
    if not (path and line.isdigit()):
        warnings.warn(message, category, stacklevel=stacklevel + 1)
        return
    warnings.warn_explicit(message, category, path, int(line), module=path, registry=_WARNED)


class ParameterError(FhecError):
    """Parameters are malformed (N, word size, moduli, levels...)."""


class InvalidRingDegreeError(ParameterError):
    """N is not a power of two in the supported range."""


class InvalidModulusError(ParameterError):
    """A modulus is not prime or not congruent to 1 mod 2N."""


class WordSizeError(ParameterError):
    """The machine word size is out of the supported range."""


class InsecureParametersError(ParameterError):
    """log2(Q·P) exceeds the HE-standard bound for the requested security level."""


class SeedError(ParameterError):
    """A seed is not a non-negative int, bytes or None (e.g. a string, a negative int, a
    bool or a numpy Generator)."""


class TooManyValuesError(FhecError):
    """More values than the parameter set has slots."""


class InvalidPlaintextError(FhecError):
    """Values to encode are not finite numbers (CKKS) or not integers (BGV), or a
    coefficient vector to decode has the wrong shape."""


class MismatchedParametersError(FhecError):
    """Objects from different parameter sets or key sets were combined."""


class MissingKeyError(FhecError):
    """A key needed by an operation was not generated."""


class MissingRelinearizationKeyError(MissingKeyError):
    """A ciphertext multiply needs the relinearization key, which was not generated."""


class MissingRotationKeyError(MissingKeyError):
    """A rotation (or conjugation / row swap) needs a Galois key that was not generated."""


class LevelExhaustedError(FhecError):
    """No modulus is left to rescale or mod-switch into."""


class ScaleMismatchError(FhecError):
    """Two CKKS operands of an addition have different scales."""


class NoiseBudgetExhaustedError(FhecError):
    """A BGV ciphertext's noise exceeds its modulus; its decryption would be garbage."""


class SchemeMismatchError(FhecError):
    """An operation that exists only in one scheme was used in the other."""


class TargetError(FhecError):
    """A target description (a shipped name or a user TOML file) is unknown or invalid;
    the message names the file and the offending field."""


class ProgramError(FhecError):
    """A DSL program is malformed: a duplicate name, an argument out of range, an
    operation that does not exist on this kind of value."""


class SlotCountError(ProgramError):
    """A slot count (`sum_slots(n)`, `replicate(n)`) beyond the parameters' slots: a
    ``params="auto"`` program takes it as a need for a larger ring."""


class UnhashableProgramError(ProgramError, TypeError):
    """A `Program`, mutable while it is traced, is used as a dict key or set member. Also
    a `TypeError`, what Python raises for any unhashable object, so that code probing
    hashability (``try: hash(x) except TypeError``, as hypothesis's ``st.just`` does)
    keeps working."""


class UnsetOutputError(ProgramError):
    """A program has no outputs, or an output was given no value (e.g. None)."""


class PlaintextOperandError(ProgramError):
    """A plaintext (or a constant) was used where a ciphertext is needed."""


class PlainAttributeError(PlaintextOperandError, AttributeError):
    """A ciphertext's method or property asked of a plain input (``w.bootstrap()``). Also
    an `AttributeError`, what Python raises for a missing attribute, so that ``hasattr``
    and ``getattr(x, name, default)`` keep working on plain inputs."""


class MixedProgramsError(ProgramError):
    """Values of two different programs were combined in one operation."""


class PolynomialError(ProgramError):
    """A polynomial's coefficients, basis or domain are invalid (not finite, an unknown
    basis, a degenerate domain, a numpy series with a non-default window...)."""


class BootstrapError(ProgramError):
    """``x.bootstrap()`` cannot run here: BGV, parameters without a `BootstrapConfig`, or
    an input whose level and scale leave ModRaise no room (the message names the fix)."""


class MissingInputError(ProgramError):
    """An input of a program was not given a value (or an unknown input name was given)."""


class LevelMismatchError(FhecError):
    """In a rescale='manual' program, the operands of an operation are at different levels."""


class UnusedInputWarning(UserWarning):
    """An input of a program is never used by any output."""


class ParametersChangedWarning(UserWarning):
    """A ``params="auto"`` program's parameters were chosen again, with another ring
    degree, for a target that cannot run the earlier choice: rotations and sums now wrap
    at another slot count, so results differ from those of an earlier compile."""


class ScaleOverflowError(FhecError):
    """A CKKS value's scale has grown to the size of its remaining modulus: it could not
    be decrypted (typically products that were never rescaled)."""


class ValueOverflowError(ScaleOverflowError):
    """A CKKS value (its bound on |slot|, times its scale) does not fit the modulus left
    at its level: its decryption would wrap around to garbage. Raised at the DSL line
    that computes the value (from the declared input bounds and the constants), and at
    encryption / encoding time against the actual values. A kind of `ScaleOverflowError`:
    both mean "value × scale reaches Q_level / 2"; this one names the value's bound."""


class PrecisionError(FhecError):
    """An explicitly requested method (e.g. ``keyswitch="bv"``) would leave a CKKS value
    with less than one bit of estimated precision: its result would be noise."""


class PrecisionWarning(UserWarning):
    """A CKKS value's estimated precision dropped below the program's `min_precision_bits`,
    or a BGV output's estimated noise budget is below 1 bit."""


class CompiledMismatchError(FhecError):
    """A compiled (limb-level or stream) execution produced a ciphertext that differs,
    in some limb, from the eager evaluator's on the same inputs and keys: a compiler
    or target-model bug, reported with the first differing limb and its writer."""


# -- input validation (issue 9: only FhecError reaches the user) ----------------------------


class InvalidArgumentError(FhecError):
    """An argument of a public function has the wrong type or is out of range (a level
    beyond the parameter set, a non-integer rotation step, an object that is not a
    key set or a ciphertext...)."""


class ProgramFormatError(ProgramError):
    """A program's JSON text (`Program.from_json`) is not a valid fhec program."""


class ProgramFileError(ProgramError):
    """A program file given to the CLI cannot be loaded: a syntax, name or import
    error, or an exception raised while it runs (the message names FILE:LINE)."""


class MachineCodeError(FhecError):
    """Machine code for an ISA target (`fhec.isa`) is malformed: an illegal instruction
    word, an operand out of range, an assembly line that does not parse (the message
    names the line), or a program the machine cannot hold."""


class ReportFormatError(FhecError):
    """A saved report (``report.json``) is unreadable or inconsistent."""


class OutputDirectoryError(FhecError):
    """An output directory cannot be written, or holds files fhec did not write."""


class MissingExtraError(FhecError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra that installs it (``pip install 'fhec[test]'``). Also an `ImportError`, so that
    code guarding optional imports with ``except ImportError`` keeps working."""


class PersistenceFormatError(FhecError):
    """A file given to `fhec.load` is missing, not written by `fhec.save`, of another
    format version, or corrupt; or `fhec.save` cannot write its file."""


class SecretKeyError(FhecError):
    """A secret key would be written without being asked for (`fhec.save` of a `KeySet`
    holding its secret needs ``include_secret=True``), or is needed (decryption) from a
    public-only key set."""


class PlotDataError(FhecError):
    """A plot needs data the report does not carry (a report read back from JSON has no
    streams); the message says which plots still work and how to get the others."""


class SuiteError(FhecError):
    """A benchmark suite (`fhec.suites`) is unknown, or an example's ``suite_rows()`` gives a
    malformed row (the message names the module and the key)."""
