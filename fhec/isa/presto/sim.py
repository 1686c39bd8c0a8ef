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
from fhec.ir.limb import word_bytes_for
from fhec.isa.code import PROGRESS_EVERY
from fhec.isa.presto.encoding import SPEC, PrestoOp, Spec, args_of, decode, operand_kinds
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
        # Words are packed little-endian to `word_bytes` bytes each; widths numpy has no
        # integer type for (a 40-bit word is 5 bytes, `word_bytes_for`) are cut from the
        # 8-byte form, so every width goes through the same path.
        full = np.ascontiguousarray(words, dtype="<u8").view(np.uint8).reshape(-1, 8)
        self.write(addr, full[:, :word_bytes].reshape(-1))

    def read_words(self, addr: int, n: int, word_bytes: int) -> np.ndarray:
        full = np.zeros((n, 8), dtype=np.uint8)
        full[:, :word_bytes] = self.read(addr, n * word_bytes).reshape(n, word_bytes)
        return full.reshape(-1).view("<u8").astype(np.uint64)


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


# --- semantics: one function per instruction --------------------------------------------


def _q(s: State) -> int:
    if s.qa < 0:
        raise MachineCodeError("a modular instruction before he.setq chose the active modulus")
    return s.modulus(s.qa)[0]


def _binary(kernel):
    def run(s: State, args: tuple[int, ...]) -> None:
        vd, v1, v2 = args
        q = _q(s)
        s.vwrite(vd, kernel(s.residues(v1, s.qa), s.residues(v2, s.qa), q))

    return run


def _centered_src(s: State, v: int) -> np.ndarray:
    """Register v read as the centered lift of a residue of qs, reduced mod qa."""
    a = s.residues(v, s.qs)
    qs, qa = s.modulus(s.qs)[0], _q(s)
    return a if qs == qa else rns.lift_centered(a[None, :], (qs,), (qa,))[0]


def _vneg(s: State, args: tuple[int, ...]) -> None:
    vd, v1 = args
    s.vwrite(vd, modarith.neg_mod(s.residues(v1, s.qa), _q(s)))


def _vaddx(s: State, args: tuple[int, ...]) -> None:
    vd, v1, r = args
    q = _q(s)
    c = s.scalar_below(r, q, f"constant mod {q}")
    s.vwrite(vd, modarith.add_mod(s.residues(v1, s.qa), np.full(s.N, c, dtype=np.uint64), q))


def _mulx(read: Callable[[State, int], np.ndarray]):
    def run(s: State, args: tuple[int, ...]) -> None:
        vd, v1, r = args
        q = _q(s)
        c = s.scalar_below(r, q, f"constant mod {q}")
        s.vwrite(vd, modarith.mul_const_mod(read(s, v1), c, q))

    return run


def _transform(kernel, read: Callable[[State, int], np.ndarray]):
    def run(s: State, args: tuple[int, ...]) -> None:
        vd, v1 = args
        _q(s)
        q, psi = s.modulus(s.qa)
        s.vwrite(vd, kernel(read(s, v1)[None, :], (q,), (psi,))[0])

    return run


def _aut(s: State, args: tuple[int, ...]) -> None:
    vd, v1, r = args
    k = s.scalar_below(r, 2 * s.N, f"Galois element at N = {s.N}")
    if k % 2 == 0:
        raise MachineCodeError(f"x{r} = {k} is not a Galois element: it must be odd")
    s.vwrite(vd, automorphism.automorphism_ntt(s.residues(v1, s.qa), k, s.N))


def _setn(s: State, args: tuple[int, ...]) -> None:
    N = s.x[args[0]]
    s.machine.check_ring_degree(N)
    s.N = N


def _setmod(s: State, args: tuple[int, ...]) -> None:
    qd, rq, rpsi = args
    q, psi = s.x[rq], s.x[rpsi]
    if qd >= len(s.moduli):
        raise MachineCodeError(f"q{qd} does not exist ({len(s.moduli)} modulus registers)")
    if s.N == 0 or not 2 < q < (1 << 62) or (q - 1) % (2 * s.N) or pow(psi, s.N, q) != q - 1:
        raise MachineCodeError(
            f"he.setmod q{qd}: q = {q} with psi = {psi} is not an NTT-friendly prime with a primitive 2N-th root "
            f"at N = {s.N} (set N first with he.setn)"
        )
    s.moduli[qd] = (q, psi)


def _setq(s: State, args: tuple[int, ...]) -> None:
    qa, qs = args
    s.modulus(qa), s.modulus(qs)
    s.qa, s.qs = qa, qs


def _vld(s: State, args: tuple[int, ...]) -> None:
    vd, imm, r = args
    s.vwrite(vd, s.memory.read_words((s.x[r] + imm) & MASK64, s.N, s.word_bytes))


