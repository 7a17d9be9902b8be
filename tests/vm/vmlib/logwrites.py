# SPDX-License-Identifier: GPL-2.0
"""device-mapper's log-writes target: every write that reaches a device,
logged in the order the device completed it, flushes and FUA writes marked,
and marks of our own in between (Documentation/admin-guide/device-mapper/
log-writes.rst). A write is logged only once a flush covers it or it was
FUA, so the log up to any entry is what the device would hold after a power
cut at that point, with everything its volatile cache had lost.

The log's format (drivers/md/dm-log-writes.c): a super block at byte 0,
then per entry one block of header (and a mark's name) followed by the
blocks the write carried."""

import struct
from dataclasses import dataclass
from pathlib import Path

from . import util
from .util import run

MAGIC = 0x6a736677736872
FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16
SUPER = struct.Struct("<QQQI")          # magic, version, nr_entries, sectorsize
ENTRY = struct.Struct("<QQQQ")          # sector, nr_sectors, flags, data_len


class LogFormatError(AssertionError):
    pass


@dataclass
class Entry:
    index: int
    flags: int
    sector: int             # in blocks of the log's sectorsize
    nr_sectors: int
    data_at: int            # byte offset of the data in the log
    mark: str | None = None

    def describe(self):
        if self.flags & MARK:
            return f"entry {self.index}: mark {self.mark}"
        what = [n for f, n in ((FLUSH, "flush"), (FUA, "fua"), (DISCARD, "discard"),
                               (METADATA, "meta")) if self.flags & f]
        return f"entry {self.index}: {self.nr_sectors} block(s) at {self.sector} {' '.join(what)}"


def read_log(path):
    """(sectorsize, [Entry]) of the log device or image at path."""
    with open(path, "rb") as f:
        head = f.read(SUPER.size)
        if len(head) < SUPER.size:
            raise LogFormatError(f"{path}: shorter than a super block")
        magic, version, nr, ss = SUPER.unpack(head)
        if magic != MAGIC or version != 1:
            raise LogFormatError(f"{path}: not a log-writes log (magic {magic:#x}, "
                                 f"version {version})")
        if ss < 512 or ss & (ss - 1):
            raise LogFormatError(f"{path}: sector size {ss}")
        entries, pos = [], ss
        for i in range(nr):
            f.seek(pos)
            block = f.read(ss)
            if len(block) < ss:
                raise LogFormatError(f"{path}: entry {i} of {nr} is past the end")
            sector, nr_sectors, flags, data_len = ENTRY.unpack_from(block)
            e = Entry(i, flags, sector, nr_sectors, pos + ss)
            pos += ss
            if flags & MARK:
                if data_len > ss - ENTRY.size:
                    raise LogFormatError(f"{path}: entry {i}: mark of {data_len} bytes")
                e.mark = block[ENTRY.size:ENTRY.size + data_len].rstrip(b"\0").decode()
            elif not flags & DISCARD:
                pos += nr_sectors * ss
            entries.append(e)
        return ss, entries


def replay(log, ss, entries, image):
    """Apply entries, in order, to the open image file (same size as the
    logged device). A discard zeroes its range: what it leaves is not to
    be relied on."""
    for e in entries:
        if e.flags & MARK or not e.nr_sectors:
            continue
        if e.flags & DISCARD:
            image.seek(e.sector * ss)
            image.write(b"\0" * (e.nr_sectors * ss))
            continue
        log.seek(e.data_at)
        data = log.read(e.nr_sectors * ss)
        if len(data) != e.nr_sectors * ss:
            raise LogFormatError(f"{e.describe()}: data past the end of the log")
        image.seek(e.sector * ss)
        image.write(data)


class LogWrites:
    """/dev/mapper/NAME: dev, every write of it logged to logdev."""

    def __init__(self, name, dev, logdev):
        self.name = name
        self.dev = dev
        self.logdev = logdev
        self.path = f"/dev/mapper/{name}"

    def create(self):
        size = int(run(["blockdev", "--getsz", self.dev]).stdout)
        run(["dmsetup", "create", self.name],
            input=f"0 {size} log-writes {self.dev} {self.logdev}\n")
        util.udev_settle()
        return self

    def mark(self, label):
        run(["dmsetup", "message", self.name, "0", "mark", label])

    def status(self):
        return run(["dmsetup", "status", self.name]).stdout.split()

    def remove(self):
        """Removal waits until every pending entry is in the log."""
        if Path(self.path).exists():
            run(["dmsetup", "remove", "--retry", self.name], timeout=120)
