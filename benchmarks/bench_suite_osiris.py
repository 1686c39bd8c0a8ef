"""Osiris Table III (`fhec bench --suite osiris`): each row's program at the parameter set
of Osiris Table II, with non-hoisted (NH), single-hoisted (SH) and double-hoisted (DH)
BSGS, compiled for the row's target (`osiris`, 1 TB/s, Table III(a); `osiris-2tb`, Table
III(b)) beside the paper's time. Rows whose target or program fhec does not have yet say
so instead of giving a number. The Sorting rows are the sums of stage windows
(`fhec.suites.Windows`, docs/suites.md). --quick has no effect.
"""

from fhec.suites import benchmark_rows


def run(quick: bool = False) -> list[dict]:
    return benchmark_rows("osiris")
