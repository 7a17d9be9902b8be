# SPDX-License-Identifier: GPL-2.0
"""A file system on an iSCSI disk: make it, fill it, read it back, check it."""

import contextlib
import os
from pathlib import Path

from . import storage
from .util import MiB, run

# name -> size: a mix of a tiny, a block-sized, an odd-sized and a large file.
FILES = {"tiny": 100, "block": 4096, "odd": 3 * MiB + 12345, "large": 16 * MiB}


def mkfs_ext4(dev, eager=False, timeout=300):
    """ext4 on dev; eager: inode tables and journal written now, not by a
    background thread while the file system is in use."""
    extra = ["-E", "lazy_itable_init=0,lazy_journal_init=0"] if eager else []
    run(["mkfs.ext4", "-q", "-F", *extra, dev], timeout=timeout)


@contextlib.contextmanager
def mounted(dev, mnt):
    Path(mnt).mkdir(parents=True, exist_ok=True)
    run(["mount", "-t", "ext4", dev, str(mnt)], timeout=120)
    try:
        yield Path(mnt)
    finally:
        run(["umount", str(mnt)], timeout=300)


def write_files(top, files=FILES):
    """Random files under top; returns {name: sha256}. Flushed to the disk."""
    sums = {}
    for name, size in files.items():
        p = storage.random_file(Path(top) / name, size)
        sums[name] = storage.sha256(p)
    os.sync()
    return sums


def checksums(top, names):
    return {name: storage.sha256(Path(top) / name) for name in names}


def fsck(dev):
    """e2fsck -f -n: the CompletedProcess (0 = clean)."""
    return run(["e2fsck", "-f", "-n", dev], check=False, timeout=300)
