"""Binary min-heaps of int64 keys for the numba kernels of the off-chip scheduler.

A heap is an int64 array whose first ``size`` entries are the heap; the functions
take the size and return the new one. The kernel packs a key as
``(priority << 32) | id``, so the minimum is the entry of smallest priority, ties
broken by the smaller id. `push` does not grow the array: callers make room first
with `grown`, once per scheduling step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fhec._jit import announce_compile

announce_compile(__file__)

__all__ = ["push", "pop", "grown"]


@njit(cache=True)
def push(h, size, key):
    """Insert `key` into the heap `h[:size]` (the caller guarantees room); returns the new size."""
    i = size
    h[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if h[p] <= key:
            break
        h[i] = h[p]
        i = p
    h[i] = key
    return size + 1


@njit(cache=True)
def pop(h, size):
    """Remove the minimum ``h[0]`` of the heap `h[:size]`; returns the new size (0 if it was empty)."""
    size -= 1
    if size <= 0:
        return 0
    key = h[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and h[c + 1] < h[c]:
            c += 1
        if h[c] >= key:
            break
        h[i] = h[c]
        i = c
    h[i] = key
    return size


@njit(cache=True)
def grown(a, used, need):
    """`a` itself if it has room for `need` entries after its first `used`, else a
    copy of those `used` entries in an array at least twice as long."""
    if used + need <= len(a):
        return a
    g = np.empty(max(2 * len(a), used + need), dtype=a.dtype)
    g[:used] = a[:used]
    return g