def _vst(s: State, args: tuple[int, ...]) -> None:
    vs, imm, r = args
    s.memory.write_words((s.x[r] + imm) & MASK64, s.vread(vs), s.word_bytes)


def _sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _set_x(s: State, rd: int, value: int) -> None:
    if rd:
        s.x[rd] = value & MASK64


O = PrestoOp
SEMANTICS: dict[PrestoOp, Callable[[State, tuple[int, ...]], None]] = {
    O.VADD: _binary(lambda a, b, q: modarith.add_mod(a, b, q)),
    O.VSUB: _binary(lambda a, b, q: modarith.sub_mod(a, b, q)),
    O.VMUL: _binary(lambda a, b, q: modarith.mul_mod(a, b, q)),
    O.VNEG: _vneg,
    O.VADDX: _vaddx,
    O.VMULX: _mulx(lambda s, v: s.residues(v, s.qa)),
    O.VMULX_C: _mulx(_centered_src),
    O.NTT: _transform(ntt.ntt, lambda s, v: s.residues(v, s.qa)),
    O.NTT_C: _transform(ntt.ntt, _centered_src),
    O.INTT: _transform(ntt.intt, lambda s, v: s.residues(v, s.qa)),
    O.AUT: _aut,
    O.SETN: _setn,
    O.SETMOD: _setmod,
    O.SETQ: _setq,
    O.VLD: _vld,
    O.VST: _vst,
    O.LUI: lambda s, args: _set_x(s, args[0], _sext(args[1] << 12, 32)),
    O.ADDI: lambda s, args: _set_x(s, args[0], s.x[args[1]] + args[2]),
    O.LD: lambda s, args: _set_x(s, args[0], int(s.memory.read((s.x[args[2]] + args[1]) & MASK64, 8).view("<u8")[0])),
}
"""What each instruction does to the state, given its operands in assembly order."""

PIPELINE_OF: dict[PrestoOp, str] = {
    O.VADD: "add", O.VSUB: "add", O.VNEG: "add", O.VADDX: "add",
    O.VMUL: "mul", O.VMULX: "mul", O.VMULX_C: "mul",
    O.NTT: "ntt", O.NTT_C: "ntt", O.INTT: "ntt",
    O.AUT: "aut",
    O.SETN: "config", O.SETMOD: "config",
    O.VLD: "memory", O.VST: "memory",
    O.SETQ: "core", O.LUI: "core", O.ADDI: "core", O.LD: "core",
}  # fmt: skip
"""Where each instruction executes: a PE pipeline (add, mul, ntt, aut), the configuration
path (drains the queue), the memory port, or the RISC-V core itself (``core``: scalar
instructions and ``he.setq``, whose state the decoder attaches to the instructions it
queues, as a vector unit attaches ``vtype``)."""
DATA_FREE = frozenset(op for op, p in PIPELINE_OF.items() if p in ("core", "config"))
"""Instructions a timing-only run still executes (they set what the timing reads)."""
del O


# --- timing ----------------------------------------------------------------------------


