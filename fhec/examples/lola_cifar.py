"""LoLa-CIFAR: LoLa's CIFAR-10 network on an encrypted image (CKKS), LoLa's own program.

After LoLa (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019), ported to CKKS as F1 does (F1
§7, Table 3: N = 2^14, starting at L = 8 RNS limbs, unencrypted weights). The program follows
LoLa's released network (microsoft/CryptoNets, ``CifarCryptoNet/LolaCifarCryptoNet.cs``,
BFV at N = 16,384) layer by layer, with LoLa's representations and operation counts:

1. Input (``LLConvReader``, dense format): the 3 x 32 x 32 image zero-padded by 1, read as
   a 196 x 192 matrix (14 x 14 window corners at stride 2 by 3 x 8 x 8 window offsets),
   one ciphertext per offset: ``window_i`` holds in slot c the pixel that corner c reads
   at offset i.
2. Convolution (``LLPoolLayer``, 83 maps): map k is sum_i w[k, i] · window_i, 192 scalar
   products per map, 83 ciphertexts of 196 slots.
3. Vectorize (``LLVectorizeLayer``: ``Stack`` of the 83 maps): map k rotated to slots
   196·k .. 196·k + 195 of a 16,268-slot vector, one rotation per map after the first.
4. Square.
5. The second convolution (163 maps of 83 x 6 x 6, stride 2, padding 2) as a dense
   7,987 x 16,268 matrix (``LLDenseLayer``, row-major, ``ForceDenseFormat``): for each
   output row r, the plaintext product of the vector with row r, a rotate-and-sum of
   all slots (``SumAllSlots``: log2 of the row length rotations, all rows sharing the
   same keys) and a product with the one-hot vector of slot r (``ForceOutputInColumn``);
   the 7,987 results summed into one vector.
6. Square.
7. Dense 7,987 -> 10 (``LLDenseLayer``, row-major, sparse output): per class, the
   plaintext product and the rotate-and-sum; class k's score in every slot of its own
   ciphertext, as LoLa leaves it (10 output ciphertexts ``score_k``).

Adaptations to CKKS (F1's port; each keeps LoLa's operation counts except as stated):

* Slots. BFV at N = 16,384 has 16,384 slots (two rows of 8,192), so LoLa's 16,268-vector
  fits one ciphertext; CKKS at N = 2^14 has 8,192, so the vector spans two ciphertexts,
  BFV's two rows (slots 0..8,191 and 8,192..16,267). A plaintext product of the vector is
  two (one per ciphertext), and BFV's row swap in ``SumAllSlots`` (one rotation, then an
  add) becomes the add of the two products: 13 rotations per row instead of 14.
* The map that straddles the two halves (map 41, slots 8,036..8,231) is rotated once and
  split with two 0/1 masks (LoLa: one mask and a subtraction; here the subtraction of a
  masked ciphertext would meet a ciphertext of another scale). The maps of the upper half
  are rotated straight into place (LoLa: into the upper row, then one row swap).
* Scales: LoLa's BFV weights are integers (scale 128, 768, 512); fhec rescales after every
  product with a real weight, which takes the levels: conv 1, split mask 1, square 1,
  row product 1, one-hot 1, square 1, row product 1 = 7 levels. The program starts at
  ``levels`` = 8, i.e. 9 limbs, one more than F1's L = 8 (F1's L counts limbs, fhec's
  ``levels`` rescales): with 8 limbs (levels = 7) the compiler cannot prove the values fit
  their modulus and refuses the program (`ValueOverflowError`: a row product can reach
  10.2 by its bound where 7.99 fits below Q_1/2 at scale 2^56; with 27-bit scales the
  scores' bound, 20.3, exceeds the 16 that fits on the last limb). Its bound of the
  one-hot sum is pessimistic (below), and the spare limb is what that costs.
* No biases: a bias is one plaintext addition per layer, no key switch.
* Weights are random (seeded), each row scaled so that its rotate-and-sum stays within
  the compiler's bound of 1. The compiler adds the one-hot rows' errors as if each
  could land in every slot (it cannot see that each row lands in its own slot), so its
  precision estimate is pessimistic by about half the log2 of the row count: the small
  program estimates 10.7 bits where its run measures 12.1 to 13.4, the full one 4.4.
* Slots of ``window_i`` beyond the 196 corners must hold zeros, as LoLa's do: the stack
  adds every map's other slots onto its neighbours. `fhec check` fills them with random
  values, which changes the values the program and the reference compute alike.

Counts at the paper's size: 15,936 scalar products, 82 + 7,987·13 + 10·13 = 104,043
rotations with 13 + 82 distinct steps, 3 relinearizations, 15,974 + 10 row plaintexts and
7,987 one-hot plaintexts. The module's program is the same network, small (a 3 x 12 x 12
image, 16 + 4 maps of 4 x 4 and 3 x 3 windows, 3 classes) at N = 2^10 (INSECURE,
security=None): its 16 maps of 36 slots (576) span two 512-slot ciphertexts like the
full size, so that `fhec check` covers every step quickly.

Run:  fhec examples copy ex && fhec check ex/lola_cifar.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import fhec


@dataclass(frozen=True)
class CifarShape:
    """Image side, channels and padding; (maps, window, stride) of the first convolution;
    (maps, window, stride, padding) of the second; classes."""

    side: int
    channels: int
    pad1: int
    conv1: tuple[int, int, int]
    conv2: tuple[int, int, int, int]
    classes: int

    @property
    def side1(self) -> int:
        return (self.side + 2 * self.pad1 - self.conv1[1]) // self.conv1[2] + 1

    @property
    def side2(self) -> int:
        _, k, stride, pad = self.conv2
        return (self.side1 + 2 * pad - k) // stride + 1

    @property
    def windows(self) -> int:
        """Window offsets of the first convolution: LoLa's input ciphertexts."""
        return self.channels * self.conv1[1] ** 2

    @property
    def positions(self) -> int:
        """Window corners of the first convolution: the slots of each map."""
        return self.side1**2

    @property
    def hidden(self) -> int:
        """The vectorized first layer's length (LoLa: 83 · 196 = 16,268)."""
        return self.conv1[0] * self.positions

    @property
    def rows(self) -> int:
        """Outputs of the second convolution (LoLa: 163 · 7 · 7 = 7,987)."""
        return self.conv2[0] * self.side2**2


