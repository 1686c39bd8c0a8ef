"""The on-chip data path of a schedule: register files, network transfers, bank ports.

A target with ``[register_file]`` and ``[network]`` (`Target.models_onchip`) is scheduled
with F1's on-chip data path (F1 §3, §4.4, §6; docs/scheduling.md, "The on-chip data
path"). Each cluster has ``K = register_file.capacity_bytes // RVec bytes`` registers;
register ``r`` of cluster ``c`` has the flat index ``c * K + r``. Every functional-unit
entry of the `Streams` reads its sources from registers of its own cluster and writes its
result to one (`OnChip.reg`, `OnChip.reg0`, `OnChip.reg1`, aligned with the entries).
Values move between registers and scratchpad slots by *transfers* (`Transfers`), each
holding ports for ``xo = ceil(RVec bytes / network port bytes)`` cycles from its issue
cycle and landing ``network.latency`` cycles after it:

=========  ========================================  =====================================
kind       moves                                     holds, during [t, t + xo)
=========  ========================================  =====================================
FILL       slot -> register of ``cluster``           the cluster's scratchpad->cluster port,
                                                     the slot's bank read port, an RF write
                                                     port of ``cluster`` (from t + latency)
WRITEBACK  register of ``cluster`` -> slot           the cluster's cluster->scratchpad port,
                                                     the slot's bank write port, an RF read
                                                     port
XFER       register of ``src_cluster`` -> register   the receiver's cluster->cluster in-port,
           of ``cluster``                            the sender's out-port, an RF read port
                                                     of the sender, an RF write port of the
                                                     receiver (from t + latency)
=========  ========================================  =====================================

Slot ``s`` lives in bank ``s % scratchpad.banks``. A functional-unit entry holds one RF
read port per source during its read cycles and one RF write port while its result is
written. The scratchpad slot named by a functional-unit entry is the value's home, which
the off-chip schedule reserved; the value reaches it only by a WRITEBACK (loads write
slots as before). `fhec.sim.check` verifies all of it (`fhec.sim.check_onchip`), and
`fhec.sim.streams` executes through the registers.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from fhec.errors import InternalError

__all__ = ["TransferKind", "Transfers", "OnChip"]


class TransferKind(enum.IntEnum):
    """What a transfer moves (see the module docstring)."""

    FILL = 0
    WRITEBACK = 1
    XFER = 2


_TRANSFER_COLUMNS = ("kind", "cycle", "cluster", "reg", "src_cluster", "src_reg", "slot", "value", "entry", "operand")


def _ro(a) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(a, dtype=np.int64)).view()
    arr.flags.writeable = False
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class Transfers:
    """Network transfers, one row each (int64 columns; -1 = not applicable).

    ``kind`` a `TransferKind`; ``cycle`` its issue cycle; ``cluster`` the receiving
    cluster (FILL, XFER) or the sending one (WRITEBACK); ``reg`` the flat register a
    WRITEBACK reads; ``src_cluster``/``src_reg`` the sender of an XFER; ``slot`` the
    scratchpad slot read (FILL) or written (WRITEBACK); ``value`` the rvec moved. A FILL or
    XFER streams an operand straight into a functional unit: ``entry`` is that stream
    entry and ``operand`` its source (0, 1, or 2 for both when they are the same value).
    """

    kind: np.ndarray
    cycle: np.ndarray
    cluster: np.ndarray
    reg: np.ndarray
    src_cluster: np.ndarray
    src_reg: np.ndarray
    slot: np.ndarray
    value: np.ndarray
    entry: np.ndarray
    operand: np.ndarray

    def __post_init__(self) -> None:
        for name in _TRANSFER_COLUMNS:
            object.__setattr__(self, name, _ro(getattr(self, name)))
        n = len(self.kind)
        if any(len(getattr(self, k)) != n for k in _TRANSFER_COLUMNS):
            raise InternalError("Transfers: columns differ in length")

    @classmethod
    def from_table(cls, table: np.ndarray) -> Transfers:
        """From an (n, 10) array whose columns are in the field order."""
        return cls(*(table[:, j] for j in range(len(_TRANSFER_COLUMNS))))

    def __len__(self) -> int:
        return len(self.kind)

    def counts(self) -> dict[str, int]:
        """Transfers per kind, by lower-case name."""
        c = np.bincount(self.kind, minlength=len(TransferKind))
        return {k.name.lower(): int(c[k]) for k in TransferKind}


@dataclasses.dataclass(frozen=True, eq=False)
class OnChip:
    """The on-chip part of a schedule: registers per stream entry and the transfers.

    ``registers`` is K, the registers per cluster at the streams' N; ``reg``, ``reg0``,
    ``reg1`` (aligned with the `Streams` entries; -1 for memory entries, absent sources
    and sources streamed by a transfer) are the flat registers an entry writes and reads.
    """

    registers: int
    reg: np.ndarray
    reg0: np.ndarray
    reg1: np.ndarray
    transfers: Transfers

    def __post_init__(self) -> None:
        for name in ("reg", "reg0", "reg1"):
            object.__setattr__(self, name, _ro(getattr(self, name)))
        if not len(self.reg) == len(self.reg0) == len(self.reg1):
            raise InternalError("OnChip: register columns differ in length")

    def take(self, index: np.ndarray) -> OnChip:
        """The plan of entries `index` (a mask or an index array) in that order, for
        `Streams.select` and re-sorting: the register columns follow, and each
        transfer's ``entry`` is renumbered (-1 if its entry is dropped)."""
        index = np.asarray(index)
        picked = np.flatnonzero(index) if index.dtype == bool else index.astype(np.int64)
        new_of = np.full(len(self.reg), -1, dtype=np.int64)
        new_of[picked] = np.arange(len(picked))
        tr = self.transfers
        entry = np.where(tr.entry >= 0, new_of[np.clip(tr.entry, 0, max(len(new_of) - 1, 0))], -1) \
            if len(new_of) else np.full(len(tr), -1)
        return dataclasses.replace(self, reg=self.reg[picked], reg0=self.reg0[picked], reg1=self.reg1[picked],
                                   transfers=dataclasses.replace(tr, entry=entry))
