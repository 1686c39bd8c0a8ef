"""Chebyshev approximations of Python functions for encrypted evaluation (numpy only),
public as `fhec.approx` and `fhec.Approximation`.

    a = fhec.approx(np.tanh, domain=(-8, 8), degree=63)
    print(a.max_error)                 # sup |f - a.poly| on a dense grid of the domain
    y = x.polynomial(a)                # or x.polynomial(a.poly): a numpy Chebyshev

`approx(f, domain, degree)` interpolates f at the ``degree + 1`` Chebyshev points of the
first kind mapped onto the domain (near-minimax for smooth f, no Runge effect) and
returns an `Approximation`: the numpy ``Chebyshev`` series with that domain and its
maximum error measured on a grid of ``max(2000, 20·(degree + 1))`` points (endpoints
included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.polynomial import Chebyshev

from fhec.errors import PolynomialError
from fhec.validate import as_1d_array


@dataclass(frozen=True)
class Approximation:
    """A Chebyshev interpolant of a function: `poly` (a numpy ``Chebyshev`` carrying the
    domain) and `max_error`, the largest |f(x) − poly(x)| seen on a dense grid of the
    domain (a measurement, not a bound). Calling it evaluates `poly`.
    `Cipher.polynomial` accepts it directly."""

    poly: Chebyshev
    max_error: float

    @property
    def degree(self) -> int:
        return self.poly.degree()

    @property
    def domain(self) -> tuple[float, float]:
        return tuple(float(v) for v in self.poly.domain)

    def __call__(self, x):
        """The approximation evaluated in plaintext at `x` (a number or a 1-D vector).
        Raises `PolynomialError` for anything else."""
        values = as_1d_array(x, "the approximation's argument", error=PolynomialError)
        if not (np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)):
            raise PolynomialError(f"an Approximation is evaluated at real numbers, not {values.dtype} values.")
        return self.poly(values)


def _grid_size(degree: int) -> int:
    return max(2000, 20 * (degree + 1))


def approx(f: Callable, domain, degree: int) -> Approximation:
    """The degree-`degree` Chebyshev interpolant of `f` on `domain` = (a, b).

    `f` is called once with a numpy array of nodes and once with the error grid (it must
    be vectorised and return finite real values of the same shape). Raises
    `PolynomialError` for a degree that is not an integer in [0, 1024], a domain that is
    not a finite interval with a < b, or an `f` that fails or returns non-finite or
    wrongly shaped values.
    """
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or not 0 <= degree <= 1024:
        raise PolynomialError(f"approx(degree={degree!r}): the degree must be an integer between 0 and 1024.")
    try:
        a, b = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise PolynomialError(
            f"approx(domain={domain!r}): the domain must be a pair of numbers (a, b) with a < b."
        ) from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise PolynomialError(f"approx(domain=({a}, {b})): the domain must be a finite interval with a < b.")
    n = int(degree) + 1
    nodes = np.cos(np.pi * (np.arange(n) + 0.5) / n)  # Chebyshev points of the first kind on [-1, 1]
    xs = (b - a) / 2 * nodes + (a + b) / 2
    ys = _values(f, xs)
    # Discrete orthogonality of T_0..T_{n-1} at these nodes gives the interpolant's coefficients.
    k = np.arange(n)
    coeffs = (2.0 / n) * np.cos(np.outer(k, np.pi * (np.arange(n) + 0.5) / n)) @ ys
    coeffs[0] /= 2
    poly = Chebyshev(coeffs, domain=[a, b])
    grid = np.linspace(a, b, _grid_size(int(degree)))
    err = float(np.max(np.abs(_values(f, grid) - poly(grid))))
    return Approximation(poly, err)


def _values(f: Callable, xs: np.ndarray) -> np.ndarray:
    try:
        raw = np.asarray(f(xs))
        if np.iscomplexobj(raw) and np.any(np.imag(raw) != 0):
            raise PolynomialError(
                f"approx: {getattr(f, '__name__', f)!r} returns complex values; fhec approximates real functions "
                f"of real slots (CKKS slots here are real): approximate the real and imaginary parts separately.")
        ys = np.asarray(np.real(raw) if np.iscomplexobj(raw) else raw, dtype=np.float64)
    except PolynomialError:
        raise
    except Exception as e:  # the user's function: report whatever it raised
        raise PolynomialError(
            f"approx: calling {getattr(f, '__name__', f)!r} on a numpy array failed: {e!r}; "
            f"pass a vectorised function (e.g. wrap it with numpy.vectorize)."
        ) from e
    if ys.shape != xs.shape or not np.all(np.isfinite(ys)):
        raise PolynomialError(
            f"approx: {getattr(f, '__name__', f)!r} must return finite real values of the shape of its input "
            f"{xs.shape}; it returned shape {ys.shape}{' with NaN/inf' if ys.shape == xs.shape else ''}."
        )
    return ys


__all__ = ["Approximation", "approx"]
