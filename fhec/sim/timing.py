"""The timing, traffic and energy report of a compiled program (F1 §4.4, §8).

The static cycle-level schedule *is* the performance model: the cycles reported are the
streams' total cycles. Beside them the report gives the lower bounds no schedule can
beat (`fhec.analysis.bounds`): compute-bound (the busiest unit kind's total occupancy
over its unit count), bandwidth-bound (compulsory off-chip bytes over the off-chip
bandwidth), dependency-bound (the critical path) and load-aware (every load in its best
order, each followed by the work that depends on it). The cycles over the largest of
them shows how far the schedule is from the limit.

Everything here is read from the streams, the data schedule and the target; no
ciphertext data is touched.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from fhec.backends.streams import MEMORY_KIND, NUM_STREAM_OPS, STREAM_ARITY, Streams, StreamOp, op_timing, on_functional_units
from fhec.backends.target import Target
from fhec.ir.limb import LimbOp
from fhec.analysis.bounds import Bounds
from fhec.ir.schedule import DataSchedule, Traffic


# A report read back from disk must describe a possible schedule: counts, cycles, bytes
# and energies are finite and non-negative (a negative cycle count is a corrupt file).
_COUNT = Field(ge=0)
_AMOUNT = Field(ge=0, allow_inf_nan=False)
_NO_NAN = ConfigDict(frozen=True, allow_inf_nan=False)


# The traffic classes `summary_rows` shows (those of `Traffic.as_dict`).
_TRAFFIC_KEYS = (
    "ksh_compulsory", "ksh_noncompulsory", "input_compulsory", "input_noncompulsory", "const_compulsory",
    "const_noncompulsory", "output_compulsory", "output_noncompulsory", "intermediate_loads",
    "intermediate_stores", "compulsory", "noncompulsory", "total",
)


class Energy(BaseModel):
    """Energy in microjoules by where it is spent (present when the target has energy data)."""

    model_config = _NO_NAN

    compute_uj: float = _AMOUNT
    onchip_uj: float = _AMOUNT
    offchip_uj: float = _AMOUNT

    @property
    def total_uj(self) -> float:
        return self.compute_uj + self.onchip_uj + self.offchip_uj


_HINT_ORDER_SUMMARY = {
    ("bounded", True): "hint-reuse order bounded by the scratchpad",
    ("bounded", False): "unbounded hint-reuse order, which fits the scratchpad",
    ("bounded", None): "hint-reuse order bounded where unbounded would overflow",
    ("unbounded", False): "unbounded hint-reuse order, as asked",
    ("unbounded", None): "unbounded hint-reuse order, as asked",
}
"""How the summary names each (`Report.hint_order`, `Report.hint_order_bounded`)
(`fhec.passes.he_order.bounded_order`: "bounded" clusters without the bound where that
fits the scratchpad; None: a report saved before the field existed)."""


class Report(BaseModel):
    """Cycles, utilization, traffic and energy of one program compiled for one target.

    Attributes:
        program, target, scheme, N: what was compiled for what.
        limb_instructions, stream_entries: sizes of the limb program and its streams.
        cycles, time_us: the schedule's length (cycles at the target's clock).
        compute_bound_cycles, bandwidth_bound_cycles, dependency_bound_cycles,
            load_aware_bound_cycles, network_bound_cycles, generator_bound_cycles, busiest_kind: the lower
            bounds (`fhec.analysis.bounds`).
        bound_ratio: cycles / the largest bound (1.0 = at the limit); binding_bound
            names that bound.
        utilization: unit kind -> busy fraction of its units over the schedule
            (``mem`` is the off-chip channel).
        offchip_bytes: traffic class -> bytes (F1 Fig. 9a: ksh, input, const and output
            compulsory / non-compulsory, intermediate loads and stores, and totals).
        onchip_bytes: bytes read and written in the scratchpad by all units; on a target
            that models the on-chip data path, the bytes the network moves (fills,
            write-backs, cluster-to-cluster copies) plus the loads and stores.
        register_file_bytes: bytes read and written in the register files (0 without them).
        network_transfers: transfer kind -> count (fill, writeback, xfer; empty without).
        binding_resources: phase ("program", then each bootstrap stage) -> the resource
            class busiest over it (`fhec.sim.resources`): a unit kind, ``hbm``, a network
            port class, the scratchpad bank ports or the register-file ports.
        peak_scratchpad_slots, scratchpad_slots: RVec slots at the peak and available.
        hint_order: the hint-reuse order asked for, "bounded" (under the scratchpad's
            working-set bound where F1's unbounded clustering would not fit it) or
            "unbounded" (F1 §4.2's always; `fhec.passes.he_order.HINT_ORDERS`).
        hint_order_bounded: whether the working-set bound shaped the order that ran
            (`fhec.passes.he_order.bound_applies`; never with "unbounded").
        policy: the off-chip eviction policy; prefetch_reserve: the fraction of the
            scratchpad prefetches left free (see `fhec.passes.offchip.schedule_offchip`);
            stage_reserves: bootstrap stage -> its own fraction, where the pipeline gave it
            one (`fhec.pipeline`, ``schedule_cycles``).
        keyswitch: key-switching method -> number of key switches using it.
        energy: when the target has energy data.
        area_mm2: the target's silicon area (`Target.area_mm2`), when it gives one.
        compile_seconds: pass name -> seconds spent in it (`fhec.pipeline`).
        compile_passes: per pass, in order: name, seconds, and the size of its output
            (HE nodes, limb instructions, events or stream entries).
        stages: for a program with a bootstrap, stage ("modraise", "subsum" when sparse,
            "cts", "evalmod", "stc") -> cycles, offchip_bytes, modular_multiplies, instructions
            (`fhec.analysis.stages`); empty otherwise.
    """

    model_config = _NO_NAN

    program: str
    target: str
    scheme: Literal["ckks", "bgv"]
    N: int = Field(ge=2, le=2**17)
    limb_instructions: int = _COUNT
    stream_entries: int = _COUNT
    cycles: int = _COUNT
    time_us: float = _AMOUNT
    compute_bound_cycles: float = _AMOUNT
    bandwidth_bound_cycles: float = _AMOUNT
    dependency_bound_cycles: float = Field(0.0, ge=0, allow_inf_nan=False)
    load_aware_bound_cycles: float = Field(0.0, ge=0, allow_inf_nan=False)
    network_bound_cycles: float = Field(0.0, ge=0, allow_inf_nan=False)
    generator_bound_cycles: float = Field(0.0, ge=0, allow_inf_nan=False)
    busiest_kind: str
    bound_ratio: float = _AMOUNT
    binding_bound: str = "compute"
    utilization: dict[str, Annotated[float, Field(ge=0, le=1 + 1e-9, allow_inf_nan=False)]]  # busy fractions
    offchip_bytes: dict[str, Annotated[int, Field(ge=0)]]
    onchip_bytes: int = _COUNT
    register_file_bytes: int = 0
    network_transfers: dict[str, Annotated[int, Field(ge=0)]] = {}
    binding_resources: dict[str, str] = {}
    peak_scratchpad_slots: int = _COUNT
    scratchpad_slots: int = _COUNT
    policy: str
    hint_order: Literal["bounded", "unbounded"] = "bounded"
    hint_order_bounded: bool | None = None
    prefetch_reserve: float = Field(0.0, ge=0, lt=1, allow_inf_nan=False)
    stage_reserves: dict[str, Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]] = {}
    keyswitch: dict[str, Annotated[int, Field(ge=0)]]
    energy: Energy | None = None
    area_mm2: float | None = Field(None, ge=0, allow_inf_nan=False)
    compile_seconds: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = {}
    compile_passes: list[dict[str, float | int | str]] = []
    stages: dict[str, dict[str, Annotated[int, Field(ge=0)]]] = {}

    @model_validator(mode="after")
    def _complete_traffic(self) -> "Report":
        missing = sorted(set(_TRAFFIC_KEYS) - set(self.offchip_bytes))
        if missing:
            raise ValueError(f"offchip_bytes lacks {missing}; it needs every traffic class {list(_TRAFFIC_KEYS)}")
        return self

    # What the plots read besides the fields (`fhec.plot.PlotData`): the streams and the
    # data schedule. Not a field, so not in the JSON and not compared.
    _plot_data: Any = PrivateAttr(None)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self.model_dump() == other.model_dump()

    __hash__ = None  # equal reports may carry different plot data

    @property
    def plot_data(self):
        """The `fhec.plot.PlotData` `fhec.compile` attached, None for a report read from JSON."""
        return self._plot_data

    def with_plot_data(self, data) -> "Report":
        """This report carrying `data` (a `fhec.plot.PlotData`) for its plots."""
        out = self.model_copy()
        out._plot_data = data
        return out

    def plot_utilization(self, *, bins: int = 200):
        """Per-unit timeline of the streams, binned (`fhec.plot.utilization`); a Figure."""
        from fhec.plot import utilization

        return utilization(self, bins=bins)

    def plot_traffic(self):
        """Off-chip traffic by class, compulsory and not, as F1 Fig. 9a (`fhec.plot.traffic`); a Figure."""
        from fhec.plot import traffic

        return traffic(self)

    def plot_scratchpad(self):
        """Scratchpad occupancy over time (`fhec.plot.scratchpad`); a Figure."""
        from fhec.plot import scratchpad

        return scratchpad(self)

    def plot_roofline(self):
        """Operational intensity against the target's roofs (`fhec.plot.roofline`); a Figure."""
        from fhec.plot import roofline

        return roofline(self)

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (``Report.model_validate_json`` reads it back)."""
        return self.model_dump_json(indent=indent)

    def summary_rows(self) -> list[tuple[str, str]]:
        """(label, value) rows shared by the text, rich and HTML views."""
        mb = 1 / 2**20
        off = self.offchip_bytes
        rows = [
            ("program", f"{self.program} ({self.scheme}, N={self.N})"),
            ("target", self.target),
            ("limb instructions", f"{self.limb_instructions:,}"),
            ("cycles", f"{self.cycles:,} ({self.time_us:,.1f} µs)"),
            ("compute bound", f"{self.compute_bound_cycles:,.0f} cycles ({self.busiest_kind})"),
            ("bandwidth bound", f"{self.bandwidth_bound_cycles:,.0f} cycles"),
            ("dependency bound", f"{self.dependency_bound_cycles:,.0f} cycles"),
            ("load-aware bound", f"{self.load_aware_bound_cycles:,.0f} cycles"),
            *([("network bound", f"{self.network_bound_cycles:,.0f} cycles")] if self.network_transfers else []),
            *([("generator bound", f"{self.generator_bound_cycles:,.0f} cycles")]
              if self.generator_bound_cycles else []),
            ("cycles / bound", f"{self.bound_ratio:.2f}× ({self.binding_bound} bound)"),
            ("utilization", ", ".join(f"{k} {v:.0%}" for k, v in self.utilization.items())),
            ("off-chip traffic", f"{off['total'] * mb:,.2f} MiB (compulsory {off['compulsory'] * mb:,.2f} MiB)"),
            (
                "  by class",
                f"KSH {(off['ksh_compulsory'] + off['ksh_noncompulsory']) * mb:,.2f}, "
                f"inputs {(off['input_compulsory'] + off['input_noncompulsory']) * mb:,.2f}, "
                f"consts {(off['const_compulsory'] + off['const_noncompulsory']) * mb:,.2f}, "
                f"outputs {(off['output_compulsory'] + off['output_noncompulsory']) * mb:,.2f}, "
                f"intermediates {(off['intermediate_loads'] + off['intermediate_stores']) * mb:,.2f} MiB",
            ),
            ("on-chip traffic", f"{self.onchip_bytes * mb:,.1f} MiB"
             + (f" (transfers: {', '.join(f'{k} {v:,}' for k, v in self.network_transfers.items())}; register "
                f"files {self.register_file_bytes * mb:,.1f} MiB)" if self.network_transfers else "")),
            ("binding resource", ", ".join(f"{k}: {v}" for k, v in self.binding_resources.items()) or "-"),
            (
                "scratchpad",
                f"peak {self.peak_scratchpad_slots} of {self.scratchpad_slots} RVec slots ({self.policy}, "
                f"{_HINT_ORDER_SUMMARY[self.hint_order, self.hint_order_bounded]}, "
                f"prefetch reserve {self.prefetch_reserve:.0%}"
                + "".join(f", {k} {v:.0%}" for k, v in self.stage_reserves.items()) + ")",
            ),
            ("key switching", ", ".join(f"{k}: {v}" for k, v in self.keyswitch.items()) or "none"),
        ]
        if self.area_mm2 is not None:
            rows.append(("area", f"{self.area_mm2:,.1f} mm²"))
        if self.energy is not None:
            e = self.energy
            rows.append(
                ("energy", f"{e.total_uj:,.1f} µJ (compute {e.compute_uj:,.1f}, on-chip {e.onchip_uj:,.1f}, "
                 f"off-chip {e.offchip_uj:,.1f})")
            )
        for name, c in self.stages.items():  # a bootstrap's stages, in program order
            rows.append((
                f"  stage {name}",
                f"{c['cycles']:,} cycles, {c['offchip_bytes'] * mb:,.2f} MiB off-chip, "
                f"{c['modular_multiplies']:,} modular multiplies",
            ))
        return rows

    def __str__(self) -> str:
        width = max(len(k) for k, _ in self.summary_rows())
        return "\n".join(f"{k:<{width}}  {v}" for k, v in self.summary_rows())

    def rich_table(self):
        """A `rich.table.Table` of the summary (what the CLI prints)."""
        from rich.table import Table

        t = Table(title=f"fhec report: {self.program} on {self.target}", show_header=False)
        t.add_column(style="bold")
        t.add_column()
        for k, v in self.summary_rows():
            t.add_row(k, v)
        return t

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self.summary_rows()
        )
        return f"<table><caption>fhec report: {html.escape(self.program)} on {html.escape(self.target)}</caption>{rows}</table>"


def unit_busy_cycles(streams: Streams, target: Target) -> np.ndarray:
    """Busy (occupied) cycles of every unit of `streams`."""
    tm = op_timing(target, streams.N)
    occ = streams.entry_occupancy(tm.occupancy)
    return np.bincount(streams.unit, weights=occ, minlength=len(streams.units))


def utilization(streams: Streams, target: Target) -> dict[str, float]:
    """Unit kind -> busy cycles of its units / (units × total cycles)."""
    busy = unit_busy_cycles(streams, target)
    total = max(streams.total_cycles, 1)
    out: dict[str, list[float]] = {}
    for u, b in zip(streams.units, busy):
        out.setdefault(u.kind, []).append(b)
    return {k: float(sum(v) / (len(v) * total)) for k, v in out.items()}


def onchip_bytes(streams: Streams, rvec_bytes: int) -> int:
    """Scratchpad bytes read and written by every entry (each touches whole RVecs); with
    the on-chip data path, the network's transfers plus the loads and stores."""
    if streams.onchip is not None:
        mem = int(np.count_nonzero((streams.op == StreamOp.LOAD) | (streams.op == StreamOp.STORE)))
        return (len(streams.onchip.transfers) + mem) * rvec_bytes
    touched = STREAM_ARITY[streams.op].astype(np.int64) + 1  # sources read + one destination written
    return int(touched.sum()) * rvec_bytes


def register_file_bytes(streams: Streams, rvec_bytes: int) -> int:
    """Register-file bytes read and written: every FU result, every source read from a
    register, every write-back and cluster-to-cluster read, every staged fill or copy."""
    plan = streams.onchip
    if plan is None:
        return 0
    fu = on_functional_units(streams.op)
    tr = plan.transfers
    n = int(np.count_nonzero(fu)) + int(np.count_nonzero(fu & (plan.reg0 >= 0)))
    n += int(np.count_nonzero(fu & (plan.reg1 >= 0)))
    n += int(np.count_nonzero(tr.kind != 0)) + int(np.count_nonzero(tr.reg[tr.kind != 1] >= 0))
    return n * rvec_bytes


def energy(streams: Streams, target: Target, data: DataSchedule, onchip: int) -> Energy | None:
    """Energy from the target's per-element op energies and per-byte data-movement energies."""
    if target.energy is None:
        return None
    counts = np.bincount(streams.op, minlength=NUM_STREAM_OPS)
    compute = sum(
        counts[op] * (target.op_energy_pj(op, streams.N) or 0.0) for op in LimbOp if counts[op]
    )
    e = target.energy
    rf = target.register_file
    rf_pj = 0.0 if rf is None else register_file_bytes(streams, target.rvec_bytes(streams.N)) * rf.pj_per_byte
    return Energy(
        compute_uj=compute / 1e6,
        onchip_uj=(onchip * e.pj_per_byte_onchip + rf_pj) / 1e6,
        offchip_uj=data.traffic.total * e.pj_per_byte_offchip / 1e6,
    )


def make_report(
    *,
    program_name: str,
    scheme: str,
    target: Target,
    data: DataSchedule,
    streams: Streams,
    bounds: Bounds,
    keyswitch: dict[str, int],
    prefetch_reserve: float = 0.0,
    stage_reserves: dict[str, float] | None = None,
    compile_seconds: dict[str, float] | None = None,
    compile_passes: list[dict] | None = None,
    he_program=None,
    hint_order: str = "bounded",
    hint_order_bounded: bool | None = None,
) -> Report:
    """Assemble the `Report` of a compiled program (`he_program`, the HE program that was
    lowered, gives the per-stage costs of a bootstrap)."""
    from fhec.analysis.stages import stage_costs

    from fhec.sim.resources import binding_resource, busy_intervals

    limb = data.program
    # bytes as the target stores words (a 32-bit program's words take 5 bytes on 40-bit Osiris)
    on = onchip_bytes(streams, target.rvec_bytes(limb.N))
    intervals = busy_intervals(streams, target)
    binding = {"program": binding_resource(intervals, 0, streams.total_cycles)}
    if he_program is not None:
        binding.update(_stage_binding(he_program, limb, streams, target, intervals))
    bound = max(bounds.cycles, 1.0)
    util = utilization(streams, target)
    util = {k: util[k] for k in sorted(util, key=lambda k: (k == MEMORY_KIND, k))}
    return Report(
        program=program_name,
        target=target.name,
        scheme=scheme,
        N=limb.N,
        limb_instructions=len(limb),
        stream_entries=len(streams),
        cycles=streams.total_cycles,
        time_us=target.seconds(streams.total_cycles) * 1e6,
        compute_bound_cycles=bounds.compute_cycles,
        bandwidth_bound_cycles=bounds.bandwidth_cycles,
        dependency_bound_cycles=bounds.dependency_cycles,
        load_aware_bound_cycles=bounds.load_aware_cycles,
        network_bound_cycles=bounds.network_cycles,
        generator_bound_cycles=bounds.generator_cycles,
        busiest_kind=bounds.busiest_kind,
        bound_ratio=streams.total_cycles / bound,
        binding_bound=bounds.binding,
        utilization=util,
        offchip_bytes=data.traffic.as_dict(),
        onchip_bytes=on,
        register_file_bytes=register_file_bytes(streams, target.rvec_bytes(limb.N)),
        network_transfers={} if streams.onchip is None else streams.onchip.transfers.counts(),
        binding_resources=binding,
        peak_scratchpad_slots=data.peak_slots,
        scratchpad_slots=data.slots,
        policy=data.policy,
        hint_order=hint_order,
        hint_order_bounded=hint_order_bounded,
        prefetch_reserve=prefetch_reserve,
        stage_reserves=stage_reserves or {},
        keyswitch=keyswitch,
        energy=energy(streams, target, data, on),
        area_mm2=target.area_mm2,
        compile_seconds=compile_seconds or {},
        compile_passes=compile_passes or [],
        stages={} if he_program is None else stage_costs(
            he_program, data, streams, op_timing(target, streams.N).occupancy, target.generated_rvecs(limb),
            target.rvec_bytes(limb.N)),
    )


def _stage_binding(he_program, limb, streams: Streams, target: Target, intervals) -> dict[str, str]:
    """Bootstrap stage -> its binding resource, over the stage's windows
    (`fhec.analysis.stages.stage_entry_windows`: its span with one bootstrap)."""
    from fhec.analysis.stages import stage_entry_windows
    from fhec.sim.resources import binding_resource_over

    names, windows = stage_entry_windows(he_program, limb, streams, op_timing(target, streams.N).occupancy)
    return {name: binding_resource_over(intervals, w) for name, w in zip(names, windows) if w}


REPORT_BOUNDS = {
    "compute": "compute_bound_cycles",
    "bandwidth": "bandwidth_bound_cycles",
    "dependency": "dependency_bound_cycles",
    "load-aware": "load_aware_bound_cycles",
    "network": "network_bound_cycles",
    "generator": "generator_bound_cycles",
}
"""A saved stream report's lower bounds: bound name -> its field (`fhec.sim.timing.Report`)."""


def report_inconsistency(report) -> str | None:
    """What makes a stream `Report` read from JSON impossible, or None: no schedule is
    shorter than a lower bound (tests/test_compile.py), and `bound_ratio` is cycles over
    the largest bound, as `fhec.sim.timing.report` computes it, and `time_us` is the
    cycles at a clock a target may have (the report keeps no clock to compare with)."""
    from fhec.backends.machine import clock_inconsistency

    bounds = {name: getattr(report, field) for name, field in REPORT_BOUNDS.items()}
    below = [f"the {name} bound ({value:,.0f})" for name, value in bounds.items() if report.cycles < value - 1e-6]
    if below:
        return f"cycles = {report.cycles:,} is below {', '.join(below)}; no schedule beats a lower bound"
    ratio = report.cycles / max(max(bounds.values()), 1.0)
    if abs(report.bound_ratio - ratio) > 1e-6 * ratio:
        return (f"bound_ratio = {report.bound_ratio:g} is not cycles / the largest bound "
                f"({report.cycles:,} / {max(bounds.values()):,.0f} = {ratio:g})")
    largest = max(bounds.values())
    if bounds.get(report.binding_bound, -1.0) < largest * (1 - 1e-9):
        binding = max(bounds, key=bounds.__getitem__)
        return f"binding_bound = {report.binding_bound!r}, but the largest bound is the {binding} bound"
    if report.busiest_kind not in report.utilization:
        return f"busiest_kind = {report.busiest_kind!r} names no unit kind of the report ({sorted(report.utilization)})"
    t = report.offchip_bytes
    # the totals as `Traffic` sums its classes
    classes = Traffic(**{f.name: t.get(f.name, 0) for f in dataclasses.fields(Traffic)})
    for total in ("compulsory", "noncompulsory"):
        if t[total] != getattr(classes, total):
            return f"offchip_bytes[{total!r}] = {t[total]:,} is not the sum of its classes ({getattr(classes, total):,})"
    if t["total"] != t["compulsory"] + t["noncompulsory"]:
        return f"offchip_bytes['total'] = {t['total']:,} is not compulsory + noncompulsory"
    if report.peak_scratchpad_slots > report.scratchpad_slots:
        return f"peak_scratchpad_slots = {report.peak_scratchpad_slots:,} exceeds the {report.scratchpad_slots:,} slots"
    return clock_inconsistency(report.cycles, report.time_us)


def load_report(path) -> "Report":
    """Read a ``report.json`` written by `Compiled.write` (``fhec report``).

    Raises `ReportFormatError` naming the file and the first bad field for a file that
    cannot be read, is not UTF-8 JSON, or holds impossible values (negative cycles, cycles
    below its own lower bounds: `report_inconsistency`).
    """
    from fhec.errors import ReportFormatError

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ReportFormatError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ReportFormatError(f"{path} is not a text file; pass the report.json that `fhec compile --out` wrote") from None
    try:
        report = Report.model_validate_json(text)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        at = f"field '{field}': " if field else ""
        raise ReportFormatError(f"{path} is not an fhec report (or a corrupt one): {at}{first['msg']}") from None
    problem = report_inconsistency(report)
    if problem:  # an edited or corrupt file: printing it would show impossible figures
        raise ReportFormatError(f"{path} is a corrupt fhec report: {problem}; recompile to get a report.json "
                                f"(fhec compile --out DIR)")
    return report
