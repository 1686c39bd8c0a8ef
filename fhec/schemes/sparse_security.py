"""Security of sparse ternary secrets: a table of published estimates, and the check
`CKKSParams` applies to a parameter set whose secret has Hamming weight h.

The HE standard's table (`fhec.schemes.params.max_log_qp`) assumes a uniform ternary
secret. A sparse secret (h nonzero coefficients, as CKKS bootstrapping uses to keep the
ModRaise overflow I small) is easier to attack: hybrid and dual attacks exploit the
sparsity (Son–Cheon 2019; Curtis–Player 2019). fhec does not estimate lattice security
itself. It accepts a sparse-secret parameter set only when a published estimate covers
it, row by row in `SPARSE_SECRET_ESTIMATES` (docs/security.md, "Sparse secrets"):

    a row (source, h_row, N, log QP_max, λ) covers (h, N, log QP, security) when
    N = N_row, h >= h_row, log QP <= log QP_max and security <= λ.

`h >= h_row` rests on one assumption, stated here: at fixed N and Q a denser secret is
at least as hard as a sparser one (the attacks' advantage comes from the zeros, and the
published tables, e.g. Curtis–Player's, grow with h). Nothing is interpolated across N.

Every row is a figure a source states; none is computed by fhec. Add a row only with its
source.
"""

from __future__ import annotations

from dataclasses import dataclass

from fhec.errors import InsecureParametersError


@dataclass(frozen=True)
class SparseEstimate:
    """One published security estimate of a sparse ternary secret.

    source: who states it, and where; h: Hamming weight; N: ring degree; log_qp: the
    largest log2(Q·P) the source states as secure (or the set's own log QP when the source
    states one set's security); security: the estimated bits of security.
    """

    source: str
    h: int
    N: int
    log_qp: int
    security: int


SPARSE_SECRET_ESTIMATES: tuple[SparseEstimate, ...] = (
    SparseEstimate(
        source="Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, 'Efficient Bootstrapping for Approximate Homomorphic "
               "Encryption with Non-Sparse Keys', EUROCRYPT 2021: its 2^15-slot bootstrapping set (505-bit output "
               "modulus, 19.1 bits) is stated 128-bit secure; h = 192 and log QP = 1553 are that set as Lattigo "
               "ships it (bootstrapping.N16QP1553H192H32)",
        h=192, N=2**16, log_qp=1553, security=128,
    ),
    SparseEstimate(
        source="Ebel and Reagen, 'Osiris: A Systolic Approach to Accelerating Fully Homomorphic Encryption', "
               "§VI, Table II sets III/IV: Lattigo v5.2's default bootstrapping parameters with h = 1024 'for "
               "128-bit security as log QP_max = 1630'",
        h=1024, N=2**16, log_qp=1630, security=128,
    ),
)
"""Published estimates for sparse ternary secrets (module doc; docs/security.md)."""


def covering_estimates(h: int, N: int, security: int) -> list[SparseEstimate]:
    """Rows that cover a secret of weight h at ring degree N for `security` bits, for some log QP."""
    return [e for e in SPARSE_SECRET_ESTIMATES if e.N == N and h >= e.h and security <= e.security]


def max_sparse_log_qp(h: int, N: int, security: int) -> int | None:
    """The largest log2(Q·P) a published estimate allows for weight h at N (None: no row)."""
    rows = covering_estimates(h, N, security)
    return max((e.log_qp for e in rows), default=None)


def check_sparse_secret(h: int, N: int, log_qp: float, security: int) -> None:
    """Raise `InsecureParametersError` unless a row of `SPARSE_SECRET_ESTIMATES` covers a
    sparse secret of weight h at ring degree N with log2(Q·P) = `log_qp` for `security`
    bits. The message names the covering rows (or those at N) and the fixes."""
    bound = max_sparse_log_qp(h, N, security)
    if bound is not None and log_qp <= bound:
        return
    at_n = [e for e in SPARSE_SECRET_ESTIMATES if e.N == N]
    known = "; ".join(f"h >= {e.h}: log QP <= {e.log_qp} ({e.security} bits)" for e in at_n) or "none"
    if bound is None:
        why = f"no published estimate in fhec's table covers a sparse secret of Hamming weight h = {h} at N = {N}"
    else:
        why = (f"log2(Q·P) = {log_qp:.1f} bits exceeds {bound} bits, the largest the published estimates allow for "
               f"h = {h} at N = {N}")
    raise InsecureParametersError(
        f"{why} for {security}-bit security (estimates at N = {N}: {known}; docs/security.md). Use a denser secret "
        f"(a larger hamming_weight, or hamming_weight=None for the HE-standard dense secret), fewer levels, or a "
        f"larger N; or pass security=None for an insecure experimental set."
    )
