"""The checker's own reading of the timing contract (docs/isa.md, "Timing contract").

`fhec.sim.check` must not trust the schedulers' timing function
(`fhec.backends.streams.op_timing`): a bug there would make the schedulers and the
checker agree on wrong numbers and the bug would stay invisible. So this module
derives the same table a second time, from the raw `Target` fields only (each
unit's ``throughput``, ``latency`` and ``transposes``; ``word_bits``;
``memory.bandwidth_gb_s``, ``memory.latency_ns`` and ``clock_ghz``), without the
`Target` timing helpers, and in exact rational arithmetic. Per `StreamOp`:

============  =======================================  ===========  =========
field         FU op on a unit                          LOAD         STORE
============  =======================================  ===========  =========
occupancy     occ = ceil(N / throughput)               xfer         xfer
read_cycles   occ                                      0            xfer
latency       latency + transposes * occ (*)           mem latency  xfer
write_cycles  occ                                      xfer         0
============  =======================================  ===========  =========

(*) ``latency`` alone when ``[pipelining] mode = "limb-interleaved"`` (Osiris §IV-B):
the transposes are hidden behind the other limbs of the cross-section.

with xfer = max(1, ceil(N * word bytes / (bandwidth_gb_s / clock_ghz))) and mem
latency = ceil(latency_ns * clock_ghz). Word bytes are 4 up to 32-bit words, else
ceil(word_bits / 8) (packed to whole bytes). GEN (the key generator of a target with
``[keys]``) is timed like a LOAD with the generator's ``generator_latency`` and
occupancy = write_cycles = ceil(N / generator_words_per_cycle).
``tests/sim/test_check_timing.py`` compares both derivations on every shipped target.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from fhec.backends.streams import GENERATOR_KIND, MEMORY_KIND, NUM_STREAM_OPS, OpTiming, StreamOp
from fhec.backends.target import Target

__all__ = ["checker_timing"]


def _exact(x: float) -> Fraction:
    """The decimal number a target file wrote (1.1 is 11/10, not its binary neighbour)."""
    return Fraction(repr(float(x)))


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


def checker_timing(target: Target, N: int) -> OpTiming:
    """The timing contract of `target` at ring degree `N`, derived independently of
    `op_timing` (see the module docstring). Unused op codes hold 0 and kind ""."""
    occ = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    lat = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    rd = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    wr = np.zeros(NUM_STREAM_OPS, dtype=np.int64)
    kinds = [""] * NUM_STREAM_OPS
    # limb interleaving: a unit's whole-limb buffers hold the other limbs of its
    # cross-sections, so no transpose delays the first cross-section out
    hidden = target.pipelining.mode == "limb-interleaved"
    for unit in target.cluster.units:
        unit_occ = _ceil(Fraction(N, unit.throughput))
        for op in unit.ops:
            code = int(op)
            occ[code] = rd[code] = wr[code] = unit_occ
            lat[code] = unit.latency + (0 if hidden else unit.transposes * unit_occ)
            kinds[code] = unit.kind.value
    word_bytes = 4 if target.word_bits <= 32 else (target.word_bits + 7) // 8
    bytes_per_cycle = _exact(target.memory.bandwidth_gb_s) / _exact(target.clock_ghz)
    xfer = max(1, _ceil(N * word_bytes / bytes_per_cycle))
    load, store = int(StreamOp.LOAD), int(StreamOp.STORE)
    occ[load] = occ[store] = xfer
    rd[load], lat[load], wr[load] = 0, _ceil(_exact(target.memory.latency_ns) * _exact(target.clock_ghz)), xfer
    rd[store], lat[store], wr[store] = xfer, xfer, 0
    kinds[load] = kinds[store] = MEMORY_KIND
    gen = int(StreamOp.GEN)
    occ[gen] = wr[gen] = _ceil(Fraction(N, target.keys.generator_words_per_cycle))
    lat[gen], rd[gen] = target.keys.generator_latency, 0
    kinds[gen] = GENERATOR_KIND
    for a in (occ, lat, rd, wr):
        a.flags.writeable = False
    return OpTiming(occ, lat, rd, wr, xfer, tuple(kinds))
