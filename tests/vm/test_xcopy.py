# SPDX-License-Identifier: GPL-2.0
"""EXTENDED COPY (VMware's XCOPY) through sg3-utils on the kernel
initiator's disks: sg_xcopy copies between a fileio and a blockio LUN of one
target and within one LUN, overlapping ranges too, checked byte for byte;
the copy manager describes itself alike in RECEIVE COPY RESULTS, VPD 0x8f
and INQUIRY; a held list identifier's status is given back; and what it
must not do it refuses with the data untouched: a LUN of another target is
unreachable, a read-only LUN is not written, a copy past the end is
aborted."""

import collections
import os
import struct
import threading
import time

import pytest

from vmlib import rawiscsi as ri
from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import Lun, Target, iqn
from vmlib.xcopy import cdb, cscd, naa_in, naa_of, param_list, raw_xcopy, segment, vpd_raw
from vmlib.util import MiB, run, udev_settle

BS = 512
SIZE = 16 * MiB


@pytest.fixture
def disks(ietd, backing, brd, initiator):
    """{name: disk}: a0 (fileio), a1 (blockio on the RAM disk) and a2
    (fileio, read-only) of one target; b0 (fileio) of another."""
    a, b = iqn("xcopy-a"), iqn("xcopy-b")
    ro = backing("a2", SIZE)
    ro.write_bytes(b"\xa2" * SIZE)
    ietd(Target(a, [Lun(0, str(backing("a0", SIZE))),
                    Lun(1, brd.dev, type="blockio"),
                    Lun(2, str(ro), params={"IOMode": "ro"})]),
         Target(b, [Lun(0, str(backing("b0", SIZE)))]))
    sa, sb = initiator.login(a), initiator.login(b)
    udev_settle()
    return {"a0": sa.disk(0), "a1": sa.disk(1), "a2": sa.disk(2), "b0": sb.disk(0)}


def xcopy(src, dst, skip, seek, count, *args):
    """sg_xcopy of count blocks: (exit status, what it printed)."""
    cp = run(["sg_xcopy", f"if={src}", f"of={dst}", f"bs={BS}", f"skip={skip}",
              f"seek={seek}", f"count={count}", "bpt=8192", *args],
             check=False, timeout=300)
    return cp.returncode, cp.stdout + cp.stderr


def test_sg_xcopy_copies_between_luns_and_within_one(disks):
    a0, a1 = disks["a0"], disks["a1"]
    data = os.urandom(6 * MiB + 7 * BS)         # two segments and a bit
    n = len(data) // BS
    pwrite_direct(a0, 1000 * BS, data)
    # The RAM disk behind a1 is shared by the suite: what lies around.
    around = [(a1, 2999), (a1, 3000 + n), (a0, 20000 + n)]
    before = [pread_direct(dev, lba * BS, BS) for dev, lba in around]

    rc, out = xcopy(a0, a1, 1000, 3000, n)       # sent to the destination
    assert rc == 0, out
    assert pread_direct(a1, 3000 * BS, len(data)) == data
    rc, out = xcopy(a1, a0, 3000, 20000, n, "--on_src")
    assert rc == 0, out
    assert pread_direct(a0, 20000 * BS, len(data)) == data
    # What lies around the copies was left alone.
    assert [pread_direct(dev, lba * BS, BS) for dev, lba in around] == before


def tpc_descriptors(page):
    """VPD 0x8f: {type: parameter bytes}, each descriptor 4-byte aligned."""
    assert page[1] == 0x8F
    end = 4 + struct.unpack(">H", page[2:4])[0]
    assert end == len(page), (end, len(page))
    off, descs = 4, {}
    while off < end:
        t, n = struct.unpack(">HH", page[off:off + 4])
        assert (n + 4) % 4 == 0, f"descriptor {t:#x} of {n + 4} bytes"
        descs[t] = page[off:off + 4 + n]
        off += 4 + n
    assert off == end
    return descs


