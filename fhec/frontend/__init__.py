"""The DSL: `Program`, the `Cipher` / `Plain` handles and the `@program` decorator.

Tracing turns Python code into the HE-level IR (`fhec.ir.he`); see `docs/dsl.md`.
"""

from fhec.frontend.auto import AutoParams
from fhec.frontend.program import Program, as_he_program, program
from fhec.frontend.values import Cipher, Plain

__all__ = ["Program", "Cipher", "Plain", "program", "as_he_program", "AutoParams"]
