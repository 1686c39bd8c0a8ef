"""Lower bounds on the cycles of a limb program on a target.

No schedule can be shorter than any of them, so `cycles / bound` measures a schedule's
distance from the limit (the report's ``bound_ratio``):

* **compute**: the busiest unit kind's total occupancy divided by its number of units;
* **bandwidth**: compulsory off-chip bytes divided by off-chip bytes per cycle;
* **dependency**: the critical path. Loaded values cannot be read before the off-chip
  latency has passed; every instruction issues after its sources are ready and makes
  its result ready ``latency`` cycles later; every output is then stored. Chaining
  overlap and unit contention are ignored, so this is a true lower bound.
* **load-aware**: loads and the work that waits for them. The memory channel starts
  at most ``c`` transfers per ``xfer`` cycles, so whatever the order, the k-th loaded
  value to arrive (counting first loads only) starts its load no earlier than
  ``floor((k-1) / c) * xfer``. Once a value v is readable, everything that depends on
  it must still run: at least its *tail* q(v), the largest of its critical path to the
  end, the occupancy of its dependent instructions on each unit kind divided by that
  kind's units, and its dependent output stores on the channel. So a schedule takes at
  least ``start(v) + load latency + q(v)`` for every v; the order of loads that
  minimises the largest of these sorts them by decreasing tail (Jackson's rule; with
  equal transfer times, pairing the earliest start slots with the longest tails is
  optimal by exchange), which gives ``max_k floor((k-1) / c) * xfer + latency + q_(k)``
  with tails sorted in decreasing order. A serial program that needs most of its data
  before its first key switch finishes (a chain of products and relinearizations)
  cannot overlap that load with the levels after it; this bound says so, where the
  compute and bandwidth bounds each see only half of the time.
* **network** (targets that model the on-chip data path, `Target.models_onchip`): a
  functional unit reads only registers and network streams, and a value enters the
  chip's registers only by a fill from its scratchpad slot (or by a copy of a register
  that got it so), so every loaded value some instruction reads crosses a
  scratchpad->cluster port and a bank's read port at least once; every output reaches
  its slot, for its store, only by a write-back over a cluster->scratchpad port and a
  bank's write port. Each crossing holds a port ceil(RVec bytes / port bytes) cycles and
  there are as many ports of each kind as clusters (banks), so the bound is those
  crossings' port time over the number of ports.
* **generator** (targets that generate key halves on chip, ``[keys]``): every generated
  key half the program reads is written by the one key generator at least once, at its
  rate (`Target.generator_cycles`), so their generation times add up.

Timing facts come from the target (`fhec.backends.streams.op_timing`), never from a
scheduler.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from fhec.analysis.traffic import compulsory_traffic
from fhec.backends.streams import StreamOp, instruction_occupancy, op_timing
from fhec.backends.target import Target, UnitKind
from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import IS_LOADED, LimbOp, RVecClass


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
    load_aware_cycles: float = 0.0
    network_cycles: float = 0.0
    generator_cycles: float = 0.0

    @property
    def cycles(self) -> float:
        """The largest bound."""
        return max(self.named.values())

    @property
    def named(self) -> dict[str, float]:
        """Every bound by name: "compute", "bandwidth", "dependency", "load-aware", "network",
        "generator"."""
        return {"compute": self.compute_cycles, "bandwidth": self.bandwidth_cycles,
                "dependency": self.dependency_cycles, "load-aware": self.load_aware_cycles,
                "network": self.network_cycles, "generator": self.generator_cycles}

    @property
    def binding(self) -> str:
        """Which bound is the largest (the first of equals, in the order of `named`)."""
        named = self.named
        return max(named, key=named.__getitem__)


def _one_way_bound(program: LimbProgram, target: Target, unit) -> float:
    """Cycles the INTTs alone need on the units that may run them, and likewise the NTTs
    that must run forward, for an NTT kind whose units each run one direction."""
    op = np.asarray(program.op)
    inverse = np.count_nonzero(op == LimbOp.INTT) * target.occupancy_cycles(LimbOp.INTT, program.N)
    forward = np.count_nonzero((op == LimbOp.NTT) & ~program.generation_ntts()) * \
        target.occupancy_cycles(LimbOp.NTT, program.N)
    units = {d: unit.directions.count(d) * target.cluster.count for d in ("both", "forward", "inverse")}
    return max(inverse / (units["both"] + units["inverse"]), forward / (units["both"] + units["forward"]))


def compute_bound(program: LimbProgram, target: Target) -> tuple[float, str, dict[str, float]]:
    """(cycles, busiest unit kind, per-kind cycles): occupancy (`instruction_occupancy`) over unit count per kind (for
    an NTT kind whose units each run one direction, also the INTTs over the units that run
    them and the forward NTTs over theirs)."""
    if target.times_conversions:
        cycles = np.bincount(program.op, weights=instruction_occupancy(target, program), minlength=16)
    else:  # every op at its kind's occupancy: counts suffice (no array of 8 bytes an instruction)
        cycles = np.bincount(program.op, minlength=16).astype(np.float64)
        for op in np.flatnonzero(cycles).tolist():
            cycles[op] *= target.occupancy_cycles(op, program.N)
    per_kind = {k.value: 0.0 for k in UnitKind if target.total_units(k)}  # the kinds this target has
    for op in np.flatnonzero(cycles).tolist():
        per_kind[target.unit_for(op).kind.value] += float(cycles[op])
    per_kind = {k: v / target.total_units(UnitKind(k)) for k, v in per_kind.items()}
    for unit in target.cluster.units:
        if unit.directions is not None and len(program):
            per_kind[unit.kind.value] = max(per_kind[unit.kind.value], _one_way_bound(program, target, unit))
    busiest = max(per_kind, key=per_kind.__getitem__)
    return per_kind[busiest], busiest, per_kind


def bandwidth_bound(program: LimbProgram, target: Target) -> float:
    """Compulsory off-chip bytes over off-chip bytes per cycle (key halves the target
    generates on chip are no off-chip bytes)."""
    return (compulsory_traffic(program, target.generated_rvecs(program), target.rvec_bytes(program.N)).total
            / target.offchip_bytes_per_cycle)


def dependency_bound(program: LimbProgram, target: Target) -> float:
    """The critical path in cycles (see the module doc)."""
    if len(program) == 0:
        return 0.0
    from fhec.analysis._critical_path import critical_path

    tm = op_timing(target, program.N)
    # a generated key half is readable after the generator's latency, any other loaded rvec after the memory's
    first = np.where(target.generated_rvecs(program), float(tm.latency[StreamOp.GEN]), float(tm.latency[StreamOp.LOAD]))
    ready = np.where(IS_LOADED[program.rvec_class], first, 0.0)
    latency = tm.latency[program.op].astype(np.float64)
    ready = critical_path(program.src0.astype(np.int64), program.src1.astype(np.int64),
                          program.dst.astype(np.int64), latency, ready)
    outputs = program.rvec_class == RVecClass.OUTPUT
    if not outputs.any():
        return float(ready.max())
    return float(ready[outputs].max() + tm.latency[StreamOp.STORE])


DESCENDANT_SWEEP_STEPS = 2**28
"""Instruction visits after which `load_tails` stops counting dependent work (about a
second). Sources not reached keep their critical-path tail alone, which is smaller, so the
load-aware bound stays a lower bound on programs too large to count in full."""


def transfers_in_flight(target: Target, N: int) -> int:
    """How many off-chip transfers of one RVec the memory may carry at once: its bytes
    per cycle over one transfer's rate (the timing contract of docs/isa.md)."""
    xfer = op_timing(target, N).xfer
    rate = target.rvec_bytes(N) / xfer
    return max(1, math.floor(target.offchip_bytes_per_cycle / rate + 1e-9))


