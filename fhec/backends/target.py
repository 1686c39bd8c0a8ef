"""Target descriptions: an accelerator is data, loaded from a TOML file.

A `Target` lists what the schedulers and the timing model need to know about a
machine (F1 §3, §6; ARCHITECTURE.md "Targets"): clock, word size, supported ring
degrees, clusters of functional units (which `LimbOp`s each kind of unit executes,
its pipeline latency and throughput), the scratchpad capacity, off-chip memory and
optional energy costs. Every one of these fields is read by the schedulers, the
timing/energy report or the target checks (``tests/backends/test_target_fields.py``
changes each and watches the compiled output change).

The on-chip data path is optional and modeled when given (docs/scheduling.md, "The
on-chip data path"): ``[register_file]`` (capacity and ports per cluster, F1 §3, §4.4),
the scratchpad's ``banks`` and ``port_bytes_per_cycle`` and ``[network]`` (the crossbars'
port width and latency). A target without them is scheduled at the functional-unit
level: every unit reads and writes the scratchpad at its own rate (``f1``); ``f1-datapath``
is F1 with them. Facts the model does not use yet (vector
lanes E, the register file's banking) live in the separate ``[unmodeled]`` table
(`Unmodeled`): they are validated and shown by ``fhec targets``, but nothing schedules
or reports with them, so a value there changes no result.
Shipped targets live in ``fhec/backends/targets/*.toml`` (``f1``, ``osiris``, ``tiny``,
...); their TOML comments and ``docs/targets.md`` give the source of every number. Four
optional tables carry a machine's dataflow rules: ``[pipelining]`` (`Pipelining`: whole-limb
or limb-interleaved hand-over between units), ``[lowering]`` (`Lowering`: stored or OF-Limb
plaintexts) and ``[ordering]`` (`Ordering`: the giant-step-centric order of BSGS products);
``[keys]`` (`Keys`) says whether half of every key-switching key is generated on chip.

Timing model of one operation on one RVec of N elements on its unit (F1 §3: "All
FUs are fully pipelined, so they achieve the same throughput of E = 128
elements/cycle. FUs consume their inputs in contiguous chunks of E elements in
consecutive cycles"):

- occupancy = ceil(N / throughput) cycles: the unit accepts the next op after this
  (F1 at N = 16K: 128 cycles);
- latency to first output = ``latency`` + ``transposes`` * occupancy: a unit with a
  transpose stage (F1's NTT has one, §5.2; its automorphism unit two, §5.1, Fig. 6)
  must take in the whole vector before its first output chunk leaves; under limb
  interleaving (`Pipelining`, Osiris) ``latency`` alone;
- cycles from first input to last output = latency to first output + occupancy.

`load_target` turns every problem with a file (unknown name, unreadable TOML,
a field out of range, an op no unit executes) into a `TargetError` whose message
names the file and the field.
"""

from __future__ import annotations

import enum
import math
import os
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from fhec.backends.machine import MIN_GHZ_OR_GB_S, IsaMachine, expected_value, one_word_name, refuse_quoted_number
from fhec.errors import TargetError
from fhec.ir.limb import word_bytes_for
from fhec.ir.limb_ops import LimbOp, RVecClass

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "UnitKind",
    "FunctionalUnit",
    "Cluster",
    "Scratchpad",
    "OffChipMemory",
    "Energy",
    "Area",
    "Pipelining",
    "Lowering",
    "Ordering",
    "Unmodeled",
    "RegisterFile",
    "Network",
    "Target",
    "load_target",
    "target_from_dict",
    "list_targets",
    "list_machines",
    "shipped_target_names",
]


# Plausibility bounds: a description beyond these is a typo (a unit, a digit), not a
# machine. They are orders of magnitude above any FHE accelerator published so far
# (F1: 16 clusters, 512 KB register files, 64 MB scratchpad, 1 TB/s HBM, 1 GHz).
MAX_N = 2**17  # fhec's largest ring degree
MAX_CLOCK_GHZ = 100.0
MIN_CLOCK_GHZ = MIN_GHZ_OR_GB_S  # 1 MHz: slower is a unit typo (MHz for GHz), and its cycle counts overflow int64
MAX_CLUSTERS = 4096
MAX_UNITS = 1024
MAX_LATENCY_CYCLES = 10**6
MAX_TRANSPOSES = 8
MAX_PORTS = 4096
MAX_BYTES = 2**44  # 16 TiB of on-chip storage or bytes per cycle
MAX_PORT_BYTES = 2**24
MAX_BANDWIDTH_GB_S = 10.0**7  # 10 PB/s
MIN_BANDWIDTH_GB_S = MIN_GHZ_OR_GB_S  # 1 MB/s
MAX_LATENCY_NS = 10.0**9  # one second
MAX_PJ = 10.0**6
MIN_RVECS = 3
MAX_AREA_MM2 = 10.0**5  # 1,000 cm²: beyond any reticle


