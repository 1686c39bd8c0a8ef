"""Randomness: fhec's SHAKE-256 samplers beside numpy's PCG64 drawing the same sizes, and
keygen / encryption at CKKS N=2^14 with 8 limbs (60-bit base, 7 × 40-bit levels, one
60-bit special prime; relinearization and one rotation key for both key-switching methods).

PCG64 is the generator fhec used before issue 9; it is fast but not cryptographic. To
compare keygen and encryption with the code before that change (fab1259), extract the
old package and pass its directory (both run interleaved in subprocesses, best of
several runs, process CPU time):

    git archive fab1259 fhec | tar -x -C /tmp/old && python benchmarks/bench_sampling.py --against /tmp/old
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import fhec

N = 2**14


def best_of(fn, repeats: int, clock=time.perf_counter) -> float:
    """Best time of `fn()` in microseconds by `clock`, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best * 1e6


def _params():
    return fhec.CKKSParams(N=N, levels=7, scale_bits=40, word_bits=60, security=128)


def _sampler_rows(repeats: int) -> list[dict]:
    from fhec.schemes.sampling import Sampler  # not at the top: `compare` imports this module under old fhec

    params = _params()
    moduli = params.moduli + params.special_moduli
    s, rng = Sampler.from_seed(1, "bench"), np.random.default_rng(1)
    pairs = {
        "uniform mod q, 9 limbs": (
            lambda: s.uniform(moduli, N),
            lambda: [rng.integers(0, q, size=N, dtype=np.uint64) for q in moduli],
        ),
        "ternary": (lambda: s.ternary(N), lambda: rng.integers(-1, 2, size=N, dtype=np.int64)),
        "Gaussian σ=3.2": (
            lambda: s.gaussian(N),
            lambda: np.clip(np.rint(rng.normal(0.0, 3.2, size=N)), -20, 20).astype(np.int64),
        ),
    }
    rows = []
    for name, (ours, pcg) in pairs.items():
        f, r = best_of(ours, repeats), best_of(pcg, repeats)
        rows.append({"group": "randomness", "name": f"N=2^14 {name}", "fhec_us": round(f, 1),
                     "numpy_pcg64_us": round(r, 1), "ratio": round(f / r, 2)})
    return rows


def _scheme_times(repeats: int, clock=time.perf_counter) -> dict[str, float]:
    params = _params()
    x = np.random.default_rng(0).uniform(-1, 1, params.slots)
    keys = fhec.keygen(params, rotations=[1], seed=1)
    pub = keys.public_only()
    return {
        "keygen": best_of(lambda: fhec.keygen(params, rotations=[1], seed=1), repeats, clock),
        "encrypt (secret key)": best_of(lambda: fhec.encrypt(keys, x, seed=3), repeats, clock),
        "encrypt (public key)": best_of(lambda: fhec.encrypt(pub, x, seed=3), repeats, clock),
    }


def run(quick: bool = False) -> list[dict]:
    import numba

    numba.set_num_threads(1)
    reps = 3 if quick else 10
    rows = _sampler_rows(reps)
    for op, us in _scheme_times(reps).items():
        rows.append({"group": "randomness", "name": f"CKKS N=2^14, 8 limbs: {op}", "fhec_us": round(us, 1)})
    return rows


_CHILD = (
    "import json, sys; sys.path.insert(0, {bench!r}); import bench_sampling as b, numba; "
    "assert b.fhec.__file__.startswith(sys.argv[1]), b.fhec.__file__; "
    "numba.set_num_threads(1); print(json.dumps(b._scheme_times(5, b.time.process_time)))"
)


def compare(old_root: str, rounds: int = 3) -> dict[str, dict[str, float]]:
    """Best-of-`rounds` scheme timings (us of process CPU time, which a loaded machine
    disturbs less than wall time) of the fhec package under `old_root` and of this
    checkout, run alternately in subprocesses so that both see the same load."""
    here = Path(__file__).resolve()
    roots = {"before": str(Path(old_root).resolve()), "after": str(here.parent.parent)}
    best: dict[str, dict[str, float]] = {k: {} for k in roots}
    for _ in range(rounds):
        for label, root in roots.items():
            env = dict(os.environ, PYTHONPATH=root)
            # cwd=root: `python -c` puts the working directory first on sys.path, so a
            # run from this checkout would otherwise import this checkout's fhec twice.
            out = subprocess.run([sys.executable, "-c", _CHILD.format(bench=str(here.parent)), root], env=env, cwd=root,
                                 capture_output=True, text=True, check=True)
            for op, us in json.loads(out.stdout.strip().splitlines()[-1]).items():
                best[label][op] = min(us, best[label].get(op, float("inf")))
    return best


if __name__ == "__main__":
    if "--against" in sys.argv:
        got = compare(sys.argv[sys.argv.index("--against") + 1])
        for op in got["after"]:
            b, a = got["before"][op], got["after"][op]
            print(f"{op:<24} CPU time before {b / 1e3:9.1f} ms   after {a / 1e3:9.1f} ms   ratio {a / b:5.2f}")
    else:
        for r in run(quick="--quick" in sys.argv):
            print(r)
