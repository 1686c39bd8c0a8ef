"""The whole compiler, as one list of named passes.

    trace                  DSL program -> HeProgram                   fhec.passes.he_rewrite
    check                  every output set, every input used          fhec.ir.he_verify
    expand                 high-level ops -> primitives                fhec.passes.he_expand
    cse, dce               merge duplicates, drop dead nodes           fhec.passes.he_cleanup
    lazy_relinearize       sums of products relinearized once          fhec.passes.he_lazy_relin
    fuse_mod_down_rescale  a mod-down and its rescale: one division    fhec.passes.he_fuse_rescale
    plan_rotations         rotations fit a bounded key set             fhec.passes.he_rotations
      ── what the eager evaluator runs (`fhec.evaluate`) ──
    order_for_hint_reuse   F1 §4.2 key-switch-hint reuse order         fhec.passes.he_order
    choose_keyswitch       BV or hybrid per key switch, as attributes  fhec.passes.keyswitch_choice
    expand_key_switches    key switch -> mod_up, key_mult, mod_down    fhec.passes.he_keyswitch
    lower                  HeProgram -> limb program                   fhec.passes.lower
      ── what the limb executor runs (`fhec.run`, `fhec.lower`) ──
    schedule_offchip       loads, stores, scratchpad slots (Belady)    fhec.passes.offchip
    schedule_cycles        per-unit instruction streams; the fastest   fhec.passes.cycle,
                           of the schedules, paired key switches and   fhec.passes.limb_pairing,
                           limb-major baby steps too                   fhec.passes.limb_order
      ── what `fhec.compile` runs; `Compiled.write` encodes the streams ──

For an ISA machine (``rpu``: `fhec.backends.machine.IsaMachine`), `ISA_TAIL` replaces the
last two passes (`ISA_PIPELINE`; the target's backend, `fhec.isa.backend`, does the work):

    select_instructions    limb ops -> machine code, virtual registers  IsaBackend.select
    allocate_registers     architectural registers, Belady spills       IsaBackend.allocate
    schedule_instructions  issue order and cycles (the timing model)    IsaBackend.schedule
    encode                 machine words + assembly text                IsaBackend.encode
      ── what `fhec.compile` runs; `IsaCompiled.run` simulates the words ──

Each `Pass` is a name, a pure function ``run(ir, options) -> ir`` whose docstring says what
it preserves, and nothing else. `run_passes` is the pass manager: it runs a prefix of
`PIPELINE`, verifies the IR after every pass (`VERIFIERS`; on by default under pytest,
or with ``FHEC_VERIFY=1``), times each pass and measures its output, and prints or
writes the IR after the passes named in ``dump_after``. The public drivers
(`fhec.evaluate`, `fhec.run`, `fhec.lower`, `fhec.compile`) are thin: each runs a prefix
of the same list and then executes or packages what it got.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import time
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Sequence

import numpy as np

from fhec.errors import ParameterError
from fhec.ir.he import HeOp, HeProgram
from fhec.ir.he_verify import check_complete, verify_by_default, verify_he
from fhec.ir.lowered import LoweredProgram
from fhec.ir.schedule import DataSchedule, verify_data_schedule

KEYSWITCH_POLICIES = ("bv", "hybrid", "auto")

RESERVES = (0.0, 0.125, 0.25)
"""Prefetch reserves `schedule_offchip` tries by default (see `fhec.passes.offchip`)."""


@dataclasses.dataclass(frozen=True)
class Options:
    """What the passes may read besides their input IR.

    Attributes:
        target: the `Target` (scheduling passes only; None before).
        keyswitch: "bv", "hybrid", "auto" or None (the parameters' method).
        policy: off-chip eviction policy, "belady" (F1) or "lru".
        prefetch_reserve: one prefetch reserve, or None to try `RESERVES`.
        max_rotation_keys: overrides the program's rotation-key cap.
        hoisting: "auto" (hoist the mod-up of key switches that share a source),
            "single" (every rotation) or "none" (`fhec.passes.he_keyswitch`).
        hint_order: "bounded" (hint-reuse clusters under a working-set bound from the
            target's scratchpad, where clustering without one would not fit it) or
            "unbounded" (F1 §4.2's clustering without one;
            `fhec.passes.he_order.HINT_ORDERS`).
    """

    target: Any = None
    keyswitch: str | None = None
    policy: str = "belady"
    prefetch_reserve: float | None = None
    max_rotation_keys: int | None = None
    hoisting: str = "auto"
    hint_order: str = "bounded"


@dataclasses.dataclass(frozen=True)
class Pass:
    """One named, pure step of the pipeline. Its docstring is its `run`'s."""

    name: str
    run: Callable[[Any, Options], Any]

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        """The first sentence of the docstring (what `fhec passes` prints)."""
        text = " ".join(self.doc.split())
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]


# -- the passes ---------------------------------------------------------------------------


def _trace(program, o: Options) -> HeProgram:
    """A `fhec.Program`, a traced `@fhec.program` function or an `HeProgram` as an
    `HeProgram` (tracing happened when the DSL ran). Preserves the program as written."""
    from fhec.passes.he_rewrite import as_he

    return as_he(program)


def _check(program: HeProgram, o: Options) -> HeProgram:
    """Refuse programs with unset outputs; warn about unused inputs. Preserves everything."""
    return check_complete(program)


def _expand(program: HeProgram, o: Options) -> HeProgram:
    """High-level ops (sum_slots, linear_transform, polynomial) become primitives.
    Preserves the values and types of every output."""
    from fhec.passes.he_expand import expand

    return expand(program)


def _cse(program: HeProgram, o: Options) -> HeProgram:
    """Merge nodes with the same op, arguments and attributes. Preserves every output."""
    from fhec.passes.he_cleanup import cse

    return cse(program)


def _dce(program: HeProgram, o: Options) -> HeProgram:
    """Drop nodes no output depends on. Preserves every output."""
    from fhec.passes.he_cleanup import dce

    return dce(program)


def _lazy_relinearize(program: HeProgram, o: Options) -> HeProgram:
    """Under ``rescale="auto"``, add products in their 3-part form and relinearize and
    rescale each sum once. Preserves every output's message and type."""
    from fhec.passes.he_lazy_relin import lazy_relinearize

    return lazy_relinearize(program)


def _fuse_mod_down_rescale(program: HeProgram, o: Options) -> HeProgram:
    """Where a rescale divides the result of a mod-down (a relinearization that asks for
    hybrid key switching, or a double-hoisted sum over Q·P), divide by P·q_l in one base
    conversion. Preserves every output's message, level and scale (one rounding instead
    of two: `fhec.passes.he_fuse_rescale`)."""
    from fhec.passes.he_fuse_rescale import fuse_mod_down_rescale

    return fuse_mod_down_rescale(program)


def _plan_rotations(program: HeProgram, o: Options) -> HeProgram:
    """Under a rotation-key cap, decompose rotations into a bounded key set (NAF or
    powers of two). Preserves every output; the extra rotations are visible in the IR."""
    from fhec.passes.he_rotations import plan_rotations

    return plan_rotations(program, o.max_rotation_keys)


def _order_for_hint_reuse(program: HeProgram, o: Options) -> HeProgram:
    """Topological reordering that clusters key switches using the same hint (F1 §4.2)
    while the live working set fits the target's scratchpad, unless clustering without
    that bound fits it anyway (``hint_order="unbounded"``: always without the bound, as
    F1 describes it). Preserves every node and value exactly."""
    from fhec.passes.he_order import HINT_ORDERS, order_for_hint_reuse

    if o.hint_order not in HINT_ORDERS:
        raise ParameterError(f"hint_order={o.hint_order!r}: choose one of {', '.join(HINT_ORDERS)}.")
    bounded = o.target is not None and o.hint_order == "bounded"
    return order_for_hint_reuse(program, o.target.onchip_bytes if bounded else None)


def _order_giant_step_centric(program: HeProgram, o: Options) -> HeProgram:
    """When the target asks (``[ordering] linear_transforms = "giant-step-centric"``,
    Osiris §V), order BSGS products around their baby-step keys: each baby-step rotation,
    then the n2 diagonal products that read it, while the next key loads; in tiles of
    giant steps whose partial sums fit the scratchpad, each tile computing the
    double-hoisted baby steps it reads; chains of additions then add their terms in the
    order they are computed.
    Preserves every value exactly (a topological reordering, recomputed rotations and
    reassociated modular additions) and every output's type; other targets keep the
    order."""
    ordering = getattr(o.target, "ordering", None)  # stream targets only
    if ordering is None or ordering.linear_transforms != "giant-step-centric":
        return program
    from fhec.passes.he_gsc import order_giant_step_centric

    return order_giant_step_centric(program, o.target.onchip_bytes)


def keyswitch_policy(program: HeProgram, keyswitch: str | None) -> str:
    """The key-switching policy in force: `keyswitch`, else the parameters' method.
    Raises `ParameterError` for an unknown policy."""
    policy = program.params.keyswitch if keyswitch is None else keyswitch
    if not isinstance(policy, str) or policy not in KEYSWITCH_POLICIES:
        raise ParameterError(f"keyswitch={policy!r}: choose one of {', '.join(KEYSWITCH_POLICIES)}.")
    return policy


def _choose_keyswitch(program: HeProgram, o: Options) -> HeProgram:
    """Pick BV or hybrid for every key switch (F1 §4.2 "algorithmic choice") and record it
    as the node's ``keyswitch`` attribute. A compile given no `keyswitch` keeps the method
    a node already names (a BootstrapConfig's), as `fhec.evaluate` does, so the two stay
    bit-identical; a `keyswitch` the compile is given decides for every node. Preserves
    every value; only annotates."""
    from fhec.passes.keyswitch_choice import annotate_methods

    return annotate_methods(program, keyswitch_policy(program, o.keyswitch), keep_marked=o.keyswitch is None)


def _expand_key_switches(program: HeProgram, o: Options) -> HeProgram:
    """Every key switch becomes automorphism / mod_up / key_mult / mod_down / ks_add, by
    the method in its ``keyswitch`` attribute; rotations of one ciphertext share one
    mod_up (single hoisting) as `Options.hoisting` says. Preserves every ciphertext bit
    for bit."""
    from fhec.passes.he_keyswitch import HOISTING, expand_key_switches
    from fhec.passes.keyswitch_choice import annotated_methods

    if not isinstance(o.hoisting, str) or o.hoisting not in HOISTING:
        raise ParameterError(f"hoisting={o.hoisting!r}: choose one of {', '.join(HOISTING)}.")
    return expand_key_switches(program, annotated_methods(program), o.hoisting)


def _lower(program: HeProgram, o: Options) -> LoweredProgram:
    """The expanded HE program becomes limb instructions (data-free; loaded rvecs carry
    their identity); plaintext constants by OF-Limb and tensor products by Karatsuba when
    the target asks (``[lowering] plaintexts = "of-limb"``, ``products = "karatsuba"``).
    Preserves every residue of every output."""
    from fhec.passes.lower import lower

    lowering = getattr(o.target, "lowering", None)  # stream targets only; ISA machines take the defaults
    if lowering is None:
        return lower(program, verify=False)
    return lower(program, verify=False, of_limb=lowering.plaintexts == "of-limb",
                 karatsuba=lowering.products == "karatsuba")


@dataclasses.dataclass(frozen=True, eq=False)
class DataSchedules:
    """The data schedules `schedule_offchip` produced, one per prefetch reserve tried."""

    lowered: LoweredProgram
    candidates: tuple[tuple[float, DataSchedule], ...]

    def __len__(self) -> int:
        return sum(len(d) for _, d in self.candidates)


def _schedule_offchip(lowered: LoweredProgram, o: Options) -> DataSchedules:
    """Order the instructions and add the loads and stores of a scratchpad of the
    target's capacity (Belady or LRU eviction, F1 §4.3), once per prefetch reserve
    tried. Preserves dataflow: every instruction once, after its producers, with its
    sources resident; every output stored."""
    from fhec.passes.offchip import schedule_offchip

    out = []
    for reserve in RESERVES if o.prefetch_reserve is None else (o.prefetch_reserve,):
        data = schedule_offchip(lowered.limb, o.target, policy=o.policy, prefetch_reserve=reserve, verify=False)
        out.append((reserve, data))
        if data.traffic.noncompulsory == 0 and reserve == 0:
            break  # everything stays on chip: a reserve cannot help
    return DataSchedules(lowered, tuple(out))


@dataclasses.dataclass(frozen=True, eq=False)
class Scheduled:
    """The chosen data schedule and its per-unit streams."""

    lowered: LoweredProgram
    data: DataSchedule
    streams: Any  # fhec.backends.streams.Streams
    prefetch_reserve: float
    stage_reserves: dict[str, float] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.streams)


