"""`fhec.explore` and ``fhec explore``: design-space sweeps, one compile per target variant,
on Dask.

A sweep varies fields of a target (dotted paths into its TOML: ``scratchpad.capacity_bytes``,
``memory.bandwidth_gb_s``, ``cluster.count``, ``cluster.units.ntt.count``; a unit is
picked by its kind) over lists of values, compiles the program for every combination
(the cartesian product), and collects one table row per variant: the varied values,
the cycles and bounds, the off-chip traffic, and the energy and area where the target
gives them (F1 §8.4 and Fig. 11 sweep configurations this way; the area model is
`fhec.backends.target.Area`).

The compiles run on Dask (``pip install 'fhec[explore]'``): a `LocalCluster` of worker
processes on this machine by default, or an existing distributed cluster given by its
scheduler address. Each task receives the program as its JSON (`HeProgram.to_json`) and
the target variant as a dict, so nothing but data crosses to the workers, and returns
its row; rows come back in variant order. ``scheduler="serial"`` runs the same tasks
in this process, one after the other, without Dask. A compile is deterministic, so the
table does not depend on where the tasks ran.
"""

from __future__ import annotations

import csv
import logging
import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from fhec.errors import FhecError, InvalidArgumentError, MissingExtraError, OutputDirectoryError

_SIZE_SUFFIXES = {
    "": 1, "b": 1,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
}
"""Suffix (lowercase) of a value -> its multiplier: ``16MiB`` = 16 * 2**20."""

_VALUE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

METRICS = ("cycles", "time_us", "bound_ratio", "binding_bound", "offchip_mib", "noncompulsory_mib",
           "peak_scratchpad_slots", "scratchpad_slots", "energy_uj", "area_mm2")
"""The columns every row has after the varied fields (energy and area None when the
target gives none)."""


class ExploreError(FhecError):
    """A sweep specification is malformed (a ``--vary`` without values, an unknown field)."""


TABLE_FORMATS = {".csv": "to_csv", ".parquet": "to_parquet"}
"""Table file suffix -> the `ExploreResult` method that writes it (`ExploreResult.write`)."""


def check_table_path(path: str | Path, suffixes=tuple(TABLE_FORMATS)) -> str:
    """The suffix of a table file `path`, checked before a sweep runs (the CLI calls it
    before compiling anything): `ExploreError` unless it is one of `suffixes` (a .txt or
    .xlsx would hold text of another format), `MissingExtraError` for .parquet without
    pyarrow."""
    import importlib.util

    suffix = Path(path).suffix.lower()
    if suffix not in suffixes:
        raise ExploreError(f"{path}: write the table to a {' or '.join(suffixes)} file (not {suffix or 'no suffix'}).")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise MissingExtraError("Parquet output needs pyarrow: pip install pyarrow, or write CSV (a .csv path).")
    return suffix


def check_plottable(target) -> None:
    """`ExploreError` if `plot_pareto` would have nothing to draw for a sweep of `target` (a
    name, path or `Target`): it gives neither ``[area]`` nor ``[energy]``, and no variant
    adds a table. Checked before a sweep runs, like the output paths."""
    from fhec.backends.target import Target, load_target

    base = target if isinstance(target, Target) else load_target(target)
    if isinstance(base, Target) and base.area is None and base.energy is None:
        raise ExploreError(f"target {base.name} gives neither area nor energy: no Pareto front to plot; "
                           f"drop --plot (the table still has the cycles), or give the target [area] or [energy].")


def parse_value(text: str | int | float) -> int | float:
    """``"16MiB"`` -> 16777216, ``"512"`` -> 512, ``"0.5"`` -> 0.5 (a size suffix scales
    the number: B, KiB, MiB, GiB, TiB, or the decimal kB, MB, GB, TB)."""
    if isinstance(text, bool):
        raise ExploreError(f"{text!r} is not a number; give numbers such as 512 or 16MiB.")
    if isinstance(text, (int, float)):
        return text
    m = _VALUE.match(str(text))
    if re.match(r"^\s*-", str(text)):
        # the pattern takes no sign: say what is wrong rather than "not a number"
        raise ExploreError(f"{text!r} is negative; target fields take sizes, counts and rates of 0 or more.")
    if m and m.group(2).endswith("b"):  # "Mib", "kb": a lowercase b is bits, target fields are bytes
        raise ExploreError(f"{text!r}: a lowercase b means bits, but sizes here are bytes; write "
                           f"{m.group(1)}{m.group(2)[:-1]}B (suffixes: B, KiB, MiB, GiB, TiB, kB, MB, GB, TB).")
    if not m or m.group(2).lower() not in _SIZE_SUFFIXES:
        raise ExploreError(f"{text!r} is not a number; give numbers such as 512, 0.5 or 16MiB "
                           f"(suffixes: B, KiB, MiB, GiB, TiB, kB, MB, GB, TB).")
    number, scale = m.group(1), _SIZE_SUFFIXES[m.group(2).lower()]
    value = float(number) * scale
    return int(value) if value.is_integer() and ("." not in number or scale > 1) else value


