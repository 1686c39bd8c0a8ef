"""Instruction selection for B512: every limb op becomes vector instructions over the
N / 512 vectors of its rvecs (`fhec.isa.rpu.ntt` documents the layout).

=========  ==================================================================================
limb op    B512, per 512-element vector (m = the op's modulus register, p = a foreign source's)
=========  ==================================================================================
ADD/SUB    VADD / VSUB
MUL        VMUL
MUL_CONST  VMULS by SRF[C]                  ADD_CONST  VADDS by SRF[C]
NEG        VMULS by SRF[m - 1]
BCONV      VMULS by C when p = m; else VADDS h @p, VMULS C @m, VSUBS h*C @m (h = (p-1)/2: the
           centered lift of `fhec.ring.rns.lift_centered`, (x + h mod p) - h, folded into the
           product)
NTT        (a foreign source: VADDS h @p, VSUBS h @m) then log2 N stages of V/2 BFLY_CT and V
           UNPKLO/UNPKHI; the last stage's shuffle becomes STRIDED stores for an output rvec
INTT       log2 N stages of V PKLO/PKHI and V/2 BFLY_GS (the first un-shuffle becomes STRIDED
           loads for a source in memory), then VMULS by N^-1
AUT        the source in the data memory (stored first if it lives in registers), then one
           INDEXED load per vector with the automorphism's slot permutation as index vector
=========  ==================================================================================

Loaded rvecs (inputs, key-switch hints, constants) live in the vector data memory (VDM)
at fixed addresses and output rvecs are stored to theirs; every other rvec is registers
only, unless the allocator spills it. The ROM - twiddle vectors, index vectors (VDM),
scalar constants, moduli and address bases (scalar data memory, SDM) - is deduplicated
by content: a twiddle vector used by several NTTs is one virtual register, and the
allocator keeps it in a register while it pays to.

Prologue: ALOAD a_k = k * 2^20 for every 2^20-word region of the VDM (an address is
ARF[a_k] + a 20-bit field) and MLOAD m_i = moduli[i] (the limb IR's modulus index is the
modulus register).
"""

from __future__ import annotations

import numpy as np

from fhec.backends.machine import IsaMachine
from fhec.errors import TargetError
from fhec.ir.limb_ops import IS_LOADED, LimbOp, RVecClass
from fhec.ir.lowered import LoweredProgram
from fhec.isa.code import Instr, MemoryLayout, RomSegment, Selected
from fhec.isa.rpu.isa import ADDRESS_BITS, VECTOR_LENGTH, Mode, Op, RegFile
from fhec.isa.rpu.ntt import n_inverse, stage_count, stage_twiddles
from fhec.ring.automorphism import automorphism_ntt_permutation

__all__ = ["select", "split_address", "SHUFFLE_LAG"]

SHUFFLE_LAG = 2
"""Butterflies issued ahead of the shuffles that read them, within one NTT stage: the
in-order front end stalls on a busy register, so a shuffle right behind its butterfly
would wait out the multiplier's latency."""

_VMASK = (1 << ADDRESS_BITS) - 1


def split_address(address: int) -> tuple[int, int]:
    """(20-bit address field, address register) of a word address: ARF[k] = k * 2^20."""
    return address & _VMASK, address >> ADDRESS_BITS