def _stage_spans(streams, stage: np.ndarray, count: int, occupancy: np.ndarray) -> np.ndarray:
    """Per bootstrap stage, the cycles from its first functional-unit entry to the end of
    its last (`fhec.analysis.stages`); `stage`: per instruction, -1 untagged."""
    tag = np.asarray(streams.tag, dtype=np.int64)
    fu = np.asarray(streams.mod) >= 0
    of = np.full(len(tag), -1, dtype=np.int64)
    of[fu] = stage[tag[fu]]
    start = np.asarray(streams.cycle, dtype=np.int64)
    end = start + streams.entry_occupancy(occupancy)
    spans = np.zeros(count, dtype=np.int64)
    for s in range(count):
        mine = of == s
        if mine.any():
            spans[s] = end[mine].max() - start[mine].min()
    return spans


def _staged_reserves(names: tuple[str, ...], spans: dict[float, np.ndarray], base: float) -> dict[str, float]:
    """Stage -> the reserve whose schedule ran that stage fastest (`spans`: reserve -> per
    stage cycles), where it differs from `base` (the reserve of the whole program's fastest
    schedule). Empty: nothing to try."""
    out = {}
    for s, name in enumerate(names):
        r = min(spans, key=lambda r: (spans[r][s], r != base))  # ties: keep the base reserve
        if r != base:
            out[name] = r
    return out


