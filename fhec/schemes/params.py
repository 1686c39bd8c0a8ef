"""Parameter sets for CKKS and BGV: literals in, validated immutable objects out.

A user writes ``CKKSParams(N=2**13, levels=5, scale_bits=30, word_bits=32)``; the
constructor checks N, the word size and security, then derives every prime
deterministically, so the same literal always gives the same RNS basis.

Modulus layout (both schemes), top level first::

    Q = q_0 · q_1 ··· q_levels       q_0..q_{base_limbs-1}: base primes (decryption headroom)
                                     the rest: one prime per level (CKKS rescale / BGV mod switch)
    P = p_0 ··· p_{alpha-1}          special primes, used only by hybrid key switching

A ciphertext at level ``l`` holds the first ``base_limbs + l`` primes of Q. All primes fit
the machine word (``word_bits``), which is what an accelerator such as F1 (32-bit words)
requires.

Two ways to write the chain. The short form ties the base and special primes to the word
(``word_bits``-bit primes) and the level primes to the scale (CKKS) or ``modulus_bits``
(BGV). The explicit form gives each prime's size as SEAL
(``CoeffModulus.Create(N, {60, 40, 40, 60})``) and Lattigo (``LogQ``, ``LogP``) do:
(named ``q_bits``/``p_bits`` since `log_q` is already log2 Q)
``q_bits`` lists the bits of Q's primes in limb order (the ``base_limbs`` base primes, then
one per level, the last rescaled first) and ``p_bits`` those of P, every size within
``word_bits``. SEAL's ``{60, 40, 40, 60}`` is ``q_bits=[60, 40, 40], p_bits=[60]`` with
``word_bits=60``. CKKS keeps every level's scale at ``2**scale_bits``, so its level primes
all have ``scale_bits`` bits (the default scale when ``q_bits`` is given); BGV's level
primes may differ.

CKKS scales: the scale of a level-``l`` ciphertext is fixed by the parameter set
(``scale_at(l)``): ``s_top = 2**scale_bits`` and ``s_{l-1} = s_l**2 / q_l``. Each rescale
prime is chosen as the NTT prime nearest ``s_l**2 / 2**scale_bits``, which keeps every
``s_l`` within a fraction of a percent of ``2**scale_bits`` (as OpenFHE's FLEXIBLEAUTO
scaling does, the scale is a property of the level, so two operands at one level add
without correction).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from fhec.errors import (
    InsecureParametersError,
    InvalidRingDegreeError,
    ParameterError,
    WordSizeError,
)
from fhec.validate import as_choice, as_int, as_int_list, as_optional_int, is_int
from fhec.schemes.bootstrap_config import BootstrapConfig, check_bootstrap
from fhec.ring.primes import MAX_WORD_BITS, MIN_WORD_BITS, NearestPrimes, ntt_primes

MIN_SCALE_BITS = MIN_WORD_BITS
"""The smallest CKKS scale_bits: each level's rescaling prime is the NTT prime nearest the
scale, and fhec's primes lie above 2^(MIN_WORD_BITS - 1), so a smaller scale meets primes
up to twice its size, its level scales drift apart, and "all values at one level share
one scale" breaks (a product and a product by a constant land on different scales)."""

# HomomorphicEncryption.org standard (Albrecht et al., 2018), Table 1, ternary secret
# (uniform in {-1, 0, 1}), classical attacks: the largest log2(Q·P) per N.
# N = 2^16 and 2^17 are not in the standard; for 128 bits we use the values OpenFHE
# ships, for 192/256 bits the bound doubles with N, as it does within the table.
_MAX_LOG_QP: dict[int, dict[int, int]] = {
    128: {2**10: 27, 2**11: 54, 2**12: 109, 2**13: 218, 2**14: 438, 2**15: 881, 2**16: 1747, 2**17: 3523},
    192: {2**10: 19, 2**11: 37, 2**12: 75, 2**13: 152, 2**14: 305, 2**15: 611, 2**16: 1222, 2**17: 2444},
    256: {2**10: 14, 2**11: 29, 2**12: 58, 2**13: 118, 2**14: 237, 2**15: 476, 2**16: 952, 2**17: 1904},
}

# The most primes (limbs of Q·P) a parameter set may have: beyond this a ciphertext is
# gigabytes even at N = 2^10, so the number is a typo, and deriving the primes would
# only delay the inevitable out-of-memory error.
MAX_PRIMES = 10_000

MIN_N = 2**1
MAX_N = 2**17

KeySwitchMethod = Literal["bv", "hybrid"]

ERROR_STDDEV = 3.2  # discrete Gaussian error of the HE standard


def _half_q(moduli) -> float:
    """Q / 2 as a float for the product Q of `moduli`; `math.inf` when it has none."""
    log_half = sum(math.log(q) for q in moduli) - math.log(2.0)
    return math.exp(log_half) if log_half < math.log(2.0) * 1023 else math.inf