class UnitKind(str, enum.Enum):
    """The kinds of functional units a cluster may hold."""

    NTT = "ntt"
    AUT = "aut"
    MUL = "mul"
    ADD = "add"
    BCONV = "bconv"  # a dedicated base-conversion array (Osiris §IV-C); F1-like targets run BCONV on "mul"


_DROP_DATA_PATH = "drop the on-chip data path ([register_file], [network] and the scratchpad's banks and port_bytes_per_cycle)"
"""The fix of a feature the data-path scheduler does not take: the data path is modeled as
a whole, so dropping [network] alone is refused too."""


class _Frozen(BaseModel):
    # NaN and infinities are refused everywhere: `bandwidth_gb_s = inf` is no machine.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bools(cls, value: Any, info: ValidationInfo) -> Any:
        # No field is a flag: `count = true` is a typo, not 1; nor is `count = "16"` a number.
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool):
            raise ValueError(f"{str(value).lower()} is a boolean; give {expected_value(annotation)}")
        return refuse_quoted_number(value, annotation)


Direction = Literal["both", "forward", "inverse"]
"""What one unit of an NTT kind runs (`FunctionalUnit.directions`): "both" (any NTT or
INTT), "forward" (NTTs only) or "inverse" (INTTs, and the NTTs that generate a plaintext's
limbs, `LimbProgram.generation_ntts`: Osiris §V reverses its ModChange INTT unit for
OF-Limb). The direction codes the schedulers and the checker compare are the positions
in `DIRECTIONS`."""

DIRECTIONS: tuple[Direction, ...] = ("both", "forward", "inverse")


