"""LoLa-MNIST: the LoLa network on an encrypted image (CKKS), small here, F1's size in the suite.

After LoLa (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019), ported to CKKS as F1 does (F1 §7,
Table 3): a 5 x 5 convolution of stride 2 with 5 maps over the 28 x 28 image (zero-padded
to 29 x 29, as CryptoNets and LoLa do: 5 x 13 x 13 = 845 outputs), the square activation,
a dense layer 845 -> 100, the square, and a dense layer 100 -> 10.

Layouts (LoLa's for the input and the convolution, the hybrid method for the dense layers):
- the input arrives in LoLa's *convolution representation*: one ciphertext per kernel
  position (25), slot 169·m + j holding the pixel that position j of map m reads (the
  client packs it; the 169 values are repeated for each of the 5 maps);
- the convolution is then 25 plaintext-vector products summed (no rotation), leaving
  the 845 outputs in LoLa's *dense representation* (slots 0..844);
- each dense layer (m rows padded to a power of two, n columns) is the hybrid diagonal
  method: m generalized diagonals applied by BSGS (`linear_transform`), then a
  rotate-and-add over ceil(n/m) + 1 blocks of m (`sum_slots(T, stride=m)`). It gives
  LoLa's stacked product (blocks of rows summed by log-many rotations) in one level and
  without the masks LoLa's stacking needs to merge its row groups; the slots past the m
  outputs keep partial sums, which the next layer's diagonals never read.

With encrypted weights every weight vector is a ciphertext input instead (the model
owner packs the conv weights per slot and each dense layer's diagonals, pre-rotated for
the giant steps), and the diagonal products are ciphertext products.

Depth: conv 1 + square 1 + dense 1 + square 1 + dense 1 = 5. F1's L counts RNS limbs (F1
§2: Q = q1···qL); fhec's ``levels`` counts rescales, so a program of ``levels`` = l holds
l + 1 limbs. F1 starts LoLa-MNIST at L = 4 limbs (unencrypted weights) and L = 6
(encrypted). The encrypted variant starts at F1's 6 limbs (levels = 5) and ends on the
last limb. The unencrypted one needs 6 limbs too, two more than F1's 4: fhec rescales
after every plaintext product (a real weight at a CKKS scale), which LoLa's integer BFV
weights do not need, so its 5 products take 5 levels.

The paper-size programs use N = 2^14: 8,192 CKKS slots, the 8,192 slots LoLa's MNIST
network packs (LoLa's BFV ring N = 8,192 has 8,192 slots; a CKKS ring has N/2), and F1's
largest ring (n_max = 16,384). 128-bit secure by the HE standard (log QP within 438).
The module's program is the same network, smaller (a 12 x 12 image, 2 maps, 16 hidden
units, 4 classes) at N = 2^10 (INSECURE, security=None) so that `fhec check` is quick.

Run:  fhec examples copy ex && fhec check ex/lola_mnist.py
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import fhec


@dataclass(frozen=True)
class Shape:
    """The network's sizes: image side (before padding), padding, kernel, stride, maps,
    hidden units, classes."""

    side: int
    pad: int
    kernel: int
    stride: int
    maps: int
    hidden: int
    classes: int

    @property
    def out_side(self) -> int:
        return (self.side + self.pad - self.kernel) // self.stride + 1

    @property
    def positions(self) -> int:
        return self.out_side**2

    @property
    def conv_outputs(self) -> int:
        return self.maps * self.positions


MNIST = Shape(side=28, pad=1, kernel=5, stride=2, maps=5, hidden=100, classes=10)
"""LoLa's MNIST network: 5 x 13 x 13 = 845 conv outputs, 100 hidden units, 10 classes."""
SMALL = Shape(side=12, pad=1, kernel=5, stride=2, maps=2, hidden=16, classes=4)
"""The same network, small enough for `fhec check` at N = 2^10 (2 x 5 x 5 = 50 conv outputs)."""


