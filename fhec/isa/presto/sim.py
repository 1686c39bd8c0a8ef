"""Instruction-level simulator of Presto: executes instruction *words* on real data and
times them.

`simulate` decodes every 32-bit word (`fhec.isa.presto.encoding.decode`), executes it
on a model of the machine state and feeds the same decoded stream to the timing model,
so the functional and the timing model cannot disagree on what ran:

* state: the RISC-V integer registers x0..x31 (64-bit), a byte-addressed little-endian
  memory, the PE buffers (``pe.count x pe.vectors x pe.vector_words`` words, a limb
  spread over them as `fhec.isa.presto.machine` documents), the modulus registers
  (q, psi), the ring degree N and the active / source modulus (``he.setq``);
* arithmetic: the ring kernels of `fhec.ring` (modular add/sub/mul, the negacyclic NTT
  with the psi of the modulus register, the NTT-domain automorphism, the centered lift
  of a foreign residue) on the words the registers hold;
* timing (`Timing`): out-of-order issue from a `issue.queue_depth`-entry queue fed one
  instruction per `issue.dispatch_cycles` by the RISC-V core; an instruction starts when
  its sources are ready, its destination is no longer read or written by an earlier
  one, and every PE it touches is free; vector loads and stores share one memory port.

Bad machine code (an illegal word, a register beyond the layout, a vector op before
``he.setn``, an operand that is not a residue of its modulus) raises `MachineCodeError`
naming the word's index.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from fhec.errors import MachineCodeError
from fhec.isa.presto.encoding import Instr, decode
from fhec.isa.presto.machine import PrestoMachine
from fhec.ring import automorphism, modarith, ntt, rns

MASK64 = (1 << 64) - 1
PAGE = 1 << 12


class Memory:
    """Sparse little-endian byte memory in 4 KB pages (unwritten bytes read as zero)."""

    def __init__(self) -> None:
        self.pages: dict[int, np.ndarray] = {}

    def write(self, addr: int, data: bytes | np.ndarray) -> None:
        buf = np.frombuffer(bytes(data) if not isinstance(data, np.ndarray) else data.tobytes(), dtype=np.uint8)
        pos = 0
        while pos < len(buf):
            page, off = divmod(addr + pos, PAGE)
            n = min(PAGE - off, len(buf) - pos)
            self.pages.setdefault(page, np.zeros(PAGE, dtype=np.uint8))[off : off + n] = buf[pos : pos + n]
            pos += n

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        out = np.zeros(nbytes, dtype=np.uint8)
        pos = 0
        while pos < nbytes:
            page, off = divmod(addr + pos, PAGE)
            n = min(PAGE - off, nbytes - pos)
            if page in self.pages:
                out[pos : pos + n] = self.pages[page][off : off + n]
            pos += n
        return out

    def write_words(self, addr: int, words: np.ndarray, word_bytes: int) -> None:
        self.write(addr, np.asarray(words, dtype=np.uint64).astype(f"<u{word_bytes}"))

    def read_words(self, addr: int, n: int, word_bytes: int) -> np.ndarray:
        return self.read(addr, n * word_bytes).view(f"<u{word_bytes}").astype(np.uint64)


@dataclass
class State:
    """Architectural state of the RISC-V core and the Presto coprocessor."""

    machine: PrestoMachine
    word_bytes: int
    memory: Memory = field(default_factory=Memory)
    x: list[int] = field(default_factory=lambda: [0] * 32)
    N: int = 0
    moduli: list[tuple[int, int] | None] = field(default_factory=list)
    qa: int = -1
    qs: int = -1

    def __post_init__(self) -> None:
        m = self.machine
        self.pe = np.zeros((m.pe_count, m.pe_vectors, m.vector_words), dtype=np.uint64)
        self.moduli = [None] * m.modulus_registers

    # --- registers -----------------------------------------------------------------

    def _home(self, v: int) -> tuple[tuple[int, ...], int]:
        if self.N == 0:
            raise MachineCodeError("a vector instruction before he.setn: the ring degree is not configured")
        if v >= self.machine.registers(self.N):
            raise MachineCodeError(f"v{v} does not exist at N = {self.N} ({self.machine.registers(self.N)} registers)")
        return self.machine.register_home(self.N, v)

    def vread(self, v: int) -> np.ndarray:
        pes, buf = self._home(v)
        return self.pe[list(pes), buf, :].reshape(-1)[: self.N].copy()

    def vwrite(self, v: int, words: np.ndarray) -> None:
        pes, buf = self._home(v)
        n = min(self.N, self.machine.vector_words)
        self.pe[list(pes), buf, :n] = np.asarray(words, dtype=np.uint64).reshape(len(pes), n)

    def modulus(self, qi: int) -> tuple[int, int]:
        entry = self.moduli[qi] if 0 <= qi < len(self.moduli) else None
        if entry is None:
            raise MachineCodeError(f"modulus register q{qi} is used before he.setmod configured it")
        return entry

    def residues(self, v: int, qi: int) -> np.ndarray:
        """Register v's words, checked to be residues of modulus register qi."""
        a = self.vread(v)
        q = self.modulus(qi)[0]
        if a.size and int(a.max()) >= q:
            raise MachineCodeError(f"v{v} holds a word >= q{qi} = {q}: not a residue of the modulus it is read under")
        return a

    def scalar_below(self, r: int, bound: int, what: str) -> int:
        value = self.x[r]
        if value >= bound:
            raise MachineCodeError(f"x{r} = {value} is not a valid {what} (must be below {bound})")
        return value


