"""F1's matrix-vector example (Listing 2) at a size the RPU's vector data memory holds.

A 4 x 512 matrix times a 512-vector: each row and the vector are one CKKS ciphertext of
N = 2^10 (512 slots, the RPU's smallest NTT size, two 512-element B512 vectors per
limb); row i times the vector, summed over all slots by log2(512) = 9 rotate-and-adds,
gives output element i in every slot. Everything - inputs, the 10 key-switching keys,
twiddles and outputs - fits in the RPU's 32 MiB VDM; `matvec.py` (N = 2^14,
16 levels, ~390 MB of keys) does not.

Run:  fhec examples copy ex && fhec run ex/rpu_matvec.py --target rpu   (compile,
      simulate the B512 words on encrypted random inputs, check every limb against the
      eager evaluator); fhec compile ex/rpu_matvec.py --target rpu --out rpu_out
      (.s, .bin, .memory.npz, report.json)
"""

import fhec

params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=40, special_primes=1, security=None)

p = fhec.Program("rpu_matvec", params)
rows = [p.input(f"row{i}") for i in range(4)]
v = p.input("v")
for i in range(4):
    p.output(f"y{i}", (rows[i] * v).sum_slots())