def _reserve_fractions(stage: np.ndarray, names: tuple[str, ...], base: float, chosen: dict[str, float]) -> np.ndarray:
    """Per instruction, its stage's reserve in `chosen`, else `base`."""
    table = np.array([chosen.get(name, base) for name in names] + [base], dtype=np.float64)
    return table[stage]  # stage -1 (untagged) reads the last entry


def _schedule_cycles(schedules: DataSchedules, o: Options) -> Scheduled:
    """Place every event of each data schedule at a cycle on a unit (F1 §4.4), producing
    one instruction stream per unit, and keep the fastest (then the least traffic). Then
    variants of the program that change priorities only are scheduled at the same
    reserves, one schedule at a time, and each is kept if strictly faster:

    * with the giant-step-centric order (``[ordering] linear_transforms``), the baby steps
      of untiled double-hoisted transforms run limb by limb (`fhec.passes.limb_order`;
      measured when only those whose sums over Q·P do not fit took part, with one reserve
      per program): Osiris set III's DH bootstrap 2.008 -> 1.927 ms at 1 TB/s,
      1.700 -> 1.566 at 2 TB/s, while HELR-1024's sparse DH bootstrap keeps the node-major
      order (limb-major, 1.989 -> 2.003 ms at 1 TB/s and 1.846 -> 1.876 at 2 TB/s), with
      only the transforms whose sums do not fit beside a node-major baby step as a further
      variant where that differs (ResNet-20's DH bootstrap pair on `osiris`, n2 <= 4:
      4.598 ms, against 4.798 with its fitting SlotsToCoeffs limb-major too); and
      the baby steps of single-hoisted transforms whose sums do not fit, each as one block,
      limb-major (ResNet-20's SH bootstrap pair on `osiris`, 4.747 -> 4.418 ms);
    * independent same-hint key switches paired digit by digit (`fhec.passes.limb_pairing`):
      pairing pays where a large hint leaves the scratchpad room for few key switches (the
      DB lookup) and can cost a little where the memory channel is the bound (logistic
      regression, +0.2%). Where the largest of the default reserves gives the fastest
      paired schedule, the next reserve up is tried while it is faster still.

    For a program with one bootstrap (HE nodes tagged with their stage), each program (the
    lowering's and each variant) is then scheduled once more with every stage at the
    reserve that ran that stage fastest (`schedule_offchip` with a reserve per
    instruction), and kept if strictly faster: a stage's best reserve depends on its
    working set (Osiris set III's CoeffsToSlots streams keys into every free slot, best at
    0; EvalMod is fastest with a quarter of the slots kept from SlotsToCoeffs' prefetches,
    which otherwise take the slots its values would reuse; double-hoisted SlotsToCoeffs
    with seven sums over Q·P wants an eighth free for them). Only when the reserve is not
    fixed (`Options.prefetch_reserve`).

    So each program gets the better one. Preserves the data schedule's events, slots and
    traffic (of the program whose schedule is kept; all compute every residue alike)."""
    from fhec.analysis.stages import instruction_stages
    from fhec.backends.streams import op_timing
    from fhec.passes.cycle import schedule_cycles
    from fhec.passes.limb_order import limb_major_baby_steps, limb_major_single_baby_steps
    from fhec.passes.limb_pairing import pair_key_switches
    from fhec.passes.offchip import schedule_offchip

    lowered = schedules.lowered
    names, stage = instruction_stages(lowered.he, lowered.limb)
    occupancy = op_timing(o.target, lowered.limb.N).occupancy
    # A stage's span measures it only where it runs once: programs with one bootstrap
    # (several bootstraps' CoeffsToSlots would span the whole program between them).
    bootstraps = sum(n.op is HeOp.MOD_RAISE for n in lowered.he.nodes)
    staged = len(names) > 1 and bootstraps == 1 and o.prefetch_reserve is None

    def spans_of(streams) -> np.ndarray | None:
        return _stage_spans(streams, stage, len(names), occupancy) if staged else None

    best, best_key, spans = None, None, {}
    for reserve, data in schedules.candidates:  # one candidate's streams at a time: 10^7 entries each at scale
        streams = schedule_cycles(data, o.target)
        key = (streams.total_cycles, data.traffic.total)
        spans[reserve] = spans_of(streams)
        if best_key is None or key < best_key:  # strictly: the first of equals wins, as min() chose
            best, best_key = (reserve, data, streams, {}), key
        del streams

    def try_staged(program, program_spans, base):
        """Schedule `program` with each stage at its fastest reserve; keep it if strictly faster."""
        nonlocal best, best_key
        if not staged:
            return
        chosen = _staged_reserves(names, program_spans, base)
        if not chosen:
            return
        fractions = _reserve_fractions(stage, names, base, chosen)
        data2 = schedule_offchip(program, o.target, policy=o.policy, prefetch_reserve=fractions, verify=False)
        streams2 = schedule_cycles(data2, o.target)
        key = (streams2.total_cycles, data2.traffic.total)
        if key < best_key:
            best_key = key
            best = (base, data2, streams2, chosen, program)
        del data2, streams2

    best = (*best, lowered.limb)
    try_staged(lowered.limb, spans, best[0])
    variants = []  # (program, whether its reserves may climb)
    ordering = getattr(o.target, "ordering", None)  # stream targets only
    if ordering is not None and ordering.linear_transforms == "giant-step-centric":
        every = limb_major_baby_steps(lowered.limb, lowered.he, o.target.onchip_bytes)
        spilling = limb_major_baby_steps(lowered.limb, lowered.he, o.target.onchip_bytes, spilling_only=True)
        variants.append((every, False))
        if not np.array_equal(spilling.prio, every.prio):  # a third schedule only where they differ
            variants.append((spilling, False))
        variants.append((limb_major_single_baby_steps(lowered.limb, lowered.he, o.target.onchip_bytes), False))
    # Pairing is tried for hints of an eighth of the scratchpad or more (the DB lookup's
    # are 14-53% of F1's): a smaller one stays resident beside several key switches'
    # working sets without help. LoLa-CIFAR's 103,831 row rotations read hints of 8%;
    # paired anyway, its second schedule gained 0.1% and cost 100 s and 1.8 GB of its
    # compile. And since the second schedule costs as much as the first, it runs only
    # where the pairs hold a tenth of the program's instructions.
    min_hint = o.target.scratchpad_rvecs(lowered.limb.N) // 8
    variants.append((pair_key_switches(lowered.limb, lowered.he, min_hint_limbs=min_hint, min_share=0.1), True))
    step = RESERVES[-1] - RESERVES[-2]
    for variant, climbs in variants:
        if variant is schedules.lowered.limb:  # the variant changed nothing
            continue
        # The same reserves, one schedule alive at a time. A paired loop keeps two key
        # switches' accumulators live beside the resident hint, so it can want more slots
        # kept free of prefetches than the unpaired program (the DB lookup: 5.49 ms at 1/4,
        # 4.96 at 3/8, 5.10 at 1/2): where the largest reserve is its fastest, the next step
        # up is tried while it is faster still. Only paired programs climb, so a large
        # program that pairs nothing (LoLa-CIFAR) schedules no more.
        reserves = [r for r, _ in schedules.candidates]
        climb = climbs and o.prefetch_reserve is None and reserves == list(RESERVES)
        variant_best, variant_spans, i = None, {}, 0
        while i < len(reserves):
            r = reserves[i]
            data2 = schedule_offchip(variant, o.target, policy=o.policy, prefetch_reserve=r, verify=False)
            streams2 = schedule_cycles(data2, o.target)
            key = (streams2.total_cycles, data2.traffic.total)
            variant_spans[r] = spans_of(streams2)
            if variant_best is None or key < variant_best[0]:
                variant_best = (key, r)
            if key < best_key:
                best_key = key
                best = (r, data2, streams2, {}, variant)
            del data2, streams2
            if climb and i == len(reserves) - 1 and variant_best[1] == r and r + step < 1.0:
                reserves.append(r + step)
            i += 1
        try_staged(variant, variant_spans, variant_best[1])
    reserve, data, streams, chosen, program = best
    kept = lowered if program is lowered.limb else dataclasses.replace(lowered, limb=program)
    return Scheduled(kept, data, streams, reserve, chosen)


