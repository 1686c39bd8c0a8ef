"""Instruction statistics of a lowered program (what `fhec stats` prints)."""

from __future__ import annotations

from typing import Any

from fhec.ir.lowered import LoweredProgram


def instruction_stats(lowered: LoweredProgram) -> dict[str, Any]:
    """`LimbProgram.stats` (counts per LimbOp under "ops", rvecs and bytes per class),
    plus "by_he_op": HE op -> LimbOp -> count, from each instruction's HE-node tag
    ("(none)" for untagged instructions)."""
    s = lowered.limb.stats()
    per_he: dict[str, dict[str, int]] = {}
    for node_id, counts in lowered.limb.counts_by_he_node().items():
        op = lowered.he.node(node_id).op.value if node_id >= 0 else "(none)"
        bucket = per_he.setdefault(op, {})
        for k, v in counts.items():
            bucket[k] = bucket.get(k, 0) + v
    s["by_he_op"] = per_he
    return s
