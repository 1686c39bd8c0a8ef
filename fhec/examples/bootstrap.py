"""A CKKS computation deeper than the modulus chain: three bootstraps refresh it.

x^128 by seven squarings, x in [-1, 1] (the slots with |x| near 1 keep a sizable
value; the value bounds stay at 1, which a map such as y·y − 1/2 would not: its bound
grows by the triangle inequality at every step). Each square uses a level; the parameter set leaves 3
levels after a bootstrap and ModRaise needs its input at level 1 or more (docs/
bootstrapping.md), so the program squares twice, bootstraps, and repeats: three
bootstraps for seven squares.

The parameters are the INSECURE test set of tests/test_bootstrap.py at N = 2^12
(security=None, a sparse secret of Hamming weight 8): for experiments only.

    fhec check examples/bootstrap.py       # about 5 minutes: three bootstraps at N = 2^12
    fhec stats examples/bootstrap.py       # limb instructions per bootstrap stage
"""

import fhec

CONFIG = fhec.BootstrapConfig(
    hamming_weight=8,
    evalmod=fhec.EvalModConfig(K=6, message_ratio_bits=2, arcsine_degree=3, double_angle=2),
)
PARAMS = fhec.CKKSParams(N=2**12, levels=CONFIG.depth(2**12) + 3, scale_bits=30, word_bits=32,
                         security=None, bootstrap=CONFIG)

p = fhec.Program("deep", PARAMS)
y = p.input("x", level=3)
for step in range(7):
    if y.level == 1:
        y = y.bootstrap()
    y = y * y
p.output("y", y)