# -- the ISA tail: after `lower`, for a programmable target (fhec.isa) ---------------------


def _isa_backend(o: Options):
    from fhec.isa.backend import backend_for

    return backend_for(o.target)


def _select_instructions(lowered: LoweredProgram, o: Options):
    """Limb ops become the target ISA's machine instructions over virtual registers, with
    the data-memory layout and the read-only data (twiddles, constants) they need
    (`fhec.isa.backend`). Preserves every residue of every output."""
    return _isa_backend(o).select(lowered, o.target)


def _allocate_registers(selected, o: Options):
    """Virtual registers become the machine's architectural registers; values that do not
    fit are spilled to the data memory by Belady's rule (`fhec.isa.regalloc`). Preserves
    every instruction and the values it reads and writes."""
    return _isa_backend(o).allocate(selected, o.target)


def _schedule_instructions(allocated, o: Options):
    """Order the instructions for the machine's issue rules and time them with its model
    (in-order issue, busyboard, pipeline latencies and initiation intervals). Preserves
    every dependence through registers and memory."""
    return _isa_backend(o).schedule(allocated, o.target)


def _encode(timed, o: Options):
    """The scheduled instructions as binary machine words and assembly text. Preserves
    every instruction: decoding the words gives them back."""
    return _isa_backend(o).encode(timed, o.target)