# --- semantics: one function per mnemonic --------------------------------------------


def _q(s: State) -> int:
    if s.qa < 0:
        raise MachineCodeError("a modular instruction before he.setq chose the active modulus")
    return s.modulus(s.qa)[0]


def _binary(kernel):
    def run(s: State, i: Instr) -> None:
        vd, v1, v2 = i.args
        q = _q(s)
        s.vwrite(vd, kernel(s.residues(v1, s.qa), s.residues(v2, s.qa), q))

    return run


def _centered_src(s: State, v: int) -> np.ndarray:
    """Register v read as the centered lift of a residue of qs, reduced mod qa."""
    a = s.residues(v, s.qs)
    qs, qa = s.modulus(s.qs)[0], _q(s)
    return a if qs == qa else rns.lift_centered(a[None, :], (qs,), (qa,))[0]


def _vneg(s: State, i: Instr) -> None:
    vd, v1 = i.args
    s.vwrite(vd, modarith.neg_mod(s.residues(v1, s.qa), _q(s)))


def _vaddx(s: State, i: Instr) -> None:
    vd, v1, r = i.args
    q = _q(s)
    c = s.scalar_below(r, q, f"constant mod {q}")
    s.vwrite(vd, modarith.add_mod(s.residues(v1, s.qa), np.full(s.N, c, dtype=np.uint64), q))


def _mulx(read: Callable[[State, int], np.ndarray]):
    def run(s: State, i: Instr) -> None:
        vd, v1, r = i.args
        q = _q(s)
        c = s.scalar_below(r, q, f"constant mod {q}")
        s.vwrite(vd, modarith.mul_const_mod(read(s, v1), c, q))

    return run


def _transform(kernel, read: Callable[[State, int], np.ndarray]):
    def run(s: State, i: Instr) -> None:
        vd, v1 = i.args
        _q(s)
        q, psi = s.modulus(s.qa)
        s.vwrite(vd, kernel(read(s, v1)[None, :], (q,), (psi,))[0])

    return run


def _aut(s: State, i: Instr) -> None:
    vd, v1, r = i.args
    k = s.scalar_below(r, 2 * s.N, f"Galois element at N = {s.N}")
    if k % 2 == 0:
        raise MachineCodeError(f"x{r} = {k} is not a Galois element: it must be odd")
    s.vwrite(vd, automorphism.automorphism_ntt(s.residues(v1, s.qa), k, s.N))


def _setn(s: State, i: Instr) -> None:
    N = s.x[i.args[0]]
    s.machine.check_ring_degree(N)
    s.N = N


def _setmod(s: State, i: Instr) -> None:
    qd, rq, rpsi = i.args
    q, psi = s.x[rq], s.x[rpsi]
    if qd >= len(s.moduli):
        raise MachineCodeError(f"q{qd} does not exist ({len(s.moduli)} modulus registers)")
    if s.N == 0 or not 2 < q < (1 << 62) or (q - 1) % (2 * s.N) or pow(psi, s.N, q) != q - 1:
        raise MachineCodeError(
            f"he.setmod q{qd}: q = {q} with psi = {psi} is not an NTT-friendly prime with a primitive 2N-th root "
            f"at N = {s.N} (set N first with he.setn)"
        )
    s.moduli[qd] = (q, psi)


