"""The ``fhec`` command line: a thin click layer over importable functions.

    fhec show FILE.py[:NAME]          print the typed HE IR of a program
    fhec check FILE.py[:NAME] ...     evaluate under encryption vs fhec.reference
    fhec stats FILE.py[:NAME]         limb-instruction counts and data sizes
    fhec compile FILE.py[:NAME] --target f1 --out DIR [--dump-after PASS]
                 [--trace FILE.json] [--plots DIR]
                                      per-unit streams (text + binary) and report.json,
                                      a Chrome trace, PNG plots
    fhec explore FILE.py[:NAME] --target f1 --vary FIELD=V1,V2 [--vary ...]
                                      compile every target variant on Dask; a table
    fhec run FILE.py[:NAME] --target f1
                                      compile, execute the streams on random inputs,
                                      compare with fhec.reference
    fhec passes                       the compiler's passes, in order
    fhec targets [FILE.toml]          the shipped targets (or check a target file)
    fhec report DIR/report.json       print a saved report
    fhec bench [--quick] [NAMES]      run benchmarks/ (from a source checkout)
    fhec bench --suite f1|osiris      a paper's suite beside the paper's times (fhec.suites)
    fhec examples [copy DIR]          the shipped example programs / write them into DIR
    fhec --version                    the installed version

A program file exposes `fhec.Program` objects (``p = fhec.Program(...)``, or functions
decorated with ``@fhec.program``, which are Programs once decorated). ``:NAME`` picks
one by variable or program name; without it the file must hold exactly one.

A `FhecError` prints as ``error: <message>`` on stderr, without a traceback, exit 2.
``check`` exits 1 when an output does not match the reference.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import traceback
import zlib
from dataclasses import dataclass

import click

from fhec.errors import FhecError, InternalError, InvalidArgumentError, ProgramFileError


class ProgramNotFoundError(FhecError):
    """A program file does not hold the requested program."""


@dataclass(frozen=True)
class ProgramRef:
    """``FILE.py[:NAME]`` split into its parts."""

    path: str
    name: str | None

    @staticmethod
    def parse(spec: str) -> "ProgramRef":
        path, sep, name = spec.rpartition(":")
        if sep and path.endswith(".py") and name and os.sep not in name:
            return ProgramRef(path, name)
        return ProgramRef(spec, None)


class MissingProgramFileError(ProgramNotFoundError):
    """A program file named on the command line does not exist."""


def load_module(path: str):
    """Execute a program file as a fresh module (its directory importable).

    Raises `MissingProgramFileError` for a missing file and `ProgramFileError`
    (``FILE:LINE: ...``) when the file cannot be compiled or raises while it runs;
    FhecErrors from tracing (which name their DSL line) pass through unchanged."""
    if os.path.isdir(path):
        raise MissingProgramFileError(f"{path} is a directory, not a program file; name the .py files in it "
                                      f"(e.g. {os.path.join(path, '*.py')})")
    if not os.path.isfile(path):
        raise MissingProgramFileError(f"no such file: {path}")
    mod_name = f"_fhec_program_{zlib.crc32(os.path.abspath(path).encode()):08x}"
    loader = importlib.machinery.SourceFileLoader(mod_name, path)  # any suffix, not only .py
    spec = importlib.util.spec_from_loader(mod_name, loader)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    sys.modules[mod_name] = module  # dataclasses defined in the file look their module up by name
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    try:
        loader.exec_module(module)
    except FhecError as e:
        if e.where is None:  # e.g. a parameter set refused: name the file's line that built it
            _locate(e, path)
        raise
    except InternalError:
        raise
    except Exception as e:  # noqa: BLE001  (the user's file raised it: report it as theirs)
        raise program_file_error(path, e) from None
    except SystemExit as e:
        # not an Exception: uncaught, it would end fhec with the file's exit code (0 passes
        # a `fhec check` that never ran, and the other files are never checked)
        raise program_file_error(path, e) from None
    finally:
        if sys.path and sys.path[0] == directory:
            sys.path.pop(0)
    return module


def _file_line(path: str, error: BaseException) -> int | None:
    """The line of the deepest traceback frame of `error` inside the file `path`."""
    target = os.path.abspath(path)
    line = None
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == target:
            line = lineno
    return line


def _locate(error: FhecError, path: str) -> None:
    """Give an FhecError raised without a DSL location the program file's line (in place)."""
    line = _file_line(path, error)
    if line is not None:
        error.where = f"{path}:{line}"
        error.args = (f"{error.where}: {getattr(error, 'bare_message', error)}",)