def weights(shape: Shape, seed: int = 2019) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fixed (seeded) conv, dense1, dense2 weights, as large as the value bounds allow so
    that the scores stay well above the noise of N = 2^14 key switching: each map's conv
    weights sum to 1 in absolute value, and each dense layer is scaled to a compiler
    bound of 1 (`unit_bound`), so that every value provably stays within [-1, 1] for
    pixels in [-1, 1]."""
    rng = np.random.default_rng(seed)
    conv = rng.uniform(-1, 1, (shape.maps, shape.kernel**2))
    conv /= np.abs(conv).sum(axis=1, keepdims=True)
    dense1 = unit_bound(rng.uniform(-1, 1, (shape.hidden, shape.conv_outputs)))
    dense2 = unit_bound(rng.uniform(-1, 1, (shape.classes, shape.hidden)))
    return conv, dense1, dense2


def conv_vectors(shape: Shape, conv: np.ndarray, slots: int) -> list[np.ndarray]:
    """Per kernel position i, the vector multiplying its input ciphertext: w[m, i] over
    map m's block of positions (slots positions·m .. positions·(m+1) - 1)."""
    vecs = []
    for i in range(shape.kernel**2):
        v = np.zeros(slots)
        for m in range(shape.maps):
            v[m * shape.positions:(m + 1) * shape.positions] = conv[m, i]
        vecs.append(v)
    return vecs


