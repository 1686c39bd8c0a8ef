"""`schedule_offchip`: prepares the kernel's `Problem` from a `LimbProgram` and a
`Target` (numpy), runs `kernel.schedule_kernel` and wraps its events in a
`DataSchedule`."""

from __future__ import annotations

import numpy as np

from fhec.analysis.traffic import classify_traffic
from fhec.backends.target import Target, UnitKind
from fhec.errors import InternalError, InvalidArgumentError, TargetError
from fhec.ir.limb import LimbProgram, verify_limb_program
from fhec.ir.limb_ops import IS_LOADED, RVecClass
from fhec.ir.schedule import DataSchedule, Event
from fhec.passes.offchip.kernel import Outcome, schedule_kernel
from fhec.passes.offchip.policies import POLICIES, Policy
from fhec.passes.offchip.state import NUM_KINDS, Problem

__all__ = ["schedule_offchip", "check_fits_target", "MIN_SLOTS"]

MIN_SLOTS = 3
"""Scratchpad slots the schedulers need: two sources and a distinct destination."""

RUNAHEAD_FRACTION = 0.25
"""How far, in instructions of the priority order, an instruction may run ahead of the
most urgent instruction waiting for a load, as a fraction of the scratchpad's slots.
Every instruction in between may leave a value on chip, so the run-ahead fills at most
this share of the scratchpad with values needed only later; without a limit, work that
needs only inputs (a chain's level-downs of its inputs, for every level) runs while the
first key switch waits for its hint, and is spilled when the hint arrives (the depth-20
chain of the optimizing-passes issue: 1.14x compulsory traffic at the best prefetch
reserve, 1.05x with the limit)."""

_KIND_INDEX = {k: i for i, k in enumerate(UnitKind)}
assert len(_KIND_INDEX) <= NUM_KINDS


