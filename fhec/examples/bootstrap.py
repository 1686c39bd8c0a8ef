"""A CKKS computation deeper than the modulus chain: three bootstraps refresh it.

y <- y²/2 + 1/4, four times from x in [-1, 1]: a contraction (|f'(y)| = |y| <= 3/4 after
the first step) towards 1 − √2/2, so each bootstrap's error is damped, not amplified, by
the steps after it, and the value bound stays below 1 (|a| + |b| <= 1 for a·y² + b).
Each step uses two levels (the square, then the multiply by 1/2); the parameter set
leaves 3 levels after a bootstrap and ModRaise needs its input at level 1 or more
(docs/bootstrapping.md), so the program bootstraps before every step but the first:
three bootstraps for a depth of 8.

The parameters are the INSECURE test set of tests/test_bootstrap.py at N = 2^12
(security=None, a sparse secret of Hamming weight 8): for experiments only.

    fhec check fhec/examples/bootstrap.py  # a few minutes: three bootstraps at N = 2^12
    fhec stats fhec/examples/bootstrap.py  # limb instructions per bootstrap stage
"""

import fhec

CONFIG = fhec.BootstrapConfig(
    hamming_weight=8,
    evalmod=fhec.EvalModConfig(K=6, message_ratio_bits=2, arcsine_degree=7, double_angle=2),
)
PARAMS = fhec.CKKSParams(N=2**12, levels=CONFIG.depth(2**12) + 3, scale_bits=30, word_bits=32,
                         security=None, bootstrap=CONFIG)

p = fhec.Program("deep", PARAMS)
y = p.input("x", level=3)
for step in range(4):
    if y.level < 2:
        y = y.bootstrap()
    y = (y * y) * 0.5 + 0.25
p.output("y", y)


def f1_bootstrap() -> fhec.Program:
    """One bootstrap at F1's CKKS setting (preset "f1-ckks-bootstrap": N = 2^14, L_max = 24
    limbs of 32-bit words): a ciphertext at level 1, as F1 §7 bootstraps it, refreshed."""
    params = fhec.CKKSParams.preset("f1-ckks-bootstrap")
    q = fhec.Program("f1_ckks_bootstrap", params)
    q.output("y", q.input("x", level=1).bootstrap())
    return q


def suite_rows() -> list[dict]:
    """F1 Table 3's CKKS bootstrapping row (`fhec.suites`)."""
    return [{
        "suite": "f1", "name": "CKKS bootstrapping", "variant": None, "target": "f1", "paper_ms": 1.30,
        "paper_source": "F1 Table 3", "build": f1_bootstrap, "needs": None,
        "note": "the f1-ckks-bootstrap preset: non-packed (one slot) bootstrapping as HEAAN's and F1's; its "
                "parameters and their sources are in docs/bootstrapping.md",
    }]