CIFAR = CifarShape(side=32, channels=3, pad1=1, conv1=(83, 8, 2), conv2=(163, 6, 2, 2), classes=10)
"""LoLa's CIFAR-10 network (``LolaCifarCryptoNet.cs``)."""
SMALL = CifarShape(side=12, channels=3, pad1=1, conv1=(16, 4, 2), conv2=(4, 3, 2, 1), classes=3)
"""The same network, small enough for `fhec check` at N = 2^10 (the vectorized layer,
16 · 36 = 576 slots, still spans two 512-slot ciphertexts)."""


class Conv2Rows:
    """The second convolution as LoLa's dense matrix (``ConvolutionEngine.GetDenseWeights``),
    one row at a time: at full size the matrix is 7,987 x 16,268 (1 GB of float64), so
    rows are built when the program asks for them. Column c·side1² + y·side1 + x reads map
    c at (y, x), the layout the vectorize layer leaves."""

    def __init__(self, shape: CifarShape, kernels: np.ndarray, scale: float):
        self.shape, self.kernels, self.scale = shape, kernels, scale

    def __call__(self, row: int) -> np.ndarray:
        s = self.shape
        _, k, stride, pad = s.conv2
        s1, s2 = s.side1, s.side2
        o, yx = divmod(row, s2 * s2)
        y, x = divmod(yx, s2)
        w = np.zeros((s.conv1[0], s1, s1))
        y0, x0 = y * stride - pad, x * stride - pad
        ya, yb, xa, xb = max(0, y0), min(s1, y0 + k), max(0, x0), min(s1, x0 + k)
        w[:, ya:yb, xa:xb] = self.kernels[o][:, ya - y0:yb - y0, xa - x0:xb - x0]
        return w.reshape(-1) * self.scale


def network(shape: CifarShape, slots: int, seed: int = 2019):
    """Random weights for `shape`, each layer scaled to a compiler bound of at most 1 on
    inputs bounded by 1: (conv1 (maps, windows), conv2 row builder, dense (classes, rows)).
    A rotate-and-sum of n slots multiplies the bound by n, so a row's plaintext is scaled
    by 1 / (its L1 norm · slots); conv1 by its per-map L1 norm."""
    rng = np.random.default_rng(seed)
    w1 = rng.uniform(-1, 1, (shape.conv1[0], shape.windows))
    w1 /= np.abs(w1).sum(axis=1, keepdims=True)
    maps2, k = shape.conv2[0], shape.conv2[1]
    kernels = rng.uniform(-1, 1, (maps2, shape.conv1[0], k, k))
    l1 = np.abs(kernels).sum(axis=(1, 2, 3)).max()
    w2 = Conv2Rows(shape, kernels, 1.0 / (l1 * slots))
    dense = rng.uniform(-1, 1, (shape.classes, shape.rows))
    dense /= np.abs(dense).sum(axis=1, keepdims=True) * slots
    return w1, w2, dense


