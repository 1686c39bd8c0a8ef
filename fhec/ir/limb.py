"""The limb-level IR: one instruction per RNS residue vector, stored as numpy columns.

A `LimbProgram` is what the lowering (`fhec/passes/lower`) produces from the HE IR
and what the data-movement and cycle schedulers and the functional executor
(`fhec.sim.functional`) consume. Programs reach millions of instructions, so there is
no Python object per instruction or per value: everything is a flat integer column,
in the style of a netlist (ARCHITECTURE.md, STYLE.md "The big, low level IR as flat
integer columns"). This docstring is the specification of the encoding.

Values: RVecs
-------------
An *rvec* is one residue polynomial: N words, each a residue mod one prime. Rvecs
are named by their index ``0 .. num_rvecs-1`` (int32). Per rvec there are two
columns:

``rvec_class`` (uint8)  a `RVecClass`: INPUT, KSH and CONST rvecs are *loaded*
                        data (present from the start, never written);
                        INTERMEDIATE and OUTPUT rvecs are *computed*, each written
                        by exactly one instruction (SSA). OUTPUT rvecs are read out
                        at the end.
``rvec_mod`` (uint16)   index into ``moduli`` of the prime its words are residues of.

Identity tags say *which* input limb, hint limb, constant limb or output limb a
tagged (non-INTERMEDIATE) rvec is. They are stored sparsely, because intermediates
are the vast majority and have no identity: ``tagged`` (int32, ascending) lists the
ids of all non-INTERMEDIATE rvecs, and row i of ``tags`` (int64, shape
``(len(tagged), 4)``) is the tag of rvec ``tagged[i]``, padded with -1:

============  ==========================================  ====================
class         tag columns                                  index into
============  ==========================================  ====================
INPUT         (input_index, poly, limb)                    ``input_names``
KSH           (key_index, digit, component, limb)          ``key_names``
CONST         (const_index, limb)                          ``const_names``
OUTPUT        (output_index, poly, limb)                   ``output_names``
============  ==========================================  ====================

``poly`` is the ciphertext polynomial (0, 1, ...), ``limb`` the position of the
limb's prime in its RNS basis, ``digit`` the key-switch digit and ``component`` the
hint component (0 or 1, F1 Listing 1's ksh0 / ksh1). The name tables are small
tuples of str, e.g. ``key_names = ("relin/hybrid", "galois:5/hybrid", "galois:25/bv")``
(the key's source and key-switching method, `fhec.passes.lower._key_label`).

Instructions
------------
Instruction i is row i of eight columns (27 bytes per instruction):

``op`` (uint8)        a `LimbOp`
``dst`` (int32)       the rvec written
``src0``, ``src1``    rvecs read, -1 = none (``ARITY`` in `fhec.ir.limb_ops`)
(int32)
``mod`` (uint16)      index into ``moduli`` of the modulus m the op computes mod;
                      always equal to ``rvec_mod[dst]``
``imm`` (int32)       AUT: the Galois element k (odd, in [1, 2N));
                      MUL_CONST and BCONV: an index into ``constants``; else -1
``prio`` (int32)      the instruction's position in the global order chosen by the
                      lowering (F1 §4.2: "every instruction is tagged with a priority
                      that reflects its global order"); the schedulers follow it
``he_node`` (int32)   id of the HE-IR node the instruction implements, -1 = none

Array order is a valid execution order: every source is either loaded or written by
an earlier row. ``prio`` may differ from array order (a scheduler may issue any
dependence-respecting order); by default it equals it.

Semantics of each op (all arithmetic mod m = ``moduli[mod]``; every op first
reduces its sources mod m, a no-op for residues of m; only NTT and BCONV may read a
residue of another modulus) are listed on `LimbOp`. ``constants`` (uint64) holds the
constant table C; ``C[imm]`` is already reduced mod the instruction's modulus.

Program-wide scalars: ``N`` (ring degree), ``word_bits`` (machine word size; every
modulus is below ``2**word_bits``), ``moduli`` (a tuple of Python ints: every prime
used, ciphertext primes and special primes alike).

All arrays of a `LimbProgram` are read-only views. `verify_limb_program` checks every
invariant above (vectorized); `LimbProgramBuilder` builds programs with amortized
vectorized appends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb_ops import (
    IMM_KIND,
    NAME_TABLE_FIELD,
    NUM_OPS,
    TAG_FIELDS,
    TAG_WIDTH,
    ImmKind,
    LimbOp,
    RVecClass,
)
from fhec.ir.limb_verify import verify_limb_program

__all__ = [
    "LimbOp",
    "RVecClass",
    "ImmKind",
    "LimbProgram",
    "LimbProgramBuilder",
    "verify_limb_program",
    "word_bytes_for",
]

_INSTR_DTYPES: dict[str, Any] = {
    "op": np.uint8,
    "dst": np.int32,
    "src0": np.int32,
    "src1": np.int32,
    "mod": np.uint16,
    "imm": np.int32,
    "prio": np.int32,
    "he_node": np.int32,
}
_RVEC_DTYPES: dict[str, Any] = {"rvec_class": np.uint8, "rvec_mod": np.uint16}
_EMIT_COLUMNS = ("op", "dst", "src0", "src1", "mod", "imm", "he_node")  # the columns `emit` takes

def word_bytes_for(word_bits: int) -> int:
    """Bytes one word occupies in memory: 4 up to 32-bit words (F1's), else the word packed
    to whole bytes, ceil(word_bits / 8): a 40-bit word (Osiris §VI) is 5 bytes, a 60-bit one 8.

    Raises InternalError unless 1 <= word_bits <= 64.
    """
    if not 1 <= word_bits <= 64:
        raise InternalError(f"word_bits must be in [1, 64], got {word_bits}")
    return 4 if word_bits <= 32 else -(-word_bits // 8)


def _readonly(a: Any, dtype: Any, name: str, ndim: int = 1) -> np.ndarray:
    arr = np.asarray(a, dtype=dtype)
    if arr.ndim != ndim:
        raise InternalError(f"LimbProgram.{name} must be {ndim}-D, got shape {arr.shape}")
    view = arr.view()
    view.flags.writeable = False
    return view


@dataclasses.dataclass(frozen=True, eq=False)
class LimbProgram:
    """An immutable limb-level program; the encoding is documented in `fhec.ir.limb`.

    Construction only coerces dtypes, checks column lengths agree and makes the
    arrays read-only (raising InternalError otherwise); semantic invariants are
    checked by `verify_limb_program`. Usually built with `LimbProgramBuilder`.
    """

    N: int
    word_bits: int
    moduli: tuple[int, ...]
    # instruction columns
    op: np.ndarray
    dst: np.ndarray
    src0: np.ndarray
    src1: np.ndarray
    mod: np.ndarray
    imm: np.ndarray
    prio: np.ndarray
    he_node: np.ndarray
    # rvec columns
    rvec_class: np.ndarray
    rvec_mod: np.ndarray
    tagged: np.ndarray
    tags: np.ndarray
    # constant table and names
    constants: np.ndarray
    input_names: tuple[str, ...] = ()
    key_names: tuple[str, ...] = ()
    const_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "moduli", tuple(int(q) for q in self.moduli))
        for name in ("input_names", "key_names", "const_names", "output_names"):
            setattr_(self, name, tuple(getattr(self, name)))
        for name, dtype in (_INSTR_DTYPES | _RVEC_DTYPES).items():
            setattr_(self, name, _readonly(getattr(self, name), dtype, name))
        setattr_(self, "tagged", _readonly(self.tagged, np.int32, "tagged"))
        setattr_(self, "constants", _readonly(self.constants, np.uint64, "constants"))
        tags = np.asarray(self.tags, dtype=np.int64).reshape(-1, TAG_WIDTH)
        setattr_(self, "tags", _readonly(tags, np.int64, "tags", ndim=2))

        n = len(self.op)
        bad = [k for k in _INSTR_DTYPES if len(getattr(self, k)) != n]
        if bad:
            raise InternalError(f"LimbProgram: instruction columns {bad} differ in length from op ({n})")
        if len(self.rvec_mod) != len(self.rvec_class):
            raise InternalError("LimbProgram: rvec_mod and rvec_class differ in length")
        if len(self.tags) != len(self.tagged):
            raise InternalError("LimbProgram: tags and tagged differ in length")
        word_bytes_for(self.word_bits)

    # --- sizes -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.op)

    @property
    def num_rvecs(self) -> int:
        """Number of rvecs (loaded and computed)."""
        return len(self.rvec_class)

    @property
    def word_bytes(self) -> int:
        """Bytes per stored word (see `word_bytes_for`)."""
        return word_bytes_for(self.word_bits)

    @property
    def rvec_bytes(self) -> int:
        """Bytes of one rvec: N words."""
        return self.N * self.word_bytes

    @property
    def moduli_array(self) -> np.ndarray:
        """The moduli as a uint64 array (indexable by ``mod`` / ``rvec_mod``)."""
        return np.array(self.moduli, dtype=np.uint64)

    # --- derived views -----------------------------------------------------------------

    def rvec_ids(self, cls: RVecClass) -> np.ndarray:
        """Ids (int32, ascending) of all rvecs of class `cls`."""
        return np.flatnonzero(self.rvec_class == cls).astype(np.int32)

    def rvec_tags(self, ids: Any) -> np.ndarray:
        """Tags (int64, shape ``(len(ids), 4)``) of the given rvecs; -1 rows for untagged."""
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        out = np.full((len(ids), TAG_WIDTH), -1, dtype=np.int64)
        if len(self.tagged):
            pos = np.searchsorted(self.tagged, ids)
            pos_c = np.minimum(pos, len(self.tagged) - 1)
            hit = self.tagged[pos_c] == ids
            out[hit] = self.tags[pos_c[hit]]
        return out

    def name_table(self, cls: RVecClass) -> tuple[str, ...]:
        """The name table that the first tag column of class `cls` indexes."""
        if cls not in NAME_TABLE_FIELD:
            raise InternalError(f"rvec class {RVecClass(cls).name} has no name table")
        return getattr(self, NAME_TABLE_FIELD[cls])

    def producer(self) -> np.ndarray:
        """int32 per rvec: index of the instruction writing it, -1 if none.

        If an rvec is (wrongly) written twice, one of the writers is returned.
        """
        out = np.full(self.num_rvecs, -1, dtype=np.int32)
        out[self.dst] = np.arange(len(self), dtype=np.int32)
        return out

    def last_use(self) -> np.ndarray:
        """int32 per rvec: index of the last instruction reading it, -1 if never read."""
        out = np.full(self.num_rvecs, -1, dtype=np.int32)
        idx = np.arange(len(self), dtype=np.int32)
        for src in (self.src0, self.src1):
            used = src >= 0
            np.maximum.at(out, src[used], idx[used])
        return out

    def generation_ntts(self) -> np.ndarray:
        """bool per instruction: an NTT whose source is computed from plaintext constants
        alone, through BCONV terms and ADDs (OF-Limb's generation of a diagonal's limb from
        its stored coefficient-form digits, `fhec.passes.lower`). A target whose NTT units
        each run one direction may run these on either (Osiris §V reverses its INTT unit
        for OF-Limb); every other NTT and INTT keeps its unit's direction."""
        op = np.asarray(self.op)
        src0, src1, dst = (np.asarray(a, dtype=np.int64) for a in (self.src0, self.src1, self.dst))
        from_consts = np.asarray(self.rvec_class) == RVecClass.CONST
        carries = (op == LimbOp.BCONV) | (op == LimbOp.ADD)
        while True:  # a chain of at most a digit count's terms: a few sweeps
            second = (src1 < 0) | from_consts[np.maximum(src1, 0)]
            grow = carries & from_consts[src0] & second & ~from_consts[dst]
            if not grow.any():
                return (op == LimbOp.NTT) & from_consts[src0]
            from_consts[dst[grow]] = True

    # --- reporting ---------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: ``{"instructions": n, "rvecs": R, "ops": {LimbOp name:
        count}, "rvecs_by_class": {RVecClass name: count}, "bytes": {RVecClass name:
        bytes}}``; bytes = N * word_bytes per rvec. Every op and class is present."""
        op_counts = np.bincount(self.op, minlength=NUM_OPS)
        cls_counts = np.bincount(self.rvec_class, minlength=len(RVecClass))
        return {
            "instructions": len(self),
            "rvecs": self.num_rvecs,
            "ops": {op.name: int(op_counts[op]) for op in LimbOp},
            "rvecs_by_class": {c.name: int(cls_counts[c]) for c in RVecClass},
            "bytes": {c.name: int(cls_counts[c]) * self.rvec_bytes for c in RVecClass},
        }

    def counts_by_he_node(self) -> dict[int, dict[str, int]]:
        """``{he_node: {LimbOp name: count}}`` with only nonzero counts (-1 = no node)."""
        key = self.he_node.astype(np.int64) * NUM_OPS + self.op
        keys, counts = np.unique(key, return_counts=True)
        out: dict[int, dict[str, int]] = {}
        for k, c in zip(keys.tolist(), counts.tolist()):
            node, op = divmod(k, NUM_OPS)
            out.setdefault(node, {})[LimbOp(op).name] = c
        return out

    def rvec_label(self, rvec: int) -> str:
        """A short human-readable name: ``%7`` or e.g. ``%3(x.p1.l0)``."""
        if rvec < 0:
            return "-"
        cls = RVecClass(int(self.rvec_class[rvec]))
        if cls == RVecClass.INTERMEDIATE:
            return f"%{rvec}"
        tag = self.rvec_tags([rvec])[0].tolist()
        names = self.name_table(cls)
        name = names[tag[0]] if 0 <= tag[0] < len(names) else f"?{tag[0]}"
        fields = TAG_FIELDS[cls][1:]
        short = {"poly": "p", "limb": "l", "digit": "d", "component": "c"}
        parts = ".".join(f"{short[f]}{v}" for f, v in zip(fields, tag[1:]))
        prefix = {RVecClass.KSH: "ksh:", RVecClass.CONST: "const:", RVecClass.OUTPUT: "out:"}
        return f"%{rvec}({prefix.get(cls, '')}{name}.{parts})"

    def text(self, limit: int | None = 50) -> str:
        """A readable listing of the first `limit` instructions (all if None)."""
        mods = " ".join(f"q{i}={q}" for i, q in enumerate(self.moduli))
        lines = [
            f"LimbProgram N={self.N} word_bits={self.word_bits}: {len(self)} instructions, "
            f"{self.num_rvecs} rvecs; moduli {mods}"
        ]
        shown = len(self) if limit is None else min(limit, len(self))
        width = len(str(max(shown - 1, 0)))
        for i in range(shown):
            op = LimbOp(int(self.op[i]))
            srcs = [self.rvec_label(int(s)) for s in (self.src0[i], self.src1[i]) if s >= 0]
            imm = int(self.imm[i])
            extra = {ImmKind.GALOIS: f" k={imm}", ImmKind.CONSTANT: f" C[{imm}]"}.get(
                ImmKind(int(IMM_KIND[op])), ""
            )
            body = f"{self.rvec_label(int(self.dst[i]))} = {op.name} {', '.join(srcs)}{extra} @q{int(self.mod[i])}"
            lines.append(f"  {i:>{width}}  {body:<48} he={int(self.he_node[i])} prio={int(self.prio[i])}")
        if shown < len(self):
            lines.append(f"  ... {len(self) - shown} more")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"LimbProgram(N={self.N}, {len(self)} instructions, {self.num_rvecs} rvecs, "
            f"{len(self.moduli)} moduli)"
        )


def _all_scalars(*args: Any) -> bool:
    """True if every argument is None, an int or a 0-d / size-1 integer array-like."""
    for a in args:
        if a is None or isinstance(a, (int, np.integer)):
            continue
        if isinstance(a, np.ndarray) and a.size == 1:
            continue
        return False
    return True


def _int(a: Any) -> int:
    return int(a.item()) if isinstance(a, np.ndarray) else int(a)


def _int_columns(values: tuple[Any, ...]) -> tuple[list[Any], int]:
    """Each value as a Python int or an integer array of at most one dimension, and
    their broadcast length.

    Instructions are emitted a few limbs at a time, hundreds of thousands of times, so
    this is the cheap core of `np.broadcast_arrays`: numpy's broadcasting assignment into
    the columns does the rest (casting integer arrays as `np.broadcast_arrays` of int64
    copies would). Raises InternalError for lengths that do not broadcast.
    """
    cols: list[Any] = []
    n = 1
    for v in values:
        if isinstance(v, int):  # LimbOp and RVecClass members too
            cols.append(int(v))
            continue
        c = v if isinstance(v, np.ndarray) and v.dtype.kind in "iu" else np.asarray(v, dtype=np.int64)
        if c.ndim > 1:
            raise InternalError(f"emit: operands must be scalars or 1-D, got shape {c.shape}")
        if c.ndim == 1 and len(c) != 1:
            if n != 1 and len(c) != n:
                raise InternalError(f"emit: operand lengths {sorted({len(c), n})} do not broadcast")
            n = len(c)
        cols.append(c)
    return cols, n


class _Columns:
    """Growable struct-of-arrays with amortized O(1) append per row."""

    def __init__(self, dtypes: Mapping[str, Any], row_shape: Mapping[str, tuple[int, ...]] | None = None):
        self._dtypes = dict(dtypes)
        self._row_shape = dict(row_shape or {})
        self._cap = 16
        self.size = 0
        self._data = {k: np.empty((self._cap, *self._row_shape.get(k, ())), dtype=d) for k, d in self._dtypes.items()}

    def _reserve(self, stop: int) -> None:
        if stop > self._cap:
            cap = max(stop, 2 * self._cap)
            for k, arr in self._data.items():
                grown = np.empty((cap, *arr.shape[1:]), dtype=arr.dtype)
                grown[: self.size] = arr[: self.size]
                self._data[k] = grown
            self._cap = cap

    def append(self, n: int, values: Mapping[str, Any]) -> tuple[int, int]:
        """Append `n` rows; returns the (start, stop) row range."""
        start, stop = self.size, self.size + n
        self._reserve(stop)
        for k, v in values.items():
            self._data[k][start:stop] = v
        self.size = stop
        return start, stop

    def rows(self, n: int) -> tuple[int, int, dict[str, np.ndarray]]:
        """Append `n` rows for the caller to fill: (start, stop, the column storage)."""
        start, stop = self.size, self.size + n
        self._reserve(stop)
        self.size = stop
        return start, stop, self._data

    def append_row(self, values: Mapping[str, int]) -> int:
        """Append one row of scalars (the fast path of scalar emission)."""
        i = self.size
        self._reserve(i + 1)
        data = self._data
        for k, v in values.items():
            data[k][i] = v
        self.size = i + 1
        return i

    def view(self, key: str) -> np.ndarray:
        return self._data[key][: self.size]

    def copy(self, key: str) -> np.ndarray:
        return self._data[key][: self.size].copy()


class LimbProgramBuilder:
    """Accumulates rvecs, instructions and constants, then `build()`s a `LimbProgram`.

    Every method is vectorized: pass numpy arrays to create or emit many at once
    (scalars broadcast). The builder does not check semantics; run
    `verify_limb_program` on the result. Misuse that would corrupt the encoding
    (wrong tag width, tags on intermediates, unknown class) raises InternalError.
    """

    def __init__(self, N: int, word_bits: int, moduli: tuple[int, ...] | list[int]):
        word_bytes_for(word_bits)
        self.N = int(N)
        self.word_bits = int(word_bits)
        self.moduli = tuple(int(q) for q in moduli)
        self._instr = _Columns(_INSTR_DTYPES)
        self._rvecs = _Columns(_RVEC_DTYPES)
        self._tags = _Columns({"tagged": np.int32, "tags": np.int64}, {"tags": (TAG_WIDTH,)})
        self._consts = _Columns({"value": np.uint64})
        self._names: dict[RVecClass, dict[str, int]] = {c: {} for c in NAME_TABLE_FIELD}

    def __len__(self) -> int:
        return self._instr.size

    @property
    def num_rvecs(self) -> int:
        return self._rvecs.size

    def rvec_mod(self, ids: Any) -> np.ndarray:
        """Modulus indices of already created rvecs."""
        return self._rvecs.view("rvec_mod")[np.asarray(ids, dtype=np.int64)]

    def add_name(self, cls: RVecClass, name: str) -> int:
        """Index of `name` in the name table of `cls` (INPUT, KSH, CONST, OUTPUT),
        adding it if new."""
        if cls not in self._names:
            raise InternalError(f"rvec class {RVecClass(cls).name} has no name table")
        table = self._names[cls]
        return table.setdefault(name, len(table))

    def new_rvecs(self, cls: RVecClass, mod: Any, tags: Any = None) -> np.ndarray:
        """Create rvecs of class `cls`; returns their ids (int32 array).

        `mod`: a modulus index or an array of them. `tags`: None for INTERMEDIATE,
        otherwise rows of exactly ``len(TAG_FIELDS[cls])`` ints (a 1-D array is one
        row); the count is the broadcast of ``len(mod)`` and the number of tag rows.
        """
        if cls == RVecClass.INTERMEDIATE and tags is None and isinstance(mod, (int, np.integer)):
            rvec = self._rvecs.append_row({"rvec_class": RVecClass.INTERMEDIATE, "rvec_mod": int(mod)})
            return np.array([rvec], dtype=np.int32)
        cls = RVecClass(cls)
        width = len(TAG_FIELDS[cls])
        mod_arr = np.atleast_1d(np.asarray(mod, dtype=np.int64))
        if cls == RVecClass.INTERMEDIATE:
            if tags is not None:
                raise InternalError("INTERMEDIATE rvecs carry no tags")
            count = len(mod_arr)
        else:
            if tags is None:
                raise InternalError(f"{cls.name} rvecs need tags {TAG_FIELDS[cls]}")
            tag_arr = np.asarray(tags, dtype=np.int64)
            if tag_arr.ndim == 1:
                tag_arr = tag_arr[None, :]
            if tag_arr.ndim != 2 or tag_arr.shape[1] != width:
                raise InternalError(
                    f"{cls.name} tags must have {width} columns {TAG_FIELDS[cls]}, got shape {tag_arr.shape}"
                )
            count = np.broadcast_shapes((len(mod_arr),), (len(tag_arr),))[0]
        mod_arr = np.broadcast_to(mod_arr, (count,))
        start, stop = self._rvecs.append(count, {"rvec_class": cls, "rvec_mod": mod_arr})
        ids = np.arange(start, stop, dtype=np.int32)
        if cls != RVecClass.INTERMEDIATE:
            padded = np.full((count, TAG_WIDTH), -1, dtype=np.int64)
            padded[:, :width] = tag_arr
            self._tags.append(count, {"tagged": ids, "tags": padded})
        return ids

    def add_constants(self, values: Any) -> np.ndarray:
        """Append values (Python ints or uint64, already reduced) to the constant
        table; returns their indices (int32 array)."""
        vals = np.atleast_1d(np.asarray(values, dtype=np.uint64))
        start, stop = self._consts.append(len(vals), {"value": vals})
        return np.arange(start, stop, dtype=np.int32)

    def emit(
        self,
        op: Any,
        dst: Any,
        src0: Any,
        src1: Any = -1,
        mod: Any = None,
        imm: Any = -1,
        he_node: Any = -1,
        prio: Any = None,
    ) -> np.ndarray:
        """Append instructions; every argument is a scalar or an array, broadcast to
        a common length. `mod` defaults to the modulus of `dst`; `prio` defaults to
        the instruction's index. Returns the new instruction indices."""
        if _all_scalars(op, dst, src0, src1, mod, imm, he_node, prio):
            return self._emit_one(op, dst, src0, src1, mod, imm, he_node, prio)
        if mod is None:
            dst_arr = np.asarray(dst, dtype=np.int64)
            if dst_arr.size and (dst_arr.min() < 0 or dst_arr.max() >= self.num_rvecs):
                raise InternalError("emit: dst refers to an rvec that does not exist")
            mod = self._rvecs.view("rvec_mod")[dst_arr]
        start, stop = self._emit_rows(*_int_columns((op, dst, src0, src1, mod, imm, he_node)), prio)
        return np.arange(start, stop, dtype=np.int64)

    def _emit_rows(self, cols: list[Any], n: int, prio: Any) -> tuple[int, int]:
        """Append `n` rows of the `_EMIT_COLUMNS` values `cols` (`_int_columns`, `mod`
        given) and `prio`; returns their (start, stop) range."""
        start, stop, data = self._instr.rows(n)
        for name, col in zip(_EMIT_COLUMNS, cols):
            data[name][start:stop] = col
        data["prio"][start:stop] = np.arange(start, stop) if prio is None else np.asarray(prio, dtype=np.int64)
        return start, stop

    def _emit_one(self, op, dst, src0, src1, mod, imm, he_node, prio) -> np.ndarray:
        dst = _int(dst)
        if mod is None:
            if not 0 <= dst < self.num_rvecs:
                raise InternalError("emit: dst refers to an rvec that does not exist")
            mod = self._rvecs.view("rvec_mod")[dst]
        i = self._instr.size
        self._instr.append_row(
            {
                "op": _int(op),
                "dst": dst,
                "src0": _int(src0),
                "src1": _int(src1),
                "mod": _int(mod),
                "imm": _int(imm),
                "he_node": _int(he_node),
                "prio": i if prio is None else _int(prio),
            }
        )
        return np.array([i], dtype=np.int64)

    def emit_new(
        self,
        op: Any,
        src0: Any,
        src1: Any = -1,
        *,
        mod: Any,
        imm: Any = -1,
        he_node: Any = -1,
        prio: Any = None,
    ) -> np.ndarray:
        """Like `emit`, but allocates fresh INTERMEDIATE dsts (one per instruction,
        modulus `mod`) and returns their ids."""
        if _all_scalars(op, src0, src1, mod, imm, he_node, prio):
            dst_id = self._rvecs.append_row({"rvec_class": RVecClass.INTERMEDIATE, "rvec_mod": _int(mod)})
            self._emit_one(op, dst_id, src0, src1, mod, imm, he_node, prio)
            return np.array([dst_id], dtype=np.int32)
        cols, n = _int_columns((op, -1, src0, src1, mod, imm, he_node))
        start, stop, rvecs = self._rvecs.rows(n)
        rvecs["rvec_class"][start:stop] = RVecClass.INTERMEDIATE
        rvecs["rvec_mod"][start:stop] = cols[4]
        cols[1] = dst = np.arange(start, stop, dtype=np.int32)
        self._emit_rows(cols, n, prio)
        return dst

    def build(self) -> LimbProgram:
        """Snapshot the accumulated program (copies; the builder stays usable)."""
        instr = {k: self._instr.copy(k) for k in _INSTR_DTYPES}
        rvecs = {k: self._rvecs.copy(k) for k in _RVEC_DTYPES}
        names = {
            NAME_TABLE_FIELD[c]: tuple(sorted(t, key=t.__getitem__)) for c, t in self._names.items()
        }
        return LimbProgram(
            N=self.N,
            word_bits=self.word_bits,
            moduli=self.moduli,
            **instr,
            **rvecs,
            tagged=self._tags.copy("tagged"),
            tags=self._tags.copy("tags"),
            constants=self._consts.copy("value"),
            **names,
        )