def program_file_error(path: str, error: Exception) -> ProgramFileError:
    """``FILE:LINE: what went wrong`` for an exception raised by loading a program file:
    the line of a syntax error, else the deepest traceback frame inside the file."""
    if isinstance(error, SyntaxError) and error.lineno:
        where = f"{error.filename or path}:{error.lineno}"
        return ProgramFileError(f"{where}: syntax error: {error.msg}; fix the program file.")
    line = _file_line(path, error)
    if isinstance(error, UnicodeDecodeError):
        what = "is not a UTF-8 text file (a binary file?); fhec reads Python program files"
    elif isinstance(error, SystemExit):
        what = (f"called sys.exit({error.code!r}) while fhec imported it; put script code under "
                f"`if __name__ == \"__main__\":`, which fhec does not run")
    else:
        what = f"raised {type(error).__name__}: {error}"
    return ProgramFileError(f"{path}:{line or 1}: the program file {what}.")


def find_programs(module) -> dict[str, "object"]:
    """Variable name -> Program for every Program a module defines (first binding wins)."""
    from fhec.frontend import Program

    found: dict[str, Program] = {}
    for var, value in vars(module).items():
        if isinstance(value, Program) and not any(value is p for p in found.values()):
            found[var] = value
    return found


def load_program(spec: str):
    """The Program named by ``FILE.py[:NAME]`` (see module doc).

    Raises `ProgramNotFoundError` when the file is missing, holds no program, holds
    several and no NAME was given, or NAME matches none; and whatever tracing raises.
    """
    ref = ProgramRef.parse(spec)
    programs = find_programs(load_module(ref.path))
    if not programs:
        raise ProgramNotFoundError(
            f"{ref.path} defines no fhec.Program; create one with fhec.Program(...) or @fhec.program."
        )
    if ref.name is None:
        if len(programs) > 1:
            raise ProgramNotFoundError(
                f"{ref.path} defines {len(programs)} programs ({', '.join(programs)}); pick one with {ref.path}:NAME."
            )
        return next(iter(programs.values()))
    for var, prog in programs.items():
        if ref.name in (var, prog.name):
            return prog
    raise ProgramNotFoundError(f"{ref.path} has no program {ref.name!r}; it defines {', '.join(programs)}.")


def show_text(spec: str) -> str:
    """What ``fhec show`` prints."""
    return str(load_program(spec))


def load_programs(spec: str) -> list:
    """Like `load_program`, but a file with several programs and no NAME gives all of them."""
    ref = ProgramRef.parse(spec)
    if ref.name is not None:
        return [load_program(spec)]
    programs = find_programs(load_module(ref.path))
    if not programs:
        raise ProgramNotFoundError(
            f"{ref.path} defines no fhec.Program; create one with fhec.Program(...) or @fhec.program."
        )
    return list(programs.values())


def check_program(spec: str, seed: int | None = None, rel_bits: float | None = None) -> tuple[bool, list[str]]:
    """Run ``fhec check`` on ``FILE.py[:NAME]`` (every program of the file without NAME):
    (all outputs match, report lines)."""
    from fhec.evaluate import check_against_reference, random_inputs

    all_ok, lines = True, []
    for program in load_programs(spec):
        results = check_against_reference(program, random_inputs(program, seed), seed, rel_bits)
        scheme = program.params.scheme
        ok = all(r.ok for r in results)
        all_ok &= ok
        lines.append(f"{spec} [{program.name}, {scheme}, N={program.params.N}]: {'OK' if ok else 'MISMATCH'}")
        lines += [f"  {r.describe(scheme)}" for r in results]
    return all_ok, lines


