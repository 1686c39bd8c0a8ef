"""What ``Cipher.polynomial`` accepts, checked and normalised into POLYNOMIAL attributes.

`series_of(params, coeffs, basis, domain, where)` returns ``(coeffs, basis, domain)``:
coefficients as IR scalars (CKKS ints / floats, BGV ints centered mod t) with trailing
zeros dropped (at least one kept), the basis ("power" or "chebyshev") and the domain as a
pair of floats, or None for the identity map onto [-1, 1].

Accepted inputs:

* a sequence (or 1-D array) of numbers, with ``basis=`` "power" (default) or
  "chebyshev" and an optional ``domain=(a, b)``;
* a ``numpy.polynomial.Polynomial`` or ``Chebyshev``: its coefficients, its kind as the
  basis and its domain (its window must be the default [-1, 1]);
* an `fhec.Approximation` (what `fhec.approx` returns): its Chebyshev series.

Everything else raises a `PolynomialError` (or, for non-integer BGV coefficients,
`InvalidPlaintextError`) naming the bad value, what to change and the DSL line `where`.
Domains are CKKS-only: BGV slots are integers mod t, where the map is not defined.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.polynomial import Chebyshev, Polynomial

from fhec.errors import PolynomialError
from fhec.frontend import constants
from fhec.ir.he_polynomial import BASES, degree
from fhec.schemes.params import Params

NUMPY_KINDS = {Polynomial: "power", Chebyshev: "chebyshev"}
"""numpy series classes and the basis their coefficients are in."""


def _from_numpy(obj, basis, domain, where):
    kind = next((k for cls, k in NUMPY_KINDS.items() if isinstance(obj, cls)), None)
    if kind is None:
        raise PolynomialError(
            f"polynomial() takes numpy Polynomial or Chebyshev series, not {type(obj).__name__}; convert it with "
            f".convert(kind=numpy.polynomial.Chebyshev).",
            where,
        )
    if not np.array_equal(np.asarray(obj.window, dtype=float), [-1.0, 1.0]):
        raise PolynomialError(
            f"the {type(obj).__name__}'s window is {list(obj.window)}, but fhec maps the domain onto [-1, 1]; "
            f"pass p.convert(domain=p.domain, window=[-1, 1]) instead.",
            where,
        )
    if basis is not None and basis != kind:
        raise PolynomialError(
            f"basis={basis!r} contradicts the {type(obj).__name__} given (its basis is {kind!r}); drop basis=.", where
        )
    own = tuple(float(v) for v in obj.domain)
    if domain is not None and tuple(float(v) for v in domain) != own:
        raise PolynomialError(
            f"domain={tuple(domain)!r} contradicts the {type(obj).__name__}'s own domain {own}; drop domain= "
            f"(the series' domain is used).",
            where,
        )
    return obj.coef, kind, own


def _check_domain(params: Params, domain, where):
    try:
        a, b = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise PolynomialError(f"domain={domain!r} must be a pair of numbers (a, b) with a < b.", where) from None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise PolynomialError(
            f"domain=({a!r}, {b!r}) is degenerate or not finite; give an interval (a, b) with a < b containing the "
            f"values the polynomial is evaluated on.",
            where,
        )
    if (a, b) == (-1.0, 1.0):
        return None
    if params.scheme != "ckks":
        raise PolynomialError(
            f"domain=({a}, {b}) needs the affine map (2x - a - b) / (b - a), which is not defined on integers "
            f"mod t; BGV polynomials take no domain (substitute the map into the coefficients).",
            where,
        )
    return (a, b)


def _scalar(params: Params, c, i: int, where):
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real):
        raise PolynomialError(
            f"coefficient {i} ({c!r}) is not a real number (fhec's slots are real); pass numbers only.", where
        )
    if not math.isfinite(float(c)):
        raise PolynomialError(f"coefficient {i} is {c!r}; every coefficient must be finite.", where)
    return constants.scalar(params, c.item() if isinstance(c, np.generic) else c, where)


def _ndim(value) -> int:
    """np.ndim, with ragged nesting (which numpy refuses) counted as not 1-D."""
    try:
        return np.ndim(value)
    except ValueError:
        return -1


def series_of(params: Params, coeffs, basis: str | None, domain, where: str | None) -> tuple[tuple, str, tuple | None]:
    """The POLYNOMIAL attributes (coeffs, basis, domain) of a user's series; see the module doc."""
    from fhec.frontend.approx import Approximation

    if isinstance(coeffs, Approximation):
        if params.scheme == "bgv":
            # its float coefficients would be refused one by one (a rounding residue "is not an integer")
            raise PolynomialError("fhec.approx gives a CKKS approximation of a real function; BGV computes on "
                                  "integers mod t: give integer coefficients (or a series mod t, e.g. a Fermat "
                                  "indicator) instead.", where)
        coeffs = coeffs.poly
    if isinstance(coeffs, (Polynomial, Chebyshev)) or type(coeffs).__module__.startswith("numpy.polynomial"):
        coeffs, basis, domain = _from_numpy(coeffs, basis, domain, where)
    basis = "power" if basis is None else basis
    if not isinstance(basis, str) or basis not in BASES:
        raise PolynomialError(f"basis={basis!r} is unknown; use one of {', '.join(map(repr, BASES))}.", where)
    if isinstance(coeffs, (str, bytes)) or _ndim(coeffs) != 1:
        raise PolynomialError(
            f"polynomial() takes a 1-D sequence of coefficients (lowest degree first) or a numpy series, "
            f"got {coeffs!r}.",
            where,
        )
    try:
        raw = list(coeffs)
    except TypeError:
        raise PolynomialError(f"polynomial() takes a sequence of coefficients, got {coeffs!r}.", where) from None
    if not raw:
        raise PolynomialError("polynomial([]) has no coefficients; give at least the constant term.", where)
    cs = tuple(_scalar(params, c, i, where) for i, c in enumerate(raw))
    cs = cs[: degree(cs) + 1]
    return cs, basis, None if domain is None else _check_domain(params, domain, where)