@dataclass
class Timing:
    """Out-of-order issue timing of one run (see the module docstring).

    `issue[i]` is the cycle instruction i starts (dispatch, for core instructions);
    `cycles` when the last one completes; `busy` per pipeline the PE-cycles it used
    divided by the PE count (the memory port: its transfer cycles), so that busy /
    cycles is the fraction of the machine it kept busy; `stalls` the dispatch cycles lost
    to a full queue and to configuration barriers."""

    machine: PrestoMachine
    word_bits: int
    N: int = 0
    cycles: int = 0
    dispatch: int = 0
    barrier: int = 0
    mem_free: int = 0
    issue: list[int] = field(default_factory=list)
    busy: Counter = field(default_factory=Counter)
    stalls: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.pe_free = [0] * self.machine.pe_count
        self.ready: dict[int, int] = {}
        self.read_done: dict[int, int] = {}
        self.stored: dict[int, int] = {}
        self.loads_done: dict[int, int] = {}
        self.queue: list[int] = []

    def op_cycles(self, op: PrestoOp) -> int:
        """Cycles instruction `op` occupies its PEs (or the memory port) at the current N."""
        m, N = self.machine, self.N
        c = m.chunk_cycles(N) * m.word_passes(self.word_bits)
        G = m.chunks(N)
        lat = m.latency
        return {
            "add": lambda: c + lat["add"],
            "mul": lambda: c + lat["mul"],
            # log2 N butterfly stages of one chunk-time each; the stages that pair words
            # on different PEs first exchange a chunk over the inter-PE NoC
            "ntt": lambda: int(math.log2(N)) * c + int(math.log2(G)) * c + lat["ntt"],
            # the intra-PE NoC permutes a limb in one PE; across PEs the Galois fetcher
            # reads and the write-back path writes: two chunk-times
            "aut": lambda: c * (1 if G == 1 else 2) + lat["aut"],
            "memory": lambda: math.ceil(N * word_bytes_for(self.word_bits) / m.bytes_per_cycle),
            "config": lambda: lat["config"],
            "core": lambda: 0,
        }[PIPELINE_OF[op]]()

    def step(self, spec: Spec, args: tuple[int, ...], state: State) -> None:
        """Time one executed instruction (after its semantics ran on `state`)."""
        op, pipe = spec.op, PIPELINE_OF[spec.op]
        self.dispatch += self.machine.dispatch_cycles
        if pipe == "core":
            self.issue.append(self.dispatch)
            return
        if len(self.queue) >= self.machine.queue_depth:
            freed = heapq.heappop(self.queue)
            if freed > self.dispatch:
                self.stalls["queue_full"] += freed - self.dispatch
                self.dispatch = freed
        if op == PrestoOp.SETN:
            self.N = state.N
        busy = self.op_cycles(op)
        start = max(self.dispatch, self.barrier)
        if pipe == "config":
            start = max(start, self.cycles)
            self.stalls["configuration"] += start - self.dispatch
            self.barrier = start + busy
            self._done(start, start + busy)
            return
        values = dict(zip(spec.fields, args))
        kinds = dict(zip(spec.fields, operand_kinds(spec)))
        vregs = [(f, values[f]) for f in spec.fields if kinds[f] == "v"]
        roles = dict(zip((f for f, _ in vregs), spec.roles))
        srcs = [v for f, v in vregs if roles[f] == "s"]
        dsts = [v for f, v in vregs if roles[f] == "d"]
        pes = {p for v in srcs + dsts for p in self.machine.register_home(self.N, v)[0]}
        start = max([start] + [self.ready.get(v, 0) for v in srcs] + [self.pe_free[p] for p in pes])
        start = max([start] + [max(self.ready.get(v, 0), self.read_done.get(v, 0)) for v in dsts])
        finish = start + busy
        if pipe == "memory":
            addr = (state.x[values["rs1"]] + values["imm"]) & MASK64
            if op == PrestoOp.VLD:  # after the store that wrote it
                start = max(start, self.mem_free, self.stored.get(addr, 0))
                finish = start + busy + self.machine.memory_latency_cycles
                self.loads_done[addr] = max(self.loads_done.get(addr, 0), start + busy)
            else:  # after the loads that read the old value
                start = max(start, self.mem_free, self.loads_done.get(addr, 0))
                finish = start + busy
                self.stored[addr] = finish
            self.mem_free = start + busy
            self.busy["memory"] += busy
        else:
            self.busy[pipe] += busy * len(pes) / self.machine.pe_count
        for p in pes:
            self.pe_free[p] = start + busy
        for v in srcs:
            self.read_done[v] = max(self.read_done.get(v, 0), start + busy)
        for v in dsts:
            self.ready[v] = finish
        self._done(start, finish)

    def _done(self, start: int, finish: int) -> None:
        self.issue.append(start)
        heapq.heappush(self.queue, finish)
        self.cycles = max(self.cycles, finish)


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
    *,
    data: bool = True,
    progress: Callable[[int], None] | None = None,
) -> SimResult:
    """Execute instruction `words` from a fresh state whose memory holds `memory`
    (address -> bytes, or a `Memory`); return the final state and the timing.

    `word_bits` is the data word width: a vector's words take `word_bytes_for(word_bits)`
    bytes each in memory, as the backend lays them out. With ``data=False`` only the scalar and configuration instructions execute
    (what the timing needs: addresses, N); vector data is neither read nor computed.
    `progress`, when given, is called with the words executed every `PROGRESS_EVERY` words and at the end.
    Raises `MachineCodeError` (naming the word index) for bad machine code."""
    state = State(machine, word_bytes_for(word_bits))
    if isinstance(memory, Memory):
        state.memory = memory
    else:
        for addr, blob in (memory or {}).items():
            state.memory.write(addr, blob)
    timing = Timing(machine, word_bits)
    decoded: dict[int, tuple[Spec, tuple[int, ...]]] = {}
    listed = np.asarray(words, dtype=np.uint32).tolist()
    for k, w in enumerate(listed):
        if progress is not None and k % PROGRESS_EVERY == 0:
            progress(k)
        try:
            if w not in decoded:
                ins = decode(w)
                decoded[w] = (SPEC[PrestoOp(ins.op)], args_of(ins))
            spec, args = decoded[w]
            if data or spec.op in DATA_FREE:
                SEMANTICS[spec.op](state, args)
            timing.step(spec, args, state)
        except MachineCodeError as e:
            raise MachineCodeError(f"word {k} ({w:#010x}): {e}") from None
    if progress is not None:
        progress(len(listed))
    return SimResult(state, timing)
