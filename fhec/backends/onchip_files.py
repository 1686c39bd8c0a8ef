"""The network streams of an on-chip plan on disk: one per cluster, text and binary.

F1 gives "every functional unit, register file, network switch, scratchpad bank and
memory controller" its own static stream (F1 §3). On a target that models the on-chip
data path (`fhec.backends.onchip`), `fhec.backends.stream_files.write_streams` writes,
besides each unit's stream (whose entries then also name their registers), one network
stream per cluster: every transfer that cluster's three crossbar ports carry, in cycle
order (a FILL on its scratchpad->cluster port, a WRITEBACK on its cluster->scratchpad
port, an XFER on its cluster->cluster in-port; the sender's out-port is named by the
XFER's source). ``docs/isa.md`` ("On-chip data path") is the full specification.

Text (``c<k>.net.txt``), one line per transfer::

    # fhec-network v1 target=f1-datapath cluster=0 registers=8 N=16384 slots=1024 transfers=3
    #     cycle      wait  kind       operands
            12       +12  FILL       r3 <- s40                  ; v17 -> c0.mul1@16.1
           140      +128  XFER       r4 <- c5.r2                ; v23 -> c0.ntt0@144.0
           300      +160  WRITEBACK  s41 <- r3                  ; v30

``rK`` a register of this cluster (``cJ.rK`` one of cluster J), ``sK`` a scratchpad
slot, ``vK`` the rvec moved. A FILL or XFER that streams an operand straight into a
functional unit names that entry as ``unit@cycle.operand`` (operand 0, 1, or 2 when it
feeds both); its register is ``-`` when the value lands in no register.

Binary (``c<k>.net.bin``), little-endian: a 32-byte header (magic ``FHECNETW``, version,
flags, records, N, slots, cluster, registers), then 28-byte records::

    wait u32 | kind u8 (7 = WAIT: wait carries 2^32 - 1 cycles at most) | operand i8 |
    unit i16 | reg i32 | src i32 | value i32 | entry_delta i32

``src`` is the slot (FILL, WRITEBACK) or the sender's flat register (XFER); ``unit`` and
``entry_delta`` (the entry's cycle minus the transfer's) name the entry a transfer streams
into (-1 when none). Both forms read back into identical `Transfers` rows
(`read_network`), up to the order of transfers issued in one cycle by different clusters.
"""

from __future__ import annotations

import re
import struct

import numpy as np

from fhec.backends.onchip import TransferKind, Transfers
from fhec.backends.streams import Streams
from fhec.errors import FhecError

__all__ = ["NETWORK_VERSION", "format_network", "parse_network", "encode_network", "decode_network",
           "network_columns", "transfers_from_columns", "NetworkFormatError"]

NETWORK_VERSION = 1
_MAGIC = b"FHECNETW"
_HEADER = struct.Struct("<8sHHIIIII")  # magic, version, flags, records, N, slots, cluster, registers
_RECORD = np.dtype([("wait", "<u4"), ("kind", "u1"), ("operand", "i1"), ("unit", "<i2"), ("reg", "<i4"),
                    ("src", "<i4"), ("value", "<i4"), ("entry_delta", "<i4")])
_WAIT = 7
_U32 = 0xFFFFFFFF
_COLUMNS = ("kind", "cycle", "reg", "src_cluster", "src_reg", "slot", "value", "unit", "entry_cycle", "operand")
"""One cluster's transfers as `network_columns` gives them: the `Transfers` fields, with
the entry named by its unit and cycle instead of its index in the streams."""


class NetworkFormatError(FhecError):
    """A network stream file is malformed, or a plan cannot be encoded."""


def network_columns(streams: Streams, cluster: int) -> dict[str, np.ndarray]:
    """The transfers of `cluster` (the receiver of a FILL or XFER, the sender of a
    WRITEBACK) in issue order, as columns `_COLUMNS` (registers flat)."""
    tr = streams.onchip.transfers
    mine = np.flatnonzero(tr.cluster == cluster)
    mine = mine[np.argsort(tr.cycle[mine], kind="stable")]
    entry = tr.entry[mine]
    has = entry >= 0
    safe = np.where(has, entry, 0)
    return {
        "kind": tr.kind[mine], "cycle": tr.cycle[mine], "reg": tr.reg[mine], "src_cluster": tr.src_cluster[mine],
        "src_reg": tr.src_reg[mine], "slot": tr.slot[mine], "value": tr.value[mine],
        "unit": np.where(has, streams.unit[safe], -1) if len(streams) else np.full(len(mine), -1),
        "entry_cycle": np.where(has, streams.cycle[safe], -1) if len(streams) else np.full(len(mine), -1),
        "operand": tr.operand[mine],
    }


