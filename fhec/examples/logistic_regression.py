"""One inference step of logistic regression on encrypted features (CKKS).

512 samples of 16 features each are packed into one ciphertext (8192 slots, sample i
in slots 16i..16i+15); the model's weights are a plaintext input, replicated per
sample, and its bias a constant. For each sample

    p_i = sigmoid(<x_i, w> + b),

with the dot product as a plaintext multiply and a 16-slot rotate-and-add
(`sum_slots(16)`, 4 rotations), and the sigmoid replaced by the least-squares cubic on
[-8, 8] of Kim et al. (2018), "Logistic regression model training based on the
approximate homomorphic encryption": 0.5 + 0.15012 z - 0.001593 z^3. A final mask keeps
slot 16i (the other slots hold partial window sums).

Depth: 1 (weights) + 2 (z^3) + 1 (coefficients) + 1 (mask) = 5 levels. Parameters are
128-bit secure by the HE standard (N = 2^14 allows 438 bits; this set uses ~246): two
32-bit base primes give the decryption headroom the intermediate z^3 needs.

Run:  fhec examples copy ex && fhec check ex/logistic_regression.py
"""

import numpy as np

import fhec

FEATURES = 16
params = fhec.CKKSParams(N=2**14, levels=5, scale_bits=30, word_bits=32, base_limbs=2)
SIGMOID3 = [0.5, 0.15012, 0.0, -0.001593]
BIAS = 0.25

p = fhec.Program("logistic_regression", params)
x = p.input("features")
w = p.plain("weights")
z = (x * w).sum_slots(FEATURES) + BIAS
prob = z.polynomial(SIGMOID3)
mask = np.zeros(params.slots)
mask[::FEATURES] = 1.0
p.output("probability", prob * mask)
