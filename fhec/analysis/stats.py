"""Instruction statistics of a lowered program (what `fhec stats` prints)."""

from __future__ import annotations

from typing import Any

from fhec.ir.lowered import LoweredProgram


def instruction_stats(lowered: LoweredProgram) -> dict[str, Any]:
    """`LimbProgram.stats` (counts per LimbOp under "ops", rvecs and bytes per class),
    plus "by_he_op": HE op -> LimbOp -> count, from each instruction's HE-node tag
    ("(none)" for untagged instructions), and, when some HE nodes carry a ``stage``
    attribute (a bootstrap's "modraise", "cts", "evalmod", "stc"), "by_stage": stage ->
    LimbOp -> count."""
    s = lowered.limb.stats()
    per_he: dict[str, dict[str, int]] = {}
    per_stage: dict[str, dict[str, int]] = {}
    for node_id, counts in lowered.limb.counts_by_he_node().items():
        node = lowered.he.node(node_id) if node_id >= 0 else None
        op = node.op.value if node is not None else "(none)"
        buckets = [per_he.setdefault(op, {})]
        stage = node.attr("stage", None) if node is not None else None
        if stage is not None:
            buckets.append(per_stage.setdefault(stage, {}))
        for bucket in buckets:
            for k, v in counts.items():
                bucket[k] = bucket.get(k, 0) + v
    s["by_he_op"] = per_he
    if per_stage:
        s["by_stage"] = per_stage
    return s
