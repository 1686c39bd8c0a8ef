"""The papers' benchmark suites: every row of F1 Table 3 and of Osiris Table III as an fhec
program at the paper's size, compiled for the paper's target and set beside the paper's
time (`fhec bench --suite f1|osiris`, `docs/suites.md`).

A row's program lives in an example module (``fhec/examples/NAME.py``, package data)
that exposes ``suite_rows() -> list[dict]``, one dict per row (the keys of `SuiteRow`).
`SUITE_MODULES` lists those modules: adding a row is adding a module name there.
`PAPER_ROWS` lists each paper's rows, so that a row no module provides yet still shows,
as "not built", rather than vanishing from the table.

A row that cannot run yet (it needs bootstrapping, or a target fhec does not ship) shows
its reason instead of a number; nothing here ever prints a time it did not measure.
"""

from __future__ import annotations

import importlib.util
import resource
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fhec.errors import FhecError, SuiteError, TargetError

SUITES = ("f1", "osiris")
"""The suite names `fhec bench --suite` accepts (a benchmark module per suite)."""

SUITE_MODULES = ("lola_mnist", "lola_cifar", "helr", "db_lookup", "bootstrap", "osiris_nets", "resnet20",
                 "sorting")
"""Example modules (``fhec/examples/NAME.py``) whose ``suite_rows()`` give the rows."""


@dataclass(frozen=True)
class PaperRow:
    """A row of a paper's table: what must appear even before any module provides it."""

    suite: str
    name: str
    variant: str | None
    paper_ms: float | None
    paper_source: str
    missing: str = "not built"
    paper_limbs: int | None = None
    """The RNS limbs the paper's program starts with (F1's L, F1 §2 and §7), where it says."""


PAPER_ROWS: tuple[PaperRow, ...] = (
    PaperRow("f1", "LoLa-MNIST unencrypted weights", None, 0.17, "F1 Table 3", paper_limbs=4),
    PaperRow("f1", "LoLa-MNIST encrypted weights", None, 0.36, "F1 Table 3", paper_limbs=6),
    PaperRow("f1", "LoLa-CIFAR unencrypted weights", None, 241.0, "F1 Table 3", paper_limbs=8),
    PaperRow("f1", "Logistic regression", None, 1.15, "F1 Table 3", paper_limbs=16),
    PaperRow("f1", "DB lookup", None, 4.36, "F1 Table 3", paper_limbs=17),
    PaperRow("f1", "BGV bootstrapping", None, 2.40, "F1 Table 3",
             "not built: needs BGV bootstrapping (Sheriff-Peikert, non-packed)"),
    PaperRow("f1", "CKKS bootstrapping", None, 1.30, "F1 Table 3"),
) + tuple(
    PaperRow("osiris", name, variant, ms, "Osiris Table III")
    for name, times in (("MLP", (0.124, 0.125, 0.130)), ("LoLa", (0.0955, 0.0967, 0.0979)),
                        ("LeNet", (0.676, 0.663, 0.780)), ("HELR-1024", (2.67, 2.61, 2.46)),
                        ("ResNet-20", (101.0, 96.3, 92.4)), ("Sorting", (1260.0, 1200.0, 1140.0)))
    for variant, ms in zip(("NH", "SH", "DH"), times)
) + tuple(
    PaperRow("osiris", "Bootstrap", variant, ms, "Osiris Table III")
    for variant, ms in zip(("NH", "SH", "DH"), (3.00, 2.82, 2.70))
) + tuple(
    PaperRow("osiris", name, variant, ns * 1e-6, "Osiris Table III")
    for name, times in (("T_mult,a/s", (10.5, 9.89, 9.58)), ("T_Mv:128,a/s", (18.9, 17.3, 17.4)))
    for variant, ns in zip(("NH", "SH", "DH"), times)
)
"""Every row of F1 Table 3 and the Osiris Table III rows fhec's suite covers (1 TB/s)."""


