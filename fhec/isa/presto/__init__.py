"""The Presto target: RISC-V custom-0/2/3 FHE instructions (docs/isa.md, "Presto").

`BACKEND` implements `fhec.isa.backend.IsaBackend`; the modules, in pipeline order:
`select` (limb ops -> instructions), `materialize` (scalar operands -> x registers),
`encoding` (32-bit words) and `asm` (text), `sim` (functional and timing simulator),
`machine` (the machine numbers and the PE layout).
"""

from fhec.isa.presto.backend import BACKEND

__all__ = ["BACKEND"]
