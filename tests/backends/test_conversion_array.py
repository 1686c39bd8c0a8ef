"""Osiris's BConv array as one array of `rows` input rows (§IV-C): a conversion of fewer
input limbs takes as long as one of `rows`, so its terms are timed per conversion
(`fhec.ir.limb_conversions`, `Target.conversion_term_cycles`), by the scheduler, the
checker, the bounds and the report alike."""

import numpy as np
import pytest

import fhec
from fhec.backends.streams import instruction_occupancy, op_timing
from fhec.backends.target import UnitKind, load_target
from fhec.ir.limb import LimbOp, RVecClass
from fhec.ir.limb_conversions import conversion_terms
from fhec.sim.check import find_hazards

OSIRIS = load_target("osiris")
TINY = load_target("osiris-tiny")


def _program():
    # a product with relinearization (mod-up and mod-down) and a rescale (one-limb conversions)
    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, special_primes=2, security=None)
    p = fhec.Program("conv", params)
    x, y = p.input("x"), p.input("y")
    p.output("z", (x * y).rotate(3) + x)
    return p


def _without_rows(target):
    bconv = next(u for u in target.cluster.units if u.kind == UnitKind.BCONV)
    units = tuple(u.model_copy(update={"rows": None}) if u is bconv else u for u in target.cluster.units)
    return target.model_copy(update={"cluster": target.cluster.model_copy(update={"units": units})})


def test_every_term_knows_its_conversion():
    limb = fhec.compile(_program(), TINY).lowered.limb
    width, index = conversion_terms(limb)
    op = np.asarray(limb.op)
    terms = np.flatnonzero(op == LimbOp.BCONV)
    assert (width[op != LimbOp.BCONV] == 0).all()
    # a conversion of w terms numbers them 0..w-1: each width occurs a multiple of itself times
    # among the index-0 terms' conversions
    for w in np.unique(width[terms]).tolist():
        mine = terms[width[terms] == w]
        assert np.count_nonzero(index[mine] == 0) * w == len(mine)
        assert sorted(set(index[mine].tolist())) == list(range(w))
    # rescales divide by one prime, the mod-downs by the 2 special primes; mod-ups convert digits
    assert {1, 2} <= set(width[terms].tolist())
    # the plain ADD that joins a conversion's sum with anything that is not a term does not merge
    assert width[terms].max() <= 4


@pytest.mark.parametrize("width", range(1, 40))
def test_a_conversion_takes_whole_passes_of_the_array(width):
    N = 2**16
    cycles = OSIRIS.conversion_term_cycles(N, np.full(width, width), np.arange(width))
    assert cycles.sum() == -(-width // 16) * N // 512  # one output limb per N/p cycles and pass
    assert cycles.max() - cycles.min() <= 1
    flat = _without_rows(OSIRIS).conversion_term_cycles(N, np.full(width, width), np.arange(width))
    assert (flat == OSIRIS.occupancy_cycles(LimbOp.BCONV, N)).all()


def test_the_schedule_times_terms_by_their_conversion_and_the_checker_derives_the_same():
    c = fhec.compile(_program(), TINY)
    c.check()
    limb = c.lowered.limb
    occ = instruction_occupancy(TINY, limb)
    table = op_timing(TINY, limb.N).occupancy
    terms = np.asarray(limb.op) == LimbOp.BCONV
    assert (occ[terms] > table[LimbOp.BCONV]).any() and (occ[~terms] == table[np.asarray(limb.op)[~terms]]).all()
    s = c.streams
    fu = s.tag >= 0
    assert s.occupancy is not None
    bconv = np.flatnonzero(np.asarray(s.op) == LimbOp.BCONV)
    assert (s.occupancy[bconv] == occ[s.tag[bconv]]).all()
    # the report's array busy cycles and the compute bound count the same cycles
    assert c.bounds.per_kind["bconv"] * TINY.total_units(UnitKind.BCONV) == pytest.approx(occ[terms].sum())
    from fhec.sim.timing import unit_busy_cycles

    busy = unit_busy_cycles(s, TINY)
    array = [i for i, u in enumerate(s.units) if u.kind == "bconv"]
    assert busy[array].sum() == occ[terms].sum()
    # the same streams read as if every term took the table's cycles are not what the checker replays:
    # packing the array's entries at the table's occupancy is a unit-busy hazard
    unit = s.unit[bconv]
    order = bconv[np.lexsort((s.cycle[bconv], unit))]
    packed = np.asarray(s.cycle).copy()
    start = packed[order[0]]
    for k, e in enumerate(order):
        packed[e] = start + k * table[LimbOp.BCONV]
    import dataclasses
    early = dataclasses.replace(s, cycle=packed, occupancy=None)
    assert any(h.kind.value == "unit-busy" for h in find_hazards(early, TINY, limb))


def test_narrow_conversions_cost_the_array_more_than_their_terms():
    p = _program()
    with_rows = fhec.compile(p, TINY)
    without = fhec.compile(p, _without_rows(TINY))
    assert with_rows.bounds.per_kind["bconv"] > without.bounds.per_kind["bconv"]
    assert with_rows.report.cycles >= without.report.cycles


def test_stored_digits_of_a_plaintext_keep_the_per_term_rate():
    # OF-Limb's two-digit diagonals sum stored constants as BCONV terms (fhec's lowering);
    # Osiris generates diagonals on its MDC units (§V), not on the array
    params = fhec.CKKSParams(N=2**9, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("digits", params)
    x = p.input("x")
    p.output("y", x * np.full(params.slots, 100.0))  # 2^28 x 100 > q0/2: two stored digits
    limb = fhec.compile(p, TINY).lowered.limb
    op = np.asarray(limb.op)
    from_consts = (op == LimbOp.BCONV) & (np.asarray(limb.rvec_class)[np.maximum(limb.src0, 0)] == RVecClass.CONST)
    occ = instruction_occupancy(TINY, limb)
    assert from_consts.any()
    assert (occ[from_consts] == op_timing(TINY, limb.N).occupancy[LimbOp.BCONV]).all()


def _rows_on(target, kind, rows):
    data = target.model_dump()
    for u in data["cluster"]["units"]:
        if u["kind"] == kind:
            u["rows"] = rows(u)
    return data


@pytest.mark.parametrize("target, kind, rows, match", [
    # the data-path scheduler times every op by its kind's occupancy
    ("f1-datapath", "mul", lambda u: 4, "conversion array"),
    ("osiris-tiny", "aut", lambda u: 4, "rows describe"),  # rows are a BCONV array's
    ("osiris-tiny", "bconv", lambda u: u["throughput"] + 1, "exceeds the array's"),  # a row is a cell wide at least
])
def test_rows_are_refused_where_they_cannot_hold(target, kind, rows, match):
    t = load_target(target)
    with pytest.raises(Exception, match=match):
        type(t).model_validate(_rows_on(t, kind, rows))
