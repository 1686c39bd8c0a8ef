"""Off-chip traffic: what every schedule must move, and what a given schedule moved.

`compulsory_traffic` is the lower bound F1 Fig. 9a calls compulsory: one load of every
loaded rvec some instruction reads, one store of every output. `classify_traffic` sorts
the loads and stores of a data schedule into the same classes, so the two compare
field by field.
"""

from __future__ import annotations

import numpy as np

from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import RVecClass
from fhec.ir.schedule import Event, Traffic


def compulsory_traffic(program: LimbProgram) -> Traffic:
    """The lower bound on off-chip traffic: one load of every INPUT, KSH and CONST rvec
    that some instruction reads, and one store of every OUTPUT rvec (bytes)."""
    used = np.zeros(program.num_rvecs, dtype=bool)
    used[program.src0[program.src0 >= 0]] = True
    used[program.src1[program.src1 >= 0]] = True
    cls = program.rvec_class
    b = program.rvec_bytes

    def count(c: RVecClass, mask: np.ndarray | None = None) -> int:
        sel = cls == c
        if mask is not None:
            sel &= mask
        return int(np.count_nonzero(sel)) * b

    return Traffic(
        ksh_compulsory=count(RVecClass.KSH, used),
        input_compulsory=count(RVecClass.INPUT, used),
        const_compulsory=count(RVecClass.CONST, used),
        output_compulsory=count(RVecClass.OUTPUT),
    )


def classify_traffic(program: LimbProgram, kind: np.ndarray, arg: np.ndarray) -> Traffic:
    """The traffic of a data schedule's events (`kind`, `arg` columns of a `DataSchedule`):
    the first load of a loaded rvec is compulsory, every later one is not; a store of an
    OUTPUT is compulsory; intermediates moved either way are not."""
    b = program.rvec_bytes
    cls = program.rvec_class
    loads = arg[kind == Event.LOAD].astype(np.int64)
    stores = arg[kind == Event.STORE].astype(np.int64)
    first = np.zeros(len(loads), dtype=bool)
    if len(loads):
        _, idx = np.unique(loads, return_index=True)
        first[idx] = True
    lc = cls[loads]
    sc = cls[stores]

    def n(mask: np.ndarray) -> int:
        return int(np.count_nonzero(mask)) * b

    return Traffic(
        ksh_compulsory=n((lc == RVecClass.KSH) & first),
        ksh_noncompulsory=n((lc == RVecClass.KSH) & ~first),
        input_compulsory=n((lc == RVecClass.INPUT) & first),
        input_noncompulsory=n((lc == RVecClass.INPUT) & ~first),
        const_compulsory=n((lc == RVecClass.CONST) & first),
        const_noncompulsory=n((lc == RVecClass.CONST) & ~first),
        output_compulsory=n(sc == RVecClass.OUTPUT),
        output_noncompulsory=n(lc == RVecClass.OUTPUT),
        intermediate_loads=n(lc == RVecClass.INTERMEDIATE),
        intermediate_stores=n(sc == RVecClass.INTERMEDIATE),
    )

