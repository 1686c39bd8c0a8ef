"""Tests of target descriptions: shipped TOML files, validation errors, timing helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

import fhec.backends
from fhec.backends.target import Target, UnitKind, list_targets, load_target, shipped_target_names
from fhec.errors import FhecError, TargetError
from fhec.ir.limb_ops import LimbOp

F1_TEXT = (Path(fhec.backends.__file__).parent / "targets" / "f1.toml").read_text()
F1_DATAPATH_TEXT = (Path(fhec.backends.__file__).parent / "targets" / "f1-datapath.toml").read_text()


def write(tmp_path: Path, text: str, name: str = "user.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def edited(old: str, new: str, text: str = F1_TEXT) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_shipped_targets_load():
    assert {"f1", "tiny"} <= set(shipped_target_names())
    targets = {t.name: t for t in list_targets()}
    assert {"f1", "tiny"} <= set(targets)
    assert all(isinstance(t, Target) for t in targets.values())


def test_f1_matches_the_paper():
    t = load_target("f1")
    assert (t.clock_ghz, t.word_bits, t.unmodeled.lanes, t.n_min, t.n_max) == (1.0, 32, 128, 1024, 16384)
    assert t.cluster.count == 16
    assert {u.kind: u.count for u in t.cluster.units} == {
        UnitKind.NTT: 1,
        UnitKind.AUT: 1,
        UnitKind.MUL: 2,
        UnitKind.ADD: 2,
    }
    assert t.total_units(UnitKind.MUL) == 32
    # the FU-level model: units read and write the scratchpad at their own rate
    assert (t.register_file, t.network, t.models_onchip) == (None, None, False)
    assert t.scratchpad.capacity_bytes == 64 * 1024 * 1024
    assert t.offchip_bytes_per_cycle == 1024.0
    # §2.4: an RVec at N = 16K is 64 KB; §4: the scratchpad holds 1024 of them.
    assert t.rvec_bytes(16384) == 64 * 1024
    assert t.scratchpad_rvecs(16384) == 1024
    # §3: fully pipelined FUs at E elements/cycle: an N = 16K op occupies its FU 128 cycles.
    for op in LimbOp:
        assert t.occupancy_cycles(op, 16384) == 128
    assert t.unit_for(LimbOp.INTT).kind == UnitKind.NTT
    assert t.unit_for(LimbOp.BCONV).kind == UnitKind.MUL
    assert t.unit_for(LimbOp.NEG).kind == UnitKind.ADD


def test_f1_datapath_is_f1_with_its_data_path():
    """f1-datapath is f1 plus the register files, crossbars and bank ports (F1 §3, §6)."""
    f1, t = load_target("f1"), load_target("f1-datapath")
    onchip = {"name", "description", "register_file", "network", "scratchpad"}
    assert t.model_dump(exclude=onchip) == f1.model_dump(exclude=onchip)
    assert t.scratchpad.capacity_bytes == f1.scratchpad.capacity_bytes
    assert t.register_file.capacity_bytes == 512 * 1024
    assert (t.register_file.read_ports, t.register_file.write_ports) == (10, 6)
    assert (t.scratchpad.banks, t.scratchpad.port_bytes_per_cycle) == (16, 512)
    assert (t.network.port_bytes_per_cycle, t.models_onchip, t.register_rvecs(16384), t.network_cycles(16384)) == (
        512, True, 8, 128)


def test_timing_helpers_follow_the_documented_model():
    t = load_target("f1")
    ntt, aut, mul = (t.unit_for(op) for op in (LimbOp.NTT, LimbOp.AUT, LimbOp.MUL))
    n = 4096
    occ = n // 128
    assert t.latency_cycles(LimbOp.NTT, n) == ntt.latency + occ  # one transpose
    assert t.latency_cycles(LimbOp.AUT, n) == aut.latency + 2 * occ  # two transposes
    assert t.op_cycles(LimbOp.MUL, n) == mul.latency + occ
    assert t.op_cycles(LimbOp.NTT, n) == ntt.latency + 2 * occ
    assert t.op_energy_pj(LimbOp.NTT, n) == pytest.approx(37.5 * n)
    assert t.seconds(1000) == pytest.approx(1e-6)
    assert t.offchip_latency_cycles == 200


def test_tiny_forces_spills_at_test_sizes():
    t = load_target("tiny")
    for log_n in (10, 11, 12):
        n = 1 << log_n
        assert t.supports(n)
        # A BV key-switch hint at L = 4 is 2 * L^2 = 32 RVecs (F1 Listing 1).
        assert t.scratchpad_rvecs(n) < 32
    assert t.scratchpad_rvecs(4096) >= 3  # still room for two sources and a result


def test_ring_degree_range():
    t = load_target("f1")
    assert t.supports(1024) and not t.supports(512) and not t.supports(3000)
    with pytest.raises(TargetError, match=r"target 'f1' supports ring degrees N = 1024..16384"):
        t.check_ring_degree(32768)


def test_user_path_works(tmp_path):
    path = write(tmp_path, edited('name = "f1"', 'name = "my-f1"'))
    for arg in (path, str(path)):
        t = load_target(arg)
        assert t.name == "my-f1"
        assert t.cluster == load_target("f1").cluster


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            "capacity_bytes = 67108864",
            "capacity_bytes = 0",
            "field 'scratchpad.capacity_bytes': Input should be greater than 0",
        ),
        ("latency = 1            # [derived]", "latency = -1           # [derived]", r"field 'cluster.units\[2\].latency': Input should be greater than or equal to 1"),
        ('ops = ["AUT"]', 'ops = ["AUTO"]', r"field 'cluster.units\[1\].ops': unknown op 'AUTO'"),
        ('ops = ["MUL", "MUL_CONST", "BCONV"]', 'ops = ["MUL", "MUL_CONST"]', "field 'cluster': op BCONV is executed by no unit"),
        ('ops = ["ADD", "SUB", "NEG", "ADD_CONST"]', 'ops = ["ADD", "SUB", "NEG", "ADD_CONST", "MUL"]', r"op MUL is executed by several units \(mul, add\)"),
        ("n_min = 1024", "n_min = 1000", "field 'n_min': 1000 is not a power of two"),
        ("n_min = 1024", "n_min = 32768", r"n_min \(32768\) exceeds n_max \(16384\)"),
        ("n_max = 16384", "n_max = 16384\nn_maxx = 64", "field 'n_maxx': Extra inputs are not permitted"),
        ("lanes = 128", "lanes = 128\nlane = 64", "field 'unmodeled.lane': Extra inputs are not permitted"),
        ("n_max = 16384", "n_max = 16384\nlanes = 64", r"field 'lanes' is not modeled .*; move it to \[unmodeled\] lanes"),
        ("[cluster]\n", "[cluster]\nregister_file = 1\n", r"field 'cluster.register_file' is modeled now; move it to \[register_file\]"),
        ("[energy]\n", "[energy]\npj_per_byte_register_file = 0.2\n", r"field 'energy.pj_per_byte_register_file' is modeled now"),
        ('kind = "ntt"', 'kind = "fft"', r"field 'cluster.units\[0\].kind': Input should be 'ntt', 'aut', 'mul', 'add' or 'bconv'"),
        ("bandwidth_gb_s = 1024.0", "bandwidth_gb_s = 'fast'", "field 'memory.bandwidth_gb_s': 'fast' is text; give a number without quotes"),
        ("count = 16", 'count = "16"', "field 'cluster.count': '16' is text; give a number without quotes"),
        ('name = "f1"', 'name = "my f1"', "field 'name': 'my f1' is not one word"),
        ('kind = "ntt"', "kind = true", "field 'cluster.units\\[0\\].kind': true is a boolean; give one of 'ntt', 'aut'"),
    ],
)
def test_bad_files_name_the_file_and_field(tmp_path, old, new, message):
    path = write(tmp_path, edited(old, new), "bad.toml")
    with pytest.raises(TargetError, match=message) as info:
        load_target(path)
    assert str(info.value).startswith(f"{path}: ")
    assert isinstance(info.value, FhecError)


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("[network]", "[unmodeled.network]", r"field 'unmodeled.network' is modeled now; move it to \[network\]"),
        ("banks = 16                 # [paper] §3, Table 2: 16 x 4 MB banks", "", r"the on-chip data path is modeled as a whole"),
        ("read_ports = 10", "read_ports = 1", r"field 'register_file.read_ports': Input should be greater than or equal to 2"),
    ],
)
def test_bad_data_path_tables_name_the_file_and_field(tmp_path, old, new, message):
    path = write(tmp_path, edited(old, new, F1_DATAPATH_TEXT), "bad.toml")
    with pytest.raises(TargetError, match=message) as info:
        load_target(path)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    "old, new, message",
    [
        # zero latencies let a consumer issue in its producer's cycle, and the stream executor
        # ran it first: `fhec run` found corrupt limbs (f1 with latency_ns = 0, a mul or add of latency 0)
        ("latency = 1            # [derived]", "latency = 0            # [derived]",
         r"field 'cluster.units\[2\].latency': Input should be greater than or equal to 1"),
        ("latency_ns = 200.0", "latency_ns = 0.0", "field 'memory.latency_ns': Input should be greater than 0"),
        ("[scratchpad]", "[keys]\ngenerator_latency = 0\n\n[scratchpad]",
         "field 'keys.generator_latency': Input should be greater than or equal to 1"),
        # a vanishing clock or bandwidth: an OverflowError out of the schedulers' int64 cycles
        ("clock_ghz = 1.0", "clock_ghz = 1e-300", "field 'clock_ghz': Input should be greater than or equal to 0.001"),
        ("bandwidth_gb_s = 1024.0", "bandwidth_gb_s = 1e-300",
         "field 'memory.bandwidth_gb_s': Input should be greater than or equal to 0.001"),
    ],
)
def test_zero_latencies_and_vanishing_rates_are_refused(tmp_path, old, new, message):
    path = write(tmp_path, edited(old, new), "bad.toml")
    with pytest.raises(TargetError, match=message):
        load_target(path)


def test_energy_table_and_unit_energies_go_together(tmp_path):
    without_table = F1_TEXT[: F1_TEXT.index("[energy]")]
    with pytest.raises(TargetError, match=r"units give pj_per_element but the \[energy\] table is missing"):
        load_target(write(tmp_path, without_table))
    without_unit = edited("pj_per_element = 37.5", "")
    with pytest.raises(TargetError, match="every unit needs pj_per_element"):
        load_target(write(tmp_path, without_unit))
    no_energy = "\n".join(line for line in without_table.splitlines()
                          if not line.startswith(("pj_per_element", "area_mm2", "pj_per_byte")))
    t = load_target(write(tmp_path, no_energy))
    assert t.energy is None and t.op_energy_pj(LimbOp.ADD, 1024) is None
    assert t.area is None and t.area_mm2 is None and t.area_breakdown() is None


def test_f1_area_is_table_2():
    t = load_target("f1")
    parts = t.area_breakdown()
    # F1 Table 2: compute 63.52, scratchpad 48.09, NoC 10.02, HBM PHYs 29.80; total 151.4 mm²
    assert parts == pytest.approx({"compute": 63.52, "scratchpad": 48.09, "network": 10.02, "memory_interface": 29.80})
    assert t.area_mm2 == pytest.approx(151.4, abs=0.05)
    # the area moves with what a sweep varies: half the scratchpad, half its area
    half = Target.model_validate({**t.model_dump(), "scratchpad": {**t.scratchpad.model_dump(), "capacity_bytes": 32 * 2**20}})
    assert half.area_breakdown()["scratchpad"] == pytest.approx(48.09 / 2)


def test_area_table_and_unit_areas_go_together(tmp_path):
    with pytest.raises(TargetError, match="every unit needs area_mm2"):
        load_target(write(tmp_path, edited("area_mm2 = 2.27", "")))
    start = F1_TEXT.index("[area]")
    end = F1_TEXT.index("# ----", start)
    with pytest.raises(TargetError, match=r"units give area_mm2 but the \[area\] table is missing"):
        load_target(write(tmp_path, F1_TEXT[:start] + F1_TEXT[end:]))


def test_missing_field_is_named(tmp_path):
    path = write(tmp_path, edited("clock_ghz = 1.0", ""))
    with pytest.raises(TargetError, match="field 'clock_ghz': Field required"):
        load_target(path)


def test_unknown_name_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(TargetError, match=r"unknown target 'f2'; shipped targets: .*f1.*tiny"):
        load_target("f2")
    with pytest.raises(TargetError, match="nope.toml: cannot read target file"):
        load_target(tmp_path / "nope.toml")
    with pytest.raises(TargetError, match="broken.toml: not valid TOML"):
        load_target(write(tmp_path, "name = ", "broken.toml"))


def test_targets_are_immutable():
    t = load_target("tiny")
    with pytest.raises(Exception):
        t.word_bits = 8  # type: ignore[misc]
    assert hash(t) == hash(load_target("tiny"))


def test_f1_64k_is_f1_with_a_larger_ring():
    """The what-if target changes only the name, the description and n_max (docs/targets.md)."""
    f1, big = load_target("f1"), load_target("f1-64k")
    assert big.n_max == 65536 and f1.n_max == 16384
    assert big.model_dump(exclude={"name", "description", "n_max"}) == f1.model_dump(
        exclude={"name", "description", "n_max"}
    )
    # an N = 64K op occupies an E = 128 unit for 512 cycles; a 64K RVec is 256 KB, 256 fit on chip
    assert big.occupancy_cycles(LimbOp.MUL, 65536) == 512
    assert (big.rvec_bytes(65536), big.scratchpad_rvecs(65536)) == (256 * 1024, 256)


@pytest.mark.parametrize(
    "old, new, message",
    [
        # each overflowed int64 in the presto scheduler: OverflowError
        ("bandwidth_gb_s = 3.2", "bandwidth_gb_s = 1e-300",
         "field 'memory.bandwidth_gb_s': Input should be greater than or equal to 0.001"),
        ("dispatch_cycles = 1 ", "dispatch_cycles = 1180591620717411303424 ",
         r"field 'params': \[params\] dispatch_cycles = 1180591620717411303424 is out of range"),
        ("clock_ghz = 1.0", "clock_ghz = 1e-300", "field 'clock_ghz': Input should be greater than or equal to 0.001"),
    ],
)
def test_isa_machine_rates_and_params_beyond_any_machine_are_refused(tmp_path, old, new, message):
    text = (Path(fhec.backends.__file__).parent / "targets" / "presto.toml").read_text()
    path = write(tmp_path, edited(old, new, text), "bad.toml")
    with pytest.raises(TargetError, match=message):
        load_target(path)


def test_a_machine_file_without_its_isa_key_is_told_to_add_it(tmp_path):
    # it was read as a stream target: "field 'cluster': Field required; field 'registers': Extra inputs ..."
    text = (Path(fhec.backends.__file__).parent / "targets" / "rpu.toml").read_text()
    path = write(tmp_path, edited('isa = "rpu"\n', "", text), "mine.toml")
    with pytest.raises(TargetError, match=r"mine.toml: \[memories\], \[pipelines\], \[registers\] make this an ISA "
                                          r"machine file, but it has no top-level `isa` key; add one .*isa = \"rpu\""):
        load_target(path)


def test_the_data_path_with_generated_keys_is_refused_when_the_file_is_read(tmp_path):
    # `fhec targets FILE` accepted it; only the compile refused it
    path = tmp_path / "dp-gen.toml"
    path.write_text(F1_DATAPATH_TEXT + '\n[keys]\nuniform_half = "generated"\n')
    with pytest.raises(TargetError, match="on-chip key generation .* are not scheduled together"):
        load_target(path)