def hybrid_shape(rows: int, cols: int) -> tuple[int, int]:
    """(m, T) of the hybrid method for a rows x cols layer: rows padded to m, a power of
    two, and T = ceil((cols + m) / m) blocks of m slots summed."""
    m = 1 << max(0, math.ceil(math.log2(rows)))
    return m, -(-(cols + m) // m)


def hybrid_diagonals(w: np.ndarray, slots: int) -> tuple[dict[int, np.ndarray], int, int]:
    """The hybrid diagonal method for ``w @ a`` (rows padded to m, a power of two): the
    diagonals ``{s: d_s}`` (steps s in [-m, 0)) such that y = sum_s d_s ⊙ rotate(a, s)
    holds, in slot i, the products of row i mod m; ``y.sum_slots(T, stride=m)`` then
    leaves row o in slot o. Returns (diagonals, m, T).

    Each (row o, column c) product lands in slot i = c - ((c - o) mod m) + m, in (c, c+m],
    so every slot i < T·m is read once and no sum wraps around the ring.
    """
    rows, cols = w.shape
    m, blocks = hybrid_shape(rows, cols)
    if blocks * m > slots:
        raise ValueError(f"a {rows} x {cols} layer needs {blocks * m} slots; the ring has {slots}")
    i = np.arange(blocks * m)
    diagonals = {}
    for s in range(-m, 0):
        c = i + s
        row = i % m
        ok = (c >= 0) & (c < cols) & (row < rows)
        d = np.zeros(slots)
        d[i[ok]] = w[row[ok], c[ok]]
        if d.any():
            diagonals[s] = d
    return diagonals, m, blocks


def hybrid_bound(w: np.ndarray) -> float:
    """The bound the compiler derives for `dense_layer` of `w` on a vector bounded by 1:
    the largest per-slot sum of |diagonal| entries (`linear_transform` bounds each slot
    by its row of diagonals) times the T blocks `sum_slots` adds (it knows no more)."""
    m, blocks = hybrid_shape(*w.shape)
    diagonals, _, _ = hybrid_diagonals(w, m * blocks)
    return blocks * float(sum(np.abs(d) for d in diagonals.values()).max())


def unit_bound(w: np.ndarray) -> np.ndarray:
    """`w` scaled so that `hybrid_bound` is 1: each layer keeps values within [-1, 1]."""
    return w / hybrid_bound(w)


def dense_layer(x, w: np.ndarray, hoisting: str = "single"):
    """``w @ x`` for a plaintext matrix by the hybrid method: rows of the result in slots
    0..rows-1, partial sums beyond them (which a following `dense_layer` never reads)."""
    diagonals, m, blocks = hybrid_diagonals(w, x.program.params.slots)
    return x.linear_transform(diagonals, hoisting=hoisting).sum_slots(blocks, stride=m)


def _dense_encrypted(p: fhec.Program, name: str, x, w: np.ndarray, slots: int):
    """The hybrid method with encrypted diagonals, by BSGS written out: the model owner
    sends diagonal s = g·n1 + b - m pre-rotated by -g·n1, so each giant step is one
    rotation of a sum of baby-step products. A weight ciphertext may hold any value
    within its bound, so each output (a sum of m·T products) stays within [-1, 1] only
    with weights of at most 1 / (m·T)."""
    diagonals, m, blocks = hybrid_diagonals(w, slots)
    n1 = 1 << (math.ceil(math.log2(m)) + 1) // 2
    base = x.rotate(-m)
    baby = [base] + [base.rotate(b) for b in range(1, n1)]
    total = None
    for g in range(0, m, n1):
        inner = None
        for b in range(n1):
            if (g + b - m) not in diagonals:
                continue
            d = p.input(f"{name}_diag{g + b}", bound=1.0 / (m * blocks))
            term = baby[b] * d
            inner = term if inner is None else inner + term
        if inner is None:
            continue
        step = inner.rotate(g) if g else inner
        total = step if total is None else total + step
    return total.sum_slots(blocks, stride=m)


def lola_mnist(shape: Shape = MNIST, N: int = 2**14, encrypted_weights: bool = False,
               security: int | None = 128, hoisting: str = "single", params=None) -> fhec.Program:
    """The LoLa-MNIST network (module doc) as a Program: 25 conv-representation image
    inputs (``window_i``) and, with `encrypted_weights`, ciphertext weight inputs
    (``conv_w_i``, then each dense layer's diagonals ``dense1_diagK``, pre-rotated for
    their giant step). Output ``scores``: class k in slot k. `hoisting`: of the dense
    layers' BSGS (plaintext weights); `params` replaces F1's parameters (N, security and
    the level count then come from it)."""
    levels = 5  # depth 5 (module doc): 6 limbs, F1's L = 6 for encrypted weights (4 for plaintext weights)
    if params is None:
        params = fhec.CKKSParams(N=N, levels=levels, scale_bits=28, word_bits=32, security=security)
    slots = params.slots
    conv, dense1, dense2 = weights(shape)
    kind = "encrypted" if encrypted_weights else "plain"
    p = fhec.Program(f"lola_mnist_{kind}_{shape.side}x{shape.side}_N{params.N}", params)
    windows = [p.input(f"window_{i}") for i in range(shape.kernel**2)]
    if encrypted_weights:
        ws = [p.input(f"conv_w_{i}", bound=1.0 / shape.kernel**2) for i in range(shape.kernel**2)]
        c = sum((x * w for x, w in zip(windows[1:], ws[1:])), windows[0] * ws[0])
        h = _dense_encrypted(p, "dense1", c * c, dense1, slots)
        p.output("scores", _dense_encrypted(p, "dense2", h * h, dense2, slots))
        return p
    vecs = conv_vectors(shape, conv, slots)
    c = sum((x * v for x, v in zip(windows[1:], vecs[1:])), windows[0] * vecs[0])
    h = dense_layer(c * c, dense1, hoisting)
    p.output("scores", dense_layer(h * h, dense2, hoisting))
    return p


def suite_rows() -> list[dict]:
    """F1 Table 3's LoLa-MNIST rows (`fhec.suites`)."""
    note = ("CKKS port as in F1; dense layers by the hybrid diagonal method (one level, no masks); "
            "starts with 6 limbs, not F1's L = 4 (fhec rescales after plaintext products: depth 5)")
    return [
        {"suite": "f1", "name": "LoLa-MNIST unencrypted weights", "variant": None, "target": "f1",
         "paper_ms": 0.17, "paper_source": "F1 Table 3", "build": lambda: lola_mnist(MNIST), "needs": None,
         "note": note},
        {"suite": "f1", "name": "LoLa-MNIST encrypted weights", "variant": None, "target": "f1",
         "paper_ms": 0.36, "paper_source": "F1 Table 3",
         "build": lambda: lola_mnist(MNIST, encrypted_weights=True), "needs": None,
         "note": "CKKS port as in F1; every weight a ciphertext input (25 conv + dense diagonals), "
                 "starting with F1's L = 6 limbs"},
    ]


p = lola_mnist(SMALL, N=2**10, security=None)
