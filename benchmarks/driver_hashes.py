"""Fingerprints of what the four public drivers produce on every example, to compare two
checkouts bit for bit (run from each checkout's root, then diff the outputs):

    PYTHONPATH=. python benchmarks/driver_hashes.py > hashes.txt

Per program: a hash of `fhec.evaluate`'s decrypted outputs, of `fhec.run`'s output
ciphertexts (every limb), of `fhec.lower`'s instruction columns (with priorities), and
of `fhec.compile(..., "f1").run`'s output ciphertexts, with the schedule's cycles.
"""

from __future__ import annotations

import glob
import hashlib
import sys
import warnings

import numpy as np

sys.path.insert(0, ".")
warnings.simplefilter("ignore")

import fhec  # noqa: E402  (the checkout on sys.path first)
from fhec.cli import load_programs  # noqa: E402
from fhec.evaluate import random_inputs  # noqa: E402

def h(*arrs):
    m = hashlib.sha256()
    for a in arrs:
        m.update(np.ascontiguousarray(a).tobytes())
    return m.hexdigest()[:16]

for path in sorted(glob.glob("fhec/examples/*.py")):
    if path.endswith("demo.py"):
        continue
    for prog in load_programs(path):
        inputs = random_inputs(prog, 3)
        ev = fhec.evaluate(prog, inputs, seed=5)
        line = [path, prog.name, "evaluate", h(*[ev[k] for k in sorted(ev)])]
        try:
            from fhec.run import run_detailed
            rr = run_detailed(prog, inputs, seed=5)
            line += ["run", h(*[rr.ciphertexts[k].data for k in sorted(rr.ciphertexts)])]
        except Exception as e:
            line += ["run", type(e).__name__]
        low = fhec.lower(prog)
        line += ["lower", h(low.limb.op, low.limb.src0, low.limb.src1, low.limb.dst, low.limb.mod, low.limb.imm, low.limb.prio)]
        try:
            c = fhec.compile(prog, target="f1")
            d = c.run_detailed(inputs, seed=5)
            line += ["compile", h(*[d["ciphertexts"][k].data for k in sorted(d["ciphertexts"])]), str(c.report.cycles)]
        except Exception as e:
            line += ["compile", type(e).__name__ + ":" + str(e)[:60]]
        print(" ".join(line), flush=True)