def transfers_from_columns(streams: Streams, parts: list[tuple[int, dict[str, np.ndarray]]]) -> Transfers:
    """The `Transfers` of `streams` from each cluster's columns (as `network_columns`
    gives them), their entries found by unit and cycle. Raises NetworkFormatError for a
    transfer naming an entry the streams do not have."""
    if not parts:
        return Transfers(*(np.zeros(0, dtype=np.int64) for _ in range(10)))
    cols = {k: np.concatenate([p[k] for _, p in parts]) for k in _COLUMNS}
    checks = (
        ("an unknown kind", (cols["kind"] < 0) | (cols["kind"] >= len(TransferKind))),
        ("a register, slot or value below -1",
         (cols["reg"] < -1) | (cols["src_reg"] < -1) | (cols["slot"] < -1) | (cols["value"] < -1)),
        ("an operand other than 0, 1, 2 (or -1 with no entry)",
         (cols["operand"] < -1) | (cols["operand"] > 2) | ((cols["unit"] >= 0) != (cols["operand"] >= 0))),
        ("a negative cycle", cols["cycle"] < 0),
    )
    for what, bad in checks:
        if bad.any():
            k = int(np.argmax(bad))
            raise NetworkFormatError(f"transfer at cycle {int(cols['cycle'][k])} has {what}")
    cluster = np.concatenate([np.full(len(p["kind"]), c, dtype=np.int64) for c, p in parts])
    order = np.argsort(cols["cycle"], kind="stable")
    cols = {k: v[order] for k, v in cols.items()}
    cluster = cluster[order]
    entry = np.full(len(cluster), -1, dtype=np.int64)
    named = cols["unit"] >= 0
    if named.any():
        # entries are sorted by (unit, cycle) and a unit issues at most one entry per cycle
        span = int(max(streams.cycle.max(initial=0), cols["entry_cycle"].max(initial=0))) + 1
        if span > 2**62 // (len(streams.units) + 1):
            raise NetworkFormatError(f"a transfer names an entry at cycle {span - 1}, beyond any schedule")
        keys = streams.unit.astype(np.int64) * span + streams.cycle
        want = cols["unit"][named] * span + cols["entry_cycle"][named]
        at = np.searchsorted(keys, want)
        found = (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == want)
        if not found.all():
            k = int(np.flatnonzero(named)[np.argmin(found)])
            raise NetworkFormatError(
                f"a transfer of cluster {int(cluster[k])} at cycle {int(cols['cycle'][k])} streams into an entry of "
                f"unit {int(cols['unit'][k])} at cycle {int(cols['entry_cycle'][k])}, which the unit streams do not have")
        entry[named] = at
    return Transfers(kind=cols["kind"], cycle=cols["cycle"], cluster=cluster, reg=cols["reg"],
                     src_cluster=cols["src_cluster"], src_reg=cols["src_reg"], slot=cols["slot"],
                     value=cols["value"], entry=entry, operand=cols["operand"])


# --- text --------------------------------------------------------------------------------------

_KINDS = {k.name: int(k) for k in TransferKind}


def _reg(flat: int, K: int, cluster: int) -> str:
    if flat < 0:
        return "-"
    c, r = divmod(flat, K)
    return f"r{r}" if c == cluster else f"c{c}.r{r}"


def format_network(streams: Streams, cluster: int) -> str:
    """The text form of `cluster`'s network stream (layout in the module docstring)."""
    K = streams.onchip.registers
    cols = network_columns(streams, cluster)
    n = len(cols["kind"])
    lines = [
        f"# fhec-network v{NETWORK_VERSION} target={streams.target} cluster={cluster} registers={K} "
        f"N={streams.N} slots={streams.slots} transfers={n}",
        f"# {'cycle':>9} {'wait':>9}  {'kind':<10} operands",
    ]
    prev = 0
    rows = zip(*(cols[k].tolist() for k in _COLUMNS))
    for kind, cyc, reg, src_c, src_r, slot, value, unit, ecyc, operand in rows:
        if kind == TransferKind.FILL:
            body = f"{_reg(reg, K, cluster)} <- s{slot}"
        elif kind == TransferKind.WRITEBACK:
            body = f"s{slot} <- {_reg(reg, K, cluster)}"
        else:  # the sender is always named with its cluster
            body = f"{_reg(reg, K, cluster)} <- " + ("c{}.r{}".format(*divmod(src_r, K)) if src_r >= 0 else "-")
        into = f" -> {streams.units[unit].name}@{ecyc}.{operand}" if unit >= 0 else ""
        lines.append(f"  {cyc:>9} {'+' + str(cyc - prev):>9}  {TransferKind(kind).name:<10} {body:<26} ; v{value}{into}")
        prev = cyc
    return "\n".join(lines) + "\n"


