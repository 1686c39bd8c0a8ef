"""Osiris's bitonic sort (fhec/examples/sorting.py): the network sorts, its comparison is
Cheon-Kim-Kim's f_3, a stage window runs bit-identically, and the suite's windows add up."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.bundled_examples import examples_dir
from fhec.cli import main
from fhec.examples import sorting
from fhec.examples.resnet20 import small_params


def _plain_stage(x: np.ndarray, n: int, block: int, dist: int, sign) -> np.ndarray:
    """One stage as the program computes it, on plaintext slots: the three diagonal
    products, then u + (σ·d)·sign(d)."""
    def apply(diagonals):
        return sum(v * np.roll(x, -k) for k, v in diagonals.items())

    u, d, sd = (apply(dg) for dg in sorting.stage_diagonals(n, len(x), block, dist))
    return u + sd * sign(d)


@settings(max_examples=20, deadline=None)
@given(m=st.integers(1, 6), reps=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))
def test_the_network_with_an_exact_sign_sorts_every_group(m, reps, seed):
    n = 2**m
    slots = reps * n  # the values repeat with period n, as a sparse bootstrap needs (1: every slot)
    x = np.tile(np.random.default_rng(seed).uniform(0, 1, n), slots // n)
    for block, dist in sorting.stages(n):
        x = _plain_stage(x, n, block, dist, np.sign)
    np.testing.assert_allclose(x[:n], np.sort(x[:n]), atol=1e-12)
    np.testing.assert_allclose(x, np.tile(x[:n], slots // n), atol=1e-12)
    assert len(sorting.stages(n)) == m * (m + 1) // 2


def test_the_comparison_is_cheon_kim_kims_f3_composed_twelve_times():
    f3 = sorting.comparison_polynomial()
    np.testing.assert_allclose(f3 * 16, [0, 35, 0, -35, 0, 21, 0, -5], atol=1e-12)
    grid = np.linspace(-1, 1, 2001)
    assert np.max(np.abs(np.polynomial.polynomial.polyval(grid, f3))) <= 1 + 1e-12
    d = np.array([-0.5, -2.0**-10, 2.0**-10, 0.5])
    s = d
    for _ in range(sorting.COMPOSITIONS):
        s = np.polynomial.polynomial.polyval(s, f3)
    np.testing.assert_allclose(s, np.sign(d), atol=0.05)


def test_the_compiler_keeps_a_composed_comparison_within_its_domain():
    """The polynomial's value bound (`he_polynomial.value_bound`) holds f_3's output near
    1, so twelve compositions stay bounded (the per-piece rule gave 2.19, then 101)."""
    window = sorting.stage_program(9, small_params(), 8, 8, 2, compositions=4)[0]
    bounds = [n.type.bound for n in window.ir.nodes if n.op.name == "POLYNOMIAL"]
    assert len(bounds) == 4 and max(bounds) < 1.02


def test_windows_count_every_stage_once():
    windows = sorting.sorting_windows("SH", n=16, compositions=2, params=small_params())
    assert windows.runs == len(sorting.stages(16))
    levels = [w.ir.nodes[0].type.level for w, _ in windows.parts]
    assert len(set(levels)) == len(levels)  # one window per distinct entry level


def test_every_level_after_a_bootstrap_carries_work():
    """Set IV's (and the toy's) bootstrap takes a level-0 input, so a comparison runs down
    to level 0 before the next bootstrap: the module's window bootstraps a level-0 value,
    and the network takes 489 bootstraps (6 per stage, 629, when a level was left)."""
    from fhec.ir.he import HeOp

    ir = sorting.p.ir
    assert [ir.node(n.args[0]).type.level for n in ir.nodes if n.op is HeOp.BOOTSTRAP] == [0]
    windows = sorting.sorting_windows("SH")  # traced, not compiled
    assert sum(count * sum(n.op is HeOp.BOOTSTRAP for n in w.ir.nodes) for w, count in windows.parts) == 489


def test_the_stage_window_runs_bit_identically_on_osiris_tiny():
    """`fhec run`: compile the module's window for osiris-tiny, execute the streams, compare
    every limb with the eager evaluator and the decryption with the reference."""
    r = CliRunner().invoke(main, ["run", str(examples_dir() / "sorting.py"), "--target", "osiris-tiny",
                                  "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert "sorting.py on osiris-tiny: OK" in r.output


def test_a_whole_network_past_its_bounds_is_refused_at_the_bootstrap():
    """The compiler cannot see that a swap keeps [0, 1]: bounds double per stage, and the
    bootstrap that would decrypt to garbage says so instead."""
    from fhec.errors import FhecError

    with pytest.raises(FhecError, match="decrypt to garbage"):
        sorting.sort_program(8, small_params(), compositions=2)


def test_a_size_the_network_cannot_sort_is_refused():
    from fhec.errors import ProgramError

    for n in (0, 1, 12, 2.0):
        with pytest.raises(ProgramError, match="power of two"):
            sorting.stages(n)
    with pytest.raises(ProgramError, match="n must divide them"):
        sorting.stage_diagonals(4096, 2048, 2, 1)
