"""The ISA-backend interface: what a programmable target (RPU/B512, Presto) implements.

A backend is one object satisfying `IsaBackend`, exposed as ``BACKEND`` by the module
that `BACKENDS` names for its ISA key (the ``isa = "..."`` field of the machine's TOML,
`fhec.backends.machine.IsaMachine`). The pipeline (`fhec.pipeline.ISA_TAIL`) calls its
four passes after ``lower``; `fhec.compile` returns an `fhec.compiler.IsaCompiled`
whose ``run`` executes the *encoded words* in the backend's functional simulator.

The four passes (`fhec.isa.code` documents their results):

1. ``select(lowered, machine) -> Selected``: limb ops -> machine instructions over
   virtual registers, the memory layout and the ROM (twiddles, constants).
2. ``allocate(selected, machine) -> Allocated``: physical registers, spills by Belady's
   rule (use `fhec.isa.regalloc.allocate`, generic over register files).
3. ``schedule(allocated, machine) -> Timed``: issue order and cycles under the
   machine's issue rules (the ISA's timing model).
4. ``encode(timed, machine) -> Encoded``: machine words and assembly text.

and the tools around them: ``decode(words) -> tuple[Instr, ...]`` (inverse of the
encoding), ``assemble(text) -> words`` and ``disassemble(words) -> text`` (inverse of
each other), ``simulate(encoded, machine, loaded) -> {output rvec id: words}`` (executes
``encoded.words`` - decoding them itself, never reading `Instr` objects - on the
memory image built from `MemoryLayout` and the loaded rvecs' words), and
``classify(op) -> str`` (the instruction class a report counts it under).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Protocol

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.errors import TargetError
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Allocated, Encoded, Instr, Selected, Timed

__all__ = ["IsaBackend", "BACKENDS", "backend_for"]


class IsaBackend(Protocol):
    """What every ISA backend implements (see the module docstring)."""

    name: str

    def select(self, lowered: LoweredProgram, machine: IsaMachine) -> Selected: ...

    def allocate(self, selected: Selected, machine: IsaMachine) -> Allocated: ...

    def schedule(self, allocated: Allocated, machine: IsaMachine) -> Timed: ...

    def encode(self, timed: Timed, machine: IsaMachine) -> Encoded: ...

    def decode(self, words: np.ndarray) -> tuple[Instr, ...]: ...

    def assemble(self, text: str) -> np.ndarray: ...

    def disassemble(self, words: np.ndarray) -> str: ...

    def simulate(self, encoded: Encoded, machine: IsaMachine, loaded: Mapping[int, np.ndarray],
                 progress: Callable[[int], None] | None = None) -> dict[int, np.ndarray]:
        """Execute `encoded`'s words on `loaded`; `progress`, when given, is called with the
        number of words executed every `fhec.isa.code.PROGRESS_EVERY` words and at the end."""
        ...

    def classify(self, op: int) -> str: ...


BACKENDS: dict[str, str] = {
    "rpu": "fhec.isa.rpu",
    "presto": "fhec.isa.presto",
}
"""ISA key (the machine TOML's ``isa`` field) -> module whose ``BACKEND`` implements it."""


def backend_for(machine: IsaMachine) -> IsaBackend:
    """The backend of `machine`'s ISA. Raises `TargetError` for an unknown ISA key."""
    module = BACKENDS.get(machine.isa)
    if module is None:
        raise TargetError(
            f"target {machine.name!r}: isa = {machine.isa!r} has no backend; known ISAs: {', '.join(sorted(BACKENDS))}"
        )
    return importlib.import_module(module).BACKEND