PIPELINE: tuple[Pass, ...] = (
    Pass("trace", _trace),
    Pass("check", _check),
    Pass("expand", _expand),
    Pass("cse", _cse),
    Pass("dce", _dce),
    Pass("lazy_relinearize", _lazy_relinearize),
    Pass("fuse_mod_down_rescale", _fuse_mod_down_rescale),
    Pass("plan_rotations", _plan_rotations),
    Pass("order_for_hint_reuse", _order_for_hint_reuse),
    Pass("order_giant_step_centric", _order_giant_step_centric),
    Pass("choose_keyswitch", _choose_keyswitch),
    Pass("expand_key_switches", _expand_key_switches),
    Pass("lower", _lower),
    Pass("schedule_offchip", _schedule_offchip),
    Pass("schedule_cycles", _schedule_cycles),
)
"""The compiler, in order."""

PASS_NAMES = tuple(p.name for p in PIPELINE)

ISA_TAIL: tuple[Pass, ...] = (
    Pass("select_instructions", _select_instructions),
    Pass("allocate_registers", _allocate_registers),
    Pass("schedule_instructions", _schedule_instructions),
    Pass("encode", _encode),
)
"""What replaces ``schedule_offchip`` and ``schedule_cycles`` for an ISA machine
(`fhec.backends.machine.IsaMachine`, e.g. ``rpu``)."""

