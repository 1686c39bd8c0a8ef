"""Plaintext matrices -> the generalized diagonals a LINEAR_TRANSFORM node stores.

The diagonal method (Halevi–Shoup) writes y = M x as y = sum_k diag_k ⊙ rot(x, k) with
diag_k[i] = M[i, (i + k) mod slots] for M zero-padded to slots x slots. BGV slots form
two rows of N/2 that rotations cycle separately, so an N x N matrix splits into
same-row diagonals (rotate) and cross-row diagonals (swap rows, then rotate):
for slot (r, i) and input slot (r', j), step = (j - i) mod N/2, swap = (r != r').

Only nonzero diagonals are kept (a banded matrix such as a convolution needs few
rotations). The result is a sorted tuple of (step, swap, Const).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from fhec.errors import InvalidPlaintextError, ProgramError, TooManyValuesError
from fhec.frontend import constants
from fhec.ir.he import Const, compact_const
from fhec.ir.he_types import row_length
from fhec.schemes.encoding import reduce_mod
from fhec.schemes.params import Params


def _matrix_diagonals(params: Params, matrix: np.ndarray, where) -> dict[tuple[int, bool], np.ndarray]:
    slots, row = params.slots, row_length(params)
    m, n = matrix.shape
    if m > slots or n > slots:
        raise TooManyValuesError(
            f"the matrix is {m} x {n} but the parameter set has {slots} slots (N = {params.N}); "
            f"use at most {slots} x {slots} or a larger N.",
            where,
        )
    rows, cols = np.nonzero(matrix)
    entries = matrix[rows, cols]
    if params.scheme == "bgv":
        swap = (rows // row) != (cols // row)
        steps = (cols % row - rows % row) % row
    else:
        swap = np.zeros(rows.shape, dtype=bool)
        steps = (cols - rows) % slots
    out: dict[tuple[int, bool], np.ndarray] = {}
    for key in sorted(set(zip(steps.tolist(), swap.tolist()))):
        mask = (steps == key[0]) & (swap == key[1])
        vec = np.zeros(slots, dtype=matrix.dtype)
        vec[rows[mask]] = entries[mask]
        out[(int(key[0]), bool(key[1]))] = vec
    return out


def _dict_diagonals(params: Params, diagonals: dict, where) -> dict[tuple[int, bool], np.ndarray]:
    row = row_length(params)
    out: dict[tuple[int, bool], np.ndarray] = {}
    key_of: dict[tuple[int, bool], Any] = {}  # the key that gave each step, to name both of a clash
    for key, vec in diagonals.items():
        if isinstance(key, tuple) and len(key) == 2 and key[0] == "swap" and params.scheme == "bgv":
            step, swap = key[1], True
        else:
            step, swap = key, False
        if not isinstance(step, numbers.Integral) or isinstance(step, bool):
            raise ProgramError(
                f"linear_transform diagonal key {key!r} must be an integer rotation step"
                + (' (or ("swap", step) for BGV)' if params.scheme == "bgv" else "") + ".",
                where,
            )
        k = (int(step) % row, swap)
        if k in out:
            raise ProgramError(f"linear_transform diagonals {key_of[k]!r} and {key!r} are the same rotation step "
                               f"({k[0]} mod the row length {row}); merge them into one diagonal.", where)
        key_of[k] = key
        if isinstance(vec, numbers.Number) and not isinstance(vec, bool):  # {k: c}: c in every slot
            vec = np.full(params.slots, vec)
        out[k] = constants.vector(params, vec, where, "diagonal")
    return out


def diagonals_of(params: Params, matrix, where: str | None) -> tuple[tuple[int, bool, Const], ...]:
    """The LINEAR_TRANSFORM attribute for a matrix or a {step: vector} dict (see module doc).

    Raises `TooManyValuesError` (larger than slots), `InvalidPlaintextError` (not real /
    not integer), `ProgramError` (not 2-D, bad keys, all zeros).
    """
    if isinstance(matrix, dict):
        diags = _dict_diagonals(params, matrix, where)
    else:
        try:
            arr = np.asarray(matrix)
        except (TypeError, ValueError) as e:  # ragged rows
            raise ProgramError(f"linear_transform needs a 2-D matrix with rows of equal length: {e}", where) from None
        if arr.ndim != 2:
            raise ProgramError(f"linear_transform needs a 2-D matrix or a {{step: vector}} dict, got shape {arr.shape}.", where)
        if params.scheme == "ckks":
            if np.iscomplexobj(arr) or not np.issubdtype(arr.dtype, np.number):
                raise InvalidPlaintextError("the matrix must hold real numbers.", where)
            arr = arr.astype(np.float64)
            if not np.all(np.isfinite(arr)):
                raise InvalidPlaintextError("the matrix holds NaN or infinite values.", where)
        else:
            if not np.issubdtype(arr.dtype, np.integer) and arr.dtype != object:
                raise InvalidPlaintextError(f"BGV matrices must hold integers, got dtype {arr.dtype}.", where)
            try:  # exact for any integer dtype (uint64 must not wrap through int64)
                arr = reduce_mod(arr, params.plain_modulus, "matrix entries").astype(np.int64)
            except InvalidPlaintextError as e:
                raise InvalidPlaintextError(e.bare_message, where) from None
        diags = _matrix_diagonals(params, arr, where)
    kept = [(k, s, v) for (k, s), v in sorted(diags.items(), key=lambda kv: (kv[0][1], kv[0][0])) if np.any(v != 0)]
    if not kept:
        raise ProgramError("the linear transform's matrix is all zeros; multiply by 0 instead.", where)
    return tuple((k, s, compact_const(v)) for k, s, v in kept)  # diagonals are mostly zero
