# SPDX-License-Identifier: GPL-2.0
"""COMPARE AND WRITE (VMware's ATS) and ORWRITE through sg3-utils on the
kernel initiator's disks, several sessions to one LUN: a match writes and a
miscompare does not and says where; two sessions racing on one block,
exactly one wins; the VMFS heartbeat pattern loses no update while another
session writes elsewhere; and a WRITE to the block a COMPARE AND WRITE is
working on is never lost under it, whichever session sends it."""

import os
import struct
import subprocess
import threading
import time

import pytest

from vmlib import fio
from vmlib import initiator as ini
from vmlib.storage import SlowWrites, pread_direct, pwrite_direct
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, RESULTS, run, udev_settle

BS = 512
MISCOMPARE_EXIT = 14        # sg3-utils' SG_LIB_CAT_MISCOMPARE
IFACES = [f"caw{i}" for i in range(3)]


@pytest.fixture
def sessions(iscsid):
    """sessions(target, n): LUN 0's disk in each of n sessions to target,
    one per iface record; all logged out at the end."""
    with ini.iface_logins(IFACES) as login:
        yield login


def fileio_lun(ietd, backing, name):
    target = iqn(name)
    ietd(Target(target, [Lun(0, str(backing(name, 16 * MiB)))]))
    return target


def caw_command(dev, lba, compare, write, tmp_path):
    f = tmp_path / f"caw-{threading.get_ident()}-{time.monotonic_ns()}"
    f.write_bytes(compare + write)
    return ["sg_compare_and_write", f"--in={f}", f"--lba={lba}", "--num=1",
            f"--xferlen={2 * BS}", dev]


def caw(dev, lba, compare, write, tmp_path):
    """(exit status, output) of one COMPARE AND WRITE of one block."""
    cp = run(caw_command(dev, lba, compare, write, tmp_path), check=False)
    return cp.returncode, cp.stdout + cp.stderr


def block(fill):
    return bytes([fill]) * BS


def test_compare_and_write_writes_on_a_match_only(ietd, backing, sessions, tmp_path):
    disk, = sessions(fileio_lun(ietd, backing, "caw-match"), 1)
    run(write16_command(disk, 7, block(0xa5), tmp_path))

    rc, out = caw(disk, 7, block(0xa5), block(0x5a), tmp_path)
    assert rc == 0, out
    assert pread_direct(disk, 7 * BS, BS) == block(0x5a)

    expected = bytearray(block(0x5a))
    expected[100] ^= 0xff
    rc, out = caw(disk, 7, bytes(expected), block(0x11), tmp_path)
    assert rc == MISCOMPARE_EXIT, out
    assert "Miscompare at byte offset: 100 " in out, out
    assert pread_direct(disk, 7 * BS, BS) == block(0x5a), "a miscompare wrote"


