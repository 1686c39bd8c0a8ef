"""LoLa-MNIST: the LoLa network on an encrypted image (CKKS), small here, F1's size in the suite.

After LoLa (Brutzkus, Elisha, Gilad-Bachrach, ICML 2019), ported to CKKS as F1 does (F1 §7,
Table 3): a 5 x 5 convolution of stride 2 with 5 maps over the 28 x 28 image (zero-padded
to 29 x 29, as CryptoNets and LoLa do: 5 x 13 x 13 = 845 outputs), the square activation,
a dense layer 845 -> 100, the square, and a dense layer 100 -> 10.

Two layouts (`lola_mnist(layout=...)`): "hybrid" (the default), LoLa's input and
convolution with the hybrid diagonal method for the dense layers, and "lola", LoLa's own
program for every layer (below), with plaintext or encrypted weights. F1's two suite rows
are LoLa's layout, with plaintext weights (F1 ran LoLa's released program) and with
encrypted weights (F1 reimplemented that network with its weights encrypted), so the two
rows differ only in the weights, as F1's do. (F1 Table 5: with low-throughput automorphism
units F1's encrypted-weights MNIST runs 11.9× slower, its plaintext one 4.2×, so F1's
encrypted program is rotation-heavy, as LoLa's layout is and the hybrid layout is not.)

The hybrid layout (LoLa's for the input and the convolution, the hybrid method for the dense layers):
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

LoLa's layout (``layout="lola"``) follows LoLa's released MNIST program, ``LoLa(...)`` in
``LowLatencyCryptoNets/LoLaCryptonets.cs`` of microsoft/CryptoNets (BFV, N = 8,192: 8,192
slots, two rows of 4,096), layer by layer, with LoLa's operation counts (MNIST size; the
general formula in `lola_counts`):

1. ``LLConvReader``: the image as a 169 x 25 matrix (13 x 13 window corners by 5 x 5
   offsets), one ciphertext per offset: ``window_i`` holds in slot c the pixel that
   corner c reads at offset i (169 slots, zero beyond).
2. ``LLPoolLayer`` (5 maps): map m = sum_i w[m, i] · window_i, 25 scalar products per
   map (125), 5 ciphertexts of 169 slots.
3. ``LLVectorizeLayer`` (``Stack``): map m rotated to slots 169·m.., 4 rotations.
4. Square (1 relinearization).
5. ``LLDuplicateLayer`` (8 copies): the 845 slots, rounded up to a block of 1,024, copied
   to slots 1,024·i, 7 rotations: LoLa rotates by 1,024·i for i < 4, swaps the BFV rows
   once and rotates the swapped copy by 1,024·i again; the row swap is a rotation by
   4,096 here, so the count and the 4 distinct steps are LoLa's.
6. ``LLPackedDenseLayer`` (845 -> 100, packing 8, shift 1,024): 13 stacked rows, row r
   holding hidden unit 8r + j's weights over copy j; per row one plaintext product and
   ``DotProduct(v, 1024)``, a rotate-and-sum of 1,024 slots rotating right (10
   rotations), which leaves unit 8r + j in slot 1,024·j + 1,023: 13 products, 130
   rotations, 13 ciphertexts.
7. ``LLInterleaveLayer`` (shift -1, indices 1,023 + 1,024·j): each of the 13 multiplied by
   the 0/1 mask of the 8 indices (13 masks), row r rotated left by r (12 rotations) and
   the 13 added: unit 8r + j in slot 1,024·j + 1,023 - r of one ciphertext.
8. Square (1 relinearization).
9. ``LLInterleavedDenseLayer`` (100 -> 10, row-major): per class one plaintext product
   (its weights at the interleaved slots) and a sum of all 8,192 slots rotating right
   (LoLa: one row swap and 12 row rotations; here 13 rotations): 10 products, 130
   rotations; class k's
   score in every slot of its own ciphertext ``score_k``, as LoLa leaves it.

Totals at MNIST size: 283 rotations (4 + 7 + 130 + 12 + 130) with LoLa's 30 distinct steps
(-169·m, -1,024·i, the powers of two down to -4,096, and 1..12 for the interleave),
2 relinearizations (285 key switches), 125 scalar products, 23 weight plaintexts and 13
masks. The hybrid layout takes 37 key switches for the same network.

Adaptations to CKKS (F1's port of LoLa): LoLa's BFV ring of two rows of 4,096 is one
cyclic vector of 8,192 CKKS slots; no block of LoLa's layout crosses the rows, so every
rotation moves the same values (the row swaps become rotations by 4,096, as above). No
biases: a bias is one plaintext addition per layer and no key switch. LoLa's BFV weights
and masks are integers at no extra scale; fhec rescales after every product with a real
weight or a mask, so the depth is 6 (conv, square, packed dense, mask, square, final
dense; LoLa's masks are why it is one more than the hybrid layout's 5). Weights are
random (seeded) with every row scaled to an L1 norm of 1, so that every layer's values
stay within [-1, 1] as LoLa's network keeps them (the scores' rows to `SCORE_SCALE`).

Limbs: 8 (``levels`` = 7), four more than F1's L = 4: six for the depth and one spare.
The compiler bounds a sum by the sum of its terms' bounds and a rotate-and-sum of n
slots by n times its input's (`lola_bound`); LoLa's layout adds values of disjoint
supports (the 5 stacked maps, the 8 copies, the 13 interleaved rows) and sums 1,024- and
8,192-slot blocks that are mostly zero, so the scores' bound, 1.8e9, is about 2^33 times
their real bound (`SCORE_SCALE`). Ending on the last limb (7 limbs, ``levels`` = 6) fits
a bound of 8, so any weights would have to confine the scores to about 2^-30, far below
CKKS's noise (about 1e-4 here); the spare limb lets every layer keep the range [-1, 1]
that a trained network uses. (The program with 7 limbs has the same operations on one
limb fewer; ``SCORE_SCALE = 2**-30`` with ``params`` of ``levels=6`` builds it.) The
random weights themselves, with random signs, shrink the values layer by layer (scores
of about 1e-6 for an image in [0, 1] at the small size), as they do in the hybrid
layout: they exercise the program, they do not classify. Slots of ``window_i`` beyond
the 169 corners must be zero, as LoLa's are; `fhec check` fills them with random
values, which changes the values the program and the reference compute alike.

Encrypted weights in LoLa's layout (``encrypted_weights=True, layout="lola"``): F1's row
with encrypted weights is LoLa's MNIST network reimplemented in HElib ("LoLa's release did
not include MNIST with encrypted weights"), so this is the program above with every weight
a ciphertext input that the model owner encrypts in the form the layer multiplies by
(`lola_weight_inputs`): ``conv_w_{m}_{i}`` holds w[m, i] in every slot (an encrypted
scalar, what ``LLPoolLayer`` multiplies window i by for map m; 125 ciphertexts, since
LoLa's windows hold one map's corners and a packed vector of the 5 maps' weights would
need each window copied to the 5 blocks first), ``dense1_row_r`` the packed row r (13) and
``dense2_row_k`` class k's interleaved row (10): 148 weight ciphertexts. The 13 masks stay
plaintexts: they are the layout, not weights. Every weight product is a ciphertext
product, relinearized: lazy relinearization (`fhec.passes.he_lazy_relin`) adds each map's
25 products in their 3-part form and switches once (5), each packed row's and each class's
product is rotated next, so each is switched on its own (13 + 10), and the two squares: 30
relinearizations and 150 ciphertext products beside LoLa's 283 rotations, 313 key
switches (`lola_counts(encrypted_weights=True)`). Each weight input declares its layer's
largest |weight| as its bound (one public number per layer: a bound per ciphertext would
publish every conv weight's magnitude). The weights are `lola_weights`, as with plaintext
weights, so the two programs compute the same scores.

Limbs with encrypted weights: 9 (``levels`` = 8, `LOLA_ENCRYPTED_LEVELS`), three more than
F1's L = 6 and one more than with plaintext weights: the depth is the same 6, but the
compiler now knows only the declared bounds, so each conv map is bounded by 25 times the
largest conv weight (2.1) instead of its L1 norm (1), which the two squares raise to the
fourth power, and the dense layers by their layer's largest weight instead of each row's;
the scores' bound is 3.5e10 (1.8e9 with plaintext weights), above the 2.1e9 that two
limbs hold, so they end on three. (Tighter declared bounds, per conv map and per dense
row, still give 2.1e10; scaling the class weights by 2^-7 instead of `SCORE_SCALE`, the
plaintext rule applied to 8 limbs, fits 8 limbs with scores 32 times smaller; here the
weights stay those of the plaintext program, so both compute the same scores.) A weight ciphertext needs only the limbs of the level
where it is used (the conv scalars all 9, the packed rows 7, the class rows 4); the
compiler drops the others before loading it.

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


@dataclass(frozen=True)
class LolaLayout:
    """Where LoLa's MNIST program puts the dense layers' values (module doc): each
    conv-output copy takes a block of `shift` slots (the conv outputs rounded up to a
    power of two: LoLa's ``Duplicate``), `packing` copies fill the ring, and the first
    dense layer's `rows` stacked rows each hold `packing` hidden units, unit
    ``packing·r + j`` ending in slot ``shift·j + shift - 1`` of row ciphertext r."""

    shift: int
    packing: int
    rows: int
    slots: int

    @classmethod
    def of(cls, shape: Shape, slots: int) -> "LolaLayout":
        shift = 1 << max(0, math.ceil(math.log2(shape.conv_outputs)))
        packing = slots // shift
        rows = -(-shape.hidden // max(packing, 1))
        if packing < 2 or rows >= shift or shape.positions * shape.maps > slots:
            raise fhec.ParameterError(
                f"LoLa's layout of {shape.conv_outputs} conv outputs x {shape.hidden} hidden units does not fit "
                f"{slots} slots (it needs two {shift}-slot copies and fewer stacked rows than {shift}); "
                f"use a larger N or the hybrid layout")
        return cls(shift, packing, rows, slots)

    def selected(self) -> np.ndarray:
        """LoLa's ``SelectedIndices``: the slot of each packed block's sum, 1023 + 1024·j at MNIST's size."""
        return self.shift - 1 + self.shift * np.arange(self.packing)


def lola_weights(shape: Shape, slots: int, seed: int = 2019) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded conv, dense1, dense2 weights for LoLa's layout: every row of every layer
    scaled to an L1 norm of 1, so that each layer's outputs stay within [-1, 1] for
    inputs within [-1, 1] (each conv map, each hidden unit, each score), except the
    scores' rows, scaled by `SCORE_SCALE` so that the compiler's bound of the scores
    fits the limbs they end on (module doc: the compiler's bound is far above the real
    one in this layout)."""
    rng = np.random.default_rng(seed)
    conv = rng.uniform(-1, 1, (shape.maps, shape.kernel**2))
    conv /= np.abs(conv).sum(axis=1, keepdims=True)
    dense1 = rng.uniform(-1, 1, (shape.hidden, shape.conv_outputs))
    dense1 /= np.abs(dense1).sum(axis=1, keepdims=True)
    dense2 = rng.uniform(-1, 1, (shape.classes, shape.hidden))
    dense2 *= SCORE_SCALE / np.abs(dense2).sum(axis=1, keepdims=True)
    return conv, dense1, dense2


def lola_bound(shape: Shape, slots: int) -> float:
    """The compiler's bound of the scores in LoLa's layout (inputs bounded by 1): it
    bounds a sum by the sum of its terms' bounds, a rotate-and-sum of n slots by n
    times its input's and a product by the largest |weight|, so every sum LoLa's layout
    performs counts in full, the vectorize's `maps` terms and the interleave's `rows`
    ciphertexts although their supports are disjoint, the duplicate's copies, and each
    row's `shift` (first layer) or `slots` (second) summed slots, most of them zero."""
    lay = LolaLayout.of(shape, slots)
    conv, dense1, dense2 = lola_weights(shape, slots)
    stacked = float(np.abs(conv).sum(axis=1).sum())  # each map bounded by its L1 norm; the stack adds them
    copies = lay.packing * stacked**2
    hidden = sum(lay.shift * float(np.abs(w).max()) * copies for w in packed_rows(dense1, lay))
    return max(slots * float(np.abs(w).max()) * hidden**2 for w in interleaved_rows(dense2, lay))


def packed_rows(dense1: np.ndarray, lay: LolaLayout) -> list[np.ndarray]:
    """LoLa's ``LLPackedDenseLayer`` weights: stacked row r holds hidden unit
    ``packing·r + j``'s weights in slots ``shift·j ..`` (the j-th copy of the input)."""
    hidden, cols = dense1.shape
    out = []
    for r in range(lay.rows):
        v = np.zeros(lay.slots)
        for j in range(lay.packing):
            if lay.packing * r + j < hidden:
                v[lay.shift * j:lay.shift * j + cols] = dense1[lay.packing * r + j]
        out.append(v)
    return out


def interleaved_rows(dense2: np.ndarray, lay: LolaLayout) -> list[np.ndarray]:
    """LoLa's ``LLInterleavedDenseLayer`` weights (its ``TargetIndices``): class k's
    weight of hidden unit ``packing·r + j`` in slot ``shift·j + shift - 1 - r``, where
    the interleave leaves that unit."""
    classes, hidden = dense2.shape
    out = []
    for k in range(classes):
        v = np.zeros(lay.slots)
        for u in range(hidden):
            r, j = divmod(u, lay.packing)
            v[lay.shift * j + lay.shift - 1 - r] = dense2[k, u]
        out.append(v)
    return out


def duplicate(x, lay: LolaLayout):
    """LoLa's ``Duplicate``: `packing` copies of the first `shift` slots, copy i at slot
    shift·i, one rotation per copy. LoLa's BFV ring is two rows of slots/2: it reaches
    the upper half by one row swap and then rotates that as it rotates the lower half;
    here the row swap is a rotation by slots/2, so the copies take the same `packing` -
    1 key switches and the same distinct steps (shift·i for i < packing/2, and slots/2)."""
    half = lay.slots // 2
    upper = None
    total = x
    for i in range(1, lay.packing):
        target = lay.shift * i
        if 2 * target >= lay.slots:
            if upper is None:
                upper = x.rotate(-half)
            target -= half
            copy = upper.rotate(-target) if target else upper
        else:
            copy = x.rotate(-target)
        total = total + copy
    return total


def lola_dense_layers(squared, rows1: list, rows2: list, lay: LolaLayout) -> list:
    """LoLa's dense layers on the duplicated vector (module doc, steps 5-8): the packed
    rows' products and right-handed rotate-and-sums, the interleave (a mask per row
    ciphertext, row r rotated by r), the square, and per class a product and a
    rotate-and-sum of every slot. `rows1` and `rows2` are the `packed_rows` and the
    `interleaved_rows`, as plaintext vectors or as the model owner's ciphertexts (the
    masks are plaintexts either way: they are the layout, not weights). Returns the
    class ciphertexts."""
    mask = np.zeros(lay.slots)
    mask[lay.selected()] = 1.0
    hidden = None
    for r, w in enumerate(rows1):
        # DotProduct(v, shift): slot i gets the sum of slots i - shift + 1 .. i (LoLa rotates
        # right), so block j's sum lands in its last slot, shift·j + shift - 1.
        row = (squared * w).replicate(lay.shift)
        clean = row * mask
        moved = clean.rotate(r) if r else clean
        hidden = moved if hidden is None else hidden + moved
    h2 = hidden * hidden
    # SumAllSlots: LoLa rotates right here too, so these steps are the packed rows' and
    # the duplicate's (-1 .. -4096), keys the program already holds.
    return [(h2 * w).replicate(lay.slots) for w in rows2]


def lola_counts(shape: Shape, slots: int, encrypted_weights: bool = False) -> dict[str, int]:
    """LoLa's operation counts for its layout at `shape` (module doc): rotations (key
    switches) per layer, plaintext-vector products, masks and scalar products. With
    `encrypted_weights` the weight products are ciphertext products instead: the counts
    add ``weight_ciphertexts`` (the model owner's inputs), ``ciphertext_products`` (the
    weight products and the two squares) and the relinearizations they need: one per
    conv map (lazy relinearization adds a map's products in their 3-part form and
    switches once, `fhec.passes.he_lazy_relin`), one per packed row and per class (each
    product is rotated next, so it is switched before) and the two squares'."""
    lay = LolaLayout.of(shape, slots)
    counts = {
        "vectorize": shape.maps - 1,
        "duplicate": lay.packing - 1,
        "packed_dense": lay.rows * int(math.log2(lay.shift)),
        "interleave": lay.rows - 1,
        "interleaved_dense": shape.classes * int(math.log2(slots)),
    }
    counts["rotations"] = sum(counts.values())
    counts.update(scalar_products=shape.maps * shape.kernel**2, plaintext_products=lay.rows + shape.classes,
                  masks=lay.rows, relinearizations=2)
    if encrypted_weights:
        weights = counts["scalar_products"] + counts["plaintext_products"]
        counts.update(weight_ciphertexts=weights, ciphertext_products=weights + 2, scalar_products=0,
                      plaintext_products=0, relinearizations=shape.maps + lay.rows + shape.classes + 2)
    return counts


def lola_mnist(shape: Shape = MNIST, N: int = 2**14, encrypted_weights: bool = False,
               security: int | None = 128, hoisting: str = "single", params=None,
               layout: str = "hybrid") -> fhec.Program:
    """The LoLa-MNIST network (module doc) as a Program: 25 conv-representation image
    inputs (``window_i``) and, with `encrypted_weights`, ciphertext weight inputs
    (``conv_w_i``, then each dense layer's diagonals ``dense1_diagK``, pre-rotated for
    their giant step). Output ``scores``: class k in slot k. `hoisting`: of the dense
    layers' BSGS (plaintext weights); `params` replaces F1's parameters (N, security and
    the level count then come from it). `layout`: "hybrid" (above) or "lola", LoLa's own
    program (module doc; outputs ``score_k``, class k in every slot, and `LOLA_LEVELS`
    levels unless `params` says otherwise; with `encrypted_weights`, the weight inputs of
    `lola_weight_inputs` and `LOLA_ENCRYPTED_LEVELS` levels)."""
    if layout not in LAYOUTS:
        raise fhec.ProgramError(f"layout={layout!r}: choose one of {', '.join(LAYOUTS)}")
    if layout == "lola":
        return _lola_program(shape, N, security, params, encrypted=encrypted_weights)
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


LAYOUTS = ("hybrid", "lola")
"""`lola_mnist`'s layouts of the dense layers (module doc)."""

SCORE_SCALE = 0.25
"""L1 norm of each class's weights in LoLa's layout, the largest power of two at which the
compiler's bound of the MNIST scores (`lola_bound`: 1.8e9; 3.6e9 at 1/2) fits the 2.1e9
that the two limbs they end on hold."""

LOLA_ENCRYPTED_LEVELS = 8
"""LoLa's layout with encrypted weights (module doc): depth 6 as with plaintext weights and
two spare limbs for the scores' bound from the declared weight bounds (3.5e10 at MNIST
size, more than two limbs hold), 9 limbs in all."""

LOLA_LEVELS = 7
"""LoLa's layout in CKKS (module doc): depth 6 (conv, square, packed dense, mask, square,
interleaved dense, one rescale each) and one spare limb for the compiler's bound of the
scores, 8 limbs in all."""


def _lola_program(shape: Shape, N: int, security: int | None, params, encrypted: bool = False) -> fhec.Program:
    """LoLa's own MNIST program (module doc, "LoLa's layout"): inputs ``window_i`` (LoLa's
    dense convolution representation), outputs ``score_k`` (class k in every slot). With
    `encrypted`, every weight is a ciphertext input (`lola_weight_inputs`) and each of
    LoLa's weight products a ciphertext product."""
    if params is None:
        levels = LOLA_ENCRYPTED_LEVELS if encrypted else LOLA_LEVELS
        params = fhec.CKKSParams(N=N, levels=levels, scale_bits=28, word_bits=32, security=security)
    slots = params.slots
    lay = LolaLayout.of(shape, slots)
    conv, dense1, dense2 = lola_weights(shape, slots)
    kind = "lola_encrypted" if encrypted else "lola"
    p = fhec.Program(f"lola_mnist_{kind}_{shape.side}x{shape.side}_N{params.N}", params)
    windows = [p.input(f"window_{i}") for i in range(shape.kernel**2)]
    rows1, rows2 = packed_rows(dense1, lay), interleaved_rows(dense2, lay)
    if encrypted:
        scalars, rows1, rows2 = _lola_weight_ciphertexts(p, conv, rows1, rows2)
    else:
        scalars = [[float(w) for w in row] for row in conv]
    # LLPoolLayer: map m = sum_i w[m, i] · window_i (25 scalar products per map)
    maps = [sum((x * w for x, w in zip(windows[1:], scalars[m][1:])), windows[0] * scalars[m][0])
            for m in range(shape.maps)]
    # LLVectorizeLayer (Stack): map m moves to slots positions·m .. (one rotation per map after the first)
    stacked = sum((mp.rotate(-shape.positions * m) for m, mp in enumerate(maps) if m), maps[0])
    squared = duplicate(stacked * stacked, lay)
    for k, s in enumerate(lola_dense_layers(squared, rows1, rows2, lay)):
        p.output(f"score_{k}", s)
    return p


def _lola_weight_ciphertexts(p: fhec.Program, conv: np.ndarray, rows1: list, rows2: list):
    """The model owner's ciphertexts for LoLa's layout (`lola_weight_inputs`): the conv
    scalars, the packed rows and the interleaved rows as inputs, each declared with its
    layer's largest |weight| as its bound (the range the owner states per layer, not per
    ciphertext, so that the bounds reveal no more than one number per layer)."""
    conv_bound = float(np.abs(conv).max())
    scalars = [[p.input(f"conv_w_{m}_{i}", bound=conv_bound) for i in range(conv.shape[1])]
               for m in range(conv.shape[0])]
    b1 = float(max(np.abs(w).max() for w in rows1))
    b2 = float(max(np.abs(w).max() for w in rows2))
    cipher1 = [p.input(f"dense1_row_{r}", bound=b1) for r in range(len(rows1))]
    cipher2 = [p.input(f"dense2_row_{k}", bound=b2) for k in range(len(rows2))]
    return scalars, cipher1, cipher2


def lola_weight_inputs(shape: Shape, slots: int) -> dict[str, np.ndarray]:
    """The values of the weight ciphertexts of ``lola_mnist(encrypted_weights=True,
    layout="lola")``, as the model owner encrypts them: ``conv_w_{m}_{i}`` holds w[m, i]
    in every slot (an encrypted scalar, what LoLa's ``LLPoolLayer`` multiplies by:
    maps·kernel² ciphertexts, 125 at MNIST size), ``dense1_row_r`` the packed row r
    (`packed_rows`, 13) and ``dense2_row_k`` class k's interleaved row (`interleaved_rows`, 10)."""
    lay = LolaLayout.of(shape, slots)
    conv, dense1, dense2 = lola_weights(shape, slots)
    values = {f"conv_w_{m}_{i}": np.full(slots, conv[m, i])
              for m in range(shape.maps) for i in range(shape.kernel**2)}
    values.update({f"dense1_row_{r}": w for r, w in enumerate(packed_rows(dense1, lay))})
    values.update({f"dense2_row_{k}": w for k, w in enumerate(interleaved_rows(dense2, lay))})
    return values


def suite_rows() -> list[dict]:
    """F1 Table 3's LoLa-MNIST rows (`fhec.suites`)."""
    note = ("LoLa's own program (LoLaCryptonets.cs, LoLa mode) ported to CKKS, layout='lola': 283 rotations, "
            "2 relinearizations; starts with 8 limbs, not F1's L = 4 (CKKS rescales after every weight and mask "
            "product: depth 6, and one spare limb for the compiler's bound of the scores)")
    return [
        {"suite": "f1", "name": "LoLa-MNIST unencrypted weights", "variant": None, "target": "f1",
         "paper_ms": 0.17, "paper_source": "F1 Table 3", "build": lambda: lola_mnist(MNIST, layout="lola"),
         "needs": None, "note": note},
        {"suite": "f1", "name": "LoLa-MNIST encrypted weights", "variant": None, "target": "f1",
         "paper_ms": 0.36, "paper_source": "F1 Table 3",
         "build": lambda: lola_mnist(MNIST, encrypted_weights=True, layout="lola"), "needs": None,
         "note": "the same program, layout='lola', every weight a ciphertext input (125 conv scalars, 13 packed "
                 "rows, 10 class rows): 150 ciphertext products, 313 key switches; starts with 9 limbs, not F1's "
                 "L = 6 (depth 6 as above, and two spare limbs for the scores' bound under the declared "
                 "per-layer weight bounds)"},
    ]


p = lola_mnist(SMALL, N=2**10, security=None)
