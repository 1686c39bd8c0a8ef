"""The eager reference evaluator: every HE op, one short function over `fhec/ring`.

This is the second, independent implementation of CKKS/BGV that the compiled limb
programs are checked against bit for bit (ARCHITECTURE.md, "One implementation of each
HE op"). It favours clarity over speed, but every polynomial op is a vectorized numpy or
numba kernel over all limbs at once.

Operand rules (shared with the DSL's type inference through `fhec.schemes.rules`):

* Binary ops between ciphertexts at different levels first bring the higher one down:
  BGV by modulus switching, CKKS by dropping limbs when the scales already match,
  otherwise by one multiply-by-constant and rescale onto the other operand's scale.
* CKKS additions need equal scales (`ScaleMismatchError` otherwise: rescale first);
  BGV additions align plaintext factors by a constant multiply.
* Plaintexts and float constants multiplied into a CKKS ciphertext are encoded at the
  scale of the prime the next rescale removes, so rescaling restores the scale exactly.
  Python ints multiply exactly and leave the scale unchanged.
"""

from __future__ import annotations

import numbers

import numpy as np

from fhec.errors import (
    InvalidArgumentError,
    InvalidPlaintextError,
    MissingKeyError,
    MismatchedParametersError,
    MissingRelinearizationKeyError,
    MissingRotationKeyError,
    SchemeMismatchError,
)
from fhec.ring.automorphism import automorphism_ntt
from fhec.ring.modarith import add_mod, mul_const_mod, mul_mod, neg_mod, sub_mod
from fhec.ring.ntt import intt, ntt
from fhec.ring.rns import divide_by_dropped, fast_base_convert, product
from fhec.schemes import noise as nz
from fhec.schemes import rules
from fhec.schemes.ciphertext import Ciphertext, ExtendedCiphertext, Plaintext
from fhec.schemes.encryption import check_ciphertext, check_keys, encode, encode_scalar
from fhec.schemes.keys import (
    RELIN, SECRET_SWITCHES, KeySet, check_galois_element, galois_for_conjugation, galois_for_rotation,
)
from fhec.schemes.keyswitch import decompose, key_mult, key_switch
from fhec.schemes.keyswitch import mod_down as divide_by_p
from fhec.schemes.precision import check_keyswitch
from fhec.schemes.sampling import small_ntt
from fhec.validate import as_1d_array, as_choice, as_int, as_int_list, as_real, is_int


def _operand(values) -> np.ndarray:
    """A scalar (0-D) or a slot vector (1-D), checked to be numbers in at most one dimension."""
    return as_1d_array(values, "the operand", error=InvalidPlaintextError)


def encode_addend(params, values, level: int, scale) -> Plaintext:
    """A scalar or slot vector encoded to be added to a ciphertext at (level, scale)."""
    values = _operand(values)
    if values.ndim == 0:
        return encode_scalar(params, values.item(), level, scale)
    return encode(params, values, level, scale)


def encode_multiplier(params, values, level: int) -> Plaintext:
    """A scalar or slot vector encoded to multiply a level-`level` ciphertext: CKKS at
    `rules.plain_multiply_scale` (so the next rescale restores the scale), BGV with factor 1."""
    values = _operand(values)
    if values.ndim == 0:
        scale = None if params.scheme == "bgv" else rules.plain_multiply_scale(params, level)
        return encode_scalar(params, values.item(), level, scale)
    if params.scheme == "bgv":
        return encode(params, values, level)
    return encode(params, values, level, rules.plain_multiply_scale(params, level))


def monomial_plaintext(params, power: int, level: int) -> Plaintext:
    """X^power (X^N = -1) in NTT form at `level`, scale 1: what `multiply_monomial`
    multiplies by, and the CONST operand of its lowering."""
    N = params.N
    power %= 2 * N
    coeffs = np.zeros(N, dtype=np.int64)
    coeffs[power % N] = -1 if power >= N else 1
    return Plaintext(params, small_ntt(coeffs, params.moduli_at(level)), level, 1)


def _q(ct_or_moduli) -> np.ndarray:
    moduli = ct_or_moduli if isinstance(ct_or_moduli, tuple) else ct_or_moduli.moduli
    return np.array(moduli, dtype=np.uint64)



def _tensor_product(a: np.ndarray, b: np.ndarray, q, square: bool):
    """(a0·b0, a0·b1 + a1·b0, a1·b1) mod q with three products, as the lowering emits it
    (`LimbEmitter.multiply`): a square doubles its one cross product; any other product is
    Karatsuba's, (a0 + a1)(b0 + b1) − a0·b0 − a1·b1. Both equal the schoolbook sums mod q,
    and residues are canonical, so every word is the schoolbook one."""
    if square:
        cross = mul_mod(a[0], a[1], q)
        return mul_mod(a[0], a[0], q), add_mod(cross, cross, q), mul_mod(a[1], a[1], q)
    d0, d2 = mul_mod(a[0], b[0], q), mul_mod(a[1], b[1], q)
    m = mul_mod(add_mod(a[0], a[1], q), add_mod(b[0], b[1], q), q)
    return d0, sub_mod(sub_mod(m, d0, q), d2, q), d2