def _setq(s: State, i: Instr) -> None:
    qa, qs = i.args
    s.modulus(qa), s.modulus(qs)
    s.qa, s.qs = qa, qs


def _vld(s: State, i: Instr) -> None:
    vd, imm, r = i.args
    s.vwrite(vd, s.memory.read_words((s.x[r] + imm) & MASK64, s.N, s.word_bytes))


def _vst(s: State, i: Instr) -> None:
    vs, imm, r = i.args
    s.memory.write_words((s.x[r] + imm) & MASK64, s.vread(vs), s.word_bytes)


def _sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _set_x(s: State, rd: int, value: int) -> None:
    if rd:
        s.x[rd] = value & MASK64


SEMANTICS: dict[str, Callable[[State, Instr], None]] = {
    "he.vadd": _binary(lambda a, b, q: modarith.add_mod(a, b, q)),
    "he.vsub": _binary(lambda a, b, q: modarith.sub_mod(a, b, q)),
    "he.vmul": _binary(lambda a, b, q: modarith.mul_mod(a, b, q)),
    "he.vneg": _vneg,
    "he.vaddx": _vaddx,
    "he.vmulx": _mulx(lambda s, v: s.residues(v, s.qa)),
    "he.vmulx.c": _mulx(_centered_src),
    "he.ntt": _transform(ntt.ntt, lambda s, v: s.residues(v, s.qa)),
    "he.ntt.c": _transform(ntt.ntt, _centered_src),
    "he.intt": _transform(ntt.intt, lambda s, v: s.residues(v, s.qa)),
    "he.aut": _aut,
    "he.setn": _setn,
    "he.setmod": _setmod,
    "he.setq": _setq,
    "he.vld": _vld,
    "he.vst": _vst,
    "lui": lambda s, i: _set_x(s, i.args[0], _sext(i.args[1] << 12, 32)),
    "addi": lambda s, i: _set_x(s, i.args[0], s.x[i.args[1]] + i.args[2]),
    "ld": lambda s, i: _set_x(s, i.args[0], int(s.memory.read(((s.x[i.args[2]] + i.args[1]) & MASK64), 8).view("<u8")[0])),
}
"""What each mnemonic does to the state."""


# --- timing ----------------------------------------------------------------------------

TIMING_CLASS: dict[str, str] = {
    "he.vadd": "add", "he.vsub": "add", "he.vneg": "add", "he.vaddx": "add",
    "he.vmul": "mul", "he.vmulx": "mul", "he.vmulx.c": "mul",
    "he.ntt": "ntt", "he.ntt.c": "ntt", "he.intt": "ntt",
    "he.aut": "aut",
    "he.setn": "barrier", "he.setmod": "barrier", "he.setq": "scalar",
    "he.vld": "load", "he.vst": "store",
    "lui": "scalar", "addi": "scalar", "ld": "scalar",
}  # fmt: skip
"""The timing class of each mnemonic (`Timing.cycles`)."""