@dataclass(frozen=True)
class SuiteRow:
    """One row: a program at the paper's size, its target and the paper's time.

    `build` returns the `fhec.Program` (called only when the row runs); `needs` is None or
    why the row cannot run yet ("needs bootstrapping"); `note` states how the program
    departs from the paper's formulation.
    """

    suite: str
    name: str
    variant: str | None
    target: str
    paper_ms: float | None
    paper_source: str
    build: Callable[[], Any] | None
    needs: str | None = None
    note: str = ""

    @staticmethod
    def from_dict(d: dict, module: str) -> "SuiteRow":
        """Validate one ``suite_rows()`` dict of example `module`; `SuiteError` names the
        module and the bad key."""
        required = ("suite", "name", "target", "build")
        missing = [k for k in required if k not in d]
        unknown = sorted(set(d) - set(SuiteRow.__dataclass_fields__))
        if missing or unknown:
            raise SuiteError(f"{module}.suite_rows(): a row lacks {missing} or has unknown keys {unknown}; "
                             f"a row holds {', '.join(SuiteRow.__dataclass_fields__)}.")
        if d["suite"] not in SUITES:
            raise SuiteError(f"{module}.suite_rows(): suite {d['suite']!r} is not one of {', '.join(SUITES)}.")
        if d.get("build") is None and not d.get("needs"):
            raise SuiteError(f"{module}.suite_rows(): row {d['name']!r} has no build function and no 'needs' "
                             f"reason; give one of them.")
        return SuiteRow(suite=d["suite"], name=d["name"], variant=d.get("variant"), target=d["target"],
                        paper_ms=d.get("paper_ms"), paper_source=d.get("paper_source", ""), build=d.get("build"),
                        needs=d.get("needs"), note=d.get("note", ""))


@dataclass(frozen=True)
class Windows:
    """What a row's ``build`` may return instead of one program: consecutive windows of the
    workload run back to back, as ``parts`` of (program, how many times it runs). A
    workload too large for one compile (Osiris's bitonic sort: 629 bootstraps) whose
    windows repeat (its stages, by the level they enter at) compiles each distinct window
    once. The row's cycles, traffic and limb instructions are the sums of each part's
    times its count. A window's loads cannot overlap the previous window's work, so the
    sum is at least what one compile of the whole would schedule."""

    name: str
    parts: tuple[tuple[Any, int], ...]
    note: str = ""
    per: int = 1
    """The row's time is the windows' sum over this many units: an amortized figure, as
    Osiris's T_mult,a/s divides a bootstrap and the multiplications it enables by the
    slots and levels they serve. Cycles, traffic and limb instructions stay the sums."""

    def __post_init__(self):
        from fhec.frontend import Program

        def count(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and v >= 1

        ok = isinstance(self.parts, tuple) and len(self.parts) > 0 and all(
            isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], Program) and count(part[1])
            for part in self.parts)
        if not ok:
            raise SuiteError(f"Windows {self.name!r}: parts must be a non-empty tuple of (fhec.Program, count >= 1) "
                             f"pairs, got {self.parts!r:.200}.")
        if not count(self.per):
            raise SuiteError(f"Windows {self.name!r}: per must be a positive integer, got {self.per!r}.")

    @property
    def runs(self) -> int:
        """How many windows run in all."""
        return sum(count for _, count in self.parts)


def _import_example(path: Path):
    """Import an example file by path (the examples directory is data, not a package; its
    files import their neighbours by name, so the directory goes on sys.path)."""
    name = f"_fhec_suite_{path.stem}_{zlib.crc32(str(path).encode()):08x}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses (and pickling) look their module up by name
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        if sys.path and sys.path[0] == str(path.parent):
            sys.path.pop(0)
    return module