class _Emitter:
    """Builds the virtual-register code, its homes, and the ROM."""

    def __init__(self, lowered: LoweredProgram, machine: IsaMachine) -> None:
        self.limb = lowered.limb
        self.N = self.limb.N
        self.V = self.N // VECTOR_LENGTH
        self.code: list[Instr] = []
        self.reg_class: list[int] = []
        self.homes: dict[int, object] = {}
        self.rom: list[RomSegment] = []
        self.vdm_next = 0
        self.sdm_next = 0
        self.rom_vregs: dict[bytes, int] = {}
        self.scalar_vregs: dict[int, int] = {}
        self.sdm_rom: list[int] = []
        self.origin = -1
        self.machine = machine

    # -- registers and memory ----------------------------------------------------------

    def vreg(self, cls: RegFile = RegFile.VECTOR) -> int:
        self.reg_class.append(int(cls))
        return len(self.reg_class) - 1

    def vdm_alloc(self, words: int) -> int:
        base = self.vdm_next
        self.vdm_next += words
        return base

    def sdm_word(self, value: int) -> int:
        self.sdm_rom.append(int(value))
        return len(self.sdm_rom) - 1

    def rom_vector(self, words: np.ndarray, what: str) -> int:
        """A virtual register holding a read-only 512-word vector (deduplicated)."""
        words = np.ascontiguousarray(words, dtype=np.uint64)
        key = words.tobytes()
        v = self.rom_vregs.get(key)
        if v is None:
            address = self.vdm_alloc(VECTOR_LENGTH)
            self.rom.append(RomSegment("vdm", address, words, what))
            v = self.vreg()
            self.homes[v] = address
            self.rom_vregs[key] = v
        return v

    def scalar(self, value: int) -> int:
        """A scalar virtual register holding `value` (deduplicated, homed in the SDM)."""
        v = self.scalar_vregs.get(int(value))
        if v is None:
            v = self.vreg(RegFile.SCALAR)
            self.homes[v] = self.sdm_word(value)
            self.scalar_vregs[int(value)] = v
        return v

    def memory_view(self, address: int, mode: Mode = Mode.CONTIGUOUS, value: int = 0) -> int:
        """A virtual register whose value is the vector at `address` read in `mode`."""
        v = self.vreg()
        self.homes[v] = address if mode is Mode.CONTIGUOUS else (address, int(mode), value)
        return v

    # -- instructions ------------------------------------------------------------------

    def emit(self, op: Op, dst: tuple[int, ...], src: tuple[int, ...], fields: tuple[int, ...] = ()) -> None:
        self.code.append(Instr(op, dst, src, fields, self.origin))

    def op(self, op: Op, src: tuple[int, ...], mod: int) -> int:
        d = self.vreg()
        self.emit(op, (d,), src, (mod,))
        return d

    def shuffle(self, op: Op, a: int, b: int) -> int:
        d = self.vreg()
        self.emit(op, (d,), (a, b))
        return d

    def store(self, v: int, address: int, mode: Mode = Mode.CONTIGUOUS, value: int = 0) -> None:
        field, arf = split_address(address)
        self.emit(Op.VSTORE, (), (v,), (field, int(mode), value, arf))


def _lift_foreign(e: _Emitter, chunks: list[int], p_index: int, m_index: int) -> list[int]:
    """The centered lift of residues mod p (modulus register p_index) read mod m."""
    moduli = e.limb.moduli
    p, m = moduli[p_index], moduli[m_index]
    h = (p - 1) // 2
    hp, hm = e.scalar(h), e.scalar(h % m)
    return [e.op(Op.VSUBS, (e.op(Op.VADDS, (c, hp), p_index), hm), m_index) for c in chunks]


