"""Every shipped example compiles for the machine it is written for (f1 unless the table
below says otherwise), through the CLI as a user would; the small LoLa and lookup programs
also pass `fhec check` in their encrypted-weights / suite shapes."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from fhec.bundled_examples import examples_dir, list_examples
from fhec.cli import main

EXAMPLES = examples_dir()

TARGET = {"rpu_matvec.py": "rpu", "resnet20.py": "osiris-tiny", "sorting.py": "osiris-tiny"}
"""Examples written for another machine than f1 (rpu_matvec uses the RPU's 40-bit words;
resnet20's CI variant and sorting's window use Osiris's 40-bit words at N = 2^12)."""

PROGRAM = {"helr.py": "small_f1"}
"""Examples that define several programs: the one compiled here (helr's other program,
`small`, bootstraps; `fhec check` covers both)."""

SLOW = {"bootstrap.py"}
"""Examples whose compile takes half a minute or more (three bootstraps at N = 2^12)."""


@pytest.mark.parametrize("name", [
    pytest.param(e.name, marks=[pytest.mark.slow] if e.name in SLOW else [])
    for e in list_examples() if e.path.suffix == ".py"
])
def test_every_shipped_example_compiles_for_its_target(name):
    target = TARGET.get(name, "f1")
    spec = str(EXAMPLES / name) + (f":{PROGRAM[name]}" if name in PROGRAM else "")
    r = CliRunner().invoke(main, ["compile", spec, "--target", target])
    assert r.exit_code == 0, r.output
    assert "cycles" in r.output


def test_lola_mnist_with_encrypted_weights_matches_the_reference_at_a_small_size():
    from fhec.evaluate import check_against_reference, random_inputs

    sys.path.insert(0, str(EXAMPLES))
    try:
        import lola_mnist
    finally:
        sys.path.remove(str(EXAMPLES))
    p = lola_mnist.lola_mnist(lola_mnist.SMALL, N=2**10, encrypted_weights=True, security=None)
    assert sum(n.startswith("dense1_diag") for n in p.ir.inputs) == 16  # m = 16 diagonals for 16 hidden units
    results = check_against_reference(p, random_inputs(p, 0), 0, None)
    assert all(r.ok for r in results), [r.describe("ckks") for r in results]


def test_hybrid_diagonals_compute_the_matrix_product():
    """The layout the LoLa examples rely on, in plain numpy: sum_s d_s * roll(a, -s), then
    the strided block sum, gives W @ a in the first rows slots (every size class: rows a
    power of two or not, columns more or fewer than the rows)."""
    import numpy as np

    sys.path.insert(0, str(EXAMPLES))
    try:
        from lola_mnist import hybrid_diagonals
    finally:
        sys.path.remove(str(EXAMPLES))
    rng = np.random.default_rng(0)
    slots = 512
    for rows, cols in ((10, 100), (16, 50), (100, 120), (3, 7)):
        w, a = rng.normal(size=(rows, cols)), np.zeros(slots)
        a[:cols] = rng.normal(size=cols)
        a[cols:] = rng.normal(size=slots - cols)  # garbage the diagonals must never read
        diagonals, m, blocks = hybrid_diagonals(w, slots)
        y = sum(d * np.roll(a, -s) for s, d in diagonals.items())
        out = sum(np.roll(y, -t * m) for t in range(blocks))
        np.testing.assert_allclose(out[:rows], w @ a[:cols], rtol=1e-12, atol=1e-12)


def test_lola_cifar_rows_are_the_padded_strided_convolution():
    """LoLa's second convolution as dense rows (`Conv2Rows`), one row at a time, equals
    the convolution computed directly: zero padding, stride, every map summed."""
    import numpy as np

    sys.path.insert(0, str(EXAMPLES))
    try:
        from lola_cifar import CIFAR, SMALL, Conv2Rows
    finally:
        sys.path.remove(str(EXAMPLES))
    # LoLa's sizes (LolaCifarCryptoNet.cs): 192 windows of 196 corners, 83 x 196 stacked, 163 x 7 x 7 rows
    assert (CIFAR.windows, CIFAR.positions, CIFAR.hidden, CIFAR.rows) == (192, 196, 16268, 7987)
    rng = np.random.default_rng(1)
    maps1, (maps2, k, stride, pad) = SMALL.conv1[0], SMALL.conv2
    s1, s2 = SMALL.side1, SMALL.side2
    kernels = rng.normal(size=(maps2, maps1, k, k))
    x = rng.normal(size=(maps1, s1, s1))
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    direct = np.array([[[np.sum(kernels[o] * padded[:, y * stride:y * stride + k, z * stride:z * stride + k])
                         for z in range(s2)] for y in range(s2)] for o in range(maps2)]).reshape(-1)
    rows = Conv2Rows(SMALL, kernels, 1.0)
    assert SMALL.rows == direct.size and SMALL.hidden == x.size
    np.testing.assert_allclose([rows(r) @ x.reshape(-1) for r in range(SMALL.rows)], direct, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, target", [
    ("lola_mnist.py", "f1"),
    ("db_lookup.py", "f1"),
    ("osiris_nets.py", "osiris"),
    pytest.param("lola_cifar.py", "f1", marks=pytest.mark.slow),
    pytest.param("private_lookup.py", "f1", marks=pytest.mark.slow),
])
def test_suite_examples_run_bit_identically_on_their_target(name, target):
    """`fhec run`: compile, execute the streams, and compare every limb with the eager
    evaluator and the decryption with the reference."""
    r = CliRunner().invoke(main, ["run", str(EXAMPLES / name), "--target", target, "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert f"{name} on {target}: OK" in r.output
