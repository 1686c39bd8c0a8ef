"""Polynomial evaluation by baby-step / giant-step Paterson–Stockmeyer
(`fhec/ir/he_polynomial.py`): ciphertext products (MUL nodes of the expanded HE IR) and
depth (levels consumed) of `x.polynomial(...)` for dense random series of degree 15, 31
and 63 in the power and the Chebyshev basis. "domain depth": the Chebyshev series on
domain [-8, 8] (one more level for the map). "tree products" / "tree depth": the previous
recipe, a balanced power tree with one product per power (d − 1 products, depth
ceil(log2 d) + 1), by formula. "err_bits": −log2 of the max error against numpy, relative
to max(1, max |value|), of the Chebyshev-on-[-8, 8] series (c_i ~ U(-1, 1)/(i+1))
evaluated under encryption at N=2^12 with a 30-bit scale; "eval_s": that eager run's time.
The bar: at most 18 products and depth 6 (+1 with a domain) at degree 63.

Run alone: ``python benchmarks/run.py polynomial`` (run.py picks up every bench_*.py).
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np


def _traced(params, series, bound: float = 1.0, **kw):
    import fhec

    p = fhec.Program("poly", params)
    x = p.input("x", bound=bound)
    y = x.polynomial(series, **kw)
    p.output("y", y)
    return p, x.level - y.level


def run(quick: bool = False) -> list[dict]:
    import fhec
    from fhec.ir.he import HeOp
    from fhec.passes.he_expand import expand

    counting = fhec.CKKSParams(N=2**6, levels=8, base_limbs=2, security=None)
    precise = fhec.CKKSParams(N=2**12, levels=8, scale_bits=30, word_bits=32, base_limbs=2, security=None)
    rng = np.random.default_rng(0)
    rows = []
    for d in (15, 31, 63):
        coeffs = rng.uniform(-1, 1, d + 1) / np.arange(1, d + 2)
        row = {"group": "polynomial evaluation", "name": f"degree {d}"}
        for basis in ("power", "chebyshev"):
            p, depth = _traced(counting, list(coeffs), basis=basis)
            row[f"{basis} products"] = len(list(expand(p.ir).nodes_of(HeOp.MUL)))
            row[f"{basis} depth"] = depth
        series = np.polynomial.Chebyshev(coeffs, domain=[-8, 8])
        row["domain depth"] = _traced(counting, series, bound=8.0)[1]
        row["tree products"] = d - 1
        row["tree depth"] = math.ceil(math.log2(d)) + 1
        if not quick or d == 15:
            p, _ = _traced(precise, series, bound=8.0)
            xs = rng.uniform(-8, 8, precise.slots)
            t0 = time.perf_counter()
            got = fhec.evaluate(p, {"x": xs}, seed=0)["y"]
            row["eval_s"] = round(time.perf_counter() - t0, 2)
            want = series(xs)
            row["err_bits"] = round(-math.log2(np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))), 1)
        rows.append(row)
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
