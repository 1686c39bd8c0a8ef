"""Tests of the functional executor of limb programs against Python-int references."""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fhec.errors import InternalError
from fhec.ir.limb import LimbOp, LimbProgram, LimbProgramBuilder, RVecClass
from fhec.ring.ntt import ntt_eval_exponents, primitive_2n_root
from fhec.ring.primes import ntt_primes
from fhec.sim.functional import _batch_runs, execute

# --- Python-int reference semantics ---------------------------------------------------


def negacyclic_mul(a: list[int], b: list[int], q: int) -> list[int]:
    N = len(a)
    out = [0] * N
    for i in range(N):
        for j in range(N):
            if i + j < N:
                out[i + j] += a[i] * b[j]
            else:
                out[i + j - N] -= a[i] * b[j]
    return [x % q for x in out]


def sigma_coeff(a: list[int], k: int, q: int) -> list[int]:
    """a(X) -> a(X^k) mod X^N + 1, coefficient by coefficient."""
    N = len(a)
    out = [0] * N
    for i, x in enumerate(a):
        pos = i * k % (2 * N)
        if pos < N:
            out[pos] = (out[pos] + x) % q
        else:
            out[pos - N] = (out[pos - N] - x) % q
    return out


class Reference:
    """Evaluates every LimbOp with Python ints, by its definition: slot i of the NTT
    domain holds a(psi ** e[i]) with the ring's evaluation exponents e."""

    def __init__(self, N: int):
        self.N = N
        self.e = [int(x) for x in ntt_eval_exponents(N)]

    def ntt(self, a: list[int], q: int) -> list[int]:
        psi = primitive_2n_root(self.N, q)
        return [sum(c * pow(psi, ei * j, q) for j, c in enumerate(a)) % q for ei in self.e]

    def intt(self, v: list[int], q: int) -> list[int]:
        psi_inv = pow(primitive_2n_root(self.N, q), -1, q)
        n_inv = pow(self.N, -1, q)
        return [n_inv * sum(x * pow(psi_inv, ei * j, q) for ei, x in zip(self.e, v)) % q for j in range(self.N)]

    def aut(self, v: list[int], k: int) -> list[int]:
        slot = {ei: i for i, ei in enumerate(self.e)}
        return [v[slot[ei * k % (2 * self.N)]] for ei in self.e]

    def run(self, p: LimbProgram, inputs: dict[int, list[int]]) -> dict[int, list[int]]:
        vals = {r: [int(x) for x in v] for r, v in inputs.items()}
        C = [int(c) for c in p.constants]
        for i in range(len(p)):
            op, q = LimbOp(int(p.op[i])), p.moduli[int(p.mod[i])]
            src_q = p.moduli[int(p.rvec_mod[int(p.src0[i])])]
            # a residue of another prime is read as its centered representative
            a = [(x - src_q if x > src_q // 2 else x) % q for x in vals[int(p.src0[i])]]
            b = vals.get(int(p.src1[i]))
            imm = int(p.imm[i])
            result = {
                LimbOp.NTT: lambda: self.ntt(a, q),
                LimbOp.INTT: lambda: self.intt(a, q),
                LimbOp.MUL: lambda: [x * y % q for x, y in zip(a, b)],
                LimbOp.MUL_CONST: lambda: [x * C[imm] % q for x in a],
                LimbOp.ADD: lambda: [(x + y) % q for x, y in zip(a, b)],
                LimbOp.SUB: lambda: [(x - y) % q for x, y in zip(a, b)],
                LimbOp.NEG: lambda: [-x % q for x in a],
                LimbOp.AUT: lambda: self.aut(a, imm),
                LimbOp.BCONV: lambda: [x * C[imm] % q for x in a],
                LimbOp.ADD_CONST: lambda: [(x + C[imm]) % q for x in a],
            }[op]()
            vals[int(p.dst[i])] = result
        return {int(r): vals[int(r)] for r in p.rvec_ids(RVecClass.OUTPUT)}


def random_inputs(p: LimbProgram, seed: int) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    loaded = np.flatnonzero(p.rvec_class <= RVecClass.CONST)
    return {int(r): rng.integers(0, p.moduli[int(p.rvec_mod[r])], p.N, dtype=np.uint64) for r in loaded}


# --- hand-built programs ---------------------------------------------------------------

N = 64
Q = ntt_primes(N, 30, 1) + ntt_primes(N, 20, 1)  # q0 > 4 q1: the NTT must reduce foreign inputs


def test_product_plus_constant_with_ntt_round_trips():
    """out_j = INTT(NTT(a_j) * NTT(b_j)) + c_j for two limbs equals (a*b + c) mod q_j."""
    b = LimbProgramBuilder(N, 32, Q)
    names = [b.add_name(RVecClass.INPUT, n) for n in ("a", "b")]
    c_name = b.add_name(RVecClass.CONST, "c")
    y = b.add_name(RVecClass.OUTPUT, "y")
    limbs = [0, 1]
    a_in = b.new_rvecs(RVecClass.INPUT, limbs, [[names[0], 0, j] for j in limbs])
    b_in = b.new_rvecs(RVecClass.INPUT, limbs, [[names[1], 0, j] for j in limbs])
    c_in = b.new_rvecs(RVecClass.CONST, limbs, [[c_name, j] for j in limbs])
    out = b.new_rvecs(RVecClass.OUTPUT, limbs, [[y, 0, j] for j in limbs])
    for j in limbs:
        fa, fb = b.emit_new([LimbOp.NTT, LimbOp.NTT], [a_in[j], b_in[j]], mod=j)  # one batch
        prod = b.emit_new(LimbOp.MUL, fa, fb, mod=j)
        coeff = b.emit_new(LimbOp.INTT, prod, mod=j)
        b.emit(LimbOp.ADD, out[j], coeff, c_in[j])
    p = b.build()
    inputs = random_inputs(p, 1)

    got = execute(p, inputs)

    assert sorted(got) == out.tolist()
    for j in limbs:
        q = Q[j]
        av, bv, cv = ([int(x) for x in inputs[int(r[j])]] for r in (a_in, b_in, c_in))
        expect = [(x + y) % q for x, y in zip(negacyclic_mul(av, bv, q), cv)]
        assert got[int(out[j])].tolist() == expect
        assert got[int(out[j])].dtype == np.uint64


def test_foreign_modulus_ops_automorphism_and_constants():
    """NTT and BCONV of a residue of q0 computed mod q1 read its centered lift
    (F1 Listing 1 line 8), AUT in the NTT domain equals sigma_k on coefficients,
    MUL_CONST, SUB, NEG."""
    b = LimbProgramBuilder(N, 32, Q)
    x = b.new_rvecs(RVecClass.INPUT, 0, [b.add_name(RVecClass.INPUT, "x"), 0, 0])[0]
    o = b.add_name(RVecClass.OUTPUT, "o")
    outs = b.new_rvecs(RVecClass.OUTPUT, [1, 1, 0, 0], [[o, 0, i] for i in range(4)])
    c = b.add_constants([12345 % Q[1], 777])
    # INTT_q1(NTT_q1(x mod q1)) = x mod q1
    b.emit(LimbOp.INTT, outs[0], b.emit_new(LimbOp.NTT, x, mod=1))
    b.emit(LimbOp.BCONV, outs[1], x, imm=c[0])
    k = 2 * N - 3
    b.emit(LimbOp.INTT, outs[2], b.emit_new(LimbOp.AUT, b.emit_new(LimbOp.NTT, x, mod=0), mod=0, imm=k))
    scaled = b.emit_new(LimbOp.MUL_CONST, x, mod=0, imm=c[1])
    b.emit(LimbOp.SUB, outs[3], b.emit_new(LimbOp.NEG, scaled, mod=0), x)
    p = b.build()
    inputs = random_inputs(p, 2)
    xv = [int(v) for v in inputs[int(x)]]

    got = execute(p, inputs)

    q0, q1 = Q
    lifted = [(v - q0 if v > q0 // 2 else v) % q1 for v in xv]
    assert got[int(outs[0])].tolist() == lifted
    assert got[int(outs[1])].tolist() == [v * (12345 % q1) % q1 for v in lifted]
    assert got[int(outs[2])].tolist() == sigma_coeff(xv, k, q0)
    assert got[int(outs[3])].tolist() == [(-777 * v - v) % q0 for v in xv]


def test_independent_instructions_are_batched_and_chains_are_not():
    b = LimbProgramBuilder(N, 32, Q)
    x = b.new_rvecs(RVecClass.INPUT, [0] * 6, [[b.add_name(RVecClass.INPUT, "x"), 0, i] for i in range(6)])
    b.emit_new(LimbOp.NTT, x, mod=[0, 1, 0, 1, 1, 0])  # 6 independent NTTs: one run
    chain = x[0]
    for _ in range(3):
        chain = b.emit_new(LimbOp.NEG, chain, mod=0)  # dependent: three runs
    b.emit_new(LimbOp.NTT, x[:2], mod=1)  # other modulus: a new run
    assert _batch_runs(b.build()) == [6, 7, 8, 9, 11]


def test_values_are_freed_after_their_last_use():
    n_ops, big_n = 2000, 1 << 10
    (q,) = ntt_primes(big_n, 30, 1)
    b = LimbProgramBuilder(big_n, 32, (q,))
    x = b.new_rvecs(RVecClass.INPUT, 0, [b.add_name(RVecClass.INPUT, "x"), 0, 0])
    chain = x
    for _ in range(n_ops):
        chain = b.emit_new(LimbOp.NEG, chain, mod=0)
    out = b.new_rvecs(RVecClass.OUTPUT, 0, [b.add_name(RVecClass.OUTPUT, "y"), 0, 0])
    b.emit(LimbOp.NEG, out, chain)
    p = b.build()
    inputs = random_inputs(p, 3)
    tracemalloc.start()
    try:
        got = execute(p, inputs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got[int(out[0])].tolist() == [(-int(v)) % q for v in inputs[int(x[0])]]
    # Keeping all 2001 values would take 16 MB.
    assert peak < 2 * 1024 * 1024


def test_missing_or_bad_inputs_are_rejected():
    b = LimbProgramBuilder(N, 32, Q)
    x = b.new_rvecs(RVecClass.INPUT, 0, [b.add_name(RVecClass.INPUT, "x"), 0, 0])
    y = b.new_rvecs(RVecClass.OUTPUT, 0, [b.add_name(RVecClass.OUTPUT, "y"), 0, 0])
    b.emit(LimbOp.NEG, y, x)
    p = b.build()
    with pytest.raises(InternalError, match=r"no value for 1 loaded rvec\(s\), e.g. %0\(x.p0.l0\)"):
        execute(p, {})
    with pytest.raises(InternalError, match="not residues mod"):
        execute(p, {0: np.full(N, Q[0], dtype=np.uint64)})
    with pytest.raises(InternalError, match="has shape"):
        execute(p, {0: np.zeros(N + 1, dtype=np.uint64)})
    with pytest.raises(InternalError, match="not INPUT/KSH/CONST"):
        execute(p, {0: np.zeros(N, dtype=np.uint64), 1: np.zeros(N, dtype=np.uint64)})


# --- random programs against the reference ---------------------------------------------

SMALL_N = 16
SMALL_Q = ntt_primes(SMALL_N, 28, 1) + ntt_primes(SMALL_N, 20, 1) + ntt_primes(SMALL_N, 12, 1)


@st.composite
def random_programs(draw):
    b = LimbProgramBuilder(SMALL_N, 32, SMALL_Q)
    iname, oname = b.add_name(RVecClass.INPUT, "x"), b.add_name(RVecClass.OUTPUT, "y")
    n_in = draw(st.integers(1, 4))
    avail = b.new_rvecs(RVecClass.INPUT, [i % 3 for i in range(n_in)], [[iname, 0, i] for i in range(n_in)]).tolist()
    consts = {m: b.add_constants([draw(st.integers(0, q - 1)) for _ in range(2)]) for m, q in enumerate(SMALL_Q)}
    n_out = 0
    for _ in range(draw(st.integers(1, 30))):
        op = draw(st.sampled_from(list(LimbOp)))
        s0 = draw(st.sampled_from(avail))
        mod = int(b.rvec_mod(s0))
        if op in (LimbOp.NTT, LimbOp.BCONV):
            mod = draw(st.integers(0, len(SMALL_Q) - 1))
        same = [r for r in avail if int(b.rvec_mod(r)) == mod]
        s1 = draw(st.sampled_from(same)) if op in (LimbOp.MUL, LimbOp.ADD, LimbOp.SUB) else -1
        imm = -1
        if op == LimbOp.AUT:
            imm = draw(st.sampled_from(range(1, 2 * SMALL_N, 2)))
        elif op in (LimbOp.MUL_CONST, LimbOp.BCONV, LimbOp.ADD_CONST):
            imm = int(draw(st.sampled_from(list(consts[mod]))))
        if draw(st.booleans()):
            dst = int(b.new_rvecs(RVecClass.OUTPUT, mod, [oname, 0, n_out])[0])
            n_out += 1
        else:
            dst = int(b.new_rvecs(RVecClass.INTERMEDIATE, mod)[0])
        b.emit(op, dst, s0, s1, imm=imm)
        avail.append(dst)
    return b.build()


@settings(max_examples=60, deadline=None)
@given(random_programs(), st.integers(0, 2**32))
def test_random_programs_match_reference(p, seed):
    inputs = random_inputs(p, seed)
    expect = Reference(p.N).run(p, inputs)
    got = execute(p, inputs)
    assert {r: v.tolist() for r, v in got.items()} == expect


def test_reference_ntt_is_a_ring_homomorphism():
    """Self-check of the reference used above, independent of fhec.sim."""
    ref = Reference(SMALL_N)
    q = SMALL_Q[0]
    rnd = random.Random(5)
    a = [rnd.randrange(q) for _ in range(SMALL_N)]
    c = [rnd.randrange(q) for _ in range(SMALL_N)]
    assert ref.intt(ref.ntt(a, q), q) == a
    prod = [x * y % q for x, y in zip(ref.ntt(a, q), ref.ntt(c, q))]
    assert ref.intt(prod, q) == negacyclic_mul(a, c, q)
    assert ref.intt(ref.aut(ref.ntt(a, q), 5), q) == sigma_coeff(a, 5, q)
