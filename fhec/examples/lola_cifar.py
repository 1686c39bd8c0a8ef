"""LoLa-CIFAR: LoLa's CIFAR-10 network on an encrypted image (CKKS), small here, F1's size in the suite.

After LoLa (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019), ported to CKKS as F1 does (F1
§7, Table 3, starting level L = 8, unencrypted weights). LoLa's released network
(microsoft/CryptoNets, CifarCryptoNet/LolaCifarCryptoNet.cs; BFV at N = 16,384) is: a
convolution of the 3 x 32 x 32 image, zero-padded by 1, with 83 maps of 3 x 8 x 8 windows
at stride 2 (83 x 14 x 14), the square, a convolution with 163 maps of 83 x 6 x 6 windows
at stride 2 with padding 2, applied as a dense layer (163 x 7 x 7 = 7,987 outputs), the
square, and a dense layer 7,987 -> 10.

fhec's program is smaller, for memory: the first convolution without the padding (83 x
13 x 13) and the second down to 163 x 4 x 4 = 2,608 outputs (6 x 6 windows at stride 2,
no padding). At LoLa's sizes the hybrid method below needs the second convolution as
10 blocks of 4,096 diagonals of 8,192 slots (40,960 plaintext vectors, about 6 GB while
tracing), beyond the 4 GB a process may take on the machine this was written on; this
program's 16,384 diagonals peak at 2.5 GB. The deviation scales the plaintext traffic
of that layer by about 2.5, not the order of magnitude between fhec's time and F1's
(docs/suites.md).

Layouts, as in `lola_mnist.py`: the image arrives in LoLa's convolution representation,
one ciphertext per window position (8 x 8 x 3 = 192), slot 169·j + i holding the pixel
output position i reads, repeated for each of G maps (G·169 <= N/4, so that the next
layer's hybrid method fits in the ring); the first convolution is 192 plaintext-vector
products per group of G maps, leaving each group's outputs in one ciphertext (83 maps
make 4 groups of at most 24). The second convolution is a dense 2,608 x 14,027 matrix
on those 4 ciphertexts, each group's block applied by the hybrid diagonal method
(`lola_mnist.hybrid_diagonals`, 4,096 diagonals by BSGS) and the 4 summed; the dense
layer likewise.

Depth 5 (conv, square, conv, square, dense), inputs at F1's L = 8. N = 2^14 (8,192
slots, F1's largest ring); log Q·P stays within the HE standard's 438 bits.
The module's program is the same network, small (a 3 x 12 x 12 image, 4 + 6 maps of
4 x 4 windows, 3 classes) at N = 2^10 (INSECURE, security=None) so that `fhec check`
is quick.

Run:  fhec examples copy ex && fhec check ex/lola_cifar.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import fhec
from lola_mnist import dense_layer, hybrid_bound, unit_bound


@dataclass(frozen=True)
class CifarShape:
    """Image side and channels; (maps, window, stride) of both convolutions; classes."""

    side: int
    channels: int
    conv1: tuple[int, int, int]
    conv2: tuple[int, int, int]
    classes: int

    @property
    def side1(self) -> int:
        return (self.side - self.conv1[1]) // self.conv1[2] + 1

    @property
    def side2(self) -> int:
        return (self.side1 - self.conv2[1]) // self.conv2[2] + 1

    @property
    def windows(self) -> int:
        return self.channels * self.conv1[1] ** 2

    def group_maps(self, slots: int) -> int:
        """Maps of the first convolution per ciphertext: the hybrid method of the next
        layer needs cols + m <= slots with m >= cols, so a group fills at most slots/2."""
        return max(1, (slots // 2) // self.side1**2)


CIFAR = CifarShape(side=32, channels=3, conv1=(83, 8, 2), conv2=(163, 6, 2), classes=10)
"""LoLa's CIFAR-10 network without its paddings (module doc: 83 x 13 x 13, then 163 x 4 x 4)."""
SMALL = CifarShape(side=12, channels=3, conv1=(4, 4, 2), conv2=(6, 3, 2), classes=3)
"""The same network, small enough for `fhec check` at N = 2^10."""