def load_tails(program: LimbProgram, target: Target) -> tuple[np.ndarray, np.ndarray]:
    """(loaded rvecs some instruction reads, their tails in cycles): for each, the least
    time any schedule still needs once it is readable (see the module doc)."""
    from fhec.analysis._load_tails import descendant_counts, path_tails

    N = program.N
    tm = op_timing(target, N)
    used = np.zeros(program.num_rvecs, dtype=bool)
    used[program.src0[program.src0 >= 0]] = True
    used[program.src1[program.src1 >= 0]] = True
    src0 = program.src0.astype(np.int64)
    src1 = program.src1.astype(np.int64)
    first_reader = np.full(program.num_rvecs, len(program), dtype=np.int64)
    rows = np.arange(len(program), dtype=np.int64)
    np.minimum.at(first_reader, src0, rows)
    np.minimum.at(first_reader, src1[src1 >= 0], rows[src1 >= 0])
    # generated key halves do not use the memory channel (their paths are in the dependency bound)
    fetched = IS_LOADED[program.rvec_class] & ~target.generated_rvecs(program)
    loaded = np.flatnonzero(used & fetched).astype(np.int64)
    sources = loaded[np.argsort(first_reader[loaded], kind="stable")]
    dst = program.dst.astype(np.int64)
    op = program.op.astype(np.int64)
    is_output = program.rvec_class == RVecClass.OUTPUT
    tail = np.where(is_output, float(tm.latency[StreamOp.STORE]), 0.0)
    tail = path_tails(src0, src1, dst, tm.latency[op].astype(np.float64), tm.write_cycles[op].astype(np.float64), tail)

    # a class per op code the program uses, and per whether the result is an OUTPUT
    ops = np.unique(op)
    cls_of = np.zeros(len(tm.unit_kind), dtype=np.int64)
    cls_of[ops] = np.arange(len(ops))
    out = is_output[dst]
    counts, _ = descendant_counts(src0, src1, dst, cls_of[op] + len(ops) * out, 2 * len(ops), sources,
                                  first_reader[sources], program.num_rvecs, DESCENDANT_SWEEP_STEPS)
    per_op = counts[:, : len(ops)] + counts[:, len(ops):]
    outputs = counts[:, len(ops):].sum(axis=1)
    kinds = sorted({tm.unit_kind[o] for o in ops.tolist()})
    work = np.zeros((len(sources), len(kinds)))
    for c, o in enumerate(ops.tolist()):
        work[:, kinds.index(tm.unit_kind[o])] += per_op[:, c] * float(tm.occupancy[o])
    units = np.array([target.total_units(UnitKind(k)) for k in kinds], dtype=np.float64)
    busy = (work / units).max(axis=1)
    stores = outputs * float(tm.occupancy[StreamOp.STORE]) / transfers_in_flight(target, N)
    return sources, np.maximum(tail[sources], np.maximum(busy, stores))


