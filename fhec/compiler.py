"""`fhec.compile`, `fhec.lower` and `fhec.stats`: the compile drivers over `fhec.pipeline`.

`compile` runs the whole pipeline (`fhec.pipeline.PIPELINE`) and packages its results as
a `Compiled`: every intermediate result stays available, so a user can stop at any
stage and look at it. `lower` runs the pipeline up to ``lower``; `stats` counts what that
produced (`fhec.analysis.stats`). None of them holds pass logic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fhec.analysis.bounds import Bounds, lower_bounds
from fhec.backends.streams import Streams
from fhec.backends.target import Target
from fhec.errors import InvalidArgumentError, TargetError
from fhec.ir.he import HeProgram
from fhec.ir.lowered import LoweredProgram
from fhec.ir.schedule import DataSchedule
from fhec.passes.he_order import bound_applies
from fhec.passes.he_rewrite import as_he
from fhec.plot.data import PlotData
from fhec.pipeline import COMPILED, HE_DONE, LOWERED, keyswitch_policy, options_for, run_prefix
from fhec.sim.timing import Report, make_report


def _check_options(policy, prefetch_reserve, hint_order="bounded") -> tuple[str, float | None, str]:
    """`compile`'s scheduling options, validated (see `compile`)."""
    from fhec.passes.he_order import HINT_ORDERS
    from fhec.passes.offchip import POLICIES
    from fhec.validate import as_choice, as_real

    policy = as_choice(policy, "policy", POLICIES)
    hint_order = as_choice(hint_order, "hint_order", HINT_ORDERS)
    if prefetch_reserve is not None:
        prefetch_reserve = as_real(prefetch_reserve, "prefetch_reserve", min=0.0, max=0.99,
                                   fix="the fraction of the scratchpad kept free for prefetches, in [0, 1)")
    return policy, prefetch_reserve, hint_order


def _run_compiled(compiled, inputs, seed, check: bool, execute) -> dict[str, Any]:
    """What running a `Compiled` or `IsaCompiled` shares: the precision check of its
    key-switching methods, keygen and encryption exactly as `fhec.evaluate` does for this
    seed, binding the loaded values, then `execute(loaded) -> words` (streams or machine
    words), reading the outputs back and decrypting them."""
    from fhec.evaluate import decrypt_outputs, encrypt_inputs, keygen_method, make_keys, plain_inputs
    from fhec.passes.keyswitch_choice import check_run_methods
    from fhec.reference import check_inputs
    from fhec.sim.bind import bind_lowered

    check_run_methods(compiled.program, compiled.keyswitch)  # PrecisionError for a method left without precision
    if compiled.source is not None:
        # the streams compute a sparse bootstrap's SubSum, which would silently average the
        # periods of a value that does not repeat, and EvalMod, which is far off for a value
        # whose coefficients near q_0/4: refuse them as fhec.evaluate does (and warn of a
        # series whose operand leaves its interval)
        check_inputs(compiled.source, inputs)
    if check:
        compiled.check()
    keys = make_keys(compiled.program, seed, keyswitch=keygen_method(compiled.program, compiled.keyswitch))
    cts = encrypt_inputs(compiled.program, keys, inputs, seed)
    plains = plain_inputs(compiled.program, inputs)
    words = execute(bind_lowered(compiled.lowered, cts, keys, plains))
    outs = compiled.lowered.output_ciphertexts(words, keys.key_id)
    return {"outputs": decrypt_outputs(keys, outs, compiled.program), "ciphertexts": outs, "keys": keys, "inputs": cts, "plains": plains}


