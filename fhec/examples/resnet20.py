"""ResNet-20 on an encrypted CIFAR-10 image (CKKS), as Osiris evaluates it (§VI).

Osiris "re-implement[s] prior work of Lee et al. [42], replacing convolutions with their
analogous matrix-vector products, leaving all else unchanged, including the use of
high-degree composite polynomial approximations to ReLU", and runs it at its Table II
set IV (N = 2^16, L_eff = 9), bootstrapping sparsely ("sparsely-packed bootstrapping ...
is performed in ... ResNet-20, which is consistent with prior work"). Lee et al. (ICML
2022, multiplexed parallel convolutions; their code is public): a 3 x 3 convolution from
3 to 16 channels, three stages of three basic blocks (two 3 x 3 convolutions each, a
residual shortcut; stages 2 and 3 start with stride 2, double the channels and take the
shortcut by subsampling and zero channels, ResNet's option A), global average pooling and
a 64 -> 10 dense layer; ReLU is x * (1 + sign(x)) / 2 with sign approximated by a
composite of odd minimax polynomials of degrees 15, 15 and 27 (depth 14 with the
product). Their chain leaves 16 levels after a bootstrap (the ReLU, the convolution, the
batch normalization), so each ReLU but the first follows one bootstrap (18 in all); the
image is encrypted with the levels of the first layer, whose ReLU needs none.

How this program lays that out:

* **Packing.** Lee et al.'s multiplexed packing, without their parallel copies: a stage
  with gap g (1, 2, 4) stores its (32/g) x (32/g) images interleaved in 32 x 32 planes
  of 1,024 slots, channel c = g²·plane + g·a + b at slot
  1024·plane + 32·(g·i + a) + (g·j + b): 16, 8 and 4 planes, i.e. 2^14, 2^13 and 2^12
  slots. Every convolution, strided or not, is then a slot matrix whose nonzero
  diagonals do not depend on the pixel: one diagonal per (plane difference, row offset,
  column offset), masked where the 3 x 3 window leaves the image (zero padding).
  `conv_diagonals` builds them from seeded random weights of the right shapes (the
  diagonals are what the cost depends on); every layer is one `linear_transform` (BSGS)
  with the hoisting the variant asks for.
* **Sparse slots.** The packing repeats with period 2^14 (`SPARSE_SLOTS`: stage 1's 16
  planes, the largest layer) over the 2^15 slots, and every bootstrap refreshes 2^14
  slots (`fhec.BootstrapConfig(slots=2**14)`, docs/bootstrapping.md "Sparse slots": a
  value must repeat with that period). The layers keep the period: their diagonals are
  built on one period, with rotations read mod 2^14 (signed, so a layer's steps stay one
  range around 0 for the BSGS split), and repeated; stages 2 and 3 leave the rest of the
  period zero. Within a period a rotation wraps around, so a plane difference of +k and
  one of k − 16 share a diagonal: stage 1's 3 x 3 layers have 144 diagonals (279 on
  2^15 slots). The 22 layers hold 13,737 diagonals (stage 3's 3 x 3 layers 1,575 each).
* **Downsampling** (option A, as Lee et al.): the shortcut is the stride-2 `conv_diagonals`
  of 1 x 1 weights that copy channel c to channel c (`downsampling_weights`): at most 16
  diagonals, a data movement rather than a layer.
* **ReLU.** relu(x) = (x / 2) · (1 + s(x)), s = p3 ∘ p2 ∘ p1 of degrees 15, 15, 27 in the
  Chebyshev basis (depth 4 + 4 + 5, then 1 for the product). The coefficients are
  Chebyshev interpolants of scaled tanh steps (`fhec.approx`), odd as Lee et al.'s, not
  their minimax coefficients: the same degrees, depth and evaluation cost, a coarser sign.
* **Levels and bootstraps.** Set IV leaves 9 levels after a bootstrap and a ReLU needs
  14, so every ReLU is split once (`_refresh`): a bootstrap before it, p1 and p2 (8
  levels), a bootstrap, p3 and the product (6), the next convolution (1); no other split
  fits (p1 alone leaves 11 levels for the rest). That is 2 bootstraps for each ReLU but
  the first, 36 in all, where Lee et al.'s 16 levels take 18 (Osiris does not state its
  count; 9 levels cannot take fewer than 2 per ReLU). The image is encrypted at level 17
  (`input_level`: the first convolution, its ReLU, the next convolution and ModRaise's
  level), so the first ReLU needs no bootstrap, as in Lee et al. Every other convolution
  runs at level 2, with the levels it would not spend dropped first (`_lowest`): its key
  switches cost in proportion to its limbs, and Lee et al.'s convolutions also run at the
  bottom of their chain, between the ReLU and the bootstrap.
* **Scale.** Convolution weights are normalized so that every row of a layer's matrix
  has an absolute sum of 1 over the input's proven bound, and the residual sum is halved,
  so every ReLU input stays in [-1, 1] for pixels in [-1, 1] (batch normalization folded
  into the weights).
* **Average pooling** sums each channel's pixels by rotate-and-add (`sum_slots` over the
  rows, then the columns, of the interleaved image); **the dense layer** (64 -> 10) is one
  more `linear_transform`.

Deviations from the paper's formulation:

* the ReLU coefficients (above);
* 2 bootstraps per ReLU, not 1: set IV's 9 levels (above);
* one slot count for every bootstrap: fhec has one `BootstrapConfig` per parameter set,
  so stages 2 and 3 (2^13 and 2^12 values) are refreshed as 2^14 slots, where Lee et al.
  build a bootstrapper per stage (2^14, 2^13, 2^12 slots). Table II lists n = 2^15 for set
  IV, the ring's slots; §VI says the bootstrap is sparse;
* no parallel copies in the packing, so a convolution has more diagonals than Lee et al.'s
  and fewer rotations per diagonal;
* batch normalization folded into the convolution (Lee et al. multiply it apart, one
  level; set IV has no level to spare for it), and no scale-adjusting multiply after the
  first layer (fhec's scales are managed by the compiler);
* fhec's bootstrap (`fhec.BootstrapConfig`, docs/bootstrapping.md) takes the place of Lee
  et al.'s and Osiris's (Lattigo's): `set_iv`'s chain is Lattigo's default shape, with
  CoeffsToSlots in 3 factors when sparse (fhec's sparse scale-down takes two levels), so
  the chain has 25 levels either way;
* none in the key switching: two bases, as Table II's text (`set_iv`: α = 14 for the
  bootstrap's levels, Table II's α = 5 on the 9 residual levels, where every layer and
  ReLU runs).

**Splits, per target.** The Table III rows compile `tuned(variant, target)`: every
convolution's baby-step count n1 by the `fhec.analysis.bsgs.best_n1` cost model on the
target (`split_for`; on `osiris` only splits whose giant-step sums fit the scratchpad, as
Osiris reduces the giant steps rather than spill them), and the bootstraps' giant-step cap
(`BootstrapConfig.max_giant_steps`) the fastest of `GIANT_STEP_CAPS` on the program's
two-bootstrap segment (`tuned_giant_steps`), as Osiris tunes n1/n2 per hoisting mode and
bandwidth (§VII-C) and `benchmarks/bench_osiris.py` does for its bootstrap row. On `osiris`
the cost model changes the double-hoisted layers (a stage-3 layer's fewest-rotations split
keeps 39 sums over Q·P', 1.2 times the scratchpad: 1.40 ms alone, 0.96 ms split by the
model; with α = 14 on every level, 3.6 and 1.9 ms; the first layer, at level 17 with
α = 14, n1 = 3072, whose 6 sums over Q·P fit once its baby steps run limb-major: 0.75 ms
alone, as single hoisted, against 1.26 ms at the n1 = 6144 a node-major working set gave)
and, in NH and SH, only the first layer and two small ones. The tuning (caps on both DFT
stages or on CoeffsToSlots alone, `CAP_STAGES`) caps CoeffsToSlots alone on `osiris`, at
n2 <= 6 for NH and 4 for SH and DH; on `osiris-2tb` SH's likewise (CoeffsToSlots alone) at
6, DH's both stages at 4, NH none (measured 2026-11-24; docs/scheduling.md, "Scaling").
`full(variant)` without a target keeps the fewest rotations everywhere.

`build(...)` gives the program at any size: `full(variant)` at Osiris's set IV (7.4 to
10.3 million limb instructions on `osiris`; docs/scheduling.md, "Scaling"), and the module-level
`resnet_small` (`small()`: N = 2^12, the bootstrap-toy configuration with 10 levels after
a bootstrap and 256 sparse slots, 2 channels, the first layer and one block) is what
`fhec check fhec/examples/resnet20.py` runs (a minute or two). `suite_rows()` lists the
Osiris Table III rows (NH/SH/DH at 1 and 2 TB/s).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

import fhec
# the bootstrap splits `tuned_giant_steps` tries (n2 capped at 2..6 or not, on both DFT stages
# or CoeffsToSlots alone), as bench_osiris does for its bootstrap row: one definition
from fhec.examples.bootstrap import (  # noqa: F401 (re-exported)
    CAP_STAGES, GIANT_STEP_CAPS, OSIRIS_HAMMING_WEIGHT, OSIRIS_Q0_BITS, cap_label, fastest_cap, table_iii_rows)

PLANE_SIDE = 32
"""CIFAR-10's 32 x 32 image: one plane of the multiplexed packing."""