def example_rows(modules: tuple[str, ...] = SUITE_MODULES, directory: Path | None = None) -> list[SuiteRow]:
    """The rows every listed example module gives (a module not present yet gives none)."""
    from fhec.bundled_examples import examples_dir

    directory = Path(directory) if directory is not None else examples_dir()
    rows: list[SuiteRow] = []
    for name in modules:
        path = directory / f"{name}.py"
        if not path.is_file():
            continue
        module = _import_example(path)
        if not hasattr(module, "suite_rows"):
            raise SuiteError(f"{path} is listed in fhec.suites.SUITE_MODULES but defines no suite_rows().")
        rows += [SuiteRow.from_dict(d, name) for d in module.suite_rows()]
    return rows


def suite_rows(suite: str, rows: list[SuiteRow] | None = None) -> list[SuiteRow]:
    """The rows of `suite` in the paper's order: those the example modules (or `rows`)
    give, then a "not built" row for each paper row no module gives."""
    if suite not in SUITES:
        raise SuiteError(f"no suite {suite!r}; choose one of {', '.join(SUITES)}.")
    given = [r for r in (example_rows() if rows is None else rows) if r.suite == suite]
    order = {(p.name, p.variant): i for i, p in enumerate(x for x in PAPER_ROWS if x.suite == suite)}
    have = {(r.name, r.variant) for r in given}
    placeholders = [SuiteRow(p.suite, p.name, p.variant, "none", p.paper_ms, p.paper_source, None, p.missing)
                    for p in PAPER_ROWS if p.suite == suite and (p.name, p.variant) not in have]
    return sorted(given + placeholders, key=lambda r: order.get((r.name, r.variant), len(order)))


def _missing_target(name: str) -> str | None:
    from fhec.backends.target import load_target

    try:
        load_target(name)
    except TargetError:
        return f"needs the {name} target"
    return None


_MIB = 1 / 2**20

# Off-chip traffic by what it carries (F1 Fig. 9a's classes, grouped as the suite table
# shows them): key-switch hints, ciphertexts (inputs, outputs, spilled intermediates), and
# plaintexts (weights, masks and other constants).
TRAFFIC_GROUPS: dict[str, tuple[str, ...]] = {
    "keys_MiB": ("ksh_compulsory", "ksh_noncompulsory"),
    "ciphertexts_MiB": ("input_compulsory", "input_noncompulsory", "output_compulsory", "output_noncompulsory",
                        "intermediate_loads", "intermediate_stores"),
    "plaintexts_MiB": ("const_compulsory", "const_noncompulsory"),
}


RESULT_KEYS = ("name", "variant", "target", "fhec_ms", "paper_ms", "ratio", "N", "levels", "limbs", "paper_limbs", "cycles",
               "cycles_per_bound", "binding", *TRAFFIC_GROUPS, "limb_instructions", "compile_s", "peak_rss_GiB",
               "status", "note")
"""Every result dict's keys, in the order docs/benchmarks.md shows them."""


def _binding(report) -> str:
    """The binding resource, named from the bound closest to the schedule
    (`fhec.analysis.bounds`): the busiest unit kind, the off-chip channel, or the chain
    of dependent operations."""
    return {
        "compute": f"compute ({report.busiest_kind})",
        "bandwidth": "off-chip bandwidth",
        "load-aware": "off-chip loads, then the work waiting on them",
        "dependency": "dependency chain",
        "generator": "the on-chip key generator",
    }.get(report.binding_bound, report.binding_bound)


_PAPER_LIMBS = {(p.suite, p.name, p.variant): p.paper_limbs for p in PAPER_ROWS}


