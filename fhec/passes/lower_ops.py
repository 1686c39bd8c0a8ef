"""Limb-instruction emitters for every HE operation: CKKS/BGV *as an accelerator runs them*.

This module is the compiler's implementation of each HE op (ARCHITECTURE.md, "One
implementation of each HE op"). Each method takes the rvec ids of its operands (numpy
int32 arrays of shape ``(parts, limbs)``: one rvec per ciphertext polynomial and RNS
limb) and emits limb instructions through a `LimbProgramBuilder`, returning the rvec ids
of the result. It computes, residue for residue, what the eager evaluator
(`fhec.schemes.evaluator`, `fhec.schemes.keyswitch`, `fhec.ring.rns.divide_by_dropped`)
computes, using the same constants: that is what makes compiled execution bit-identical.

Modulus indices: limb i of Q is modulus index i; special prime j is ``max_limbs + j``
(the order of `LimbProgram.moduli`).

Key-switch hints are loaded data with an identity (key, digit, component, key row),
created once per identity, so every reuse of a hint limb reads the same rvec and the
schedulers see the reuse (F1 §4.2).
"""

from __future__ import annotations

import numpy as np

from fhec.ir.limb import LimbOp, LimbProgramBuilder, RVecClass
from fhec.ring.rns import bconv_constants, product
from fhec.schemes.params import Params


