"""The peak resident memory of the calling process, for the benchmarks' fresh-process rows.

VmHWM (Linux's high-water mark of this process's address space) rather than
``getrusage().ru_maxrss``: Linux carries ru_maxrss over fork + exec, so a child started
by a large benchmark runner reports at least the runner's size (bench_wide_compile
reported 1,506 MB for every size that way). Elsewhere ru_maxrss is the only figure.
"""

from __future__ import annotations

import resource
import sys


def peak_mb() -> float:
    """This process's peak resident set, in MiB."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes on macOS, kB elsewhere