def parse_vary(spec: str) -> tuple[str, list[int | float]]:
    """``"PATH=V1,V2,..."`` -> (PATH, [values]) (what ``--vary`` takes)."""
    path, sep, values = str(spec).partition("=")
    items = [v for v in values.split(",") if v.strip()]
    if not sep or not path.strip() or not items:
        raise ExploreError(f"--vary {spec!r}: write FIELD=V1,V2,... such as scratchpad.capacity_bytes=16MiB,32MiB.")
    return path.strip(), [parse_value(v) for v in items]


def _set_path(data: dict, path: str, value: Any) -> None:
    """Set the dotted `path` of a target dict; a list of units is indexed by kind."""
    node: Any = data
    keys = path.split(".")
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, (list, tuple)):
            kinds = [getattr(u.get("kind"), "value", u.get("kind")) if isinstance(u, dict) else None for u in node]
            match = [u for u, kind in zip(node, kinds) if kind == key]
            if not match:
                kinds = ", ".join(str(k) for k in kinds)
                raise ExploreError(f"--vary {path}: no unit of kind {key!r} (the target has {kinds}).")
            if last:
                raise ExploreError(f"--vary {path}: name a field of the {key} unit, such as {path}.count.")
            node = match[0]
            continue
        if node is None:  # an optional table the target leaves out (model_dump gives None)
            where = ".".join(keys[:i])
            raise ExploreError(f"--vary {path}: the target has no [{where}] table (it is optional); write a target "
                               f"file with one to vary its fields (docs/targets.md).")
        if not isinstance(node, dict) or key not in node:
            fields = ", ".join(sorted(node)) if isinstance(node, dict) else "none"
            where = ".".join(keys[:i]) or "the target"
            raise ExploreError(f"--vary {path}: {where} has no field {key!r} (it has: {fields}).")
        if last:
            if isinstance(node[key], dict) or (isinstance(node[key], (list, tuple)) and node[key]
                                               and all(isinstance(v, dict) for v in node[key])):
                raise ExploreError(f"--vary {path} names a table; name one of its fields "
                                   f"(a unit's by its kind: cluster.units.ntt.count).")
            if isinstance(node[key], (list, tuple)):
                raise ExploreError(f"--vary {path} names a list; a sweep varies numbers: counts, sizes, rates "
                                   f"and latencies.")
            node[key] = value
        else:
            node = node[key]


def variants(base, vary: Mapping[str, Sequence]) -> list[tuple[dict[str, Any], Any]]:
    """(settings, `Target`) for every combination of `vary` (path -> values) applied to
    `base`, in cartesian-product order (the last path varies fastest). Each variant is
    named ``base[path=value,...]`` and validated as a target file would be."""
    from fhec.backends.target import target_from_dict

    if not vary:
        raise ExploreError("a sweep needs at least one --vary FIELD=V1,V2,...")
    paths = list(vary)
    for p in paths:
        if isinstance(vary[p], (str, bytes, int, float)) or not vary[p]:
            raise ExploreError(f"vary[{p!r}] = {vary[p]!r:.40}: give a non-empty list of values, such as "
                               f"['16MiB', '32MiB'].")
    values = [[parse_value(v) for v in vary[p]] for p in paths]
    out = []
    for combo in itertools.product(*values):
        settings = dict(zip(paths, combo))
        data = base.model_dump()
        for p, v in settings.items():
            _set_path(data, p, v)
        data["name"] = f"{base.name}[{','.join(f'{p}={v}' for p, v in settings.items())}]"
        out.append((settings, target_from_dict(data, data["name"])))
    return out


def compile_row(program_json: str, target_dict: dict, settings: dict, keyswitch: str | None, policy: str) -> dict:
    """One task of a sweep: compile the program (its JSON) for one target variant (its
    dict) and return the table row. Runs on a Dask worker; imports what it needs."""
    from fhec.backends.target import Target
    from fhec.compiler import compile as compile_program
    from fhec.ir.he import HeProgram

    program = HeProgram.from_json(program_json)
    target = Target.model_validate(target_dict)
    r = compile_program(program, target, keyswitch=keyswitch, policy=policy, progress=False).report
    mib = 1 / 2**20
    return {
        **settings,
        "cycles": r.cycles,
        "time_us": r.time_us,
        "bound_ratio": r.bound_ratio,
        "binding_bound": r.binding_bound,
        "offchip_mib": r.offchip_bytes["total"] * mib,
        "noncompulsory_mib": r.offchip_bytes["noncompulsory"] * mib,
        "peak_scratchpad_slots": r.peak_scratchpad_slots,
        "scratchpad_slots": r.scratchpad_slots,
        "energy_uj": None if r.energy is None else r.energy.total_uj,
        "area_mm2": r.area_mm2,
    }