class FunctionalUnit(_Frozen):
    """One kind of functional unit in a cluster."""

    kind: UnitKind
    count: int = Field(gt=0, le=MAX_UNITS, description="units of this kind per cluster")
    ops: tuple[LimbOp, ...] = Field(min_length=1, description="LimbOp names this unit executes")
    # at least 1: a result lands the cycle after its first input chunk is read at the earliest
    # (with 0, a consumer issued in the producer's cycle was executed before it: wrong limbs)
    latency: int = Field(ge=1, le=MAX_LATENCY_CYCLES, description="pipeline depth in cycles, excluding transpose buffering")
    transposes: int = Field(0, ge=0, le=MAX_TRANSPOSES, description="whole-vector transpose stages in the pipeline")
    throughput: int = Field(gt=0, le=MAX_N, description="elements per cycle per unit")
    pj_per_element: float | None = Field(None, ge=0, le=MAX_PJ, description="energy per element processed")
    area_mm2: float | None = Field(None, ge=0, le=MAX_AREA_MM2, description="silicon area of one unit")
    directions: tuple[Direction, ...] | None = Field(
        None, description="per unit of an NTT kind: the transforms it runs (docs/targets.md, 'Directions')")
    rows: int | None = Field(
        None, gt=0, le=MAX_UNITS,
        description="a unit running BCONV as one array of this many input rows (docs/targets.md, 'Conversion arrays')")

    @model_validator(mode="after")
    def _rows_for_conversions(self) -> FunctionalUnit:
        # an array takes a whole conversion at once: its time is set per conversion, not per term
        if self.rows is not None and (LimbOp.BCONV not in self.ops or self.transposes):
            raise ValueError("rows describe a unit that runs BCONV as one array (and has no transposes)")
        if self.rows is not None and self.rows > self.throughput:
            raise ValueError(f"rows = {self.rows} exceeds the array's {self.throughput} cells (throughput): each row "
                             f"is at least one cell wide")
        return self

    @model_validator(mode="after")
    def _directions_per_unit(self) -> FunctionalUnit:
        if self.directions is None:
            return self
        if len(self.directions) != self.count:
            raise ValueError(f"directions lists {len(self.directions)} units; the kind has count = {self.count}")
        if not {LimbOp.NTT, LimbOp.INTT} <= set(self.ops):
            raise ValueError("directions apply to a unit kind that runs both NTT and INTT")
        for way in ("forward", "inverse"):
            if not {"both", way} & set(self.directions):
                raise ValueError(f"directions give no unit that runs the {way} transform: list one as {way!r} or 'both'")
        return self

    @field_validator("ops", mode="before")
    @classmethod
    def _op_names(cls, value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            return value
        known = {op.name: op for op in LimbOp}
        out = []
        for name in value:
            if isinstance(name, LimbOp):
                out.append(name)
            elif isinstance(name, str) and name.upper() in known:
                out.append(known[name.upper()])
            else:
                raise ValueError(f"unknown op {name!r}; known ops: {', '.join(known)}")
        return tuple(out)


class RegisterFile(_Frozen):
    """The vector register file of one cluster (F1 §3, §4.4): the cycle scheduler allocates
    its ``capacity_bytes // rvec_bytes`` registers to values, chaining a value produced and
    consumed in one cluster through it; every read and write of a whole RVec holds one
    port for the op's occupancy."""

    capacity_bytes: int = Field(gt=0, le=MAX_BYTES, description="per cluster")
    read_ports: int = Field(ge=2, le=MAX_PORTS, description="RVec streams read at once (an op reads two)")
    write_ports: int = Field(ge=3, le=MAX_PORTS,
                             description="RVec streams written at once (an op's result and two kept sources)")
    pj_per_byte: float | None = Field(None, ge=0, le=MAX_PJ, description="energy per byte read or written")


class Cluster(_Frozen):
    """A compute cluster; the chip has `count` identical ones."""

    count: int = Field(gt=0, le=MAX_CLUSTERS)
    units: tuple[FunctionalUnit, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _every_op_on_exactly_one_kind(self) -> Cluster:
        kinds = [u.kind for u in self.units]
        dup = {k.value for k in kinds if kinds.count(k) > 1}
        if dup:
            raise ValueError(f"unit kind(s) {sorted(dup)} listed more than once; use `count`")
        for op in LimbOp:
            owners = [u.kind.value for u in self.units if op in u.ops]
            if len(owners) != 1:
                where = "no unit" if not owners else f"several units ({', '.join(owners)})"
                raise ValueError(f"op {op.name} is executed by {where}; every op needs exactly one unit kind")
        return self


class Scratchpad(_Frozen):
    """The shared, software-managed on-chip memory: the off-chip scheduler's capacity.
    With a `Network`, its banks and their ports are modeled too: slot s lives in bank
    s % banks, which has one port to each direction of the network."""

    capacity_bytes: int = Field(gt=0, le=MAX_BYTES)
    banks: int | None = Field(None, gt=0, le=MAX_PORTS, description="needed with [network]")
    port_bytes_per_cycle: int | None = Field(None, gt=0, le=MAX_PORT_BYTES, description="per bank and direction")


class Network(_Frozen):
    """The on-chip network (F1 §3, §6): three crossbars, scratchpad -> cluster,
    cluster -> scratchpad and cluster -> cluster, each with one port per cluster (and per
    scratchpad bank) of ``port_bytes_per_cycle``; a transfer of one RVec holds a port for
    ceil(RVec bytes / port bytes) cycles and lands ``latency`` cycles after it starts."""

    port_bytes_per_cycle: int = Field(gt=0, le=MAX_PORT_BYTES, description="per cluster or bank port")
    latency: int = Field(ge=0, le=MAX_LATENCY_CYCLES, description="cycles from a transfer's start to its first chunk landing")


class OffChipMemory(_Frozen):
    """Main memory (HBM); always accessed through the scratchpad."""

    bandwidth_gb_s: float = Field(ge=MIN_BANDWIDTH_GB_S, le=MAX_BANDWIDTH_GB_S)
    # above 0: a load lands one cycle after it issues at the earliest (as a unit's `latency`)
    latency_ns: float = Field(gt=0, le=MAX_LATENCY_NS, description="worst-case access latency")


class Energy(_Frozen):
    """Data-movement energies; per-element compute energies are on the units."""

    pj_per_byte_onchip: float = Field(ge=0, le=MAX_PJ, description="scratchpad access + network traversal")
    pj_per_byte_offchip: float = Field(ge=0, le=MAX_PJ)


class Area(_Frozen):
    """Silicon area besides the functional units' own (`FunctionalUnit.area_mm2`), as F1
    Table 2 breaks it down. Read by the report (`Target.area_mm2`) and by design-space
    sweeps (`fhec.explore`): the scratchpad's area scales with its capacity and the memory
    interface's with its bandwidth, so varying either moves the area as it moves the
    cycles. The network's area is one figure: no field of the model sizes the network."""

    cluster_extra_mm2: float = Field(ge=0, le=MAX_AREA_MM2, description="per cluster, besides its FUs (register file)")
    scratchpad_mm2_per_mib: float = Field(ge=0, le=MAX_AREA_MM2)
    network_mm2: float = Field(ge=0, le=MAX_AREA_MM2, description="the on-chip network, whole")
    memory_mm2_per_gb_s: float = Field(ge=0, le=MAX_AREA_MM2, description="memory interface (PHYs) per GB/s")


class Pipelining(_Frozen):
    """How units hand results to each other: the target's pipelining rule (``[pipelining]``).

    ``whole-limb`` (F1 §3, the default): each unit streams one limb at a time; a unit with
    transpose stages (F1's four-step NTT, its automorphism unit) must take in a whole limb
    before its first output chunk leaves, so a consumer waits ``latency + transposes x
    occupancy`` cycles for it.

    ``limb-interleaved`` (Osiris §IV-B, Fig. 4): units run in lockstep on cross-sections of
    limbs (p coefficients of one limb, then p of the next limb, ...). A unit's whole-limb
    buffering then holds the other limbs of its cross-sections in flight (Osiris extends
    the MDC buffers "by a factor equal to the number of interleaved limbs"), so a consumer
    may start once the producer's first cross-section is out: after the pipeline depth
    ``latency`` alone. The fill of the first cross-section group is not charged (docs/targets.md).
    """

    mode: Literal["whole-limb", "limb-interleaved"] = "whole-limb"

    @property
    def interleaved(self) -> bool:
        return self.mode == "limb-interleaved"


class Lowering(_Frozen):
    """Lowering choices a target asks for (``[lowering]``).

    ``plaintexts``: how a plaintext constant (a matrix diagonal, a polynomial coefficient
    vector) reaches the units. ``stored`` (default): every limb is loaded, in NTT form.
    ``of-limb`` (on-the-fly limb extension, ARK; Osiris §V): one limb is loaded in
    coefficient form and every limb is generated on chip by an NTT that reads it centered
    (`fhec.passes.lower`, "OF-Limb"): one load instead of one per limb, one NTT per limb
    more. Only plaintexts whose coefficients provably fit one limb take this path.

    ``products``: the tensor product of two different ciphertexts (a square always takes
    three products and one addition per limb). ``schoolbook`` (default): four products and
    one addition per limb; ``karatsuba``: three products and four additions, d1 =
    (a0 + a1)(b0 + b1) − d0 − d2 (`fhec.passes.lower_ops.LimbEmitter.multiply`). Karatsuba
    saves multiplier work and energy but loads the adders and keeps more temporaries live,
    which costs cycles on a machine with fewer adders than multipliers or a scratchpad
    of a few rvecs (docs/lowering.md, "Tensor products").
    """

    plaintexts: Literal["stored", "of-limb"] = "stored"
    products: Literal["schoolbook", "karatsuba"] = "schoolbook"


class Ordering(_Frozen):
    """HE-level orderings a target asks for (``[ordering]``).

    ``linear_transforms``: ``program`` (default) leaves BSGS matrix-vector products in
    the order the recipe writes them (giant-step major; F1's hint-reuse ordering still
    applies); ``giant-step-centric`` (Osiris §V) orders them around the baby-step keys:
    per baby-step rotation, its n2 diagonal products, while the next key loads
    (`fhec.passes.he_gsc`).
    """

    linear_transforms: Literal["program", "giant-step-centric"] = "program"


class Keys(_Frozen):
    """Where key-switching keys come from (``[keys]``).

    ``uniform_half``: ``loaded`` (default) or ``generated`` (CraterLake; Osiris §IV-E "PRNG
    key generation"): the uniform half ("a", component 1) of every key-switching key is
    expanded on chip from a short public seed (fhec's key generation derives it so: `fhec.schemes.keys`), so only the
    other half ("b") is loaded. The generator writes ``generator_words_per_cycle`` words a
    cycle after ``generator_latency`` cycles; the off-chip scheduler and the cycle scheduler
    treat its output as a load that uses the generator (``gen0``) instead of the memory
    channel, and it is no off-chip traffic.
    """

    uniform_half: Literal["loaded", "generated"] = "loaded"
    generator_words_per_cycle: int = Field(512, gt=0, le=MAX_N)
    generator_latency: int = Field(16, ge=1, le=MAX_LATENCY_CYCLES)  # ge=1: as a unit's `latency`

    @property
    def generated(self) -> bool:
        return self.uniform_half == "generated"


class Unmodeled(_Frozen):
    """Machine facts that no part of fhec reads yet: the ``[unmodeled]`` table.

    The timing model uses each unit's own ``throughput`` (not the lanes) and books the
    register file's ports (not its banks, F1 §3: "within 5% of an ideal infinite-ported
    RF"); so neither value changes a schedule, a cycle count or an energy figure. They are
    kept (validated, shown by ``fhec targets``) as facts of the machine; a field moves out
    of this table when code starts reading it, as the register file, bank ports and
    network did (``[register_file]``, ``[network]``). Every field is optional; other keys
    are refused, as everywhere, so that a typo is caught.
    """

    lanes: int | None = Field(None, gt=0, le=MAX_N, description="vector lanes E (timing uses each unit's throughput)")
    register_file_banks: int | None = Field(
        None, gt=0, le=MAX_PORTS, description="element-partitioned RF banks (the model books ports, not banks)")

    def summary(self) -> str:
        """``field=value`` for every given field, dotted paths, in declaration order."""
        parts = []

        def walk(prefix: str, model: BaseModel) -> None:
            for name in type(model).model_fields:
                value = getattr(model, name)
                if isinstance(value, BaseModel):
                    walk(f"{prefix}{name}.", value)
                elif value is not None:
                    parts.append(f"{prefix}{name}={value:g}" if isinstance(value, float) else f"{prefix}{name}={value}")

        walk("", self)
        return ", ".join(parts)


_MOVED_TO_UNMODELED = {
    ("lanes",): "[unmodeled] lanes",
}
"""Fields of the earlier layout that no code read, and where they live now."""

_MOVED_TO_MODELED = {
    ("cluster", "register_file"): "[register_file] (and its banks to [unmodeled] register_file_banks)",
    ("unmodeled", "register_file"): "[register_file] (and its banks to [unmodeled] register_file_banks)",
    ("unmodeled", "scratchpad"): "[scratchpad] banks and port_bytes_per_cycle",
    ("unmodeled", "network"): "[network] port_bytes_per_cycle and latency",
    ("unmodeled", "pj_per_byte_register_file"): "[register_file] pj_per_byte",
    ("energy", "pj_per_byte_register_file"): "[register_file] pj_per_byte",
}
"""Fields of earlier layouts that are modeled now, and where they live."""


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class Target(_Frozen):
    """A complete, validated accelerator description (immutable).

    Build it with `load_target`; constructing it directly raises pydantic's
    ValidationError instead of `TargetError`.
    """

    name: str = Field(min_length=1, description="one word (stream file headers and file names carry it)")

    _one_word = field_validator("name")(classmethod(lambda cls, v: one_word_name(v)))
    description: str = ""
    clock_ghz: float = Field(ge=MIN_CLOCK_GHZ, le=MAX_CLOCK_GHZ)
    word_bits: int = Field(ge=8, le=64)
    n_min: int = Field(ge=2, le=MAX_N, description="smallest supported ring degree N (power of two)")
    n_max: int = Field(ge=2, le=MAX_N, description="largest supported ring degree N (power of two)")
    cluster: Cluster
    scratchpad: Scratchpad
    memory: OffChipMemory
    energy: Energy | None = None
    area: Area | None = None
    pipelining: Pipelining = Pipelining()
    lowering: Lowering = Lowering()
    ordering: Ordering = Ordering()
    keys: Keys = Keys()
    register_file: RegisterFile | None = Field(None, description="per cluster; modeled with [network]")
    network: Network | None = None
    unmodeled: Unmodeled = Unmodeled()

    @model_validator(mode="before")
    @classmethod
    def _no_unmodeled_fields_outside_their_table(cls, data: Any) -> Any:
        # files written for the earlier layout: say where the field went, not just "extra input"
        if isinstance(data, dict):
            for path, home in _MOVED_TO_UNMODELED.items():
                table = data
                for key in path[:-1]:
                    table = table.get(key) if isinstance(table, dict) else None
                if isinstance(table, dict) and path[-1] in table:
                    raise ValueError(
                        f"field '{'.'.join(path)}' is not modeled (no code reads it yet); "
                        f"move it to {home} (docs/targets.md)"
                    )
            for path, home in _MOVED_TO_MODELED.items():
                table = data
                for key in path[:-1]:
                    table = table.get(key) if isinstance(table, dict) else None
                if isinstance(table, dict) and path[-1] in table:
                    raise ValueError(f"field '{'.'.join(path)}' is modeled now; move it to {home} (docs/targets.md)")
        return data

    @field_validator("n_min", "n_max")
    @classmethod
    def _power_of_two(cls, n: int) -> int:
        if not _is_power_of_two(n):
            raise ValueError(f"{n} is not a power of two")
        return n

    @model_validator(mode="after")
    def _consistent(self) -> Target:
        if self.n_min > self.n_max:
            raise ValueError(f"n_min ({self.n_min}) exceeds n_max ({self.n_max})")
        with_energy = [u.pj_per_element is not None for u in self.cluster.units]
        if self.energy is not None and not all(with_energy):
            raise ValueError("[energy] is given, so every unit needs pj_per_element")
        if self.energy is None and any(with_energy):
            raise ValueError("units give pj_per_element but the [energy] table is missing")
        with_area = [u.area_mm2 is not None for u in self.cluster.units]
        if self.area is not None and not all(with_area):
            raise ValueError("[area] is given, so every unit needs area_mm2")
        if self.area is None and any(with_area):
            raise ValueError("units give area_mm2 but the [area] table is missing")
        # An instruction reads up to two RVecs and writes one: storage for fewer than
        # three at the smallest N cannot run anything.
        onchip = (self.register_file, self.network, self.scratchpad.banks, self.scratchpad.port_bytes_per_cycle)
        if any(x is not None for x in onchip) and any(x is None for x in onchip):
            raise ValueError(
                "the on-chip data path is modeled as a whole: give [register_file], [network] and the "
                "scratchpad's banks and port_bytes_per_cycle together, or none of them (docs/targets.md)")
        if self.register_file is not None:
            # the data-path scheduler books neither a key generator nor directed NTT units
            # (fhec.passes.cycle refuses them at compile; say so when the file is read)
            if self.keys.generated:
                raise ValueError("the on-chip data path ([register_file], [network]) and on-chip key generation "
                                 "([keys] uniform_half = \"generated\") are not scheduled together: " + _DROP_DATA_PATH
                                 + " or the key generation")
            if any(u.directions is not None and any(d != "both" for d in u.directions) for u in self.cluster.units):
                raise ValueError("the on-chip data path ([register_file], [network]) and NTT units with directions "
                                 "are not scheduled together: " + _DROP_DATA_PATH + " or the directions")
            if any(u.rows is not None for u in self.cluster.units):
                # the data-path scheduler times every op by its kind's occupancy
                raise ValueError("the on-chip data path ([register_file], [network]) and a conversion array (rows) "
                                 "are not scheduled together: " + _DROP_DATA_PATH + " or the unit's rows")
        if self.register_file is not None and (self.energy is None) != (self.register_file.pj_per_byte is None):
            raise ValueError("register_file.pj_per_byte is given exactly when the [energy] table is")
        rf = self.register_file
        stores = [("scratchpad", self.scratchpad.capacity_bytes)]
        if rf is not None:
            stores.append(("register_file", rf.capacity_bytes))
        # the scratchpad at the smallest N (the off-chip scheduler spills the rest); a
        # register file at the largest, where it holds fewest (nothing spills an operand)
        stores = [(what, capacity, self.n_min if what == "scratchpad" else self.n_max) for what, capacity in stores]
        for what, capacity, n in stores:
            if capacity < MIN_RVECS * self.rvec_bytes(n):
                bound = "n_min" if n == self.n_min else "n_max"
                raise ValueError(
                    f"{what}.capacity_bytes = {capacity} holds fewer than {MIN_RVECS} RVecs of N = {bound} = "
                    f"{n} words ({self.rvec_bytes(n)} bytes each); give at least "
                    f"{MIN_RVECS * self.rvec_bytes(n)} bytes"
                )
        return self

    # --- sizes -------------------------------------------------------------------------

    @property
    def word_bytes(self) -> int:
        """Bytes per stored word: 4 up to 32-bit words, else ceil(word_bits / 8)."""
        return word_bytes_for(self.word_bits)

    def rvec_bytes(self, n: int) -> int:
        """Bytes of one RVec of `n` words (F1 §2.4: 64 KB at N = 16K)."""
        return n * self.word_bytes

    @property
    def onchip_bytes(self) -> int:
        """Bytes of on-chip storage the schedulers manage (the scratchpad)."""
        return self.scratchpad.capacity_bytes

    def supports(self, n: int) -> bool:
        """True if ring degree `n` is a power of two in [n_min, n_max]."""
        return _is_power_of_two(n) and self.n_min <= n <= self.n_max

    def check_ring_degree(self, n: int) -> None:
        """Raise TargetError unless `supports(n)`."""
        if not self.supports(n):
            raise TargetError(
                f"target {self.name!r} supports ring degrees N = {self.n_min}..{self.n_max} "
                f"(powers of two), not N = {n}; pick parameters in that range or another target"
            )

    def scratchpad_rvecs(self, n: int) -> int:
        """How many RVecs of `n` words fit in the scratchpad."""
        return self.scratchpad.capacity_bytes // self.rvec_bytes(n)

    @property
    def models_onchip(self) -> bool:
        """True when register files, scratchpad bank ports and the network are modeled."""
        return self.network is not None

    def register_rvecs(self, n: int) -> int:
        """Registers per cluster at ring degree `n` (RVecs of `n` words in one register
        file); 0 when the target does not model register files."""
        return 0 if self.register_file is None else self.register_file.capacity_bytes // self.rvec_bytes(n)

    def network_cycles(self, n: int) -> int:
        """Cycles one transfer of an RVec of `n` words holds its network and bank ports:
        ceil(RVec bytes / the narrower of the network's and the banks' port bytes per
        cycle); 0 when the network is not modeled."""
        if self.network is None:
            return 0
        port = min(self.network.port_bytes_per_cycle, int(self.scratchpad.port_bytes_per_cycle))
        return math.ceil(self.rvec_bytes(n) / port)

    # --- units and timing --------------------------------------------------------------

    def unit_for(self, op: LimbOp) -> FunctionalUnit:
        """The unit kind that executes `op` (validation guarantees exactly one)."""
        for unit in self.cluster.units:
            if op in unit.ops:
                return unit
        raise AssertionError(f"validated target has no unit for {op!r}")  # pragma: no cover

    def total_units(self, kind: UnitKind) -> int:
        """Units of `kind` on the whole chip (count per cluster x clusters)."""
        return sum(u.count for u in self.cluster.units if u.kind == kind) * self.cluster.count

    def occupancy_cycles(self, op: LimbOp, n: int) -> int:
        """Cycles `op` on one RVec of `n` elements keeps its unit busy: ceil(n / throughput).
        A BCONV on a conversion array (`FunctionalUnit.rows`) may take longer:
        `conversion_term_cycles`."""
        return math.ceil(n / self.unit_for(op).throughput)

    @property
    def times_conversions(self) -> bool:
        """Whether BCONV runs on a conversion array (`FunctionalUnit.rows`), so that its terms'
        cycles depend on their conversions (`conversion_term_cycles`) and not on the op alone."""
        return self.unit_for(LimbOp.BCONV).rows is not None

    def conversion_term_cycles(self, n: int, width: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Cycles each BCONV term keeps its unit busy, given its conversion's width (input
        limbs) and its position among them (`fhec.ir.limb_conversions.conversion_terms`).

        Without `rows`: `occupancy_cycles` each. On an array of `rows` input rows (Osiris's
        BConv array, §IV-C) a conversion of w inputs takes ceil(w / rows) passes, each as
        long as `rows` terms at the unit's throughput (one output limb per N/p cycles,
        whatever the rows in use), so narrow conversions cost the array more than their
        terms' elements: a one-limb rescale 16 times as much per term. The conversion's
        cycles are dealt to its terms, the first ones taking the remainder, so that they sum
        exactly (each at least one cycle, an issue slot: at N below rows x lanes a conversion's
        pass can be shorter than its terms are many, and the terms then sum to more)."""
        unit = self.unit_for(LimbOp.BCONV)
        width = np.asarray(width, dtype=np.int64)
        if unit.rows is None:
            return np.full(len(width), self.occupancy_cycles(LimbOp.BCONV, n), dtype=np.int64)
        w = np.maximum(width, 1)
        total = -(-w // unit.rows) * math.ceil(unit.rows * n / unit.throughput)
        return np.maximum(total // w + (np.asarray(index, dtype=np.int64) < total % w), 1)

    def latency_cycles(self, op: LimbOp, n: int) -> int:
        """Cycles from the first input chunk entering the unit to the first output chunk
        leaving it: latency + transposes * occupancy; under limb interleaving (`Pipelining`)
        the transposes are hidden behind the other limbs of the cross-section: latency."""
        unit = self.unit_for(op)
        buffered = 0 if self.pipelining.interleaved else unit.transposes
        return unit.latency + buffered * self.occupancy_cycles(op, n)

    def op_cycles(self, op: LimbOp, n: int) -> int:
        """Cycles from the first input chunk in to the last output chunk out."""
        return self.latency_cycles(op, n) + self.occupancy_cycles(op, n)

    @property
    def offchip_bytes_per_cycle(self) -> float:
        """Off-chip bandwidth in bytes per (compute) clock cycle."""
        return self.memory.bandwidth_gb_s / self.clock_ghz

    @property
    def offchip_latency_cycles(self) -> int:
        """Off-chip access latency rounded up to whole cycles."""
        return math.ceil(self.memory.latency_ns * self.clock_ghz)

    def generated_rvecs(self, program) -> np.ndarray:
        """Per rvec of a `LimbProgram`: True if this target generates it on chip instead of
        loading it (the uniform half of a key-switching key under ``[keys]``)."""
        gen = np.zeros(program.num_rvecs, dtype=bool)
        if self.keys.generated and len(program.tagged):
            ksh = program.rvec_class[program.tagged] == RVecClass.KSH
            gen[program.tagged[ksh & (program.tags[:, 2] == 1)]] = True
        return gen

    def generator_cycles(self, n: int) -> int:
        """Cycles the key generator takes to write one RVec of `n` words."""
        return math.ceil(n / self.keys.generator_words_per_cycle)

    def seconds(self, cycles: float) -> float:
        """Wall-clock seconds of `cycles` clock cycles."""
        return cycles / (self.clock_ghz * 1e9)

    def area_breakdown(self) -> dict[str, float] | None:
        """Area in mm² by component (compute clusters, scratchpad, network, memory
        interface), as F1 Table 2 lists it; None when the target has no [area] table."""
        if self.area is None:
            return None
        a = self.area
        cluster = sum(u.count * u.area_mm2 for u in self.cluster.units) + a.cluster_extra_mm2
        return {
            "compute": self.cluster.count * cluster,
            "scratchpad": self.scratchpad.capacity_bytes / 2**20 * a.scratchpad_mm2_per_mib,
            "network": a.network_mm2,
            "memory_interface": self.memory.bandwidth_gb_s * a.memory_mm2_per_gb_s,
        }

    @property
    def area_mm2(self) -> float | None:
        """Total silicon area in mm² (`area_breakdown` summed), None without area data."""
        parts = self.area_breakdown()
        return None if parts is None else sum(parts.values())

    def op_energy_pj(self, op: LimbOp, n: int) -> float | None:
        """Compute energy of `op` on one RVec of `n` elements, None without energy data."""
        per_element = self.unit_for(op).pj_per_element
        return None if per_element is None else per_element * n


# --- loading ---------------------------------------------------------------------------

_SHIPPED = "targets"


def _shipped_dir():
    return resources.files("fhec.backends").joinpath(_SHIPPED)


def shipped_target_names() -> list[str]:
    """Names of the targets shipped with fhec, sorted."""
    return sorted(p.name[: -len(".toml")] for p in _shipped_dir().iterdir() if p.name.endswith(".toml"))


def _format_validation_error(source: str, err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ""
        for item in e["loc"]:
            loc += f"[{item}]" if isinstance(item, int) else (f".{item}" if loc else str(item))
        msg = e["msg"].removeprefix("Value error, ")
        parts.append(f"field '{loc}': {msg}" if loc else msg)
    return f"{source}: " + "; ".join(parts)


def _parse(text: str, source: str) -> Target | IsaMachine:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"{source}: not valid TOML: {e}") from None
    return target_from_dict(data, source)


def target_from_dict(data: dict, source: str) -> Target | IsaMachine:
    """A `Target` (or, with a top-level ``isa`` key, an `IsaMachine`) from the dict form of
    a target file (as TOML parses it, or `model_dump` gives it); `TargetError` naming
    `source` and the field if invalid."""
    # a top-level `isa = "..."` key makes the file an ISA machine (fhec.backends.machine)
    model = IsaMachine if isinstance(data, dict) and "isa" in data else Target
    machine_tables = sorted({"registers", "memories", "pipelines"} & set(data)) if isinstance(data, dict) else []
    if model is Target and machine_tables and "cluster" not in data:
        # without this, a machine file that lost its `isa` key was told every field of it is extra
        # the shipped machines' ISAs (this layer may not import fhec.isa, whose BACKENDS is the full list)
        keys = " or ".join('isa = "%s"' % k for k in sorted({m.isa for m in list_machines()}))
        raise TargetError(
            f"{source}: [{'], ['.join(machine_tables)}] make this an ISA machine file, but it has no top-level `isa` "
            f"key; add one naming its backend ({keys}) before the first table (docs/targets.md)")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise TargetError(_format_validation_error(source, e)) from None


def load_target(name_or_path: str | os.PathLike[str]) -> Target | IsaMachine:
    """Load a target by shipped name (``"f1"``, ``"tiny"``, ``"rpu"``) or from a TOML file
    path. A file with a top-level ``isa`` key is an ISA machine (`IsaMachine`), any other
    a stream `Target`.

    A string is taken as a path when it ends in ``.toml`` or contains a path
    separator. Raises TargetError for an unknown name, an unreadable file, invalid
    TOML or a description that fails validation (the message names the file and
    the field, e.g. ``f1.toml: field 'scratchpad.capacity_bytes': Input should be
    greater than 0``).
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TargetError(
            f"target = {name_or_path!r} ({type(name_or_path).__name__}): pass a shipped target name "
            f"({', '.join(shipped_target_names())}), the path of a .toml file, or a fhec Target."
        )
    raw = os.fspath(name_or_path)
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    is_path = isinstance(name_or_path, os.PathLike) or raw.endswith(".toml") or os.sep in raw or "/" in raw
    if is_path:
        path = Path(raw)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise TargetError(f"{raw}: cannot read target file ({e.strerror or e})") from None
        except UnicodeDecodeError:
            raise TargetError(f"{raw}: not a text (UTF-8) file; a target file is TOML text, see docs/targets.md") from None
        except ValueError as e:  # e.g. a NUL byte in the path
            raise TargetError(f"{raw!r}: not a usable path ({e})") from None
        return _parse(text, raw)
    resource = _shipped_dir().joinpath(f"{raw}.toml")
    if not resource.is_file():
        names = ", ".join(shipped_target_names())
        raise TargetError(f"unknown target {raw!r}; shipped targets: {names}; or pass the path of a .toml file")
    return _parse(resource.read_text(encoding="utf-8"), f"{raw}.toml")


def list_targets() -> list[Target]:
    """Every shipped stream target (F1-like), sorted by name."""
    return [t for t in map(load_target, shipped_target_names()) if isinstance(t, Target)]


def list_machines() -> list[IsaMachine]:
    """Every shipped ISA machine (``rpu``, ...), sorted by name."""
    return [t for t in map(load_target, shipped_target_names()) if isinstance(t, IsaMachine)]