def max_log_qp(N: int, security: int) -> int:
    """Largest log2(Q·P) the HE standard allows at this N and security level.

    Raises `ParameterError` for a security level other than 128, 192, 256, and
    `InsecureParametersError` when N is too small for any secure modulus (below 2^10).
    """
    if not is_int(security) or security not in _MAX_LOG_QP:
        raise ParameterError(f"security={security!r}: choose 128, 192 or 256 bits, or None to skip the check")
    table = _MAX_LOG_QP[security]
    if N not in table:
        raise InsecureParametersError(
            f"N = {N} is below the smallest ring degree of the HE standard (2^10); "
            f"use N >= 1024, or pass security=None for an insecure toy parameter set."
        )
    return table[N]


def _check_ring_degree(N) -> int:
    N = as_int(N, "N", error=InvalidRingDegreeError, fix="use a power of two such as N=2**13")
    if N < MIN_N or N > MAX_N or N & (N - 1):
        raise InvalidRingDegreeError(f"N = {N!r} must be a power of two between {MIN_N} and 2^17 (e.g. N=2**13).")
    return N


def _check_word_bits(word_bits) -> int:
    fix = f"primes must be {MIN_WORD_BITS} to {MAX_WORD_BITS} bits (32 for F1-style accelerators, up to 60 for SEAL-style)"
    return as_int(word_bits, "word_bits", min=MIN_WORD_BITS, max=MAX_WORD_BITS, error=WordSizeError, fix=fix)


# Integer fields common to both schemes: (name, smallest value, why).
_COMMON_INTS = (
    ("levels", 0, "the number of rescales / modulus switches"),
    ("base_limbs", 1, "q_0 needs at least one prime"),
    ("special_primes", 1, "hybrid key switching needs P"),
)


def _primes_of_sizes(N: int, sizes: tuple[int, ...], used: set[int]) -> list[int]:
    """One NTT prime of each size in `sizes`, in order: per size, the largest primes of
    that many bits not in `used` (in the order `ntt_primes` gives them)."""
    pools = {b: list(ntt_primes(N, b, sizes.count(b), tuple(sorted(used)))) for b in dict.fromkeys(sizes)}
    return [pools[b].pop(0) for b in sizes]