class Evaluator:
    """Evaluates HE ops on ciphertexts of one key set.

    Args:
        keys: the `KeySet` (a public-only copy is enough).
        keyswitch: default key-switching method, "bv" or "hybrid"; each op accepts a
            ``keyswitch=`` override. Default: the parameters' method if keys for it exist.
    """

    def __init__(self, keys: KeySet, keyswitch: str | None = None):
        self.keys = check_keys(keys)
        self.params = keys.params
        default = self.params.keyswitch if self.params.keyswitch in keys.methods else keys.methods[0]
        self.keyswitch = default if keyswitch is None else as_choice(keyswitch, "keyswitch", ("bv", "hybrid"))
        if self.keyswitch not in keys.methods:
            raise MissingKeyError(
                f"Evaluator(keys, keyswitch={keyswitch!r}), but the key set holds only "
                f"{' and '.join(keys.methods)} keys; generate them with keygen(params, ..., "
                f"keyswitch={keyswitch!r}) or keyswitch='both'."
            )

    # -- plumbing -------------------------------------------------------------------

    def _check(self, *cts: Ciphertext) -> None:
        for ct in cts:
            check_ciphertext(ct)
            if ct.params.fingerprint != self.params.fingerprint or ct.key_id != self.keys.key_id:
                raise MismatchedParametersError(
                    "the ciphertext belongs to another parameter or key set than this Evaluator; "
                    "evaluate it with an Evaluator built from the keys that encrypted it."
                )

    def _parts_op(self, ct: Ciphertext, fn) -> np.ndarray:
        return np.stack([fn(part) for part in ct.data])

    def encode(self, values, level: int | None = None, scale=None) -> Plaintext:
        """Encode values (see `fhec.schemes.encryption.encode`)."""
        return encode(self.params, values, level, scale)

    # -- levels and scales ----------------------------------------------------------

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """CKKS: divide by the last prime (exact, rounding down); level − 1, scale / q.

        Raises `LevelExhaustedError` at level 0, `SchemeMismatchError` for BGV (use mod_switch),
        `PrecisionError` when the result's scale would lie below 2 (a fresh ciphertext, at
        a scale near q: no bit of the value would be left).
        """
        self._check(ct)
        if self.params.scheme != "ckks":
            raise SchemeMismatchError("rescale is a CKKS operation; BGV ciphertexts use mod_switch().")
        rules.check_rescale_keeps_a_bit(self.params, ct.level, ct.scale, receiver="the ciphertext")
        level, scale = rules.rescale_result(self.params, ct.level, ct.scale)
        return self._divide_last(ct, level, scale, None)

    def mod_switch(self, ct: Ciphertext) -> Ciphertext:
        """Drop one level. BGV: modulus switching (divide by q with a t-preserving correction,
        factor ·q^{-1} mod t); CKKS: drop the last limb, keeping the scale.

        Raises `LevelExhaustedError` at level 0.
        """
        self._check(ct)
        level, scale = rules.mod_switch_result(self.params, ct.level, ct.scale)
        if self.params.scheme == "ckks":
            keep = self.params.limbs_at(level)
            return ct.with_(data=ct.data[:, :keep], level=level)
        return self._divide_last(ct, level, scale, self.params.plain_modulus)

    def _divide_last(self, ct: Ciphertext, level: int, scale, t: int | None) -> Ciphertext:
        keep, drop = ct.moduli[:-1], ct.moduli[-1:]
        data = self._parts_op(ct, lambda p: divide_by_dropped(p, keep, drop, t))
        return Ciphertext(self.params, data, level, scale, ct.key_id, nz.rescale_noise(self.params, ct.noise, drop[0]))

    def mod_switch_to(self, ct: Ciphertext, level: int) -> Ciphertext:
        """Repeated `mod_switch` down to `level` (0..ct.level)."""
        self._check(ct)
        level = self._target_level(ct, level)
        while ct.level > level:
            ct = self.mod_switch(ct)
        return ct

    def level_down(self, ct: Ciphertext, level: int, scale=None) -> Ciphertext:
        """Bring ct to `level` at `scale` (default: the level's canonical scale).

        CKKS: drop limbs when the scale already matches; otherwise drop to level+1,
        multiply by the integer constant of `rules.level_down_constant` and rescale.
        BGV: modulus switching (the factor changes; `add` aligns factors).
        """
        self._check(ct)
        level = self._target_level(ct, level)
        if ct.level == level:
            return ct
        if self.params.scheme == "bgv":
            return self.mod_switch_to(ct, level)
        if scale is not None:
            scale = as_real(scale, "scale", min=0.0, min_exclusive=True, error=InvalidArgumentError)
        target = self.params.scale_at(level) if scale is None else scale
        if rules.scales_match(self.params, ct.scale, target):
            return self.mod_switch_to(ct, level).with_(scale=ct.scale)
        c = rules.level_down_constant(self.params, ct.scale, ct.level, level, target_scale=target)
        ct = self.mod_switch_to(ct, level + 1)
        return self.rescale(self._times_integer(ct, c, scale=ct.scale * c))

    def multiply_monomial(self, ct: Ciphertext, power: int) -> Ciphertext:
        """ct × X^power, exactly (a signed permutation of the coefficients: the error keeps
        its size, the scale and level stay). In CKKS slot j is multiplied by
        ζ^(5^j·power); X^(N/2) multiplies every slot by i. Raises `InvalidArgumentError`
        for a non-integer power."""
        self._check(ct)
        power = as_int(power, "power", error=InvalidArgumentError, fix="X^power needs a whole power")
        pt = monomial_plaintext(self.params, power, ct.level)
        q = _q(ct)
        return ct.with_(data=self._parts_op(ct, lambda p: mul_mod(p, pt.data, q)))

    def mod_raise(self, ct: Ciphertext, level: int, scale) -> Ciphertext:
        """CKKS ModRaise (bootstrapping's first step): a level-0 ciphertext's coefficients,
        lifted to their centered representatives mod q_0 (one fast base conversion, exact
        for a single base prime), over every prime of `level`. The result decrypts to
        m + q_0·I for a small integer polynomial I; it is labelled with `scale`.

        Raises `SchemeMismatchError` for BGV, `InvalidArgumentError` unless ct is a 2-part
        level-0 ciphertext and 0 < level <= the top level.
        """
        self._check(ct)
        if self.params.scheme != "ckks":
            raise SchemeMismatchError("mod_raise is a CKKS (bootstrapping) operation.")
        if ct.level != 0 or ct.parts != 2:
            raise InvalidArgumentError(
                f"mod_raise needs a 2-part level-0 ciphertext, got {ct.parts} parts at level {ct.level}; "
                f"level_down(ct, 0) (and relinearize) it first.")
        level = as_int(level, "level", min=1, max=self.params.top_level, error=InvalidArgumentError,
                       fix=f"raise to a level in 1..{self.params.top_level}")
        scale = as_real(scale, "scale", min=0.0, min_exclusive=True, error=InvalidArgumentError)
        base = ct.moduli
        dst = self.params.moduli_at(level)[len(base):]
        data = np.stack([np.concatenate([p, ntt(fast_base_convert(intt(p, base), base, dst), dst)]) for p in ct.data])
        return Ciphertext(self.params, data, level, scale, ct.key_id, ct.noise)

    @staticmethod
    def _target_level(ct: Ciphertext, level) -> int:
        return as_int(level, "level", min=0, max=ct.level, error=InvalidArgumentError,
                      fix=f"a ciphertext at level {ct.level} can only go down to levels 0..{ct.level}")

    def _align(self, a: Ciphertext, b: Ciphertext, for_add: bool) -> tuple[Ciphertext, Ciphertext]:
        if a.level > b.level:
            a = self.level_down(a, b.level, b.scale if for_add else None) if for_add else self.mod_switch_to(a, b.level)
        elif b.level > a.level:
            b = self.level_down(b, a.level, a.scale if for_add else None) if for_add else self.mod_switch_to(b, a.level)
        if for_add and self.params.scheme == "bgv" and a.scale != b.scale:
            c = rules.bgv_align_constant(self.params, b.scale, a.scale)
            b = self._times_integer(b, c, scale=a.scale)
        if for_add:
            rules.check_add_scales(self.params, a.scale, b.scale)
        return a, b

    # -- additive ops ---------------------------------------------------------------

    def add(self, a: Ciphertext, b) -> Ciphertext:
        """a + b for b a Ciphertext, Plaintext, Python/numpy scalar or array of slot values."""
        return self._additive(a, b, add_mod, 1)

    def sub(self, a: Ciphertext, b) -> Ciphertext:
        """a − b (operands as for `add`)."""
        return self._additive(a, b, sub_mod, -1)

    def _additive(self, a: Ciphertext, b, op, sign: int) -> Ciphertext:
        self._check(a)
        if isinstance(b, Ciphertext):
            self._check(b)
            a, b = self._align(a, b, for_add=True)
            parts = max(a.parts, b.parts)
            q = _q(a)
            data = []
            for i in range(parts):
                if i < a.parts and i < b.parts:
                    data.append(op(a.data[i], b.data[i], q))
                elif i < a.parts:
                    data.append(a.data[i])
                else:
                    data.append(b.data[i] if sign > 0 else neg_mod(b.data[i], q))
            return Ciphertext(self.params, np.stack(data), a.level, a.scale, a.key_id, nz.add_noise(a.noise, b.noise))
        pt = b if isinstance(b, Plaintext) else self._encode_like(a, b)
        if pt.level != a.level:
            raise MismatchedParametersError(f"plaintext at level {pt.level} cannot be added to a level-{a.level} ciphertext")
        rules.check_add_scales(self.params, a.scale, pt.scale)
        c0 = op(a.data[0], pt.data, _q(a))
        return a.with_(data=np.concatenate([c0[None], a.data[1:]]))

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        """ct + pt (pt encoded at ct's level and scale)."""
        return self.add(ct, pt)

    def add_scalar(self, ct: Ciphertext, c) -> Ciphertext:
        """ct + c in every slot."""
        return self.add(ct, c)

    def _encode_like(self, ct: Ciphertext, values) -> Plaintext:
        return encode_addend(self.params, values, ct.level, ct.scale)

    def negate(self, a: Ciphertext) -> Ciphertext:
        """−a."""
        self._check(a)
        q = _q(a)
        return a.with_(data=self._parts_op(a, lambda p: neg_mod(p, q)))

    # -- multiplicative ops ---------------------------------------------------------

    def multiply(self, a: Ciphertext, b, *, relinearize: bool = True, keyswitch: str | None = None) -> Ciphertext:
        """a × b for b a Ciphertext (tensor product, then relinearization unless disabled),
        a Plaintext, an int (exact, scale unchanged), a float or an array of slot values
        (CKKS: encoded at `rules.plain_multiply_scale`).

        Raises `MissingRelinearizationKeyError` when relinearizing without the key.
        """
        self._check(a)
        if isinstance(b, Ciphertext):
            return self._multiply_ct(a, b, relinearize, keyswitch)
        if isinstance(b, Plaintext):
            return self.multiply_plain(a, b)
        if is_int(b):
            return self._times_integer(a, int(b), scale=a.scale)
        return self.multiply_plain(a, self._encode_for_multiply(a, b), magnitude=float(np.max(np.abs(b), initial=0.0)))

    def multiply_plain(self, ct: Ciphertext, pt: Plaintext, magnitude: float = 1.0) -> Ciphertext:
        """ct × pt; the scale multiplies (CKKS) / the factors multiply (BGV). `magnitude`:
        max |slot| of the plaintext's values when known (a constant, or a plain input's
        declared bound, which the DSL's type rule passes), which scales the error estimate
        (`noise.plain_multiply_noise`); 1 when nothing is known."""
        self._check(ct)
        if pt.level != ct.level:
            raise MismatchedParametersError(f"plaintext at level {pt.level} cannot multiply a level-{ct.level} ciphertext")
        q = _q(ct)
        data = self._parts_op(ct, lambda p: mul_mod(p, pt.data, q))
        scale = rules.multiply_scale(self.params, ct.scale, pt.scale)
        noise = nz.plain_multiply_noise(self.params, ct.noise, ct.scale, float(pt.scale) if self.params.scheme == "ckks" else 1.0,
                                        magnitude)
        return Ciphertext(self.params, data, ct.level, scale, ct.key_id, noise)

    def multiply_scalar(self, ct: Ciphertext, c) -> Ciphertext:
        """ct × c (see `multiply`)."""
        return self.multiply(ct, c)

    def _encode_for_multiply(self, ct: Ciphertext, values) -> Plaintext:
        return encode_multiplier(self.params, values, ct.level)

    def _times_integer(self, ct: Ciphertext, c: int, scale) -> Ciphertext:
        moduli = ct.moduli
        consts = np.array([c % q for q in moduli], dtype=np.uint64)
        data = self._parts_op(ct, lambda p: mul_const_mod(p, consts, moduli))
        return Ciphertext(self.params, data, ct.level, scale, ct.key_id, nz.scalar_multiply_noise(self.params, ct.noise, c))

    def _multiply_ct(self, a: Ciphertext, b: Ciphertext, relinearize: bool, keyswitch) -> Ciphertext:
        self._check(b)
        if a.parts > 2:
            a = self.relinearize(a, keyswitch=keyswitch)
        if b.parts > 2:
            b = self.relinearize(b, keyswitch=keyswitch)
        a, b = self._align(a, b, for_add=False)
        d0, d1, d2 = _tensor_product(a.data, b.data, _q(a), square=a is b)
        scale = rules.multiply_scale(self.params, a.scale, b.scale)
        noise = nz.multiply_noise(self.params, a.noise, a.scale, b.noise, b.scale)
        ct = Ciphertext(self.params, np.stack([d0, d1, d2]), a.level, scale, a.key_id, noise)
        return self.relinearize(ct, keyswitch=keyswitch) if relinearize else ct

    def square(self, a: Ciphertext, **kw) -> Ciphertext:
        """a × a."""
        return self.multiply(a, a, **kw)

    # -- key switching --------------------------------------------------------------

    def _method(self, keyswitch: str | None) -> str:
        """The key-switching method of one call: `keyswitch`, or the evaluator's default.

        Raises `ParameterError` for a name other than "bv" / "hybrid" (an op whose
        key the key set lacks raises the `MissingKeyError` subclass naming it)."""
        if keyswitch is None:
            return self.keyswitch
        return as_choice(keyswitch, "keyswitch", ("bv", "hybrid"))

    def relinearize(self, ct: Ciphertext, *, keyswitch: str | None = None) -> Ciphertext:
        """Turn a 3-part product back into 2 parts with the relinearization key.

        Raises `MissingRelinearizationKeyError` if keygen did not make that key.
        """
        self._check(ct)
        if ct.parts == 2:
            return ct
        method = self._method(keyswitch)
        if not self.keys.has_key(RELIN, method, ct.level):
            raise MissingRelinearizationKeyError(
                f"multiplying two ciphertexts needs the relinearization key ({method} key switching), "
                f"which keygen did not generate; call keygen(params, ..., relinearization=True"
                f"{'' if method in self.keys.methods else f', keyswitch={method!r}'})."
            )
        check_keyswitch(self.params, ct.level, ct.scale, ct.noise, method, "relinearization")
        key = self.keys.key(RELIN, method, ct.level)
        u0, u1 = key_switch(self.params, ct.data[2], key, ct.level)
        q = _q(ct)
        data = np.stack([add_mod(ct.data[0], u0, q), add_mod(ct.data[1], u1, q)])
        noise = nz.add_noise(ct.noise, nz.keyswitch_noise(self.params, ct.level, method))
        return Ciphertext(self.params, data, ct.level, ct.scale, ct.key_id, noise)

    def rotate(self, ct: Ciphertext, k: int, *, keyswitch: str | None = None) -> Ciphertext:
        """Rotate slots: slot i of the result holds slot i + k of ct (np.roll(x, -k)).
        BGV rotates both rows of the 2 × N/2 hypercube.

        Raises `MissingRotationKeyError` naming k if its Galois key was not generated.
        """
        k = as_int(k, "rotate(ct, k): k", error=InvalidArgumentError, fix="rotate by a whole number of slots")
        g = galois_for_rotation(self.params, k)
        return self.apply_galois(ct, g, keyswitch=keyswitch, what=f"rotation by {k}", fix=f"rotations=[..., {k}]")

    def conjugate(self, ct: Ciphertext, *, keyswitch: str | None = None) -> Ciphertext:
        """CKKS: complex conjugation of every slot (real slots are unchanged)."""
        if self.params.scheme != "ckks":
            raise SchemeMismatchError("conjugate is a CKKS operation; for BGV use swap_rows().")
        g = galois_for_conjugation(self.params)
        return self.apply_galois(ct, g, keyswitch=keyswitch, what="conjugation", fix="conjugation=True")

    def swap_rows(self, ct: Ciphertext, *, keyswitch: str | None = None) -> Ciphertext:
        """BGV: exchange the two rows of the slot hypercube."""
        if self.params.scheme != "bgv":
            raise SchemeMismatchError("swap_rows is a BGV operation; for CKKS use conjugate().")
        g = galois_for_conjugation(self.params)
        return self.apply_galois(ct, g, keyswitch=keyswitch, what="swap_rows", fix="conjugation=True")

    def automorphism(self, ct: Ciphertext, g: int) -> Ciphertext:
        """σ_g on both parts, without key switching: the result decrypts under σ_g(s).
        The first piece of an expanded rotation (`fhec.passes.he_keyswitch`)."""
        self._check(ct)
        g = check_galois_element(self.params, g, "g")
        N = self.params.N
        return ct.with_(data=np.stack([automorphism_ntt(p, g, N) for p in ct.data]))

    def multiply_integer(self, ct: Ciphertext, c: int, scale=None) -> Ciphertext:
        """ct × c for an integer c, exactly (every limb times c mod its prime). The
        result's scale / BGV factor is `scale` (default: unchanged), so BGV can relabel
        its plaintext factor instead of changing the message."""
        self._check(ct)
        c = as_int(c, "c", error=InvalidArgumentError, fix="multiply_integer takes an integer; use multiply() for reals")
        return self._times_integer(ct, c, ct.scale if scale is None else scale)

    def apply_galois(
        self, ct: Ciphertext, g: int, *, keyswitch: str | None = None, what: str | None = None, fix: str | None = None
    ) -> Ciphertext:
        """σ_g on both parts, then key switching from σ_g(s) back to s."""
        self._check(ct)
        g = check_galois_element(self.params, g, "g")
        if g == 1:
            return ct
        if ct.parts > 2:
            ct = self.relinearize(ct, keyswitch=keyswitch)
        method = self._method(keyswitch)
        if not self.keys.has_key(g, method, ct.level):
            raise MissingRotationKeyError(
                f"{what or f'Galois element {g}'} needs the Galois key for element {g} ({method} key switching), "
                f"which keygen did not generate; add it: keygen(params, {fix or f'galois_elements=[{g}]'}"
                f"{'' if method in self.keys.methods else f', keyswitch={method!r}'})."
            )
        check_keyswitch(self.params, ct.level, ct.scale, ct.noise, method, what or f"Galois element {g}")
        N = self.params.N
        c0 = automorphism_ntt(ct.data[0], g, N)
        c1 = automorphism_ntt(ct.data[1], g, N)
        u0, u1 = key_switch(self.params, c1, self.keys.key(g, method, ct.level), ct.level)
        q = _q(ct)
        data = np.stack([add_mod(c0, u0, q), u1])
        noise = nz.add_noise(ct.noise, nz.keyswitch_noise(self.params, ct.level, method))
        return Ciphertext(self.params, data, ct.level, ct.scale, ct.key_id, noise)

    def rotate_hoisted(
        self, ct: Ciphertext, steps, *, keyswitch: str | None = None, mod_down: bool = True
    ) -> dict[int, Ciphertext] | dict[int, ExtendedCiphertext]:
        """Several rotations of one ciphertext with one decomposition (single hoisting,
        Halevi–Shoup): c1 is decomposed once, and each rotation permutes the digits by
        σ_g before its key product. Returns step -> rotated ciphertext, each bit-identical
        to `rotate(ct, step)` (digits are lifted centered, which commutes with σ_g).

        ``mod_down=False`` (hybrid only) skips the division by P: each result is an
        `ExtendedCiphertext` (P·σ_g(c0) + u0, u1) over Q·P, for double hoisting (Bossuat
        et al. 2021): multiply such values by plaintexts encoded over Q·P, add them, and
        divide the sum by P once (`mod_down`). A step that is no rotation gives P·ct.

        Raises `MissingRotationKeyError` as `rotate` does, and `InvalidArgumentError` for
        ``mod_down=False`` with BV key switching (which has no P).
        """
        self._check(ct)
        if ct.parts > 2:
            ct = self.relinearize(ct, keyswitch=keyswitch)
        method = self._method(keyswitch)
        if not mod_down and method != "hybrid":
            raise InvalidArgumentError(
                "rotate_hoisted(..., mod_down=False) keeps the results over Q·P, which only hybrid key switching has; "
                "pass keyswitch='hybrid' (parameters with special_primes >= 1)."
            )
        steps = list(as_int_list(steps, "steps", error=InvalidArgumentError))
        galois = {k: galois_for_rotation(self.params, k) for k in steps}
        for k, g in galois.items():
            if g != 1 and not self.keys.has_key(g, method, ct.level):
                raise MissingRotationKeyError(
                    f"rotation by {k} needs the Galois key for element {g} ({method} key switching), "
                    f"which keygen did not generate; add it: keygen(params, rotations=[..., {k}])."
                )
        if any(g != 1 for g in galois.values()):
            check_keyswitch(self.params, ct.level, ct.scale, ct.noise, method, f"hoisted rotations by {steps}")
        N, q = self.params.N, _q(ct)
        digits = decompose(self.params, ct.data[1], ct.level, method)
        noise = nz.add_noise(ct.noise, nz.keyswitch_noise(self.params, ct.level, method))
        out = {}
        for k, g in galois.items():
            if g == 1:
                out[k] = ct if mod_down else self._lift_extended(ct)
                continue
            turned = [automorphism_ntt(d, g, N) for d in digits]
            u0, u1 = key_mult(self.params, turned, self.keys.key(g, method, ct.level), ct.level)
            c0 = automorphism_ntt(ct.data[0], g, N)
            if not mod_down:
                out[k] = ExtendedCiphertext(
                    self.params, np.stack([self.times_p_plus(c0, u0, ct.level), u1]), ct.level, ct.scale, ct.key_id, noise
                )
                continue
            if method == "hybrid":
                u0, u1 = divide_by_p(self.params, u0, ct.level), divide_by_p(self.params, u1, ct.level)
            out[k] = Ciphertext(self.params, np.stack([add_mod(c0, u0, q), u1]), ct.level, ct.scale, ct.key_id, noise)
        return out

    # -- double hoisting: values over Q·P --------------------------------------------

    def times_p_plus(self, c: np.ndarray, u: np.ndarray, level: int, subtract: bool = False) -> np.ndarray:
        """P·c + u (u − P·c with `subtract`) over Q_level·P for c over Q_level: P·c
        vanishes mod every special prime (the c0 of a double-hoisted rotation, and the
        `ks_add_ext` piece)."""
        moduli = self.params.moduli_at(level)
        P = product(self.params.special_moduli_at(level))
        q = np.array(moduli, dtype=np.uint64)
        scaled = mul_const_mod(c, np.array([P % m for m in moduli], dtype=np.uint64), moduli)
        L = len(moduli)
        low = sub_mod(u[:L], scaled, q) if subtract else add_mod(scaled, u[:L], q)
        return np.concatenate([low, u[L:]])

    def _lift_extended(self, ct: Ciphertext) -> ExtendedCiphertext:
        zeros = np.zeros((len(self.params.special_moduli_at(ct.level)), self.params.N), dtype=np.uint64)
        data = np.stack([self.times_p_plus(p, np.concatenate([np.zeros_like(p), zeros]), ct.level) for p in ct.data])
        return ExtendedCiphertext(self.params, data, ct.level, ct.scale, ct.key_id, ct.noise)

    def rotate_extended(self, ct: Ciphertext, k: int, *, keyswitch: str | None = None) -> ExtendedCiphertext:
        """`rotate_hoisted(ct, [k], mod_down=False)[k]`: one rotation kept over Q·P."""
        return self.rotate_hoisted(ct, [k], keyswitch=keyswitch, mod_down=False)[k]

    def _check_extended(self, *xs) -> None:
        for x in xs:
            if not isinstance(x, ExtendedCiphertext):
                raise InvalidArgumentError(
                    f"expected an ExtendedCiphertext (from rotate_hoisted(..., mod_down=False)), not {type(x).__name__}"
                )
            if x.params.fingerprint != self.params.fingerprint or x.key_id != self.keys.key_id:
                raise MismatchedParametersError("the value belongs to another parameter or key set than this Evaluator")

    def multiply_extended(self, x: ExtendedCiphertext, pt: Plaintext, magnitude: float = 1.0) -> ExtendedCiphertext:
        """x × pt over Q·P; pt encoded over Q·P (``encode(..., extended=True)``) at x's level;
        `magnitude` as for `multiply_plain`."""
        self._check_extended(x)
        if not (isinstance(pt, Plaintext) and pt.extended and pt.level == x.level):
            raise MismatchedParametersError(
                f"an extended value at level {x.level} multiplies a plaintext encoded over Q·P at the same level "
                f"(encode(params, values, {x.level}, scale, extended=True))"
            )
        q = np.array(x.moduli, dtype=np.uint64)
        data = np.stack([mul_mod(p, pt.data, q) for p in x.data])
        scale = rules.multiply_scale(self.params, x.scale, pt.scale)
        noise = nz.plain_multiply_noise(self.params, x.noise, x.scale, float(pt.scale) if self.params.scheme == "ckks" else 1.0,
                                        magnitude)
        return ExtendedCiphertext(self.params, data, x.level, scale, x.key_id, noise)

    def add_extended(self, a: ExtendedCiphertext, b: ExtendedCiphertext) -> ExtendedCiphertext:
        """a + b over Q·P (same level; scales / BGV factors must already match)."""
        self._check_extended(a, b)
        if a.level != b.level:
            raise MismatchedParametersError(f"extended values at levels {a.level} and {b.level} cannot be added")
        rules.check_add_scales(self.params, a.scale, b.scale)
        q = np.array(a.moduli, dtype=np.uint64)
        return ExtendedCiphertext(
            self.params, np.stack([add_mod(x, y, q) for x, y in zip(a.data, b.data)]), a.level, a.scale, a.key_id, nz.add_noise(a.noise, b.noise)
        )

    def mod_down(self, x: ExtendedCiphertext) -> Ciphertext:
        """Divide an extended value by P (rounding as a hybrid key switch does): the
        ciphertext over Q it stands for."""
        self._check_extended(x)
        data = np.stack([divide_by_p(self.params, p, x.level) for p in x.data])
        return Ciphertext(self.params, data, x.level, x.scale, x.key_id, x.noise)

    # -- mod-down merged with the rescale that follows it --------------------------------

    def relinearize_extended(self, ct: Ciphertext) -> ExtendedCiphertext:
        """A hybrid relinearization of a 3-part product without its mod-down:
        (P·c0 + u0, P·c1 + u1) over Q·P, which `rescale_extended` divides by P·q_l in one
        step. Raises `MissingRelinearizationKeyError` without the hybrid relinearization key."""
        self._check(ct)
        if ct.parts != 3:
            raise InvalidArgumentError(f"relinearize_extended takes a 3-part product, not a {ct.parts}-part ciphertext")
        if not self.keys.has_key(RELIN, "hybrid", ct.level):
            raise MissingRelinearizationKeyError(
                "a relinearization merged with its rescale needs the hybrid relinearization key, which keygen did "
                "not generate; call keygen(params, ..., relinearization=True, keyswitch='hybrid')."
            )
        key = self.keys.key(RELIN, "hybrid", ct.level)
        check_keyswitch(self.params, ct.level, ct.scale, ct.noise, "hybrid", "relinearization")
        u0, u1 = key_mult(self.params, decompose(self.params, ct.data[2], ct.level, "hybrid"), key, ct.level)
        data = np.stack([self.times_p_plus(ct.data[0], u0, ct.level), self.times_p_plus(ct.data[1], u1, ct.level)])
        noise = nz.add_noise(ct.noise, nz.keyswitch_noise(self.params, ct.level, "hybrid"))
        return ExtendedCiphertext(self.params, data, ct.level, ct.scale, ct.key_id, noise)

    def add_lifted(self, x: ExtendedCiphertext, ct: Ciphertext, subtract: bool = False) -> ExtendedCiphertext:
        """x + P·ct (x − P·ct with `subtract`) over Q·P (P·ct vanishes mod every special
        prime): a ciphertext over Q joins a sum that one `rescale_extended` ends."""
        self._check_extended(x)
        self._check(ct)
        if ct.parts != 2 or ct.level != x.level:
            raise MismatchedParametersError(
                f"a {ct.parts}-part ciphertext at level {ct.level} cannot join an extended value at level {x.level}"
            )
        rules.check_add_scales(self.params, x.scale, ct.scale)
        data = np.stack([self.times_p_plus(c, d, x.level, subtract) for c, d in zip(ct.data, x.data)])
        return ExtendedCiphertext(self.params, data, x.level, x.scale, x.key_id, nz.add_noise(x.noise, ct.noise))

    def rescale_extended(self, x: ExtendedCiphertext) -> Ciphertext:
        """CKKS: divide an extended value by P·q_l in one base conversion from the special
        primes and the last prime of Q (`divide_by_dropped`): `rescale(mod_down(x))` with one
        rounding instead of two (`fhec.schemes.noise.rescale_ext_noise`); level − 1,
        scale / q_l. Raises `LevelExhaustedError` at level 0."""
        self._check_extended(x)
        if self.params.scheme != "ckks":
            raise SchemeMismatchError("rescale is a CKKS operation; BGV ciphertexts use mod_switch().")
        level, scale = rules.rescale_result(self.params, x.level, x.scale)
        moduli = self.params.moduli_at(x.level)
        keep, drop = moduli[:-1], moduli[-1:] + self.params.special_moduli_at(x.level)
        data = np.stack([divide_by_dropped(p, keep, drop, None) for p in x.data])
        noise = nz.rescale_ext_noise(self.params, x.noise, moduli[-1], x.level)
        return Ciphertext(self.params, data, level, scale, x.key_id, noise)

    def key_switch(self, ct: Ciphertext, source, *, keyswitch: str | None = None) -> Ciphertext:
        """Switch a 2-part ciphertext decrypting under s' (source: "relin" for s², a Galois
        element g for σ_g(s), "to-sparse" for s itself, switched to the ephemeral sparse
        secret of bootstrapping's encapsulation, "to-dense" for that secret) to one
        decrypting under s (under the ephemeral secret for "to-sparse")."""
        self._check(ct)
        method = self._method(keyswitch)
        if not (isinstance(source, str) and source in (RELIN, *SECRET_SWITCHES)):
            source = check_galois_element(self.params, source, "source")
        if not self.keys.has_key(source, method, ct.level):
            keygen_flag = ("relinearization=True" if source == RELIN else "encapsulation=True"
                           if source in SECRET_SWITCHES else f"galois_elements=[{source}]")
            raise MissingKeyError(
                f"no {method} key-switching key from {source!r} in this key set; generate it with keygen(params, "
                f"{keygen_flag})."
            )
        check_keyswitch(self.params, ct.level, ct.scale, ct.noise, method, "key switch")
        key = self.keys.key(source, method, ct.level)
        u0, u1 = key_switch(self.params, ct.data[1], key, ct.level)
        q = _q(ct)
        noise = nz.add_noise(ct.noise, nz.keyswitch_noise(self.params, ct.level, method))
        return Ciphertext(self.params, np.stack([add_mod(ct.data[0], u0, q), u1]), ct.level, ct.scale, ct.key_id, noise)
