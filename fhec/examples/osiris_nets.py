"""The small networks of Osiris Table III (MLP, LoLa, LeNet) at Osiris's parameter sets (CKKS).

Osiris (§VI, Table II) runs them at its residual parameter sets I (MLP, LoLa) and II
(LeNet), each with non-hoisted, single-hoisted and double-hoisted BSGS (Table III's NH,
SH, DH: `linear_transform(..., hoisting=...)`):

- MLP: SecureML's three dense layers for MNIST, 784 -> 128 -> 128 -> 10, with the square
  as activation (SecureML's piecewise ReLU is an MPC construction; HE ports use the
  square). Depth 5: set I's L_eff = 5.
- LoLa: LoLa's MNIST network with unencrypted weights (`lola_mnist.py`). Depth 5.
- LeNet: two strided convolutions and two dense layers (after Orion, CHET and EVA): 5 x 5
  convolutions of stride 2 with padding 2, 1 -> 6 maps (6 x 14 x 14) and 6 -> 16 maps
  (16 x 7 x 7), then 784 -> 120 -> 10, a square after each layer but the last. Depth 7:
  set II's L_eff = 7.

Every layer is a plaintext matrix applied by the hybrid diagonal method
(`lola_mnist.dense_layer`); the image (or LoLa's convolution representation) is the
encrypted input. Set I: N = 2^14, 5 levels of 32-bit scale, a 40-bit q0, 2 special
primes of 40 bits (α = 2, dnum = 3); set II: 7 levels, 4 special primes (α = 4,
dnum = 2). Both fit the HE standard's 438 bits at N = 2^14 with a dense secret, so
Table II's sparse secret (h = 192) is not needed for their security.

The module's program is the MLP, small (64 -> 16 -> 16 -> 4) at N = 2^10 (INSECURE,
security=None) so that `fhec check` is quick.

Run:  fhec examples copy ex && fhec check ex/osiris_nets.py
"""

from __future__ import annotations

import numpy as np

import fhec
from lola_mnist import MNIST, dense_layer, lola_mnist, unit_bound

SETS = {
    "I": dict(N=2**14, levels=5, scale_bits=32, word_bits=40, special_primes=2),
    "II": dict(N=2**14, levels=7, scale_bits=32, word_bits=40, special_primes=4),
}
"""Osiris Table II's residual sets I and II as fhec parameters."""


def bounded(rng, rows: int, cols: int) -> np.ndarray:
    """Random weights scaled to a compiler bound of 1 (`lola_mnist.unit_bound`): every
    value provably stays within [-1, 1] for inputs in [-1, 1]."""
    return unit_bound(rng.uniform(-1, 1, (rows, cols)))


def mlp(sizes=(784, 128, 128, 10), params=None, hoisting: str = "single") -> fhec.Program:
    """SecureML's MLP (module doc): input ``image`` (pixels in slots 0..), output ``scores``."""
    params = params or fhec.CKKSParams(**SETS["I"])
    rng = np.random.default_rng(2017)
    p = fhec.Program(f"mlp_{'_'.join(map(str, sizes))}_{hoisting}", params)
    x = p.input("image")
    for layer, (cols, rows) in enumerate(zip(sizes, sizes[1:])):
        if layer:
            x = x * x
        x = dense_layer(x, bounded(rng, rows, cols), hoisting)
    p.output("scores", x)
    return p


def conv_matrix(kernels: np.ndarray, side: int, stride: int, pad: int) -> np.ndarray:
    """A strided, zero-padded 2-D convolution (maps_out, maps_in, k, k) on maps_in x side x
    side inputs as a dense matrix (rows: output map, row, column; columns likewise)."""
    maps_out, maps_in, k, _ = kernels.shape
    out = (side + 2 * pad - k) // stride + 1
    w = np.zeros((maps_out * out * out, maps_in * side * side))
    for o in range(maps_out):
        for y in range(out):
            for x in range(out):
                row = (o * out + y) * out + x
                for c in range(maps_in):
                    for i in range(k):
                        for j in range(k):
                            r, s = y * stride + i - pad, x * stride + j - pad
                            if 0 <= r < side and 0 <= s < side:
                                w[row, (c * side + r) * side + s] = kernels[o, c, i, j]
    return w


def lenet(params=None, hoisting: str = "single") -> fhec.Program:
    """LeNet (module doc): input ``image`` (28 x 28 pixels in slots 0..783), output ``scores``."""
    params = params or fhec.CKKSParams(**SETS["II"])
    rng = np.random.default_rng(1998)
    conv1 = conv_matrix(rng.uniform(-1, 1, (6, 1, 5, 5)), 28, 2, 2)
    conv2 = conv_matrix(rng.uniform(-1, 1, (16, 6, 5, 5)), 14, 2, 2)
    layers = [conv1, conv2, rng.uniform(-1, 1, (120, 784)), rng.uniform(-1, 1, (10, 120))]
    p = fhec.Program(f"lenet_{hoisting}", params)
    x = p.input("image")
    for i, w in enumerate(layers):
        if i:
            x = x * x
        x = dense_layer(x, unit_bound(w), hoisting)
    p.output("scores", x)
    return p


HOISTING = {"NH": "none", "SH": "single", "DH": "double"}
"""Table III's BSGS variants as `linear_transform` hoisting modes."""

PAPER_US = {"MLP": (124, 125, 130), "LoLa": (95.5, 96.7, 97.9), "LeNet": (676, 663, 780)}
"""Osiris Table III(a), 1 TB/s, microseconds: NH, SH, DH."""


def suite_rows() -> list[dict]:
    """Osiris Table III's MLP, LoLa and LeNet rows, NH/SH/DH each (`fhec.suites`)."""
    builders = {
        "MLP": (lambda mode: mlp(hoisting=mode), "set I; square activations"),
        "LoLa": (lambda mode: lola_mnist(MNIST, hoisting=mode, params=fhec.CKKSParams(**SETS["I"])),
                 "set I; lola_mnist.py's layouts (hybrid dense layers)"),
        "LeNet": (lambda mode: lenet(hoisting=mode), "set II; convolutions as hybrid-method matrices"),
    }
    rows = []
    for name, (build, note) in builders.items():
        for (variant, mode), us in zip(HOISTING.items(), PAPER_US[name]):
            rows.append({"suite": "osiris", "name": name, "variant": variant, "target": "osiris",
                         "paper_ms": us / 1000, "paper_source": "Osiris Table III(a)",
                         "build": (lambda b=build, m=mode: b(m)), "needs": None, "note": note})
    return rows


p = mlp(sizes=(64, 16, 16, 4), params=fhec.CKKSParams(N=2**10, levels=5, scale_bits=30, word_bits=32,
                                                       security=None))