@dataclass(frozen=True)
class _CommonParams:
    """Fields and derived data shared by CKKS and BGV parameter sets."""

    N: int
    levels: int | None
    word_bits: int
    special_primes: int
    dnum: int | None
    base_limbs: int
    keyswitch: KeySwitchMethod
    security: int | None
    q_bits: tuple[int, ...] | None
    p_bits: tuple[int, ...] | None
    residual_top: int | None
    residual_special_primes: int | None

    moduli: tuple[int, ...] = field(init=False)
    special_moduli: tuple[int, ...] = field(init=False)

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def _validate_common(self) -> None:
        """Type and range checks of the literal fields; numpy integers become Python ints.
        An explicit chain (`q_bits`, `p_bits`) fixes `levels` and `special_primes`."""
        self._set("N", _check_ring_degree(self.N))
        self._set("word_bits", _check_word_bits(self.word_bits))
        self._resolve_chain()
        for name, least, why in _COMMON_INTS:
            self._set(name, as_int(getattr(self, name), name, min=least, fix=f"at least {least}: {why}"))
        self._set("dnum", as_optional_int(self.dnum, "dnum", min=1))
        as_choice(self.keyswitch, "keyswitch", ("bv", "hybrid"))
        self._validate_residual_basis()
        if self.security is not None:
            security = as_int(self.security, "security", fix="choose 128, 192 or 256 bits, or None to skip the check")
            self._set("security", security)
            max_log_qp(self.N, security)  # refuses an unknown level, or N below the standard

    def _validate_residual_basis(self) -> None:
        """The second key-switching basis (`residual_top`, `residual_special_primes`): both
        or neither, a level below the top and fewer special primes than P (the residual
        basis's P is the product of P's first `residual_special_primes` primes)."""
        top, count = self.residual_top, self.residual_special_primes
        if (top is None) != (count is None):
            raise ParameterError(
                f"residual_top = {top!r} and residual_special_primes = {count!r}: give both (the levels at and below "
                f"residual_top switch keys with the first residual_special_primes special primes) or neither."
            )
        if top is None:
            return
        self._set("residual_top", as_int(top, "residual_top", min=0, fix="a level of the chain"))
        self._set("residual_special_primes", as_int(count, "residual_special_primes", min=1,
                                                    fix="the residual basis needs at least one special prime"))
        if self.residual_top >= self.levels:
            raise ParameterError(
                f"residual_top = {self.residual_top} must be below the top level {self.levels}: the levels above it "
                f"keep the full basis (give levels > residual_top, or drop the residual basis).")
        if self.residual_special_primes >= self.special_primes:
            raise ParameterError(
                f"residual_special_primes = {self.residual_special_primes} must be below special_primes = "
                f"{self.special_primes}: the residual basis is a shorter prefix of P (an equal one is no second "
                f"basis).")

    def _resolve_chain(self) -> None:
        """Check `q_bits` / `p_bits` (sizes within the word) and derive `levels` and
        `special_primes` from them; without `q_bits`, `levels` is required."""
        fix = f"each prime's size in bits, {MIN_WORD_BITS} to word_bits = {self.word_bits}"
        for name in ("q_bits", "p_bits"):
            sizes = getattr(self, name)
            if sizes is None:
                continue
            sizes = as_int_list(sizes, name, fix=fix)
            for i, b in enumerate(sizes):
                if not MIN_WORD_BITS <= b <= self.word_bits:
                    raise WordSizeError(
                        f"{name}[{i}] = {b} bits is outside {MIN_WORD_BITS}..word_bits = {self.word_bits}: every prime "
                        f"must fit the machine word. Raise word_bits (SEAL-style 60-bit primes need word_bits=60; "
                        f"F1 has 32-bit words) or use smaller primes."
                    )
            self._set(name, sizes)
        if self.p_bits is not None:
            if not self.p_bits:
                raise ParameterError("p_bits = []: hybrid key switching needs at least one special prime.")
            if self.special_primes not in (1, len(self.p_bits)):
                raise ParameterError(f"special_primes = {self.special_primes!r} but p_bits lists {len(self.p_bits)} "
                                     f"primes; drop special_primes (p_bits fixes it).")
            self._set("special_primes", len(self.p_bits))
        if self.q_bits is None:
            if self.levels is None:
                raise ParameterError("give levels=L (the multiplicative depth), or the chain itself as q_bits=[...].")
            return
        base = as_int(self.base_limbs, "base_limbs", min=1, fix="at least 1: q_0 needs at least one prime")
        if len(self.q_bits) < base:
            raise ParameterError(
                f"q_bits lists {len(self.q_bits)} primes but base_limbs = {base} of them form q_0; list q_0's "
                f"{base} prime(s) first, then one prime per level."
            )
        levels = len(self.q_bits) - base
        if self.levels is not None and self.levels != levels:
            raise ParameterError(
                f"levels = {self.levels!r} but q_bits lists {levels} level prime(s) after base_limbs = {base} base "
                f"prime(s); drop levels (q_bits fixes it) or list {self.levels} level primes."
            )
        self._set("levels", levels)

    @property
    def base_bits(self) -> tuple[int, ...]:
        """Bits requested for each base prime of q_0 (the word size in the short form)."""
        return self.q_bits[: self.base_limbs] if self.q_bits is not None else (self.word_bits,) * self.base_limbs

    @property
    def special_bits(self) -> tuple[int, ...]:
        """Bits requested for each special prime of P (the word size in the short form)."""
        return self.p_bits if self.p_bits is not None else (self.word_bits,) * self.special_primes

    def _check_before_derivation(self, level_prime_bits: int) -> None:
        """Refuse insecure parameters and absurd prime counts before deriving any prime
        (which, for absurd level counts, would take long): every prime of b bits is above
        2^(b-1), so this lower bound of log2(Q·P) already decides most cases;
        `_check_security` does the exact test."""
        self._check_security_lower_bound(level_prime_bits)
        primes = self.levels + self.base_limbs + self.special_primes
        if primes > MAX_PRIMES:
            raise ParameterError(
                f"levels + base_limbs + special_primes = {primes} primes is more than fhec supports ({MAX_PRIMES}): "
                f"a ciphertext would hold {primes} limbs per part. Use fewer levels."
            )

    def _check_security_lower_bound(self, level_prime_bits: int) -> None:
        if self.security is None:
            return
        fixed = self.base_bits + self.special_bits
        lower = sum(b - 1 for b in fixed) + self.levels * (level_prime_bits - 1)
        bound = max_log_qp(self.N, self.security)
        if lower > bound:
            raise InsecureParametersError(
                f"log2(Q·P) is at least {lower} bits ({self.levels} levels of ~{level_prime_bits}-bit primes plus "
                f"{len(fixed)} base and special primes), which exceeds {bound} bits, the HE-standard "
                f"maximum for N = {self.N} at {self.security}-bit security. Use fewer levels, a smaller scale/word "
                f"size, or a larger N; or pass security=None to accept insecure parameters for experiments."
            )

    def _check_derived(self) -> None:
        """Checks that need the derived primes: the dnum literal, then security."""
        if self.dnum is not None and self.dnum != self.hybrid_dnum:
            raise ParameterError(
                f"dnum = {self.dnum} does not match ceil(limbs / special_primes) = {self.hybrid_dnum}; "
                f"set special_primes = ceil({self.max_limbs} / dnum) instead."
            )
        self._check_security()

    def _check_security(self) -> None:
        if self.security is None:
            return
        bound = max_log_qp(self.N, self.security)
        if self.log_qp > bound:
            raise InsecureParametersError(
                f"log2(Q·P) = {self.log_qp:.1f} bits exceeds {bound} bits, the HE-standard maximum "
                f"for N = {self.N} at {self.security}-bit security (special primes included). "
                f"Use fewer levels, a smaller scale/word size, or a larger N; or pass security=None "
                f"to accept insecure parameters for experiments."
            )

    # -- derived quantities -------------------------------------------------------------

    @property
    def top_level(self) -> int:
        """The level of a fresh ciphertext (= `levels`)."""
        return self.levels

    @property
    def max_limbs(self) -> int:
        """Limbs of Q at the top level."""
        return self.base_limbs + self.levels

    def limbs_at(self, level: int) -> int:
        """Number of RNS limbs of Q held by a ciphertext at `level`."""
        return self.base_limbs + level

    def moduli_at(self, level: int) -> tuple[int, ...]:
        """The primes of Q held at `level`."""
        return self.moduli[: self.limbs_at(level)]

    # Computed once per parameter set (a pure function of it, kept in the instance's
    # __dict__, outside the compared fields): the type rules and the builder's range
    # check ask for them at every node of every rebuild.

    @functools.cached_property
    def _log2_q_by_level(self) -> tuple[float, ...]:
        return tuple(sum(math.log2(q) for q in self.moduli_at(level)) for level in range(self.top_level + 1))

    @functools.cached_property
    def _half_q_by_level(self) -> tuple[float, ...]:
        return tuple(_half_q(self.moduli_at(level)) for level in range(self.top_level + 1))

    @functools.cached_property
    def _derived(self) -> dict:
        return {}

    def derived(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, evaluated once per parameter set and `key`: for quantities that
        are pure functions of the parameters and `key` (the noise a key switch adds at a
        level, ...) that the type rules ask for at every node."""
        memo = self._derived
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def log2_q_at(self, level: int) -> float:
        """log2 Q_level: bits of the primes of Q held at `level`."""
        return self._log2_q_by_level[level] if 0 <= level <= self.top_level else sum(
            math.log2(q) for q in self.moduli_at(level))

    def half_q_at(self, level: int) -> float:
        """Q_level / 2 as a float; `math.inf` beyond 2^1023 (bootstrapping sets at N = 2^16
        and 2^17 have Q of 1,200 bits and more)."""
        return self._half_q_by_level[level] if 0 <= level <= self.top_level else _half_q(self.moduli_at(level))

    @property
    def log_q(self) -> float:
        """Bits of Q at the top level."""
        return sum(math.log2(q) for q in self.moduli)

    @property
    def log_qp(self) -> float:
        """Bits of Q·P, special primes included (what the security bound is about)."""
        return self.log_q + sum(math.log2(p) for p in self.special_moduli)

    @property
    def alpha(self) -> int:
        """Primes per hybrid key-switching digit of the main basis (the top level's)."""
        return self.special_primes

    @property
    def hybrid_dnum(self) -> int:
        """Number of hybrid key-switching digits at the top level: ceil(L / alpha)."""
        return -(-self.max_limbs // self.alpha)

    # -- the key-switching bases ---------------------------------------------------------
    #
    # One basis by default: every key switch extends to Q_l·P with the `special_primes`
    # primes of P, in digits of alpha = special_primes primes. With `residual_top` and
    # `residual_special_primes`, the key switches at levels <= residual_top use the
    # *residual* basis instead: P' = the first residual_special_primes primes of P (so P'
    # divides P and every special-prime index keeps its meaning) and digits of that many
    # primes, as Osiris Table II gives set IV's residual levels alpha = 5 and its
    # bootstrapping alpha = 14. A basis is a property of the level, so the evaluator, the
    # noise rules, the cost model and the lowering all read it from here.

    MAIN_BASIS = "main"
    RESIDUAL_BASIS = "residual"

    def key_basis_at(self, level: int) -> str:
        """The key-switching basis of a key switch at `level`: "residual" at or below
        `residual_top` when the parameter set has a residual basis, else "main"."""
        if self.residual_top is not None and level <= self.residual_top:
            return self.RESIDUAL_BASIS
        return self.MAIN_BASIS

    @property
    def key_bases(self) -> tuple[str, ...]:
        """The bases whose keys exist: ("main",) or ("main", "residual")."""
        return (self.MAIN_BASIS,) if self.residual_top is None else (self.MAIN_BASIS, self.RESIDUAL_BASIS)

    def basis_special_primes(self, basis: str) -> int:
        """Special primes of `basis` (its alpha)."""
        return self.residual_special_primes if basis == self.RESIDUAL_BASIS else self.special_primes

    def basis_top_level(self, basis: str) -> int:
        """The highest level whose key switches use `basis` (its keys' digits cover its limbs)."""
        return self.residual_top if basis == self.RESIDUAL_BASIS else self.top_level

    def alpha_at(self, level: int) -> int:
        """Primes per hybrid digit, and special primes, of a key switch at `level`."""
        return self.basis_special_primes(self.key_basis_at(level))

    def special_moduli_at(self, level: int) -> tuple[int, ...]:
        """The primes of P a key switch (or a value over Q·P) at `level` extends to."""
        return self.special_moduli[: self.alpha_at(level)]

    def digit_groups(self, level: int) -> tuple[tuple[int, ...], ...]:
        """Limb indices of each non-empty hybrid digit at `level` (groups of `alpha_at(level)`
        primes of Q)."""
        limbs, alpha = self.limbs_at(level), self.alpha_at(level)
        return tuple(tuple(range(j, min(j + alpha, limbs))) for j in range(0, limbs, alpha))

    @property
    def fingerprint(self) -> tuple:
        """Hashable identity of the parameter set: objects with different fingerprints never mix."""
        residual = () if self.residual_top is None else (("residual", self.residual_top, self.residual_special_primes),)
        return (type(self).__name__, self.N, self.moduli, self.special_moduli, *residual, self._scheme_extra())

    def _scheme_extra(self) -> tuple:
        return ()

    def _derive_special_and_base(self, exclude: set[int]) -> tuple[int, ...]:
        """Pick the special primes P, then the base primes of q_0: the largest primes of
        their sizes (word-size primes in the short form), P first."""
        if self.q_bits is None and self.p_bits is None:  # the short form, unchanged since it was written
            base = ntt_primes(self.N, self.word_bits, self.base_limbs + self.special_primes, tuple(sorted(exclude)))
            object.__setattr__(self, "special_moduli", tuple(base[: self.special_primes]))
            return base[self.special_primes:]
        primes = _primes_of_sizes(self.N, self.special_bits + self.base_bits, exclude)
        object.__setattr__(self, "special_moduli", tuple(primes[: self.special_primes]))
        return tuple(primes[self.special_primes:])


def _known_keywords(cls):
    """`cls` (a parameter dataclass) whose constructor refuses an unknown keyword with a
    `ParameterError` naming the closest parameter, instead of the dataclass's raw
    `TypeError` (``CKKSParams(levle=3)``, or ``BGVParams(bootstrap=...)``)."""
    init = cls.__init__
    names = [f.name for f in dataclasses.fields(cls) if f.init]

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            k = unknown[0]
            close = difflib.get_close_matches(k, names, n=1)
            other = {"CKKSParams": "BGVParams", "BGVParams": "CKKSParams"}[cls.__name__]
            theirs = {f.name for f in dataclasses.fields(globals()[other])}  # both are defined by any call
            hint = (f"did you mean {close[0]!r}?" if close else
                    f"it is a {other} parameter" if k in theirs else f"its parameters are {', '.join(names)}")
            raise ParameterError(f"{cls.__name__} has no parameter {k!r}: {hint}")
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls


@_known_keywords
@dataclass(frozen=True)
class CKKSParams(_CommonParams):
    """CKKS parameters (approximate arithmetic on N/2 complex slots; fhec takes and returns reals).

    Args:
        N: ring degree, a power of two.
        levels: number of rescales available (multiplicative depth).
        scale_bits: log2 of the encoding scale; each level's prime has about this many bits.
        word_bits: machine word; every prime is below 2**word_bits (F1: 32).
        special_primes: alpha, primes of P and primes per hybrid key-switching digit.
        dnum: accepted for symmetry with other libraries; when given it must equal
            ceil((base_limbs + levels) / special_primes).
        base_limbs: primes of q_0 (the headroom of the decrypted value is
            log2(q_0) − scale_bits bits).
        keyswitch: default key-switching method, "hybrid" or "bv".
        security: 128, 192, 256, or None to skip the HE-standard check (insecure).
        min_precision_bits: estimated worst-slot precision below which an explicitly
            requested key-switching method raises a `PrecisionWarning` (below 1 bit it is
            a `PrecisionError`; `fhec.schemes.precision`). None turns both off (to study
            imprecise configurations on purpose). Not part of the fingerprint.
        q_bits: the explicit chain (module doc): bits of q_0's `base_limbs` primes, then
            of each level's prime (all ``scale_bits``, which defaults to them). Fixes
            `levels`; e.g. ``q_bits=[60, 40, 40], p_bits=[60], word_bits=60`` is SEAL's
            ``{60, 40, 40, 60}``.
        p_bits: bits of each special prime of P (fixes `special_primes`).
        residual_top, residual_special_primes: a second, smaller key-switching basis for
            the levels at and below `residual_top` (both or neither; None: one basis): their
            key switches use the first `residual_special_primes` primes of P, in digits of
            that many primes, with keys of their own (Osiris Table II: set IV's residual
            levels alpha = 5, its bootstrapping alpha = 14). `residual_top` < `levels`,
            `residual_special_primes` < `special_primes`.
        bootstrap: a `fhec.BootstrapConfig` to allow ``x.bootstrap()`` (None: no
            bootstrapping). Its Hamming weight decides the secret's distribution, so it is
            part of the fingerprint.

    `levels` is required unless `q_bits` gives the chain; `scale_bits` defaults to 30
    (the short form) or to the level primes' size (`q_bits`).

    Raises: `InvalidRingDegreeError`, `WordSizeError`, `ParameterError`,
    `InsecureParametersError` (log2 QP above the standard's bound; for a sparse secret,
    not covered by a published estimate of `fhec.schemes.sparse_security`).
    """

    N: int
    levels: int | None = None
    scale_bits: int | None = None
    word_bits: int = 32
    special_primes: int = 1
    dnum: int | None = None
    base_limbs: int = 1
    keyswitch: KeySwitchMethod = "hybrid"
    security: int | None = 128
    min_precision_bits: float | None = 8.0
    q_bits: tuple[int, ...] | None = None
    p_bits: tuple[int, ...] | None = None
    bootstrap: BootstrapConfig | None = None
    residual_top: int | None = None
    residual_special_primes: int | None = None

    scales: tuple[float, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._validate_common()
        self._set("scale_bits", self._default_scale_bits() if self.scale_bits is None else self.scale_bits)
        self._set("scale_bits", as_int(
            self.scale_bits, "scale_bits", min=MIN_SCALE_BITS, max=self.word_bits,
            fix=f"each level's rescaling prime lies near 2^scale_bits, so it must fit the {self.word_bits}-bit word "
                f"(word_bits), and fhec's primes lie above 2^{MIN_WORD_BITS - 1}: near a smaller scale the level "
                f"scales would drift apart, and a product and a product by a constant at one level would land on "
                f"different scales",
        ))
        self._check_level_sizes()
        mpb = self.min_precision_bits
        if mpb is not None and (isinstance(mpb, bool) or not isinstance(mpb, (int, float)) or not 0 <= mpb < 64):
            raise ParameterError(f"min_precision_bits = {mpb!r} must be a number of bits in [0, 64), or None.")
        self._check_before_derivation(self.scale_bits)
        used: set[int] = set()
        base = self._derive_special_and_base(used)
        used.update(base)
        used.update(self.special_moduli)
        # Walk down from the top level choosing q_l ≈ s_l² / 2^scale_bits (see module doc).
        target = float(2**self.scale_bits)
        scale = target
        level_primes: list[int] = []
        scales = [scale]
        search = NearestPrimes(self.N, self.word_bits, used)
        # Above 2^word_bits the scale only grows (every prime is smaller), so a scale past
        # what q_0 can hold fails _check_bottom_scale anyway: refuse it here, before it
        # overflows the float.
        q0_limit = 2.0 ** min(self.word_bits * self.base_limbs, 1023)  # q_0 past float range: no limit
        for _ in range(self.levels):
            if not scale < q0_limit:
                raise ParameterError(
                    f"the scale grows past 2^{math.log2(q0_limit):.0f} on the way down the {self.levels} levels: "
                    f"the {self.word_bits}-bit primes lie below 2^{self.scale_bits}, so each rescale divides by "
                    f"too little and no value would fit below q_0/2 at level 0. {self._lower_scale_advice()}, "
                    f"raise base_limbs (now {self.base_limbs}) for a larger q_0, or use fewer levels."
                )
            q = search.take(scale * scale / target)
            level_primes.append(q)
            scale = scale * scale / q
            scales.append(scale)
        # level_primes[0] is rescaled away first, so it is the LAST limb of Q.
        object.__setattr__(self, "moduli", tuple(base) + tuple(reversed(level_primes)))
        object.__setattr__(self, "scales", tuple(reversed(scales)))  # scales[l] = scale at level l
        self._check_derived()
        self._check_bottom_scale()
        self._set("bootstrap", check_bootstrap(self.bootstrap, self.N, self.levels, self.security))
        self._check_sparse_security()

    def _check_sparse_security(self) -> None:
        """A sparse secret is outside the HE standard's table (checked above for the dense
        bound, which no sparse secret can exceed): it must also be covered by a published
        estimate (`fhec.schemes.sparse_security`), or security=None."""
        h = self.secret_hamming_weight
        if h is None or self.security is None:
            return
        from fhec.schemes.sparse_security import check_sparse_secret

        check_sparse_secret(h, self.N, self.log_qp, self.security)

    def _default_scale_bits(self) -> int:
        """30, or the size of the explicit chain's level primes (its top one)."""
        if self.q_bits is not None and self.levels > 0:
            return self.q_bits[-1]
        return min(30, self.word_bits)

    def _check_level_sizes(self) -> None:
        """CKKS keeps every level's scale at about 2**scale_bits, which needs rescaling
        primes of that size: an explicit chain's level primes must all be scale_bits."""
        if self.q_bits is None:
            return
        sizes = self.q_bits[self.base_limbs:]
        if any(b != self.scale_bits for b in sizes):
            raise ParameterError(
                f"q_bits's level primes have {list(sizes)} bits, but fhec keeps every CKKS level's scale at "
                f"2^scale_bits = 2^{self.scale_bits} (as OpenFHE's FLEXIBLEAUTO does), which needs rescaling primes "
                f"of scale_bits bits: give every level prime {self.scale_bits} bits (q_0 and p_bits may differ), or "
                f"set scale_bits to their common size."
            )

    def _check_bottom_scale(self) -> None:
        """A level-0 ciphertext holds scale·m below q_0/2 (centered): a scale at level 0
        of q_0/2 or more leaves no room for any message, so every result would decrypt
        to garbage. (With scale_bits near word_bits the scale also drifts upward as
        the level primes run out near 2^scale_bits.)"""
        q0_bits = sum(math.log2(q) for q in self.moduli[: self.base_limbs])
        if not min(self.scales) >= 2.0:  # the level primes ran away from the scale: it collapsed
            raise ParameterError(
                f"the scale falls to 2^{math.log2(max(min(self.scales), 1e-300)):.0f} on the way down the {self.levels} "
                f"levels: too few primes ≡ 1 mod 2N = {2 * self.N} lie near 2^{self.scale_bits} (the nearest unused "
                f"ones lie above it), so each rescale divides by too much. {self._raise_scale_advice()}, use a "
                f"smaller N, or use fewer levels."
            )
        bottom = math.log2(self.scales[0])
        if bottom >= q0_bits - 1:
            raise ParameterError(
                f"the level-0 scale is 2^{bottom:.1f}, but q_0 (the {self.base_limbs} base prime(s)) has only "
                f"{q0_bits:.1f} bits: no value fits below q_0/2, so every result would decrypt to garbage. "
                f"{self._lower_scale_advice()}, raise base_limbs (now {self.base_limbs}) or q_0's size "
                f"(q_bits[0]), or use fewer levels."
            )

    def _lower_scale_advice(self) -> str:
        """How to make the scale smaller, in the terms the user set it: the level primes of
        an explicit chain set it (scale_bits defaults to their size, never typed), and
        "below word_bits" only helps a scale_bits that is not already below it."""
        if self.q_bits is not None:
            q0_bits = sum(self.q_bits[: self.base_limbs])
            smaller = max(MIN_SCALE_BITS, min(self.word_bits, q0_bits) - 20)
            example = list(self.q_bits[: self.base_limbs]) + [smaller] * self.levels
            return (f"Give q_bits's level primes (now {self.scale_bits} bits, which set the scale) fewer bits than "
                    f"q_0, e.g. q_bits={example}")
        below = f" below word_bits (now {self.word_bits})" if self.scale_bits >= self.word_bits else ""
        return f"Lower scale_bits (now {self.scale_bits}){below}"

    def _raise_scale_advice(self) -> str:
        """How to make the scale larger (more NTT primes lie near a larger scale), in the
        terms the user set it."""
        what = (f"q_bits's level primes (now {self.scale_bits} bits)" if self.q_bits is not None
                else f"scale_bits (now {self.scale_bits})")
        return f"Raise {what} toward word_bits (now {self.word_bits}), where more such primes lie"

    scheme = "ckks"

    @classmethod
    def for_program(
        cls,
        program_or_depth,
        precision_bits: float = 12.0,
        security: int | None = 128,
        word_bits: int = 32,
        *,
        max_value: float = 1.0,
        min_N: int | None = None,
        explain: bool = True,
    ) -> "CKKSParams":
        """Choose N, the levels, the scale, q_0 and P for a program (`fhec.schemes.auto_params`).

        `program_or_depth`: the multiplicative depth, or a `fhec.Program` (its depth is
        measured). The result holds `precision_bits` bits of estimated worst-slot
        precision through a chain of that many products of values up to `max_value`,
        with every prime below 2**word_bits (32 for F1), at the smallest N that is
        `security`-bit secure (None: insecure, N >= min_N) and at least `min_N` (a
        target's smallest ring degree). Prints its choice in one line unless
        `explain=False`. Raises `ParameterError` when no N up to 2^17 can do it.
        """
        from fhec.schemes.auto_params import ckks_for_program

        return ckks_for_program(program_or_depth, precision_bits, security, word_bits, max_value=max_value,
                                min_N=min_N, explain=explain)

    @classmethod
    def preset(cls, name: str, **changes) -> "CKKSParams":
        """A named parameter set shipped with fhec (`fhec.schemes.presets.PRESETS`):
        "bootstrap-toy" (N = 2^12, insecure, for tests), "lattigo-n16" (N = 2^16, like
        Lattigo's default bootstrapping set, 128-bit with h = 192), "f1-ckks-bootstrap"
        (F1's Table 3 setting: non-packed, one slot; insecure), "f1-ckks-bootstrap-packed"
        (the same chain fully packed; insecure). `changes` override fields of the literal (every
        check applies to the result). Raises `ParameterError` for an unknown name."""
        from fhec.schemes.presets import preset_literal

        return cls(**{**preset_literal(name), **changes})

    def _scheme_extra(self) -> tuple:
        h = self.secret_hamming_weight
        return () if h is None else (("hamming_weight", h),)

    @property
    def secret_hamming_weight(self) -> int | None:
        """h of the sparse ternary secret the bootstrap config asks for; None: dense ternary."""
        return self.bootstrap.hamming_weight if self.bootstrap is not None else None

    @property
    def slots(self) -> int:
        """Number of (complex) slots, N/2."""
        return self.N // 2

    def scale_at(self, level: int) -> float:
        """The canonical scale of a ciphertext at `level`."""
        return self.scales[level]

    @property
    def default_scale(self) -> float:
        """Scale of a freshly encrypted top-level ciphertext (2**scale_bits)."""
        return self.scales[self.levels]


_LARGER_PRIMES = {
    "level primes": "raise modulus_bits (or q_bits's level sizes) or word_bits",
    "q_0 primes": "raise word_bits (or q_bits's first base_limbs sizes)",
    "special primes": "raise word_bits (or p_bits)",
}
"""BGV: which ciphertext primes limit t -> how to make them larger."""


@_known_keywords
@dataclass(frozen=True)
class BGVParams(_CommonParams):
    """BGV parameters (exact arithmetic mod a prime t on N slots, a 2 × N/2 hypercube).

    Args:
        N: ring degree, a power of two.
        levels: number of modulus switches available.
        plain_modulus: t, a prime ≡ 1 mod 2N (so that batching gives N slots).
        word_bits: machine word; the base and special primes are word_bits-bit primes.
        modulus_bits: bits of each level's (modulus-switching) prime; default
            word_bits − 2, so that N = 2^13 with 5 levels of 32-bit words is 128-bit secure
            (each switch still removes ~30 bits of noise, more than a multiply adds).
        special_primes, dnum, base_limbs, keyswitch, security: as for `CKKSParams`.
        q_bits, p_bits: the explicit chain (module doc); each level prime may have its own
            size here (`modulus_bits` is then not given).
        residual_top, residual_special_primes: as for `CKKSParams`.

    Raises: as `CKKSParams`, plus `InvalidModulusError` when t is not a prime ≡ 1 mod 2N.
    """

    N: int
    levels: int | None = None
    plain_modulus: int = 65537
    word_bits: int = 32
    modulus_bits: int | None = None
    special_primes: int = 1
    dnum: int | None = None
    base_limbs: int = 1
    keyswitch: KeySwitchMethod = "hybrid"
    security: int | None = 128
    q_bits: tuple[int, ...] | None = None
    p_bits: tuple[int, ...] | None = None
    residual_top: int | None = None
    residual_special_primes: int | None = None

    def __post_init__(self) -> None:
        from fhec.ring.primes import check_ntt_prime

        self._validate_common()
        self._set("plain_modulus", as_int(self.plain_modulus, "plain_modulus", min=3,
                                          fix="use a prime t ≡ 1 mod 2N such as 65537"))
        check_ntt_prime(self.plain_modulus, self.N)
        self._set("modulus_bits", as_optional_int(self.modulus_bits, "modulus_bits", min=MIN_WORD_BITS,
                                                  max=self.word_bits))
        if self.q_bits is not None and self.modulus_bits is not None:
            raise ParameterError("give the level primes' size either as modulus_bits or in q_bits, not both.")
        bits = self.word_bits - 2 if self.modulus_bits is None else self.modulus_bits
        # the smallest level prime's size (None: no level), without a tuple of `levels` entries:
        # levels is not yet checked against the prime count here and may be 2**63
        if self.q_bits is not None:
            smallest_level = min(self.q_bits[self.base_limbs:], default=None)
        else:
            smallest_level = bits if self.levels > 0 else None
        self._check_plain_modulus_fits(smallest_level)
        self._check_before_derivation(bits if smallest_level is None else smallest_level)  # a lower bound of log2(Q·P)
        used = {self.plain_modulus}
        base = self._derive_special_and_base(used)
        used.update(base)
        used.update(self.special_moduli)
        if self.q_bits is None:
            level_primes = ntt_primes(self.N, bits, self.levels, tuple(sorted(used)))
        else:
            level_primes = _primes_of_sizes(self.N, self.q_bits[self.base_limbs:], used)
        object.__setattr__(self, "moduli", tuple(base) + tuple(level_primes))
        self._check_derived()

    def _check_plain_modulus_fits(self, smallest_level: int | None) -> None:
        """t must have 5 bits fewer than every ciphertext prime. One check against the
        smallest of them all, so that the limit it states is the one that holds (a check of
        q_0 and P first said "at most 27 bits" for 30-bit level primes, which then refused
        27 bits)."""
        sizes = {"level primes": smallest_level, "q_0 primes": min(self.base_bits),
                 "special primes": min(self.special_bits)}
        which, smallest = min(((k, v) for k, v in sizes.items() if v is not None), key=lambda kv: kv[1])
        t_bits = self.plain_modulus.bit_length()
        if t_bits >= smallest - 4:
            raise ParameterError(
                f"plain_modulus t = {self.plain_modulus} ({t_bits} bits) is too large for {smallest}-bit {which}: t "
                f"may have at most {smallest - 5} bits (5 fewer than every ciphertext prime, and the {which} are the "
                f"smallest); {_LARGER_PRIMES[which]}, or use a smaller t."
            )

    scheme = "bgv"

    @classmethod
    def for_program(
        cls,
        program_or_depth,
        plain_modulus: int = 65537,
        security: int | None = 128,
        word_bits: int = 32,
        *,
        min_N: int | None = None,
        explain: bool = True,
    ) -> "BGVParams":
        """Choose N and the levels for a program of this depth (or a `fhec.Program`)
        computing mod `plain_modulus`: the smallest `security`-bit secure N at least
        `min_N` that batches t (t ≡ 1 mod 2N), levels = depth
        (`fhec.schemes.auto_params`). Prints its choice in one line unless
        `explain=False`. Raises `ParameterError` when no such N exists."""
        from fhec.schemes.auto_params import bgv_for_program

        return bgv_for_program(program_or_depth, plain_modulus, security, word_bits, min_N=min_N, explain=explain)

    @property
    def slots(self) -> int:
        """Number of slots, N (two rows of N/2)."""
        return self.N

    def _scheme_extra(self) -> tuple:
        return (self.plain_modulus, self.modulus_bits)


Params = CKKSParams | BGVParams
