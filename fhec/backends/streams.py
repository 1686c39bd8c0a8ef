"""Per-unit instruction streams: the output of cycle-level scheduling, and the ISA contract.

A `Streams` holds one linear instruction stream per unit of a target (F1 §3,
"Distributed control": every functional unit and memory controller has its own
stream of operations, each with the number of cycles to wait before it). It is
what `fhec.passes.cycle` produces, what `fhec.backends.stream_files` encodes as text and
binary files, what `fhec.sim.check` replays for hazards and what
`fhec.sim.streams` executes on real data. The full specification, with examples,
is ``docs/isa.md``; this docstring is its summary.

Units
-----
`unit_layout(target)` lists the units in a fixed order: for each cluster, its
functional units (kind order of the target file, then index), named
``c<cluster>.<kind><index>`` (``c3.mul1``); then the memory controller ``mem0``,
which moves RVecs between off-chip memory and the scratchpad at the target's
off-chip bandwidth; on a target that generates key halves on chip (``[keys]``), then
the key generator ``gen0``, whose GEN entries write a key half into a slot like a LOAD
(``src0`` is the key half's memory vector, which stands for its seed; no off-chip bytes).
Units of an NTT kind may each run one direction (the kind's ``directions``:
`unit_directions`): an INTT then issues only on a "both" or "inverse" unit, an NTT on a
"both" or "forward" one, except an NTT that generates a plaintext's limbs (OF-Limb), which
may issue on any (`needed_directions`: an instruction needing direction d runs on a unit of
direction e when d or e is "both" or d = e).

Locations
---------
An operand is an integer location. On-chip it is a *scratchpad slot*: the
scratchpad holds ``capacity_bytes // (N * word_bytes)`` RVecs, numbered
``0 .. slots-1``. Off-chip it is a *memory vector*: the home of rvec ``r`` of the
program is memory vector ``r``. Functional units read and write slots; a LOAD
writes ``dst`` (a slot) from ``src0`` (a memory vector); a STORE writes ``dst``
(a memory vector) from ``src0`` (a slot). -1 means "no operand".

Entries (struct of arrays, sorted by unit, then cycle)
------------------------------------------------------
``unit`` (int16)   index into ``units``
``cycle`` (int64)  issue cycle; the wait before an entry is its cycle minus the
                   previous entry's cycle in the same stream (``waits()``)
``op`` (uint8)     a `StreamOp`: the nine `LimbOp` codes, LOAD, STORE or GEN
``dst``, ``src0``, ``src1`` (int32)  locations, -1 = none
``mod`` (int16)    modulus index of a functional-unit op, -1 for memory ops
``imm`` (int32)    AUT: Galois element; MUL_CONST, BCONV, ADD_CONST: constant index; else -1
``tag`` (int32)    provenance, not needed to execute: the program instruction an
                   FU entry implements, the rvec a LOAD/STORE moves; -1 = unknown

Timing contract (`OpTiming`)
----------------------------
Every unit is fully pipelined and streams an RVec in chunks (F1 §3). For an entry
issued at cycle t:

- its unit accepts the next entry at ``t + occupancy`` (functional units:
  ``Target.occupancy_cycles``; the memory controller: ``xfer`` =
  ceil(RVec bytes / off-chip bytes per cycle));
- it reads its source locations during ``[t, t + read_cycles)``;
- the first chunk of its result lands at ``t + latency`` and the last one
  ``write_cycles`` later (FU: ``Target.latency_cycles`` and occupancy; LOAD:
  ``Target.offchip_latency_cycles`` and xfer; a STORE's memory vector is written
  whole at ``t + xfer``; GEN: the generator's latency and ceil(N / its words per cycle)).

A reader E of a value written by W may issue at ``t_E >= t_W + latency(W) +
max(0, write_cycles(W) - read_cycles(E))`` (chunk k is then always written before
it is read: chaining). A writer W' over a location whose value a reader R still
reads must land after R has finished: ``t_W' + latency(W') >= t_R +
read_cycles(R)``. A memory vector is read whole by a LOAD at its issue cycle.
"""

from __future__ import annotations

import dataclasses
import enum
import math

import numpy as np

from fhec.backends.onchip import OnChip
from fhec.backends.target import DIRECTIONS, Target
from fhec.errors import InternalError
from fhec.ir.limb_ops import ARITY, IMM_KIND, ImmKind, LimbOp

__all__ = [
    "StreamOp",
    "MEMORY_KIND",
    "Unit",
    "unit_layout",
    "OpTiming",
    "op_timing",
    "instruction_occupancy",
    "scratchpad_slots",
    "Streams",
    "NUM_STREAM_OPS",
]


