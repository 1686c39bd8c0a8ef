"""The numba kernel of `fhec.analysis.bounds.dependency_bound` (imported lazily, so that
`import fhec` does not load numba)."""

from __future__ import annotations

from numba import njit

from fhec._jit import announce_compile

announce_compile(__file__)


@njit(cache=True)
def critical_path(src0, src1, dst, latency, ready):
    """Ready time of every rvec: instructions in program order (a topological order:
    every source is written by an earlier instruction or loaded), each ready
    ``latency`` after the later of its sources."""
    for i in range(len(dst)):
        t = ready[src0[i]]
        if src1[i] >= 0 and ready[src1[i]] > t:
            t = ready[src1[i]]
        ready[dst[i]] = t + latency[i]
    return ready