def _users_csr(num_rvecs: int, src0: np.ndarray, src1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per rvec, the ascending ranks of the instructions reading it (each once)."""
    n = len(src0)
    ranks = np.arange(n, dtype=np.int64)
    second = (src1 >= 0) & (src1 != src0)
    rv = np.concatenate([src0.astype(np.int64), src1[second].astype(np.int64)])
    rk = np.concatenate([ranks, ranks[second]])
    order = np.argsort(rv * max(n, 1) + rk, kind="stable")
    users = rk[order]
    counts = np.bincount(rv, minlength=num_rvecs)
    ptr = np.zeros(num_rvecs + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, users


def check_fits_target(program: LimbProgram, target: Target) -> None:
    """Raise TargetError unless `target` supports the program's N and word size."""
    target.check_ring_degree(program.N)
    if program.word_bits > target.word_bits:
        raise TargetError(
            f"the program uses {program.word_bits}-bit words but target {target.name!r} has "
            f"{target.word_bits}-bit words; choose parameters with word_bits <= {target.word_bits}"
        )


def _unit_tables(program: LimbProgram, target: Target, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per op code: unit-kind index, cycles it occupies all units of its kind, cycles to its result."""
    N = program.N
    kind_of = np.zeros(16, dtype=np.int64)
    cost_of = np.zeros(16, dtype=np.float64)
    busy_of = np.zeros(16, dtype=np.float64)
    for op in np.unique(ops).tolist():
        unit = target.unit_for(op)
        kind_of[op] = _KIND_INDEX[unit.kind]
        cost_of[op] = target.occupancy_cycles(op, N) / target.total_units(unit.kind)
        busy_of[op] = target.op_cycles(op, N)
    return kind_of, cost_of, busy_of


def _reserve_slots(prefetch_reserve, order: np.ndarray, slots: int) -> np.ndarray:
    """Per rank, the slots prefetches leave free (`schedule_offchip`'s `prefetch_reserve`:
    one fraction, or one per instruction in program order)."""
    fraction = np.asarray(prefetch_reserve, dtype=np.float64)
    per_rank = np.full(len(order), float(fraction)) if fraction.ndim == 0 else fraction[order]
    return (slots * per_rank).astype(np.int64)


def _problem(program: LimbProgram, target: Target, order: np.ndarray, slots: int, policy: str,
             prefetch_reserve) -> Problem:
    s0 = program.src0[order].astype(np.int64)
    s1_raw = program.src1[order].astype(np.int64)
    s1 = np.where(s1_raw == s0, -1, s1_raw)
    ops = program.op[order]
    ptr, users = _users_csr(program.num_rvecs, s0, s1)
    loaded = IS_LOADED[program.rvec_class].copy()
    deps = (~loaded[s0]).astype(np.int64) + ((s1 >= 0) & ~loaded[np.maximum(s1, 0)]).astype(np.int64)
    kind_of, cost_of, busy_of = _unit_tables(program, target, ops)
    return Problem(
        src0=s0, src1=s1, src1_raw=s1_raw, dst=program.dst[order].astype(np.int64),
        kind=kind_of[ops], cost=cost_of[ops], busy=busy_of[ops], deps=deps,
        users_ptr=ptr, users=users, loaded=loaded, is_output=program.rvec_class == RVecClass.OUTPUT,
        gen=target.generated_rvecs(program),
        capacity=slots, xfer=max(1.0, target.rvec_bytes(program.N) / target.offchip_bytes_per_cycle),
        mem_lat=float(target.offchip_latency_cycles), policy=int(Policy[policy.upper()]),
        reserve=_reserve_slots(prefetch_reserve, order, slots), window=max(1, int(slots * RUNAHEAD_FRACTION)),
        gen_xfer=float(target.generator_cycles(program.N)), gen_lat=float(target.keys.generator_latency),
    )


def schedule_offchip(
    program: LimbProgram,
    target: Target,
    *,
    policy: str = "belady",
    capacity_bytes: int | None = None,
    prefetch_reserve: float | np.ndarray = 0.0,
    verify: bool = True,
) -> DataSchedule:
    """Schedule off-chip data movement for `program` on `target` (F1 §4.3).

    Args:
        policy: ``"belady"`` (evict the value used furthest in the future, F1) or
            ``"lru"`` (evict the least recently used value; for comparison).
        capacity_bytes: scratchpad capacity to plan for; defaults to the target's.
        prefetch_reserve: fraction of the slots that prefetches (loads ahead of need)
            leave free for the values computation creates. Without a reserve, prefetched
            hints can fill the scratchpad and then be the furthest-used values when an
            intermediate needs a slot: evicted before their first use, they are loaded
            twice. Loads that an instruction is waiting on may always use any free slot.
            `fhec.compile` tries several reserves and keeps the fastest schedule. An array
            gives one fraction per instruction (in program order): while an instruction is
            the most urgent one that could run, its fraction applies (`fhec.pipeline`
            gives a bootstrap's stages each their own).
        verify: run `verify_limb_program` first.

    Returns a `DataSchedule` whose events issue every instruction once and store
    every OUTPUT once. Raises TargetError if the target does not support the
    program's N or word size, or if the capacity holds fewer than `MIN_SLOTS`
    RVecs; InvalidArgumentError for something other than a limb program, an unknown
    policy or a reserve out of range; InternalError for an invalid program.
    """
    if not isinstance(program, LimbProgram):
        raise InvalidArgumentError(f"schedule_offchip takes a LimbProgram, not a {type(program).__name__}; "
                                   f"pass fhec.lower(p).limb for a Program p.")
    if policy not in POLICIES:
        raise InvalidArgumentError(f"unknown eviction policy {policy!r}; choose one of {POLICIES}")
    fractions = np.asarray(prefetch_reserve, dtype=np.float64)
    if fractions.ndim > 1 or (fractions.ndim == 1 and len(fractions) != len(program)):
        raise InvalidArgumentError(f"prefetch_reserve: one fraction, or one per instruction ({len(program)}); "
                         f"got shape {fractions.shape}")
    if fractions.size and not (np.all(fractions >= 0.0) and np.all(fractions < 1.0)):
        raise InvalidArgumentError(f"prefetch_reserve={prefetch_reserve!r} must be in [0, 1)")
    if verify:
        verify_limb_program(program)
    check_fits_target(program, target)
    cap_bytes = target.scratchpad.capacity_bytes if capacity_bytes is None else int(capacity_bytes)
    # the machine stores its own words: a 32-bit program on a 40-bit target takes 8-byte slots
    # (the slots `fhec.backends.streams.scratchpad_slots` and the checker count)
    rvec_bytes = target.rvec_bytes(program.N)
    slots = cap_bytes // rvec_bytes
    if slots < MIN_SLOTS:
        raise TargetError(
            f"a scratchpad of {cap_bytes} bytes holds {slots} RVecs of {rvec_bytes} bytes at "
            f"N = {program.N}; scheduling needs at least {MIN_SLOTS}. Use a smaller N or a larger scratchpad"
        )

    order = np.argsort(program.prio, kind="stable")
    res = schedule_kernel(_problem(program, target, order, slots, policy, prefetch_reserve))
    if res.outcome == Outcome.CAPACITY:
        raise TargetError(
            f"scratchpad of {slots} RVecs is too small to hold the operands of one instruction "
            f"(need {MIN_SLOTS})"
        )
    if res.outcome == Outcome.DEADLOCK:
        raise InternalError("off-chip scheduler made no progress: no instruction ready and nothing to load")
    kind = res.kind.copy()
    arg = res.arg.copy()
    comp = kind == Event.COMPUTE
    arg[comp] = order[arg[comp]]  # ranks back to instruction indices
    return DataSchedule(
        program=program,
        policy=policy,
        slots=slots,
        kind=kind,
        arg=arg,
        slot=res.slot.copy(),
        src0_slot=res.src0.copy(),
        src1_slot=res.src1.copy(),
        traffic=classify_traffic(program, kind, arg, target.generated_rvecs(program), target.rvec_bytes(program.N)),
        peak_slots=int(res.peak),
    )
