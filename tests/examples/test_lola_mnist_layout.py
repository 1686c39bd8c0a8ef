"""LoLa-MNIST in LoLa's own layout (`lola_mnist(layout="lola")`): it computes the network
(conv, square, dense, square, dense on a real image), matches the encrypted run at a small
size, and takes the key switches its module doc states (LoLa's counts)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import fhec
from fhec.bundled_examples import examples_dir
from fhec.evaluate import check_against_reference, random_inputs, reference

sys.path.insert(0, str(examples_dir()))
try:
    import lola_mnist as L
finally:
    sys.path.remove(str(examples_dir()))

SMALL_N = 2**10


def _small():
    return L.lola_mnist(L.SMALL, N=SMALL_N, security=None, layout="lola")


def _windows(shape, image: np.ndarray, slots: int) -> dict[str, np.ndarray]:
    """LoLa's LLConvReader: window_i holds, at slot y·out + x, the pixel that corner (y, x)
    reads at kernel offset i (zero in the upper padding and beyond the corners)."""
    padded = np.zeros((shape.side + shape.pad,) * 2)
    padded[:shape.side, :shape.side] = image
    out, k, st = shape.out_side, shape.kernel, shape.stride
    windows = {}
    for dy in range(k):
        for dx in range(k):
            v = np.zeros(slots)
            v[:out * out] = padded[dy:dy + st * out:st, dx:dx + st * out:st][:out, :out].reshape(-1)
            windows[f"window_{dy * k + dx}"] = v
    return windows


def _direct(shape, image: np.ndarray, slots: int) -> np.ndarray:
    """The network computed directly: strided 5 x 5 conv per map, square, dense, square, dense."""
    conv, dense1, dense2 = L.lola_weights(shape, slots)
    padded = np.zeros((shape.side + shape.pad,) * 2)
    padded[:shape.side, :shape.side] = image
    out, k, st = shape.out_side, shape.kernel, shape.stride
    maps = np.array([[[np.sum(conv[m].reshape(k, k) * padded[y * st:y * st + k, x * st:x * st + k])
                       for x in range(out)] for y in range(out)] for m in range(shape.maps)])
    hidden = dense1 @ (maps.reshape(-1) ** 2)
    return dense2 @ hidden**2


def test_lola_layout_computes_the_network_on_an_image():
    """The program's plaintext semantics (every slot of every ``score_k``) are the network's
    scores: the packed rows, the interleave's slots and the final weights line up."""
    p = _small()
    slots = p.params.slots
    image = np.random.default_rng(3).uniform(0, 1, (L.SMALL.side, L.SMALL.side))
    got = reference(p, _windows(L.SMALL, image, slots))
    want = _direct(L.SMALL, image, slots)
    assert sorted(got) == [f"score_{k}" for k in range(L.SMALL.classes)]
    for k in range(L.SMALL.classes):
        np.testing.assert_allclose(got[f"score_{k}"], want[k], rtol=1e-9, atol=1e-18)
    assert np.abs(want).min() > 1e-9  # not vacuous: the scores are not all zero


def test_lola_layout_matches_the_reference_encrypted_and_compiles_for_f1():
    p = _small()
    results = check_against_reference(p, random_inputs(p, 0), 0, None)
    assert all(r.ok for r in results), [r.describe("ckks") for r in results]
    report = fhec.compile(p, "f1").report
    counts = L.lola_counts(L.SMALL, p.params.slots)
    assert sum(report.keyswitch.values()) == counts["rotations"] + counts["relinearizations"]


def test_lola_counts_are_lolas_at_mnist_size():
    """LoLa's MNIST program (LoLaCryptonets.cs, BFV N = 8192): 4 + 7 + 13·10 + 12 + 10·13
    rotations, 13 packed rows and masks, 10 class rows, 125 scalar conv products."""
    lay = L.LolaLayout.of(L.MNIST, 8192)
    assert (lay.shift, lay.packing, lay.rows) == (1024, 8, 13)
    assert list(lay.selected()) == [1023 + 1024 * i for i in range(8)]
    c = L.lola_counts(L.MNIST, 8192)
    assert (c["vectorize"], c["duplicate"], c["packed_dense"], c["interleave"], c["interleaved_dense"]) \
        == (4, 7, 130, 12, 130)
    assert (c["rotations"], c["plaintext_products"], c["masks"], c["scalar_products"]) == (283, 23, 13, 125)


def test_lola_layout_bound_is_the_compilers():
    """`lola_bound` (the module doc's account of the compiler's pessimism) is the bound the
    compiler derives for the scores, and it fits the limbs LoLa's layout ends on."""
    p = _small()
    bounds = [p.ir.node(p.ir.outputs[f"score_{k}"]).type.bound for k in range(L.SMALL.classes)]
    assert max(bounds) == pytest.approx(L.lola_bound(L.SMALL, p.params.slots), rel=1e-9)
    assert p.params.levels == L.LOLA_LEVELS


@pytest.mark.slow
def test_lola_layout_at_mnist_size_takes_lolas_key_switches():
    p = L.lola_mnist(L.MNIST, layout="lola")
    report = fhec.compile(p, "f1").report
    assert sum(report.keyswitch.values()) == 283 + 2