def _fail(e: FhecError) -> None:
    click.echo(f"error: {e}", err=True)
    sys.exit(2)


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from fhec.version import package_version

    click.echo(f"fhec {package_version()}")
    ctx.exit()


class _Group(click.Group):
    """fhec's command group: a usage error (an unknown option or command, a bad choice)
    prints as every other error, ``error: ...``, and exits 2, not as click's usage text;
    Ctrl-C prints ``error: interrupted ...`` and exits 130 (the shell's code for SIGINT)."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            _usage_fail(e)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:  # a subcommand's arguments
            _usage_fail(e)
        except KeyboardInterrupt:  # click would print "Aborted!" and exit 1
            click.echo("error: interrupted (Ctrl-C); the command did not finish, so rerun it for its "
                       "output.", err=True)
            sys.exit(130)


def _usage_fail(e: click.UsageError) -> None:
    if isinstance(e, getattr(click.exceptions, "NoArgsIsHelpError", ())):  # `fhec` alone: its help
        click.echo(e.format_message())
        sys.exit(0)
    path = e.ctx.command_path if e.ctx is not None else "fhec"
    click.echo(f"error: {e.format_message().rstrip('.')}; see `{path} --help`.", err=True)
    sys.exit(e.exit_code)


@click.group(cls=_Group)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print fhec's version and exit.")
def main() -> None:
    """fhec: compile CKKS/BGV programs written in a Python DSL for FHE accelerators."""


@main.command()
@click.argument("program")
def show(program: str) -> None:
    """Print the typed HE-level IR of PROGRAM (FILE.py or FILE.py:NAME)."""
    try:
        click.echo(show_text(program))
    except FhecError as e:
        _fail(e)


@main.command()
@click.argument("programs", nargs=-1, required=True)
@click.option("--seed", type=int, default=None, help="Seed of the random inputs, keys and encryptions, to reproduce a run (default: fresh randomness).")
@click.option("--rel-bits", type=float, default=None, help="CKKS precision required (default: per output, from its noise estimate).")
def check(programs: tuple[str, ...], seed: int | None, rel_bits: float | None) -> None:
    """Evaluate each PROGRAM under encryption on random inputs and compare with the
    plaintext reference: max error (CKKS) or exactness (BGV). Exit 1 on a mismatch.

    PROGRAM is FILE.py (all its programs) or FILE.py:NAME. When several files are
    given, a file that defines no program is reported and skipped; a file that does
    not exist is an error (exit 2, after checking the others)."""
    all_ok, missing = True, []
    for spec in programs:
        try:
            ok, lines = check_program(spec, seed, rel_bits)
        except MissingProgramFileError as e:
            click.echo(f"error: {e}", err=True)
            missing.append(spec)
            continue
        except ProgramNotFoundError as e:
            if len(programs) == 1 or ProgramRef.parse(spec).name is not None:
                _fail(e)
            # A glob such as examples/*.py may catch helper scripts: report, do not fail.
            click.echo(f"{spec}: skipped ({e})")
            continue
        except FhecError as e:
            _fail(e)
        all_ok &= ok
        click.echo("\n".join(lines))
    sys.exit(2 if missing else 0 if all_ok else 1)


def bounds_table(lowered, target: str):
    """The lower bounds of a lowered program on `target` (`fhec.analysis.bounds`), as a
    rich table: no schedule of it on that target can be shorter than any of them."""
    from rich.table import Table

    from fhec.analysis.bounds import lower_bounds
    from fhec.backends.machine import IsaMachine
    from fhec.backends.target import load_target

    tgt = load_target(target)
    if isinstance(tgt, IsaMachine):  # its cycles come from its own scheduler and simulator (fhec.isa)
        raise InvalidArgumentError(f"--target {target}: {tgt.name!r} is an ISA machine; the lower bounds are for stream "
                                   f"targets (f1, tiny, or a target TOML without an `isa` key). `fhec compile "
                                   f"--target {target}` reports its cycles.")
    tgt.check_ring_degree(lowered.limb.N)
    b = lower_bounds(lowered.limb, tgt)
    table = Table(title=f"lower bounds on {tgt.name} (cycles)")
    table.add_column("bound")
    table.add_column("cycles", justify="right")
    notes = {"compute": f"busiest unit kind: {b.busiest_kind}", "bandwidth": "compulsory traffic",
             "dependency": "critical path", "load-aware": "each load, then the work waiting for it",
             "network": "compulsory fills and write-backs over the ports" if tgt.models_onchip else "not modeled",
             "generator": "generated key halves at the generator's rate" if tgt.keys.generated else "not modeled"}
    table.add_column("")
    for name, cycles in b.named.items():
        table.add_row(name + (" (binding)" if name == b.binding else ""), f"{cycles:,.0f}", notes[name])
    return table


def stats_tables(spec: str, keyswitch: str | None = None, target: str | None = None):
    """The rich tables ``fhec stats`` prints: per LimbOp, per HE op, per value class, and
    with a `target` the lower bounds on it."""
    from rich.table import Table

    from fhec.compiler import lower
    from fhec.analysis.stats import instruction_stats

    program = load_program(spec)
    lowered = lower(program, keyswitch)
    s = instruction_stats(lowered)
    summary = (f"{program.name}: {s['instructions']:,} limb instructions, {s['rvecs']:,} RVecs "
               f"(N={program.params.N}, {program.params.scheme})")
    head = Table(title="per LimbOp")
    head.add_column("LimbOp")
    head.add_column("count", justify="right")
    for op, n in s["ops"].items():
        head.add_row(op, f"{n:,}")
    by_he = Table(title="per HE op")
    ops = [op for op, n in s["ops"].items() if n]  # the ops this program uses: keeps the table narrow
    by_he.add_column("HE op")
    for op in ops:
        by_he.add_column(op, justify="right")
    for he_op, counts in sorted(s["by_he_op"].items()):
        by_he.add_row(he_op, *[f"{counts.get(op, 0):,}" for op in ops])
    tables = [summary, head, by_he]
    if "by_stage" in s:  # a bootstrap's stages, in pipeline order
        from fhec.ir.he_bootstrap import STAGES

        by_stage = Table(title="per bootstrap stage")
        by_stage.add_column("stage")
        for op in ops:
            by_stage.add_column(op, justify="right")
        for stage in sorted(s["by_stage"], key=lambda st: STAGES.index(st) if st in STAGES else len(STAGES)):
            by_stage.add_row(stage, *[f"{s['by_stage'][stage].get(op, 0):,}" for op in ops])
        tables.append(by_stage)
    # the program's words (a target's own word size and generated key halves are the report's)
    data = Table(title=f"data by value class ({lowered.limb.rvec_bytes // lowered.limb.N}-byte words, every key half)")
    data.add_column("class")
    data.add_column("RVecs", justify="right")
    data.add_column("bytes", justify="right")
    for cls, n in s["rvecs_by_class"].items():
        data.add_row(cls, f"{n:,}", f"{s['bytes'][cls]:,}")
    tables = [*tables, data]
    return tables if target is None else [*tables, bounds_table(lowered, target)]


@main.command(name="stats")
@click.argument("program")
@click.option("--keyswitch", type=click.Choice(["bv", "hybrid", "auto"]), default=None,
              help="Key-switching method (default: the parameters').")
@click.option("--target", default=None,
              help="Also print the lower bounds on this target (a shipped name or a target TOML file).")
def stats_command(program: str, keyswitch: str | None, target: str | None) -> None:
    """Limb-instruction statistics of PROGRAM: counts per LimbOp and per HE op, bytes per value
    class; with --target, the compute, bandwidth, dependency, load-aware, network and generator lower bounds."""
    from rich.console import Console

    try:
        console = Console()
        for table in stats_tables(program, keyswitch, target):
            console.print(table)
    except FhecError as e:
        _fail(e)


def compile_with_progress(spec: str, target: str, keyswitch: str | None, policy: str, *,
                          dump_after: tuple[str, ...] = (), dump_dir: str | None = None, hint_order: str = "bounded"):
    """`fhec.compile` of ``FILE.py[:NAME]``, with a progress bar over the passes when
    stderr is a terminal (`fhec.progress`)."""
    from fhec.compiler import compile as compile_program

    program = load_program(spec)
    return compile_program(program, target=target, keyswitch=keyswitch, policy=policy, progress=None,
                           dump_after=dump_after, dump_dir=dump_dir, hint_order=hint_order)


_target_option = click.option("--target", default="f1", show_default=True,
                              help="A shipped target name (see `fhec targets`) or a target TOML file.")
_keyswitch_option = click.option("--keyswitch", type=click.Choice(["bv", "hybrid", "auto"]), default=None,
                                 help="Key-switching method (default: the parameters').")


@main.command(name="compile")
@click.argument("program")
@_target_option
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write the streams (text and binary) and report.json here.")
@_keyswitch_option
@click.option("--policy", type=click.Choice(["belady", "lru"]), default="belady", show_default=True,
              help="Off-chip eviction policy.")
@click.option("--hint-order", "hint_order", type=click.Choice(["bounded", "unbounded"]), default="bounded",
              show_default=True, help="Hint-reuse order: under the scratchpad's working-set bound where clustering would not fit it, or F1's unbounded clustering always.")
@click.option("--dump-after", "dump_after", multiple=True, metavar="PASS",
              help="Print the IR after PASS (repeatable; `fhec passes` lists them).")
@click.option("--dump-dir", type=click.Path(file_okay=False), default=None,
              help="Write the --dump-after IRs here (NN-PASS.txt) instead of printing them.")
@click.option("--trace", "trace_file", type=click.Path(dir_okay=False), default=None,
              help="Write the streams as Chrome trace-event JSON (open in Perfetto or chrome://tracing).")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False), default=None,
              help="Write the report's plots here as PNG (utilization, traffic, scratchpad, roofline).")
def compile_command(program: str, target: str, out_dir: str | None, keyswitch: str | None, policy: str,
                    hint_order: str, dump_after: tuple[str, ...], dump_dir: str | None, trace_file: str | None,
                    plots_dir: str | None) -> None:
    """Compile PROGRAM for an accelerator; print the report, optionally write streams,
    a Chrome trace and plots."""
    from rich.console import Console

    try:
        for directory in (out_dir, plots_dir):
            _writable_dir(directory)  # before the compile, which may take minutes
        compiled = compile_with_progress(program, target, keyswitch, policy, dump_after=dump_after, dump_dir=dump_dir,
                                         hint_order=hint_order)
        if (trace_file or plots_dir) and not hasattr(compiled, "to_chrome_trace"):
            raise InvalidArgumentError(f"--trace and --plots draw per-unit streams, which stream targets (f1, tiny) "
                                       f"produce; {compiled.target.name} is an ISA machine: see docs/isa.md.")
        console = Console()
        console.print(compiled.report.rich_table())
        if out_dir:
            files = compiled.write(out_dir)
            console.print(f"wrote {len(files)} files to {out_dir}")
        if trace_file:
            console.print(f"wrote the Chrome trace {compiled.to_chrome_trace(trace_file)}")
        if plots_dir:
            plots = compiled.write_plots(plots_dir)
            console.print(f"wrote {len(plots)} plots to {plots_dir}: {', '.join(p.name for p in plots)}")
    except FhecError as e:
        _fail(e)


@main.command(name="run")
@click.argument("program")
@_target_option
@_keyswitch_option
@click.option("--seed", type=int, default=None, help="Seed of keys, encryption and random inputs, to reproduce a run (default: fresh randomness).")
def run_command(program: str, target: str, keyswitch: str | None, seed: int | None) -> None:
    """Compile PROGRAM, replay its streams in the hazard checker, execute them on
    encrypted random inputs, check every limb of every output against the eager
    evaluator, and compare the decrypted outputs with fhec.reference. Exit 1 on a
    mismatch (2 on a corrupt limb, naming the instruction that wrote it)."""
    from rich.console import Console

    from fhec.compiler import input_program, judged_program
    from fhec.evaluate import compare_outputs, random_inputs
    from fhec.reference import reference
    from fhec.verify_run import run_compiled_checked

    try:
        compiled = compile_with_progress(program, target, keyswitch, "belady")
        # the program as compiled, not the file loaded again: a params="auto" program's
        # slots are chosen for the target, and a fresh copy would choose them without it
        judged = judged_program(compiled)
        inputs = random_inputs(input_program(compiled), seed)
        ran = run_compiled_checked(compiled, inputs, seed, check=True)  # every limb vs the eager evaluator
        results = compare_outputs(judged, ran["outputs"], reference(judged, inputs), None)
    except FhecError as e:
        _fail(e)
    console = Console()
    console.print(compiled.report.rich_table())
    ok = all(r.ok for r in results)
    click.echo(f"{program} on {compiled.target.name}: {'OK' if ok else 'MISMATCH'}")
    for r in results:
        click.echo(f"  {r.describe(judged.params.scheme)}")
    sys.exit(0 if ok else 1)


@main.command(name="explore")
@click.argument("program")
@_target_option
@click.option("--vary", "vary", multiple=True, required=True, metavar="FIELD=V1,V2,...",
              help="A target field and its values, e.g. scratchpad.capacity_bytes=16MiB,32MiB (repeatable: "
                   "every combination is compiled).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="A running Dask scheduler (tcp://host:8786), or 'serial' (this process, no Dask); "
                   "default: a local cluster of --workers processes.")
@click.option("--workers", type=int, default=2, show_default=True, help="Worker processes of the local cluster.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Write the table here: .csv, or .parquet (needs pyarrow).")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Write the Pareto front (cycles against area and energy) here, in the format of its "
                   "suffix (.png, .svg, .pdf, .jpg, ...; PNG without one).")
@_keyswitch_option
def explore_command(program: str, target: str, vary: tuple[str, ...], scheduler: str | None, workers: int,
                    out_file: str | None, plot_file: str | None, keyswitch: str | None) -> None:
    """Compile PROGRAM for every variant of a target (the cartesian product of the
    --vary values) on Dask, and print the table of cycles, traffic, energy and area."""
    from rich.console import Console

    from fhec.explore import check_plottable, check_table_path, explore

    try:
        # the outputs before the sweep, which may take hours
        if out_file:
            check_table_path(out_file)
        plot_format = _plot_format(plot_file)
        if plot_file:
            check_plottable(target)
        result = explore(load_program(program), target, list(vary), scheduler=scheduler, workers=workers,
                         keyswitch=keyswitch)
        console = Console()
        console.print(result.rich_table())
        if out_file:
            console.print(f"wrote {result.write(out_file)}")
        if plot_file:
            result.plot_pareto().savefig(plot_file, dpi=120, format=plot_format)
            console.print(f"wrote {plot_file}")
    except FhecError as e:
        _fail(e)
    except OSError as e:
        _fail(FhecError(f"cannot write {plot_file}: {e.strerror or e}"))


def _plot_format(path: str | None) -> str | None:
    """The format matplotlib writes `path` in: its suffix's, PNG without one (given
    explicitly, so that the file is `path`, not `path`.png); `InvalidArgumentError` if
    matplotlib cannot write that suffix."""
    if not path or "." not in os.path.basename(path):
        return "png"
    suffix = os.path.basename(path).rsplit(".", 1)[1].lower()
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:  # plot_pareto names the missing extra
        return None
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix not in formats:
        raise InvalidArgumentError(f"--plot {path}: matplotlib cannot write .{suffix} files; give a path ending in "
                                   f".png (or {', '.join('.' + f for f in sorted(formats) if f != 'png')})")
    return suffix


@main.command(name="passes")
def passes_command() -> None:
    """List the compiler's passes in order, one line each (`fhec.pipeline.PIPELINE`)."""
    from fhec.pipeline import describe

    click.echo(describe())


