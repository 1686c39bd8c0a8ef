"""The numba kernels of `fhec.analysis.bounds.load_aware_bound` (imported lazily, so that
`import fhec` does not load numba): how long a program must still run once a loaded
value has arrived."""

from __future__ import annotations

import numpy as np
from numba import njit

from fhec._jit import announce_compile

announce_compile(__file__)

@njit(cache=True)
def path_tails(src0, src1, dst, latency, write, tail):
    """Per rvec, the longest latency path from the moment it is readable to the end of
    the program: over its readers i, ``latency[i]`` plus the larger of ``write[i]``
    (the reader's result completes) and its result's own tail. `tail` holds each
    rvec's tail on its own (an OUTPUT's store) and is updated in place; instructions
    in array order are a topological order, so one reverse sweep suffices."""
    for i in range(len(dst) - 1, -1, -1):
        t = latency[i] + max(write[i], tail[dst[i]])
        if t > tail[src0[i]]:
            tail[src0[i]] = t
        if src1[i] >= 0 and t > tail[src1[i]]:
            tail[src1[i]] = t
    return tail


_SLICES = 48
"""Bits of the per-source counters (counts up to 2^48 instructions)."""


@njit(cache=True)
def descendant_counts(src0, src1, dst, cls, num_classes, sources, first_reader, num_rvecs, max_steps):
    """For every rvec in `sources`, how many instructions of each class (``cls[i]`` in
    ``0 .. num_classes - 1``) depend on it, directly or transitively: ``counts[s, c]``.

    Sixty-four sources at a time: a bit mask per rvec says which of them it depends on,
    propagated in array order (a topological order) from the earliest reader of the 64
    (`first_reader`, per source; sorting the sources by it keeps each sweep short). Each
    class keeps 64 counters in bit-sliced form (word j holds bit j of all 64), so adding
    an instruction's mask costs amortized two word operations, whatever its number of
    bits. The sweeps stop once they have visited `max_steps` instructions; returns
    (counts, how many sources were counted: the rest keep zeros)."""
    ns = len(sources)
    counts = np.zeros((ns, num_classes), dtype=np.int64)
    mask = np.zeros(num_rvecs, dtype=np.uint64)
    sliced = np.zeros((num_classes, _SLICES), dtype=np.uint64)
    one = np.uint64(1)
    steps = 0
    done = 0
    for base in range(0, ns, 64):
        if steps > max_steps:
            break
        mask[:] = 0
        sliced[:, :] = 0
        top = min(ns, base + 64)
        start = len(dst)
        for b in range(base, top):
            mask[sources[b]] |= one << np.uint64(b - base)
            start = min(start, first_reader[b])
        steps += len(dst) - start
        for i in range(start, len(dst)):
            m = mask[src0[i]]
            if src1[i] >= 0:
                m |= mask[src1[i]]
            if m == 0:
                continue
            mask[dst[i]] = m
            c = cls[i]
            j = 0
            while m != 0:  # add one to the counter of every source in m
                carry = sliced[c, j] & m
                sliced[c, j] ^= m
                m = carry
                j += 1
        for c in range(num_classes):
            for j in range(_SLICES):
                w = sliced[c, j]
                if w == 0:
                    continue
                for b in range(top - base):
                    if (w >> np.uint64(b)) & one:
                        counts[base + b, c] += np.int64(1) << j
        done = top
    return counts, done