def test_the_copy_manager_describes_itself_alike_everywhere(disks):
    a0 = disks["a0"]
    assert "3PC=1" in run(["sg_inq", a0]).stdout
    params = run(["sg_copy_results", "--params", "--hex", a0]).stdout
    raw = bytes(int(x, 16) for line in params.splitlines()
                for x in line.split()[1:17] if len(x) == 2)
    max_cscd, max_seg = struct.unpack(">HH", raw[8:12])
    max_list, max_seg_len = struct.unpack(">II", raw[12:20])
    codes = raw[44:44 + raw[43]]
    assert (max_cscd, max_seg, max_list) == (8, 16, 1024)
    assert max_seg_len == 16 * MiB
    assert set(codes) == {0x02, 0xE4}

    d = tpc_descriptors(vpd_raw(a0, 0x8F))
    assert set(d) == {0x0001, 0x0004, 0x0008, 0x000C, 0x8001}
    cmds = d[0x0001][5:5 + d[0x0001][4]]
    assert cmds == bytes([0x83, 1, 0x00, 0x84, 2, 0x00, 0x03])
    assert struct.unpack(">HHI", d[0x0004][8:16]) == (max_cscd, max_seg, max_list)
    assert set(d[0x0008][5:5 + d[0x0008][4]]) == set(codes)
    assert struct.unpack(">I", d[0x8001][12:16])[0] == max_seg_len
    # sg3-utils decodes the page without a complaint.
    out = run(["sg_vpd", "--page=tpc", a0]).stdout
    assert "Supported commands" in out or "Supported Commands" in out, out


