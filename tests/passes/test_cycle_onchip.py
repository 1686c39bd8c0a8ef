"""The data-path scheduler's two placement steps (fhec.passes.cycle_onchip): the bank
balancing of the scratchpad slots and the lineage home clusters."""

from __future__ import annotations

import dataclasses

import numpy as np

from fhec.backends.target import load_target
from fhec.ir.schedule import Event
from fhec.passes.cycle import schedule_cycles
from fhec.passes.cycle_onchip import balance_banks, lineage_homes
from fhec.passes.offchip import schedule_offchip
from fhec.sim.check import find_hazards

from tests.passes.test_offchip import he_program, replay

F1D = load_target("f1-datapath")
BANKS = F1D.scratchpad.banks


def bank_reads(ds) -> np.ndarray:
    comp = ds.kind == Event.COMPUTE
    reads = np.concatenate([ds.src0_slot[comp], ds.src1_slot[comp]]).astype(np.int64)
    return np.bincount(reads[reads >= 0] % BANKS, minlength=BANKS)


def test_balance_banks_is_a_renaming_that_spreads_the_reads():
    # 8 ciphertexts rotated with one key: every hint slot is read 8 times
    prog = he_program(N=2**12, L=5, method="bv", ops=("rot",), chains=8)
    ds = schedule_offchip(prog, F1D)
    out = balance_banks(ds, BANKS)
    replay(out)  # still a valid data schedule of the program
    assert np.array_equal(out.kind, ds.kind) and np.array_equal(out.arg, ds.arg)
    # one slot name for one slot name, the same in every column
    pairs = {(a, b) for col in ("slot", "src0_slot", "src1_slot")
             for a, b in zip(getattr(ds, col).tolist(), getattr(out, col).tolist())}
    before = {a for a, _ in pairs}
    assert len(pairs) == len(before) == len({b for _, b in pairs})
    assert all((a < 0) == (b < 0) for a, b in pairs)
    # longest processing time first: the busiest bank exceeds the quietest by at most one slot's reads
    comp = ds.kind == Event.COMPUTE
    reads = np.concatenate([ds.src0_slot[comp], ds.src1_slot[comp]]).astype(np.int64)
    heaviest = np.bincount(reads[reads >= 0]).max()
    loads = bank_reads(out)
    assert loads.max() - loads.min() <= heaviest
    assert loads.max() <= bank_reads(ds).max()


def test_balance_banks_spreads_slots_crowded_into_one_bank():
    prog = he_program(N=2**12, L=5, method="bv", ops=("rot",), chains=8)
    ds = schedule_offchip(prog, F1D)
    # crowd the 16 most read slots into bank 0 by swapping names
    comp = ds.kind == Event.COMPUTE
    reads = np.concatenate([ds.src0_slot[comp], ds.src1_slot[comp]]).astype(np.int64)
    hot = np.argsort(-np.bincount(reads[reads >= 0], minlength=ds.slots), kind="stable")[:BANKS]
    perm = np.arange(ds.slots)
    for k, s in enumerate(hot.tolist()):
        target = k * BANKS
        j = int(np.flatnonzero(perm == target)[0])
        perm[[j, s]] = perm[[s, j]]
    def mapped(col):
        col = np.asarray(col, dtype=np.int64)
        return np.where(col >= 0, perm[np.maximum(col, 0)], col)

    crowded = dataclasses.replace(ds, slot=mapped(ds.slot), src0_slot=mapped(ds.src0_slot),
                                  src1_slot=mapped(ds.src1_slot))
    assert bank_reads(crowded).argmax() == 0
    out = balance_banks(crowded, BANKS)
    heaviest = np.bincount(reads[reads >= 0]).max()
    loads = bank_reads(out)
    assert loads.max() - loads.min() <= heaviest
    assert loads.max() < bank_reads(crowded).max()


def test_schedules_with_balanced_banks_pass_the_checker():
    prog = he_program(N=2**12, L=4, method="bv", ops=("mul", "rot"), chains=4)
    s = schedule_cycles(schedule_offchip(prog, F1D), F1D)
    assert find_hazards(s, F1D, prog) == []


def test_lineage_homes_tile_the_clusters_with_the_inputs():
    L, chains = 4, 4
    prog = he_program(N=2**12, L=L, method="bv", ops=("rot",), chains=chains)
    clusters = F1D.cluster.count
    home = lineage_homes(prog, clusters)
    plain = prog.mod.astype(np.int64) % clusters
    # x0..x3 of 4 limbs each start at clusters 0, 4, 8, 12: the rotations use all 16
    assert len(np.unique(plain)) == L
    assert len(np.unique(home)) == clusters
    # an instruction keeps its modulus's cluster up to its ciphertext's offset
    assert np.all((home - plain) % L == 0)


def test_lineage_homes_leave_inputs_that_cover_every_cluster_alone():
    prog = he_program(N=2**12, L=4, method="bv", ops=("rot",), chains=3)
    # 4 limbs on 2 clusters: every input already covers both, so the homes are the moduli's
    assert np.array_equal(lineage_homes(prog, 2), prog.mod.astype(np.int64) % 2)