@dataclass(frozen=True, eq=False)
class Compiled:
    """A program compiled for a target.

    Attributes:
        program: the HE program after ``choose_keyswitch`` (primitives, key switches
            annotated with their method).
        lowered: the limb-level program with its bindings (`LoweredProgram`).
        target: the `Target`.
        data_schedule: the off-chip data-movement schedule (`DataSchedule`).
        streams: the per-unit instruction streams (`Streams`).
        bounds: compute-, bandwidth- and dependency-bound cycles (`Bounds`).
        report: the `Report`.
        keyswitch: the policy used to choose key-switching methods.
        hoisting: the compile option `hoisting` ("auto", "single", "none"), which
            `fhec.save` records so that `fhec.load` re-derives the same streams.
        source: the program as traced, kept only when it bootstraps or evaluates a series
            with an interval (`traced_source`): `run` checks a sparse bootstrap's inputs
            and the series' operands against it (`fhec.reference.check_inputs`), and
            `fhec.testing` takes a bootstrap's reference from it.
    """

    program: HeProgram
    lowered: LoweredProgram
    target: Target
    data_schedule: DataSchedule
    streams: Streams
    bounds: Bounds
    report: Report
    keyswitch: str
    hoisting: str = "auto"
    source: HeProgram | None = None

    def run(self, inputs: Mapping[str, Any], seed=None, *, check: bool = False,
            progress: bool | None = None) -> dict[str, np.ndarray]:
        """Execute the *streams* on real ciphertexts: keygen and encrypt (as `fhec.evaluate`
        does for this seed), run every unit's stream in the functional model of the
        target's scratchpad and memory, decrypt. Returns output name -> slot vector.
        (`fhec.run` executes the unscheduled limb program instead.)

        The streams are always replayed by the independent hazard checker before they run
        (`execute_streams`; `StreamHazardError`); with `check`, before keys are generated.
        `progress`: a display of the entries executed (`fhec.progress`; None: on when
        interactive, False: off).
        """
        return self.run_detailed(inputs, seed, check=check, progress=progress)["outputs"]

    def run_detailed(self, inputs: Mapping[str, Any], seed=None, *, check: bool = False,
                     progress: bool | None = None) -> dict[str, Any]:
        """`run`, returning also the output ciphertexts, keys and input ciphertexts."""
        from fhec import progress as displays
        from fhec.sim.streams import execute_streams

        show = displays.wanted(progress)

        def execute(loaded):
            with displays.display("running streams", len(self.streams), show) as update:
                return execute_streams(self.streams, self.target, self.lowered.limb, loaded,
                                       progress=lambda done: update(done, "entries"), checked=check)

        return _run_compiled(self, inputs, seed, check, execute)

    def check(self) -> None:
        """Replay the streams in the independent checker; raises `StreamHazardError` on any hazard."""
        from fhec.sim.check import check_streams

        check_streams(self.streams, self.target, self.lowered.limb)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write every unit's stream (text and binary) and ``report.json`` into `out_dir`
        (the stream files of an earlier write there are replaced, see `write_streams`).
        Raises `OutputDirectoryError` when the directory cannot be written."""
        from fhec.backends.stream_files import write_file, write_streams

        files = write_streams(self.streams, out_dir)
        report = Path(out_dir) / "report.json"
        write_file(report, self.report.to_json())
        return [*files, report]

    def to_chrome_trace(self, path: str | Path) -> Path:
        """Write the streams as Chrome trace-event JSON (Perfetto, chrome://tracing) to
        `path`: one track per unit, loads and stores on memory tracks, events named by
        limb op and HE-level origin (`fhec.backends.chrome_trace`). Returns the path;
        raises `OutputDirectoryError` when it cannot be written."""
        import json

        from fhec.backends.chrome_trace import chrome_trace
        from fhec.backends.stream_files import write_file

        out = Path(path)
        trace = chrome_trace(self.streams, self.target, self.lowered.limb, self.lowered.he)
        write_file(out, json.dumps(trace, separators=(",", ":")))
        return out

    def write_plots(self, out_dir: str | Path) -> list[Path]:
        """Every plot of `fhec.plot.PLOTS` as ``out_dir/NAME.png``; returns the paths.
        Raises `MissingExtraError` without matplotlib, `OutputDirectoryError` when the
        directory cannot be written."""
        from fhec.errors import OutputDirectoryError
        from fhec.plot import PLOTS

        out = Path(out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as e:
            raise OutputDirectoryError(f"cannot create the plot directory {out}: {getattr(e, 'strerror', None) or e}") from None
        paths = []
        for name, plot in PLOTS.items():
            path = out / f"{name}.png"
            try:
                plot(self.report).savefig(path, dpi=120)
            except OSError as e:
                raise OutputDirectoryError(f"cannot write {path}: {e.strerror or e}") from None
            paths.append(path)
        return paths

    def _repr_html_(self) -> str:
        return self.report._repr_html_()

    def __repr__(self) -> str:
        r = self.report
        return f"<Compiled {r.program!r} for {r.target}: {r.limb_instructions:,} instructions, {r.cycles:,} cycles>"


@dataclass(frozen=True, eq=False)
class IsaCompiled:
    """A program compiled for an ISA machine (``rpu``): machine words and assembly.

    Attributes:
        program: the HE program after ``choose_keyswitch``.
        lowered: the limb-level program (`LoweredProgram`).
        target: the `IsaMachine`.
        code: the `fhec.isa.code.Encoded` program (``.words``, ``.asm``, ``.timed``).
        report: the `fhec.isa.report.IsaReport`.
        keyswitch: the policy used to choose key-switching methods.
        source: as `Compiled.source`.
    """

    program: HeProgram
    lowered: LoweredProgram
    target: Any
    code: Any
    report: Any
    keyswitch: str
    source: HeProgram | None = None

    @property
    def backend(self):
        from fhec.isa.backend import backend_for

        return backend_for(self.target)

    def run(self, inputs: Mapping[str, Any], seed=None, *, check: bool = False,
            progress: bool | None = None) -> dict[str, np.ndarray]:
        """Execute the *encoded machine words* in the ISA's functional simulator on real
        ciphertexts (keygen and encrypt as `fhec.evaluate` does for this seed), decrypt.
        Returns output name -> slot vector. `check` re-decodes the words first.
        `progress`: as `Compiled.run`'s, a display of the words executed."""
        return self.run_detailed(inputs, seed, check=check, progress=progress)["outputs"]

    def run_detailed(self, inputs: Mapping[str, Any], seed=None, *, check: bool = False,
                     progress: bool | None = None) -> dict[str, Any]:
        """`run`, returning also the output ciphertexts, keys and input ciphertexts."""
        from fhec import progress as displays

        show = displays.wanted(progress)
        words = len(self.code.words)

        def execute(loaded):
            with displays.display("simulating machine words", words, show) as update:
                return self.backend.simulate(self.code, self.target, loaded,
                                             progress=lambda done: update(done, "words"))

        return _run_compiled(self, inputs, seed, check, execute)

    def check(self) -> None:
        """Decode the words and compare with the scheduled code; disassemble and
        re-assemble them. Raises `InternalError` on any difference."""
        from fhec.errors import InternalError

        b = self.backend
        from fhec.isa.code import without_origins

        if b.decode(self.code.words) != without_origins(self.code.timed.code):
            raise InternalError(f"{b.name}: the encoded words do not decode to the scheduled code")
        if not np.array_equal(b.assemble(b.disassemble(self.code.words)), self.code.words):
            raise InternalError(f"{b.name}: disassembling and re-assembling the words changes them")

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``<program>.s`` (assembly), ``<program>.bin`` (the words, little-endian, at
        the ISA's word width: 64 bits for rpu, 32 for presto), ``<program>.memory.npz`` (what
        the memories must hold before the words run: one array per ROM segment, named
        ``<memory>@<address>``, and ``rvecs``, rows of (rvec id, class, address in the data
        memory: a word address for rpu, a byte address for presto) for the loaded and output
        rvecs, whose names are in ``labels``) and ``report.json`` into `out_dir` (fhec's files
        of an earlier write there, streams or ISA, are removed first: see `prepare_output_dir`).
        Raises `OutputDirectoryError` when it cannot."""
        from fhec.backends.stream_files import isa_output_names, prepare_output_dir, write_file

        # Clear an earlier output of any target, so no stale manifest or unit file of
        # another program sits next to this one.
        out = prepare_output_dir(out_dir)
        asm, binary, memory, report = (out / name for name in isa_output_names(self.report.program))
        write_file(asm, self.code.asm)
        write_file(binary, self.code.words.astype(self.code.words.dtype.newbyteorder("<")).tobytes())  # the ISA's word width
        write_file(report, self.report.to_json())
        write_file(memory, self._memory_image())
        return [asm, binary, memory, report]

    def _memory_image(self) -> bytes:
        import io

        layout, limb = self.code.layout, self.lowered.limb
        ids = sorted(layout.rvec_address)
        arrays = {f"{seg.memory}@{seg.address}": seg.words for seg in layout.rom}
        arrays["rvecs"] = np.array([(r, int(limb.rvec_class[r]), layout.rvec_address[r]) for r in ids],
                                   dtype=np.int64).reshape(-1, 3)
        arrays["labels"] = np.array([limb.rvec_label(r) for r in ids], dtype=str)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    def _repr_html_(self) -> str:
        return self.report._repr_html_()

    def __repr__(self) -> str:
        r = self.report
        return f"<IsaCompiled {r.program!r} for {r.target}: {r.instructions:,} instructions, {r.cycles:,} cycles>"


def _compile_isa(program, options, *, verify, dump_after, dump_dir, progress, keyswitch) -> IsaCompiled:
    """`compile` for an ISA machine: the `fhec.pipeline.ISA_PIPELINE`."""
    from fhec.isa.backend import backend_for
    from fhec.isa.report import make_isa_report
    from fhec.pipeline import ENCODED

    machine = options.target
    machine.check_ring_degree(as_he(program).params.N)
    backend = backend_for(machine)
    done = _run_with_progress(ENCODED, program, options, progress, verify=verify, dump_after=dump_after,
                              dump_dir=dump_dir)
    annotated, lowered, encoded = done[HE_DONE], done[LOWERED], done[ENCODED]
    report = make_isa_report(
        program_name=annotated.name, scheme=annotated.params.scheme, machine=machine, encoded=encoded,
        classify=backend.classify, data_memory=encoded.layout.data_memory,
        keyswitch=dict(Counter(lowered.methods.values())), compile_seconds=done.seconds(),
        compile_passes=[r.as_dict() for r in done.records],
    )
    return IsaCompiled(annotated, lowered, machine, encoded, report, keyswitch_policy(annotated, keyswitch),
                       traced_source(program))


def traced_source(program) -> HeProgram | None:
    """`program` as an HeProgram when it bootstraps or evaluates a series with an
    interval, else None. Expansion replaces a BOOTSTRAP by ModRaise and polynomials that
    have no plaintext meaning, and a POLYNOMIAL by its products, so the compiled program
    keeps the traced one: `fhec.reference` of a bootstrap (`fhec.testing`), and the checks
    that a sparse bootstrap's inputs repeat and a series' operands stay in its interval
    (`fhec.reference.check_inputs`)."""
    from fhec.reference import has_bootstrap, has_domain_series

    he = as_he(program)
    return he if has_bootstrap(he) or has_domain_series(he) else None


def judged_program(compiled) -> HeProgram:
    """The HE program a run of `compiled` (a `Compiled` or `IsaCompiled`) is compared
    with: its traced `source` when it bootstraps (expansion leaves no plaintext meaning to
    the bootstrap's pieces), else its program after ``choose_keyswitch``, whose types carry
    the key-switching method it was compiled with (``keyswitch="bv"`` is less precise)."""
    from fhec.reference import has_bootstrap

    return compiled.source if compiled.source is not None and has_bootstrap(compiled.source) else compiled.program


def input_program(compiled) -> HeProgram:
    """The HE program random inputs for a run of `compiled` are drawn from: its traced
    `source` where it was kept (its series say where inputs belong,
    `fhec.evaluate.input_interval`; expansion removed them), else `judged_program`."""
    return judged_program(compiled) if compiled.source is None else compiled.source


def compile(  # noqa: A001  (the public name the API promises: fhec.compile)
    program,
    target: str | Path | Target = "f1",
    *,
    keyswitch: str | None = None,
    policy: str = "belady",
    prefetch_reserve: float | None = None,
    progress: bool | Callable[[str], None] | None = None,
    dump_after: Sequence[str] = (),
    dump_dir: str | Path | None = None,
    verify: bool | None = None,
    hoisting: str = "auto",
    hint_order: str = "bounded",
) -> Compiled | IsaCompiled:
    """Compile `program` for an accelerator: the whole `fhec.pipeline`.

    Args:
        program: a `fhec.Program`, a traced `@fhec.program` function or an `HeProgram`.
        target: a shipped target name ("f1", "tiny", "rpu"), a path to a target TOML file, or a `Target`.
        keyswitch: "bv", "hybrid", "auto" (per key switch, by noise and cost) or None
            (the parameters' method).
        policy: off-chip eviction policy, "belady" (F1) or "lru".
        prefetch_reserve: fraction of the scratchpad prefetches leave free (see
            `fhec.passes.offchip.schedule_offchip`); None tries `fhec.pipeline.RESERVES`
            and keeps the schedule with the fewest cycles (then the least traffic).
        progress: a progress display over the passes (`fhec.progress`): None shows one
            when interactive (a terminal or a notebook), False never, True always; or a
            function called with each pass's name as it starts.
        dump_after: pass names (`fhec passes`) after which the IR is printed, or written
            to `dump_dir`.
        verify: verify the IR after every pass (default: on under pytest or with
            ``FHEC_VERIFY=1``; see `fhec.ir.he_verify.verify_by_default`).
        hoisting: "auto" (rotations of one ciphertext share one mod-up when there are
            several), "single" (always) or "none".
        hint_order: "bounded" (key switches that share a hint are clustered while the
            live values fit the target's scratchpad; without that bound where the
            clusters fit anyway) or "unbounded" (F1 §4.2's clustering,
            blind to the scratchpad: F1's own compiler, for comparison;
            `fhec.passes.he_order`).

    Returns a `Compiled` with `.streams`, `.report` and `.run(inputs, seed=...)`; for an
    ISA machine (``"rpu"``) an `IsaCompiled` with `.code` (machine words, assembly),
    `.report` and `.run`, which simulates the encoded words.
    Raises `TargetError` for a bad target or one that does not support the program's N
    or word size, `ParameterError` for an unknown policy or a reserve outside [0, 1),
    and what tracing and the passes raise.
    """
    policy, prefetch_reserve, hint_order = _check_options(policy, prefetch_reserve, hint_order)
    if progress is not None and not callable(progress) and not isinstance(progress, bool):
        raise InvalidArgumentError(
            f"progress = {progress!r:.40}: pass True, False, None (on when interactive) or a function of the pass name.")
    if target is None:
        raise TargetError("compile needs a target: a shipped name such as 'f1' or 'tiny', a .toml path, or a Target.")
    options = options_for(target, keyswitch=keyswitch, policy=policy, prefetch_reserve=prefetch_reserve,
                          hoisting=hoisting, hint_order=hint_order)
    tgt = options.target
    resolved = getattr(program, "resolved", None)
    if callable(resolved):  # a params="auto" Program: its parameters are chosen for this target
        program = resolved(tgt)
    from fhec.backends.machine import IsaMachine

    if isinstance(tgt, IsaMachine):
        return _compile_isa(program, options, verify=verify, dump_after=dump_after, dump_dir=dump_dir,
                            progress=progress, keyswitch=keyswitch)
    tgt.check_ring_degree(as_he(program).params.N)
    unordered = _pass_before("order_for_hint_reuse", tgt)
    done = _run_with_progress(COMPILED, program, options, progress, verify=verify, dump_after=dump_after,
                              dump_dir=dump_dir, keep=(HE_DONE, LOWERED, unordered))
    annotated, lowered, scheduled = done[HE_DONE], done[LOWERED], done[COMPILED]
    bounds = lower_bounds(lowered.limb, tgt)
    report = make_report(
        program_name=annotated.name,
        scheme=annotated.params.scheme,
        target=tgt,
        data=scheduled.data,
        streams=scheduled.streams,
        bounds=bounds,
        keyswitch=dict(Counter(lowered.methods.values())),
        prefetch_reserve=scheduled.prefetch_reserve,
        stage_reserves=scheduled.stage_reserves,
        compile_seconds=done.seconds(),
        compile_passes=[r.as_dict() for r in done.records],
        he_program=lowered.he,
        hint_order=hint_order,
        hint_order_bounded=hint_order == "bounded" and bound_applies(done[unordered], tgt.onchip_bytes),
    ).with_plot_data(PlotData(tgt, scheduled.streams, scheduled.data))
    policy_used = keyswitch_policy(annotated, keyswitch)
    return Compiled(annotated, lowered, tgt, scheduled.data, scheduled.streams, bounds, report, policy_used,
                    options.hoisting, traced_source(program))


def _pass_before(name: str, target) -> str:
    """The pass whose output `name` reads in `target`'s pipeline."""
    from fhec.pipeline import pipeline_for

    names = [p.name for p in pipeline_for(target)]
    return names[names.index(name) - 1]


def _run_with_progress(last: str, program, options, progress, **kw):
    """`run_prefix` up to the pass `last` (of the target's pipeline), reporting each pass
    to `progress` (a function) or to a `fhec.progress` display (None: when interactive)."""
    from fhec import progress as displays
    from fhec.pipeline import pipeline_for, prefix

    if callable(progress):
        return run_prefix(last, program, options, progress=progress, **kw)
    names = [p.name for p in prefix(last, pipeline_for(options.target))]
    with displays.display("compiling", len(names), displays.wanted(progress)) as update:
        done = run_prefix(last, program, options, progress=lambda name: update(names.index(name), name), **kw)
        update(len(names), "done")
    return done


def lower(program, keyswitch: str | None = None, *, dump_after: Sequence[str] = (), verify: bool | None = None,
          hoisting: str = "auto") -> LoweredProgram:
    """Compile `program` to the limb level without running it: `fhec.pipeline` up to
    ``lower``. Data-free: it scales to N = 2^16 and millions of instructions.
    `keyswitch`: "bv", "hybrid", "auto" or None (the parameters' method); `hoisting` as
    for `compile`."""
    options = options_for(keyswitch=keyswitch, hoisting=hoisting)
    return run_prefix(LOWERED, program, options, dump_after=dump_after, verify=verify).last


def stats(program, keyswitch: str | None = None, *, hoisting: str = "auto") -> dict[str, Any]:
    """Limb-instruction statistics of `program` (`fhec.analysis.stats.instruction_stats`):
    counts per LimbOp ("ops") and per HE op ("by_he_op"), rvecs and bytes per value class."""
    from fhec.analysis.stats import instruction_stats

    return instruction_stats(lower(program, keyswitch, hoisting=hoisting))
