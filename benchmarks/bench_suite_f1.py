"""F1 Table 3 at the paper's sizes (`fhec bench --suite f1`): every row's program compiled for
`f1` (the row's target), fhec's time beside the paper's, cycles over the best lower bound
and the bound that binds, and off-chip traffic by what it carries (key-switch hints,
ciphertexts, plaintexts). Rows that cannot run yet say why instead of giving a number.
Each row's note states how its program departs from the paper's; docs/suites.md explains
the rows far from the paper. compile_s is the whole build + compile on this machine and
peak_rss_GiB the process's peak so far (rows run in this order in one process). --quick
has no effect: the rows are the papers' sizes or nothing.
"""

from fhec.suites import benchmark_rows


def run(quick: bool = False) -> list[dict]:
    return benchmark_rows("f1")