RELU_DEGREES = (15, 15, 27)
"""Lee et al.'s composite sign approximation (α = 13): degrees of p1, p2, p3."""

OSIRIS_MS = {  # Osiris Table III, ResNet-20 (set IV): (a) at 1 TB/s, (b) at 2 TB/s
    "osiris": {"NH": 101.0, "SH": 96.3, "DH": 92.4},
    "osiris-2tb": {"NH": 94.7, "SH": 89.9, "DH": 68.5},
}
SHARPNESS = (1.5, 1.5, 1.5)
"""The tanh steps the sign stages interpolate: gentle, so that the composite's slope (which
multiplies the error it is given, and with it the compiler's noise estimate) stays small
enough for the toy bootstrap's ~10 bits of precision to carry through 7 ReLUs."""

L_EFF = 9
"""Osiris Table II set IV's levels after a bootstrap (the residual levels)."""

SPARSE_SLOTS = 2**14
"""The bootstrap's slots: the packing's period. CIFAR-10's first stage is 16 channels of
32 x 32 (2^14 values: gap 1, 16 planes) and the image 3 planes; stages 2 and 3 fill 2^13 and
2^12 slots of the period and leave the rest zero. fhec has one bootstrap configuration per
parameter set, so every bootstrap refreshes 2^14 slots (Lee et al. refresh 2^14, 2^13 and
2^12 in the three stages: module doc)."""