def conv1_weights(shape: CifarShape, rng) -> np.ndarray:
    """(maps, windows) weights, each map's summing to 1 in absolute value."""
    w = rng.uniform(-1, 1, (shape.conv1[0], shape.windows))
    return w / np.abs(w).sum(axis=1, keepdims=True)


def conv2_matrix(shape: CifarShape, rng) -> np.ndarray:
    """The second convolution as a dense (maps2·side2², maps1·side1²) matrix."""
    maps1, (maps2, k, stride) = shape.conv1[0], shape.conv2
    s1, s2 = shape.side1, shape.side2
    kernels = rng.uniform(-1, 1, (maps2, maps1, k, k))
    w = np.zeros((maps2 * s2 * s2, maps1 * s1 * s1))
    for o in range(maps2):
        for y in range(s2):
            for x in range(s2):
                row = (o * s2 + y) * s2 + x
                for c in range(maps1):
                    for i in range(k):
                        cols = c * s1 * s1 + (y * stride + i) * s1 + x * stride + np.arange(k)
                        w[row, cols] = kernels[o, c, i]
    return w


def lola_cifar(shape: CifarShape = CIFAR, N: int = 2**14, security: int | None = 128) -> fhec.Program:
    """LoLa-CIFAR (module doc) as a Program: inputs ``window_i`` (the convolution
    representation), output ``scores`` (class k in slot k)."""
    params = fhec.CKKSParams(N=N, levels=8, scale_bits=28, word_bits=32, security=security)
    slots, p1 = params.slots, shape.side1**2
    rng = np.random.default_rng(2019)
    w1, w2 = conv1_weights(shape, rng), conv2_matrix(shape, rng)
    dense = rng.uniform(-1, 1, (shape.classes, w2.shape[0]))
    g = shape.group_maps(slots)
    groups = [range(a, min(a + g, shape.conv1[0])) for a in range(0, shape.conv1[0], g)]
    # Scale the next layers to a compiler bound of 1 (as lola_mnist.weights does); the
    # second convolution's bound is the sum of its groups' bounds.
    w2 /= sum(hybrid_bound(w2[:, g.start * p1:g.stop * p1]) for g in groups)
    dense = unit_bound(dense)

    p = fhec.Program(f"lola_cifar_{shape.side}x{shape.side}_N{N}", params)
    windows = [p.input(f"window_{i}") for i in range(shape.windows)]
    hidden = None
    for maps in groups:
        vecs = []
        for i in range(shape.windows):
            v = np.zeros(slots)
            for j, m in enumerate(maps):
                v[j * p1:(j + 1) * p1] = w1[m, i]
            vecs.append(v)
        conv = sum((x * v for x, v in zip(windows[1:], vecs[1:])), windows[0] * vecs[0])
        part = dense_layer(conv * conv, w2[:, maps.start * p1:maps.stop * p1])
        hidden = part if hidden is None else hidden + part
    p.output("scores", dense_layer(hidden * hidden, dense))
    return p


def suite_rows() -> list[dict]:
    """F1 Table 3's LoLa-CIFAR row (`fhec.suites`)."""
    return [{
        "suite": "f1", "name": "LoLa-CIFAR unencrypted weights", "variant": None, "target": "f1", "paper_ms": 241.0,
        "paper_source": "F1 Table 3", "build": lola_cifar, "needs": None,
        "note": "CKKS port; LoLa's layers without their paddings (83x13x13, 163x4x4: memory, see the module doc); "
                "convolutions by the hybrid diagonal method with BSGS, far fewer rotations than LoLa's layouts",
    }]


p = lola_cifar(SMALL, N=2**10, security=None)
