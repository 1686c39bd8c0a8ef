"""Lower bounds on the cycles of a limb program on a target.

No schedule can be shorter than any of them, so `cycles / bound` measures a schedule's
distance from the limit (the report's ``bound_ratio``):

* **compute**: the busiest unit kind's total occupancy divided by its number of units;
* **bandwidth**: compulsory off-chip bytes divided by off-chip bytes per cycle;
* **dependency**: the critical path. Loaded values cannot be read before the off-chip
  latency has passed; every instruction issues after its sources are ready and makes
  its result ready ``latency`` cycles later; every output is then stored. Chaining
  overlap and unit contention are ignored, so this is a true lower bound.

Timing facts come from the target (`fhec.backends.streams.op_timing`), never from a
scheduler.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.analysis.traffic import compulsory_traffic
from fhec.backends.streams import StreamOp, op_timing
from fhec.backends.target import Target, UnitKind
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import IS_LOADED, RVecClass


@dataclasses.dataclass(frozen=True)
class Bounds:
    """Lower bounds on the cycles of a program on a target (see the module doc).

    ``per_kind`` gives the compute bound of every unit kind; ``busiest_kind`` the one
    that sets ``compute_cycles``.
    """

    compute_cycles: float
    busiest_kind: str
    per_kind: dict[str, float]
    bandwidth_cycles: float
    dependency_cycles: float = 0.0

    @property
    def cycles(self) -> float:
        """The largest bound."""
        return max(self.compute_cycles, self.bandwidth_cycles, self.dependency_cycles)

    @property
    def binding(self) -> str:
        """Which bound is the largest: "compute", "bandwidth" or "dependency"."""
        named = {"compute": self.compute_cycles, "bandwidth": self.bandwidth_cycles, "dependency": self.dependency_cycles}
        return max(named, key=named.__getitem__)


def compute_bound(program: LimbProgram, target: Target) -> tuple[float, str, dict[str, float]]:
    """(cycles, busiest unit kind, per-kind cycles): occupancy over unit count per kind."""
    counts = np.bincount(program.op, minlength=16)
    per_kind = {k.value: 0.0 for k in UnitKind}
    for op in np.flatnonzero(counts).tolist():
        unit = target.unit_for(op)
        per_kind[unit.kind.value] += counts[op] * target.occupancy_cycles(op, program.N)
    per_kind = {k: v / target.total_units(UnitKind(k)) for k, v in per_kind.items()}
    busiest = max(per_kind, key=per_kind.__getitem__)
    return per_kind[busiest], busiest, per_kind


def bandwidth_bound(program: LimbProgram, target: Target) -> float:
    """Compulsory off-chip bytes over off-chip bytes per cycle."""
    return compulsory_traffic(program).total / target.offchip_bytes_per_cycle


def dependency_bound(program: LimbProgram, target: Target) -> float:
    """The critical path in cycles (see the module doc)."""
    if len(program) == 0:
        return 0.0
    from fhec.analysis._critical_path import critical_path

    tm = op_timing(target, program.N)
    ready = np.where(IS_LOADED[program.rvec_class], float(tm.latency[StreamOp.LOAD]), 0.0)
    latency = tm.latency[program.op].astype(np.float64)
    ready = critical_path(program.src0.astype(np.int64), program.src1.astype(np.int64),
                          program.dst.astype(np.int64), latency, ready)
    outputs = program.rvec_class == RVecClass.OUTPUT
    if not outputs.any():
        return float(ready.max())
    return float(ready[outputs].max() + tm.latency[StreamOp.STORE])


def lower_bounds(program: LimbProgram, target: Target) -> Bounds:
    """Compute, bandwidth and dependency bounds of `program` on `target`."""
    compute, busiest, per_kind = compute_bound(program, target)
    return Bounds(compute, busiest, per_kind, bandwidth_bound(program, target), dependency_bound(program, target))
