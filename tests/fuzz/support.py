"""Shared machinery of the fuzz suite: budgets, the hang guard, the property, mutators.

The property of every fuzz test: a call either succeeds or raises an `fhec.FhecError`
subclass; any other exception (a raw TypeError, an InternalError, numba's TypingError)
or a call that runs past `HANG_SECONDS` fails the test.

Budgets: the ``ci`` profile (the default, derandomized) runs `CI_EXAMPLES` examples per
fuzz test so that the whole suite stays well under a minute on two cores; the
``thorough`` profile (``HYPOTHESIS_PROFILE=thorough``) runs `THOROUGH_EXAMPLES`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import signal
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import fhec

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
CI_EXAMPLES = 60
THOROUGH_EXAMPLES = 1000
HANG_SECONDS = 30  # one example; the slowest legitimate one (a small compile) takes ~2 s


def fuzz_settings(ci: int = CI_EXAMPLES, thorough: int = THOROUGH_EXAMPLES) -> settings:
    """Settings of a fuzz test: the loaded profile with the fuzz budget."""
    return settings(
        max_examples=thorough if PROFILE == "thorough" else ci,
        deadline=None,  # the alarm below is the hang guard; hypothesis' deadline would flake on a loaded machine
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.function_scoped_fixture],
    )


class Hang(Exception):
    """An example ran longer than `HANG_SECONDS`."""


@contextlib.contextmanager
def hang_guard(seconds: int = HANG_SECONDS):
    """Fail (raise `Hang`) if the body runs longer than `seconds` (SIGALRM, main thread)."""

    def on_alarm(signum, frame):
        raise Hang(f"no answer after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def only_fhec_errors(call: Callable[[], Any]) -> tuple[bool, Any]:
    """Run `call` under the hang guard: (True, result) on success, (False, error) for an
    FhecError; anything else propagates and fails the test."""
    with hang_guard():
        try:
            return True, call()
        except fhec.InternalError:
            raise  # fhec's own bug: never acceptable for bad input
        except fhec.FhecError as e:
            assert str(e), "an FhecError must carry a message"
            return False, e


# -- adversarial values ------------------------------------------------------------------

WEIRD_SCALARS = [
    None, True, False, 0, -1, 1, 2, 3, 7, 2**31, 2**63, 2**64 + 1, -(2**70), 10**30,
    0.0, -0.0, 0.5, 1.5, 1.7, -2.5, 1e300, -1e-300, math.nan, math.inf, -math.inf,
    1j, "", "1", "abc", "bv", "hybrid", b"\xff", [], [1], [1.5], [[1, 2], [3, 4]], [[1], [1, 2]], {}, {"x": 1},
    (1, 2), {1, 2}, object(), np.int64(5), np.uint64(2**64 - 1), np.int8(-3), np.float32(1.25), np.float64(math.nan),
    np.bool_(True), np.array(3), np.array([1.0, 2.0]), np.ones((2, 2)), np.array([], dtype=float), np.array(["a"]),
    np.array([1, 2], dtype=np.uint64), np.array([1 + 2j]),
]


def weird_values() -> st.SearchStrategy:
    """Values a careless or adversarial caller might pass anywhere."""
    return st.one_of(
        st.sampled_from(WEIRD_SCALARS),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
        st.lists(st.one_of(st.integers(-5, 5), st.floats(-2, 2), st.none()), max_size=6),
    )


def is_integer_value(v: Any) -> bool:
    """An int or numpy integer, not a bool: what an integer argument may be."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# -- structure-aware JSON mutation ----------------------------------------------------------

JSON_REPLACEMENTS = [
    None, True, False, 0, -1, 1, 2, 2**31, 2**64, -(2**63) - 1, 0.5, -1.5, 1e308, "", "x", "ckks", "bgv", "auto",
    [], [1], ["a"], [[1, 2]], {}, {"a": 1}, {"const": {"dtype": "<f8", "values": [1.0]}},
    {"const": {"dtype": "|O", "values": [1]}}, {"const": {"dtype": "<i8", "values": [2**70]}},
]


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):  # the first few elements are enough to reach every shape
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated_json(draw, doc: Any) -> str:
    """`doc` (a JSON value) with 1-3 random edits: a value replaced, a key deleted, a
    key added, a list element dropped or duplicated; serialized (NaN/inf allowed)."""
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        if not path:
            doc = copy.deepcopy(draw(st.sampled_from(JSON_REPLACEMENTS + [doc])))
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "dup", "number"]))
        if action == "replace":
            parent[last] = copy.deepcopy(draw(st.sampled_from(JSON_REPLACEMENTS)))
        elif action == "number":
            parent[last] = draw(st.one_of(st.integers(-(2**65), 2**65), st.floats(allow_nan=True)))
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "N", "id", "kind"]))] = copy.deepcopy(
                draw(st.sampled_from(JSON_REPLACEMENTS))
            )
        elif action == "dup" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
    return json.dumps(doc)


@st.composite
def mutated_bytes(draw, data: bytes) -> bytes:
    """`data` with random byte edits: flips, truncation, insertion, a patched 32-bit word."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "truncate", "insert", "word", "append"]))
        if action == "flip" and buf:
            i = draw(st.integers(0, len(buf) - 1))
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif action == "truncate":
            del buf[draw(st.integers(0, len(buf))):]
        elif action == "insert":
            i = draw(st.integers(0, len(buf)))
            buf[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif action == "word" and len(buf) >= 4:
            i = draw(st.integers(0, (len(buf) - 4) // 4)) * 4
            buf[i:i + 4] = draw(st.sampled_from([0, 1, 63, 1023, 2**16 - 1, 2**31, 2**32 - 1])).to_bytes(4, "little")
        elif action == "append":
            buf += draw(st.binary(min_size=1, max_size=32))
    return bytes(buf)


TEXT_TOKENS = ["0", "-1", "1.5", "inf", "nan", "1e308", "18446744073709551616", "true", '"x"', "[]", "{}", "''",
               "s-1", "m9", "@q5000", "@q-2", "k=", "c=x", "+-3", "--5", "NTT", "LOAD", "<-", ";", "i", "r-7", "\x00"]


@st.composite
def mutated_text(draw, text: str) -> str:
    """`text` with random line/token edits: a token replaced, a line deleted or duplicated,
    a `key = value` right-hand side replaced (TOML)."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            lines = [draw(st.text(max_size=20))]
            continue
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["token", "token", "rhs", "delete", "dup", "garbage"]))
        if action == "token":
            toks = lines[i].split(" ")
            j = draw(st.integers(0, len(toks) - 1))
            toks[j] = draw(st.sampled_from(TEXT_TOKENS))
            lines[i] = " ".join(toks)
        elif action == "rhs" and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            lines[i] = f"{key}= {draw(st.sampled_from(TEXT_TOKENS))}"
        elif action == "delete":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "garbage":
            lines[i] = draw(st.text(max_size=30))
    return "\n".join(lines) + "\n"
