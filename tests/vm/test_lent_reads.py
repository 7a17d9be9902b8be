# SPDX-License-Identifier: GPL-2.0
"""Reads served from pages the backend lends instead of copies: fileio's
page-cache pages, nullio's one page of zeros (iet_backend_ops.lend).

Lent pages are shared with everything else that uses them: the data sent
must be what the page cache holds when the read runs, reads that cannot be
lent (not on a page boundary, not all cached, a digest) must still be
right, the shared page of zeros must never take a write, and every page a
read borrowed must be given back (a page still referenced cannot leave the
page cache, which mincore(2) shows)."""

import ctypes
import os

import pytest

from vmlib import rawiscsi as ri
from vmlib.rawiscsi import Connection
from vmlib.target import Lun, Target, iqn
from vmlib.util import KiB, MiB, wait_until

pytestmark = pytest.mark.paths

ANSWER_S = 10
FILE_SIZE = 16 * MiB


@pytest.fixture
def lent(ietd, backing):
    """A target with LUN 0 nullio and LUN 1 fileio on a file; yields
    (connect, path of LUN 1's file)."""
    name = iqn("lent")
    path = backing("lun1", FILE_SIZE)
    ietd(Target(name, [Lun(0, None, "nullio"), Lun(1, str(path))],
                {"DataDigest": "None,CRC32C"}))
    conns = []

    def connect(**keys):
        c = Connection(name, timeout=ANSWER_S).connect()
        conns.append(c)
        c.login(keys or None)
        return c

    yield connect, path
    for c in conns:
        c.reset()