ISA_PIPELINE: tuple[Pass, ...] = PIPELINE[: PASS_NAMES.index("lower") + 1] + ISA_TAIL
"""The compiler for an ISA machine, in order: the shared passes up to ``lower``, then the ISA tail."""

ENCODED = "encode"

PREPARED = "plan_rotations"
"""The last pass of what the eager evaluator runs (`fhec.evaluate`)."""
HE_DONE = "choose_keyswitch"
"""The last pass before key switches are split into pieces: the HE program a compiled
run's eager counterpart executes (`fhec.run.RunResult.eager`)."""
LOWERED = "lower"
COMPILED = "schedule_cycles"


def prefix(last: str, pipeline: tuple[Pass, ...] = PIPELINE) -> tuple[Pass, ...]:
    """`pipeline` (default `PIPELINE`) up to and including the pass named `last`."""
    return pipeline[: [p.name for p in pipeline].index(last) + 1]


def pipeline_for(target) -> tuple[Pass, ...]:
    """The pass list for `target`: `ISA_PIPELINE` for an ISA machine, else `PIPELINE`."""
    from fhec.backends.machine import IsaMachine

    return ISA_PIPELINE if isinstance(target, IsaMachine) else PIPELINE


# -- verification and dumps, by IR type ----------------------------------------------------


def _verify_scheduled(s: Scheduled, o: Options) -> None:
    from fhec.errors import InternalError
    from fhec.sim.check import StreamHazardError, check_streams

    try:
        check_streams(s.streams, o.target, s.lowered.limb)
    except StreamHazardError as e:  # streams fhec just scheduled: its own bug, not the user's
        raise InternalError(f"the cycle scheduler emitted streams with hazards: {e}") from e