def test_lola_layout_refuses_what_it_does_not_model():
    with pytest.raises(fhec.FhecError, match="layout"):
        L.lola_mnist(L.SMALL, N=SMALL_N, security=None, layout="diagonal")
    with pytest.raises(fhec.FhecError, match="layout"):
        L.lola_mnist(L.SMALL, N=SMALL_N, security=None, layout="diagonal", encrypted_weights=True)
    for encrypted in (False, True):
        with pytest.raises(fhec.ParameterError, match="does not fit"):
            L.lola_mnist(L.MNIST, N=2**11, security=None, layout="lola", encrypted_weights=encrypted)


# -- encrypted weights in LoLa's layout ------------------------------------------------------


def _small_encrypted():
    return L.lola_mnist(L.SMALL, N=SMALL_N, security=None, layout="lola", encrypted_weights=True)


def test_lola_encrypted_weights_compute_the_plaintext_programs_scores():
    """With the model owner's weight ciphertexts (`lola_weight_inputs`) the encrypted-weights
    program's plaintext semantics are the plaintext-weights program's and the network's."""
    enc = _small_encrypted()
    slots = enc.params.slots
    image = np.random.default_rng(5).uniform(0, 1, (L.SMALL.side, L.SMALL.side))
    windows = _windows(L.SMALL, image, slots)
    weights = L.lola_weight_inputs(L.SMALL, slots)
    assert set(weights) | set(windows) == {n.attr("name") for n in enc.ir.nodes if n.op.name == "INPUT"}
    got = reference(enc, {**windows, **weights})
    plain = reference(_small(), windows)
    want = _direct(L.SMALL, image, slots)
    for k in range(L.SMALL.classes):
        np.testing.assert_allclose(got[f"score_{k}"], plain[f"score_{k}"], rtol=1e-12, atol=1e-20)
        np.testing.assert_allclose(got[f"score_{k}"], want[k], rtol=1e-9, atol=1e-18)


def test_lola_encrypted_weights_match_the_reference_encrypted():
    """Compile → run → decrypt agrees with the eager evaluator and the plaintext reference,
    on random inputs within the declared bounds and on an image with the real weights."""
    p = _small_encrypted()
    slots = p.params.slots
    image = np.random.default_rng(7).uniform(0, 1, (L.SMALL.side, L.SMALL.side))
    for inputs in (random_inputs(p, 0), {**_windows(L.SMALL, image, slots), **L.lola_weight_inputs(L.SMALL, slots)}):
        results = check_against_reference(p, inputs, 0, None)
        assert all(r.ok for r in results), [r.describe("ckks") for r in results]


def test_lola_encrypted_weights_take_the_stated_counts():
    """Ciphertext products, rotations and relinearizations (after lazy relinearization) are
    `lola_counts(encrypted_weights=True)`'s, and the key switches are their sum."""
    p = _small_encrypted()
    counts = L.lola_counts(L.SMALL, p.params.slots, encrypted_weights=True)
    traced = [n.op.name for n in p.ir.nodes]
    assert traced.count("MUL") == counts["ciphertext_products"]
    assert traced.count("INPUT") == counts["weight_ciphertexts"] + L.SMALL.kernel**2
    assert "MUL_PLAIN" not in traced  # no weight left in a plaintext
    compiled = fhec.compile(p, "f1")
    ops = [n.op.name for n in compiled.program.nodes]
    assert ops.count("ROTATE") == counts["rotations"]
    assert ops.count("RELINEARIZE") == counts["relinearizations"]
    assert sum(compiled.report.keyswitch.values()) == counts["rotations"] + counts["relinearizations"]


def test_lola_encrypted_counts_at_mnist_size():
    """148 weight ciphertexts (125 conv scalars, 13 packed rows, 10 class rows), 150
    ciphertext products, 30 relinearizations, LoLa's 283 rotations: 313 key switches."""
    c = L.lola_counts(L.MNIST, 8192, encrypted_weights=True)
    assert (c["weight_ciphertexts"], c["ciphertext_products"], c["relinearizations"], c["rotations"]) \
        == (148, 150, 30, 283)
    assert (c["masks"], c["scalar_products"], c["plaintext_products"]) == (13, 0, 0)


def test_lola_encrypted_weights_need_their_limbs_at_mnist_size():
    """The declared weight bounds make the scores' compiler bound outgrow one limb fewer
    than `LOLA_ENCRYPTED_LEVELS` gives (the module doc's reason for its limbs)."""
    def build(levels):
        params = fhec.CKKSParams(N=2**14, levels=levels, scale_bits=28, word_bits=32, security=128)
        return L.lola_mnist(L.MNIST, layout="lola", encrypted_weights=True, params=params)

    with pytest.warns(fhec.PrecisionWarning):
        p = build(L.LOLA_ENCRYPTED_LEVELS)
    assert p.params.max_limbs == L.LOLA_ENCRYPTED_LEVELS + 1
    with pytest.raises(fhec.ValueOverflowError):
        build(L.LOLA_ENCRYPTED_LEVELS - 1)


@pytest.mark.slow
def test_lola_encrypted_weights_at_mnist_size_take_the_stated_key_switches():
    with pytest.warns(fhec.PrecisionWarning):
        p = L.lola_mnist(L.MNIST, layout="lola", encrypted_weights=True)
    report = fhec.compile(p, "f1").report
    assert sum(report.keyswitch.values()) == 283 + 30
