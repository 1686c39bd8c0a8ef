"""numpy's vector habits on `Cipher` (`x @ M`, `M @ x`, `x.sum()`, `x.dot(w)`, `x.mean()`)
and notebook cells as source locations."""

import re
import sys
import types

import numpy as np
import pytest

import fhec
from fhec.frontend.location import format_location


def rand(params, seed=0, n=None):
    return np.random.default_rng(seed).uniform(-1, 1, n or params.slots)


def test_matmul_follows_numpy_on_both_sides(ckks):
    m = np.random.default_rng(1).uniform(-1, 1, (ckks.slots, 7)) / 8
    p = fhec.Program("mm", ckks)
    x = p.input("x")
    p.output("xm", x @ m)            # numpy: y[j] = sum_i x[i] m[i, j]
    p.output("mx", m.T @ x)          # the matrix on the left: m.T times the vector
    xs = rand(ckks)
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    want = fhec.reference(p, {"x": xs})
    for name in ("xm", "mx"):
        assert np.max(np.abs(got[name][:7] - xs @ m)) < 1e-5
        assert np.max(np.abs(want[name][:7] - xs @ m)) < 1e-12
        assert np.max(np.abs(got[name][7:])) < 1e-5


def test_sum_dot_mean(ckks):
    p = fhec.Program("np", ckks)
    x, w = p.input("x"), p.plain("w")
    v = np.linspace(-1, 1, 10)
    p.output("sum", x.sum())
    p.output("dot_const", x.dot(v))
    p.output("dot_plain", x.dot(w))
    p.output("mean", x.mean(10))
    xs, ws = rand(ckks, 1, 10), rand(ckks, 2)
    got = fhec.evaluate(p, {"x": xs, "w": ws}, seed=0)
    assert np.max(np.abs(got["sum"] - xs.sum())) < 1e-5  # every slot holds the total
    assert abs(got["dot_const"][0] - xs.dot(v)) < 1e-5
    assert abs(got["dot_plain"][0] - xs.dot(ws[:10])) < 1e-5
    assert abs(got["mean"][0] - xs.mean()) < 1e-6


def test_bgv_sum_and_dot_are_exact(bgv):
    t = bgv.plain_modulus
    p = fhec.Program("np", bgv)
    x = p.input("x")
    w = np.arange(bgv.slots) % 5
    p.output("s", x.sum())
    p.output("d", x.dot(w))
    xs = np.random.default_rng(0).integers(0, t, bgv.slots)
    got = fhec.evaluate(p, {"x": xs}, seed=0)
    assert np.all(got["s"] == xs.sum() % t)
    assert got["d"][0] == int(xs @ w) % t