class StreamOp(enum.IntEnum):
    """An operation in a stream: the `LimbOp` codes, plus the memory controller's two."""

    NTT = LimbOp.NTT
    INTT = LimbOp.INTT
    MUL = LimbOp.MUL
    MUL_CONST = LimbOp.MUL_CONST
    ADD = LimbOp.ADD
    SUB = LimbOp.SUB
    NEG = LimbOp.NEG
    AUT = LimbOp.AUT
    BCONV = LimbOp.BCONV
    ADD_CONST = LimbOp.ADD_CONST
    LOAD = 16  # memory vector src0 -> slot dst
    STORE = 17  # slot src0 -> memory vector dst
    GEN = 18  # generated key half src0 (its seed) -> slot dst, on the key generator


NUM_STREAM_OPS = 19
"""Size of tables indexed by `StreamOp` (codes 10..15 are unused)."""

MEMORY_KIND = "mem"
"""`Unit.kind` of the memory controller."""
GENERATOR_KIND = "gen"

NOT_FUNCTIONAL_UNIT = (StreamOp.LOAD, StreamOp.STORE, StreamOp.GEN)
"""Stream ops that no functional unit runs (the memory controller's and the key generator's)."""


def on_functional_units(op: np.ndarray) -> np.ndarray:
    """Mask of the stream entries with op codes `op` that a functional unit runs."""
    return ~np.isin(op, NOT_FUNCTIONAL_UNIT)
"""`Unit.kind` of the on-chip key generator (targets with ``[keys] uniform_half = "generated"``)."""

STREAM_ARITY = np.zeros(NUM_STREAM_OPS, dtype=np.int8)
"""Number of source locations per `StreamOp` (memory ops read one location)."""
STREAM_ARITY[: len(LimbOp)] = ARITY
STREAM_ARITY[StreamOp.LOAD] = 1
STREAM_ARITY[StreamOp.STORE] = 1
STREAM_ARITY[StreamOp.GEN] = 1
STREAM_ARITY.flags.writeable = False

HAS_IMM = np.zeros(NUM_STREAM_OPS, dtype=bool)
"""True for ops whose ``imm`` column is meaningful."""
HAS_IMM[: len(LimbOp)] = IMM_KIND != ImmKind.NONE
HAS_IMM.flags.writeable = False


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unit that owns an instruction stream."""

    name: str  # "c3.mul1" or "mem0"
    kind: str  # a `UnitKind` value ("ntt", "aut", "mul", "add") or MEMORY_KIND
    cluster: int  # -1 for the memory controller
    index: int  # index among the units of this kind in the cluster


def unit_layout(target: Target) -> tuple[Unit, ...]:
    """Every unit of `target` in stream order: clusters' FUs, then ``mem0`` (and ``gen0``,
    the key generator, on a target that generates key halves)."""
    units = [
        Unit(f"c{c}.{u.kind.value}{i}", u.kind.value, c, i)
        for c in range(target.cluster.count)
        for u in target.cluster.units
        for i in range(u.count)
    ]
    units.append(Unit("mem0", MEMORY_KIND, -1, 0))
    if target.keys.generated:
        units.append(Unit("gen0", GENERATOR_KIND, -1, 0))
    return tuple(units)


def unit_directions(target: Target) -> np.ndarray:
    """int8 per unit of `unit_layout(target)`: its position in `DIRECTIONS` ("both" = 0
    for every unit whose kind lists no ``directions``)."""
    codes = []
    for unit in unit_layout(target):
        spec = next((u for u in target.cluster.units if u.kind.value == unit.kind), None)
        given = None if spec is None else spec.directions
        codes.append(0 if given is None else DIRECTIONS.index(given[unit.index]))
    return np.array(codes, dtype=np.int8)


def needed_directions(program) -> np.ndarray:
    """int8 per instruction of a `LimbProgram`: the unit direction it needs on a target
    whose NTT units have directions (positions in `DIRECTIONS`): INTT "inverse", an NTT
    "forward" unless it generates a plaintext's limbs (`LimbProgram.generation_ntts`,
    any unit), every other op 0 ("both": no constraint)."""
    op = np.asarray(program.op)
    need = np.zeros(len(op), dtype=np.int8)
    need[op == LimbOp.INTT] = DIRECTIONS.index("inverse")
    need[(op == LimbOp.NTT) & ~program.generation_ntts()] = DIRECTIONS.index("forward")
    return need


def instruction_occupancy(target: Target, program) -> np.ndarray:
    """int64 per instruction of a `LimbProgram`: the cycles it keeps its unit busy, which
    are also its read and write cycles (every functional unit streams its RVecs at its own
    rate): the op's `OpTiming.occupancy`, but for the BCONV terms of a target whose
    conversion array has `rows` (`Target.conversion_term_cycles`, from each term's
    conversion width, `fhec.ir.limb_conversions`)."""
    from fhec.ir.limb import RVecClass
    from fhec.ir.limb_conversions import conversion_terms

    op = np.asarray(program.op, dtype=np.int64)
    occ = op_timing(target, program.N).occupancy[op]
    if target.times_conversions:
        # ciphertext conversions only (ModUp, ModDown, rescales: Osiris's ModChange). A sum of
        # a plaintext's stored digits (OF-Limb's two-digit diagonals, fhec's own lowering)
        # reads loaded constants; Osiris generates diagonals on its MDC units alone (§V), so
        # those terms keep the per-term rate rather than a pass of the array.
        terms = (op == LimbOp.BCONV) & (np.asarray(program.rvec_class)[np.maximum(program.src0, 0)] != RVecClass.CONST)
        if terms.any():
            width, index = conversion_terms(program)
            occ[terms] = target.conversion_term_cycles(program.N, width[terms], index[terms])
    return occ


def scratchpad_slots(target: Target, N: int) -> int:
    """Scratchpad capacity in RVec slots at ring degree N."""
    return target.scratchpad_rvecs(N)


@dataclasses.dataclass(frozen=True, eq=False)
class OpTiming:
    """The timing contract of every `StreamOp` on one target at one N.

    Each field is an int64 array indexed by `StreamOp` (see the module docstring);
    unused codes hold 0. `xfer` is the memory controller's cycles per RVec.
    """

    occupancy: np.ndarray
    latency: np.ndarray
    read_cycles: np.ndarray
    write_cycles: np.ndarray
    xfer: int
    unit_kind: tuple[str, ...]  # per StreamOp: kind of unit that executes it ("" if unused)

    def ready_after(self, writer_op: int, reader_op: int) -> int:
        """Cycles from a writer's issue until a reader of its result may issue."""
        return int(
            self.latency[writer_op] + max(0, self.write_cycles[writer_op] - self.read_cycles[reader_op])
        )