_REG = re.compile(r"^(?:c([0-9]{1,9})\.)?r([0-9]{1,9})$")


def _number(token: str, prefix: str, no: int) -> int:
    if not token.startswith(prefix) or not re.fullmatch(r"[0-9]{1,18}", token[len(prefix):]):
        raise NetworkFormatError(f"line {no}: expected {prefix}<number>, got {token!r}")
    return int(token[len(prefix):])


def _parse_reg(token: str, K: int, cluster: int, no: int) -> int:
    if token == "-":
        return -1
    m = _REG.match(token)
    if not m:
        raise NetworkFormatError(f"line {no}: expected a register rK or cJ.rK, got {token!r}")
    c = cluster if m.group(1) is None else int(m.group(1))
    r = int(m.group(2))
    if r >= K:
        raise NetworkFormatError(f"line {no}: register {token} outside the {K} registers of a cluster")
    return c * K + r


def parse_network(text: str, units: dict[str, int]) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Parse one text network stream: ``(header fields, columns)``, units named in it
    resolved through `units` (name -> index). Raises NetworkFormatError naming the line of
    any malformed transfer, and when the header's ``transfers=`` disagrees with the lines."""
    header: dict[str, str] = {}
    rows = []
    prev = 0
    K = cluster = None
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not header and "fhec-network" in line:
                header = dict(tok.split("=", 1) for tok in line[1:].split() if "=" in tok)
                try:
                    K, cluster = int(header["registers"]), int(header["cluster"])
                except (KeyError, ValueError):
                    raise NetworkFormatError(f"line {no}: the header needs integer registers= and cluster=") from None
                if K < 1 or cluster < 0:
                    raise NetworkFormatError(f"line {no}: registers={K}, cluster={cluster} out of range")
            continue
        if K is None:
            raise NetworkFormatError(f"line {no}: a transfer before the '# fhec-network' header")
        body, _, tail = line.partition(";")
        toks = body.split()
        if len(toks) != 6 or toks[4] != "<-":
            raise NetworkFormatError(f"line {no}: expected 'cycle +wait KIND dst <- src', got {raw!r}")
        cyc = _number(toks[0], "", no)
        if _number(toks[1], "+", no) != cyc - prev:
            raise NetworkFormatError(f"line {no}: wait {toks[1]} disagrees with cycles {prev} -> {cyc}")
        prev = cyc
        if toks[2] not in _KINDS:
            raise NetworkFormatError(f"line {no}: unknown transfer kind {toks[2]!r}")
        kind = _KINDS[toks[2]]
        reg = src_c = src_r = slot = -1
        if kind == TransferKind.FILL:
            reg, slot = _parse_reg(toks[3], K, cluster, no), _number(toks[5], "s", no)
        elif kind == TransferKind.WRITEBACK:
            slot, reg = _number(toks[3], "s", no), _parse_reg(toks[5], K, cluster, no)
        else:
            reg, src_r = _parse_reg(toks[3], K, cluster, no), _parse_reg(toks[5], K, cluster, no)
            src_c = src_r // K if src_r >= 0 else -1
        parts = tail.split()
        if not parts:
            raise NetworkFormatError(f"line {no}: missing '; vK' (the value moved)")
        value = _number(parts[0], "v", no)
        unit = ecyc = operand = -1
        if len(parts) == 3 and parts[1] == "->":
            m = re.fullmatch(r"(.+)@([0-9]{1,18})\.([0-2])", parts[2])
            if not m or m.group(1) not in units:
                raise NetworkFormatError(f"line {no}: expected '-> unit@cycle.operand' naming a unit, got {parts[2]!r}")
            unit, ecyc, operand = units[m.group(1)], int(m.group(2)), int(m.group(3))
        elif len(parts) != 1:
            raise NetworkFormatError(f"line {no}: expected '; vK' or '; vK -> unit@cycle.operand', got {tail!r}")
        rows.append((kind, cyc, reg, src_c, src_r, slot, value, unit, ecyc, operand))
    if K is None:
        raise NetworkFormatError("no '# fhec-network' header")
    if not re.fullmatch(r"[0-9]{1,18}", header.get("transfers", "0")):
        raise NetworkFormatError(f"header field transfers={header['transfers']!r} is not a count")
    if int(header.get("transfers", len(rows))) != len(rows):
        raise NetworkFormatError(f"header says transfers={header['transfers']}, but the stream has {len(rows)}")
    arr = np.array(rows, dtype=np.int64).reshape(-1, len(_COLUMNS))
    return header, {k: arr[:, i] for i, k in enumerate(_COLUMNS)}