def _verify_limb(lowered: LoweredProgram, o: Options) -> None:
    from fhec.ir.limb import verify_limb_program

    verify_limb_program(lowered.limb)


def _verify_encoded(encoded, o: Options) -> None:
    from fhec.errors import InternalError
    from fhec.isa.backend import backend_for

    backend = backend_for(o.target)
    from fhec.isa.code import without_origins

    decoded, want = backend.decode(encoded.words), without_origins(encoded.timed.code)
    if decoded != want:
        first = next((i for i, (a, b) in enumerate(zip(decoded, want)) if a != b), min(len(decoded), len(want)))
        raise InternalError(f"{backend.name}: decoding the encoded words differs from the code at instruction {first}")


def _isa_types() -> dict[type, tuple[Callable, Callable]]:
    from fhec.isa.code import Allocated, Encoded, Selected, Timed, format_code

    return {
        Selected: (lambda s, o: None, lambda s: format_code(s.code, None)),
        Allocated: (lambda s, o: None, lambda s: format_code(s.code, None)),
        Timed: (lambda s, o: None, lambda s: format_code(s.code, None)),
        Encoded: (_verify_encoded, lambda e: e.asm),
    }


VERIFIERS: dict[type, Callable[[Any, Options], None]] = {
    HeProgram: lambda p, o: verify_he(p),
    LoweredProgram: _verify_limb,
    DataSchedules: lambda s, o: [verify_data_schedule(d) for _, d in s.candidates],
    Scheduled: _verify_scheduled,
}
"""The verifier of each IR, run after every pass that produces it."""


def _dump_he(p: HeProgram) -> str:
    from fhec.ir.he_print import format_program

    return format_program(p)


def _dump_streams(s: Scheduled) -> str:
    from fhec.backends.stream_files import format_stream

    return "\n".join(format_stream(s.streams, u) for u in range(len(s.streams.units)))


DUMPERS: dict[type, Callable[[Any], str]] = {
    HeProgram: _dump_he,
    LoweredProgram: lambda lw: lw.limb.text(limit=None),
    DataSchedules: lambda s: "\n\n".join(f"# prefetch reserve {r}\n{d.text(limit=None)}" for r, d in s.candidates),
    Scheduled: _dump_streams,
}
"""The text form of each IR (what ``dump_after`` prints)."""

for _ir_type, (_verify, _dumper) in _isa_types().items():
    VERIFIERS[_ir_type] = _verify
    DUMPERS[_ir_type] = _dumper
del _ir_type, _verify, _dumper


# -- the pass manager ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PassRecord:
    """What running one pass cost: seconds, and the size of its output (HE nodes, limb
    instructions, data-schedule events or stream entries)."""

    name: str
    seconds: float
    size: int

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, eq=False)
class PipelineRun:
    """The result of `run_passes`: every pass's output by name, and its record."""

    outputs: dict[str, Any]
    records: tuple[PassRecord, ...]

    @property
    def last(self) -> Any:
        return self.outputs[self.records[-1].name]

    def __getitem__(self, name: str) -> Any:
        return self.outputs[name]

    def seconds(self) -> dict[str, float]:
        return {r.name: round(r.seconds, 4) for r in self.records}


def _size(ir: Any) -> int:
    if isinstance(ir, HeProgram):
        return len(ir.nodes)
    if isinstance(ir, LoweredProgram):
        return len(ir.limb)
    return len(ir)


def _check_dump_names(dump_after: Sequence[str], passes: Sequence[Pass]) -> None:
    names = [p.name for p in passes]
    for name in dump_after:
        if name not in names:
            raise ParameterError(
                f"dump_after={name!r} is not a pass of this pipeline; choose from {', '.join(names)} (`fhec passes`)."
            )


