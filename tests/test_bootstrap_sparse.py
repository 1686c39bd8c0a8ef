"""Sparse-slot bootstrapping (`BootstrapConfig(slots=n)`): SubSum, the n-point DFT with
the halves packed into a period-2n vector, the periodicity contract, and eager = limb-level
= compiled. The sets here are insecure (security=None, h = 8): test parameters only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fhec
from fhec.errors import BootstrapError, ParameterError
from fhec.evaluate import prepare
from fhec.ir.he import HeOp
from fhec.passes.he_rotations import key_requirements
from fhec.schemes import dft
from fhec.schemes.bootstrap_config import split_log


def sparse_params(N: int, n: int, left: int = 2, R: int = 4, **evalmod) -> fhec.CKKSParams:
    """A bootstrappable set refreshing n slots, `left` levels after it (INSECURE: tests only).
    R = 4: with few slots a coefficient is as large as the values (not ~1/√n of them),
    which R = 2 or 3 leaves too close to 1/4 for the arcsine (docs/bootstrapping.md)."""
    em = dict(K=6, message_ratio_bits=R, arcsine_degree=7, double_angle=2) | evalmod
    cfg = fhec.BootstrapConfig(slots=n, hamming_weight=8, evalmod=fhec.EvalModConfig(**em))
    return fhec.CKKSParams(N=N, levels=cfg.depth(N) + left, scale_bits=30, word_bits=32, security=None,
                           bootstrap=cfg)


def _program(params, level: int = 1):
    p = fhec.Program("sparse", params)
    y = p.input("x", level=level).bootstrap()
    p.output("y", y * y)  # a multiply after the bootstrap: the levels are usable
    return p, y


def _periodic(params, seed: int) -> np.ndarray:
    n = params.bootstrap.slot_count(params.N)
    return np.tile(np.random.default_rng(seed).uniform(-1, 1, n), params.slots // n)


def _mean_bits(got, want) -> float:
    return float(-np.log2(np.mean(np.abs(got - want))))


# -- configuration -------------------------------------------------------------------------


def test_slots_must_be_a_power_of_two_up_to_half_n():
    for bad in (3, 256):
        with pytest.raises(ParameterError, match="power of two"):
            sparse_params(2**8, bad)
    with pytest.raises(ParameterError, match="slots"):
        fhec.BootstrapConfig(slots=0)
    with pytest.raises(ParameterError, match="sum to"):
        fhec.CKKSParams(N=2**8, levels=30, security=None,
                        bootstrap=fhec.BootstrapConfig(slots=16, cts_log_radices=(3, 3)))


def test_levels_of_the_transforms():
    cfg = fhec.BootstrapConfig(slots=4, cts_depth=3)
    assert cfg.log_radices(2**8, "cts") == (1, 1)  # at most one butterfly stage per level
    assert cfg.halves(2**8) == "packed" and fhec.BootstrapConfig().halves(2**8) == "two"
    one = fhec.BootstrapConfig(slots=1)
    assert one.halves(2**8) == "real"
    assert one.log_radices(2**8, "cts") == () == one.log_radices(2**8, "stc")
    # n = 1: no DFT factor; the sparse scale-down (two levels), EvalMod, the output scaling
    assert one.depth(2**8) == 2 + one.evalmod_depth + 1
    assert cfg.depth(2**8) == 2 + 2 + cfg.evalmod_depth + 2
    assert fhec.BootstrapConfig(slots=128).depth(2**8) == fhec.BootstrapConfig().depth(2**8)


# -- the transforms in numpy ---------------------------------------------------------------


def _apply(factors, x: np.ndarray) -> np.ndarray:
    for f in factors:
        x = dft.dense(dft.tiled(f, x.size), x.size) @ x
    return x


@pytest.mark.parametrize("n", [2, 8, 32])
def test_packed_transforms_invert_each_other(n):
    """StC(2·Re(CtS(w))) = 2w on period-n vectors: the split and the join are inverse."""
    bits = int(np.log2(n))
    cts, stc = dft.bootstrap_transforms(n, split_log(bits, min(bits, 2)), (1,) * bits, "packed")
    rng = np.random.default_rng(n)
    w = np.tile(rng.normal(size=n) + 1j * rng.normal(size=n), 4)
    v = 2 * np.real(_apply(cts, w))
    assert np.allclose(_apply(stc, v.astype(np.complex128)), 2 * w)


@pytest.mark.parametrize("n", [2, 16])
def test_n_point_dft_decodes_the_subring(n):
    """U_n applied to w_l = s_l + i·s_{l+n} (bit-reversed) gives the slots of the
    polynomial sum_l s_l X^(l·N/2n), as fhec's decoder computes them."""
    from fhec.schemes.encoding import ckks_decode as decode

    N = 64
    s = np.random.default_rng(1).integers(-50, 50, 2 * n)
    coeffs = np.zeros(N, dtype=np.int64)
    coeffs[:: N // (2 * n)] = s
    slots = decode(coeffs, N, 1.0)
    bits = int(np.log2(n))
    rev = [int(format(k, f"0{bits}b")[::-1], 2) if bits else 0 for k in range(n)]
    w = (s[:n] + 1j * s[n:])[rev]
    got = _apply(dft.dft_factors(n, (1,) * bits, False), w.astype(np.complex128))
    assert np.allclose(np.tile(got, N // 2 // n), slots)


# -- the expansion, the contract, precision ------------------------------------------------


def test_sparse_expansion_has_subsum_rotations_and_one_evalmod():
    N, n = 2**8, 4
    p, y = _program(sparse_params(N, n))
    assert y.level == 2
    prog = prepare(p)
    subsum = [nd for nd in prog.nodes if nd.attr("stage", None) == "subsum" and nd.op is HeOp.ROTATE]
    assert sorted(nd.attr("step") for nd in subsum) == [n << k for k in range(5)]  # log2(N/2n) = 5
    assert sum(nd.op is HeOp.MUL_MONOMIAL for nd in prog.nodes) == 0  # packed halves: no ±i
    steps = key_requirements(prog).keygen_kwargs()["rotations"]
    assert {n << k for k in range(5)} <= set(steps)
    full, _ = _program(sparse_params(N, N // 2))
    count = lambda q: sum(nd.op is HeOp.RELINEARIZE for nd in prepare(q).nodes)  # noqa: E731
    assert 2 * (count(p) - 1) == count(full) - 1  # EvalMod runs once instead of twice (the -1: y * y)


def test_one_real_slot_refreshes_only_the_real_half():
    p, _ = _program(sparse_params(2**6, 1))
    prog = prepare(p)
    stages = {nd.attr("stage", None) for nd in prog.nodes}
    assert {"modraise", "subsum", "cts", "evalmod", "stc"} <= stages
    assert not any(nd.op is HeOp.MUL_MONOMIAL for nd in prog.nodes)  # no imaginary half
    assert not any(nd.op is HeOp.ROTATE and nd.attr("stage", None) in ("cts", "stc") for nd in prog.nodes)
    x = np.full(p.params.slots, -0.75)
    assert _mean_bits(fhec.evaluate(p, {"x": x}, seed=4)["y"], x * x) >= 12


def test_non_periodic_values_are_refused_with_the_line():
    p, _ = _program(sparse_params(2**6, 4))
    for run in (fhec.reference, fhec.evaluate):
        with pytest.raises(BootstrapError, match=r"np.tile\(v, 8\)") as e:
            run(p, {"x": [0.5, 0.25, -0.5, 0.1]})  # zero-padded: not periodic
        assert "test_bootstrap_sparse.py" in e.value.where
    x = _periodic(p.params, 0)
    assert np.allclose(fhec.reference(p, {"x": x})["y"], x * x)


def test_compiled_runs_refuse_non_periodic_values_too(tmp_path):
    # the compiled streams and machine words compute the SubSum: Compiled.run used to return
    # the average over the periods without a word
    params = sparse_params(2**5, 4, left=1, degree=15, K=4)
    p = fhec.Program("sparse", params)
    p.output("y", p.input("x", level=1).bootstrap())
    tiny = fhec.compile(p, target="tiny")
    # and so does a compiled program saved and loaded again (fhec.save keeps the source)
    loaded = fhec.load(fhec.save(tiny, tmp_path / "sparse.fhec"))
    for compiled in (tiny, loaded, fhec.compile(p, target="presto")):
        with pytest.raises(BootstrapError, match=r"np.tile\(v, 4\)") as e:
            compiled.run({"x": [0.5, 0.25, -0.5, 0.1]}, seed=1)
        assert "test_bootstrap_sparse.py" in e.value.where
    x = _periodic(params, 5)
    assert np.array_equal(loaded.run({"x": x}, seed=1)["y"], tiny.run({"x": x}, seed=1)["y"])
    # a program without a sparse bootstrap keeps no source
    q = fhec.Program("plain", fhec.CKKSParams(N=2**5, levels=1, security=None))
    q.output("y", q.input("x") * 2)
    assert fhec.compile(q, target="tiny").source is None


@pytest.mark.parametrize("n", [1, 4, 32, 128])
def test_evaluate_precision(n):
    """n in {1, 4, N/8, N/2} at N = 2^8; docs/bootstrapping.md has the measured bits."""
    params = sparse_params(2**8, n)
    p, _ = _program(params)
    x = _periodic(params, n)
    out = fhec.evaluate(p, {"x": x}, seed=1)["y"]
    assert _mean_bits(out, x * x) >= 12


@pytest.mark.parametrize("n", [1, 4])
def test_limb_run_and_tiny_are_bit_identical(n):
    from fhec.testing import assert_matches_reference

    params = sparse_params(2**5, n, left=1, degree=15, K=4)
    p = fhec.Program("sparse", params)
    p.output("y", p.input("x", level=1).bootstrap())
    x = _periodic(params, 3)
    assert_matches_reference(p, {"x": x}, target="limbs", seed=2, rel_bits=8)
    assert_matches_reference(p, {"x": x}, target="tiny", seed=2, rel_bits=8)


@pytest.mark.parametrize("hoisting", ["full", "double", "none"])
def test_hoisting_modes_are_bit_identical(hoisting):
    from fhec.testing import assert_matches_reference

    cfg = fhec.BootstrapConfig(slots=4, hamming_weight=8, hoisting=hoisting, evalmod=fhec.EvalModConfig(
        K=4, degree=15, message_ratio_bits=4, double_angle=2))
    params = fhec.CKKSParams(N=2**5, levels=cfg.depth(2**5) + 1, security=None, bootstrap=cfg)
    p = fhec.Program("sparse", params)
    p.output("y", p.input("x", level=1).bootstrap())
    assert_matches_reference(p, {"x": _periodic(params, 1)}, target="limbs", seed=1, rel_bits=8)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 128])
def test_compiled_f1_is_bit_identical(n):
    """N = 2^10 (n = 1 and N/8) compiled for f1: streams = evaluator on every limb."""
    from fhec.testing import assert_matches_reference

    params = sparse_params(2**10, n)
    p, _ = _program(params)
    assert_matches_reference(p, {"x": _periodic(params, 4)}, target="f1", seed=5, rel_bits=8)


SPARSE_TINY = sparse_params(2**5, 4, left=2, degree=15, K=4)


@st.composite
def around_a_sparse_bootstrap(draw):
    """Random work on period-4 values before and after a sparse bootstrap."""
    p = fhec.Program("drawn", SPARSE_TINY)
    x, w = p.input("x", level=draw(st.integers(2, 3))), p.input("w", level=2)
    before = {
        "rotate": lambda v: v.rotate(draw(st.integers(1, SPARSE_TINY.slots - 1))),
        "scale": lambda v: v * draw(st.floats(-1, 1, allow_nan=False)),
        "add": lambda v: (v + w) * 0.5,
        "square": lambda v: v * v,
    }
    y = before[draw(st.sampled_from(sorted(before)))](x).bootstrap()
    after = {"square": lambda v: v * v, "times_w": lambda v: v * w, "rotate": lambda v: v.rotate(3) + v * 0}
    p.output("y", after[draw(st.sampled_from(sorted(after)))](y))
    p.output("w", w + w)
    period = st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4)
    return p, {k: np.tile(draw(period), SPARSE_TINY.slots // 4) for k in ("x", "w")}


@pytest.mark.slow
@settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(around_a_sparse_bootstrap(), st.integers(0, 2**32))
def test_drawn_programs_around_a_sparse_bootstrap(case, seed):
    """fhec.run equals fhec.evaluate on every limb, and both match the reference."""
    from fhec.testing import assert_matches_reference

    p, inputs = case
    assert_matches_reference(p, inputs, target="limbs", seed=seed, rel_bits=8)


def test_random_inputs_and_fhec_check_follow_the_period(tmp_path):
    from click.testing import CliRunner

    from fhec.cli import main
    from fhec.evaluate import random_inputs

    p, _ = _program(sparse_params(2**6, 4))
    x = random_inputs(p, seed=0)["x"]
    assert np.array_equal(x, np.tile(x[:4], 8)) and len(set(x[:4])) == 4
    path = tmp_path / "sparse.py"
    path.write_text(
        "import fhec\n"
        "cfg = fhec.BootstrapConfig(slots=4, hamming_weight=8, evalmod=fhec.EvalModConfig(K=6, message_ratio_bits=4, "
        "double_angle=2))\n"
        "params = fhec.CKKSParams(N=2**6, levels=cfg.depth(2**6) + 2, security=None, bootstrap=cfg)\n"
        "p = fhec.Program('sparse', params)\n"
        "p.output('y', p.input('x', level=1).bootstrap() * 2)\n"
    )
    result = CliRunner().invoke(main, ["check", str(path), "--seed", "1"])
    assert result.exit_code == 0 and "OK" in result.output, result.output


@pytest.mark.slow
def test_f1_non_packed_preset_precision():
    """F1's setting (one slot at N = 2^14, 28-bit scale): 10.1 bits measured on 0.9
    (docs/bootstrapping.md). A one-level scale-down gave 0.8: the constant 2^-21 left ~2^4
    as an integer."""
    params = fhec.CKKSParams.preset("f1-ckks-bootstrap")
    p = fhec.Program("f1", params)
    p.output("y", p.input("x", level=1).bootstrap())
    out = fhec.evaluate(p, {"x": 0.9}, seed=1)["y"]
    assert _mean_bits(out, 0.9) >= 9.5


def test_a_sparse_bootstrap_refuses_a_value_evalmod_would_lose():
    """slots=2 on bootstrap-toy promises 4.4 bits; a constant 0.9 (m/q_0 = 0.225, near
    EvalMod's 1/4) came back with 2.6 and passed the range check's 2-bit margin; at 1 bit
    it is refused before anything is encrypted, and 0.5 still runs."""
    import fhec
    import numpy as np

    base = fhec.CKKSParams.preset("bootstrap-toy")
    cfg = fhec.BootstrapConfig(**{**dict(base.bootstrap), "slots": 2})
    params = fhec.CKKSParams.preset("bootstrap-toy", levels=cfg.depth(base.N) + 3, bootstrap=cfg)
    p = fhec.Program("sparse", params)
    p.output("y", p.input("x", level=1).bootstrap())
    with pytest.raises(fhec.BootstrapError, match="too close to 1/4"):
        fhec.reference(p, {"x": np.full(params.slots, 0.9)})
    fhec.reference(p, {"x": np.full(params.slots, 0.5)})