def op_timing(target: Target, N: int) -> OpTiming:
    """The `OpTiming` of `target` at ring degree `N` (see the module docstring)."""
    occ = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    lat = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    rd = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    wr = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    kinds = [""] * NUM_STREAM_OPS
    for op in LimbOp:
        occ[op] = target.occupancy_cycles(op, N)
        lat[op] = target.latency_cycles(op, N)
        rd[op] = wr[op] = occ[op]
        kinds[op] = target.unit_for(op).kind.value
    xfer = max(1, math.ceil(target.rvec_bytes(N) / target.offchip_bytes_per_cycle))
    occ[StreamOp.LOAD] = occ[StreamOp.STORE] = xfer
    lat[StreamOp.LOAD] = target.offchip_latency_cycles
    wr[StreamOp.LOAD] = xfer
    rd[StreamOp.STORE] = xfer
    lat[StreamOp.STORE] = xfer  # the memory vector is complete once the last chunk left
    kinds[StreamOp.LOAD] = kinds[StreamOp.STORE] = MEMORY_KIND
    # the key generator writes a key half into its slot at its own rate, like a load
    occ[StreamOp.GEN] = wr[StreamOp.GEN] = target.generator_cycles(N)
    lat[StreamOp.GEN] = target.keys.generator_latency
    kinds[StreamOp.GEN] = GENERATOR_KIND
    for a in (occ, lat, rd, wr):
        a.flags.writeable = False
    return OpTiming(occ, lat, rd, wr, xfer, tuple(kinds))


def _ro(a, dtype) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    arr = arr.view()
    arr.flags.writeable = False
    return arr


_COLUMNS = {
    "unit": np.int16,
    "cycle": np.int64,
    "op": np.uint8,
    "dst": np.int32,
    "src0": np.int32,
    "src1": np.int32,
    "mod": np.int16,
    "imm": np.int32,
    "tag": np.int32,
}