def read(c, lun, off, size, bs):
    r = c.execute(ri.cdb_read10(off // bs, size // bs), lun=lun, read=True, edtl=size,
                  timeout=ANSWER_S)
    assert r.status == ri.GOOD, \
        f"READ of {size} at {off} of LUN {lun}: status {r.status:#x} {r.sense_triple}"
    assert len(r.data) == size, f"READ of {size} at {off}: {len(r.data)} bytes"
    return r.data


def write(c, lun, off, data, bs):
    r = c.execute(ri.cdb_write10(off // bs, len(data) // bs), lun=lun, data=data,
                  timeout=ANSWER_S)
    assert r.status == ri.GOOD, f"WRITE at {off} of LUN {lun}: status {r.status:#x}"


LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PROT_READ, MAP_SHARED, MAP_FAILED = 1, 1, ctypes.c_void_p(-1).value


def resident(path, size):
    """Bytes of the first size of path (a block device too) in the page
    cache: mincore(2) of a mapping of it."""
    page = os.sysconf("SC_PAGE_SIZE")
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = LIBC.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
        assert addr not in (None, MAP_FAILED), f"mmap: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    try:
        vec = (ctypes.c_ubyte * (size // page))()
        assert LIBC.mincore(addr, size, vec) == 0, f"mincore: {os.strerror(ctypes.get_errno())}"
        return sum(v & 1 for v in vec) * page
    finally:
        LIBC.munmap(addr, size)


def drop_cache(path):
    """What of path's page cache nobody else holds leaves it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_nullio_reads_zeros_whatever_was_written(lent):
    """Writes vanish and reads are zeros: of every size, on a page boundary
    or not, after writes of other data (a write that reached the page of
    zeros every read shares would show in all of them)."""
    connect, _ = lent
    c = connect()
    bs = c.block_size(0, timeout=ANSWER_S)
    write(c, 0, 0, b"\xa5" * MiB, bs)
    for off, size in ((0, 4 * KiB), (0, MiB), (bs, 128 * KiB + bs), (8 * MiB, 8 * MiB)):
        assert read(c, 0, off, size, bs) == bytes(size), \
            f"nullio READ of {size} at {off} returned other data than zeros"


@pytest.mark.parametrize("digest", ["None", "CRC32C"])
def test_fileio_reads_follow_what_the_page_cache_holds(lent, digest):
    """A read returns what the file holds when it runs: what the
    initiator wrote, then what was written to the file behind the
    target's back, then the same with part of it out of the cache; a read
    not on a page boundary too. With a data digest reads copy, and must
    be as right."""
    connect, path = lent
    c = connect(DataDigest=digest)
    assert c.params.get("DataDigest") == digest, c.params
    bs = c.block_size(1, timeout=ANSWER_S)
    size = 128 * KiB
    first = os.urandom(size)
    write(c, 1, MiB, first, bs)
    assert read(c, 1, MiB, size, bs) == first
    assert read(c, 1, MiB, size, bs) == first, "a second, cached READ returned other data"
    second = os.urandom(size)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, second, MiB)
        assert read(c, 1, MiB, size, bs) == second, \
            "READ after a write to the file behind the target returned the old data"
        os.fdatasync(fd)
        os.posix_fadvise(fd, MiB + size // 2, size // 4, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert read(c, 1, MiB, size, bs) == second, "READ of partly cached pages returned other data"
    if bs < 4096:
        assert read(c, 1, MiB + bs, size - bs, bs) == second[bs:], \
            "READ not on a page boundary returned other data"


def test_fileio_read_after_the_file_shrank_is_an_error_then_zeros(lent):
    """The file cut under the target (its pages leave the cache): a read
    past the new end is an error, never the old cached data; once the file
    grows again that range is a hole and reads as zeros."""
    connect, path = lent
    c = connect()
    bs = c.block_size(1, timeout=ANSWER_S)
    size = 128 * KiB            # lent while cached
    old = os.urandom(size)
    write(c, 1, 8 * MiB, old, bs)
    assert read(c, 1, 8 * MiB, size, bs) == old
    os.truncate(path, 4 * MiB)
    try:
        r = c.execute(ri.cdb_read10(8 * MiB // bs, size // bs), lun=1, read=True, edtl=size,
                      timeout=ANSWER_S)
        assert r.status == ri.CHECK_CONDITION, \
            f"READ past the end of the shrunk file: status {r.status:#x}, not CHECK CONDITION"
        assert r.sense_triple[0] == 0x03, f"sense {r.sense_triple}: not MEDIUM ERROR"
    finally:
        os.truncate(path, FILE_SIZE)
    assert read(c, 1, 8 * MiB, size, bs) == bytes(size), \
        "READ of the regrown file returned its old data, not the hole's zeros"


def test_every_lent_page_is_given_back(ietd, brd):
    """Pages a read borrowed are referenced until its Data-In is sent: once
    the reads are over none may still be, and all of them can leave the
    page cache (a page still referenced cannot). On a block device, whose
    page cache, unlike /tmp's, can be dropped."""
    name = iqn("lent-back")
    ietd(Target(name, [Lun(0, brd.dev)]))
    c = Connection(name, timeout=ANSWER_S).connect()
    size = 16 * MiB
    try:
        c.login()
        bs = c.block_size(0, timeout=ANSWER_S)
        data = os.urandom(size)
        for off in range(0, size, MiB):
            write(c, 0, off, data[off:off + MiB], bs)
        for _ in range(3):
            for off in range(0, size, 256 * KiB):
                assert read(c, 0, off, 256 * KiB, bs) == data[off:off + 256 * KiB]
        assert resident(brd.dev, size) == size, "the reads were not served from the page cache"
        assert c.logout(timeout=ANSWER_S).response == ri.LOGOUT_SUCCESS
        c.close()
        left = []

        def gone():
            drop_cache(brd.dev)
            left.append(resident(brd.dev, size))
            return left[-1] == 0
        wait_until(gone, 10, lambda: f"{brd.dev}'s pages to leave the page cache (still "
                   f"{left[-1]} bytes: references lent to reads were kept)")
    finally:
        c.reset()
        # Others take the RAM disk for zeros.
        fd = os.open(brd.dev, os.O_WRONLY)
        try:
            os.pwrite(fd, bytes(size), 0)
            os.fdatasync(fd)
        finally:
            os.close(fd)