def load_aware_bound(program: LimbProgram, target: Target) -> float:
    """The load-aware bound in cycles (see the module doc): the loads sorted by
    decreasing tail, each starting as early as the memory channel allows."""
    if len(program) == 0:
        return 0.0
    _, tails = load_tails(program, target)
    if not len(tails):
        return 0.0
    tm = op_timing(target, program.N)
    q = np.sort(tails)[::-1]
    start = (np.arange(len(q)) // transfers_in_flight(target, program.N)) * float(tm.xfer)
    return float((start + float(tm.latency[StreamOp.LOAD]) + q).max())


def network_bound(program: LimbProgram, target: Target) -> float:
    """Port time of the fills and write-backs no schedule avoids, over the ports (see the
    module doc); 0 on a target that does not model the on-chip data path."""
    if not target.models_onchip or len(program) == 0:
        return 0.0
    N = program.N
    read = np.zeros(program.num_rvecs, dtype=bool)
    read[program.src0[program.src0 >= 0]] = True
    read[program.src1[program.src1 >= 0]] = True
    fills = int(np.count_nonzero(read & IS_LOADED[program.rvec_class]))
    computed = np.zeros(program.num_rvecs, dtype=bool)
    computed[program.dst] = True
    writebacks = int(np.count_nonzero(computed & (program.rvec_class == RVecClass.OUTPUT)))
    ports = min(target.cluster.count, int(target.scratchpad.banks))
    return max(fills, writebacks) * float(target.network_cycles(N)) / ports


def generator_bound(program: LimbProgram, target: Target) -> float:
    """The key generator's time for every generated key half the program reads (see the
    module doc); 0 on a target that loads its keys whole."""
    generated = target.generated_rvecs(program)
    if not generated.any():
        return 0.0
    read = np.zeros(program.num_rvecs, dtype=bool)
    read[program.src0[program.src0 >= 0]] = True
    read[program.src1[program.src1 >= 0]] = True
    return float(np.count_nonzero(read & generated)) * float(target.generator_cycles(program.N))


def lower_bounds(program: LimbProgram, target: Target) -> Bounds:
    """Compute, bandwidth, dependency, load-aware, network and generator bounds of
    `program` on `target`."""
    compute, busiest, per_kind = compute_bound(program, target)
    return Bounds(compute, busiest, per_kind, bandwidth_bound(program, target), dependency_bound(program, target),
                  load_aware_bound(program, target), network_bound(program, target), generator_bound(program, target))
