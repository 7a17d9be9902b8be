# SPDX-License-Identifier: GPL-2.0
"""Strict parsers of /proc/net/iet/volume and /proc/net/iet/session.

The formats are IET's, which monitoring scripts and cluster agents match with
regular expressions (COMPAT.md): every line must match exactly one of these,
in its place, or parsing fails.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc/net/iet")
VOLUME = PROC / "volume"
SESSION = PROC / "session"

TID_RE = re.compile(r"^tid:(?P<tid>[1-9]\d*) name:(?P<name>\S+)$")
LUN_RE = re.compile(
    r"^\tlun:(?P<lun>\d+) state:(?P<state>\d+) iotype:(?P<iotype>fileio|blockio|nullio)"
    r" iomode:(?P<iomode>wt|wb|ro) blocks:(?P<blocks>\d+) blocksize:(?P<blocksize>512|1024|2048|4096)"
    r"(?: path:(?P<path>\S.*))?$")
SID_RE = re.compile(r"^\tsid:(?P<sid>\d+) initiator:(?P<initiator>\S+)$")
CONN_RE = re.compile(
    r"^\t\tcid:(?P<cid>\d+) ip:(?P<ip>\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])"
    r" state:(?P<state>active|closing) hd:(?P<hd>none|crc32c) dd:(?P<dd>none|crc32c)$")


class ProcFormatError(AssertionError):
    pass


@dataclass
class Lun:
    lun: int
    state: int
    iotype: str
    iomode: str
    blocks: int
    blocksize: int
    path: str | None


@dataclass
class Conn:
    cid: int
    ip: str
    state: str
    hd: str
    dd: str


@dataclass
class Session:
    sid: int
    initiator: str
    conns: list = field(default_factory=list)

    @property
    def isid(self):
        return self.sid >> 16

    @property
    def tsih(self):
        return self.sid & 0xFFFF


@dataclass
class Target:
    tid: int
    name: str
    luns: list = field(default_factory=list)
    sessions: list = field(default_factory=list)


def _fail(path, n, line, why):
    raise ProcFormatError(f"{path} line {n}: {why}: {line!r}")


def parse_volume(text, path=VOLUME):
    """Targets with their LUNs, in file order."""
    targets = []
    for n, line in enumerate(text.splitlines(), 1):
        if m := TID_RE.match(line):
            targets.append(Target(int(m["tid"]), m["name"]))
        elif m := LUN_RE.match(line):
            if not targets:
                _fail(path, n, line, "LUN line before any tid line")
            if m["iotype"] == "nullio" and m["path"] is not None:
                _fail(path, n, line, "nullio LUN prints a path")
            if m["iotype"] != "nullio" and m["path"] is None:
                _fail(path, n, line, f"{m['iotype']} LUN without a path")
            targets[-1].luns.append(Lun(int(m["lun"]), int(m["state"]), m["iotype"], m["iomode"],
                                        int(m["blocks"]), int(m["blocksize"]), m["path"]))
        else:
            _fail(path, n, line, "not a tid or lun line in IET's format")
    return targets


def parse_session(text, path=SESSION):
    """Targets with their sessions and connections, in file order."""
    targets = []
    for n, line in enumerate(text.splitlines(), 1):
        if m := TID_RE.match(line):
            targets.append(Target(int(m["tid"]), m["name"]))
        elif m := SID_RE.match(line):
            if not targets:
                _fail(path, n, line, "sid line before any tid line")
            targets[-1].sessions.append(Session(int(m["sid"]), m["initiator"]))
        elif m := CONN_RE.match(line):
            if not targets or not targets[-1].sessions:
                _fail(path, n, line, "cid line outside a session")
            targets[-1].sessions[-1].conns.append(
                Conn(int(m["cid"]), m["ip"], m["state"], m["hd"], m["dd"]))
        else:
            _fail(path, n, line, "not a tid, sid or cid line in IET's format")
    return targets


def volumes():
    return parse_volume(VOLUME.read_text())


def sessions():
    return parse_session(SESSION.read_text())


def target(targets, name):
    """The target called name in a parsed list, or None."""
    return next((t for t in targets if t.name == name), None)


def sessions_of(name):
    """The sessions /proc/net/iet/session lists for target `name` ([] if none)."""
    t = target(sessions(), name)
    return t.sessions if t else []
