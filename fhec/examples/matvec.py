"""F1's running example (Listing 2, §4.1): a 4 x 16K matrix-vector multiply.

Each row of the matrix and the vector are encrypted in their own ciphertext
(N = 2^14, as in F1; CKKS packs N/2 = 8192 slots). Row i times the vector, summed
over all slots by log2(8192) = 13 rotate-and-adds, gives output element i in every slot.
The 13 rotations use 13 distinct key-switch hints, plus one for the relinearization —
the hint reuse that F1's homomorphic-operation scheduler (§4.2) exploits.

Parameters: N = 2^14 and L = 16 levels as in F1. With 16 levels of 30-bit primes,
log2(Q·P) is about 640 bits, above the HE standard's 438-bit bound for N = 2^14, so
`security=None` acknowledges the parameter set is insecure (F1 picked it to stress
the accelerator, not for security). Four special primes (hybrid key switching with
5 digits) keep the 14 key-switching keys at ~390 MB instead of ~1.1 GB.

Run:  fhec examples copy ex && fhec check ex/matvec.py   (about 15 s)
"""

import fhec

params = fhec.CKKSParams(N=2**14, levels=16, scale_bits=30, word_bits=32, special_primes=4, security=None)

p = fhec.Program("matvec", params)
rows = [p.input(f"row{i}") for i in range(4)]
v = p.input("v")
for i in range(4):
    p.output(f"y{i}", (rows[i] * v).sum_slots())  # innerSum of Listing 2
