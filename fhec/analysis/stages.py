"""Cost per stage of a compiled program whose HE nodes carry a ``stage`` attribute.

The bootstrap expansion (`fhec.ir.he_bootstrap`) tags every node it emits with its stage
("modraise", "subsum" when sparse, "cts", "evalmod", "stc"), the key-switch expansion
passes the tag on to the pieces, and every limb instruction names its HE node: so each
instruction, stream entry and load or store has a stage. Per stage this module reports

* ``cycles``: from the stage's first functional-unit entry to the end of its last (the
  stages of one bootstrap run one after the other, so these spans barely overlap);
* ``offchip_bytes``: the loads and stores of the stage's data (a load is charged to the
  first computation that reads what it loaded, a store to the instruction that wrote it);
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


def stage_costs(he_program, data: DataSchedule, streams: Streams, occupancy: np.ndarray) -> dict[str, dict[str, Any]]:
    """Stage name -> {cycles, offchip_bytes, modular_multiplies, instructions} (see the
    module docstring); empty when no node has a stage. `occupancy`: cycles each stream
    op keeps its unit busy (`fhec.sim.timing.op_timing(...).occupancy`)."""
    limb = data.program
    names, instr_stage = instruction_stages(he_program, limb)
    if not names:
        return {}
    ops = np.asarray(limb.op, dtype=np.int64)
    mults = modular_multiplies_per_op(limb.N)[ops]
    event_stage = _charge_memory_events(data, instr_stage)
    moved = np.asarray(data.kind) != Event.COMPUTE
    tag = np.asarray(streams.tag, dtype=np.int64)
    fu = (np.asarray(streams.mod) >= 0) & (tag >= 0) & (tag < len(instr_stage))
    fu_stage = np.full(len(tag), -1, dtype=np.int64)
    fu_stage[fu] = instr_stage[tag[fu]]
    end = np.asarray(streams.cycle, dtype=np.int64) + occupancy[np.asarray(streams.op)]
    out: dict[str, dict[str, Any]] = {}
    for s, name in enumerate(names):
        entries = fu_stage == s
        span = int(end[entries].max() - np.asarray(streams.cycle)[entries].min()) if entries.any() else 0
        out[name] = {
            "cycles": span,
            "offchip_bytes": int(np.count_nonzero(moved & (event_stage == s))) * limb.rvec_bytes,
            "modular_multiplies": int(mults[instr_stage == s].sum()),
            "instructions": int(np.count_nonzero(instr_stage == s)),
        }
    return out