def vectorize(maps: list, positions: int, slots: int) -> list:
    """LoLa's ``Stack``: map k (slots 0..positions-1) moves to slots k·positions.. of the
    stacked vector, held as ciphertexts of `slots` slots each; a map that straddles two
    ciphertexts is rotated once and split by two 0/1 masks."""
    parts: list[list] = [[] for _ in range(-(-len(maps) * positions // slots))]
    for k, m in enumerate(maps):
        start = k * positions
        block, offset = divmod(start, slots)
        moved = m.rotate(-offset) if offset else m
        if offset + positions <= slots:
            parts[block].append(moved)
            continue
        lower = np.zeros(slots)
        lower[offset:] = 1.0
        parts[block].append(moved * lower)
        parts[block + 1].append(moved * (1.0 - lower))
    return [sum(ps[1:], ps[0]) for ps in parts]


def dense_rows(halves: list, rows: int, row_of, slots: int, one_hot: bool):
    """LoLa's row-major ``LLDenseLayer`` on a dense vector (``DotProduct`` per row): per
    row, a plaintext product per ciphertext, their sum, and a rotate-and-sum of all
    slots. With `one_hot` (``ForceDenseFormat``), row r's sum is kept in slot r by a
    one-hot product and the rows summed into one vector; otherwise each row's ciphertext
    (the result in every slot) is returned."""
    out = []
    for r in range(rows):
        w = row_of(r)
        terms = [h * w[i * slots:(i + 1) * slots] for i, h in enumerate(halves) if w[i * slots:(i + 1) * slots].any()]
        s = sum(terms[1:], terms[0]).sum_slots(slots)
        if one_hot:
            e = np.zeros(slots)
            e[r] = 1.0
            s = s * e
        out.append(s)
    if not one_hot:
        return out
    return sum(out[1:], out[0])


def lola_cifar(shape: CifarShape = CIFAR, N: int = 2**14, security: int | None = 128,
               rows: int | None = None) -> fhec.Program:
    """LoLa-CIFAR (module doc) as a Program: inputs ``window_i`` (LoLa's convolution
    representation), outputs ``score_k`` (class k's score in every slot). `rows` keeps
    only the first rows of the second convolution (a scaling probe, not the network)."""
    params = fhec.CKKSParams(N=N, levels=8, scale_bits=28, word_bits=32, security=security)
    slots = params.slots
    if shape.rows > slots:
        raise fhec.ParameterError(f"{shape.rows} outputs of the second convolution do not fit {slots} slots; "
                                  f"use a larger N or a smaller shape")
    w1, w2, dense = network(shape, slots)
    n_rows = shape.rows if rows is None else rows
    tag = "" if rows is None else f"_rows{rows}"
    p = fhec.Program(f"lola_cifar_{shape.side}x{shape.side}_N{N}{tag}", params)
    windows = [p.input(f"window_{i}") for i in range(shape.windows)]
    maps = [sum((x * float(w) for x, w in zip(windows[1:], w1[k, 1:])), windows[0] * float(w1[k, 0]))
            for k in range(shape.conv1[0])]
    halves = [h * h for h in vectorize(maps, shape.positions, slots)]
    hidden = dense_rows(halves, n_rows, w2, slots, one_hot=True)
    padded = np.zeros((shape.classes, slots))
    padded[:, :shape.rows] = dense
    scores = dense_rows([hidden * hidden], shape.classes, lambda k: padded[k], slots, one_hot=False)
    for k, s in enumerate(scores):
        p.output(f"score_{k}", s)
    return p


def suite_rows() -> list[dict]:
    """F1 Table 3's LoLa-CIFAR row (`fhec.suites`)."""
    return [{
        "suite": "f1", "name": "LoLa-CIFAR unencrypted weights", "variant": None, "target": "f1", "paper_ms": 241.0,
        "paper_source": "F1 Table 3", "build": lola_cifar, "needs": None,
        "note": "CKKS port of LoLa's own program (microsoft/CryptoNets LolaCifarCryptoNet.cs): 83 x 14 x 14 maps "
                "stacked into one 16,268-vector (two CKKS ciphertexts), the second convolution as 7,987 dense "
                "rows of 13 rotations each, outputs as LoLa leaves them (10 ciphertexts)",
    }]


p = lola_cifar(SMALL, N=2**10, security=None)