SMALL_SLOTS = 256
"""The small variant's period: its image is 3 planes of 8 x 8 (192 slots), its one stage 2."""

HOISTING = {"NH": "none", "SH": "single", "DH": "double"}
"""Osiris's BSGS variants: non-, single- and double-hoisted baby steps."""


class Layout(NamedTuple):
    """Lee et al.'s multiplexed packing of a C x side x side tensor with gap g. (NamedTuples,
    not dataclasses: `fhec check` loads this file without registering it as a module.)"""

    channels: int
    gap: int
    plane_side: int = PLANE_SIDE

    @property
    def side(self) -> int:
        return self.plane_side // self.gap

    @property
    def planes(self) -> int:
        return -(-self.channels // (self.gap * self.gap))

    def slot(self, c, i, j):
        """The slot of channel c, row i, column j (numpy-broadcast)."""
        g, s = self.gap, self.plane_side
        plane, sub = np.divmod(c, g * g)
        a, b = np.divmod(sub, g)
        return plane * s * s + (g * i + a) * s + (g * j + b)

    def used(self) -> int:
        return self.planes * self.plane_side ** 2


def _period_step(offset, period: int, slots: int):
    """The rotation of a full-slot vector that moves slot j + offset to slot j, for a
    vector of period `period`: offset read in (-period/2, period/2] (so a layer's
    diagonals form one signed range around 0 for the BSGS split, as with full packing),
    then as a step mod `slots` (the same rotation on a periodic vector)."""
    offset = np.asarray(offset) % period
    return np.where(offset > period // 2, offset - period, offset) % slots


def conv_diagonals(weights: np.ndarray, src: Layout, dst: Layout, stride: int, slots: int,
                   period: int | None = None) -> dict[int, np.ndarray]:
    """The {rotation: slot vector} form of a zero-padded convolution (`linear_transform`'s
    dict form): weights (C_out, C_in, k, k), k odd, from `src` to `dst` (dst.side =
    src.side / stride). Each weight lands on the diagonal of its slot offset, which the
    multiplexed packing makes the same for every pixel; taps outside the image are left
    out (zero padding). `period` (a power of two dividing `slots`, at least both
    layouts' `used()`; default `slots`): the input repeats with that period, and so does
    the output: the diagonals are built on one period and repeated (a sparse bootstrap
    refreshes only period-n vectors, docs/bootstrapping.md "Sparse slots")."""
    period = slots if period is None else period
    c_out, c_in, k, _ = weights.shape
    half = k // 2
    i, j = np.meshgrid(np.arange(dst.side), np.arange(dst.side), indexing="ij")
    co, ci, di, dj = (a.reshape(-1, 1, 1) for a in np.meshgrid(
        np.arange(c_out), np.arange(c_in), np.arange(k) - half, np.arange(k) - half, indexing="ij"))
    w = weights.reshape(-1, 1, 1)
    si, sj = stride * i + di, stride * j + dj
    valid = (si >= 0) & (si < src.side) & (sj >= 0) & (sj < src.side) & (w != 0)
    out = np.broadcast_to(dst.slot(co, i, j), valid.shape)[valid]
    steps = _period_step(np.broadcast_to(src.slot(ci, si, sj), valid.shape)[valid] - out, period, slots)
    values = np.broadcast_to(w, valid.shape)[valid]
    keys, inverse = np.unique(steps, return_inverse=True)
    diag = np.zeros((len(keys), period))
    # each (diagonal, output slot) pair receives one weight: the step fixes the plane
    # difference and the row and column offsets, and with them (c_in, tap) for a given output
    diag[inverse, out] = values
    return {int(key): np.tile(diag[n], slots // period) for n, key in enumerate(keys)}


def downsampling_weights(c_in: int, c_out: int, gain: float) -> np.ndarray:
    """ResNet's option-A shortcut as the 1 x 1 weights of a stride-2 `conv_diagonals`:
    input channel c to output channel c (times `gain`), the other output channels zero
    (He et al.'s CIFAR ResNets, and Lee et al.'s downsampling: subsample, pad the channels
    with zeros)."""
    w = np.zeros((c_out, c_in, 1, 1))
    w[np.arange(c_in), np.arange(c_in), 0, 0] = gain
    return w


def normalized(weights: np.ndarray, gain: float = 1.0) -> np.ndarray:
    """`weights` scaled so that each output's absolute weight sum is `gain` (so |out| <= gain
    for inputs in [-1, 1])."""
    rows = np.abs(weights).reshape(weights.shape[0], -1).sum(axis=1)
    return weights * (gain / rows).reshape(-1, *([1] * (weights.ndim - 1)))


def _tanh_step(sharpness: float):
    return lambda x: np.tanh(sharpness * x) / np.tanh(sharpness)


def sign_stages(degrees=RELU_DEGREES) -> list:
    """The composite sign approximation p1, p2, p3 (Chebyshev series on [-1, 1]): each
    interpolates a tanh step, so the composite sharpens towards sign(x). Each series is
    divided by its coefficients' absolute sum, so that it maps [-1, 1] into [-1, 1]
    (sum |c_i|·|T_i| <= sum |c_i|), and the next stage's input stays in its domain. The steps are odd, and so are the series: their even coefficients are
    rounding (~1e-16) and are set to zero, so that only odd terms are evaluated, as in Lee
    et al.'s odd polynomials."""
    stages = []
    for sharpness, degree in zip(SHARPNESS, degrees):
        coef = fhec.approx(_tanh_step(sharpness), (-1.0, 1.0), degree).poly.coef.copy()
        coef[0::2] = 0.0
        stages.append(coef / np.abs(coef).sum())
    return stages


class Net(NamedTuple):
    """The network's shape and options (`build`)."""

    params: fhec.CKKSParams
    hoisting: str | None = None
    channels: tuple[int, ...] = (16, 32, 64)
    blocks: int = 3
    classes: int = 10
    relu_degrees: tuple[int, ...] = RELU_DEGREES
    seed: int = 2022
    side: int = PLANE_SIDE
    target: str | None = None
    """Where a transform's baby-step count comes from: None, the split with the fewest
    rotations (`linear_transform`'s default); a target name, `split_for` on that target."""


SPLIT_CANDIDATES = tuple(sorted({*range(2, PLANE_SIDE + 1), *range(PLANE_SIDE, 2**14 + 1, PLANE_SIDE)}))
"""The baby-step counts `split_for` scores besides the fewest-rotations one: every n1 up to
one image row (32) and every multiple of a row up to the period (2^14): a layer's steps are
row and plane offsets plus a column offset within a row, so these include its natural
splits; scoring every n1 up to a layer's span of 2^14 steps would take minutes per compile.
(Powers of two only gave the first DH layer n1 = 8192, 1.59 ms alone on `osiris`, against
6144 and 1.26 ms, before OF-Limb's digit sums.)"""


def split_for(x, diagonals: dict, hoisting: str | None, target: str) -> int:
    """The baby-step count of a transform of `diagonals` applied to `x`, by the cost model
    of `fhec.analysis.bsgs.best_n1` on `target` (key and diagonal loads against
    arithmetic, at `x`'s level and the hoisting mode; on a target with the giant-step-centric
    order only the splits whose partial sums fit the scratchpad, as Osiris "simply
    reduce[s] the number of giant steps" rather than spill them), among `SPLIT_CANDIDATES`
    and the fewest-rotations split. With double hoisting the sums are over Q·P': at level 2
    and the residual basis's alpha = 5 the fewest-rotations split of a stage-3 layer keeps
    39 of them, 1.2 times Osiris's scratchpad (2.5 times with alpha = 14)."""
    params = x.program.params
    steps = tuple(sorted(diagonals))
    mode = hoisting if hoisting in ("none", "single", "double") else "single"
    return _split(steps, params, x.level, mode, target)


@functools.lru_cache(maxsize=None)
def _split(steps: tuple, params: fhec.CKKSParams, level: int, mode: str, target: str) -> int:
    """`split_for`, cached: a stage's layers share their steps."""
    from fhec.analysis.bsgs import best_n1
    from fhec.ir.he_recipes import bsgs_split
    from fhec.ir.he_types import row_length

    fewest = bsgs_split(steps, row_length(params))
    return best_n1(steps, params, level=level, hoisting=mode, target=target,
                   candidates=sorted({fewest, *SPLIT_CANDIDATES}))


class _Builder:
    """Traces one ResNet-20 into a `fhec.Program` (see the module doc)."""

    def __init__(self, net: Net, name: str):
        self.net, self.slots = net, net.params.slots
        boot = net.params.bootstrap
        self.period = self.slots if boot is None else boot.slot_count(net.params.N)
        self.rng = np.random.default_rng(net.seed)
        self.program = fhec.Program(name, net.params)
        self.signs = [self._within_unit_bound(c) for c in sign_stages(net.relu_degrees)]
        self.depths = [math.ceil(math.log2(d + 1)) for d in net.relu_degrees]
        self.relu_levels = sum(self.depths) + 1  # the sign's stages, then the product

    def _within_unit_bound(self, coeffs: np.ndarray) -> np.ndarray:
        """`coeffs` scaled so that the compiler's proven bound of the series on [-1, 1] is
        at most 1: otherwise the next stage's Chebyshev bound |T_i(u)| for u > 1 would grow
        with the degree and a bootstrap would refuse the value. A guard: the compiler
        bounds a series by its maximum over the operand's range
        (`fhec.ir.he_polynomial.value_bound`; the stages' bounds are then about 0.8 and
        nothing is scaled), where until 2026-11-24 it summed the Paterson–Stockmeyer
        pieces' bounds, above 1 for these stages."""
        probe = fhec.Program("bound", self.net.params)
        bound = probe.input("u").polynomial(coeffs, basis="chebyshev").bound
        return coeffs / max(bound, 1.0)

    def _refresh(self, x, need: int):
        """`x`, bootstrapped first unless it has `need` levels to spend and one more left
        after them (ModRaise takes its input at level 1 or more)."""
        return x.bootstrap() if x.level < need + 1 else x

    def _lowest(self, x, need: int):
        """`x` as `_refresh` gives it, with the levels it would not spend before the next
        bootstrap dropped: a layer's key switches cost in proportion to its limbs, so a
        convolution runs at the bottom of the chain, as Lee et al.'s do (after the ReLU,
        before the bootstrap)."""
        x = self._refresh(x, need)
        return x.level_down(need + 1) if x.level > need + 1 else x

    def _periodic(self, diagonals: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        """Diagonals built on one period, repeated over the slots."""
        return {k: np.tile(v, self.slots // self.period) for k, v in diagonals.items()}

    def conv(self, x, src: Layout, dst: Layout, stride: int, k: int = 3, gain: float = 1.0, weights=None,
             then: int = 0):
        """The layer at the lowest level that leaves `then` levels after it (the first layer's
        ReLU; 0 elsewhere: a bootstrap follows)."""
        # gain over the proven input bound: the output's bound stays at `gain` (the ReLU's
        # 1.07 bound would otherwise compound through the layers)
        if weights is None:
            weights = normalized(self.rng.standard_normal((dst.channels, src.channels, k, k)),
                                 gain / max(x.bound, 1.0))
        diagonals = conv_diagonals(weights, src, dst, stride, self.slots, self.period)
        return self._transform(self._lowest(x, 1 + then), diagonals)

    def _transform(self, x, diagonals: dict[int, np.ndarray]):
        """`x.linear_transform(diagonals)` with the net's hoisting, split as `Net.target` says."""
        n1 = None if self.net.target is None else split_for(x, diagonals, self.net.hoisting, self.net.target)
        return x.linear_transform(diagonals, hoisting=self.net.hoisting, n1=n1)

    def relu(self, x):
        """(x/2)(1 + s(x)), s the composite sign; a bootstrap before it unless `x` has the
        levels for all of it (the first layer's fresh input), and wherever a stage would
        run out of levels."""
        x = self._refresh(x, self.relu_levels)
        s = x
        for coeffs, depth in zip(self.signs, self.depths):
            s = self._refresh(s, depth).polynomial(coeffs, basis="chebyshev")
        half = x * 0.5
        return half * (s + 1.0)

    def block(self, x, src: Layout, dst: Layout, stride: int):
        y = self.relu(self.conv(x, src, dst, stride))
        y = self.conv(y, dst, dst, 1, gain=0.5)
        gain = 0.5 / max(x.bound, 1.0)
        if stride == 1:
            shortcut = x * gain
        else:
            shortcut = self.conv(x, src, dst, stride, weights=downsampling_weights(src.channels, dst.channels, gain))
        return self.relu(y + shortcut)

    def head(self, x, src: Layout):
        """Global average pooling by rotate-and-add over the rows and columns of each
        channel's interleaved image (the sum lands on the channel's first pixel), then the
        dense layer (1/positions folded in) as diagonals: class t's score in slot t (of
        every period)."""
        g, s = src.gap, src.plane_side
        pooled = self._lowest(x, 1).sum_slots(src.side, stride=g * s).sum_slots(src.side, stride=g)
        dense = normalized(self.rng.standard_normal((self.net.classes, src.channels))) / (src.side * src.side)
        t, c = np.meshgrid(np.arange(self.net.classes), np.arange(src.channels), indexing="ij")
        steps = _period_step(src.slot(c, 0, 0) - t, self.period, self.slots)
        diagonals: dict[int, np.ndarray] = {}
        for step, row, weight in zip(steps.ravel(), t.ravel(), dense.ravel()):
            diagonals.setdefault(int(step), np.zeros(self.period))[row] = weight
        return self._transform(pooled, self._periodic(diagonals))

    def input_level(self) -> int:
        """The image's level: enough for the first convolution, its ReLU and the next
        convolution with one level left for ModRaise (17 at Lee et al.'s ReLU), so the
        first ReLU needs no bootstrap, as in Lee et al. (who encrypt the image with the
        levels of the first layer); the top level if the chain is shorter."""
        return min(self.net.params.top_level, 1 + self.relu_levels + 1 + 1)

    def layouts(self) -> list[Layout]:
        net = self.net
        return [Layout(3, 1, net.side)] + [Layout(c, 1 << stage, net.side) for stage, c in enumerate(net.channels)]

    def build(self) -> fhec.Program:
        net, p = self.net, self.program
        image, *stages = self.layouts()
        need = max(layout.used() for layout in (image, *stages))
        if need > self.period:
            raise fhec.ParameterError(
                f"ResNet-20 packs {need} slots per period but the bootstrap refreshes {self.period}: use "
                f"fhec.BootstrapConfig(slots={1 << (need - 1).bit_length()}) or more (slots=None: all {self.slots}).")
        x = p.input("image", level=self.input_level())
        first = Layout(net.channels[0], 1, net.side)
        x = self.relu(self.conv(x, image, first, 1, then=self.relu_levels + 1))
        src = first
        for stage, dst in enumerate(stages):
            for b in range(net.blocks):
                stride = 2 if (b == 0 and stage > 0) else 1
                x = self.block(x, src, dst, stride)
                src = dst
        p.output("scores", self.head(x, src))
        return p


def build(params: fhec.CKKSParams, hoisting: str | None = None, *, channels=(16, 32, 64), blocks: int = 3,
          relu_degrees=RELU_DEGREES, side: int = PLANE_SIDE, name: str = "resnet20",
          seed: int = 2022, target: str | None = None) -> fhec.Program:
    """ResNet-20 (module doc) at `params`; `hoisting` is every convolution's BSGS mode
    ("none", "single", "double"; None: the compile option). With a sparse bootstrap
    (`fhec.BootstrapConfig(slots=n)`) the packing repeats with period n; n must hold the
    largest layer (`ParameterError` otherwise)."""
    net = Net(params, hoisting, tuple(channels), blocks, relu_degrees=tuple(relu_degrees), seed=seed, side=side,
              target=target)
    return _Builder(net, name).build()


RESIDUAL_SPECIAL_PRIMES = 5
"""Osiris Table II's α for set IV's residual levels (ℓ ≤ L_eff = 9): the key switches of the
network's layers use P's first 5 primes in digits of 5, its bootstraps the α = 14 Osiris
sets for bootstrapping (`set_iv`)."""


def set_iv(word_bits: int = 40, hoisting: str | None = None, slots: int | None = SPARSE_SLOTS,
           max_giant_steps: int | None = None, residual_special_primes: int | None = RESIDUAL_SPECIAL_PRIMES,
           max_giant_steps_stages: tuple[str, ...] = ("cts", "stc")) -> fhec.CKKSParams:
    """Osiris Table II set IV: N = 2^16, L_eff = 9 levels after a bootstrap, 40-bit special
    primes, q_0 of 48 bits split into two primes, 36-bit scale, h = 1024; the bootstrap is
    Lattigo's default (lattigo-n16) shape. fhec's words are 40 bits (every prime below
    2^40). Two key-switching bases, as Osiris: the bootstrap's levels (above L_eff) switch
    keys with the α = 14 special primes Osiris sets for bootstrapping ("we ... separately
    set α = 14"), the residual levels (ℓ ≤ L_eff, where the layers and ReLUs run) with
    Table II's α = 5 (`residual_special_primes`, the first 5 of the 14, with keys of their
    own; None: α = 14 everywhere). log QP is 1,540 bits (Osiris: 1,630 at most). With α = 5
    everywhere the 2.3x larger bootstrapping keys made the whole DH row 1.7x slower on
    `osiris` (224 against 130 ms). `word_bits` below 40 (F1's 32, for the f1-64k what-if)
    lowers the scale to word_bits − 4 bits, with the same limb counts.

    `hoisting`: the bootstrap's DFT transforms' BSGS mode (Osiris's NH / SH / DH apply to
    every matrix-vector product, bootstrapping's included; None: the compile option).
    `max_giant_steps` / `max_giant_steps_stages`: the DFT giant-step cap and the stages it
    applies to (`fhec.BootstrapConfig`). `slots`: the bootstrap's slots, `SPARSE_SLOTS` by default (None: all 2^15). A sparse
    scale-down takes one more level than a full one (docs/bootstrapping.md), so
    CoeffsToSlots takes 3 factors instead of 4 and the chain keeps its 25 levels (as
    `fhec.examples.helr.osiris_params` does).

    `min_precision_bits=None`: fhec's model of a set IV bootstrap (`fhec.ir.he_bootstrap`,
    not measured at N = 2^16) leaves about -1 bit of worst-slot precision, and the 19-ReLU
    output is estimated at -13 bits; this program is compiled for its cost, and its small
    variant is the one checked."""
    literal = fhec.CKKSParams.preset("lattigo-n16").bootstrap
    sparse = {} if slots is None else {"slots": slots, "cts_depth": 3}
    config = fhec.BootstrapConfig(**{**literal.model_dump(), "hamming_weight": OSIRIS_HAMMING_WEIGHT,
                                     "hoisting": hoisting, "max_giant_steps": max_giant_steps,
                                     "max_giant_steps_stages": max_giant_steps_stages, **sparse})
    residual = {} if residual_special_primes is None else {
        "residual_top": L_EFF, "residual_special_primes": residual_special_primes}
    scale_bits = min(36, word_bits - 4)
    q_bits = OSIRIS_Q0_BITS + (scale_bits,) * (config.depth(2**16) + L_EFF)
    return fhec.CKKSParams(N=2**16, q_bits=q_bits, scale_bits=scale_bits,
                           word_bits=word_bits, special_primes=14, base_limbs=2, security=None, bootstrap=config,
                           min_precision_bits=None, **residual)


def full(variant: str = "SH", word_bits: int = 40, blocks: int = 3, slots: int | None = SPARSE_SLOTS,
         max_giant_steps: int | None = None, target: str | None = None,
         max_giant_steps_stages: tuple[str, ...] = ("cts", "stc")) -> fhec.Program:
    """ResNet-20 at Osiris's set IV with the NH / SH / DH convolutions and bootstraps
    (`blocks` < 3: a shallower network of the same layers, for profiling; `slots=None`:
    fully packed bootstraps, for comparison). `max_giant_steps`: the bootstraps' DFT
    giant-step cap (`fhec.BootstrapConfig.max_giant_steps`; None: the fewest rotations) and
    the DFT stages it applies to (`max_giant_steps_stages`);
    `target`: the convolutions' baby-step counts by `split_for` on it (None: the fewest
    rotations). `tuned` picks both for a target."""
    mode = HOISTING[variant]
    params = set_iv(word_bits, mode, slots, max_giant_steps, max_giant_steps_stages=max_giant_steps_stages)
    return build(params, mode, blocks=blocks, name=f"resnet20-{variant}", target=target)


def bootstrap_pair(variant: str, word_bits: int = 40, max_giant_steps: int | None = None,
                   max_giant_steps_stages: tuple[str, ...] = ("cts", "stc")) -> fhec.Program:
    """The program's repeating bootstrap segment: a bootstrap, its output taken down to
    level 1 (where a ReLU's first stages leave it), and the next bootstrap. Unlike a lone
    bootstrap it sees what the program does: the second bootstrap loads its keys again,
    after the first's have filled the scratchpad."""
    mode = HOISTING[variant]
    params = set_iv(word_bits, mode, SPARSE_SLOTS, max_giant_steps, max_giant_steps_stages=max_giant_steps_stages)
    p = fhec.Program(f"resnet20-bootstraps-{variant}", params)
    p.output("y", p.input("x", level=1).bootstrap().level_down(1).bootstrap())
    return p


def tuned_giant_steps(variant: str, target: str = "osiris", word_bits: int = 40
                      ) -> tuple[int | None, tuple[str, ...]]:
    """(cap, stages): the giant-step cap of `GIANT_STEP_CAPS` and the stages of `CAP_STAGES`
    it applies to whose `bootstrap_pair` runs fastest on `target`, as Osiris tunes n1/n2 per hoisting mode and bandwidth (§VII-C). The pair, not
    a lone bootstrap: on `osiris` a lone bootstrap ranks n2 <= 6 first for NH and SH, which
    made the whole program slower (116 and 122 ms against 111 and 118 uncapped, measured
    before OF-Limb's digit sums and c0-only hoisted rotations), while the pair ranks the
    caps as the whole program does (docs/scheduling.md, "Scaling")."""
    return fastest_cap(lambda cap, stages: bootstrap_pair(variant, word_bits, cap, stages), target)


def tuned(variant: str, target: str = "osiris", word_bits: int = 40) -> fhec.Program:
    """`full(variant)` with the convolutions split for `target` (`split_for`) and the
    bootstraps' giant-step cap of `tuned_giant_steps`: the program the Table III rows
    compile."""
    cap, stages = tuned_giant_steps(variant, target, word_bits)
    return full(variant, word_bits, max_giant_steps=cap, target=target, max_giant_steps_stages=stages)


def small_params(slots: int | None = SMALL_SLOTS, **words) -> fhec.CKKSParams:
    """The bootstrap-toy configuration at N = 2^12 with 10 levels after a bootstrap (one
    per ReLU at degrees 3, 3, 7) and a 2^36 scale in Osiris's 40-bit words, so the CI
    variant compiles for `osiris-tiny`: the toy's 2^30 leaves a bootstrapped value about
    10 bits, too few to carry through seven ReLUs and their bootstraps (`fhec check`
    measures about 25 bits at 2^36). The bootstrap refreshes `SMALL_SLOTS` slots, the small
    packing's period, as the full program's does. `words`: other CKKSParams fields (the
    bit-identity test's 32-bit words)."""
    literal = fhec.CKKSParams.preset("bootstrap-toy").bootstrap
    config = fhec.BootstrapConfig(**{**literal.model_dump(), "slots": slots})
    fields = {"scale_bits": 36, "word_bits": 40, **words}
    return fhec.CKKSParams.preset("bootstrap-toy", levels=config.depth(2**12) + 10, bootstrap=config, **fields)


def small(hoisting: str | None = "single") -> fhec.Program:
    """The CI-sized variant: N = 2^12, 8 x 8 planes, 2 channels, the first convolution and
    one basic block (three ReLUs, two of them bootstrapped), ReLU stages of degrees 3, 3, 7.
    Its scores are estimated at 19.5 bits of worst-slot precision (26.1 measured); deeper
    toys lose about 0.2 estimated bit per ReLU."""
    return build(small_params(), hoisting, channels=(2,), blocks=1, relu_degrees=(3, 3, 7), side=8,
                 name="resnet20_small")


resnet_small = small()


def suite_rows() -> list[dict]:
    """The Osiris Table III ResNet-20 rows (suite-row convention): full size, about a minute of
    CPU each (and 30-80 s of split and cap tuning, in the row's compile seconds) and 4-5 GB;
    benchmarks/bench_resnet.py also runs each in a fresh process, with the checker."""
    return table_iii_rows(
        "ResNet-20", OSIRIS_MS, tuned,
        "Lee et al.'s ResNet-20 with convolutions as BSGS matrix-vector products; sparse bootstraps of 2^14 slots "
        "(the packing's period), 2 per ReLU but the first (set IV's 9 levels against the ReLU's 14; Lee et al. take "
        "1 with 16 levels), the variant's hoisting in convolutions and bootstraps, tanh-interpolant ReLU stages of "
        "Lee's degrees, two key-switching bases (alpha = 14 for the bootstrap, Table II's alpha = 5 on the residual "
        "levels); convolutions split by the best_n1 cost model on the target, the bootstraps' giant-step cap tuned "
        "on two consecutive bootstraps.")