@main.command(name="targets")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
def targets_command(files: tuple[str, ...]) -> None:
    """List the shipped targets, or load and validate target FILES (TOML)."""
    from rich.console import Console
    from rich.table import Table

    from pathlib import Path

    from fhec.backends.machine import IsaMachine
    from fhec.backends.target import list_machines, list_targets, load_target

    try:
        # A FILE that exists is read as a file even without a .toml suffix.
        loaded = [load_target(Path(f) if os.path.exists(f) else f) for f in files] if files else [
            *list_targets(), *list_machines()]
    except FhecError as e:
        _fail(e)
    targets = [t for t in loaded if not isinstance(t, IsaMachine)]
    machines = [t for t in loaded if isinstance(t, IsaMachine)]
    console = Console()
    t = Table(title="fhec targets")
    for col in ("name", "clock", "word", "N", "clusters × units", "scratchpad", "off-chip"):
        t.add_column(col)
    for tg in targets:
        units = ", ".join(f"{u.count} {u.kind.value}" for u in tg.cluster.units)
        t.add_row(
            tg.name, f"{tg.clock_ghz:g} GHz", f"{tg.word_bits} b", f"2^{tg.n_min.bit_length() - 1}..2^{tg.n_max.bit_length() - 1}",
            f"{tg.cluster.count} × {{{units}}}", f"{tg.scratchpad.capacity_bytes / 2**20:g} MiB",
            f"{tg.memory.bandwidth_gb_s:g} GB/s",
        )
    if targets:
        console.print(t)
    for tg in targets:
        console.print(f"[bold]{tg.name}[/bold]: {tg.description}")
        console.print(f"  pipelining {tg.pipelining.mode}, plaintexts {tg.lowering.plaintexts}, "
                      f"linear transforms {tg.ordering.linear_transforms}", markup=False)
        unmodeled = tg.unmodeled.summary()
        if unmodeled:
            # these values change no result: say so next to them (docs/targets.md)
            console.print(f"  not modeled (no result depends on these yet): {unmodeled}", markup=False)
    if machines:
        m = Table(title="ISA machines")
        for col in ("name", "isa", "clock", "word", "N", "registers", "memories", "pipelines (lanes/latency/II)"):
            m.add_column(col)
        for mc in machines:
            m.add_row(
                mc.name, mc.isa, f"{mc.clock_ghz:g} GHz", f"{mc.word_bits} b",
                f"2^{mc.n_min.bit_length() - 1}..2^{mc.n_max.bit_length() - 1}",
                ", ".join(f"{r.count}×{r.elements} {k}" for k, r in mc.registers.items()),
                ", ".join(f"{k} {v.words:,} w/{v.banks} banks" for k, v in mc.memories.items()),
                ", ".join(f"{k} {p.lanes}/{p.latency}/{p.interval}" for k, p in mc.pipelines.items()),
            )
        console.print(m)
        for mc in machines:
            console.print(f"[bold]{mc.name}[/bold]: {mc.description}")