def run_passes(
    passes: Sequence[Pass],
    ir: Any,
    options: Options = Options(),
    *,
    verify: bool | None = None,
    dump_after: Sequence[str] = (),
    dump_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    keep: Collection[str] | None = None,
) -> PipelineRun:
    """Run `passes` in order on `ir`.

    Args:
        verify: verify the IR after every pass (`VERIFIERS`); None: `verify_by_default()`.
        dump_after: pass names after which to dump the IR (`DUMPERS`): printed to stdout,
            or written to ``dump_dir/NN-<pass>.txt`` (NN: the pass number `fhec passes` shows)
            when `dump_dir` is given.
        progress: called with each pass's name as it starts.
        keep: the pass names whose outputs the result keeps, besides the last pass's
            (None: every pass's). At N = 2^16 each HE program and data schedule is
            hundreds of MB, so a caller that reads a few drops the rest as it goes.

    Raises `ParameterError` for a `dump_after` name not in `passes` or a `dump_dir` without
    `dump_after`, and what the passes and verifiers raise.
    """
    if isinstance(dump_after, str):
        dump_after = (dump_after,)
    _check_dump_names(dump_after, passes)
    if dump_dir is not None and not dump_after:
        raise ParameterError(f"dump_dir = {str(dump_dir)!r:.60} without dump_after writes nothing: name the passes "
                             f"to dump (dump_after=[...], --dump-after PASS; `fhec passes` lists them).")
    verify = verify_by_default() if verify is None else verify
    outputs: dict[str, Any] = {}
    records = []
    with _without_cyclic_gc():
        for i, p in enumerate(passes):
            if progress is not None:
                progress(p.name)
            t0 = time.perf_counter()
            ir = p.run(ir, options)
            seconds = time.perf_counter() - t0
            if keep is not None and records and records[-1].name not in keep:
                outputs.pop(records[-1].name, None)  # its only reader, this pass, is done
            outputs[p.name] = ir
            records.append(PassRecord(p.name, seconds, _size(ir)))
            if verify and type(ir) in VERIFIERS:
                VERIFIERS[type(ir)](ir, options)
            if p.name in dump_after:
                _dump(i + 1, p.name, ir, dump_dir)
    return PipelineRun(outputs, tuple(records))


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector, restoring its state after.

    The passes allocate hundreds of thousands of small acyclic objects (HE nodes, their
    types, tuples), which reference counting frees; each full collection would traverse
    all of them again (about a tenth of the compile time of an 8,000-product program).
    Whatever cycles a pass leaves are collected once the collector runs again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _dump(index: int, name: str, ir: Any, dump_dir) -> None:
    text = DUMPERS[type(ir)](ir)
    if dump_dir is None:
        print(f"// ---- IR after {name} ----\n{text}")
        return
    from fhec.backends.stream_files import write_file
    from fhec.errors import OutputDirectoryError

    out = Path(dump_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as e:
        raise OutputDirectoryError(f"cannot create the dump directory {out}: {getattr(e, 'strerror', None) or e}") from None
    write_file(out / f"{index:02d}-{name}.txt", text + "\n")


def describe() -> str:
    """The pipeline, one line per pass, then the ISA tail (what `fhec passes` prints)."""
    width = max(len(p.name) for p in (*PIPELINE, *ISA_TAIL))
    lines = [f"{i:>2}. {p.name:<{width}}  {p.summary}" for i, p in enumerate(PIPELINE, 1)]
    tail = len(ISA_PIPELINE) - len(ISA_TAIL)
    lines.append(f"for an ISA machine (e.g. rpu) these replace {tail + 1}-{len(PIPELINE)}:")
    lines += [f"{i:>2}. {p.name:<{width}}  {p.summary}" for i, p in enumerate(ISA_TAIL, tail + 1)]
    return "\n".join(lines)


def options_for(target=None, *, keyswitch=None, policy="belady", prefetch_reserve=None, max_rotation_keys=None,
                hoisting="auto", hint_order="bounded") -> Options:
    """`Options` with `target` loaded (a shipped name, a TOML path or a `Target`)."""
    if target is not None:
        from fhec.backends.machine import IsaMachine
        from fhec.backends.target import Target, load_target, target_from_dict

        if isinstance(target, (Target, IsaMachine)):
            # pydantic's model_copy(update=...) skips validation: a target edited in Python
            # is checked here as its file would be (TargetError naming the field)
            target_from_dict(target.model_dump(), f"target {target.name!r}")
        else:
            target = load_target(target)
    return Options(target, keyswitch, policy, prefetch_reserve, max_rotation_keys, hoisting, hint_order)


def run_prefix(last: str, program, options: Options = Options(), **kw) -> PipelineRun:
    """`run_passes(prefix(last, pipeline_for(options.target)), program, options, **kw)`."""
    return run_passes(prefix(last, pipeline_for(options.target)), program, options, **kw)


__all__ = [
    "PIPELINE", "PASS_NAMES", "ISA_TAIL", "ISA_PIPELINE", "pipeline_for", "Pass", "Options", "PassRecord", "PipelineRun", "run_passes", "run_prefix",
    "prefix", "describe", "options_for", "keyswitch_policy", "DataSchedules", "Scheduled", "VERIFIERS", "DUMPERS",
]

