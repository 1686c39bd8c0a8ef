"""The osiris targets: their numbers against the paper, and limb interleaving as a
pipelining rule that the scheduler follows and the checker enforces."""

import numpy as np
import pytest

import fhec
from fhec.backends.streams import op_timing
from fhec.backends.target import UnitKind, list_targets, load_target
from fhec.ir.limb import LimbOp, RVecClass
from fhec.sim.check import find_hazards
from fhec.sim.check_timing import checker_timing

OSIRIS = load_target("osiris")


def _whole_limb(target):
    return target.model_copy(update={"pipelining": target.pipelining.model_copy(update={"mode": "whole-limb"})})


def test_osiris_is_listed_with_its_bandwidth_variant():
    names = [t.name for t in list_targets()]
    assert {"osiris", "osiris-2tb", "osiris-tiny"} <= set(names)
    assert load_target("osiris-2tb").memory.bandwidth_gb_s == 2 * OSIRIS.memory.bandwidth_gb_s


def test_numbers_against_the_paper():
    N = 2**16
    assert OSIRIS.word_bytes == 5 and OSIRIS.rvec_bytes(N) == 5 * N  # 40-bit words (§VI), packed
    assert OSIRIS.occupancy_cycles(LimbOp.NTT, N) == N // 512  # p = 512 (§IV-B)
    # a 16 x 512 array: one output limb of 16 input limbs every N/p cycles (§IV-C, §V)
    assert 16 * OSIRIS.occupancy_cycles(LimbOp.BCONV, N) == N // 512
    assert OSIRIS.total_units(UnitKind.NTT) == 2 and OSIRIS.total_units(UnitKind.BCONV) == 1
    assert OSIRIS.scratchpad.capacity_bytes == 184 * 2**20
    assert abs(OSIRIS.area_mm2 - 246.9) / 246.9 < 0.02  # Table IV (Table V's parts sum to 243.9)


def test_the_hadamard_rate_is_its_multipliers_of_one_role():
    # §IV-E: p columns of dnum cells (set III: dnum = 2), each cell 2 multipliers for KeyMult and 2
    # for diagonal products; one MUL stream of either role gets p x dnum x 2 products per cycle
    N, dnum = 2**16, 2
    mul = OSIRIS.unit_for(LimbOp.MUL)
    assert mul.throughput == 512 * dnum * 2 and OSIRIS.total_units(UnitKind.MUL) == 2
    assert OSIRIS.occupancy_cycles(LimbOp.MUL, N) == N // 512 // (dnum * 2)
    # Table IV: 32,256 modular multipliers, less the MDCs' (2 units x 15-16 stages x 256 butterfly
    # cells x 2) and the BConv array's (16 x 512 cells, +512 first-row scalers), leave the
    # Hadamard units' 2 roles x their rate
    hadamard = 2 * OSIRIS.total_units(UnitKind.MUL) * mul.throughput
    left = [32256 - 2 * stages * 256 * 2 - bconv for stages in (15, 16) for bconv in (8192, 8704)]
    assert min(left) <= hadamard <= max(left)


