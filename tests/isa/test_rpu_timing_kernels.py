"""The compiled RPU timing loops (`fhec.isa.rpu.timing_kernels`) against the model written
out in plain Python: the same issue cycles, totals, stalls and schedules, on random code
and on a compiled program's code."""

from __future__ import annotations

import bisect

from hypothesis import given, settings, strategies as st

import fhec
from fhec.backends.target import load_target
from fhec.isa.code import Instr
from fhec.isa.rpu import timing
from fhec.isa.rpu.isa import OPERANDS, Mode, Op

RPU = load_target("rpu")


# -- the reference: the busyboard model and the list scheduler one instruction at a time --


class _Reference:
    def __init__(self, costs):
        self.costs, self.busy, self.last_issue, self.end, self.stall = costs, {}, -1, 0, 0
        self.free = dict.fromkeys(timing.PIPES, 0)
        self.busy_cycles = dict.fromkeys(timing.PIPES, 0)

    def issue_at(self, regs):
        dst, src = regs
        return max(self.last_issue + 1, max((self.busy.get(r, 0) for r in (*dst, *src)), default=0))

    def commit(self, ins, regs):
        t = self.issue_at(regs)
        self.stall += t - (self.last_issue + 1)
        pipe, occ, lat = self.costs.of(ins)
        start = max(t + 1, self.free[pipe])
        self.free[pipe] = start + occ
        self.busy_cycles[pipe] += occ
        for r in regs[1]:
            self.busy[r] = max(self.busy.get(r, 0), start + occ)
        for r in regs[0]:
            self.busy[r] = max(self.busy.get(r, 0), start + occ + lat)
        self.end = max(self.end, start + occ + lat)
        self.last_issue = t
        return t


def _reference_dependences(code, N):
    preds = [[] for _ in code]
    writer, readers, mem_writer, mem_readers, barrier = {}, {}, {}, {}, -1
    for i, ins in enumerate(code):
        p = preds[i]
        if barrier >= 0:
            p.append(barrier)
        if ins.op in (Op.ALOAD, Op.MLOAD):
            p.extend(range(barrier + 1, i))
            barrier = i
            continue
        dst, src = timing._regs(ins)
        p.extend(writer[r] for r in src if r in writer)
        for r in dst:
            if r in writer:
                p.append(writer[r])
            p.extend(readers.get(r, ()))
        for r in src:
            readers.setdefault(r, []).append(i)
        for r in dst:
            writer[r], readers[r] = i, []
        fp = timing._footprint(ins, N)
        if fp is not None:
            for b in range(fp[0] // 512, (fp[1] - 1) // 512 + 1):
                if b in mem_writer:
                    p.append(mem_writer[b])
                if ins.op == Op.VSTORE:
                    p.extend(mem_readers.get(b, ()))
                    mem_writer[b], mem_readers[b] = i, []
                else:
                    mem_readers.setdefault(b, []).append(i)
    return [sorted(set(x)) for x in preds]


def _reference_schedule(code, N, window):
    preds = _reference_dependences(code, N)
    waiting = [len(p) for p in preds]
    succs = [[] for _ in code]
    for i, p in enumerate(preds):
        for j in p:
            succs[j].append(i)
    regs = [timing._regs(ins) for ins in code]
    st_ = _Reference(timing.Costs(RPU))
    ready, done, oldest, order = [i for i in range(len(code)) if waiting[i] == 0], [False] * len(code), 0, []
    while len(order) < len(code):
        while done[oldest]:
            oldest += 1
        best, best_t = -1, None
        for i in ready:
            if i >= oldest + window:
                break
            t = st_.issue_at(regs[i])
            if best_t is None or t < best_t:
                best, best_t = i, t
                if t <= st_.last_issue + 1:
                    break
        del ready[bisect.bisect_left(ready, best)]
        st_.commit(code[best], regs[best])
        done[best] = True
        order.append(best)
        for s in succs[best]:
            waiting[s] -= 1
            if waiting[s] == 0:
                bisect.insort(ready, s)
    return tuple(code[i] for i in order)


def _reference_time(code):
    st_ = _Reference(timing.Costs(RPU))
    issue = [st_.commit(ins, timing._regs(ins)) for ins in code]
    return issue, st_.end, st_.busy_cycles, {"busyboard": st_.stall}


# -- random code over few registers and addresses, so that dependences abound ---------------


@st.composite
def _instr(draw):
    op = draw(st.sampled_from(list(Op)))
    reg = st.integers(0, 5)
    dst_k, src_k, names = OPERANDS[op]
    dst, src = tuple(draw(reg) for _ in dst_k), tuple(draw(reg) for _ in src_k)
    if op in (Op.VLOAD, Op.VSTORE):
        mode = draw(st.sampled_from(list(Mode) if op is Op.VLOAD else [m for m in Mode if m is not Mode.INDEXED]))
        if mode is Mode.INDEXED:
            src = (draw(reg),)
        value = 0 if mode is Mode.INDEXED else draw(st.integers(0, 3))
        fields = (draw(st.integers(0, 4096)), int(mode), value, draw(st.integers(0, 1)))
    elif op is Op.SLOAD:
        fields = (draw(st.integers(0, 4096)),)
    elif op in (Op.MLOAD, Op.ALOAD):
        fields = (draw(st.integers(0, 4096)), draw(reg))
    else:
        fields = tuple(draw(reg) for _ in names)
    return Instr(op, dst, src, fields)


@settings(max_examples=60, deadline=None)
@given(st.lists(_instr(), max_size=80), st.integers(1, 12))
def test_kernels_equal_the_plain_model_on_random_code(code, window):
    code = tuple(code)
    issue, end, busy, stalls = timing.time_code(code, RPU)
    r_issue, r_end, r_busy, r_stalls = _reference_time(code)
    assert issue.tolist() == r_issue and end == r_end and busy == r_busy and stalls == r_stalls
    assert timing.schedule(code, RPU, 1024, window) == _reference_schedule(code, 1024, window)


def test_kernels_equal_the_plain_model_on_a_compiled_program():
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=40, special_primes=1, security=None)
    p = fhec.Program("t", params)
    a, b = p.input("a"), p.input("b")
    p.output("y", (a * b).rotate(3) + a)
    allocated = fhec.compile(p, RPU).code.timed
    code = allocated.code
    for window in (1, timing.WINDOW):
        assert timing.schedule(code, RPU, 1024, window) == _reference_schedule(code, 1024, window)
    issue, end, busy, stalls = timing.time_code(code, RPU)
    r_issue, r_end, r_busy, r_stalls = _reference_time(code)
    assert issue.tolist() == r_issue and (end, busy, stalls) == (r_end, r_busy, r_stalls)