def test_a_held_list_identifier_gives_its_status(disks):
    a0, a1 = disks["a0"], disks["a1"]
    cp = run(["sg_copy_results", "--status", "--list_id=7", a0], check=False)
    assert cp.returncode != 0, "status of a copy that never ran"
    pwrite_direct(a0, 0, os.urandom(MiB))
    rc, out = xcopy(a0, a1, 0, 0, MiB // BS, "id_usage=hold", "list_id=7")
    assert rc == 0, out
    out = run(["sg_copy_results", "--status", "--list_id=7", a1]).stdout
    assert "completed" in out.lower(), out
    assert pread_direct(a1, 0, MiB) == pread_direct(a0, 0, MiB)


def test_a_copy_overlapping_its_source_copies_the_original(disks, tmp_path):
    """Within one LUN, 4 MiB moved up by 1 MiB and down by 1 MiB: each
    time the destination holds what the source held before the copy."""
    a0 = disks["a0"]
    n = 4 * MiB // BS
    for src, dst in ((4096, 4096 + 2048), (20000, 20000 - 2048)):
        data = os.urandom(4 * MiB)
        pwrite_direct(a0, src * BS, data)
        rc, out = raw_xcopy(a0, [cscd(naa_of(a0))], [segment(0, 0, n, src, dst)], tmp_path)
        assert rc == 0, out
        assert pread_direct(a0, dst * BS, len(data)) == data, (src, dst)


def test_what_it_must_not_copy_is_refused_and_left_alone(disks, tmp_path):
    a0, a2, b0 = disks["a0"], disks["a2"], disks["b0"]
    data = os.urandom(MiB)
    pwrite_direct(a0, 0, data)
    pwrite_direct(b0, 0, bytes(MiB))
    n = MiB // BS

    # It works when sent by hand, so the refusals below are the target's.
    rc, out = raw_xcopy(a0, [cscd(naa_of(a0))], [segment(0, 0, n, 0, 4096)], tmp_path)
    assert rc == 0, out
    assert pread_direct(a0, 4096 * BS, MiB) == data

    # Another target's LUN: the I_T nexus could not reach it, nor can XCOPY,
    # whichever way, whichever LUN the command is sent to.
    for dev, src, dst in ((a0, a0, b0), (a0, b0, a0), (b0, a0, b0)):
        rc, out = raw_xcopy(dev, [cscd(naa_of(src)), cscd(naa_of(dst))],
                            [segment(0, 1, n, 0, 0)], tmp_path)
        assert rc != 0 and "copy aborted" in out.lower(), out
    assert pread_direct(b0, 0, MiB) == bytes(MiB)
    assert pread_direct(a0, 0, MiB) == data

    # A read-only LUN is not written.
    rc, out = raw_xcopy(a0, [cscd(naa_of(a0)), cscd(naa_of(a2))],
                        [segment(0, 1, n, 0, 0)], tmp_path)
    assert rc != 0 and "copy aborted" in out.lower(), out
    assert pread_direct(a2, 0, MiB) == b"\xa2" * MiB

    # Past the end of the destination, in the second segment: the whole
    # list is checked first, so not even the first segment is written.
    blocks = SIZE // BS
    rc, out = raw_xcopy(a0, [cscd(naa_of(a0))],
                        [segment(0, 0, 8, 0, 8192), segment(0, 0, 200, 0, blocks - 100)],
                        tmp_path)
    assert rc != 0 and "copy aborted" in out.lower(), out
    assert pread_direct(a0, 8192 * BS, 8 * BS) == bytes(8 * BS)
    assert pread_direct(a0, (blocks - 100) * BS, 100 * BS) == bytes(100 * BS)

    # A list longer than the copy manager takes is refused before its data.
    rc, out = raw_xcopy(a0, [cscd(naa_of(a0))], [segment(0, 0, 8, 0, 8192)],
                        tmp_path, length=64 * 1024)
    assert rc != 0 and "parameter list length error" in out.lower(), out


COPY_FLOOD_S = 20
COPIES_IN_FLIGHT = 8
# What one 4 KiB write of another session may wait, under emulation, while
# the flood runs: the copies may slow it, never queue it behind them.
WRITE_WITHIN_S = 1.5


def test_a_flood_of_copies_from_one_session_leaves_another_its_writes(ietd, backing):
    """Session A keeps eight EXTENDED COPYs of 256 MiB each in flight (16
    segments of 16 MiB, within LUN 0) for 20 s, with four I/O threads;
    session B writes 4 KiB at a time to LUN 1, whose writes need an I/O
    thread too. A's copies may not hold every thread: B's slowest write
    stays within WRITE_WITHIN_S."""
    name = iqn("xcopy-fair")
    ietd(Target(name, [Lun(0, str(backing("f0", 64 * MiB))),
                       Lun(1, str(backing("f1", 16 * MiB)))], {"Wthreads": 4}))
    a = ri.Connection(name, initiator="iqn.2024-01.com.example.iet:copier", timeout=120)
    a.connect()
    a.login(clear_ua=True)
    b = ri.Connection(name, initiator="iqn.2024-01.com.example.iet:writer", timeout=60)
    b.connect()
    b.login(clear_ua=True)
    vpd = a.execute(ri.cdb_inquiry(255, evpd=True, page=0x83), lun=0, read=True, edtl=255)
    n = 16 * MiB // BS
    plist = param_list([cscd(naa_in(vpd.data))],
                       [segment(0, 0, n, 0, n) for _ in range(16)])

    def copy():
        return a.submit(cdb(len(plist)), lun=0, data=plist, write=True)

    stop = threading.Event()
    slowest, writes = [0.0], [0]

    def writer():
        data = os.urandom(4096)
        while not stop.is_set():
            t0 = time.monotonic()
            r = b.execute(ri.cdb_write10(8, 4096 // BS), lun=1, data=data, timeout=60)
            assert r.status == ri.GOOD, f"B's write: status {r.status:#x}"
            slowest[0] = max(slowest[0], time.monotonic() - t0)
            writes[0] += 1

    statuses = collections.Counter()
    tasks = [copy() for _ in range(COPIES_IN_FLIGHT)]
    t = threading.Thread(target=writer)
    t.start()
    try:
        end = time.monotonic() + COPY_FLOOD_S
        while time.monotonic() < end:
            r = a.wait(tasks.pop(0), 120)
            statuses[r.status] += 1
            tasks.append(copy())
    finally:
        stop.set()
        t.join()
    for task in tasks:
        statuses[a.wait(task, 120).status] += 1
    print(f"copies: {dict(statuses)}; B: {writes[0]} writes, the slowest {slowest[0]:.2f} s")
    assert set(statuses) <= {ri.GOOD, ri.TASK_SET_FULL}, statuses
    assert statuses[ri.GOOD] > 0 and writes[0] > 0
    assert slowest[0] < WRITE_WITHIN_S, f"B's write waited {slowest[0]:.1f} s behind the copies"
    for c in (a, b):
        c.logout()
        c.close()
