# SPDX-License-Identifier: GPL-2.0
"""Backing stores for LUNs: sparse files and brd RAM disks."""

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
    """One brd RAM disk, /dev/ram0, zero-filled once: brd answers reads of
    never-written sectors without a page lookup, which would flatter reads."""

    dev = "/dev/ram0"

    def __init__(self, size=64 * MiB):
        self.size = size

    def create(self):
        assert not Path("/sys/module/brd").exists(), "brd is already loaded"
        run(["modprobe", "brd", "rd_nr=1", f"rd_size={self.size // 1024}", "max_part=0"])
        wait_until(lambda: Path("/sys/block/ram0").exists(), 10, "/sys/block/ram0")
        from .initiator import block_node
        block_node("ram0")
        run(["dd", "if=/dev/zero", f"of={self.dev}", "bs=1M", f"count={self.size // MiB}",
             "oflag=direct", "status=none"], timeout=300)
        return self

    def remove(self):
        if Path("/sys/module/brd").exists():
            run(["rmmod", "brd"], timeout=60)


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


__all__ = ["sparse_file", "Brd", "drop_caches", "blockdev_size", "blockdev_ssz", "sha256",
           "random_file", "util"]
