"""Turning the rvecs of program outputs into OUTPUT rvecs of a finished `LimbProgram`.

An HE output value may share limbs with other values (an addition of a plaintext passes
c1 through unchanged; an output may be an input), but OUTPUT rvecs are written by an
instruction and read out at the end, each once. So each output limb is either claimed
(an intermediate not yet claimed becomes OUTPUT) or copied by one multiply-by-one.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.ir.limb import LimbOp, LimbProgram, RVecClass
from fhec.ir.limb_ops import TAG_WIDTH
from fhec.passes.lower_ops import LimbEmitter


def finalize_outputs(
    emitter: LimbEmitter, outputs: dict[str, np.ndarray], output_nodes: dict[str, int] | None = None
) -> tuple[LimbProgram, dict[str, np.ndarray]]:
    """Build the program with every limb of every output as an OUTPUT rvec.

    `outputs` maps output names to rvec arrays of shape (parts, limbs), in output order.
    A limb that is not a fresh intermediate (an input, or a value two outputs share) is
    copied (times 1) into its own OUTPUT rvec; the copy is tagged with the output's HE
    node from `output_nodes`. Returns the program and the OUTPUT rvec ids per output
    (same shapes).
    """
    b = emitter.builder
    classes = b._rvecs.view("rvec_class")
    claimed: set[int] = set()
    final: dict[str, np.ndarray] = {}
    tags_for: dict[int, tuple[int, int, int]] = {}
    for name, rv in outputs.items():
        idx = b.add_name(RVecClass.OUTPUT, name)
        em = emitter.for_node((output_nodes or {}).get(name, emitter.he_node))
        out = np.array(rv, dtype=np.int64)
        for p in range(out.shape[0]):
            for limb in range(out.shape[1]):
                r = int(out[p, limb])
                if classes[r] != RVecClass.INTERMEDIATE or r in claimed:
                    r = int(em.mul_const(np.array([r]), [1], np.array([limb]))[0])
                    classes = b._rvecs.view("rvec_class")
                claimed.add(r)
                tags_for[r] = (idx, p, limb)
                out[p, limb] = r
        final[name] = out.astype(np.int32)
    prog = b.build()
    if not tags_for:
        return prog, final
    ids = np.fromiter(tags_for, dtype=np.int64)
    rvec_class = prog.rvec_class.copy()
    rvec_class[ids] = RVecClass.OUTPUT
    new_tags = np.full((len(ids), TAG_WIDTH), -1, dtype=np.int64)
    new_tags[:, :3] = np.array([tags_for[int(i)] for i in ids])
    tagged = np.concatenate([prog.tagged.astype(np.int64), ids])
    tags = np.concatenate([prog.tags, new_tags])
    order = np.argsort(tagged, kind="stable")
    prog = dataclasses.replace(prog, rvec_class=rvec_class, tagged=tagged[order], tags=tags[order])
    return prog, final


__all__ = ["finalize_outputs", "LimbOp"]
