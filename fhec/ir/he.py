"""The HE-level IR: ciphertext operations over SSA values.

A program is an immutable `HeProgram`: its parameter set, options, and a tuple of
`HeNode`s in topological order (every argument id names an earlier node). Each node
defines one value whose id is its own ``id``; OUTPUT nodes name a result.

Two kinds of ops exist (`HeOp`):

* **primitives**, each of which is exactly one call of the eager `fhec.Evaluator`
  with fully explicit operands (table in `docs/dsl.md` and in `fhec.evaluate`); after
  `fhec.passes.he_expand.expand` a program consists of primitives only, which is
  what the limb-level lowering consumes;
* **high-level ops** (SUM_SLOTS, LINEAR_TRANSFORM, POLYNOMIAL, BOOTSTRAP), kept as single nodes
  by tracing so that passes can pick an algorithm (BSGS, hoisting) before expanding.

Every node carries its inferred `HeType` (level, scale, parts, estimated noise,
needed keys) and the ``file.py:LINE`` of the DSL statement that created it.
Attributes are a sorted tuple of (name, value) pairs holding only hashable values:
Python ints/floats/strings/None, tuples, and `Const` for numpy arrays.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from fhec.schemes.params import Params


class HeOp(enum.Enum):
    """Operations of the HE-level IR. The value is the printed / serialized name."""

    INPUT = "input"                        # encrypted input (attrs: name, level; CKKS: bound if not 1)
    PLAIN_INPUT = "plain_input"            # unencrypted slot vector given at run time (attrs: name; bound)
    OUTPUT = "output"                      # names a result (attrs: name)
    ADD = "add"                            # ct + ct, same level, matching scale / factor (attrs: CKKS
                                           #   bound hint: the sum is known to stay within it)
    SUB = "sub"                            # ct - ct, same level, matching scale / factor
    NEG = "neg"                            # -ct
    ADD_PLAIN = "add_plain"                # ct + plain input (encoded at ct's level and scale)
    SUB_PLAIN = "sub_plain"                # ct - plain input
    ADD_CONST = "add_const"                # ct + constant (attrs: value)
    SUB_CONST = "sub_const"                # ct - constant (attrs: value)
    MUL = "mul"                            # ct × ct without relinearization (3 parts)
    RELINEARIZE = "relinearize"            # 3 parts -> 2 parts (key: relin)
    MUL_PLAIN = "mul_plain"                # ct × plain input (attrs: plain_scale)
    MUL_CONST = "mul_const"                # ct × constant (attrs: value, plain_scale; None for Python ints;
                                           # BGV ints may carry factor: plaintext factor × factor too)
    MUL_MONOMIAL = "mul_monomial"          # ct × X^power, exact (CKKS slot j times ζ_j^power; X^{N/2}: times i)
    MUL_FACTOR = "mul_factor"              # BGV: ct × integer c, plaintext factor × c, message unchanged
    RESCALE = "rescale"                    # CKKS: divide by the last prime
    MOD_SWITCH = "mod_switch"              # drop one level (BGV: modulus switching; CKKS: drop a limb)
    LEVEL_DOWN = "level_down"              # bring to a lower level at a given scale (attrs: level, scale)
    ROTATE = "rotate"                      # slot i <- slot i + step (attrs: step)
    CONJUGATE = "conjugate"                # CKKS complex conjugation
    SWAP_ROWS = "swap_rows"                # BGV: exchange the two slot rows
    SUM_SLOTS = "sum_slots"                # high level: slot i <- sum of slots i..i+n-1 (attrs: n)
    LINEAR_TRANSFORM = "linear_transform"  # high level: sum_k diag_k ⊙ rot(x, k) (attrs: diagonals, plain_scale)
    POLYNOMIAL = "polynomial"              # high level: sum_i c_i B_i(u) (attrs: coeffs[, basis, domain])
    BOOTSTRAP = "bootstrap"                # high level: CKKS bootstrapping, the identity on values (config: params)
    MOD_RAISE = "mod_raise"                # CKKS: a level-0 ciphertext's coefficients lifted centered onto the
                                           #   primes of `level` (attrs: level, scale, bound); bootstrap's 1st stage
    SWITCH_SECRET = "switch_secret"        # CKKS bootstrap: key switch to the ephemeral sparse secret or back
                                           #   (attrs: to "sparse"|"dense"; always hybrid; keys to-sparse/to-dense)
    # The pieces of a key switch (fhec.passes.he_keyswitch.expand_key_switches):
    AUTOMORPHISM = "automorphism"          # σ_g on both parts, no key switch (attrs: galois, step)
    MOD_UP = "mod_up"                      # digits of one part over the key-switching basis (attrs: part, method)
    DIGITS_AUTOMORPHISM = "digits_automorphism"  # σ_g on every digit: a hoisted rotation (attrs: galois, step)
    KEY_MULT = "key_mult"                  # Σ digit_d · hint_d (attrs: source "relin"|galois|"to-sparse"|
                                           #   "to-dense", step, method)
    MOD_DOWN = "mod_down"                  # hybrid: divide a key-switch pair by P
    KS_ADD = "ks_add"                      # ct + pair: (c0+u0, c1+u1) from 3 parts, (c0+u0, u1) from 2
    # Double hoisting (Bossuat et al. 2021): values kept over Q·P between key switches
    # (`fhec.ir.he_recipes`, linear_transform with hoisting="double"; hybrid only):
    ROTATE_EXT = "rotate_ext"              # a rotation without its mod-down: the result over Q·P (attrs: step)
    KS_ADD_EXT = "ks_add_ext"              # ct + pair over Q·P: (P·c0 + u0, u1) from 2 parts (ROTATE_EXT ends with
                                           #   it), (P·c0 + u0, P·c1 + u1) from 3 (RELINEARIZE_EXT)
    MUL_CONST_EXT = "mul_const_ext"        # Q·P value × constant encoded over Q·P (attrs: value, plain_scale)
    ADD_EXT = "add_ext"                    # Q·P value + Q·P value (attrs: CKKS bound hint, as ADD)
    MOD_DOWN_EXT = "mod_down_ext"          # Q·P value divided by P: back to a ciphertext over Q
    # Mod-down merged with the rescale that follows it (`fhec.passes.he_fuse_rescale`):
    RELINEARIZE_EXT = "relinearize_ext"    # 3 parts -> Q·P value (P·c0 + u0, P·c1 + u1): no mod-down (key: relin)
    ADD_EXT_Q = "add_ext_q"                # Q·P value ± ciphertext over Q: (a0 ± P·c0, a1 ± P·c1) (attrs: subtract)
    RESCALE_EXT = "rescale_ext"            # CKKS: Q·P value divided by P·q_l in one base conversion: a
                                           #   ciphertext over Q one level down (mod-down and rescale fused)

    def __repr__(self) -> str:
        return f"HeOp.{self.name}"


HIGH_LEVEL_OPS = frozenset({HeOp.SUM_SLOTS, HeOp.LINEAR_TRANSFORM, HeOp.POLYNOMIAL, HeOp.BOOTSTRAP})
KEY_SWITCH_PIECES = frozenset(
    {HeOp.AUTOMORPHISM, HeOp.MOD_UP, HeOp.DIGITS_AUTOMORPHISM, HeOp.KEY_MULT, HeOp.MOD_DOWN, HeOp.KS_ADD,
     HeOp.KS_ADD_EXT}
)
EXTENDED_OPS = frozenset({HeOp.ROTATE_EXT, HeOp.KS_ADD_EXT, HeOp.MUL_CONST_EXT, HeOp.ADD_EXT, HeOp.MOD_DOWN_EXT,
                          HeOp.RELINEARIZE_EXT, HeOp.ADD_EXT_Q, HeOp.RESCALE_EXT})
"""Ops producing or consuming values over Q·P (`ValueKind.EXTENDED`)."""
MERGED_OPS = frozenset({HeOp.RELINEARIZE_EXT, HeOp.RESCALE_EXT})
"""Ops only `fhec.passes.he_fuse_rescale` introduces (a mod-down merged with its rescale).
ADD_EXT_Q is not one of them: a double-hoisted linear transform's j = 0 terms join their
sums with it too (`fhec.ir.he_recipes`)."""
KEY_SWITCHING_OPS = frozenset({HeOp.RELINEARIZE, HeOp.ROTATE, HeOp.CONJUGATE, HeOp.SWAP_ROWS, HeOp.SWITCH_SECRET})
INPUT_OPS = frozenset({HeOp.INPUT, HeOp.PLAIN_INPUT})


@functools.lru_cache(maxsize=8)
def _position_weights(n: int) -> np.ndarray:
    """Odd 64-bit multipliers, one per word position (Fibonacci hashing: i · 2^64/φ, | 1)."""
    w = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
    w.setflags(write=False)
    return w


def value_hash(a: np.ndarray) -> int:
    """A hash of an array's values *and their positions*. By position because programs hold
    many rotations of one vector (LoLa-CIFAR's 7,987 one-hot masks): a hash of the values
    as a multiset puts them all in one dict bucket, and every lookup then compares arrays
    one by one (quadratic in the number of masks: most of a 10^7-instruction lowering)."""
    a = np.ascontiguousarray(a)
    if a.dtype.itemsize % 8:  # not a slot dtype (float64, int64, complex128): by bytes
        return hash((a.dtype.str, a.shape, a.tobytes()))
    words = a.view(np.uint64).reshape(-1)
    mixed = (words * _position_weights(words.size)).sum(dtype=np.uint64)  # wraps mod 2^64
    return hash((a.dtype.str, a.shape, int(mixed), int(np.bitwise_xor.reduce(words, initial=np.uint64(0)))))


@dataclass(frozen=True, eq=False)
class Const:
    """A numpy constant stored in a node: read-only, compared and hashed by value.

    Arrays are always padded to the program's slot count when they enter the IR
    (float64 for CKKS, int64 reduced mod t for BGV), so consumers never pad. The one
    exception: the bootstrap expansion's DFT diagonals and its ±i constants are
    complex128 (CKKS slots are complex; only user values are real).
    """

    array: np.ndarray

    def __post_init__(self) -> None:
        arr = np.array(self.array, copy=True)
        arr.setflags(write=False)
        object.__setattr__(self, "array", arr)

    def __eq__(self, other: object) -> bool:
        if self is other or _same_rotation(self, other):
            return True
        return (
            isinstance(other, Const)
            and hash(self) == hash(other)  # cached: most unequal constants stop here
            and self.array.dtype == other.array.dtype
            and self.array.shape == other.array.shape
            and bool(np.array_equal(self.array, other.array))
        )

    def __hash__(self) -> int:
        # cached, since the passes hash a constant per use and this reads every byte (a
        # 2^15-slot diagonal: 256 KB)
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = value_hash(self.array)
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def abs_max(self) -> float:
        """max |value| (0 for an empty array), cached like the hash (type rules read it for
        every use of the constant)."""
        cached = self.__dict__.get("_abs_max")
        if cached is None:
            cached = float(abs(self.array).max(initial=0.0))
            object.__setattr__(self, "_abs_max", cached)
        return cached

    def __getstate__(self) -> dict:
        # str/bytes hashes are salted per process: a pickled constant recomputes its own
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self) -> str:
        return f"Const({format_values(self.array)})"


def _same_rotation(a: object, b: object) -> bool:
    return (isinstance(a, RotatedConst) and isinstance(b, RotatedConst) and a.base is b.base
            and (a.step, a.row) == (b.step, b.row))


class RotatedConst(Const):
    """A `Const` equal to `base` rotated by `step` slots within rows of `row` slots (slot t
    receives slot t + step), computed whenever it is read rather than stored.

    The BSGS recipes pre-rotate every diagonal of a giant step; stored, those copies double
    the memory of a program's diagonals (ResNet-20 at N = 2^16 holds about 15,000
    diagonals of 2^15 slots: 4 GB per copy). It compares and hashes by value like any
    `Const` (its hash is computed from the rotated values once, then only the hash is
    kept); two rotations of one base by
    one step compare equal without computing either."""

    def __init__(self, base: Const, step: int, row: int):  # not the dataclass's __init__: no stored array
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "step", int(step) % int(row))
        object.__setattr__(self, "row", int(row))

    def __hash__(self) -> int:
        # of the rotated values, computed once and dropped (only the hash is kept): the
        # base's hash would put every rotation of one vector (one-hot masks) in one bucket
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = value_hash(self.array)
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def shape(self) -> tuple[int, ...]:
        return self.base.shape

    def abs_max(self) -> float:
        return self.base.abs_max()  # a rotation moves values, it does not change them

    @property
    def array(self) -> np.ndarray:  # type: ignore[override]
        rows = self.base.array.reshape(-1, self.row)
        arr = np.roll(rows, -self.step, axis=1).reshape(-1)
        arr.setflags(write=False)
        return arr


class SparseConst(Const):
    """A `Const` most of whose slots are zero, stored as its nonzero positions and values
    and expanded whenever its array is read (like `RotatedConst`).

    A convolution's BSGS diagonals are mostly zero: ResNet-20 at N = 2^16 holds about
    15,000 diagonals of 2^15 slots, 7.5% of them nonzero on average, which dense take 4 GB
    (most of the compile's peak memory) and stored this way 0.45 GB. It compares and
    hashes by value like any `Const`: the hash is of the expanded array."""

    def __init__(self, array: np.ndarray):  # not the dataclass's __init__: no stored array
        arr = np.asarray(array)
        where = np.flatnonzero(arr)
        object.__setattr__(self, "positions", where.astype(np.int32))
        object.__setattr__(self, "values", arr.reshape(-1)[where].copy())
        object.__setattr__(self, "dense_shape", arr.shape)
        self.positions.setflags(write=False)
        self.values.setflags(write=False)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dense_shape

    def abs_max(self) -> float:
        return float(abs(self.values).max(initial=0.0))

    @property
    def array(self) -> np.ndarray:  # type: ignore[override]
        arr = np.zeros(self.dense_shape, dtype=self.values.dtype)
        arr.reshape(-1)[self.positions] = self.values
        arr.setflags(write=False)
        return arr


SPARSE_DENSITY = 0.5
"""`compact_const` stores a vector sparsely when at most this share of its slots is
nonzero: a nonzero takes 4 bytes of position besides its value, so a float64 vector
saves memory below 2/3 nonzero; at half, sparse storage takes 3/4 of dense."""


def compact_const(array) -> Const:
    """`array` as a `Const`: a `SparseConst` when it is a vector with at most
    `SPARSE_DENSITY` of its slots nonzero, else a dense one. Either compares equal to the
    other for the same values."""
    arr = np.asarray(array)
    if arr.ndim == 1 and arr.size and np.count_nonzero(arr) <= SPARSE_DENSITY * arr.size:
        return SparseConst(arr)
    return Const(arr)


def _format_value(v) -> str:
    if isinstance(v, (complex, np.complexfloating)):
        return f"{v:.6g}"
    return f"{v:.6g}" if isinstance(v, (float, np.floating)) else str(int(v))


def format_values(arr: np.ndarray, shown: int = 4) -> str:
    """Short text for a constant vector: the first values, then the count."""
    vals = [_format_value(v) for v in arr[:shown]]
    if len(arr) > shown:
        vals.append(f"… {len(arr)} values")
    return "[" + ", ".join(vals) + "]"


class ValueKind(enum.Enum):
    CIPHER = "ct"
    PLAIN = "pt"
    DIGITS = "digits"  # key-switch digits over the key-switching basis (after MOD_UP)
    KS_PAIR = "kspair"  # a key-switch result (u0, u1); over Q·P before MOD_DOWN of a hybrid switch
    EXTENDED = "ctqp"  # a ciphertext over Q·P whose message is scaled by P (double hoisting)


class KeyKind(enum.Enum):
    RELIN = "relin"
    ROTATION = "rot"
    CONJUGATION = "conj"
    TO_SPARSE = "to-sparse"  # sparse-secret encapsulation (`fhec.schemes.keys.SECRET_SWITCHES`)
    TO_DENSE = "to-dense"


@dataclass(frozen=True)
class Key:
    """A key-switching key an op needs: relinearization, rotation by `step`
    (normalized to 0 <= step < row length), or conjugation / row swap."""

    kind: KeyKind
    step: int = 0

    def __str__(self) -> str:
        return f"rot({self.step})" if self.kind is KeyKind.ROTATION else self.kind.value

    @property
    def sort_key(self) -> tuple[str, int]:
        return (self.kind.value, self.step)


def sorted_keys(keys) -> tuple[Key, ...]:
    """Distinct keys in a canonical order (relin, conj, then rotations by step)."""
    return tuple(sorted(set(keys), key=lambda k: k.sort_key))


@dataclass(frozen=True)
class HeType:
    """The inferred type of a value.

    Attributes:
        kind: ciphertext or plaintext (a PLAIN_INPUT, encoded where it is used).
        slots: number of slots of the parameter set.
        level, scale: of a ciphertext (CKKS scale float, BGV plaintext factor int);
            None for plaintexts.
        parts: 2, or 3 after a multiply before relinearization.
        noise: estimated log2 std of the error (as `Ciphertext.noise`); None for plaintexts.
        keys: the key-switching keys the op producing this value needs (all of them
            for a high-level op).
        bound: CKKS: a bound on |slot value| of the message (`fhec.schemes.ranges`):
            inputs declare it (default 1), constants contribute their max |value|, and
            each op's rule propagates it. None for BGV and key-switch pieces.
    """

    kind: ValueKind
    slots: int
    level: int | None = None
    scale: float | int | None = None
    parts: int = 2
    noise: float | None = None
    keys: tuple[Key, ...] = ()
    bound: float | None = None

    @property
    def is_cipher(self) -> bool:
        return self.kind is ValueKind.CIPHER


def attrs_of(**kw: Any) -> tuple[tuple[str, Any], ...]:
    """Canonical attribute tuple (sorted by name) from keyword arguments."""
    return tuple(sorted(kw.items()))


_MISSING = object()


@dataclass(frozen=True)
class HeNode:
    """One SSA value: ``%id = op(args) {attrs} : type  # loc``.

    Nodes are immutable; passes build new ones (`dataclasses.replace`).
    """

    id: int
    op: HeOp
    args: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...]
    type: HeType
    loc: str | None = None

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        """The attribute `name`; `default` when absent (KeyError without a default)."""
        for k, v in self.attrs:
            if k == name:
                return v
        if default is _MISSING:
            raise KeyError(f"{self.op.value} node %{self.id} has no attribute {name!r}")
        return default

    @property
    def attr_dict(self) -> dict[str, Any]:
        return dict(self.attrs)


RESCALE_POLICIES = ("auto", "manual")


@dataclass(frozen=True)
class HeOptions:
    """Program-wide options.

    Attributes:
        rescale: "auto" (rescale / mod-switch after every non-integer multiply and align
            operands automatically) or "manual" (the program does it; mismatches are errors).
        rotation_keys: when not None, the only rotation steps for which keys may exist;
            any other rotation is an error at trace time.
        max_rotation_keys: when not None, rotation-key planning decomposes rotations so
            that at most this many rotation keys are needed.
    """

    rescale: str = "auto"
    rotation_keys: tuple[int, ...] | None = None
    max_rotation_keys: int | None = None


@dataclass(frozen=True)
class HeProgram:
    """An immutable HE-level program. Equality is structural (same nodes, params, options).

    Build one by tracing (`fhec.Program`), by `from_json`, or with `fhec.ir.he_build.HeBuilder`.
    """

    name: str
    params: Params
    nodes: tuple[HeNode, ...]
    options: HeOptions = field(default_factory=HeOptions)
    loc: str | None = None

    # -- lookups ----------------------------------------------------------------------

    def node(self, vid: int) -> HeNode:
        """The node defining value `vid` (KeyError if none)."""
        index = self._index()
        if vid not in index:
            raise KeyError(f"no value %{vid} in program {self.name!r}")
        return self.nodes[index[vid]]

    def _index(self) -> dict[int, int]:
        # Built on demand (nodes are immutable, so this cannot go stale); not a field so
        # that equality and hashing stay structural.
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {n.id: i for i, n in enumerate(self.nodes)}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    def nodes_of(self, *ops: HeOp) -> Iterator[HeNode]:
        return (n for n in self.nodes if n.op in ops)

    @property
    def inputs(self) -> dict[str, HeNode]:
        """Encrypted inputs by name, in declaration order."""
        return {n.attr("name"): n for n in self.nodes_of(HeOp.INPUT)}

    @property
    def plain_inputs(self) -> dict[str, HeNode]:
        """Plaintext inputs by name, in declaration order."""
        return {n.attr("name"): n for n in self.nodes_of(HeOp.PLAIN_INPUT)}

    @property
    def outputs(self) -> dict[str, int]:
        """Output name -> id of the value it names, in declaration order."""
        return {n.attr("name"): n.args[0] for n in self.nodes_of(HeOp.OUTPUT)}

    @property
    def is_expanded(self) -> bool:
        """True when the program holds primitives only."""
        return not any(n.op in HIGH_LEVEL_OPS for n in self.nodes)

    def users(self) -> dict[int, list[int]]:
        """Value id -> ids of the nodes that use it."""
        out: dict[int, list[int]] = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for a in n.args:
                out[a].append(n.id)
        return out

    def graph(self):
        """The dataflow graph as a `networkx.DiGraph` (edges from argument to user)."""
        import networkx as nx

        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n.id, op=n.op)
            for a in n.args:
                g.add_edge(a, n.id)
        return g

    # -- views ------------------------------------------------------------------------

    def __str__(self) -> str:
        from fhec.ir.he_print import format_program

        return format_program(self)

    def _repr_html_(self) -> str:
        from fhec.ir.he_print import format_html

        return format_html(self)

    def __repr__(self) -> str:
        return f"<HeProgram {self.name!r}: {len(self.nodes)} nodes, {self.params.scheme}, N={self.params.N}>"

    def to_json(self) -> str:
        """Serialize (see `fhec.ir.he_json`); `HeProgram.from_json` reads it back."""
        from fhec.ir.he_json import program_to_json

        return program_to_json(self)

    @staticmethod
    def from_json(text: str) -> "HeProgram":
        """Read a program written by `to_json` and verify it (InternalError if inconsistent)."""
        from fhec.ir.he_json import program_from_json

        return program_from_json(text)

    def __getstate__(self):  # keep the index cache out of pickles
        state = dict(self.__dict__)
        state.pop("_index_cache", None)
        return state
