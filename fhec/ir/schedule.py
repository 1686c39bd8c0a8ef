"""The data-movement schedule: the limb program's instructions in issue order, with the
loads and stores that move RVecs between off-chip memory and the scratchpad.

This is the IR between the two schedulers (F1 §4.3 → §4.4): `fhec.passes.offchip`
produces a `DataSchedule`; `fhec.passes.cycle` places each of its events at a cycle;
`fhec.analysis.traffic` classifies its traffic; `fhec.sim.timing` reports it.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import LimbOp, RVecClass


class Event(enum.IntEnum):
    """Kinds of `DataSchedule` events."""

    COMPUTE = 0  # arg = instruction index
    LOAD = 1  # arg = rvec, memory -> slot
    STORE = 2  # arg = rvec, slot -> memory


@dataclasses.dataclass(frozen=True)
class Traffic:
    """Off-chip traffic in bytes, classified as in F1 Fig. 9a.

    Compulsory: the first load of every INPUT, KSH and CONST rvec that some
    instruction reads, and the one store of every OUTPUT rvec. Non-compulsory:
    re-loads of evicted loaded rvecs, re-loads of stored outputs, and every load
    (fill) and store (spill) of an intermediate.

    ``ksh_generated`` counts the key halves a target generates on chip (``[keys]``,
    `Target.generated_rvecs`): moved into the scratchpad like loads, but no off-chip
    traffic, so in neither total.
    """

    ksh_compulsory: int = 0
    ksh_noncompulsory: int = 0
    input_compulsory: int = 0
    input_noncompulsory: int = 0
    const_compulsory: int = 0
    const_noncompulsory: int = 0
    output_compulsory: int = 0
    output_noncompulsory: int = 0
    intermediate_loads: int = 0
    intermediate_stores: int = 0
    ksh_generated: int = 0

    @property
    def compulsory(self) -> int:
        return self.ksh_compulsory + self.input_compulsory + self.const_compulsory + self.output_compulsory

    @property
    def noncompulsory(self) -> int:
        return (
            self.ksh_noncompulsory + self.input_noncompulsory + self.const_noncompulsory
            + self.output_noncompulsory + self.intermediate_loads + self.intermediate_stores
        )

    @property
    def total(self) -> int:
        return self.compulsory + self.noncompulsory

    def as_dict(self) -> dict[str, int]:
        """Every field plus ``compulsory``, ``noncompulsory`` and ``total``."""
        d = dataclasses.asdict(self)
        d.update(compulsory=self.compulsory, noncompulsory=self.noncompulsory, total=self.total)
        return d


@dataclasses.dataclass(frozen=True, eq=False)
class DataSchedule:
    """The ordered instructions, loads and stores of a program, with scratchpad slots.

    Event columns (struct of arrays, in schedule order):

    ``kind`` (uint8)   an `Event`
    ``arg`` (int32)    COMPUTE: instruction index into `program`; LOAD/STORE: rvec id
    ``slot`` (int32)   COMPUTE: slot of the result; LOAD: slot written; STORE: slot read
    ``src0_slot``, ``src1_slot`` (int32)  COMPUTE: slots of the sources (-1 = none);
                       -1 for LOAD/STORE

    A slot is an RVec-sized region of the scratchpad, ``0 .. slots-1``. A slot is
    reused only after every event reading its previous value has appeared.
    ``traffic`` classifies every LOAD and STORE; ``peak_slots`` is the most slots in
    use at once.
    """

    program: LimbProgram
    policy: str
    slots: int
    kind: np.ndarray
    arg: np.ndarray
    slot: np.ndarray
    src0_slot: np.ndarray
    src1_slot: np.ndarray
    traffic: Traffic
    peak_slots: int

    def __post_init__(self) -> None:
        for name in ("kind", "arg", "slot", "src0_slot", "src1_slot"):
            arr = np.asarray(getattr(self, name), dtype=np.uint8 if name == "kind" else np.int32).view()
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    def __len__(self) -> int:
        return len(self.kind)

    def counts(self) -> dict[str, int]:
        """Number of events of each `Event` kind."""
        c = np.bincount(self.kind, minlength=len(Event))
        return {e.name: int(c[e]) for e in Event}

    def text(self, limit: int | None = 50) -> str:
        """A readable listing of the first `limit` events (all if None)."""
        p = self.program
        shown = len(self) if limit is None else min(limit, len(self))
        lines = [f"DataSchedule ({self.policy}, {self.slots} slots, peak {self.peak_slots}): {self.counts()}"]
        for e in range(shown):
            k, a, s = Event(int(self.kind[e])), int(self.arg[e]), int(self.slot[e])
            if k == Event.COMPUTE:
                srcs = ", ".join(f"s{int(x)}" for x in (self.src0_slot[e], self.src1_slot[e]) if x >= 0)
                lines.append(f"  {e:>6}  s{s} = {LimbOp(int(p.op[a])).name} {srcs}   ; instruction {a}")
            elif k == Event.LOAD:
                lines.append(f"  {e:>6}  s{s} <- LOAD {p.rvec_label(a)}")
            else:
                lines.append(f"  {e:>6}  STORE {p.rvec_label(a)} <- s{s}")
        if shown < len(self):
            lines.append(f"  ... {len(self) - shown} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"DataSchedule({self.policy}, {c['COMPUTE']} computes, {c['LOAD']} loads, {c['STORE']} stores, "
            f"{self.traffic.total} bytes off-chip, peak {self.peak_slots}/{self.slots} slots)"
        )




def verify_data_schedule(ds: DataSchedule) -> DataSchedule:
    """Check the structural contract of a data schedule: every instruction of its program
    is computed exactly once, every OUTPUT rvec is stored at least once after it is
    computed, and every slot lies in ``0 .. slots-1``. Raises `InternalError` (a schedule
    is fhec's own output). Returns `ds`."""
    p = ds.program
    comp = ds.kind == Event.COMPUTE
    issued = np.bincount(ds.arg[comp], minlength=len(p))
    if len(p) and (issued.min() != 1 or issued.max() != 1):
        bad = int(np.flatnonzero(issued != 1)[0])
        raise InternalError(f"data schedule: instruction {bad} is computed {int(issued[bad])} times, not once")
    used = ds.slot[ds.slot >= 0]
    if len(used) and (used.max() >= ds.slots):
        raise InternalError(f"data schedule: slot {int(used.max())} beyond the scratchpad's {ds.slots}")
    written_at = np.full(p.num_rvecs, -1, dtype=np.int64)
    written_at[p.dst[ds.arg[comp]]] = np.flatnonzero(comp)
    stores = np.flatnonzero(ds.kind == Event.STORE)
    outputs = np.flatnonzero(p.rvec_class == RVecClass.OUTPUT)
    stored = np.zeros(p.num_rvecs, dtype=bool)
    stored[ds.arg[stores][stores > written_at[ds.arg[stores]]]] = True
    if len(outputs) and not stored[outputs].all():
        missing = int(outputs[~stored[outputs]][0])
        raise InternalError(f"data schedule: output {p.rvec_label(missing)} is never stored after it is computed")
    return ds
