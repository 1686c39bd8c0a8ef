"""A LoLa-style convolutional layer on an encrypted image (CKKS).

After LoLa (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019), on a small scale: an 8 x 8
image in one ciphertext (row-major, slot 8r + c), two 3 x 3 convolution kernels
(stride 1, no padding: 2 x 6 x 6 = 72 outputs) written as one plaintext matrix
(72 x 64) applied with `linear_transform` (the diagonal method; the matrix is banded,
so only its nonzero diagonals cost rotations), the square activation, and a dense
layer (10 x 72) to 10 class scores. Depth 3.

The weights are fixed (seeded) plaintext constants compiled into the program; they are
scaled so that every intermediate stays below 1 for pixels in [-1, 1].

N = 2^8 (128 slots) is far below the HE standard's minimum ring (N = 1024): `security=None`
makes this a fast functional toy. A deployment would use N = 2^13 (128-bit secure for
these 5 primes) and, as LoLa does, pack many images or channels per ciphertext.

Run:  fhec examples copy ex && fhec check ex/lola_mnist.py
"""

import numpy as np

import fhec

SIDE, K, KERNELS, CLASSES = 8, 3, 2, 10
OUT = SIDE - K + 1

rng = np.random.default_rng(2019)
kernels = rng.uniform(-1, 1, (KERNELS, K, K)) / (K * K)
dense = rng.uniform(-1, 1, (CLASSES, KERNELS * OUT * OUT)) / (KERNELS * OUT * OUT)


def convolution_matrix() -> np.ndarray:
    """The (KERNELS*OUT*OUT) x (SIDE*SIDE) matrix of the valid 2-D convolutions."""
    m = np.zeros((KERNELS * OUT * OUT, SIDE * SIDE))
    for c in range(KERNELS):
        for r in range(OUT):
            for s in range(OUT):
                for i in range(K):
                    for j in range(K):
                        m[c * OUT * OUT + r * OUT + s, (r + i) * SIDE + (s + j)] = kernels[c, i, j]
    return m


params = fhec.CKKSParams(N=2**8, levels=3, scale_bits=30, word_bits=32, security=None)

p = fhec.Program("lola_mnist", params)
image = p.input("image")
conv = image.linear_transform(convolution_matrix())
act = conv * conv  # LoLa's square activation
p.output("scores", act.linear_transform(dense))
