"""Every `Target` field outside ``[unmodeled]`` is read: changing it changes what fhec
produces for some program (a schedule, the cycles, the report, or whether the target
accepts the program), or, for the two descriptive fields, what ``fhec targets`` prints.
Fields inside ``[unmodeled]`` change nothing, as their table says.

A new `Target` field fails `test_every_field_has_a_perturbation` until it gets a row in
`PERTURB` (and so a check that something reads it) or goes into `Unmodeled`.
"""

from __future__ import annotations

import copy
import functools
import hashlib

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import BaseModel

import fhec
import fhec.pipeline
import fhec.backends.target as target_mod
from fhec.analysis.bounds import lower_bounds
from fhec.backends.target import Target, Unmodeled, load_target
from fhec.cli import main
from fhec.errors import TargetError
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.sim.timing import make_report

TINY = load_target("tiny")
NTT, AUT, MUL, ADD = range(4)  # index of each unit kind in tiny.toml


def _leaf_paths(model_type: type[BaseModel], prefix: str = "") -> set[str]:
    out = set()
    for name, field in model_type.model_fields.items():
        path = prefix + name
        ann = field.annotation
        inner = [a for a in getattr(ann, "__args__", (ann,)) if a is not type(None) and a is not Ellipsis]
        models = [a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)]
        if models:
            sub = path + ("[]" if getattr(ann, "__origin__", None) is tuple else "")
            out |= _leaf_paths(models[0], sub + ".")
        else:
            out.add(path)
    return out


def _unit(i: int, field: str, value):
    def edit(d):
        d["cluster"]["units"][i][field] = value
    return edit


def _set(*path_and_value):
    *path, value = path_and_value

    def edit(d):
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return edit


def _swap_mul_add_kinds(d):
    units = d["cluster"]["units"]
    units[MUL]["kind"], units[ADD]["kind"] = units[ADD]["kind"], units[MUL]["kind"]


def _adds_on_the_multipliers(d):
    units = d["cluster"]["units"]
    units[ADD]["ops"] = tuple(op for op in units[ADD]["ops"] if op.name != "ADD")
    units[MUL]["ops"] = tuple(units[MUL]["ops"]) + tuple(op for op in TINY.cluster.units[ADD].ops if op.name == "ADD")


def _slots_only(d):
    # fhec schedules generated key halves on targets without the on-chip data path only
    d.update(register_file=None, network=None, scratchpad={"capacity_bytes": d["scratchpad"]["capacity_bytes"]})


def _with_generated_keys(field, value):
    """A generator field matters only when the target generates key halves."""
    def edit(d):
        _slots_only(d)
        d["keys"]["uniform_half"] = "generated"
        d["keys"][field] = value
    return edit


def _generating(d):
    _slots_only(d)
    d["keys"]["uniform_half"] = "generated"


def _two_ntt_units(d, directions=None):
    # directions need two NTT units and no modeled data path (fhec schedules one or the other)
    _slots_only(d)
    d["cluster"]["units"][NTT].update(count=2, directions=directions)


def _one_way_ntt_units(d):
    _two_ntt_units(d, ("inverse", "forward"))


def _conversion_array(d):
    # the multipliers (tiny's BCONV kind) as one array of 4 input rows; not with the data path
    _slots_only(d)
    d["cluster"]["units"][MUL]["rows"] = 4


def _wider_words(d):
    # 64-bit words double every RVec: the register file must still hold 3 at n_max
    d["word_bits"] = 64
    d["register_file"]["capacity_bytes"] *= 2


PERTURB = {
    "name": _set("name", "tiny2"),
    "description": _set("description", "another machine"),
    "clock_ghz": _set("clock_ghz", 2.0),
    "word_bits": _wider_words,
    "n_min": _set("n_min", 2048),
    "n_max": _set("n_max", 512),
    "cluster.count": _set("cluster", "count", 1),
    "cluster.units[].kind": _swap_mul_add_kinds,
    "cluster.units[].count": _unit(MUL, "count", 1),
    "cluster.units[].ops": _adds_on_the_multipliers,
    "cluster.units[].latency": _unit(NTT, "latency", 40),
    "cluster.units[].transposes": _unit(AUT, "transposes", 0),
    "cluster.units[].throughput": _unit(MUL, "throughput", 8),
    "cluster.units[].pj_per_element": _unit(NTT, "pj_per_element", 50.0),
    "cluster.units[].area_mm2": _unit(NTT, "area_mm2", 1.0),
    "cluster.units[].directions": _one_way_ntt_units,  # against two-way units: test_directions_are_read
    "cluster.units[].rows": _conversion_array,  # against no array: test_rows_are_read
    "area.cluster_extra_mm2": _set("area", "cluster_extra_mm2", 1.0),
    "area.scratchpad_mm2_per_mib": _set("area", "scratchpad_mm2_per_mib", 2.0),
    "area.network_mm2": _set("area", "network_mm2", 5.0),
    "area.memory_mm2_per_gb_s": _set("area", "memory_mm2_per_gb_s", 1.0),
    "scratchpad.capacity_bytes": _set("scratchpad", "capacity_bytes", 32768),
    "memory.bandwidth_gb_s": _set("memory", "bandwidth_gb_s", 16.0),
    "memory.latency_ns": _set("memory", "latency_ns", 400.0),
    "energy.pj_per_byte_onchip": _set("energy", "pj_per_byte_onchip", 3.0),
    "energy.pj_per_byte_offchip": _set("energy", "pj_per_byte_offchip", 40.0),
    "pipelining.mode": _set("pipelining", "mode", "limb-interleaved"),
    "lowering.plaintexts": _set("lowering", "plaintexts", "of-limb"),
    "lowering.products": _set("lowering", "products", "karatsuba"),
    "ordering.linear_transforms": _set("ordering", "linear_transforms", "giant-step-centric"),
    "keys.uniform_half": _generating,
    "keys.generator_words_per_cycle": _with_generated_keys("generator_words_per_cycle", 1),
    "keys.generator_latency": _with_generated_keys("generator_latency", 5000),
    "register_file.capacity_bytes": _set("register_file", "capacity_bytes", 98304),
    "register_file.read_ports": _set("register_file", "read_ports", 2),
    "register_file.write_ports": _set("register_file", "write_ports", 3),
    "register_file.pj_per_byte": _set("register_file", "pj_per_byte", 1.0),
    "scratchpad.banks": _set("scratchpad", "banks", 1),
    "scratchpad.port_bytes_per_cycle": _set("scratchpad", "port_bytes_per_cycle", 16),
    "network.port_bytes_per_cycle": _set("network", "port_bytes_per_cycle", 16),
    "network.latency": _set("network", "latency", 40),
}