# --- binary ------------------------------------------------------------------------------------


def _fits32(v: np.ndarray, what: str) -> np.ndarray:
    if len(v) and (v.max() > 2**31 - 1 or v.min() < -1):
        raise NetworkFormatError(f"network field {what} does not fit 32 bits")
    return v


def encode_network(streams: Streams, cluster: int) -> bytes:
    """The binary form of `cluster`'s network stream (layout in the module docstring)."""
    K = streams.onchip.registers
    cols = network_columns(streams, cluster)
    n = len(cols["kind"])
    wait = np.diff(cols["cycle"], prepend=0)
    rec = np.zeros(n, dtype=_RECORD)
    rec["kind"] = cols["kind"]
    rec["operand"] = cols["operand"]
    rec["unit"] = cols["unit"]
    rec["reg"] = _fits32(cols["reg"], "reg")
    rec["src"] = _fits32(np.where(cols["kind"] == TransferKind.XFER, cols["src_reg"], cols["slot"]), "src")
    rec["value"] = _fits32(cols["value"], "value")
    rec["entry_delta"] = _fits32(np.where(cols["unit"] >= 0, cols["entry_cycle"] - cols["cycle"], -1), "entry")
    long_wait = wait > _U32
    rec["wait"] = np.where(long_wait, 0, wait)
    if long_wait.any():  # each long wait becomes WAIT records before its transfer
        parts, prev = [], 0
        for k in np.flatnonzero(long_wait).tolist():
            parts.append(rec[prev:k])
            left = int(wait[k])
            while left:
                w = np.zeros(1, dtype=_RECORD)
                w["kind"], w["wait"] = _WAIT, min(left, _U32)
                parts.append(w)
                left -= int(w["wait"][0])
            prev = k
        parts.append(rec[prev:])
        rec = np.concatenate(parts)
    header = _HEADER.pack(_MAGIC, NETWORK_VERSION, 0, len(rec), streams.N, streams.slots, cluster, K)
    return header + rec.tobytes()


def decode_network(data: bytes) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Decode one binary network stream: ``(header fields, columns)``. Raises
    NetworkFormatError for a bad magic, version or length, or an unknown kind."""
    if len(data) < _HEADER.size:
        raise NetworkFormatError("network file shorter than its header")
    magic, version, flags, count, N, slots, cluster, K = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise NetworkFormatError(f"not an fhec network stream (magic {magic!r})")
    if version != NETWORK_VERSION or flags:
        raise NetworkFormatError(f"network format version {version} flags {flags:#x}; this fhec reads version "
                                 f"{NETWORK_VERSION} without flags")
    if K < 1:
        raise NetworkFormatError(f"header registers = {K}; a cluster has at least one register")
    if len(data) != _HEADER.size + count * _RECORD.itemsize:
        raise NetworkFormatError(f"network file is {len(data)} bytes; its header promises {count} records")
    rec = np.frombuffer(data, dtype=_RECORD, count=count, offset=_HEADER.size)
    kind = rec["kind"].astype(np.int64)
    cycle = np.cumsum(rec["wait"].astype(np.int64))
    keep = kind != _WAIT
    rec, kind, cycle = rec[keep], kind[keep], cycle[keep]
    if np.any(kind >= len(TransferKind)):
        raise NetworkFormatError(f"unknown transfer kind {int(kind.max())}")
    src = rec["src"].astype(np.int64)
    xfer = kind == TransferKind.XFER
    unit = rec["unit"].astype(np.int64)
    cols = {
        "kind": kind, "cycle": cycle, "reg": rec["reg"].astype(np.int64),
        "src_cluster": np.where(xfer & (src >= 0), src // K, -1), "src_reg": np.where(xfer, src, -1),
        "slot": np.where(xfer, -1, src), "value": rec["value"].astype(np.int64), "unit": unit,
        "entry_cycle": np.where(unit >= 0, cycle + rec["entry_delta"], -1), "operand": rec["operand"].astype(np.int64),
    }
    return {"N": N, "slots": slots, "cluster": cluster, "registers": K, "records": count}, cols