def _groups(V: int, logn: int, depth: int, inverse: bool):
    """The NTT's butterflies in emission order: chunks of `depth` stages, and within a
    chunk one group of 2^depth vectors at a time, carried through all the chunk's stages
    (the paper's "rectangles", §V), so a group stays in registers. Yields
    ``(chunk stages, [(stage, pair indices j)...], first vector set, last vector set)``.

    Forward stage: pair j < V/2 reads vectors j and j + V/2 and writes 2j and 2j + 1, so
    a set varying in its top bits keeps its pairs for that many stages; the inverse reads
    2j and 2j + 1 and writes j and j + V/2, so the set varies in its bottom bits."""
    v = V.bit_length() - 1
    stages = list(reversed(range(logn))) if inverse else list(range(logn))
    d = max(1, min(depth, v))
    for k0 in range(0, logn, d):
        chunk = stages[k0:k0 + d]
        for c in range(V >> d):
            first = sorted(((c << d) | t) if inverse else ((t << (v - d)) | c) for t in range(1 << d))
            cur = first
            plan = []
            for st in chunk:
                if inverse:
                    pairs = sorted(k // 2 for k in cur if k % 2 == 0)
                    cur = sorted([*pairs, *(j + V // 2 for j in pairs)])
                else:
                    pairs = [j for j in cur if j < V // 2]
                    cur = sorted(2 * j + b for j in pairs for b in (0, 1))
                plan.append((st, pairs))
            yield chunk, plan, first, cur


GROUP_SHARE = 2
"""A group of vectors carried through several NTT stages fills at most 1/GROUP_SHARE of
the vector registers (the rest hold twiddles, butterfly results and the next group)."""


def _depth(e: _Emitter) -> int:
    """Stages a group goes through in registers: as few chunks of stages as groups of at
    most registers / GROUP_SHARE vectors allow, then chunks of equal depth."""
    most = max(1, (e.machine.register_file("vector").count // GROUP_SHARE).bit_length() - 1)
    logn = stage_count(e.N)
    chunks = -(-logn // most)
    return -(-logn // chunks)


def _ntt(e: _Emitter, x: list[int], mod: int, out_address: int | None) -> list[int] | None:
    """Forward NTT of the vectors `x`; stored STRIDED at `out_address` when given
    (returns None), else returned as vectors."""
    N, V, q = e.N, e.V, e.limb.moduli[mod]
    tw = stage_twiddles(N, q, False)
    logn = stage_count(N)
    to_memory = out_address is not None
    current, nxt_chunk, chunk_start = list(x), [-1] * V, 0
    for chunk, plan, first, last_set in _groups(V, logn, _depth(e), inverse=False):
        if chunk[0] != chunk_start:  # a new chunk of stages reads what the last one wrote
            current, nxt_chunk, chunk_start = nxt_chunk, [-1] * V, chunk[0]
        local = {i: current[i] for i in first}
        for s, pairs in plan:
            nxt: dict[int, int] = {}
            pending: list[tuple[int, int, int]] = []
            for j in pairs:
                w = e.rom_vector(tw[s, j * VECTOR_LENGTH:(j + 1) * VECTOR_LENGTH], f"ntt twiddles q{mod} stage {s}")
                a, b = e.vreg(), e.vreg()
                e.emit(Op.BFLY_CT, (a, b), (local[j], local[j + V // 2], w), (mod,))
                if s == logn - 1 and to_memory:
                    e.store(a, out_address + 2 * VECTOR_LENGTH * j, Mode.STRIDED, 1)
                    e.store(b, out_address + 2 * VECTOR_LENGTH * j + 1, Mode.STRIDED, 1)
                    continue
                pending.append((j, a, b))
                while len(pending) > SHUFFLE_LAG or (pending and j == pairs[-1]):
                    pj, pa, pb = pending.pop(0)
                    nxt[2 * pj] = e.shuffle(Op.UNPKLO, pa, pb)
                    nxt[2 * pj + 1] = e.shuffle(Op.UNPKHI, pa, pb)
            local = nxt
        for i in last_set:
            nxt_chunk[i] = local.get(i, -1)
    return None if to_memory else nxt_chunk


def _intt(e: _Emitter, y: list[int] | None, src_address: int | None, mod: int) -> list[int]:
    """Inverse NTT of the vectors `y`, or of the rvec at `src_address` (the first stage's
    un-shuffle folded into STRIDED loads)."""
    N, V, q = e.N, e.V, e.limb.moduli[mod]
    tw = stage_twiddles(N, q, True)
    logn = stage_count(N)
    current, nxt_chunk, chunk_start = (list(y) if y is not None else [-1] * V), [-1] * V, logn - 1
    for chunk, plan, first, last_set in _groups(V, logn, _depth(e), inverse=True):
        if chunk[0] != chunk_start:
            current, nxt_chunk, chunk_start = nxt_chunk, [-1] * V, chunk[0]
        local = {i: current[i] for i in first}
        for s, pairs in plan:
            nxt: dict[int, int] = {}
            for j in pairs:
                if s == logn - 1 and y is None:
                    a = e.memory_view(src_address + 2 * VECTOR_LENGTH * j, Mode.STRIDED, 1)
                    b = e.memory_view(src_address + 2 * VECTOR_LENGTH * j + 1, Mode.STRIDED, 1)
                else:
                    a = e.shuffle(Op.PKLO, local[2 * j], local[2 * j + 1])
                    b = e.shuffle(Op.PKHI, local[2 * j], local[2 * j + 1])
                w = e.rom_vector(tw[s, j * VECTOR_LENGTH:(j + 1) * VECTOR_LENGTH], f"intt twiddles q{mod} stage {s}")
                lo, hi = e.vreg(), e.vreg()
                e.emit(Op.BFLY_GS, (lo, hi), (a, b, w), (mod,))
                nxt[j], nxt[j + V // 2] = lo, hi
            local = nxt
        for i in last_set:
            nxt_chunk[i] = local[i]
    ninv = e.scalar(n_inverse(N, q))
    return [e.op(Op.VMULS, (c, ninv), mod) for c in nxt_chunk]


def select(lowered: LoweredProgram, machine: IsaMachine) -> Selected:
    """B512 code over virtual registers for `lowered` (the table above). Raises
    `TargetError` when the program needs more moduli than modulus registers, or more
    scalar or vector data memory than the machine has."""
    limb = lowered.limb
    e = _Emitter(lowered, machine)
    N, V = e.N, e.V
    if len(limb.moduli) > machine.register_file("modulus").count:
        raise TargetError(
            f"the program uses {len(limb.moduli)} moduli but {machine.name} has "
            f"{machine.register_file('modulus').count} modulus registers; use fewer levels or primes"
        )
    vdm_words = machine.memory_spec("vdm").words
    regions = -(-vdm_words >> ADDRESS_BITS) or 1
    if regions > machine.register_file("address").count:
        raise TargetError(
            f"{machine.name}: {vdm_words:,} words of VDM need {regions} address registers (one per 2^20 words), "
            f"but [registers.address] has {machine.register_file('address').count}"
        )
    for k in range(regions):
        e.emit(Op.ALOAD, (), (), (e.sdm_word(k << ADDRESS_BITS), k))
    for i, q in enumerate(limb.moduli):
        e.emit(Op.MLOAD, (), (), (e.sdm_word(q), i))

    cls = limb.rvec_class
    address: dict[int, int] = {}
    for r in np.flatnonzero(IS_LOADED[cls] | (cls == RVecClass.OUTPUT)).tolist():
        address[r] = e.vdm_alloc(N)
    chunks: dict[int, list[int]] = {}
    for r in np.flatnonzero(IS_LOADED[cls]).tolist():
        chunks[r] = [e.memory_view(address[r] + VECTOR_LENGTH * c) for c in range(V)]
    staged: dict[int, int] = {}
    last_use = limb.last_use()

    ops, dsts, src0s, src1s, mods, imms = (limb.op.tolist(), limb.dst.tolist(), limb.src0.tolist(),
                                           limb.src1.tolist(), limb.mod.tolist(), limb.imm.tolist())
    rvec_mod = limb.rvec_mod.tolist()
    for i in range(len(limb)):
        e.origin = i
        op, dst, s0, s1, mod, imm = LimbOp(ops[i]), dsts[i], src0s[i], src1s[i], mods[i], imms[i]
        m = limb.moduli[mod]
        out_addr = address.get(dst) if cls[dst] == RVecClass.OUTPUT else None
        a = chunks.get(s0)
        result: list[int] | None
        if op in (LimbOp.ADD, LimbOp.SUB, LimbOp.MUL):
            vop = {LimbOp.ADD: Op.VADD, LimbOp.SUB: Op.VSUB, LimbOp.MUL: Op.VMUL}[op]
            result = [e.op(vop, (x, y), mod) for x, y in zip(a, chunks[s1])]
        elif op in (LimbOp.MUL_CONST, LimbOp.ADD_CONST):
            c = e.scalar(int(limb.constants[imm]))
            result = [e.op(Op.VMULS if op is LimbOp.MUL_CONST else Op.VADDS, (x, c), mod) for x in a]
        elif op is LimbOp.NEG:
            c = e.scalar(m - 1)
            result = [e.op(Op.VMULS, (x, c), mod) for x in a]
        elif op is LimbOp.BCONV:
            pi = rvec_mod[s0]
            C = int(limb.constants[imm])
            if limb.moduli[pi] == m:
                result = [e.op(Op.VMULS, (x, e.scalar(C)), mod) for x in a]
            else:
                p = limb.moduli[pi]
                h = (p - 1) // 2
                hp, cm, hc = e.scalar(h), e.scalar(C), e.scalar(h % m * C % m)
                result = [e.op(Op.VSUBS, (e.op(Op.VMULS, (e.op(Op.VADDS, (x, hp), pi), cm), mod), hc), mod)
                          for x in a]
        elif op is LimbOp.NTT:
            x = a if rvec_mod[s0] == mod else _lift_foreign(e, a, rvec_mod[s0], mod)
            result = _ntt(e, x, mod, out_addr)
        elif op is LimbOp.INTT:
            result = _intt(e, None, address[s0], mod) if IS_LOADED[cls[s0]] else _intt(e, a, None, mod)
        elif op is LimbOp.AUT:
            base = address.get(s0, staged.get(s0))
            if base is None:
                base = staged[s0] = e.vdm_alloc(N)
                for c, v in enumerate(a):
                    e.store(v, base + VECTOR_LENGTH * c)
            perm = automorphism_ntt_permutation(N, imm).astype(np.uint64)
            field, arf = split_address(base)
            result = []
            for c in range(V):
                idx = e.rom_vector(perm[c * VECTOR_LENGTH:(c + 1) * VECTOR_LENGTH], f"galois {imm} index vector")
                d = e.vreg()
                e.emit(Op.VLOAD, (d,), (idx,), (field, int(Mode.INDEXED), 0, arf))
                result.append(d)
        else:  # pragma: no cover - every LimbOp is listed above
            raise AssertionError(op)
        if result is None:  # stored by the NTT's last stage: later readers load it back
            result = [e.memory_view(out_addr + VECTOR_LENGTH * c) for c in range(V)]
        elif out_addr is not None:
            if out_addr is not None:
                for c, v in enumerate(result):
                    e.store(v, out_addr + VECTOR_LENGTH * c)
        chunks[dst] = result
        for s in (s0, s1):
            if s >= 0 and last_use[s] == i and not IS_LOADED[cls[s]]:
                chunks.pop(s, None)  # the Python lists only; the allocator frees registers

    sdm_words = machine.memory_spec("sdm").words
    if len(e.sdm_rom) > sdm_words:
        raise TargetError(
            f"the program needs {len(e.sdm_rom)} scalar words (address bases, moduli, constants) but "
            f"{machine.name}'s scalar data memory holds {sdm_words}; give [memories.sdm] more words"
        )
    rom = (*e.rom, RomSegment("sdm", 0, np.array(e.sdm_rom, dtype=np.uint64), "address bases, moduli, scalars"))
    layout = MemoryLayout("vdm", address, rom, words_used={"vdm": e.vdm_next, "sdm": len(e.sdm_rom)})
    return Selected(lowered, tuple(e.code), np.array(e.reg_class, dtype=np.int8), e.homes, layout)