def run_row(row: SuiteRow) -> dict:
    """Build and compile one row; a dict of the suite table's columns. A row that cannot
    run gives its reason in ``status``; an FhecError while building or compiling is
    reported in ``status`` too (the suite goes on with the next row)."""
    out: dict[str, Any] = dict.fromkeys(RESULT_KEYS)
    out.update(name=row.name, variant=row.variant, target=row.target, paper_ms=row.paper_ms, note=row.note,
               paper_limbs=_PAPER_LIMBS.get((row.suite, row.name, row.variant)))
    reason = row.needs or _missing_target(row.target)
    if reason:
        return {**out, "status": reason}
    import fhec

    start = time.perf_counter()
    try:
        built = row.build()
        parts = built.parts if isinstance(built, Windows) else ((built, 1),)
        reports = [(fhec.compile(program, row.target).report, count) for program, count in parts]
    except FhecError as e:
        return {**out, "status": f"error: {e}"}
    seconds = time.perf_counter() - start
    program, r = parts[0][0], reports[0][0]
    cycles = sum(rep.cycles * count for rep, count in reports)
    per = built.per if isinstance(built, Windows) else 1
    ms = sum(rep.time_us * count for rep, count in reports) / 1000 / per
    # the binding resource of the windows that take most of the time
    slowest = max(reports, key=lambda rc: rc[0].cycles * rc[1])[0]
    out.update(
        fhec_ms=ms,
        ratio=ms / row.paper_ms if row.paper_ms else None,
        N=r.N,
        levels=program.params.levels,
        limbs=program.params.max_limbs,
        cycles=cycles,
        cycles_per_bound=cycles / sum(rep.cycles / rep.bound_ratio * count for rep, count in reports),
        binding=_binding(slowest),
        **{k: sum(rep.offchip_bytes[c] * count for rep, count in reports for c in classes) * _MIB
           for k, classes in TRAFFIC_GROUPS.items()},
        limb_instructions=sum(rep.limb_instructions * count for rep, count in reports),
        compile_s=seconds,
        peak_rss_GiB=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        status="ok",
    )
    if isinstance(built, Windows) and built.note:
        out["note"] = f"{row.note}; {built.note}" if row.note else built.note
    return out


def run_suite(suite: str, rows: list[SuiteRow] | None = None, progress: Callable[[str], None] | None = None,
              ) -> list[dict]:
    """Run every row of `suite` (`suite_rows`) in order; `progress` hears each row's name."""
    results = []
    for row in suite_rows(suite, rows):
        if progress is not None:
            progress(f"{row.name}{f' ({row.variant})' if row.variant else ''}: {row.needs or f'on {row.target} ...'}")
        results.append(run_row(row))
    return results


COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "row"), ("variant", "variant"), ("target", "target"), ("fhec_ms", "fhec ms"),
    ("paper_ms", "paper ms"), ("ratio", "ratio"), ("limbs", "limbs"), ("paper_limbs", "paper limbs"),
    ("cycles_per_bound", "cycles / bound"),
    ("binding", "binding"), ("keys_MiB", "keys MiB"), ("ciphertexts_MiB", "ciphertexts MiB"),
    ("plaintexts_MiB", "plaintexts MiB"), ("compile_s", "compile s"), ("status", "status"),
)
"""The suite table's columns (result key, heading), as `suite_table` prints them."""


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def suite_table(suite: str, results: list[dict]):
    """A `rich.table.Table` of a suite's results beside the paper's times."""
    from rich.table import Table

    table = Table(title=f"fhec bench --suite {suite}")
    for key, heading in COLUMNS:
        table.add_column(heading, justify="right" if key.endswith(("ms", "MiB", "_s", "ratio", "bound")) else "left")
    for r in results:
        table.add_row(*(_cell(r.get(key)) for key, _ in COLUMNS))
    return table


def benchmark_rows(suite: str, rows: list[SuiteRow] | None = None) -> list[dict]:
    """Run `suite`, print its table, and return its rows in the benchmarks/run.py format
    (each with ``group``), for a ``benchmarks/bench_suite_*.py`` module."""
    from rich.console import Console

    console = Console(width=max(Console().width, 200))  # the table has 13 columns; never fold them to 80
    results = run_suite(suite, rows, progress=lambda s: console.print(f"[dim]{s}[/dim]"))
    console.print(suite_table(suite, results))
    return [{"group": f"suite {suite}", **r} for r in results]