def pareto_front(rows: Sequence[Mapping], x: str, y: str = "cycles") -> list[int]:
    """Indices of the rows no other row beats on both `x` and `y` (lower is better), in
    ascending `x`; rows without an `x` are left out."""
    pts = sorted((r[x], r[y], i) for i, r in enumerate(rows) if r.get(x) is not None)
    front, best = [], float("inf")
    for xv, yv, i in pts:
        if yv < best:
            front.append(i)
            best = yv
    return front


@dataclasses.dataclass(frozen=True)
class ExploreResult:
    """The table of a sweep: one row (a dict) per target variant, in variant order.

    Attributes:
        program, target: what was swept.
        varied: the varied field paths (the first columns).
        rows: the table.
    """

    program: str
    target: str
    varied: tuple[str, ...]
    rows: tuple[dict, ...]

    def __repr__(self) -> str:
        return f"<ExploreResult {self.program!r}: {len(self.rows)} variants of {self.target} over {', '.join(self.varied)}>"

    @property
    def columns(self) -> list[str]:
        return [*self.varied, *METRICS]

    def to_csv(self, path: str | Path) -> Path:
        """Write the table as CSV (empty cells for missing energy or area) to a ``.csv``
        path; `ExploreError` for another suffix."""
        check_table_path(path, (".csv",))
        out = Path(path)
        try:
            with open(out, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=self.columns)
                w.writeheader()
                w.writerows(self.rows)
        except OSError as e:
            raise OutputDirectoryError(f"cannot write {out}: {e.strerror or e}") from None
        return out

    def to_parquet(self, path: str | Path) -> Path:
        """Write the table as Parquet (needs pyarrow, which fhec does not install) to a
        ``.parquet`` path; `ExploreError` for another suffix."""
        check_table_path(path, (".parquet",))
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise MissingExtraError("Parquet output needs pyarrow: pip install pyarrow, or write CSV (a .csv path).") from None
        table = pa.table({c: [r.get(c) for r in self.rows] for c in self.columns})
        out = Path(path)
        try:
            pq.write_table(table, out)
        except OSError as e:
            raise OutputDirectoryError(f"cannot write {out}: {e}") from None
        return out

    def write(self, path: str | Path) -> Path:
        """`to_parquet` for a ``.parquet`` path, `to_csv` for a ``.csv`` one; ExploreError
        for another suffix (a .xlsx would hold CSV text)."""
        return getattr(self, TABLE_FORMATS[check_table_path(path)])(path)

    def _cells(self, row: dict) -> list[str]:
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
            return f"{v:,}" if isinstance(v, int) else str(v)

        return [fmt(row.get(c)) for c in self.columns]

    def rich_table(self):
        """A `rich.table.Table` of the rows, Pareto-optimal ones (cycles vs area) in bold."""
        from rich.table import Table

        front = set(pareto_front(self.rows, "area_mm2"))
        t = Table(title=f"fhec explore: {self.program} on {len(self.rows)} variants of {self.target}")
        for c in self.columns:
            t.add_column(c, justify="left" if c == "binding_bound" else "right")
        for i, row in enumerate(self.rows):
            t.add_row(*self._cells(row), style="bold" if i in front else None)
        return t

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in self._cells(r)) + "</tr>" for r in self.rows)
        return f"<table><caption>fhec explore: {html.escape(self.program)} on {html.escape(self.target)}</caption>" \
               f"<tr>{head}</tr>{body}</table>"

    def plot_pareto(self):
        """Cycles against area and against energy, the Pareto front of each drawn as a
        line (panels only for the quantities the target gives); a Figure."""
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise MissingExtraError("fhec's plots need matplotlib, which this installation lacks: pip install matplotlib") from None
        from fhec.plot._figure import new_figure

        axes_of = [(k, label) for k, label in (("area_mm2", "area (mm²)"), ("energy_uj", "energy (µJ)"))
                   if any(r.get(k) is not None for r in self.rows)]
        if not axes_of:
            raise ExploreError(f"target {self.target} gives neither area nor energy: no Pareto front to plot; "
                               f"the table still has the cycles.")
        fig = new_figure(6.0 * len(axes_of), 4.5)
        for ax, (key, label) in zip(fig.subplots(1, len(axes_of), squeeze=False)[0], axes_of):
            xs = [r[key] for r in self.rows if r.get(key) is not None]
            ys = [r["cycles"] for r in self.rows if r.get(key) is not None]
            ax.scatter(xs, ys, color="#9aa5b1", label="variants")
            front = pareto_front(self.rows, key)
            ax.plot([self.rows[i][key] for i in front], [self.rows[i]["cycles"] for i in front], "o-",
                    color="#c44e52", label="Pareto front")
            ax.set_xlabel(label)
            ax.set_ylabel("cycles")
            ax.set_yscale("log")
            ax.legend()
        fig.suptitle(f"{self.program}: {len(self.rows)} variants of {self.target}")
        return fig