class LimbEmitter:
    """Emits the limb instructions of HE ops for one parameter set into one builder.

    Every emitted instruction is tagged with the HE node it implements: `he_node`, fixed
    per emitter. `for_node(id)` gives an emitter for another node that shares the
    builder and the constant and hint caches (emitters are never retagged in place).
    """

    def __init__(self, params: Params, builder: LimbProgramBuilder | None = None, he_node: int = -1):
        self.params = params
        self.all_moduli = params.moduli + params.special_moduli
        self.builder = builder or LimbProgramBuilder(params.N, params.word_bits, self.all_moduli)
        self.he_node = he_node
        self._ksh: dict[tuple[int, int, int], np.ndarray] = {}
        self._const_cache: dict[tuple[int, int], int] = {}

    def for_node(self, he_node: int) -> "LimbEmitter":
        """An emitter tagging with `he_node`, sharing this one's builder and caches."""
        em = type(self).__new__(type(self))  # a shallow copy, without copy.copy's generic protocol (one per HE node)
        em.__dict__.update(self.__dict__)
        em.he_node = he_node
        return em

    # -- primitives ----------------------------------------------------------------

    def _mods(self, n_limbs: int) -> np.ndarray:
        return np.arange(n_limbs, dtype=np.int64)

    def special_mods(self, level: int) -> np.ndarray:
        """Modulus indices of the special primes a key switch at `level` extends to (its
        basis's prefix of P)."""
        return self.params.max_limbs + np.arange(self.params.alpha_at(level), dtype=np.int64)

    def op(self, op: LimbOp, src0, src1=-1, *, mod, imm=-1) -> np.ndarray:
        """Emit one instruction per element of the (broadcast) operands; returns the new rvecs."""
        return self.builder.emit_new(op, src0, src1, mod=mod, imm=imm, he_node=self.he_node)

    def constants(self, values, mods) -> np.ndarray:
        """Constant-table indices of per-modulus constants (deduplicated)."""
        keys = [(int(v), int(m)) for v, m in zip(values, mods)]
        cache = self._const_cache
        new = [key for key in dict.fromkeys(keys) if key not in cache]  # first occurrences, in order
        if new:  # appended in one call, at the indices one call per constant would give
            first = int(self.builder.add_constants([v for v, _ in new])[0])
            cache.update((key, first + i) for i, key in enumerate(new))
        return np.array([cache[key] for key in keys], dtype=np.int64)

    def mul_const(self, src, consts, mods) -> np.ndarray:
        """src[i] · consts[i] mod moduli[mods[i]] (constants already reduced)."""
        return self.op(LimbOp.MUL_CONST, src, mod=mods, imm=self.constants(consts, mods))

    def input_rvecs(self, name: str, parts: int, limbs: int) -> np.ndarray:
        """Loaded INPUT rvecs of a ciphertext input: shape (parts, limbs)."""
        idx = self.builder.add_name(RVecClass.INPUT, name)
        P, L = np.meshgrid(np.arange(parts), np.arange(limbs), indexing="ij")
        tags = np.stack([np.full(P.size, idx), P.ravel(), L.ravel()], axis=1)
        return self.builder.new_rvecs(RVecClass.INPUT, L.ravel(), tags).reshape(parts, limbs)

    def const_rvecs(self, name: str, mods: "int | np.ndarray") -> np.ndarray:
        """Loaded CONST rvecs of one plaintext (NTT domain), one per modulus index in
        `mods` (a limb count for Q's prefix, or explicit indices: Q's prefix then P for
        an extended one), tagged by position."""
        mods = np.arange(mods) if np.ndim(mods) == 0 else np.asarray(mods)
        idx = self.builder.add_name(RVecClass.CONST, name)
        tags = np.stack([np.full(len(mods), idx), np.arange(len(mods))], axis=1)
        return self.builder.new_rvecs(RVecClass.CONST, np.asarray(mods), tags)

    def ksh_rvecs(self, key_name: str, digit: int, component: int, rows: np.ndarray) -> np.ndarray:
        """KSH rvecs of one key digit/component at the given key rows (created once each)."""
        kidx = self.builder.add_name(RVecClass.KSH, key_name)
        total = self.params.max_limbs + len(self.params.special_moduli)
        cache = self._ksh.setdefault((kidx, digit, component), np.full(total, -1, dtype=np.int64))
        missing = rows[cache[rows] < 0]
        if len(missing):
            tags = np.stack(
                [np.full(len(missing), kidx), np.full(len(missing), digit), np.full(len(missing), component), missing],
                axis=1,
            )
            cache[missing] = self.builder.new_rvecs(RVecClass.KSH, missing, tags)
        return cache[rows].astype(np.int32)

    # -- ciphertext arithmetic ------------------------------------------------------

    def add(self, a: np.ndarray, b: np.ndarray, subtract: bool = False) -> np.ndarray:
        """Part-wise a ± b; a part present in only one operand passes through (negated for b − )."""
        parts, limbs = max(a.shape[0], b.shape[0]), a.shape[1]
        mods = self._mods(limbs)
        both = min(a.shape[0], b.shape[0])
        # The parts both operands have, in one call: the same rows, in the same order, as
        # one call per part (a wide program lowers hundreds of thousands of these).
        summed = self.op(LimbOp.SUB if subtract else LimbOp.ADD, a[:both].ravel(), b[:both].ravel(),
                         mod=np.concatenate([mods] * both))
        out = list(summed.reshape(both, limbs))
        for i in range(both, parts):
            if i < a.shape[0]:
                out.append(a[i])
            else:
                out.append(self.op(LimbOp.NEG, b[i], mod=mods) if subtract else b[i])
        return np.stack(out)

    def negate(self, a: np.ndarray) -> np.ndarray:
        return np.stack([self.op(LimbOp.NEG, p, mod=self._mods(a.shape[1])) for p in a])

    def add_plain(self, a: np.ndarray, pt: np.ndarray, subtract: bool = False) -> np.ndarray:
        """c0 ± pt; the other parts pass through."""
        c0 = self.op(LimbOp.SUB if subtract else LimbOp.ADD, a[0], pt, mod=self._mods(a.shape[1]))
        return np.concatenate([c0[None], a[1:]])

    def add_scalar(self, a: np.ndarray, k: int) -> np.ndarray:
        """c0 + k (k an integer: a constant polynomial, the same in every NTT word), one
        ADD_CONST per limb with k reduced mod the limb's prime; the other parts pass through."""
        limbs = a.shape[1]
        mods = self._mods(limbs)
        consts = [k % q for q in self.params.moduli[:limbs]]
        c0 = self.op(LimbOp.ADD_CONST, a[0], mod=mods, imm=self.constants(consts, mods))
        return np.concatenate([c0[None], a[1:]])

    def mul_plain(self, a: np.ndarray, pt: np.ndarray) -> np.ndarray:
        return np.stack([self.op(LimbOp.MUL, p, pt, mod=self._mods(a.shape[1])) for p in a])

    def mul_integer(self, a: np.ndarray, c: int) -> np.ndarray:
        """Every part times the integer c (reduced mod each limb's prime)."""
        limbs = a.shape[1]
        consts = [c % q for q in self.params.moduli[:limbs]]
        return np.stack([self.mul_const(p, consts, self._mods(limbs)) for p in a])

    def multiply(self, a: np.ndarray, b: np.ndarray, square: bool = False, karatsuba: bool = False) -> np.ndarray:
        """Tensor product of two 2-part ciphertexts, (a0·b0, a0·b1 + a1·b0, a1·b1).

        A square (`square`: b is a) takes three limb products: its two cross products are
        one, doubled (d1 = a0·a1 + a0·a1). Any other product takes four and one addition, or
        under `karatsuba` three and four additions, d1 = (a0 + a1)(b0 + b1) − d0 − d2 (as
        `Evaluator._multiply_ct` computes it). Every identity holds mod q, so every residue
        is the schoolbook one."""
        limbs = a.shape[1]
        mods = self._mods(limbs)
        three = np.concatenate([mods] * 3)
        if square:
            # a0·a0, a0·a1, a1·a1 in one call: the rows three calls would emit, in order
            d0, cross, d2 = self.op(LimbOp.MUL, np.concatenate([a[0], a[0], a[1]]), np.concatenate([a[0], a[1], a[1]]),
                                    mod=three).reshape(3, limbs)
            return np.stack([d0, self.op(LimbOp.ADD, cross, cross, mod=mods), d2])
        if karatsuba:
            sa, sb = self.op(LimbOp.ADD, np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]]),
                             mod=np.concatenate([mods] * 2)).reshape(2, limbs)
            d0, d2, m = self.op(LimbOp.MUL, np.concatenate([a[0], a[1], sa]), np.concatenate([b[0], b[1], sb]),
                                mod=three).reshape(3, limbs)
            d1 = self.op(LimbOp.SUB, self.op(LimbOp.SUB, m, d0, mod=mods), d2, mod=mods)
            return np.stack([d0, d1, d2])
        # a0·b0, a0·b1 and a1·b0 in one call: the rows three calls would emit, in order
        d0, m01, m10 = self.op(LimbOp.MUL, np.concatenate([a[0], a[0], a[1]]), np.concatenate([b[0], b[1], b[0]]),
                               mod=three).reshape(3, limbs)
        d1 = self.op(LimbOp.ADD, m01, m10, mod=mods)
        d2 = self.op(LimbOp.MUL, a[1], b[1], mod=mods)
        return np.stack([d0, d1, d2])

    def automorphism(self, a: np.ndarray, g: int) -> np.ndarray:
        return np.stack([self.op(LimbOp.AUT, p, mod=self._mods(a.shape[1]), imm=g) for p in a])

    # -- division by dropped primes (rescale, BGV mod switch, mod-down) -----------------

    def fast_base_convert(self, y, src_mods, dst_mods, pre=None, post=None) -> np.ndarray:
        """Limb form of `fhec.ring.rns.fast_base_convert` on coefficient-domain rvecs `y`."""
        src = tuple(self.all_moduli[m] for m in src_mods)
        dst = tuple(self.all_moduli[m] for m in dst_mods)
        first, second = bconv_constants(src, dst, pre, post)
        # Multiplying by 1 is the identity, so skipping it leaves every residue unchanged.
        scaled = np.array(y, dtype=np.int64)
        ones = first == 1
        if not ones.all():
            idx = np.flatnonzero(~ones)
            scaled[idx] = self.mul_const(scaled[idx], first[idx], np.asarray(src_mods)[idx])
        out = np.empty(len(dst_mods), dtype=np.int64)
        acc = None
        for i in range(len(src_mods)):
            term = self.op(
                LimbOp.BCONV, scaled[i], mod=dst_mods, imm=self.constants(second[:, i], dst_mods)
            )
            acc = term if acc is None else self.op(LimbOp.ADD, acc, term, mod=dst_mods)
        out[:] = acc
        return out

    def divide_by_dropped(self, x: np.ndarray, keep_mods, drop_mods, t: int | None) -> np.ndarray:
        """Limb form of `fhec.ring.rns.divide_by_dropped` on one polynomial (rvecs keep, then drop)."""
        keep_mods = np.asarray(keep_mods, dtype=np.int64)
        drop_mods = np.asarray(drop_mods, dtype=np.int64)
        keep = tuple(self.all_moduli[m] for m in keep_mods)
        drop = tuple(self.all_moduli[m] for m in drop_mods)
        k = len(keep_mods)
        dropped = self.op(LimbOp.INTT, x[k:], mod=drop_mods)
        D = product(drop)
        if t is None:
            pre, post = None, tuple((-pow(D % q, -1, q)) % q for q in keep)
        else:
            pre = tuple((-pow(t, -1, d)) % d for d in drop)
            post = tuple((t * pow(D % q, -1, q)) % q for q in keep)
        conv = self.op(LimbOp.NTT, self.fast_base_convert(dropped, drop_mods, keep_mods, pre, post), mod=keep_mods)
        inv_D = [pow(D % q, -1, q) for q in keep]
        return self.op(LimbOp.ADD, self.mul_const(x[:k], inv_D, keep_mods), conv, mod=keep_mods)

    def divide_last(self, a: np.ndarray, t: int | None) -> np.ndarray:
        """Rescale (t=None) or BGV modulus switch: every part divided by its last limb's prime."""
        limbs = a.shape[1]
        return np.stack([self.divide_by_dropped(p, self._mods(limbs - 1), [limbs - 1], t) for p in a])

    # -- key switching --------------------------------------------------------------

    def _ks_basis_mods(self, level: int, method: str) -> np.ndarray:
        limbs = self.params.limbs_at(level)
        if method == "bv":
            return self._mods(limbs)
        return np.concatenate([self._mods(limbs), self.special_mods(level)])

    def _digit_groups(self, level: int, method: str) -> tuple[tuple[int, ...], ...]:
        if method == "bv":
            return tuple((i,) for i in range(self.params.limbs_at(level)))
        return self.params.digit_groups(level)

    def digit_intt(self, x: np.ndarray, group: tuple[int, ...]) -> np.ndarray:
        """The coefficient-domain residues of one digit's source limbs (its INTTs)."""
        g = np.array(group)
        return self.op(LimbOp.INTT, x[g], mod=g)

    def digit_extend(self, x: np.ndarray, y: np.ndarray, group: tuple[int, ...], level: int, method: str) -> np.ndarray:
        """One digit over the key-switching basis from its INTT'd source limbs `y`."""
        basis_mods = self._ks_basis_mods(level, method)
        g = np.array(group)
        others = np.array([m for m in range(len(basis_mods)) if m not in group], dtype=np.int64)
        d = np.empty(len(basis_mods), dtype=np.int64)
        d[g] = x[g]
        if len(others):
            dst = basis_mods[others]
            if method == "bv":
                # F1 Listing 1, line 8: NTT(y[i], q_j) reads the residue of q_i directly.
                d[others] = self.op(LimbOp.NTT, y[0], mod=dst)
            else:
                d[others] = self.op(LimbOp.NTT, self.fast_base_convert(y, g, dst), mod=dst)
        return d

    def mod_up_digit(self, x: np.ndarray, group: tuple[int, ...], level: int, method: str) -> np.ndarray:
        """One digit of `fhec.schemes.keyswitch.decompose`, over the key-switching basis."""
        return self.digit_extend(x, self.digit_intt(x, group), group, level, method)

    def mod_up(self, x: np.ndarray, level: int, method: str) -> list[np.ndarray]:
        """Limb form of `fhec.schemes.keyswitch.decompose`: the digits over the key-switching basis."""
        return [self.mod_up_digit(x, g, level, method) for g in self._digit_groups(level, method)]

    def key_rows(self, level: int, method: str) -> np.ndarray:
        """Key rows used at `level`: a prefix of Q's limbs, then P (hybrid). Row r lives mod all_moduli[r]."""
        return self._ks_basis_mods(level, method)

    def key_mult_digit(self, acc, d: int, digit: np.ndarray, key_name: str, level: int, method: str):
        """acc + digit_d · (ksh_d0, ksh_d1) (acc = [None, None] to start)."""
        rows = self.key_rows(level, method)
        out = []
        for comp in (0, 1):
            term = self.op(LimbOp.MUL, digit, self.ksh_rvecs(key_name, d, comp, rows), mod=rows)
            out.append(term if acc[comp] is None else self.op(LimbOp.ADD, acc[comp], term, mod=rows))
        return out

    def key_mult(self, digits: list[np.ndarray], key_name: str, level: int, method: str) -> np.ndarray:
        """Limb form of `fhec.schemes.keyswitch.key_mult`: Σ_d digit_d · (ksh_d0, ksh_d1)."""
        acc = [None, None]
        for d, digit in enumerate(digits):
            acc = self.key_mult_digit(acc, d, digit, key_name, level, method)
        return np.stack(acc)

    def mod_down(self, u: np.ndarray, level: int) -> np.ndarray:
        """Limb form of `fhec.schemes.keyswitch.mod_down` on both key-switch outputs."""
        t = self.params.plain_modulus if self.params.scheme == "bgv" else None
        limbs = self.params.limbs_at(level)
        return np.stack([self.divide_by_dropped(p, self._mods(limbs), self.special_mods(level), t) for p in u])

    def digits_times_hint(
        self, x: np.ndarray, key_name: str, level: int, method: str, key_mult: "LimbEmitter | None" = None
    ) -> np.ndarray:
        """Mod-up of polynomial x fused with its key_mult: Σ_d digit_d · (ksh_d0, ksh_d1),
        over the key-switching basis (before any mod-down). This is the one digit loop of
        every key switch, whole or expanded.

        The INTTs of all digits come first (one coefficient-domain RVec per limb: they
        let the NTT units start on every digit at once instead of waiting on one INTT at a
        time); then digits are extended and consumed one at a time (each digit's product
        with the hint right after the digit), which keeps at most one extended digit
        live. This emitter tags the mod-up instructions; `key_mult` (default: this one)
        tags the products.
        """
        key_mult = key_mult or self
        groups = self._digit_groups(level, method)
        ys = [self.digit_intt(x, g) for g in groups]
        acc = [None, None]
        for d, (group, y) in enumerate(zip(groups, ys)):
            digit = self.digit_extend(x, y, group, level, method)
            acc = key_mult.key_mult_digit(acc, d, digit, key_name, level, method)
        return np.stack(acc)

    def key_switch(self, x: np.ndarray, key_name: str, level: int, method: str) -> np.ndarray:
        """(u0, u1) for polynomial x: mod_up → key_mult (→ mod_down for hybrid)."""
        u = self.digits_times_hint(x, key_name, level, method)
        return self.mod_down(u, level) if method == "hybrid" else u

    # -- double hoisting: values over Q·P ------------------------------------------------

    def ext_mods(self, level: int) -> np.ndarray:
        """Modulus indices of a value over Q_level·P: Q's prefix, then the special primes."""
        return self._ks_basis_mods(level, "hybrid")

    def times_p_plus(self, t: np.ndarray, u: np.ndarray, subtract: bool = False) -> np.ndarray:
        """P·t + u (u − P·t with `subtract`) over Q·P for one polynomial t over Q: P·t on
        Q's limbs only (it vanishes mod P), so u's special limbs pass through
        (`Evaluator.times_p_plus`)."""
        mods, L = self._mods(t.shape[0]), t.shape[0]
        P = product(self.params.special_moduli_at(L - self.params.base_limbs))  # t's level's P
        scaled = self.mul_const(t, [P % q for q in self.params.moduli[:L]], mods)
        low = self.op(LimbOp.SUB, u[:L], scaled, mod=mods) if subtract else self.op(LimbOp.ADD, scaled, u[:L], mod=mods)
        return np.concatenate([low, u[L:]])

    def ks_add_ext(self, t: np.ndarray, u: np.ndarray, level: int) -> np.ndarray:
        """(P·t0 + u0, u1) over Q·P for a 2-part t (a rotation's), (P·t0 + u0, P·t1 + u1)
        for a 3-part t (a relinearization's)."""
        c1 = self.times_p_plus(t[1], u[1]) if t.shape[0] == 3 else u[1]
        return np.stack([self.times_p_plus(t[0], u[0]), c1])

    def add_ext_q(self, x: np.ndarray, c: np.ndarray, subtract: bool = False) -> np.ndarray:
        """x ± P·c over Q·P for a 2-part c over Q."""
        return np.stack([self.times_p_plus(p, d, subtract) for p, d in zip(c, x)])

    def rescale_ext(self, x: np.ndarray, level: int) -> np.ndarray:
        """Limb form of `Evaluator.rescale_extended`: every part of a value over Q_level·P
        divided by P·q_level (rows: Q's limbs, then P's, i.e. the kept limbs, then the dropped)."""
        L = self.params.limbs_at(level)
        drop = np.concatenate([[L - 1], self.special_mods(level)])
        return np.stack([self.divide_by_dropped(p, self._mods(L - 1), drop, None) for p in x])

    def relinearize_ext(self, a: np.ndarray, key_name: str, level: int) -> np.ndarray:
        """A whole hybrid relinearization without its mod-down: (P·c0 + u0, P·c1 + u1) over Q·P."""
        return self.ks_add_ext(a, self.digits_times_hint(a[2], key_name, level, "hybrid"), level)

    def rotate_ext(self, a: np.ndarray, g: int, key_name: str, level: int) -> np.ndarray:
        """A whole hybrid rotation without its mod-down: (P·σ_g(c0) + u0, u1) over Q·P."""
        rot = self.automorphism(a, g)
        return self.ks_add_ext(rot, self.digits_times_hint(rot[1], key_name, level, "hybrid"), level)

    def ext_mul_plain(self, a: np.ndarray, pt: np.ndarray, level: int) -> np.ndarray:
        mods = self.ext_mods(level)
        return np.stack([self.op(LimbOp.MUL, p, pt, mod=mods) for p in a])

    def ext_add(self, a: np.ndarray, b: np.ndarray, level: int) -> np.ndarray:
        mods = self.ext_mods(level)
        return np.stack([self.op(LimbOp.ADD, x, y, mod=mods) for x, y in zip(a, b)])

    def relinearize(self, a: np.ndarray, key_name: str, level: int, method: str) -> np.ndarray:
        u = self.key_switch(a[2], key_name, level, method)
        return self.add(a[:2], u)

    def switch_secret(self, a: np.ndarray, key_name: str, level: int, method: str) -> np.ndarray:
        """(c0 + u0, u1) for the key switch of c1 (`Evaluator.key_switch`)."""
        u = self.key_switch(a[1], key_name, level, method)
        c0 = self.op(LimbOp.ADD, a[0], u[0], mod=self._mods(a.shape[1]))
        return np.stack([c0, u[1]])

    def rotate(self, a: np.ndarray, g: int, key_name: str, level: int, method: str) -> np.ndarray:
        """σ_g on both parts, key switch of σ_g(c1), then (σ_g(c0) + u0, u1)."""
        rot = self.automorphism(a, g)
        u = self.key_switch(rot[1], key_name, level, method)
        c0 = self.op(LimbOp.ADD, rot[0], u[0], mod=self._mods(a.shape[1]))
        return np.stack([c0, u[1]])
