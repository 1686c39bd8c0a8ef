"""The `make demo` job: encrypt two vectors, multiply, rotate, decrypt, print the error."""

import numpy as np

import fhec

params = fhec.CKKSParams(N=2**13, levels=5, scale_bits=30, word_bits=32)
keys = fhec.keygen(params, rotations=[1, -3], seed=7)
ev = fhec.Evaluator(keys)

rng = np.random.default_rng(0)
x, y = rng.uniform(-1, 1, params.slots), rng.uniform(-1, 1, params.slots)
ct = ev.rotate(ev.rescale(ev.multiply(fhec.encrypt(keys, x, seed=1), fhec.encrypt(keys, y, seed=2))), 1)
out = fhec.decrypt(keys, ct)

expected = np.roll(x * y, -1)
prec = fhec.measure_precision(expected, out)
print(f"CKKS N={params.N}, {params.max_limbs} limbs + {len(params.special_moduli)} special, log2(QP)={params.log_qp:.1f}")
print(f"rotate(x * y, 1): first slots {np.round(out[:4], 5)} expected {np.round(expected[:4], 5)}")
print(f"max error {prec['max_error']:.2e} ({prec['min_bits']:.1f} bits), mean {prec['mean_bits']:.1f} bits; "
      f"estimated precision {ct.precision_bits:.1f} bits")
