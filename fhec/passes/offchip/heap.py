"""Binary min-heaps of int64 keys for the numba kernels of the off-chip scheduler.

A `Heap` is a namedtuple ``(keys, size)``: ``keys`` is an int64 array whose first
``size[0]`` entries are the heap; ``size`` is a one-element int64 array so that the
functions below can change it in place (namedtuples are immutable in numba). The
kernel packs a key as ``(priority << 32) | id``, so the minimum is the entry of
smallest priority, ties broken by the smaller id.

`push` does not grow ``keys``: callers make room first with `reserve` (which may
return a new `Heap` sharing ``size``), once per scheduling step.
"""

from __future__ import annotations

import collections

import numpy as np
from numba import njit

__all__ = ["Heap", "new_heap", "push", "pop", "grown", "reserve"]

Heap = collections.namedtuple("Heap", ["keys", "size"])


@njit(cache=True)
def new_heap(capacity):
    """An empty heap with room for `capacity` keys."""
    return Heap(np.empty(capacity, dtype=np.int64), np.zeros(1, dtype=np.int64))


@njit(cache=True)
def push(h, key):
    """Insert `key`; the caller guarantees room (see `reserve`)."""
    keys = h.keys
    i = h.size[0]
    keys[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if keys[p] <= key:
            break
        keys[i] = keys[p]
        i = p
    keys[i] = key
    h.size[0] += 1


@njit(cache=True)
def pop(h):
    """Remove the minimum ``keys[0]`` (a no-op on an empty heap)."""
    keys = h.keys
    size = h.size[0] - 1
    if size <= 0:
        h.size[0] = 0
        return
    key = keys[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= key:
            break
        keys[i] = keys[c]
        i = c
    keys[i] = key
    h.size[0] = size


@njit(cache=True)
def grown(a, used, need):
    """`a` itself if it has room for `need` entries after its first `used`, else a
    copy of those `used` entries in an array at least twice as long."""
    if used + need <= len(a):
        return a
    g = np.empty(max(2 * len(a), used + need), dtype=a.dtype)
    g[:used] = a[:used]
    return g


@njit(cache=True)
def reserve(h, need):
    """`h`, or a `Heap` with the same entries and room for `need` more pushes."""
    if h.size[0] + need <= len(h.keys):
        return h
    return Heap(grown(h.keys, h.size[0], need), h.size)