def test_interleaving_hides_the_whole_limb_buffering_in_both_derivations():
    N = 2**16
    for derive in (op_timing, checker_timing):
        inter = derive(OSIRIS, N).latency[LimbOp.INTT]
        whole = derive(_whole_limb(OSIRIS), N).latency[LimbOp.INTT]
        assert (inter, whole) == (32, 32 + N // 512)


def _program():
    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("ks", params)
    x, y = p.input("x"), p.input("y")
    p.output("z", (x * y).rotate(2) + x)
    return p


def test_an_interleaved_schedule_passes_the_checker_and_breaks_the_whole_limb_contract():
    target = load_target("osiris-tiny")
    c = fhec.compile(_program(), target)
    c.check()
    limb = c.lowered.limb
    assert find_hazards(c.streams, target, limb) == []
    # the same streams read MDC results a whole limb too early for a whole-limb machine
    hazards = find_hazards(c.streams, _whole_limb(target), limb)
    assert hazards and {h.kind.value for h in hazards} == {"read-before-ready"}


def test_interleaving_shortens_a_dependent_chain():
    p = _program()
    target = load_target("osiris-tiny")
    inter = fhec.compile(p, target).report
    whole = fhec.compile(p, _whole_limb(target)).report
    assert inter.dependency_bound_cycles < whole.dependency_bound_cycles


@pytest.mark.parametrize("name", ["osiris", "osiris-2tb", "osiris-tiny"])
def test_every_shipped_osiris_schedules_and_checks(name):
    c = fhec.compile(_program(), name)
    c.check()
    x, y = np.random.default_rng(0).uniform(-1, 1, (2, c.program.params.slots))
    from fhec.verify_run import run_compiled_checked

    run_compiled_checked(c, {"x": x, "y": y}, seed=1, check=True)


def _keys(target, uniform_half):
    return target.model_copy(update={"keys": target.keys.model_copy(update={"uniform_half": uniform_half})})


def test_generating_the_uniform_key_half_halves_the_key_traffic():
    tiny = load_target("osiris-tiny")
    assert tiny.keys.generated and OSIRIS.keys.generated  # [paper] §IV-E
    gen = fhec.compile(_program(), tiny)
    loaded = fhec.compile(_program(), _keys(tiny, "loaded"))
    g, l_ = gen.report.offchip_bytes, loaded.report.offchip_bytes
    assert l_["ksh_compulsory"] > 0 and 2 * g["ksh_compulsory"] == l_["ksh_compulsory"]
    assert g["ksh_generated"] >= g["ksh_compulsory"] and l_["ksh_generated"] == 0
    assert gen.report.bandwidth_bound_cycles < loaded.report.bandwidth_bound_cycles
    from fhec.backends.streams import StreamOp

    units = [u.name for u in gen.streams.units]
    on_gen = gen.streams.unit[gen.streams.op == StreamOp.GEN]
    assert len(on_gen) and {units[u] for u in on_gen.tolist()} == {"gen0"}
    assert not np.any(loaded.streams.op == StreamOp.GEN)


def test_the_checker_refuses_generated_keys_on_a_machine_that_loads_them():
    tiny = load_target("osiris-tiny")
    c = fhec.compile(_program(), tiny)
    hazards = find_hazards(c.streams, _keys(tiny, "loaded"), c.lowered.limb)
    assert hazards and {h.kind.value for h in hazards} >= {"wrong-unit"}


def test_the_generator_timing_agrees_in_both_derivations():
    for N in (2**10, 2**16):
        a, b = op_timing(OSIRIS, N), checker_timing(OSIRIS, N)
        from fhec.backends.streams import StreamOp

        g = StreamOp.GEN
        assert (a.occupancy[g], a.latency[g], a.write_cycles[g]) == (b.occupancy[g], b.latency[g], b.write_cycles[g])
        assert a.occupancy[g] == N // 512 and a.unit_kind[g] == b.unit_kind[g] == "gen"


def _directions(target, directions):
    units = tuple(u.model_copy(update={"directions": directions}) if u.kind == UnitKind.NTT else u
                  for u in target.cluster.units)
    return target.model_copy(update={"cluster": target.cluster.model_copy(update={"units": units})})


def _diagonal_program():
    """A key switch (mod-up INTTs and NTTs, mod-down) and a plaintext product whose limbs
    OF-Limb generates by NTTs."""
    params = fhec.CKKSParams(N=2**10, levels=3, scale_bits=28, word_bits=32, security=None)
    p = fhec.Program("diag", params)
    x = p.input("x")
    w = 0.5 * np.cos(np.arange(params.slots))
    p.output("y", (x * w).rotate(3) + x.rotate(1))
    return p


def test_the_mdc_units_run_one_direction_each_but_for_of_limb():
    # Osiris §V: the two MDCs are ModChange's INTT and NTT units; the INTT unit is reversed
    # for OF-Limb, "doubl[ing] the throughput of OF-Limb"
    for name in ("osiris", "osiris-2tb", "osiris-tiny"):
        assert [u.directions for u in load_target(name).cluster.units if u.kind == UnitKind.NTT] == [
            ("inverse", "forward")]
    tiny = load_target("osiris-tiny")
    c = fhec.compile(_diagonal_program(), tiny)
    c.check()
    limb, s = c.data_schedule.program, c.streams
    generating = limb.generation_ntts()
    # exactly the NTTs that read the stored coefficient-form limb (one digit: a CONST rvec)
    reads_const = (limb.op == LimbOp.NTT) & (limb.rvec_class[limb.src0] == RVecClass.CONST)
    assert generating.any() and np.array_equal(generating, reads_const)
    names = np.array([u.name for u in s.units])[s.unit]
    fu = s.mod >= 0  # functional-unit entries (tag: their instruction)
    on = {kind: set(names[fu & (s.op == op)].tolist()) for kind, op in (("intt", LimbOp.INTT), ("ntt", LimbOp.NTT))}
    gen_entries = fu & (s.op == LimbOp.NTT) & generating[np.where(fu, s.tag, 0)]
    plain_ntt = fu & (s.op == LimbOp.NTT) & ~gen_entries
    assert on["intt"] == {"c0.ntt0"} and set(names[plain_ntt].tolist()) == {"c0.ntt1"}
    assert set(names[gen_entries].tolist()) <= {"c0.ntt0", "c0.ntt1"}
    x = np.random.default_rng(0).uniform(-1, 1, c.program.params.slots)
    from fhec.verify_run import run_compiled_checked

    run_compiled_checked(c, {"x": x}, seed=1, check=True)


def test_the_checker_refuses_a_transform_on_the_unit_of_the_other_direction():
    tiny = load_target("osiris-tiny")
    c = fhec.compile(_diagonal_program(), tiny)
    assert find_hazards(c.streams, tiny, c.data_schedule.program) == []
    swapped = _directions(tiny, ("forward", "inverse"))
    hazards = find_hazards(c.streams, swapped, c.data_schedule.program, limit=None)
    assert hazards and {h.kind.value for h in hazards} == {"wrong-unit"}
    assert any("INTT" in h.message for h in hazards) and any("NTT cannot" in h.message for h in hazards)
    # the same program scheduled for the swapped machine passes there
    fhec.compile(_diagonal_program(), swapped).check()


def test_one_way_units_bound_and_slow_only_what_they_constrain():
    tiny = load_target("osiris-tiny")
    both = _directions(tiny, None)
    one_way, free = (fhec.compile(_program(), t).report for t in (tiny, both))
    assert one_way.compute_bound_cycles >= free.compute_bound_cycles
    assert one_way.cycles >= free.cycles * 0.95  # a greedy schedule, so not strictly monotone


@pytest.mark.parametrize("directions, message", [
    (("inverse",), "count"),
    (("inverse", "inverse"), "forward"),
    (("forward", "forward"), "inverse"),
])
def test_directions_are_checked_when_a_target_loads(directions, message):
    from pydantic import ValidationError

    from fhec.backends.target import FunctionalUnit

    spec = next(u for u in OSIRIS.cluster.units if u.kind == UnitKind.NTT).model_dump()
    with pytest.raises(ValidationError, match=message):
        FunctionalUnit(**{**spec, "directions": directions})
    with pytest.raises(ValidationError, match="both NTT and INTT"):
        FunctionalUnit(**{**spec, "ops": ["NTT"], "directions": ("both", "both")})


def test_traffic_is_counted_in_the_targets_words():
    """A 32-bit-word program on osiris-tiny (40-bit words, 5 bytes each): the memory channel
    moves 5-byte words, and the report's traffic, bandwidth bound and off-chip energy count
    the same bytes (they counted 4, 20% below the channel's busy time)."""
    import warnings

    params = fhec.CKKSParams(N=2**10, levels=4, scale_bits=30, word_bits=32, security=None)
    p = fhec.Program("mv32", params)
    x = p.input("x")
    p.output("y", (x * x).rotate(1) + x.rotate(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = fhec.compile(p, target="osiris-tiny", progress=False)
    t, r, s = c.target, c.report, c.streams
    mem = s.unit_index("mem0")
    moved = int(s.unit_start[mem + 1] - s.unit_start[mem])
    assert r.offchip_bytes["total"] == moved * t.rvec_bytes(2**10) == moved * 5 * 2**10
    assert r.offchip_bytes["total"] / t.offchip_bytes_per_cycle == pytest.approx(r.utilization["mem"] * r.cycles)
    assert r.bandwidth_bound_cycles == pytest.approx(r.offchip_bytes["compulsory"] / t.offchip_bytes_per_cycle)