@main.command(name="report")
@click.argument("report_json", type=click.Path(dir_okay=False))
def report_command(report_json: str) -> None:
    """Print a saved report (the report.json written by `fhec compile --out`)."""
    from rich.console import Console

    from fhec.isa.report import load_isa_report
    from fhec.sim.timing import load_report

    try:
        report = load_report(report_json)
    except FhecError as e:
        try:  # a report of an ISA machine (`fhec compile --target rpu --out`)
            report = load_isa_report(report_json)
        except FhecError as isa_error:
            # say what is wrong in the format the file claims: an ISA report names its isa
            _fail(isa_error if _names_an_isa(report_json) else e)
    Console().print(report.rich_table())


def _names_an_isa(path: str) -> bool:
    """Whether a report.json is an ISA machine's (its top-level ``isa`` key)."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "isa" in data


@main.command(name="bench")
@click.argument("only", nargs=-1)
@click.option("--quick", is_flag=True, help="Smaller sizes only (not with --suite: a suite runs the papers' sizes).")
@click.option("--suite", default=None, metavar="NAME",
              help="Run one paper's suite (f1, osiris: benchmarks/bench_suite_NAME.py) and print it beside the paper.")
def bench_command(only: tuple[str, ...], quick: bool, suite: str | None) -> None:
    """Run the benchmarks of a source checkout (benchmarks/run.py; needs fhec[bench] for
    the SEAL comparison) and rewrite docs/benchmarks.md. ONLY: substrings of module names.
    --suite NAME runs exactly the module benchmarks/bench_suite_NAME.py (fhec.suites),
    which keeps the other modules' last results in docs/benchmarks.md; outside a checkout
    it runs the installed package's suite and only prints the table."""
    import runpy
    from pathlib import Path

    if quick and suite is not None:
        # the suites exist to measure the papers' sizes; a quiet --quick would start the full run
        _fail(InvalidArgumentError("--quick does not apply to --suite (a suite runs the papers' sizes, 10 minutes "
                                   "or more); drop one of them"))
    runner = Path("benchmarks/run.py")
    # fhec's checkout: a benchmarks/run.py with fhec's marker (another project's is not fhec's runner)
    checkout = runner.is_file() and "FHEC_BENCHMARK_RUNNER = True" in runner.read_text(errors="replace")
    if not checkout and suite is not None:
        _installed_suite(suite, only)
        return
    if not checkout:
        _fail(ProgramNotFoundError("no fhec benchmarks/run.py here: run `fhec bench` from the root of an fhec "
                                   "checkout (`fhec bench --suite f1|osiris` runs anywhere)"))
    if suite is not None:
        suites = sorted(p.stem.removeprefix("bench_suite_") for p in runner.parent.glob("bench_suite_*.py"))
        if only:
            _fail(InvalidArgumentError("--suite runs one suite; drop the module names, or drop --suite"))
        if suite not in suites:
            _fail(InvalidArgumentError(f"no suite {suite!r} in benchmarks/; choose one of {', '.join(suites) or '(none)'}"))
        only = (f"bench_suite_{suite}",)
    sys.argv = [str(runner), *only, *(["--quick"] if quick else [])]
    runpy.run_path(str(runner), run_name="__main__")


