"""Key generation: secret, public, relinearization and Galois (rotation) keys.

Key-switching keys ("key-switch hints", KSH, in F1's words) exist in two layouts, one
per key-switching method (`fhec.schemes.keyswitch`):

* ``"bv"``: F1 Listing 1. One digit per RNS limb of Q; digit i's key is an encryption
  of ``g_i · s'`` with g_i the CRT idempotent of q_i (≡ 1 mod q_i, ≡ 0 mod the others).
  No special primes: the hint is L × L limb pairs and grows with L².
* ``"hybrid"``: digits are groups of ``alpha`` primes of Q (``dnum`` of them) and the key
  lives mod Q·P; digit j's key encrypts ``P · g_j · s'`` with g_j the CRT idempotent of
  group j. The hint is dnum × (L + alpha) limb pairs (Osiris, Lattigo, OpenFHE).
  With a second, residual key-switching basis (`Params.key_bases`; Osiris Table II) every
  hybrid key has a twin of that basis: P' = P's first `residual_special_primes` primes,
  digits of that many primes up to `residual_top`, rows Q then P' (its rows of Q above
  `residual_top` are never read), from its own stream ``switch/<source>/hybrid/residual``;
  a key switch at a level at or below `residual_top` reads it (`KeySet.key(..., level)`).

All key polynomials are stored in the NTT domain over the top-level basis, limbs of Q
first, then P (hybrid only). A lower-level key switch uses the prefix of Q's limbs.
BGV keys carry their error multiplied by t, so every key switch adds a multiple of t.

Randomness (`fhec.schemes.sampling`): ``keygen(params, seed=s)`` derives one SHAKE-256
stream from (s, "keygen") and a child stream per part: ``secret``, ``public``,
``switch/<source>/<method>`` and ``key-id``. The secret of a seed therefore does not
depend on which switching keys are requested. `seed=None` keys the stream from the OS.

The uniform half ``a`` of every switching key is the expansion of a 256-bit *public* seed
(``SwitchingKey.uniform_seed``, drawn from the key's stream): `expand_uniform_half` turns
it into every digit's ``a`` with SHAKE-256 (one child stream per digit, rejection-sampled
mod each prime, as `Sampler.uniform`). So an accelerator can store the seed and the ``b``
half and regenerate ``a`` on chip (CraterLake's and Osiris §IV-E's PRNG key generation; a
target's ``[keys] uniform_half = "generated"``). ``a`` is public anyway: the seed reveals
nothing the key does not.

No `repr` shows key material: a key set prints its shape and `fingerprint` (a hash of
the public key: it names the key pair and is computed from public data only).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Literal

import numpy as np

from fhec.errors import InvalidArgumentError, ParameterError
from fhec.validate import as_choice, as_int, as_int_list
from fhec.ring.automorphism import automorphism_ntt
from fhec.ring.modarith import add_mod, mul_mod, sub_mod
from fhec.schemes.encoding import (
    bgv_rotation_galois,
    bgv_swap_rows_galois,
    ckks_conjugate_galois,
    ckks_rotation_galois,
)
from fhec.schemes.params import Params
from fhec.schemes.sampling import Sampler, SeedCounters, small_ntt

Method = Literal["bv", "hybrid"]
RELIN = "relin"
TO_SPARSE = "to-sparse"
"""The source of sparse-secret encapsulation's first key: from s to the ephemeral sparse
secret s_e (an encryption of s under s_e, over q_0·P only)."""
TO_DENSE = "to-dense"
"""The source of its second key: from s_e back to s (an encryption of s_e under s)."""
SECRET_SWITCHES = (TO_SPARSE, TO_DENSE)
"""Sources that change the secret rather than apply an automorphism to it: bootstrapping's
sparse-secret encapsulation (Bossuat et al., "Bootstrapping for approximate homomorphic
encryption with negligible failure-probability by using sparse-secret encapsulation",
ACNS 2022; Lattigo's EphemeralSecretWeight). Always hybrid: at level 0 a BV digit is all
of q_0, and its error would swamp the message."""


def galois_for_rotation(params: Params, k: int) -> int:
    """The Galois element that rotates slots by k (slot i receives slot i + k)."""
    if params.scheme == "ckks":
        return ckks_rotation_galois(params.N, k)
    return bgv_rotation_galois(params.N, k)


def galois_for_conjugation(params: Params) -> int:
    """The Galois element of CKKS conjugation / BGV row swap (2N − 1)."""
    return ckks_conjugate_galois(params.N) if params.scheme == "ckks" else bgv_swap_rows_galois(params.N)


@dataclass(frozen=True, eq=False)
class SwitchingKey:
    """A key-switching key from s' (``source``) to s.

    ``b[d], a[d]`` (shape ``(digits, limbs, N)``, NTT domain) satisfy
    ``b[d] + a[d]·s = gadget_d · s' + (t·)e_d``. ``source`` is ``"relin"`` (s' = s²),
    a Galois element g (s' = σ_g(s)), or one of `SECRET_SWITCHES`: ``"to-sparse"`` (s'
    = s, and the key is under the ephemeral sparse secret in place of s) or
    ``"to-dense"`` (s' = the ephemeral secret).
    """

    method: Method
    source: int | str
    b: np.ndarray
    a: np.ndarray
    uniform_seed: bytes = b""  # public: `a` is `expand_uniform_half` of it
    basis: str = "main"  # the key-switching basis (`Params.key_basis_at`); "residual" keys are apart

    @property
    def digits(self) -> int:
        return self.b.shape[0]

    @property
    def nbytes(self) -> int:
        return self.b.nbytes + self.a.nbytes

    def __repr__(self) -> str:
        digits, limbs, N = self.b.shape
        basis = "" if self.basis == "main" else f", basis={self.basis}"
        return f"SwitchingKey({self.method}, source={self.source!r}, digits={digits}, limbs={limbs}, N={N}{basis})"


@dataclass(frozen=True, eq=False)
class KeySet:
    """Everything `keygen` produced for one parameter set.

    Attributes:
        params: the parameter set.
        key_id: an identifier shared by every ciphertext encrypted under these keys.
        secret_coeffs: the ternary secret s (int64 coefficients); None for a public-only copy.
        secret_ntt: s in the NTT domain over Q ∪ P.
        public: (b, a) with b = −a·s + e over Q, NTT domain.
        switching: {(source, method): SwitchingKey} of the main basis, plus
            {(source, method, "residual"): SwitchingKey} of the residual one when the
            parameter set has two (`Params.key_bases`); source is "relin", a Galois
            element, or "to-sparse"/"to-dense" (`SECRET_SWITCHES`).
        rotations: the rotation offsets requested at keygen (for error messages).
        methods: the key-switching methods whose keys were generated.
        encryptions: per explicit seed, how many encryptions drew from it under these
            keys (see `fhec.schemes.encryption.encryption_sampler`); shared with
            `public_only` copies so that no two encryptions reuse a stream.

    `repr` shows shapes, `key_id` and `fingerprint`, never a coefficient.
    """

    params: Params
    key_id: int
    secret_coeffs: np.ndarray | None
    secret_ntt: np.ndarray | None
    public: tuple[np.ndarray, np.ndarray]
    switching: dict = field(repr=False)
    rotations: tuple[int, ...] = ()
    methods: tuple[str, ...] = ()
    encryptions: SeedCounters = field(default_factory=SeedCounters, repr=False)

    def has_key(self, source: int | str, method: Method, level: int | None = None) -> bool:
        """Whether the key of (`source`, `method`) exists, for a key switch at `level`
        (None: the main basis's key)."""
        return _slot(self.params, source, method, level) in self.switching

    def key(self, source: int | str, method: Method, level: int | None = None) -> SwitchingKey:
        """The key of (`source`, `method`) for a key switch at `level` (None: the main
        basis's): with two key-switching bases, a level at or below `residual_top` takes
        the residual basis's key."""
        return self.switching[_slot(self.params, source, method, level)]

    def public_only(self) -> "KeySet":
        """A copy without the secret key: what a server evaluating the program receives."""
        return KeySet(
            self.params, self.key_id, None, None, self.public, self.switching, self.rotations, self.methods,
            self.encryptions,
        )

    @property
    def fingerprint(self) -> str:
        """16 hex digits of SHAKE-256 over the public key (b, a): identifies the key pair."""
        h = hashlib.shake_256(b"fhec/public-key")
        for part in self.public:
            h.update(np.ascontiguousarray(part).tobytes())
        return h.hexdigest(8)

    def __repr__(self) -> str:
        p = self.params
        secret = f"ternary[{p.N}] hidden" if self.secret_coeffs is not None else "none (public-only)"
        sources = sorted({k[0] for k in self.switching}, key=str)
        galois = sum(1 for s in sources if isinstance(s, int))
        switching = ", ".join(([RELIN] if RELIN in sources else []) + ([f"{galois} Galois"] if galois else [])
                              + (["encapsulation"] if TO_SPARSE in sources else []))
        return (
            f"KeySet({p.scheme}, N={p.N}, limbs={p.max_limbs}+{len(p.special_moduli)}, key_id={self.key_id}, "
            f"fingerprint={self.fingerprint}, secret={secret}, switching=[{switching or 'none'}] "
            f"x {'/'.join(self.methods) or 'no method'})"
        )

    @property
    def galois_elements(self) -> tuple[int, ...]:
        return tuple(sorted({k[0] for k in self.switching if isinstance(k[0], int)}))


def _slot(params: Params, source: int | str, method: str, level: int | None) -> tuple:
    """The `KeySet.switching` entry of a key switch at `level`: BV keys have one basis
    (no special primes); a hybrid one at a residual level is (source, method, "residual")."""
    if level is None or method == "bv" or params.key_basis_at(level) == params.MAIN_BASIS:
        return (source, method)
    return (source, method, params.RESIDUAL_BASIS)


def _all_moduli(params: Params) -> tuple[int, ...]:
    return params.moduli + params.special_moduli


def _error_factor(params: Params) -> int:
    return params.plain_modulus if params.scheme == "bgv" else 1


def _key_moduli(params: Params, method: Method, basis: str) -> tuple[int, ...]:
    """The moduli of a key's rows: Q (BV); Q, then the basis's prefix of P (hybrid)."""
    if method == "bv":
        return params.moduli
    return params.moduli + params.special_moduli[: params.basis_special_primes(basis)]


def _gadget_rows(params: Params, method: Method, basis: str = "main") -> list[np.ndarray]:
    """Per digit, the gadget constant g_d as residues over the key basis (uint64 per limb):
    hybrid digits are the basis's groups at its top level and g_d = P_basis on them."""
    Lq = params.max_limbs
    if method == "bv":
        return [np.array([1 if i == d else 0 for i in range(Lq)], dtype=np.uint64) for d in range(Lq)]
    alpha = params.basis_special_primes(basis)
    P = 1
    for p in params.special_moduli[:alpha]:
        P *= p
    rows = []
    for group in params.digit_groups(params.basis_top_level(basis)):
        r = [P % q if i in group else 0 for i, q in enumerate(params.moduli)] + [0] * alpha
        rows.append(np.array(r, dtype=np.uint64))
    return rows


def expand_uniform_half(seed: bytes, moduli: tuple[int, ...], N: int, digits: int,
                        out: np.ndarray | None = None) -> np.ndarray:
    """The uniform halves ``a[d]`` (shape ``(digits, len(moduli), N)``, NTT domain) that the
    32-byte public `seed` expands to: digit d is `Sampler.uniform` of the seed's child
    stream ``digit/<d>`` (SHAKE-256). Deterministic: the same seed gives the same words."""
    root = Sampler(seed, seeded=True).child("switching-key/uniform-half")
    out = np.empty((digits, len(moduli), N), dtype=np.uint64) if out is None else out
    for d in range(digits):
        root.child(f"digit/{d}").uniform(moduli, N, out=out[d])
    return out


def make_switching_key(
    params: Params, s_ntt: np.ndarray, target_ntt: np.ndarray, source: int | str, method: Method, sampler: Sampler,
    basis: str = "main",
) -> SwitchingKey:
    """Encrypt ``gadget_d · target`` under s for every digit d (see the module doc).

    `s_ntt`, `target_ntt`: NTT-domain polynomials over Q ∪ P (P rows unused for BV).
    `sampler`: the stream of this key alone. `basis`: the key-switching basis (a
    "residual" key has rows Q, then the residual prefix of P; its digits are the residual
    basis's groups up to `residual_top`, so its rows of Q above it are never read).
    """
    moduli = _key_moduli(params, method, basis)
    L = len(moduli)
    q = np.array(moduli, dtype=np.uint64)
    s = s_ntt[:L]
    tgt = target_ntt[:L]
    factor = _error_factor(params)
    gadgets = _gadget_rows(params, method, basis)
    # the uniform half comes from a public seed so that it can be regenerated on chip (module doc)
    uniform_seed = sampler.random_bytes(32)
    a_arr = expand_uniform_half(uniform_seed, moduli, params.N, len(gadgets))
    b_arr = np.empty_like(a_arr)
    for d, gadget in enumerate(gadgets):
        a = a_arr[d]
        e = small_ntt(sampler.gaussian(params.N) * factor, moduli)
        b_arr[d] = sub_mod(e, mul_mod(a, s, q), q)
        # gadget_d is zero outside its digit's limbs: add g_d · target there only.
        rows = np.flatnonzero(gadget)
        g_tgt = mul_mod(tgt[rows], np.broadcast_to(gadget[rows, None], (rows.size, params.N)), q[rows])
        b_arr[d, rows] = add_mod(b_arr[d, rows], g_tgt, q[rows])
    b_arr.setflags(write=False)
    a_arr.setflags(write=False)
    return SwitchingKey(method, source, b_arr, a_arr, uniform_seed, basis)


def keygen(
    params: Params,
    rotations: Iterable[int] = (),
    seed: int | bytes | Sampler | None = None,
    *,
    relinearization: bool = True,
    conjugation: bool = False,
    galois_elements: Iterable[int] = (),
    keyswitch: str | None = None,
    encapsulation: bool = False,
) -> KeySet:
    """Generate a secret key and the public, relinearization and rotation keys.

    Args:
        params: a `CKKSParams` or `BGVParams`.
        rotations: slot offsets k for which `Evaluator.rotate(ct, k)` must work.
        seed: None (the default) for keys from OS entropy; a non-negative int or bytes
            for reproducible keys (a SHAKE-256 stream of the seed, for experiments only);
            or a `Sampler`.
        relinearization: generate the relinearization key (needed by ct × ct multiply).
        conjugation: generate the key of CKKS `conjugate` / BGV `swap_rows`.
        galois_elements: extra raw Galois elements.
        keyswitch: "bv", "hybrid" or "both" (the default): the key-switching methods
            whose keys are generated. With both, every op can pick its method per call
            (``keyswitch=``); a key set of one method is half the size and time. The
            evaluator's default method is `params.keyswitch` when its keys exist.
        encapsulation: generate the two hybrid keys of sparse-secret encapsulation
            (`SECRET_SWITCHES`) for a bootstrap with
            ``BootstrapConfig(ephemeral_hamming_weight=h)``: an ephemeral secret s_e of
            Hamming weight h is drawn and dropped; the keys from s to s_e (rows q_0 and P
            only, `encapsulation_keys`) and from s_e to s are kept.

    Raises `ParameterError` for an unknown key-switching method, `SeedError` for an invalid
    seed, and `InvalidArgumentError` for arguments of the wrong type (`params` not a
    parameter set, a non-integer rotation, a Galois element that is not odd in 1..2N-1).
    """
    from fhec.schemes.encryption import check_params

    check_params(params)
    methods = _methods("both" if keyswitch is None else keyswitch)
    rotations = as_int_list(rotations, "rotations", error=InvalidArgumentError)
    galois_elements = tuple(
        check_galois_element(params, g, f"galois_elements[{i}]")
        for i, g in enumerate(as_int_list(galois_elements, "galois_elements", error=InvalidArgumentError))
    )
    for flag, value in (("relinearization", relinearization), ("conjugation", conjugation)):
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidArgumentError(f"{flag} = {value!r} must be True or False.")
    root = Sampler.from_seed(seed, "keygen")
    moduli_all = _all_moduli(params)
    q_all = np.array(moduli_all, dtype=np.uint64)
    N = params.N
    h = getattr(params, "secret_hamming_weight", None)
    s = root.child("secret").ternary(N) if h is None else root.child("secret").sparse_ternary(N, h)
    s_ntt = small_ntt(s, moduli_all)
    s_ntt.setflags(write=False)

    Lq = params.max_limbs
    public = root.child("public")
    a = public.uniform(params.moduli, N)
    e = small_ntt(public.gaussian(N) * _error_factor(params), params.moduli)
    b = sub_mod(e, mul_mod(a, s_ntt[:Lq], q_all[:Lq]), q_all[:Lq])
    for arr in (a, b):
        arr.setflags(write=False)

    sources: list[int | str] = []
    if relinearization:
        sources.append(RELIN)
    gal = {galois_for_rotation(params, k) for k in rotations} | {int(g) for g in galois_elements}
    if conjugation:
        gal.add(galois_for_conjugation(params))
    gal.discard(1)  # rotation by a multiple of the row length is the identity: no key needed
    sources.extend(sorted(gal))

    switching = {}
    for source in sources:
        if source == RELIN:
            target = mul_mod(s_ntt, s_ntt, q_all)
        else:
            target = automorphism_ntt(s_ntt, source, N)
        for method in methods:
            stream = root.child(f"switch/{source}/{method}")
            switching[(source, method)] = make_switching_key(params, s_ntt, target, source, method, stream)
            if method == "hybrid" and params.RESIDUAL_BASIS in params.key_bases:
                # the residual basis's key is another key (its own P and digits), from its own stream
                stream = root.child(f"switch/{source}/{method}/{params.RESIDUAL_BASIS}")
                switching[(source, method, params.RESIDUAL_BASIS)] = make_switching_key(
                    params, s_ntt, target, source, method, stream, params.RESIDUAL_BASIS)

    if encapsulation:
        switching.update(encapsulation_keys(params, s_ntt, root.child("encapsulation")))

    key_id = root.child("key-id").integer(62)
    return KeySet(params, key_id, s, s_ntt, (b, a), switching, rotations, methods)


def encapsulation_keys(params: Params, s_ntt: np.ndarray, root: Sampler) -> dict:
    """The `KeySet.switching` entries of sparse-secret encapsulation (`SECRET_SWITCHES`),
    in every hybrid basis of `params`, from `root`'s streams.

    The ephemeral secret s_e (Hamming weight ``params.bootstrap.ephemeral_hamming_weight``)
    is used here and forgotten: nothing decrypts under it. Its key from s is an RLWE sample
    under s_e, and a secret that sparse is only safe at a small modulus, so there is one,
    in the basis of level 0 (the residual one when there are two), and only the rows the
    level-0 switch reads (q_0's primes and that basis's P) are kept; the others and the
    digits past level 0's are zero. The key back to s is under s and needs no such care: it
    exists in every basis.

    Raises `ParameterError` when `params` has no bootstrap with an ephemeral weight."""
    cfg = getattr(params, "bootstrap", None)
    h = None if cfg is None else cfg.ephemeral_hamming_weight
    if h is None:
        raise ParameterError(
            "encapsulation=True needs a parameter set whose bootstrap has an ephemeral secret: "
            "BootstrapConfig(ephemeral_hamming_weight=32), for example.")
    N, moduli_all = params.N, _all_moduli(params)
    sparse_ntt = small_ntt(root.child("ephemeral-secret").sparse_ternary(N, h), moduli_all)
    basis = params.key_basis_at(0)
    down = make_switching_key(params, sparse_ntt, s_ntt, TO_SPARSE, "hybrid", root.child(f"{TO_SPARSE}/{basis}"),
                              basis)
    b, a = down.b.copy(), down.a.copy()
    for arr in (b, a):
        arr[len(params.digit_groups(0)):] = 0  # one digit unless q_0 has more primes than a digit
        arr[:, params.base_limbs: params.max_limbs] = 0
        arr.setflags(write=False)
    keys = {_slot(params, TO_SPARSE, "hybrid", 0): SwitchingKey("hybrid", TO_SPARSE, b, a, b"", basis)}
    for basis in params.key_bases:
        slot = () if basis == params.MAIN_BASIS else (basis,)
        stream = root.child(f"{TO_DENSE}/{basis}")
        keys[(TO_DENSE, "hybrid", *slot)] = make_switching_key(params, s_ntt, sparse_ntt, TO_DENSE, "hybrid", stream,
                                                               basis)
    return keys


def _methods(spec: str) -> tuple[str, ...]:
    as_choice(spec, "keyswitch", ("bv", "hybrid", "both"))
    return ("bv", "hybrid") if spec == "both" else (spec,)


def check_galois_element(params: Params, g, name: str = "the Galois element") -> int:
    """`g` as an int if it is odd and in 1..2N-1 (an automorphism X -> X^g of the ring),
    else `InvalidArgumentError`."""
    g = as_int(g, name, error=InvalidArgumentError)
    if g % 2 == 0 or not 0 < g < 2 * params.N:
        raise InvalidArgumentError(
            f"{name} = {g} is not a Galois element of N = {params.N}: it must be odd and between 1 and "
            f"{2 * params.N - 1}; for a slot rotation by k pass rotations=[k] instead."
        )
    return g
