"""The osiris targets: their numbers against the paper, and limb interleaving as a
pipelining rule that the scheduler follows and the checker enforces."""

import numpy as np
import pytest

import fhec
from fhec.backends.streams import op_timing
from fhec.backends.target import UnitKind, list_targets, load_target
from fhec.ir.limb import LimbOp
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