def test_two_sessions_racing_on_one_block_exactly_one_wins(ietd, backing, sessions, tmp_path):
    a, b = sessions(fileio_lun(ietd, backing, "caw-race"), 2)
    for r in range(12):
        old = block(r)
        pwrite_direct(a, 0, old)
        procs = [subprocess.Popen(caw_command(d, 0, old, block(0x80 | i << 4 | r), tmp_path),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for i, d in enumerate((a, b))]
        rcs = [p.wait(120) for p in procs]
        outs = [p.stdout.read() for p in procs]
        assert sorted(rcs) == [0, MISCOMPARE_EXIT], f"round {r}: {rcs} {outs}"
        winner = rcs.index(0)
        assert pread_direct(b, 0, BS) == block(0x80 | winner << 4 | r), f"round {r}"


def heartbeat(dev, tmp_path, me, rounds, errors):
    """VMFS's pattern: read the heartbeat block, ATS it from what was read
    to the next count (with our mark), retry on a miscompare. Returns the
    number of updates this one made."""
    wins = 0
    try:
        for _ in range(rounds):
            for _attempt in range(200):
                cur = pread_direct(dev, 0, BS)
                count, = struct.unpack_from("<Q", cur)
                new = struct.pack("<QQ", count + 1, me).ljust(BS, b"\0")
                rc, out = caw(dev, 0, cur, new, tmp_path)
                if rc == 0:
                    wins += 1
                    break
                assert rc == MISCOMPARE_EXIT, out
            else:
                raise AssertionError(f"session {me}: 200 miscompares in a row")
    except Exception as e:      # noqa: BLE001 -- reported by the test
        errors.append(e)
    return wins


@pytest.mark.short
def test_heartbeats_of_two_sessions_lose_no_update(ietd, backing, sessions, tmp_path):
    """Two sessions ATS one block in turn while a third writes elsewhere
    (fio, verified): the count in the block is every update made."""
    a, b, c = sessions(fileio_lun(ietd, backing, "caw-heartbeat"), 3)
    pwrite_direct(a, 0, bytes(BS))
    writer = fio.start_fio([f"--filename={c}", "--name=elsewhere", "--ioengine=libaio",
                            "--direct=1", "--rw=randwrite", "--bs=4k", "--iodepth=8",
                            f"--offset={MiB}", f"--size={8 * MiB}", "--verify=crc32c",
                            "--verify_backlog=64", "--verify_fatal=1",
                            "--time_based", "--runtime=600"],
                           RESULTS / "caw-heartbeat-fio.log")
    errors, wins = [], {}

    def beat(me, dev):
        wins[me] = heartbeat(dev, tmp_path, me, 15, errors)

    threads = [threading.Thread(target=beat, args=(me, d)) for me, d in ((1, a), (2, b))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert writer.poll() is None, "fio stopped early: see caw-heartbeat-fio.log"
    finally:
        writer.terminate()
        writer.wait(60)
    assert not errors, errors
    count, last = struct.unpack_from("<QQ", pread_direct(c, 0, BS))
    assert wins == {1: 15, 2: 15}
    assert count == 30, f"{count} updates in the block, 30 made: one was lost"
    assert last in (1, 2)


@pytest.fixture
def slow_writes(brd):
    """A RAM disk whose writes can be made slow; set up before the target,
    so it goes after the target lets go of it."""
    dev = SlowWrites("iet-caw-slow", brd.dev).create()
    yield dev
    dev.set_write_delay(0)
    dev.remove()


def write16_command(dev, lba, data, tmp_path):
    """WRITE(16) through SG_IO on a read-only open: closing a block device
    opened for writing makes udev re-read its partition table."""
    f = tmp_path / f"write-{lba}-{time.monotonic_ns()}.bin"
    f.write_bytes(data)
    cdb = bytes([0x8a, 0]) + struct.pack(">QI", lba, len(data) // BS) + bytes(2)
    return ["sg_raw", "--readonly", f"--infile={f}", f"--send={len(data)}", dev,
            *(f"{x:02x}" for x in cdb)]


def test_compare_and_write_waits_for_a_write_in_flight(slow_writes, ietd, sessions, tmp_path):
    """blockio over a device whose writes land 3 s after they are sent: a
    WRITE from one session is in flight when another session's COMPARE AND
    WRITE of the same block comes. Either order is valid, but not what a
    COMPARE AND WRITE that read the old data under the WRITE gives: the
    WRITE answered GOOD, then overwritten by the COMPARE AND WRITE's data
    landing after it. Here the COMPARE AND WRITE waits for the WRITE to
    land, compares with its data and miscompares."""
    target = iqn("caw-gate")
    ietd(Target(target, [Lun(0, slow_writes.path, type="blockio")]))
    a, b = sessions(target, 2)
    run(write16_command(a, 3, block(0xaa), tmp_path))
    udev_settle()
    slow_writes.set_write_delay(3000)

    w = subprocess.Popen(write16_command(b, 3, block(0xcc), tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.5)             # the WRITE is in flight, held by dm-delay
    assert w.poll() is None, "the WRITE ended before it could have landed"
    rc, out = caw(a, 3, block(0xaa), block(0xbb), tmp_path)
    assert w.wait(60) == 0, w.stdout.read()

    slow_writes.set_write_delay(0)
    final = pread_direct(a, 3 * BS, BS)
    assert final == block(0xcc), \
        f"the WRITE was lost under the COMPARE AND WRITE (status {rc}: {out.strip()})"
    assert rc == MISCOMPARE_EXIT, f"COMPARE AND WRITE did not compare with the WRITE's data: {out}"


def orwrite16(dev, lba, data, tmp_path):
    f = tmp_path / "orwrite.bin"
    f.write_bytes(data)
    cdb = bytes([0x8b, 0]) + struct.pack(">QI", lba, len(data) // BS) + bytes(2)
    return run(["sg_raw", f"--infile={f}", f"--send={len(data)}", dev, *(f"{x:02x}" for x in cdb)],
               check=False)


def test_orwrite_ors_its_data_into_the_blocks(ietd, backing, sessions, tmp_path):
    """ORWRITE(16) of 8 blocks, sent by sg_raw: they hold what was there OR
    the data, and the blocks beside them are untouched."""
    disk, = sessions(fileio_lun(ietd, backing, "orwrite"), 1)
    before = os.urandom(10 * BS)
    pwrite_direct(disk, 0, before)
    data = os.urandom(8 * BS)

    cp = orwrite16(disk, 1, data, tmp_path)
    assert cp.returncode == 0, cp.stdout + cp.stderr

    after = pread_direct(disk, 0, 10 * BS)
    assert after[:BS] == before[:BS] and after[9 * BS:] == before[9 * BS:]
    assert after[BS:9 * BS] == bytes(x | y for x, y in zip(before[BS:9 * BS], data))
