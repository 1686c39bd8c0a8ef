"""The on-chip plan in the stream files (`fhec.backends.onchip_files`): on a target with a
data path, the unit streams name their registers and every cluster gets a network stream;
both encodings read back into a plan the checker accepts and the stream executor runs to
the same words on every limb."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fhec.backends.onchip_files import decode_network, encode_network, format_network, parse_network
from fhec.backends.stream_files import StreamFormatError, read_streams, write_streams
from fhec.backends.target import load_target
from fhec.passes.cycle import schedule_cycles
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import check_streams
from fhec.sim.streams import execute_streams

from tests.fuzz.support import fuzz_settings, mutated_bytes, mutated_json, mutated_text, only_fhec_errors
from tests.passes.test_offchip import he_program
from tests.sim.test_streams import random_loaded

DATAPATH = load_target("f1-datapath")
TRANSFER_FIELDS = ("kind", "cycle", "cluster", "reg", "src_cluster", "src_reg", "slot", "value", "entry", "operand")


@pytest.fixture(scope="module")
def scheduled():
    """A key-switching program on f1-datapath: fills, write-backs and transfers between clusters."""
    prog = he_program(N=2**10, L=4, method="hybrid", ops=("mul", "rot"), chains=2)
    streams = schedule_cycles(schedule_offchip(prog, DATAPATH), DATAPATH)
    counts = streams.onchip.transfers.counts()
    assert min(counts.values()) > 0, counts  # every kind of transfer is exercised
    return prog, streams


def _sorted_transfers(plan):
    t = plan.transfers
    order = np.lexsort(tuple(getattr(t, f) for f in reversed(TRANSFER_FIELDS)))
    return {f: getattr(t, f)[order] for f in TRANSFER_FIELDS}


def same_plan(a, b) -> bool:
    if a.registers != b.registers:
        return False
    if not all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("reg", "reg0", "reg1")):
        return False
    ta, tb = _sorted_transfers(a), _sorted_transfers(b)
    return all(np.array_equal(ta[f], tb[f]) for f in TRANSFER_FIELDS)


@pytest.mark.parametrize("fmt", ["bin", "txt"])
def test_plan_round_trips_and_runs(scheduled, tmp_path, fmt):
    prog, streams = scheduled
    names = {p.name for p in write_streams(streams, tmp_path)}
    clusters = DATAPATH.cluster.count
    assert {f"c{c}.net.{ext}" for c in range(clusters) for ext in ("txt", "bin")} <= names
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["onchip"]["registers"] == streams.onchip.registers
    assert manifest["onchip"]["transfers"] == len(streams.onchip.transfers)
    back = read_streams(tmp_path, fmt=fmt)
    assert same_plan(back.onchip, streams.onchip)
    check_streams(back, DATAPATH, prog)  # the checker re-verifies registers, ports and values
    loaded = random_loaded(prog, 7)
    want = execute_streams(streams, DATAPATH, prog, loaded)
    got = execute_streams(back, DATAPATH, prog, loaded)
    assert want.keys() == got.keys() and all(np.array_equal(want[k], got[k]) for k in want)


def test_text_shows_registers_and_transfers(scheduled):
    _, streams = scheduled
    text = format_network(streams, 0)
    assert text.startswith("# fhec-network v1 target=f1-datapath cluster=0 registers=")
    assert " FILL " in text and " <- s" in text and "; v" in text and "@" in text
    from fhec.backends.stream_files import format_stream

    unit = next(i for i, u in enumerate(streams.units) if u.kind == "mul" and u.cluster == 0)
    line = next(ln for ln in format_stream(streams, unit).splitlines() if not ln.startswith("#"))
    assert "| r" in line and " <- " in line.split("|")[1]


def test_plain_target_writes_no_plan_and_a_rewrite_clears_it(scheduled, tmp_path):
    """f1 (no data path) writes no network files; writing it over f1-datapath's output
    removes them, so no stale plan sits beside the new streams."""
    prog, streams = scheduled
    write_streams(streams, tmp_path)
    f1 = load_target("f1")
    plain = schedule_cycles(schedule_offchip(prog, f1), f1)
    names = {p.name for p in write_streams(plain, tmp_path)}
    assert not any(".net." in n for n in names)
    assert not list(tmp_path.glob("*.net.*"))
    assert "onchip" not in json.loads((tmp_path / "manifest.json").read_text())
    assert read_streams(tmp_path).onchip is None


def test_damaged_plans_are_refused(scheduled, tmp_path):
    _, streams = scheduled
    write_streams(streams, tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["onchip"]["transfers"] += 1
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StreamFormatError, match="onchip.transfers"):
        read_streams(tmp_path)
    manifest["onchip"]["transfers"] -= 1
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    # a transfer streaming into an entry the units do not have
    text = (tmp_path / "c0.net.txt").read_text()
    line = next(ln for ln in text.splitlines() if "->" in ln)
    unit_at = line.split("->")[1].strip()
    (tmp_path / "c0.net.txt").write_text(text.replace(unit_at, unit_at.split("@")[0] + "@999999999.0", 1))
    with pytest.raises(StreamFormatError, match="do not have"):
        read_streams(tmp_path, fmt="txt")
    # a register outside the cluster's register file
    K = streams.onchip.registers
    (tmp_path / "c0.net.txt").write_text(text.replace(" r", f" r{K}", 1) if " r" in text else text)
    with pytest.raises(StreamFormatError, match="register"):
        read_streams(tmp_path, fmt="txt")
    (tmp_path / "c0.net.bin").write_bytes((tmp_path / "c0.net.bin").read_bytes()[:-3])
    with pytest.raises(StreamFormatError, match="records"):
        read_streams(tmp_path, fmt="bin")


def test_long_waits_use_wait_records(scheduled):
    """Transfers more than 2^32 cycles apart: WAIT records in binary, the same cycles as text."""
    import dataclasses

    _, streams = scheduled
    tr = streams.onchip.transfers
    far = dataclasses.replace(tr, cycle=tr.cycle + np.where(tr.cycle >= np.median(tr.cycle), 2**33, 0),
                              entry=np.full(len(tr), -1), operand=np.full(len(tr), -1))
    moved = dataclasses.replace(streams, onchip=dataclasses.replace(streams.onchip, transfers=far))
    units = {u.name: i for i, u in enumerate(streams.units)}
    for c in range(DATAPATH.cluster.count):
        header, got = decode_network(encode_network(moved, c))
        assert header["records"] > int((far.cluster == c).sum()) or not (far.cycle[far.cluster == c] > 2**32).any()
        assert np.array_equal(got["cycle"], np.sort(far.cycle[far.cluster == c]))
        _, text_cols = parse_network(format_network(moved, c), units)
        assert np.array_equal(text_cols["cycle"], got["cycle"])


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_plan_directory_mutations(scheduled, data, tmp_path_factory):
    """Any damage to the manifest, a unit stream or a network stream of a data-path
    directory reads back or raises a FhecError, never a raw exception."""
    _, streams = scheduled
    out = tmp_path_factory.mktemp("plan")
    write_streams(streams, out)
    manifest = json.loads((out / "manifest.json").read_text())
    what = data.draw(st.sampled_from(["manifest", "unit", "net"]))
    fmt = data.draw(st.sampled_from(["bin", "txt"]))
    key = "binary" if fmt == "bin" else "text"
    if what == "manifest":
        (out / "manifest.json").write_text(data.draw(mutated_json(manifest)))
    else:
        pool = manifest["units"] if what == "unit" else manifest["onchip"]["networks"]
        path = out / data.draw(st.sampled_from(pool))[key]
        if fmt == "bin":
            path.write_bytes(data.draw(mutated_bytes(path.read_bytes())))
        else:
            path.write_text(data.draw(mutated_text(path.read_text())))
    only_fhec_errors(lambda: read_streams(out, fmt=fmt))
