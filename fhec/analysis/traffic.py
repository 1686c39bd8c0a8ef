"""Off-chip traffic: what every schedule must move, and what a given schedule moved.

`compulsory_traffic` is the lower bound F1 Fig. 9a calls compulsory: one load of every
loaded rvec some instruction reads, one store of every output. `classify_traffic` sorts
the loads and stores of a data schedule into the same classes, so the two compare
field by field. Both take the target's `generated` mask (`Target.generated_rvecs`): a key
half generated on chip is no off-chip traffic; it is counted apart, as ``ksh_generated``.
"""

from __future__ import annotations

import numpy as np

from fhec.ir.limb import LimbProgram
from fhec.ir.limb_ops import RVecClass
from fhec.ir.schedule import Event, Traffic


def compulsory_traffic(program: LimbProgram, generated: np.ndarray | None = None,
                       rvec_bytes: int | None = None) -> Traffic:
    """The lower bound on off-chip traffic: one load of every INPUT, KSH and CONST rvec
    that some instruction reads and the target does not generate, and one store of every
    OUTPUT rvec (bytes: `rvec_bytes` each, the target's `Target.rvec_bytes`, which times
    the transfers; default the program's own words)."""
    read = np.zeros(program.num_rvecs, dtype=bool)
    read[program.src0[program.src0 >= 0]] = True
    read[program.src1[program.src1 >= 0]] = True
    gen = np.zeros(program.num_rvecs, dtype=bool) if generated is None else generated
    used = read & ~gen
    cls = program.rvec_class
    b = program.rvec_bytes if rvec_bytes is None else rvec_bytes

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
        ksh_generated=count(RVecClass.KSH, read & gen),
    )


def classify_traffic(program: LimbProgram, kind: np.ndarray, arg: np.ndarray,
                     generated: np.ndarray | None = None, rvec_bytes: int | None = None) -> Traffic:
    """The traffic of a data schedule's events (`kind`, `arg` columns of a `DataSchedule`):
    the first load of a loaded rvec is compulsory, every later one is not; a store of an
    OUTPUT is compulsory; intermediates moved either way are not; loads of `generated`
    rvecs are on-chip generation (``ksh_generated``, every time). Bytes as in
    `compulsory_traffic`."""
    b = program.rvec_bytes if rvec_bytes is None else rvec_bytes
    cls = program.rvec_class
    all_loads = arg[kind == Event.LOAD].astype(np.int64)
    gen = np.zeros(len(all_loads), dtype=bool) if generated is None else generated[all_loads]
    loads = all_loads[~gen]
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
        ksh_generated=n(gen),
    )