@dataclass
class Timing:
    """Out-of-order issue timing of one run (see the module docstring).

    `cycles` is when the last instruction completes; `counts` the instructions per timing
    class; `pe_busy` the PE-cycles spent computing (utilization = pe_busy /
    (cycles * PEs))."""

    machine: PrestoMachine
    word_bits: int
    N: int = 0
    cycles: int = 0
    dispatch: int = 0
    barrier: int = 0
    mem_free: int = 0
    pe_busy: int = 0
    counts: Counter = field(default_factory=Counter)
    class_cycles: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.pe_free = [0] * self.machine.pe_count
        self.ready: dict[int, int] = {}
        self.read_done: dict[int, int] = {}
        self.stored: dict[int, int] = {}
        self.queue: list[int] = []

    def op_cycles(self, cls: str) -> int:
        """Busy cycles of one instruction of timing class `cls` at the current N."""
        m, N = self.machine, self.N
        c = m.chunk_cycles(N) * m.word_passes(self.word_bits)
        G = m.chunks(N)
        xfer = math.ceil(N * (4 if self.word_bits <= 32 else 8) / m.bytes_per_cycle)
        return {
            "add": c + m.latency["add"],
            "mul": c + m.latency["mul"],
            # log2 N butterfly stages, each one chunk per PE; stages across PEs first exchange chunks
            "ntt": int(math.log2(N)) * c + int(math.log2(G)) * c + m.latency["ntt"],
            "aut": c * (1 if G == 1 else 2) + m.latency["aut"],
            "load": xfer,
            "store": xfer,
            "barrier": m.latency["config"],
            "scalar": 0,
        }[cls]

    def step(self, ins: Instr, state: State) -> None:
        cls = TIMING_CLASS[ins.mnemonic]
        self.counts[cls] += 1
        self.dispatch += self.machine.dispatch_cycles
        if cls == "scalar":
            return
        if len(self.queue) >= self.machine.queue_depth:
            self.dispatch = max(self.dispatch, heapq.heappop(self.queue))
        if ins.mnemonic == "he.setn":
            self.N = state.N
        busy = self.op_cycles(cls)
        start = max(self.dispatch, self.barrier)
        if cls == "barrier":
            start = max(start, self.cycles)
            self.barrier = finish = start + busy
            self._finish(finish, busy, cls)
            return
        spec = ins.spec
        regs = dict(zip(spec.fields, ins.args))
        kinds = dict(zip(spec.fields, spec.operands.replace("(", "").replace(")", "")))
        dst = regs["rd"] if cls != "store" and kinds.get("rd") == "v" else None
        srcs = [regs[f] for f in ("rs1", "rs2") if kinds.get(f) == "v"]
        pes = {p for v in srcs + ([dst] if dst is not None else []) for p in self.machine.register_home(self.N, v)[0]}
        start = max([start] + [self.ready.get(v, 0) for v in srcs] + [self.pe_free[p] for p in pes])
        if dst is not None:
            start = max(start, self.ready.get(dst, 0), self.read_done.get(dst, 0))
        addr = None
        if cls in ("load", "store"):
            addr = (state.x[regs["rs1"]] + regs["imm"]) & MASK64
            start = max(start, self.mem_free, self.stored.get(addr, 0) if cls == "load" else self.read_done.get(-addr - 1, 0))
            self.mem_free = start + busy
        finish = start + busy + (self.machine.memory_latency_cycles if cls == "load" else 0)
        for p in pes:
            self.pe_free[p] = start + busy
        for v in srcs:
            self.read_done[v] = max(self.read_done.get(v, 0), start + busy)
        if dst is not None:
            self.ready[dst] = finish
        if cls == "store":
            self.stored[addr] = finish
        if cls == "load":
            self.read_done[-addr - 1] = max(self.read_done.get(-addr - 1, 0), start + busy)
        if cls not in ("load", "store"):
            self.pe_busy += busy * len(pes)
        self._finish(finish, busy, cls)

    def _finish(self, finish: int, busy: int, cls: str) -> None:
        self.class_cycles[cls] += busy
        heapq.heappush(self.queue, finish)
        self.cycles = max(self.cycles, finish)

    def summary(self) -> dict:
        """The timing report: cycles, seconds at the machine's clock, instruction counts
        and busy cycles per class, PE utilization."""
        pes = self.machine.pe_count
        return {
            "cycles": self.cycles,
            "seconds": self.cycles / (self.machine.clock_ghz * 1e9),
            "instructions": dict(sorted(self.counts.items())),
            "busy_cycles": dict(sorted(self.class_cycles.items())),
            "pe_utilization": self.pe_busy / (self.cycles * pes) if self.cycles else 0.0,
        }


@dataclass
class SimResult:
    """The machine state after a run and its timing."""

    state: State
    timing: Timing


def simulate(
    words: Sequence[int] | np.ndarray,
    machine: PrestoMachine,
    word_bits: int,
    memory: Mapping[int, bytes] | Memory | None = None,
) -> SimResult:
    """Execute instruction `words` from a fresh state whose memory holds `memory`
    (address -> bytes, or a `Memory`); return the final state and the timing.

    `word_bits` is the data word width: vectors are 4-byte words in memory up to 32 bits,
    else 8. Raises `MachineCodeError` (naming the word index) for bad machine code."""
    state = State(machine, 4 if word_bits <= 32 else 8)
    if isinstance(memory, Memory):
        state.memory = memory
    else:
        for addr, data in (memory or {}).items():
            state.memory.write(addr, data)
    timing = Timing(machine, word_bits)
    decoded: dict[int, Instr] = {}
    for k, w in enumerate(np.asarray(words, dtype=np.uint32).tolist()):
        try:
            ins = decoded.get(w) or decoded.setdefault(w, decode(w))
            SEMANTICS[ins.mnemonic](state, ins)
            timing.step(ins, state)
        except MachineCodeError as e:
            raise MachineCodeError(f"word {k} ({w:#010x}): {e}") from None
    return SimResult(state, timing)
