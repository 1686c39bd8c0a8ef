"""Which base conversion each BCONV instruction of a limb program belongs to.

The lowering writes a fast base conversion of k input limbs onto one output modulus as k
BCONV terms summed by a chain of k - 1 ADDs (`fhec.passes.lower_ops.fast_base_convert`;
OF-Limb's digits and rescales likewise). A machine that runs a whole conversion as one
operation of fixed shape, Osiris's input-stationary systolic array (§IV-C: one row per
input limb, 16 rows; one output limb every N/p cycles whatever the number of rows in use),
takes as long for k < 16 inputs as for 16, so the time of a term depends on k, its
conversion's *width*. `conversion_terms` recovers each term's width and its position among
its conversion's terms from the program's data flow: two terms are of one conversion when
an ADD joins values that are each a term or such a sum.

Preserves: nothing is changed; a pure analysis of a `LimbProgram`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fhec._jit import announce_compile
from fhec.ir.limb_ops import LimbOp

announce_compile(__file__)

__all__ = ["conversion_terms"]

_BCONV = int(LimbOp.BCONV)
_ADD = int(LimbOp.ADD)


@njit(cache=True)
def _find(parent, g):
    root = g
    while parent[root] != root:
        root = parent[root]
    while parent[g] != root:  # path compression
        nxt = parent[g]
        parent[g] = root
        g = nxt
    return root


@njit(cache=True)
def _terms(op, dst, src0, src1, num_rvecs):
    n = len(op)
    group = np.full(num_rvecs, -1, dtype=np.int64)  # per rvec: the conversion whose term or sum it is
    parent = np.arange(n, dtype=np.int64)  # union-find over the BCONV instructions' indices
    for i in range(n):
        if op[i] == _BCONV:
            group[dst[i]] = i
        elif op[i] == _ADD and src1[i] >= 0:
            a = group[src0[i]]
            b = group[src1[i]]
            if a >= 0 and b >= 0:
                ra = _find(parent, a)
                rb = _find(parent, b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
                group[dst[i]] = min(ra, rb)
    width = np.zeros(n, dtype=np.int64)
    index = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    for i in range(n):  # array order: a conversion's terms are numbered in execution order
        if op[i] == _BCONV:
            r = _find(parent, i)
            index[i] = count[r]
            count[r] += 1
    for i in range(n):
        if op[i] == _BCONV:
            width[i] = count[_find(parent, i)]
    return width, index


def conversion_terms(program) -> tuple[np.ndarray, np.ndarray]:
    """(width, index), int64 per instruction of `program` (a `LimbProgram`): for a BCONV,
    the number of input limbs of its conversion and its position among them (0-based, in
    array order); 0 and 0 for every other instruction."""
    return _terms(np.asarray(program.op, dtype=np.int64), np.asarray(program.dst, dtype=np.int64),
                  np.asarray(program.src0, dtype=np.int64), np.asarray(program.src1, dtype=np.int64),
                  int(program.num_rvecs))
