# SPDX-License-Identifier: GPL-2.0
"""Backing stores for LUNs: sparse files, brd RAM disks and slow devices."""

import mmap
import os
from pathlib import Path

from . import util
from .util import MiB, run, wait_until


def sparse_file(path, size):
    """A sparse file of size bytes (its blocks are allocated on write)."""
    path = Path(path)
    with open(path, "wb") as f:
        f.truncate(size)
    return path


class Brd:
    """brd RAM disks, /dev/ram0 (and ram1, ... with count), zero-filled
    once: brd answers reads of never-written sectors without a page
    lookup, which would flatter reads."""

    dev = "/dev/ram0"

    def __init__(self, size=64 * MiB, count=1, zero=True):
        self.size = size
        self.devs = [f"/dev/ram{i}" for i in range(count)]
        self.zero = zero

    def create(self):
        assert not Path("/sys/module/brd").exists(), "brd is already loaded"
        run(["modprobe", "brd", f"rd_nr={len(self.devs)}", f"rd_size={self.size // 1024}",
             "max_part=0"])
        from .initiator import block_node
        for dev in self.devs:
            name = Path(dev).name
            wait_until(lambda: Path(f"/sys/block/{name}").exists(), 10, f"/sys/block/{name}")
            block_node(name)
            if not self.zero:
                continue
            run(["dd", "if=/dev/zero", f"of={dev}", "bs=1M", f"count={self.size // MiB}",
                 "oflag=direct", "status=none"], timeout=300)
        return self

    def remove(self):
        if Path("/sys/module/brd").exists():
            run(["rmmod", "brd"], timeout=60)


class SlowWrites:
    """/dev/mapper/NAME over dev, whose writes reach dev as long after they
    are sent as set_write_delay() says (dm-delay), in the order they were
    sent; reads are not held, but for those of the sectors of slow_reads
    ((first, count, ms): away from the ends udev probes). Over a RAM disk,
    with no cache to flush."""

    def __init__(self, name, dev, slow_reads=None):
        self.name = name
        self.dev = dev
        self.slow_reads = slow_reads
        self.path = f"/dev/mapper/{name}"

    def _table(self, ms):
        sectors = int(run(["blockdev", "--getsz", self.dev]).stdout)
        first, count, read_ms = self.slow_reads or (sectors, 0, 0)
        parts = [(0, first, 0), (first, count, read_ms),
                 (first + count, sectors - first - count, 0)]
        return "".join(f"{start} {n} delay {self.dev} {start} {rd} {self.dev} {start} {ms}\n"
                       for start, n, rd in parts if n > 0)

    def create(self):
        run(["modprobe", "dm-delay"])
        run(["dmsetup", "create", self.name], input=self._table(0))
        util.udev_settle()
        return self

    def set_write_delay(self, ms):
        run(["dmsetup", "reload", self.name], input=self._table(ms))
        run(["dmsetup", "resume", self.name])

    def remove(self):
        if Path(self.path).exists():
            run(["dmsetup", "remove", "--retry", self.name], timeout=120)


def pwrite_direct(dev, off, data):
    """Past the initiator's page cache, stable when it returns (O_DIRECT
    wants an aligned buffer: an anonymous mapping is one)."""
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT | os.O_SYNC)
    try:
        with mmap.mmap(-1, len(data)) as m:
            m.write(data)
            assert os.pwrite(fd, m, off) == len(data)
    finally:
        os.close(fd)


def pread_direct(dev, off, n):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        with mmap.mmap(-1, n) as m:
            assert os.preadv(fd, [m], off) == n
            return bytes(m)
    finally:
        os.close(fd)


def drop_caches():
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def blockdev_size(dev):
    return int(run(["blockdev", "--getsize64", dev]).stdout)


def blockdev_ssz(dev):
    return int(run(["blockdev", "--getss", dev]).stdout)


def sha256(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def random_file(path, size):
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(os.urandom(n))
            left -= n
    return Path(path)


__all__ = ["sparse_file", "Brd", "SlowWrites", "pwrite_direct", "pread_direct", "drop_caches", "blockdev_size", "blockdev_ssz", "sha256",
           "random_file", "util"]
