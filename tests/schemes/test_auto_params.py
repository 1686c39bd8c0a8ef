"""Automatic parameters: `CKKSParams.for_program` / `BGVParams.for_program` choose the
smallest secure N and scale that meet the request, explain it in one line, and the
parameters they choose really deliver the precision asked for."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fhec
from fhec.schemes.auto_params import _chain_precision, program_depth
from fhec.schemes.params import max_log_qp


@pytest.mark.parametrize("depth, bits", [(0, 12), (1, 12), (3, 12), (2, 16)])
def test_ckks_choice_is_secure_deep_enough_and_minimal(depth, bits, capsys):
    p = fhec.CKKSParams.for_program(depth, precision_bits=bits)
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and line.startswith("fhec: CKKS N=2^") and f"depth {depth}" in line
    assert p.levels == depth and p.security == 128 and all(q < 2**32 for q in p.moduli + p.special_moduli)
    assert p.log_qp <= max_log_qp(p.N, 128)
    # Minimal scale: one bit less misses the precision at this N (or no longer fits q_0's headroom).
    assert _chain_precision(p, depth) >= bits
    try:
        smaller = fhec.CKKSParams(N=p.N, levels=depth, scale_bits=p.scale_bits - 1, word_bits=32,
                                  base_limbs=p.base_limbs, security=128)
    except fhec.ParameterError:
        return
    assert _chain_precision(smaller, depth) < bits


def test_the_chosen_parameters_deliver_the_precision():
    """A chain of squarings at the chosen parameters, run on the eager evaluator, keeps at
    least the precision asked for (the estimate is a worst-slot bound)."""
    depth, bits = 3, 12
    params = fhec.CKKSParams.for_program(depth, precision_bits=bits, explain=False)
    p = fhec.Program("chain", params)
    y = p.input("x")
    for _ in range(depth):
        y = y * y
    p.output("y", y)
    x = np.random.default_rng(0).uniform(-1, 1, params.slots)
    got = fhec.evaluate(p, {"x": x}, seed=0)["y"]
    assert -math.log2(np.max(np.abs(got - x ** (2**depth)))) >= bits


def test_a_program_gives_its_depth():
    params = fhec.CKKSParams(N=2**10, levels=6, security=None)
    p = fhec.Program("d", params)
    x = p.input("x")
    p.output("y", (x * x).rotate(1) * 0.5 + x)
    assert program_depth(p) == 2 and program_depth(p.ir) == 2
    assert fhec.CKKSParams.for_program(p, precision_bits=10, explain=False).levels == 2


def test_wider_words_reach_more_precision(capsys):
    p = fhec.CKKSParams.for_program(3, precision_bits=40, word_bits=60)
    assert p.levels == 3 and p.scale_bits > 40 and p.word_bits == 60 and "60-bit" in capsys.readouterr().out


def test_bgv_by_plaintext_modulus_and_depth(capsys):
    p = fhec.BGVParams.for_program(4, plain_modulus=65537)
    assert (p.levels, p.plain_modulus, p.N) == (4, 65537, 2**13) and p.log_qp <= 218
    assert "t=65537" in capsys.readouterr().out
    assert fhec.BGVParams.for_program(2, 257, security=None, explain=False).N == 2**5


@pytest.mark.parametrize("call, message", [
    (lambda: fhec.CKKSParams.for_program(5, precision_bits=30), "Ask for fewer bits, a wider word"),
    (lambda: fhec.CKKSParams.for_program(-1), "depth"),
    (lambda: fhec.CKKSParams.for_program("deep"), "takes a multiplicative depth"),
    (lambda: fhec.CKKSParams.for_program(2, precision_bits=float("nan")), "precision_bits"),
    (lambda: fhec.CKKSParams.for_program(2, security=100), "128, 192 or 256"),
    (lambda: fhec.CKKSParams.for_program(2, min_N=1000), "power of two"),
    (lambda: fhec.BGVParams.for_program(3, plain_modulus=257), "batches t = 257"),
])
def test_impossible_requests_say_what_to_change(call, message):
    with pytest.raises(fhec.ParameterError, match=message):
        call()


def test_min_N_follows_a_target():
    assert fhec.CKKSParams.for_program(1, precision_bits=8, security=None, min_N=2**10, explain=False).N == 2**10


def test_the_documented_line_is_what_for_program_prints(capsys):
    from pathlib import Path

    fhec.CKKSParams.for_program(1, precision_bits=12)
    line = capsys.readouterr().out.strip()
    assert f"`{line}`" in (Path(__file__).resolve().parents[2] / "docs" / "dsl.md").read_text()


@settings(max_examples=12, deadline=None)
@given(depth=st.integers(0, 4), bits=st.integers(6, 14), seed=st.integers(0, 2**16))
def test_chosen_parameters_keep_their_promise(depth, bits, seed):
    """Over random requests (insecure small rings included), a chain of `depth` products
    of random inputs in [-1, 1] decrypts within `bits` bits on the eager evaluator."""
    params = fhec.CKKSParams.for_program(depth, precision_bits=bits, security=None, explain=False)
    p = fhec.Program("chain", params)
    x = z = p.input("x")
    y = p.input("y") if depth else None
    for _ in range(depth):
        z = z * y
    p.output("z", z)
    rng = np.random.default_rng(seed)
    xs, ys = rng.uniform(-1, 1, params.slots), rng.uniform(-1, 1, params.slots)
    inputs = {"x": xs, "y": ys} if depth else {"x": xs}
    got = fhec.evaluate(p, inputs, seed=seed)["z"]
    assert -math.log2(np.max(np.abs(got - xs * ys**depth))) >= bits