def _dask_rows(tasks: list[tuple], scheduler: str | None, workers: int) -> list[dict]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MissingExtraError("fhec explore runs on Dask: pip install 'fhec[explore]' "
                                "(or pass scheduler='serial' to compile here, one variant after another).") from None
    if scheduler is None:
        try:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, silence_logs=logging.ERROR)
        except RuntimeError as e:  # worker processes that could not start (spawn needs an importable __main__)
            raise ExploreError(f"could not start a local Dask cluster of {workers} worker processes ({e}); run from a "
                               f"script file or the fhec command, or pass scheduler='serial'.") from None
        with cluster, Client(cluster) as client:
            return client.gather(client.map(compile_row, *zip(*tasks), pure=False))
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ExploreError(f"cannot reach the Dask scheduler at {scheduler!r} ({e}); start one with "
                           f"`dask scheduler` and workers with `dask worker {scheduler}`, or omit --scheduler.") from None
    with client:
        return client.gather(client.map(compile_row, *zip(*tasks), pure=False))


def explore(program, target="f1", vary: Mapping[str, Sequence] | Sequence[str] = (), *,
            scheduler: str | None = None, workers: int = 2, keyswitch: str | None = None,
            policy: str = "belady") -> ExploreResult:
    """Compile `program` for every variant of `target` and tabulate the results.

    Args:
        program: a `fhec.Program` (or an `HeProgram`).
        target: a shipped target name, a TOML path or a `Target`.
        vary: field path -> values (numbers, or strings such as ``"16MiB"``), or a list of
            ``"PATH=V1,V2"`` strings as ``--vary`` takes them.
        scheduler: None: a local Dask cluster of `workers` processes (on 127.0.0.1);
            an address (``tcp://host:8786``): that cluster's scheduler; ``"serial"``:
            this process, without Dask.
        workers: worker processes of the local cluster.
        keyswitch, policy: as for `fhec.compile`.

    Returns an `ExploreResult` (`rows`, `to_csv`, `rich_table`, `plot_pareto`). Raises
    `ExploreError` for a malformed sweep, `TargetError` for a variant that is not a valid
    target, `MissingExtraError` without Dask, and what compiling raises.
    """
    from fhec.backends.target import Target
    from fhec.errors import TargetError
    from fhec.passes.he_rewrite import as_he
    from fhec.passes.offchip.driver import MIN_SLOTS
    from fhec.pipeline import options_for
    from fhec.validate import as_int

    if isinstance(vary, (list, tuple)):
        parsed = [parse_vary(v) for v in vary]
        twice = sorted({path for path, _ in parsed if sum(p == path for p, _ in parsed) > 1})
        if twice:  # a dict would keep the last silently
            raise ExploreError(f"--vary {twice[0]} is given more than once; list all its values in one "
                               f"--vary {twice[0]}=V1,V2,...")
        vary = dict(parsed)
    if not isinstance(vary, Mapping):
        raise InvalidArgumentError(f"vary = {vary!r:.40}: give a dict of field path -> values, or 'PATH=V1,V2' strings.")
    workers = as_int(workers, "workers", min=1)
    base = options_for(target).target
    if not isinstance(base, Target):
        raise ExploreError(f"target {base.name!r} is an ISA machine; fhec explore sweeps stream targets (f1, tiny, "
                           f"or a target TOML without an `isa` key).")
    he = as_he(program)
    base.check_ring_degree(he.params.N)
    program_json = he.to_json()
    found = variants(base, vary)
    for settings, t in found:  # what only the program's N decides, before anything compiles
        t.check_ring_degree(he.params.N)
        if t.scratchpad_rvecs(he.params.N) < MIN_SLOTS:
            raise TargetError(
                f"variant {t.name}: a scratchpad of {t.scratchpad.capacity_bytes} bytes holds "
                f"{t.scratchpad_rvecs(he.params.N)} RVecs of {t.rvec_bytes(he.params.N)} bytes at N = "
                f"{he.params.N}; scheduling needs at least {MIN_SLOTS}. Sweep scratchpad.capacity_bytes from "
                f"{MIN_SLOTS * t.rvec_bytes(he.params.N)} bytes up.")
    tasks = [(program_json, t.model_dump(), settings, keyswitch, policy) for settings, t in found]
    if scheduler == "serial":
        rows = [compile_row(*task) for task in tasks]
    else:
        rows = _dask_rows(tasks, scheduler, workers)
    return ExploreResult(he.name, base.name, tuple(vary), tuple(rows))