@dataclasses.dataclass(frozen=True, eq=False)
class Streams:
    """Per-unit instruction streams of one program on one target (immutable).

    Columns are documented in the module docstring; the constructor sorts nothing,
    so build it with `Streams.from_entries`, which sorts by (unit, cycle).
    ``total_cycles`` is the cycle at which the last result is complete.
    Raises InternalError if columns differ in length or a unit index is out of range.
    """

    target: str
    N: int
    slots: int
    units: tuple[Unit, ...]
    unit: np.ndarray
    cycle: np.ndarray
    op: np.ndarray
    dst: np.ndarray
    src0: np.ndarray
    src1: np.ndarray
    mod: np.ndarray
    imm: np.ndarray
    tag: np.ndarray
    total_cycles: int
    onchip: OnChip | None = None  # registers and network transfers (fhec.backends.onchip), on targets that model them
    occupancy: np.ndarray | None = None  # per entry, where it differs from the op's (`instruction_occupancy`)

    def __post_init__(self) -> None:
        for name, dtype in _COLUMNS.items():
            object.__setattr__(self, name, _ro(getattr(self, name), dtype))
        n = len(self.unit)
        bad = [k for k in _COLUMNS if len(getattr(self, k)) != n]
        if bad:
            raise InternalError(f"Streams: columns {bad} differ in length from unit ({n})")
        if n and (self.unit.min() < 0 or self.unit.max() >= len(self.units)):
            raise InternalError("Streams: unit index out of range")
        if self.onchip is not None and len(self.onchip.reg) != n:
            raise InternalError(f"Streams: {len(self.onchip.reg)} register rows for {n} entries")
        if self.occupancy is not None:
            object.__setattr__(self, "occupancy", _ro(self.occupancy, np.int64))
            if len(self.occupancy) != n:
                raise InternalError(f"Streams: {len(self.occupancy)} occupancies for {n} entries")
        object.__setattr__(self, "total_cycles", int(self.total_cycles))

    @classmethod
    def from_entries(cls, *, target: str, N: int, slots: int, units: tuple[Unit, ...], total_cycles: int,
                     onchip: OnChip | None = None, occupancy: np.ndarray | None = None,
                     **columns: np.ndarray) -> Streams:
        """Build from unsorted columns (all of `_COLUMNS`; `onchip`'s register columns and
        `occupancy` aligned with them), sorting by (unit, cycle)."""
        order = np.lexsort((columns["cycle"], columns["unit"]))
        cols = {k: np.asarray(columns[k])[order] for k in _COLUMNS}
        return cls(target=target, N=N, slots=slots, units=units, total_cycles=total_cycles,
                   onchip=None if onchip is None else onchip.take(order),
                   occupancy=None if occupancy is None else np.asarray(occupancy)[order], **cols)

    def entry_occupancy(self, table: np.ndarray) -> np.ndarray:
        """int64 per entry: the cycles it keeps its unit busy, and for a functional unit
        also its read and write cycles: `occupancy` where the scheduler recorded it
        (`instruction_occupancy`), else the op's in `table` (`OpTiming.occupancy`)."""
        return np.asarray(table[self.op] if self.occupancy is None else self.occupancy, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.unit)

    @property
    def unit_start(self) -> np.ndarray:
        """CSR offsets: the entries of unit u are ``[unit_start[u], unit_start[u+1])``."""
        return np.searchsorted(self.unit, np.arange(len(self.units) + 1)).astype(np.int64)

    def unit_index(self, name: str) -> int:
        """Index of the unit called `name`; raises KeyError if there is none."""
        for i, u in enumerate(self.units):
            if u.name == name:
                return i
        raise KeyError(name)

    def waits(self) -> np.ndarray:
        """int64 per entry: cycles since the previous entry of the same stream
        (for a stream's first entry: its cycle)."""
        w = self.cycle.copy()
        if len(w) > 1:
            same = self.unit[1:] == self.unit[:-1]
            w[1:] = np.where(same, self.cycle[1:] - self.cycle[:-1], self.cycle[1:])
        return w

    def select(self, mask: np.ndarray) -> Streams:
        """The entries where `mask` is true (same units and metadata); for tests and tools."""
        cols = {k: getattr(self, k)[mask] for k in _COLUMNS}
        return dataclasses.replace(self, onchip=None if self.onchip is None else self.onchip.take(mask), **cols)

    def replace_columns(self, **columns: np.ndarray) -> Streams:
        """A copy with some columns replaced, re-sorted by (unit, cycle)."""
        cols = {k: columns.get(k, getattr(self, k)) for k in _COLUMNS}
        return Streams.from_entries(target=self.target, N=self.N, slots=self.slots, units=self.units,
                                    total_cycles=self.total_cycles, onchip=self.onchip, **cols)

    def counts(self) -> dict[str, int]:
        """Entries per unit name."""
        c = np.bincount(self.unit, minlength=len(self.units))
        return {u.name: int(k) for u, k in zip(self.units, c)}

    def __repr__(self) -> str:
        busy = int(np.count_nonzero(np.bincount(self.unit, minlength=len(self.units))))
        return (
            f"Streams(target={self.target!r}, N={self.N}, {len(self)} entries on {busy}/{len(self.units)} units, "
            f"{self.total_cycles} cycles)"
        )