def _writable_dir(directory: str | None) -> None:
    """Create `directory` (if given) and check that files can be written there, or raise
    `OutputDirectoryError` naming it."""
    import os
    from pathlib import Path

    from fhec.errors import OutputDirectoryError

    if not directory:
        return
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputDirectoryError(f"cannot create the output directory {path}: {e.strerror or e}") from None
    if not path.is_dir() or not os.access(path, os.W_OK):
        raise OutputDirectoryError(f"cannot write to {path}: pass a writable directory")


def _installed_suite(suite: str, only: tuple[str, ...]) -> None:
    """`fhec bench --suite` outside a checkout: the suite's rows from the installed package
    (`fhec.suites`), printed beside the paper; docs/benchmarks.md belongs to a checkout."""
    from fhec.suites import SUITES, benchmark_rows

    if only:
        _fail(InvalidArgumentError("--suite runs one suite; drop the module names, or drop --suite"))
    if suite not in SUITES:
        _fail(InvalidArgumentError(f"no suite {suite!r}; choose one of {', '.join(SUITES)}"))
    try:
        benchmark_rows(suite)
    except FhecError as e:
        _fail(e)
    click.echo("(not a source checkout: docs/benchmarks.md is not rewritten)")


@main.group(name="examples", invoke_without_command=True)
@click.pass_context
def examples_group(ctx: click.Context) -> None:
    """List the example programs shipped with fhec (`fhec examples copy DIR` writes them out)."""
    if ctx.invoked_subcommand is not None:
        return
    from fhec.bundled_examples import list_examples

    for example in list_examples():
        click.echo(f"{example.name:24} {example.summary}")
    click.echo("\nfhec examples copy DIR   writes them into DIR, e.g. then: fhec check DIR/matvec.py")


@examples_group.command(name="copy")
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--overwrite", is_flag=True, help="Replace files of the same name in DEST.")
def examples_copy_command(dest: str, overwrite: bool) -> None:
    """Write the shipped examples into DEST (created if needed; existing files are kept
    unless --overwrite)."""
    from fhec.bundled_examples import copy_examples

    try:
        written = copy_examples(dest, overwrite=overwrite)
    except FhecError as e:
        _fail(e)
    click.echo(f"wrote {len(written)} examples to {dest}: {', '.join(p.name for p in written)}")


if __name__ == "__main__":
    main()
