"""Compiled loops of the RPU timing model and scheduler (`fhec.isa.rpu.timing`).

`fhec.isa.rpu.timing` turns code into flat arrays (each instruction's pipeline, occupancy,
latency, and its registers and memory blocks as dense ids in CSR form) and calls these
kernels; they follow its rules step for step, so the issue order and cycles are the ones
its docstring describes. They exist because the loops ran in Python once per
instruction and per scheduling window and again per allocation alternative: about 40 of
the 68 seconds an RPU compile of a 12k-limb-instruction program took.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fhec._jit import announce_compile

announce_compile(__file__)

__all__ = ["dependence_edges", "issue_in_order", "list_schedule"]


@njit(cache=True)
def _grow(a, n):
    if n < len(a):
        return a
    bigger = np.empty(2 * len(a) + 16, dtype=a.dtype)
    bigger[:n] = a[:n]
    return bigger


@njit(cache=True)
def _edge(pred, succ, m, p, i):
    pred, succ = _grow(pred, m), _grow(succ, m)
    pred[m], succ[m] = p, i
    return pred, succ, m + 1


@njit(cache=True)
def dependence_edges(barrier_op, dptr, dids, sptr, sids, nlocs):
    """(pred, succ) pairs, possibly repeated, over locations (registers, memory blocks)
    each instruction reads (``sptr``/``sids``) and writes (``dptr``/``dids``): RAW, WAW and
    WAR; and a barrier (`barrier_op`: ALOAD/MLOAD) after everything before it and before
    everything after it."""
    n = len(barrier_op)
    pred = np.empty(4 * n + 16, dtype=np.int64)
    succ = np.empty(4 * n + 16, dtype=np.int64)
    m = 0
    writer = np.full(nlocs, -1, dtype=np.int64)
    head = np.full(nlocs, -1, dtype=np.int64)  # readers since the last write: a linked list
    node_i = np.empty(2 * n + 16, dtype=np.int64)
    node_next = np.empty(2 * n + 16, dtype=np.int64)
    nodes = 0
    barrier = -1
    for i in range(n):
        if barrier >= 0:
            pred, succ, m = _edge(pred, succ, m, barrier, i)
        if barrier_op[i]:
            for j in range(barrier + 1, i):
                pred, succ, m = _edge(pred, succ, m, j, i)
            barrier = i
            continue
        for k in range(sptr[i], sptr[i + 1]):
            if writer[sids[k]] >= 0:
                pred, succ, m = _edge(pred, succ, m, writer[sids[k]], i)
        for k in range(dptr[i], dptr[i + 1]):
            r = dids[k]
            if writer[r] >= 0:
                pred, succ, m = _edge(pred, succ, m, writer[r], i)
            q = head[r]
            while q >= 0:
                pred, succ, m = _edge(pred, succ, m, node_i[q], i)
                q = node_next[q]
        for k in range(sptr[i], sptr[i + 1]):
            node_i, node_next = _grow(node_i, nodes), _grow(node_next, nodes)
            node_i[nodes], node_next[nodes] = i, head[sids[k]]
            head[sids[k]] = nodes
            nodes += 1
        for k in range(dptr[i], dptr[i + 1]):
            writer[dids[k]] = i
            head[dids[k]] = -1
    return pred[:m].copy(), succ[:m].copy()


@njit(cache=True)
def _issue_at(i, rptr, rids, busy, last_issue):
    ready = np.int64(0)
    for k in range(rptr[i], rptr[i + 1]):
        ready = max(ready, busy[rids[k]])
    return max(last_issue + 1, ready)


@njit(cache=True)
def _commit(i, t, pipe, occ, lat, dptr, dids, sptr, sids, busy, free, busy_cycles):
    p = pipe[i]
    start = max(t + 1, free[p])
    free[p] = start + occ[i]
    busy_cycles[p] += occ[i]
    done = start + occ[i] + lat[i]
    for k in range(sptr[i], sptr[i + 1]):
        busy[sids[k]] = max(busy[sids[k]], start + occ[i])
    for k in range(dptr[i], dptr[i + 1]):
        busy[dids[k]] = max(busy[dids[k]], done)
    return done


@njit(cache=True)
def issue_in_order(pipe, occ, lat, dptr, dids, sptr, sids, rptr, rids, nregs, npipes):
    """(issue cycle per instruction, total cycles, busy cycles per pipeline, busyboard
    stall cycles) of the code issued in its order (`_State.commit` in `timing`)."""
    n = len(pipe)
    busy = np.zeros(nregs, dtype=np.int64)
    free = np.zeros(npipes, dtype=np.int64)
    busy_cycles = np.zeros(npipes, dtype=np.int64)
    issue = np.empty(n, dtype=np.int64)
    last_issue = np.int64(-1)
    end = np.int64(0)
    stall = np.int64(0)
    for i in range(n):
        t = _issue_at(i, rptr, rids, busy, last_issue)
        stall += t - (last_issue + 1)
        end = max(end, _commit(i, t, pipe, occ, lat, dptr, dids, sptr, sids, busy, free, busy_cycles))
        last_issue = t
        issue[i] = t
    return issue, end, busy_cycles, stall


@njit(cache=True)
def list_schedule(pipe, occ, lat, dptr, dids, sptr, sids, rptr, rids, nregs, npipes, waiting, succ_ptr, succ_ids,
                  window):
    """The issue order (`timing.schedule`): repeatedly, among the ready instructions less
    than `window` past the oldest unscheduled one, the first that the busyboard lets
    issue earliest. The oldest unscheduled instruction is always ready (every predecessor
    comes before it), so a choice always exists."""
    n = len(pipe)
    busy = np.zeros(nregs, dtype=np.int64)
    free = np.zeros(npipes, dtype=np.int64)
    busy_cycles = np.zeros(npipes, dtype=np.int64)
    waiting = waiting.copy()
    done = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    last_issue = np.int64(-1)
    oldest = 0
    for step in range(n):
        while done[oldest]:
            oldest += 1
        best = -1
        best_t = np.int64(0)
        for i in range(oldest, min(n, oldest + window)):
            if done[i] or waiting[i] > 0:
                continue
            t = _issue_at(i, rptr, rids, busy, last_issue)
            if best < 0 or t < best_t:
                best, best_t = i, t
                if t <= last_issue + 1:
                    break
        _commit(best, best_t, pipe, occ, lat, dptr, dids, sptr, sids, busy, free, busy_cycles)
        last_issue = best_t
        done[best] = True
        order[step] = best
        for k in range(succ_ptr[best], succ_ptr[best + 1]):
            waiting[succ_ids[k]] -= 1
    return order
