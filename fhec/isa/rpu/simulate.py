"""The B512 functional simulator: executes machine words on a numpy model of the RPU.

State: 64 vector registers of 512 words, 64 scalar, modulus and address registers, the
vector data memory (VDM) and the scalar data memory (SDM), all 64-bit words. Each word is
decoded by `fhec.isa.rpu.isa.decode_word` (the simulator never sees the compiler's
instruction objects) and executed with the semantics documented there, in program
order: the timing model (`fhec.isa.rpu.timing`) and the scheduler guarantee that the
pipelined machine computes the same values as this sequential reading.

Modular arithmetic uses `fhec.ring.modarith` (moduli below 2^62); every compute operand
is first reduced mod the instruction's modulus, so a word that is a residue of another
prime (the foreign reads of BCONV and NTT) is read as the B512 semantics say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from fhec.errors import InternalError
from fhec.ir.limb_ops import RVecClass
from fhec.isa.code import PROGRESS_EVERY, Encoded, MemoryLayout
from fhec.isa.rpu.isa import VECTOR_LENGTH, Mode, Op, decode_word
from fhec.ring import modarith

__all__ = ["Machine", "run", "load_image"]

_E = np.arange(VECTOR_LENGTH, dtype=np.int64)
_HALF = VECTOR_LENGTH // 2


class Machine:
    """The architectural state."""

    def __init__(self, vdm_words: int, sdm_words: int, registers: int = 64) -> None:
        self.vr = np.zeros((registers, VECTOR_LENGTH), dtype=np.uint64)
        self.sr = np.zeros(registers, dtype=np.uint64)
        self.mr = np.zeros(registers, dtype=np.uint64)
        self.ar = np.zeros(registers, dtype=np.int64)
        self.vdm = np.zeros(vdm_words, dtype=np.uint64)
        self.sdm = np.zeros(sdm_words, dtype=np.uint64)

    def addresses(self, address: int, mode: int, value: int, arf: int, index_reg: int) -> np.ndarray:
        base = int(self.ar[arf]) + address
        if mode == Mode.CONTIGUOUS:
            return base + _E
        if mode == Mode.STRIDED:
            return base + (_E << value)
        if mode == Mode.SKIP:
            return base + ((_E >> value) << (value + 1)) + (_E & ((1 << value) - 1))
        if mode == Mode.REPEATED:
            return base + (_E >> value)
        return base + self.vr[index_reg].astype(np.int64)


def _reduced(x: np.ndarray, q: int) -> np.ndarray:
    return x if int(x.max()) < q else modarith.reduce_mod(x, q)


def _step(m: Machine, word: int) -> None:
    ins = decode_word(word)
    op = ins.op
    if op is Op.VLOAD or op is Op.VSTORE:
        address, mode, value, arf = ins.fields
        addr = m.addresses(address, mode, value, arf, ins.src[0] if (op is Op.VLOAD and ins.src) else -1)
        if addr.min() < 0 or addr.max() >= len(m.vdm):
            raise InternalError(f"B512 simulator: {op.name} outside the data memory ({addr.min()}..{addr.max()})")
        if op is Op.VLOAD:
            m.vr[ins.dst[0]] = m.vdm[addr]
        else:
            m.vdm[addr] = m.vr[ins.src[0]]
        return
    if op is Op.SLOAD:
        m.sr[ins.dst[0]] = m.sdm[ins.fields[0]]
        return
    if op is Op.MLOAD:
        m.mr[ins.fields[1]] = m.sdm[ins.fields[0]]
        return
    if op is Op.ALOAD:
        m.ar[ins.fields[1]] = int(m.sdm[ins.fields[0]])
        return
    if op in _SHUFFLES:
        a, b = m.vr[ins.src[0]], m.vr[ins.src[1]]
        m.vr[ins.dst[0]] = _SHUFFLES[op](a, b)
        return
    q = int(m.mr[ins.fields[0]])
    if q < 2:
        raise InternalError(f"B512 simulator: modulus register m{ins.fields[0]} holds {q}")
    vs = _reduced(m.vr[ins.src[0]], q)
    if op in (Op.VADDS, Op.VSUBS, Op.VMULS):
        t = np.full(VECTOR_LENGTH, int(m.sr[ins.src[1]]) % q, dtype=np.uint64)
    else:
        t = _reduced(m.vr[ins.src[1]], q)
    if op is Op.BFLY_CT:
        w = _reduced(m.vr[ins.src[2]], q)
        tw = modarith.mul_mod(t, w, q)
        m.vr[ins.dst[0]], m.vr[ins.dst[1]] = modarith.add_mod(vs, tw, q), modarith.sub_mod(vs, tw, q)
        return
    if op is Op.BFLY_GS:
        w = _reduced(m.vr[ins.src[2]], q)
        lo, diff = modarith.add_mod(vs, t, q), modarith.sub_mod(vs, t, q)
        m.vr[ins.dst[0]], m.vr[ins.dst[1]] = lo, modarith.mul_mod(diff, w, q)
        return
    m.vr[ins.dst[0]] = _ARITH[op](vs, t, q)


def _unpack(lo_half: bool):
    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        sl = slice(0, _HALF) if lo_half else slice(_HALF, VECTOR_LENGTH)
        out = np.empty(VECTOR_LENGTH, dtype=np.uint64)
        out[0::2], out[1::2] = a[sl], b[sl]
        return out
    return f


def _pack(start: int):
    return lambda a, b: np.concatenate([a[start::2], b[start::2]])


_SHUFFLES = {Op.UNPKLO: _unpack(True), Op.UNPKHI: _unpack(False), Op.PKLO: _pack(0), Op.PKHI: _pack(1)}
_ARITH = {
    Op.VADD: modarith.add_mod, Op.VADDS: modarith.add_mod,
    Op.VSUB: modarith.sub_mod, Op.VSUBS: modarith.sub_mod,
    Op.VMUL: modarith.mul_mod, Op.VMULS: modarith.mul_mod,
}


def load_image(layout: MemoryLayout, loaded: Mapping[int, np.ndarray], N: int) -> Machine:
    """A machine whose memories hold the ROM and the loaded rvecs at their addresses."""
    m = Machine(max(layout.words_used.get("vdm", 0), 1), max(layout.words_used.get("sdm", 0), 1))
    for seg in layout.rom:
        mem = m.vdm if seg.memory == "vdm" else m.sdm
        mem[seg.address:seg.address + len(seg.words)] = seg.words
    for r, words in loaded.items():
        a = layout.rvec_address[int(r)]
        m.vdm[a:a + N] = np.asarray(words, dtype=np.uint64)
    return m


def run(encoded: Encoded, loaded: Mapping[int, np.ndarray],
        progress: Callable[[int], None] | None = None) -> dict[int, np.ndarray]:
    """Execute `encoded.words` on the image of `loaded` (every INPUT, KSH and CONST rvec's
    words); return every OUTPUT rvec's words read from the data memory. `progress`, when
    given, is called with the words executed every `PROGRESS_EVERY` words and at the end."""
    limb = encoded.lowered.limb
    N = limb.N
    m = load_image(encoded.layout, loaded, N)
    words = encoded.words.tolist()
    for k, word in enumerate(words):
        if progress is not None and k % PROGRESS_EVERY == 0:
            progress(k)
        _step(m, word)
    if progress is not None:
        progress(len(words))
    out = {}
    for r in limb.rvec_ids(RVecClass.OUTPUT).tolist():
        a = encoded.layout.rvec_address[r]
        out[r] = m.vdm[a:a + N].copy()
    return out


