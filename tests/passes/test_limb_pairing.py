"""Pairing independent same-hint key switches digit by digit (fhec/passes/limb_pairing.py)
and its use by the pipeline (kept only where it schedules faster)."""

from __future__ import annotations

import numpy as np

import fhec
from fhec.backends.target import load_target
from fhec.ir.he import HeOp
from fhec.passes.cycle import schedule_cycles
from fhec.passes.limb_pairing import _loops, pair_key_switches
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import check_streams

PARAMS = fhec.BGVParams(N=2**10, levels=4, plain_modulus=12289, security=None)
COLUMNS = ("op", "dst", "src0", "src1", "mod", "imm", "he_node")


def _lowered(build):
    p = fhec.Program("pairs", PARAMS)
    build(p)
    return fhec.lower(p, "hybrid")


def _squares(p):
    """Two independent squarings: two relinearizations with one hint."""
    x, y = p.input("x"), p.input("y")
    p.output("a", x * x)
    p.output("b", y * y)


def test_two_independent_squarings_walk_their_digits_together_and_only_priorities_change():
    lowered = _lowered(_squares)
    limb = lowered.limb
    paired = pair_key_switches(limb, lowered.he)
    assert paired is not limb
    for col in COLUMNS:
        assert np.array_equal(getattr(paired, col), getattr(limb, col)), col
    assert sorted(paired.prio.tolist()) == sorted(limb.prio.tolist())
    switches, loops = _loops(paired, lowered.he)
    assert len(switches) == 2 and len(loops[switches[0]]) == len(loops[switches[1]])
    # in the new priority order the two loops alternate, instruction by instruction
    both = np.concatenate([loops[s] for s in switches])
    owner = np.concatenate([np.full(len(loops[s]), k) for k, s in enumerate(switches)])
    seq = owner[np.argsort(paired.prio[both], kind="stable")]
    assert np.array_equal(seq, np.tile([0, 1], len(seq) // 2))
    # the schedulers take any priorities: the paired program replays without a hazard
    target = load_target("f1")
    streams = schedule_cycles(schedule_offchip(paired, target), target)
    check_streams(streams, target, paired)


def test_dependent_or_differently_keyed_key_switches_are_not_paired():
    def chain(p):  # rot(rot(x, 1), 1): one key, one level, but the second reads the first
        x = p.input("x")
        p.output("y", x.rotate(1).rotate(1))

    def keys(p):  # two independent rotations by different keys
        x = p.input("x")
        p.output("y", x.rotate(1) + x.rotate(2))

    for build in (chain, keys):
        lowered = _lowered(build)
        assert pair_key_switches(lowered.limb, lowered.he) is lowered.limb, build.__name__


def test_a_paired_schedule_computes_every_limb_as_the_evaluator():
    """The DB lookup's small program, its key switches paired and scheduled: the run of
    those streams equals the evaluator on every limb (`run(check=True)`) and finds the
    capital. (The pipeline keeps pairing only where it schedules faster: on the paper-size
    lookup, docs/suites.md; here everything fits on chip and it does not.)"""
    import dataclasses

    from fhec.examples import db_lookup as dbl

    p = dbl.db_lookup(entries=3, N=2**10, plain_modulus=12289, levels=16, security=None)
    c = fhec.compile(p, "f1")
    paired = pair_key_switches(c.lowered.limb, c.lowered.he)
    assert paired is not c.lowered.limb
    data = schedule_offchip(paired, c.target)
    streams = schedule_cycles(data, c.target)
    check_streams(streams, c.target, paired)
    forced = dataclasses.replace(c, lowered=dataclasses.replace(c.lowered, limb=paired), data_schedule=data,
                                 streams=streams)
    out = forced.run(dbl.lookup_inputs(p, "Italy", (("Iceland", "Reykjavík"), ("Ireland", "Dublin"), ("Italy", "Rome"))),
                     seed=0, check=True)["value"]
    assert dbl.decode(out) == "Rome"


def test_small_hints_and_few_pairs_are_left_alone():
    """Pairing is for hints large against the scratchpad, and its second schedule only for
    programs where pairs are a real share: below either threshold the program comes back
    unchanged (the caller then schedules it once)."""
    from fhec.passes.limb_pairing import _hint_limbs

    lowered = _lowered(_squares)
    limb = lowered.limb
    switches, loops = _loops(limb, lowered.he)
    hint = _hint_limbs(limb, loops[switches[0]])
    assert hint > 0 and hint == _hint_limbs(limb, loops[switches[1]])
    assert pair_key_switches(limb, lowered.he, min_hint_limbs=hint) is not limb
    assert pair_key_switches(limb, lowered.he, min_hint_limbs=hint + 1) is limb
    share = sum(len(loops[s]) for s in switches) / len(limb)
    assert pair_key_switches(limb, lowered.he, min_share=share) is not limb
    assert pair_key_switches(limb, lowered.he, min_share=share + 0.01) is limb


def test_a_program_without_key_switches_comes_back_unchanged():
    lowered = _lowered(lambda p: p.output("y", p.input("x") + p.input("z")))
    assert pair_key_switches(lowered.limb, lowered.he) is lowered.limb


def _climb(monkeypatch, paired_cycles, prefetch_reserve=None):
    """The reserves the pipeline schedules the paired `_squares` at, and the one it keeps,
    when the paired schedule at reserve r takes `paired_cycles(r)` cycles (the unpaired
    ones always slower). Pairing is forced (the small program's hint is under the
    pipeline's threshold) and the cycle counts are stand-ins: this pins down the choice."""
    import dataclasses

    import fhec.passes.cycle as cycle
    import fhec.passes.limb_pairing as pairing
    import fhec.passes.offchip as offchip
    from fhec.pipeline import _schedule_cycles, options_for, run_prefix

    p = fhec.Program("pairs", PARAMS)
    _squares(p)
    o = options_for("tiny", keyswitch="hybrid", prefetch_reserve=prefetch_reserve)  # 16 RVecs: spills at every reserve
    schedules = run_prefix("schedule_offchip", p, o, verify=False)["schedule_offchip"]
    real_offchip, real_cycles, real_pair = offchip.schedule_offchip, cycle.schedule_cycles, pairing.pair_key_switches
    asked = []

    def offchip_spy(program, target, prefetch_reserve=0.0, **kw):
        asked.append(prefetch_reserve)
        return real_offchip(program, target, prefetch_reserve=prefetch_reserve, **kw)

    def cycles_stub(data, target):
        streams = real_cycles(data, target)
        fake = paired_cycles(asked[-1]) if data.program is not schedules.lowered.limb else 10**6
        return dataclasses.replace(streams, total_cycles=fake)

    monkeypatch.setattr(offchip, "schedule_offchip", offchip_spy)
    monkeypatch.setattr(cycle, "schedule_cycles", cycles_stub)
    monkeypatch.setattr(pairing, "pair_key_switches", lambda limb, he, **kw: real_pair(limb, he))
    scheduled = _schedule_cycles(schedules, o)
    assert scheduled.lowered.limb is not schedules.lowered.limb  # the paired program was kept
    return asked, scheduled.prefetch_reserve


def test_paired_schedules_climb_to_larger_reserves_only_while_the_largest_is_fastest(monkeypatch):
    steps = [k / 8 for k in range(8)]
    asked, kept = _climb(monkeypatch, lambda r: 1000 - int(800 * r))  # larger is always faster
    assert asked == steps and kept == 7 / 8  # up to the last reserve below 1
    asked, kept = _climb(monkeypatch, lambda r: 1000 + int(800 * abs(r - 0.375)))
    assert asked == steps[:5] and kept == 0.375  # 1/2 was slower than 3/8: the climb stops
    asked, kept = _climb(monkeypatch, lambda r: 1000 + int(800 * abs(r - 0.125)))
    assert asked == steps[:3] and kept == 0.125  # the default reserves only
    asked, kept = _climb(monkeypatch, lambda r: 1000 - int(800 * r), prefetch_reserve=0.25)
    assert asked == [0.25] and kept == 0.25  # a reserve the caller chose is not second-guessed
