"""Presto as the ISA backend sees it: the numbers of ``fhec/backends/targets/presto.toml``
and the layout of a limb (an RNS residue polynomial of N words) across the PEs.

Presto has 32 processing engines (PEs), each holding two 512-word polynomial buffers
and computing on them with 16 lanes. fhec names the 64 PE vectors as the *vector
registers* of the ISA. A limb of N = 512 * G words (G = 1 .. 32) occupies G vectors,
one chunk of 512 consecutive words in each of G different PEs, so that the G PEs
process it in parallel; there are then ``64 / G`` architectural registers:

    register v, chunk j (words 512j .. 512j + 511)  ->  PE (v mod (32/G)) * G + j,
                                                        buffer v div (32/G)

At N < 512 a limb takes the first N words of one vector (G = 1, 64 registers).
(docs/isa.md, "Presto: data layout".)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fhec.errors import MachineCodeError, TargetError

TIMING_PIPELINES = ("add", "mul", "ntt", "aut", "config")
"""The ``[pipelines.*]`` tables the Presto backend reads (lanes per PE and latency)."""


_MODELED_ISSUE = {"width": 1, "in_order": False, "busyboard": False}
"""The [issue] rules the Presto timing model implements (the shipped presto.toml's)."""

@dataclass(frozen=True)
class PrestoMachine:
    """The Presto numbers, read from a machine description (`from_description`)."""

    name: str
    clock_ghz: float
    word_bits: int
    n_min: int
    n_max: int
    pe_count: int
    pe_vectors: int
    vector_words: int
    lanes: int
    modulus_registers: int
    queue_depth: int
    dispatch_cycles: int
    wide_word_factor: int
    latency: dict[str, int]
    bytes_per_cycle: float
    memory_latency_cycles: int

    @classmethod
    def from_description(cls, d: dict[str, Any], issue_set: tuple[str, ...] | None = None) -> PrestoMachine:
        """From the TOML's data (an ``IsaMachine.model_dump()`` or the parsed file).
        `issue_set`: the [issue] rules the file itself sets (default: every one in `d`).
        Raises `TargetError` naming a table or field the Presto backend needs, or one it
        would not model."""
        issue_set = tuple(d.get("issue") or ()) if issue_set is None else issue_set
        where = f"ISA machine {d.get('name', '?')!r} (presto)"

        def need(table: str, key: str) -> Any:
            entries = d.get(table) or {}
            if key not in entries or entries[key] is None:
                raise TargetError(f"{where}: needs [{table}] {key}; see fhec/backends/targets/presto.toml")
            return entries[key]

        vector = need("registers", "vector")
        pipes = {p: need("pipelines", p) for p in TIMING_PIPELINES}
        lanes = {p["lanes"] for k, p in pipes.items() if k != "config"}
        if len(lanes) != 1:
            raise TargetError(f"{where}: the add, mul, ntt and aut pipelines must have the same lanes (the PE's)")
        mem = d.get("memory") or {}
        if "bandwidth_gb_s" not in mem:
            raise TargetError(f"{where}: needs [memory] bandwidth_gb_s (vector loads and stores)")
        machine = cls(
            name=d["name"],
            clock_ghz=float(d["clock_ghz"]),
            word_bits=int(d["word_bits"]),
            n_min=int(d["n_min"]),
            n_max=int(d["n_max"]),
            pe_count=int(need("params", "pe_count")),
            pe_vectors=int(need("params", "pe_vectors")),
            vector_words=int(vector["elements"]),
            lanes=int(lanes.pop()),
            modulus_registers=int(need("registers", "modulus")["count"]),
            queue_depth=int(need("params", "queue_depth")),
            dispatch_cycles=int(need("params", "dispatch_cycles")),
            wide_word_factor=int(need("params", "wide_word_factor")),
            latency={k: int(p["latency"]) for k, p in pipes.items()},
            bytes_per_cycle=float(mem["bandwidth_gb_s"]) / float(d["clock_ghz"]),
            memory_latency_cycles=math.ceil(float(mem.get("latency_ns", 0.0)) * float(d["clock_ghz"])),
        )
        if vector["count"] != machine.vector_slots:
            raise TargetError(
                f"{where}: [registers.vector] count = {vector['count']} must equal pe_count x pe_vectors "
                f"= {machine.vector_slots} (the PE vectors are the vector registers)"
            )
        if machine.modulus_registers > 32 or vector["count"] > 64:
            raise TargetError(f"{where}: the encoding has 5-bit modulus and 6-bit vector register fields")
        for key in ("pe_count", "pe_vectors", "queue_depth", "dispatch_cycles", "wide_word_factor"):
            if getattr(machine, key) < 1:
                raise TargetError(f"{where}: [params] {key} = {getattr(machine, key)} must be at least 1")
        _check_layout(machine, where)
        # the timing model dispatches one instruction at a time into an out-of-order queue
        # (`fhec.isa.presto.sim.Timing`); other issue rules would be ignored, not modeled.
        # Only the rules the file sets are compared (`issue_set`: an IsaMachine's defaults
        # describe an in-order machine)
        issue = d.get("issue") or {}
        wrong = {k: issue[k] for k in issue_set if k in issue and issue[k] != _MODELED_ISSUE[k]}
        if wrong:
            raise TargetError(f"{where}: [issue] {wrong} is not what the Presto model does: it dispatches one "
                              f"instruction per dispatch_cycles into an out-of-order queue of queue_depth entries. "
                              f"Set [issue] to {_MODELED_ISSUE} (or leave it out) and change those [params]")
        scalar = (d.get("registers") or {}).get("scalar")
        if scalar is not None and scalar.get("count") != 32:
            raise TargetError(f"{where}: [registers.scalar] count = {scalar.get('count')}: the scalar registers are "
                              f"the RISC-V core's x0..x31, so count must be 32")
        return machine

    @property
    def vector_slots(self) -> int:
        """PE vectors in the machine (64 for Presto)."""
        return self.pe_count * self.pe_vectors

    def check_ring_degree(self, N: int) -> None:
        """Raise `MachineCodeError` unless limbs of N words fit this machine's layout (which
        `from_description` guarantees for every N in n_min .. n_max)."""
        if N < self.n_min or N > self.n_max or N & (N - 1):
            raise MachineCodeError(
                f"{self.name} runs ring degrees N = {self.n_min} .. {self.n_max} (powers of two), not N = {N}; "
                f"choose parameters with N in that range"
            )
        if self.chunks(N) > self.pe_count:
            raise MachineCodeError(
                f"{self.name}: a limb of N = {N} words needs {self.chunks(N)} PE vectors of {self.vector_words} "
                f"words, but the machine has {self.pe_count} PEs; raise [params] pe_count or "
                f"[registers.vector] elements, or lower n_max"
            )

    def chunks(self, N: int) -> int:
        """G: PE vectors one limb of N words occupies."""
        return max(1, N // self.vector_words)

    def registers(self, N: int) -> int:
        """Architectural vector registers at ring degree N (64 / G on Presto)."""
        return self.vector_slots // self.chunks(N)

    def register_home(self, N: int, v: int) -> tuple[tuple[int, ...], int]:
        """(PEs holding chunks 0 .. G-1 of register v, the buffer they use)."""
        G = self.chunks(N)
        per_buffer = self.pe_count // G
        return tuple((v % per_buffer) * G + j for j in range(G)), v // per_buffer

    def word_passes(self, word_bits: int) -> int:
        """1 for native words, `wide_word_factor` for wider ones."""
        return 1 if word_bits <= self.word_bits else self.wide_word_factor

    def chunk_cycles(self, N: int) -> int:
        """Cycles to stream one PE's share of a limb through its lanes."""
        return math.ceil(min(N, self.vector_words) / self.lanes)


def _check_layout(machine: PrestoMachine, where: str) -> None:
    """Refuse a machine whose limbs would not tile its PEs (`register_home`): a limb of
    N > elements words spreads over G = N / elements PEs and each buffer holds pe_count / G
    registers, so G must divide pe_count for every N up to n_max."""
    words = machine.vector_words
    if machine.pe_count & (machine.pe_count - 1):
        raise TargetError(f"{where}: [params] pe_count = {machine.pe_count} must be a power of two: a limb spreads "
                          f"over a power of two of PEs, which must divide pe_count (Presto has 32)")
    if machine.pe_count * words < machine.n_max:
        raise TargetError(
            f"{where}: [registers.vector] elements = {words} x [params] pe_count = {machine.pe_count} PEs hold a "
            f"limb of at most {machine.pe_count * words:,} words, below n_max = {machine.n_max:,}: set elements "
            f"to a power of two of at least {-(-machine.n_max // machine.pe_count):,} (Presto's PE vectors have "
            f"512 words), or lower n_max to {machine.pe_count * words:,}"
        )


def load_presto(path_or_name: str = "presto") -> PrestoMachine:
    """The Presto numbers of a shipped machine name or a TOML path (for tools and tests
    that do not go through `fhec.backends.target.load_target`)."""
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    if path_or_name.endswith(".toml"):
        text = open(path_or_name, encoding="utf-8").read()
    else:
        text = resources.files("fhec.backends").joinpath("targets", f"{path_or_name}.toml").read_text(encoding="utf-8")
    return PrestoMachine.from_description(tomllib.loads(text))
