"""Cost per stage of a compiled program whose HE nodes carry a ``stage`` attribute.

The bootstrap expansion (`fhec.ir.he_bootstrap`) tags every node it emits with its stage
("modraise", "subsum" when sparse, "cts", "evalmod", "stc"), the key-switch expansion
passes the tag on to the pieces, and every limb instruction names its HE node: so each
instruction, stream entry and load or store has a stage. Per stage this module reports

* ``cycles``: with one bootstrap, from the stage's first functional-unit entry to the end
  of its last (its stages run one after the other, so these spans barely overlap); with
  several, whose stages of one name run at different times or interleave, the cycles in
  which an entry of the stage occupies a unit (the union of its entries; `stage_windows`),
  so that no stage is charged the time between two bootstraps;
* ``offchip_bytes``: the loads and stores of the stage's data (a load is charged to the
  first computation that reads what it loaded, a store to the instruction that wrote it);
  a key half the target generates on chip moves nothing off chip and is not counted;
* ``modular_multiplies``: element multiplications mod a prime: N per MUL, MUL_CONST and
  BCONV term, (N/2)·log2 N per NTT or INTT (one per butterfly);
* ``instructions``: limb instructions.

Untagged work (the program around the bootstrap) is not reported.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fhec.backends.streams import Streams
from fhec.ir.limb import LimbOp
from fhec.ir.schedule import DataSchedule, Event


def modular_multiplies_per_op(N: int) -> np.ndarray:
    """Element modular multiplications of one instruction of each `LimbOp` at ring degree N."""
    per = np.zeros(len(LimbOp), dtype=np.int64)
    for op in (LimbOp.MUL, LimbOp.MUL_CONST, LimbOp.BCONV):
        per[op] = N
    for op in (LimbOp.NTT, LimbOp.INTT):
        per[op] = N // 2 * int(math.log2(N))
    return per


def instruction_stages(he_program, limb) -> tuple[tuple[str, ...], np.ndarray]:
    """(stage names in first-seen order, stage index per instruction; -1 = untagged)."""
    names: list[str] = []
    of_node: dict[int, int] = {}
    for n in he_program.nodes:
        stage = n.attr("stage", None)
        if stage is not None:
            if stage not in names:
                names.append(stage)
            of_node[n.id] = names.index(stage)
    he = np.asarray(limb.he_node, dtype=np.int64)
    table = np.full(max(int(he.max(initial=-1)) + 2, 1), -1, dtype=np.int64)
    for nid, s in of_node.items():
        if nid < len(table) - 1:
            table[nid] = s
    stage = np.where(he >= 0, table[np.clip(he, 0, len(table) - 1)], -1)
    return tuple(names), stage


def _charge_memory_events(data: DataSchedule, instr_stage: np.ndarray) -> np.ndarray:
    """Stage of every event: a computation its instruction's; a load the stage of the
    first computation after it that reads the loaded rvec (loads are prefetched early,
    so the neighbouring computation may belong to another stage); a store the stage of
    the instruction that wrote the rvec."""
    limb = data.program
    kind, arg = np.asarray(data.kind), np.asarray(data.arg, dtype=np.int64)
    stage = np.full(len(kind), -1, dtype=np.int64)
    compute = np.flatnonzero(kind == Event.COMPUTE)
    stage[compute] = instr_stage[arg[compute]]
    # (rvec, event position) of every source read, sorted, to find a load's next reader
    instr = arg[compute]
    reads_rvec = np.concatenate([np.asarray(limb.src0)[instr], np.asarray(limb.src1)[instr]]).astype(np.int64)
    reads_pos = np.concatenate([compute, compute])
    keep = reads_rvec >= 0
    key = reads_rvec[keep] * (len(kind) + 1) + reads_pos[keep]
    order = np.argsort(key)
    key, reader_pos = key[order], reads_pos[keep][order]
    loads = np.flatnonzero(kind == Event.LOAD)
    at = np.searchsorted(key, arg[loads] * (len(kind) + 1) + loads)
    found = at < len(key)
    found[found] = key[at[found]] // (len(kind) + 1) == arg[loads][found]
    stage[loads[found]] = stage[reader_pos[at[found]]]
    stores = np.flatnonzero(kind == Event.STORE)
    writer = limb.producer()[arg[stores]].astype(np.int64)
    stage[stores] = np.where(writer >= 0, instr_stage[writer.clip(min=0)], -1)
    return stage


def bootstrap_count(he_program) -> int:
    """Bootstraps in an expanded program: one ModRaise each."""
    from fhec.ir.he import HeOp

    return sum(1 for n in he_program.nodes if n.op is HeOp.MOD_RAISE)


def stage_windows(start: np.ndarray, end: np.ndarray, several: bool) -> list[tuple[int, int]]:
    """The cycle windows a stage's entries ([start, end) each) occupy: one, from the first
    start to the last end, or with `several` bootstraps the merged intervals of the entries."""
    if len(start) == 0:
        return []
    if not several:
        return [(int(start.min()), int(end.max()))]
    order = np.argsort(start, kind="stable")
    lo, hi = start[order], np.maximum.accumulate(end[order])
    breaks = np.flatnonzero(lo[1:] > hi[:-1])
    firsts = np.concatenate([[0], breaks + 1])
    lasts = np.concatenate([breaks, [len(lo) - 1]])
    return [(int(lo[a]), int(hi[b])) for a, b in zip(firsts, lasts)]


def stage_entry_windows(he_program, limb, streams: Streams, occupancy: np.ndarray) -> tuple[tuple[str, ...], list]:
    """(stage names, per stage its `stage_windows` over the stream's functional-unit entries)."""
    names, instr_stage = instruction_stages(he_program, limb)
    tag = np.asarray(streams.tag, dtype=np.int64)
    fu = (np.asarray(streams.mod) >= 0) & (tag >= 0) & (tag < len(instr_stage))
    fu_stage = np.full(len(tag), -1, dtype=np.int64)
    fu_stage[fu] = instr_stage[tag[fu]]
    start = np.asarray(streams.cycle, dtype=np.int64)
    end = start + streams.entry_occupancy(occupancy)
    several = bootstrap_count(he_program) > 1
    return names, [stage_windows(start[fu_stage == s], end[fu_stage == s], several) for s in range(len(names))]


def stage_costs(he_program, data: DataSchedule, streams: Streams, occupancy: np.ndarray,
                generated: np.ndarray | None = None, rvec_bytes: int | None = None) -> dict[str, dict[str, Any]]:
    """Stage name -> {cycles, offchip_bytes, modular_multiplies, instructions} (see the
    module docstring); empty when no node has a stage. `occupancy`: cycles each stream
    op keeps its unit busy (`fhec.sim.timing.op_timing(...).occupancy`; an entry's own,
    `Streams.occupancy`, where recorded); `generated`: per
    rvec, whether the target generates it on chip (`Target.generated_rvecs`); `rvec_bytes`:
    the target's bytes per rvec (default the program's)."""
    limb = data.program
    rvec_bytes = limb.rvec_bytes if rvec_bytes is None else rvec_bytes
    names, instr_stage = instruction_stages(he_program, limb)
    if not names:
        return {}
    ops = np.asarray(limb.op, dtype=np.int64)
    mults = modular_multiplies_per_op(limb.N)[ops]
    event_stage = _charge_memory_events(data, instr_stage)
    kind = np.asarray(data.kind)
    moved = kind != Event.COMPUTE
    if generated is not None:
        arg = np.asarray(data.arg, dtype=np.int64)
        moved &= ~((kind == Event.LOAD) & generated[np.where(kind == Event.LOAD, arg, 0)])
    _, windows = stage_entry_windows(he_program, limb, streams, occupancy)
    out: dict[str, dict[str, Any]] = {}
    for s, name in enumerate(names):
        out[name] = {
            "cycles": sum(hi - lo for lo, hi in windows[s]),
            "offchip_bytes": int(np.count_nonzero(moved & (event_stage == s))) * rvec_bytes,
            "modular_multiplies": int(mults[instr_stage == s].sum()),
            "instructions": int(np.count_nonzero(instr_stage == s)),
        }
    return out
