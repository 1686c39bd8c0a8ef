"""The schedulers' output on a few fixed programs, pinned by checksum.

Restructuring `fhec.passes.offchip` and `fhec.passes.cycle` (splitting modules,
bundling kernel state, deriving enum codes) must not change a single event, slot or
cycle. The digests below were computed before the off-chip scheduler was split (on
``main`` at fa3ee80); a mismatch means the schedules changed. If a change to the
algorithm is intended, recompute them with ``python tests/passes/test_schedule_fingerprint.py``
and say so in the commit message. Recomputed when prefetches became subject to the
do-no-harm rule (`fhec.passes.offchip.kernel._harmless`).
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest

from fhec.backends.target import load_target
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from tests.passes.test_offchip import he_program
from tests.sim.test_check import slots_only

# the plain kernel (every unit reads and writes the scratchpad at its rate) is what these
# digests pin (f1 is FU-level; tiny models the data path, so it is stripped here); the
# on-chip kernel (fhec.passes.cycle_onchip) is checked by its own tests
TINY = slots_only(load_target("tiny"))
F1 = load_target("f1")


def _program(name: str):
    if name == "hybrid-mul-rot-2":
        return he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    if name == "bv-mul-rot-add-2":
        return he_program(N=2**10, L=4, method="bv", ops=("mul", "rot", "add"), chains=2)
    if name == "hybrid-rot-mul-3-shuffled":
        # priorities that are not a dependence order exercise the "load for a parked
        # instruction" path of the kernel
        prog = he_program(N=2**10, L=3, method="hybrid", ops=("rot", "mul"), chains=3)
        prio = np.random.default_rng(7).permutation(len(prog)).astype(prog.prio.dtype)
        return dataclasses.replace(prog, prio=prio)
    raise KeyError(name)


# (program, target, policy, slots (None: the target's scratchpad), prefetch_reserve)
CASES = [
    ("hybrid-mul-rot-2", "tiny", "belady", None, 0.0),
    ("hybrid-mul-rot-2", "tiny", "lru", None, 0.0),
    ("hybrid-mul-rot-2", "tiny", "belady", None, 0.25),
    ("bv-mul-rot-add-2", "tiny", "belady", 5, 0.0),
    ("bv-mul-rot-add-2", "tiny", "lru", 7, 0.5),
    ("bv-mul-rot-add-2", "f1", "belady", None, 0.0),
    ("hybrid-rot-mul-3-shuffled", "tiny", "belady", 6, 0.0),
    ("hybrid-rot-mul-3-shuffled", "tiny", "lru", 9, 0.25),
    ("hybrid-rot-mul-3-shuffled", "f1", "belady", 12, 0.25),
]


def _h(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.int64)).tobytes())
        h.update(b"|")
    return h.hexdigest()[:16]


def fingerprint(prog_name: str, target_name: str, policy: str, slots, reserve: float) -> tuple[str, str]:
    """(digest of the data schedule, digest of the streams) of one case."""
    target = {"tiny": TINY, "f1": F1}[target_name]
    prog = _program(prog_name)
    cap = None if slots is None else slots * prog.rvec_bytes
    ds = schedule_offchip(prog, target, policy=policy, capacity_bytes=cap, prefetch_reserve=reserve)
    data = _h(ds.kind, ds.arg, ds.slot, ds.src0_slot, ds.src1_slot, [ds.slots, ds.peak_slots])
    streams = schedule_cycles(ds, target)
    st = _h(streams.unit, streams.cycle, streams.op, streams.dst, streams.src0, streams.src1, streams.tag,
            [streams.total_cycles])
    return data, st


EXPECTED = {
    ('hybrid-mul-rot-2', 'tiny', 'belady', None, 0.0): ('4a6e5aa75b9090ff', 'e3a80b488e99322f'),
    ('hybrid-mul-rot-2', 'tiny', 'lru', None, 0.0): ('3ce9b4934983859b', '1d52b11d80280981'),
    ('hybrid-mul-rot-2', 'tiny', 'belady', None, 0.25): ('d0a54c426d193c84', '69a22a6d42451aa4'),
    ('bv-mul-rot-add-2', 'tiny', 'belady', 5, 0.0): ('9e05055108a7ea80', 'bd3f2fe7a3942380'),
    ('bv-mul-rot-add-2', 'tiny', 'lru', 7, 0.5): ('9d82df4f07f42eae', '6972d9cc71e118f8'),
    ('bv-mul-rot-add-2', 'f1', 'belady', None, 0.0): ('be718bc9a9978c4e', '6dd7047959654589'),
    ('hybrid-rot-mul-3-shuffled', 'tiny', 'belady', 6, 0.0): ('33850db8883e906b', '3634a04829fcb643'),
    ('hybrid-rot-mul-3-shuffled', 'tiny', 'lru', 9, 0.25): ('33dded96a6d185ce', 'db06df177b051fbe'),
    ('hybrid-rot-mul-3-shuffled', 'f1', 'belady', 12, 0.25): ('b74ffd3ac5b8bc45', 'ed7a1a733f83b4fa'),
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_schedules_are_unchanged(case):
    assert fingerprint(*case) == EXPECTED[case]


if __name__ == "__main__":
    for case in CASES:
        print(f"    {case!r}: {fingerprint(*case)!r},")
