"""fhec: a compiler for fully homomorphic encryption (CKKS, BGV) targeting accelerator ISAs.

The user API is re-exported here; everything else is internal and may change.
"""

from fhec.errors import (
    FhecError,
    InternalError,
    ParameterError,
    InvalidRingDegreeError,
    InvalidModulusError,
    WordSizeError,
    InsecureParametersError,
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
from fhec.schemes import (
    BGVParams,
    CKKSParams,
    Ciphertext,
    Evaluator,
    KeySet,
    Plaintext,
    decrypt,
    encode,
    encrypt,
    keygen,
    measure_noise_budget,
    measure_precision,
)

# -- the DSL, the HE-level IR views and the plaintext / eager execution paths (issue 3) --
from fhec.errors import (
    ProgramError,
    UnsetOutputError,
    PlaintextOperandError,
    MixedProgramsError,
    MissingInputError,
    LevelMismatchError,
    UnusedInputWarning,
)
from fhec.frontend import Cipher, Plain, Program, program
from fhec.reference import reference
from fhec.evaluate import evaluate
from fhec.errors import ScaleOverflowError
from fhec.run import run
from fhec.compiler import lower, stats
from fhec.compiler import Compiled, compile