@pytest.mark.parametrize("bad, message", [
    (lambda x, p: x @ x, "plaintext matrix"),
    (lambda x, p: x @ np.ones(3), "2-D plaintext matrix"),
    (lambda x, p: x @ "M", "2-D plaintext matrix"),
    (lambda x, p: x.dot(object()), "x.dot(w) needs a vector"),
    (lambda x, p: x.dot("w"), "cannot use str"),
    (lambda x, p: x.sum(0), "sum_slots(n=0)"),
    (lambda x, p: p.plain("w").sum(), "sum() needs a ciphertext"),
    # Python's and numpy's operators that have no encrypted counterpart
    (lambda x, p: 1 / x, "c / x is not possible"),
    (lambda x, p: 2 ** x, "c ** x is not possible"),
    (lambda x, p: x // 2, "x // c"),
    (lambda x, p: 5 % x, "x // c"),
    (lambda x, p: divmod(x, 2), "x // c"),
    (lambda x, p: float(x), "conversion to a Python number"),
    (lambda x, p: round(x), "conversion to a Python number"),
    (lambda x, p: range(x), "conversion to a Python number"),
    (lambda x, p: x.__setitem__(0, 1.0), "item assignment"),
    (lambda x, p: x & x, "bitwise operators"),
    (lambda x, p: ~x, "bitwise operators"),
    (lambda x, p: np.exp(x), "numpy's exp"),
    (lambda x, p: np.sum(x), "x.sum_slots()"),
    (lambda x, p: np.dot(np.ones(4), x), "x.dot(w)"),
    (lambda x, p: np.roll(x, 1), "x.rotate(k)"),
    (lambda x, p: np.ones(4).__imul__(x), "numpy's multiply"),
])
def test_numpy_habits_refuse_with_the_fix(ckks, bad, message):
    p = fhec.Program("bad", ckks)
    x = p.input("x")
    before = len(p.ir.nodes)
    with pytest.raises(fhec.FhecError, match=re.escape(message)) as e:
        bad(x, p)
    assert "test_numpy_habits.py" in str(e.value)  # names the user's line
    assert len(p.ir.nodes) <= before + 1  # nothing half-built (plain("w") itself may stay)


@pytest.mark.parametrize("scheme, fix", [("ckks", "fhec.approx"), ("bgv", "Fermat")])
@pytest.mark.parametrize("compare", [lambda x, y: x == 42, lambda x, y: x != 42, lambda x, y: x == y,
                                     lambda x, y: 42 == x, lambda x, y: np.int64(42) == x],
                         ids=["eq", "ne", "eq-cipher", "eq-reflected", "eq-numpy"])
def test_equality_is_refused_not_an_identity_test(ckks, bgv, scheme, fix, compare):
    # `if query == 42:` was a Python identity test (False): a ported branch silently
    # built the wrong program
    p = fhec.Program("eq", {"ckks": ckks, "bgv": bgv}[scheme])
    x, y = p.input("x"), p.input("y")
    with pytest.raises(fhec.ProgramError, match=r"equality test .*" + fix) as e:
        compare(x, y)
    assert "test_numpy_habits.py" in e.value.where
    with pytest.raises(fhec.ProgramError, match="comparison"):
        p.plain("w") == 1
    assert len({x, y, x}) == 2 and {x: 1}[x] == 1  # handles still hash by identity


def test_mean_is_ckks_only(bgv):
    x = fhec.Program("m", bgv).input("x")
    with pytest.raises(fhec.SchemeMismatchError, match="x.sum"):
        x.mean()


# -- notebook cells -------------------------------------------------------------------------------


def test_terminal_ipython_cells_are_named():
    assert format_location("<ipython-input-3-0123456789ab>", 4) == "In [3], line 4"


def test_kernel_cells_are_named_through_the_running_shell(monkeypatch, ckks):
    """A Jupyter kernel compiles a cell under a temporary file name and records it in its
    compiler's filename map; a stand-in shell with such a map checks the lookup (fhec
    does not depend on IPython)."""
    cell_file = "/tmp/ipykernel_4242/123456789.py"
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={cell_file: 7}))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    namespace = {"fhec": fhec, "params": ckks}
    source = "p = fhec.Program('nb', params)\nx = p.input('x')\n\ny = x.rotate(1.5)\n"
    with pytest.raises(fhec.ProgramError) as e:
        exec(compile(source, cell_file, "exec"), namespace)
    assert "In [7], line 4" in str(e.value)
    assert "ipykernel" not in str(e.value)
    # An unknown file under the same shell keeps its path.
    assert format_location("/tmp/ipykernel_4242/other.py", 2).endswith("other.py:2")


def test_numpy_scalars_and_arrays_on_the_left_are_the_reflected_operators(ckks):
    # w * x, w - x, M @ x with numpy on the left reach Cipher's reflected operators (numpy's
    # ufunc protocol) and compute what numpy would
    rng = np.random.default_rng(3)
    w, m = rng.uniform(-1, 1, ckks.slots), rng.uniform(-1, 1, (5, 5)) / 4
    p = fhec.Program("left", ckks)
    x = p.input("x")
    p.output("y", w * x + np.float64(0.5) * x - w + (w - x) + m @ x)
    xs = rand(ckks, 4)
    got = fhec.evaluate(p, {"x": xs}, seed=1)["y"]
    want = w * xs + 0.5 * xs - w + (w - xs) + np.concatenate([m @ xs[:5], np.zeros(ckks.slots - 5)])
    assert np.max(np.abs(got - want)) < 1e-4
