"""Bootstrap precision at the small test set: issue 11's bar (12 bits mean at N = 2^12).

`CKKSParams.preset("bootstrap-toy")` (N = 2^12, 32-bit words, 30-bit scale, h = 16, K = 7,
EvalMod by a degree-31 Chebyshev series, 2 double angles and a degree-3 arcsine), with
EvalMod at a two-prime scale (`scale_primes=2`, composite scaling: the preset) and at the
chain's one-prime scale (`scale_primes=1`, the same configuration otherwise, 10 levels
fewer). Each row bootstraps uniform inputs in [-1, 1] from level 1 with `fhec.evaluate`
over 5 seeds: `mean_bits` is -log2 of the mean slot error (averaged over seeds, and its
minimum), `worst_bits` -log2 of the largest (its minimum over seeds), `est_bits` the
type system's worst-slot estimate (what `fhec check` and the `PrecisionWarning` read),
`left` the levels usable after the bootstrap (docs/bootstrapping.md, "Precision").
"""

from __future__ import annotations

import math

import numpy as np

import fhec

SEEDS = range(5)


def _row(scale_primes: int, seeds) -> dict:
    params = fhec.CKKSParams.preset("bootstrap-toy")
    if scale_primes != params.bootstrap.evalmod.scale_primes:
        cfg = params.bootstrap
        evalmod = fhec.EvalModConfig(**{**cfg.evalmod.model_dump(), "scale_primes": scale_primes})
        cfg = fhec.BootstrapConfig(**{**cfg.model_dump(), "evalmod": evalmod})
        params = fhec.CKKSParams.preset("bootstrap-toy", bootstrap=cfg, levels=cfg.depth(params.N) + 3)
    p = fhec.Program("boot", params)
    y = p.input("x").level_down(1).bootstrap()
    p.output("y", y)
    mean, worst = [], []
    for s in seeds:
        x = np.random.default_rng(s).uniform(-1, 1, params.slots)
        err = np.abs(fhec.evaluate(p, {"x": x}, seed=100 + s)["y"] - x)
        mean.append(-math.log2(err.mean()))
        worst.append(-math.log2(err.max()))
    return {
        "group": "Bootstrap precision at N = 2^12 (bootstrap-toy, issue 11: 12 bits mean)",
        "name": f"scale_primes={scale_primes}" + (" (the preset)" if scale_primes == 2 else ""),
        "levels": params.levels,
        "left": y.level,
        "mean_bits": float(np.mean(mean)),
        "min_mean_bits": float(np.min(mean)),
        "worst_bits": float(np.min(worst)),
        "est_bits": float(y.estimated_bits),
    }


def run(quick: bool = False) -> list[dict]:
    seeds = range(1) if quick else SEEDS
    return [_row(2, seeds), _row(1, seeds)]


if __name__ == "__main__":
    for row in run():
        print(row)