UNMODELED = {
    "unmodeled.lanes": _set("unmodeled", "lanes", 32),
    "unmodeled.register_file_banks": _set("unmodeled", "register_file_banks", 2),
}


def perturbed(edit) -> Target:
    data = copy.deepcopy(TINY.model_dump())
    edit(data)
    return Target.model_validate(data)


@functools.lru_cache(maxsize=None)
def _limb(lowering, ordering):
    params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, base_limbs=2, security=None)
    p = fhec.Program("fields", params)
    x, y = p.input("x"), p.input("y")
    p.output("a", (x * y).rotate(3) + x * np.linspace(-0.5, 0.5, params.slots))  # a constant OF-Limb can generate
    p.output("b", y.linear_transform({k: np.full(params.slots, 0.25) for k in range(9)}))  # BSGS, for GSC
    options = fhec.pipeline.options_for(TINY.model_copy(update={"lowering": lowering, "ordering": ordering}))
    return fhec.pipeline.run_prefix("lower", p, options).last.limb


def compiled_output(target: Target) -> str:
    """What the schedulers and the report make of one program on `target` (ordered and
    lowered as the target's ``[ordering]`` and ``[lowering]`` ask)."""
    limb = _limb(target.lowering, target.ordering)
    try:
        data = schedule_offchip(limb, target, verify=False)
    except TargetError as e:
        return f"rejected: {e}"
    streams = schedule_cycles(data, target)
    report = make_report(program_name="fields", scheme="ckks", target=target, data=data, streams=streams,
                         bounds=lower_bounds(limb, target), keyswitch={})
    h = hashlib.sha256()
    for a in (data.kind, data.arg, data.slot, streams.unit, streams.cycle):
        h.update(np.asarray(a, dtype=np.int64).tobytes())
    kinds = [streams.units[u].kind for u in streams.unit.tolist()]
    return f"{h.hexdigest()} {kinds} {report.model_dump_json()}"


def cli_output(target: Target, monkeypatch) -> str:
    monkeypatch.setattr(target_mod, "list_targets", lambda: [target])
    result = CliRunner().invoke(main, ["targets"])
    assert result.exit_code == 0, result.output
    return result.output


def test_every_field_has_a_perturbation():
    fields = _leaf_paths(Target)
    assert {f for f in fields if not f.startswith("unmodeled.")} == set(PERTURB)
    assert {f for f in fields if f.startswith("unmodeled.")} == set(UNMODELED)
    assert _leaf_paths(Unmodeled, "unmodeled.") == set(UNMODELED)


@pytest.fixture(scope="module")
def baseline():
    return compiled_output(TINY)


@pytest.mark.parametrize("field", sorted(PERTURB))
def test_changing_a_modeled_field_changes_the_output(field, baseline, monkeypatch):
    target = perturbed(PERTURB[field])
    if field in ("name", "description"):  # descriptive: shown, never computed with
        assert cli_output(target, monkeypatch) != cli_output(TINY, monkeypatch)
        return
    assert compiled_output(target) != baseline


def test_directions_are_read():
    # the same two NTT units, with and without one direction each
    assert compiled_output(perturbed(_one_way_ntt_units)) != compiled_output(perturbed(_two_ntt_units))


@pytest.mark.parametrize("field", sorted(UNMODELED))
def test_changing_an_unmodeled_field_changes_no_result(field, baseline, monkeypatch):
    target = perturbed(UNMODELED[field])
    assert compiled_output(target) == baseline
    assert field.removeprefix("unmodeled.") in target.unmodeled.summary()
    assert "not modeled" in cli_output(target, monkeypatch)


def test_unmodeled_table_is_optional(tmp_path):
    from pathlib import Path

    text = (Path(target_mod.__file__).parent / "targets" / "tiny.toml").read_text()
    path = tmp_path / "bare.toml"
    path.write_text(text[: text.index("# -----")])
    bare = load_target(path)
    assert bare.unmodeled == Unmodeled() and bare.unmodeled.summary() == ""
    assert compiled_output(bare) == compiled_output(TINY)


@pytest.mark.parametrize("field", ["generator_words_per_cycle", "generator_latency"])
def test_a_generator_field_changes_the_output_of_a_generating_target(field):
    generating = perturbed(_generating)
    assert compiled_output(perturbed(PERTURB[f"keys.{field}"])) != compiled_output(generating)


def test_generating_key_halves_changes_the_output_of_a_target_without_the_data_path():
    # PERTURB's "keys.uniform_half" also drops tiny's data path: this isolates the flag
    assert compiled_output(perturbed(_generating)) != compiled_output(perturbed(_slots_only))


def test_rows_are_read():
    # the same slots-only machine, with and without a conversion array
    assert compiled_output(perturbed(_conversion_array)) != compiled_output(perturbed(_slots_only))
