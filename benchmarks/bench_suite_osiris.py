"""Osiris Table III at 1 TB/s (`fhec bench --suite osiris`): each row's program at the
parameter set of Osiris Table II, with non-hoisted (NH), single-hoisted (SH) and
double-hoisted (DH) BSGS, compiled for the row's target beside the paper's time. Rows
whose target or program fhec does not have yet say so instead of giving a number.
--quick has no effect.
"""

from fhec.suites import benchmark_rows


def run(quick: bool = False) -> list[dict]:
    return benchmark_rows("osiris")
