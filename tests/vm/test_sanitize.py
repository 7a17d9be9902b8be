# SPDX-License-Identifier: GPL-2.0
"""SANITIZE through the kernel initiator (sg3-utils on its disks): an
OVERWRITE that outlives its command (IMMED) on a LUN slow enough to watch,
every nexus refused with its progress while it runs and the pattern on
every block after; a sanitize that fails leaves the LUN refusing its blocks
until EXIT FAILURE MODE (where AUSE allowed it) or a sanitize that
succeeds; zeros written over a thin file only where it holds data, and a
BLOCK ERASE that gives all of it back; a LUN deleted under a running
sanitize ends it, and a logout does not wait for one; parameter lists
that lie about their length refused.
(libiscsi's Sanitize suite runs in test_conformance.py.)"""

import os
import re
import struct
import time

import pytest

from ietlib import ietadm
from vmlib import initiator as ini
from vmlib import kmsg
from vmlib.rawiscsi import Connection
from vmlib.storage import SlowWrites, pread_direct, pwrite_direct
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, run, udev_settle, wait_until
from vmlib.xcopy import cscd, naa_of, raw_xcopy, segment

BS = 512
SECTOR = 512
OVERWRITE, BLOCK_ERASE, EXIT_FAILURE_MODE = 0x01, 0x02, 0x1f
IFACES = ["iet-san-a", "iet-san-b"]


def sanitize(dev, sa, tmp_path, *, immed=False, ause=False, pattern=None,
             count=1, invert=False, plen=None, send=None):
    """One SANITIZE through SG_IO on a read-only open (closing a disk opened
    for writing makes udev probe it): sg_raw's exit status and output.
    plen and send, when given, are the CDB's parameter list length and the
    bytes really sent, to lie with."""
    data = b""
    if pattern is not None:
        data = bytes([(0x80 if invert else 0) | count, 0]) + \
            struct.pack(">H", len(pattern)) + pattern
    plen = len(data) if plen is None else plen
    cdb = bytes([0x48, (0x80 if immed else 0) | (0x20 if ause else 0) | sa,
                 0, 0, 0, 0, 0]) + struct.pack(">H", plen) + b"\0"
    cmd = ["sg_raw", "--readonly", "--timeout=600"]
    if data or send:
        f = tmp_path / f"sanitize-{time.monotonic_ns()}.bin"
        f.write_bytes((data + bytes(send or 0))[:send or len(data)])
        cmd += [f"--infile={f}", f"--send={send or len(data)}"]
    cp = run(cmd + [dev] + [f"{b:02x}" for b in cdb], check=False, timeout=700)
    return cp.returncode, cp.stdout + cp.stderr


def sense_of(out):
    """The sense key and additional sense as sg3-utils decodes them, or
    "GOOD"."""
    key = re.search(r"Sense key:\s*([^\n]+)", out, re.I)
    asc = re.search(r"Additional sense:\s*([^\n]+)", out, re.I)
    if not key:
        return "GOOD"
    return f"{key.group(1).strip()} / {asc.group(1).strip() if asc else '?'}"


def tur(dev):
    """TEST UNIT READY: (sense, progress percent or None)."""
    cp = run(["sg_raw", "--readonly", dev, "00", "00", "00", "00", "00", "00"],
             check=False)
    out = cp.stdout + cp.stderr
    m = re.search(r"Progress indication:\s*([\d.]+)\s*%", out)
    return sense_of(out), float(m.group(1)) if m else None


def request_sense(dev):
    cp = run(["sg_requests", "--progress", dev], check=False)
    m = re.search(r"Progress indication:\s*([\d.]+)\s*%", cp.stdout + cp.stderr)
    return float(m.group(1)) if m else None


def read16(dev, lba):
    """One block by READ(16): sg_raw's output (its sense, if any)."""
    cdb = bytes([0x88, 0]) + struct.pack(">QI", lba, 1) + bytes(2)
    cp = run(["sg_raw", "--readonly", f"--request={BS}", dev, *(f"{b:02x}" for b in cdb)],
             check=False)
    return sense_of(cp.stdout + cp.stderr)


def inquiry_ok(dev):
    return run(["sg_inq", dev], check=False).returncode == 0


NOT_READY = re.compile(r"Not Ready / .*sanitize in progress", re.I)
FAILED = re.compile(r"Medium Error / .*sanitize command failed", re.I)


@pytest.fixture
def slow_lun(brd):
    """The RAM disk behind dm-delay, 64 MiB that a sanitize writes in
    steps of 1 MiB: at a write delay of 150 ms it takes ten seconds.
    Listed before ietd, it outlives the target that uses it."""
    dev = SlowWrites("iet-sanitize-slow", brd.dev).create()
    yield dev
    dev.set_write_delay(0)
    dev.remove()


@pytest.fixture
def two_sessions(iscsid):
    with ini.iface_logins(IFACES) as login:
        yield login


def test_an_overwrite_outlives_its_command_and_every_nexus_sees_its_progress(
        slow_lun, ietd, two_sessions, backing, tmp_path):
    name = iqn("sanitize-progress")
    ietd(Target(name, [Lun(0, slow_lun.path, type="blockio"),
                       Lun(1, str(backing("other", 16 * MiB)))]))
    a, b = two_sessions(name, 2)
    other = ini.disk_of(ini.sessions_by_iface(name)[IFACES[0]], 1)
    pwrite_direct(a, 5 * MiB, os.urandom(MiB))
    kept = os.urandom(64 * 1024)
    pwrite_direct(other, 0, kept)
    copy_targets = [cscd(naa_of(other)), cscd(naa_of(a))]
    slow_lun.set_write_delay(150)
    log = kmsg.KernelLog()

    pattern = bytes([0xc3, 0x3c, 0x5a, 0xa5])
    rc, out = sanitize(a, OVERWRITE, tmp_path, immed=True, pattern=pattern)
    assert rc == 0 and sense_of(out) == "GOOD", f"SANITIZE (IMMED) was refused: {out}"

    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        sense, progress = tur(b)
        if sense == "GOOD":
            break
        assert NOT_READY.search(sense), f"TEST UNIT READY during the sanitize: {sense}"
        assert progress is not None, "NOT READY without its progress"
        seen.append(progress)
        if len(seen) == 2:
            # Both nexuses: commands refused, those the standard allows not.
            assert NOT_READY.search(read16(a, 0)), "a READ ran during the sanitize"
            assert NOT_READY.search(read16(b, 100)), "a READ ran during the sanitize"
            assert inquiry_ok(a) and inquiry_ok(b), "INQUIRY refused during the sanitize"
            assert request_sense(a) is not None, "REQUEST SENSE without progress"
            rc, out = sanitize(b, OVERWRITE, tmp_path, pattern=pattern)
            assert NOT_READY.search(sense_of(out)), f"a second SANITIZE: {out}"
            # Nor does a copy through another LUN reach it, either way.
            for seg in (segment(0, 1, 128, 0, 0), segment(1, 0, 128, 0, 0)):
                rc, out = raw_xcopy(other, copy_targets, [seg], tmp_path)
                assert re.search(r"Copy Aborted", sense_of(out), re.I), \
                    f"EXTENDED COPY with the LUN being sanitized: {out}"
        time.sleep(0.5)
    else:
        pytest.fail(f"the sanitize never ended (progress seen: {seen})")
    slow_lun.set_write_delay(0)

    assert len(seen) >= 4, f"the sanitize was over too soon to watch: {seen}"
    assert seen == sorted(seen) and seen[-1] > seen[0], f"progress did not grow: {seen}"
    # Every block of the LUN holds the pattern, the data written before too.
    want = pattern * (MiB // len(pattern))
    for off in range(0, 64 * MiB, MiB):
        got = pread_direct(a, off, MiB)
        assert got == want, f"MiB at {off // MiB} is not the pattern after the sanitize"
    assert pread_direct(other, 0, len(kept)) == kept, "the other LUN was written"
    lines = "\n".join(log.new_lines())
    assert re.search(r"lun 0: sanitize \(overwrite\) started", lines), lines
    assert "lun 0: sanitize done" in lines, lines


@pytest.fixture
def failing_lun(brd):
    """/dev/mapper/iet-san-eio: the RAM disk, with 1 MiB at 32 MiB that
    fails every I/O once broken (its state at first); heal() makes it whole
    again."""
    name, g, b = "iet-san-eio", 32 * MiB // SECTOR, MiB // SECTOR
    rest = brd.size // SECTOR - g - b
    broken = (f"0 {g} linear {brd.dev} 0\n{g} {b} error\n"
              f"{g + b} {rest} linear {brd.dev} {g + b}\n")

    def load(table):
        run(["dmsetup", "reload", name], input=table)
        run(["dmsetup", "resume", name])

    class Dev:
        path = f"/dev/mapper/{name}"

        @staticmethod
        def heal():
            load(f"0 {brd.size // SECTOR} linear {brd.dev} 0\n")

        @staticmethod
        def breaks():
            load(broken)

    run(["dmsetup", "create", name], input=broken)
    try:
        udev_settle()
        yield Dev
    finally:
        run(["dmsetup", "remove", "--retry", name], timeout=60)


def test_a_failed_sanitize_refuses_the_blocks_until_it_is_ended(
        failing_lun, ietd, initiator, tmp_path):
    name = iqn("sanitize-fails")
    ietd(Target(name, [Lun(0, failing_lun.path, type="blockio")]))
    disk = initiator.login(name).disk(0)
    pattern = b"\x11\x22"

    # Restricted (AUSE=0): only a sanitize that succeeds ends the failure.
    rc, out = sanitize(disk, OVERWRITE, tmp_path, pattern=pattern)
    assert FAILED.search(sense_of(out)), f"a sanitize over bad blocks: {out}"
    assert FAILED.search(tur(disk)[0]), "TEST UNIT READY after a failed sanitize"
    assert FAILED.search(read16(disk, 0)), "a READ after a failed sanitize"
    assert inquiry_ok(disk), "INQUIRY refused after a failed sanitize"
    for what, kw in (("EXIT FAILURE MODE", {}), ("an AUSE sanitize", {"ause": True})):
        sa = EXIT_FAILURE_MODE if not kw else OVERWRITE
        rc, out = sanitize(disk, sa, tmp_path, pattern=None if not kw else pattern, **kw)
        assert re.search(r"Illegal Request / Invalid field in cdb", sense_of(out), re.I), \
            f"{what} after a restricted failure: {out}"
    assert FAILED.search(tur(disk)[0]), "the failure ended without a sanitize"

    # A sanitize that succeeds ends it.
    failing_lun.heal()
    rc, out = sanitize(disk, OVERWRITE, tmp_path, pattern=pattern)
    assert sense_of(out) == "GOOD", f"a sanitize over healed blocks: {out}"
    assert tur(disk)[0] == "GOOD"
    assert pread_direct(disk, 32 * MiB, MiB) == pattern * (MiB // 2)

    # Unrestricted (AUSE=1): EXIT FAILURE MODE ends it too.
    failing_lun.breaks()
    rc, out = sanitize(disk, OVERWRITE, tmp_path, pattern=pattern, ause=True)
    assert FAILED.search(sense_of(out)), f"an AUSE sanitize over bad blocks: {out}"
    assert FAILED.search(read16(disk, 0)), "a READ after a failed sanitize"
    rc, out = sanitize(disk, EXIT_FAILURE_MODE, tmp_path)
    assert sense_of(out) == "GOOD", f"EXIT FAILURE MODE after an AUSE failure: {out}"
    assert tur(disk)[0] == "GOOD"
    assert read16(disk, 0) == "GOOD"
    # With no failure to end, it changes nothing.
    rc, out = sanitize(disk, EXIT_FAILURE_MODE, tmp_path)
    assert sense_of(out) == "GOOD", out


def allocated(path):
    return os.stat(path).st_blocks * 512


def test_zeros_overwrite_a_thin_file_only_where_it_holds_data(ietd, initiator, backing,
                                                            tmp_path):
    name = iqn("sanitize-thin")
    path = backing("thin", 256 * MiB)
    ietd(Target(name, [Lun(0, str(path))]))
    disk = initiator.login(name).disk(0)
    data = os.urandom(4 * MiB)
    for off in (0, 100 * MiB, 252 * MiB):
        pwrite_direct(disk, off, data)
    before = allocated(path)
    assert before >= 12 * MiB

    rc, out = sanitize(disk, OVERWRITE, tmp_path, pattern=bytes(8), count=2, invert=True)
    assert sense_of(out) == "GOOD", out
    # Two passes: 0xff everywhere (the file filled), then zeros over it all.
    assert pread_direct(disk, 100 * MiB, 4 * MiB) == bytes(4 * MiB)
    assert pread_direct(disk, 200 * MiB, MiB) == bytes(MiB)

    # One pass of zeros writes the blocks that hold data, not the holes.
    rc, out = sanitize(disk, BLOCK_ERASE, tmp_path)
    assert sense_of(out) == "GOOD", out
    assert allocated(path) < MiB, f"{allocated(path)} bytes still allocated after BLOCK ERASE"
    for off in (0, 100 * MiB):
        pwrite_direct(disk, off, data)
    rc, out = sanitize(disk, OVERWRITE, tmp_path, pattern=bytes(4))
    assert sense_of(out) == "GOOD", out
    assert pread_direct(disk, 0, 4 * MiB) == bytes(4 * MiB)
    assert pread_direct(disk, 100 * MiB, 4 * MiB) == bytes(4 * MiB)
    assert allocated(path) <= 8 * MiB + MiB, \
        f"a pass of zeros allocated {allocated(path)} bytes of a thin file"


def test_deleting_a_lun_ends_its_sanitize(slow_lun, ietd, initiator, tmp_path):
    name = iqn("sanitize-deleted")
    ietd(Target(name, [Lun(0, slow_lun.path, type="blockio")]))
    disk = initiator.login(name).disk(0)
    slow_lun.set_write_delay(500)
    log = kmsg.KernelLog()
    rc, out = sanitize(disk, OVERWRITE, tmp_path, immed=True, pattern=b"\xee")
    assert rc == 0 and sense_of(out) == "GOOD", out
    wait_until(lambda: NOT_READY.search(tur(disk)[0]), 30, "the sanitize running")

    t0 = time.monotonic()
    ietadm("--op", "delete", f"--tid={name}", "--lun=0")
    lines = []
    wait_until(lambda: lines.extend(log.new_lines()) or
               any("sanitize ended: the LUN is deleted" in x for x in lines), 30,
               "the sanitize of a deleted LUN ending")
    took = time.monotonic() - t0
    slow_lun.set_write_delay(0)
    assert took < 15, f"the sanitize of a deleted LUN went on for {took:.1f} s"
    # The device is free again once the LUN's backing closed.
    wait_until(lambda: run(["dmsetup", "info", "-c", "--noheadings", "-o", "open",
                            "iet-sanitize-slow"]).stdout.strip() == "0", 30,
               "the LUN's device closed")


def test_parameter_lists_that_lie_about_their_length_are_refused(ietd, initiator, backing,
                                                                 tmp_path):
    name = iqn("sanitize-lies")
    ietd(Target(name, [Lun(0, str(backing("lies", 16 * MiB)))]))
    disk = initiator.login(name).disk(0)
    pwrite_direct(disk, 0, b"\x77" * MiB)
    cases = {
        # A list longer than the data the command carries.
        "length past the data": dict(pattern=b"\x01" * 16, plen=20 + 64, send=20),
        # A pattern longer than the list it is in.
        "pattern past the list": dict(pattern=b"\x01" * 16, plen=12, send=12),
        # Longer than a block and its header: refused before any data moves.
        "list longer than a block": dict(pattern=b"\x01" * 4, plen=BS + 5, send=BS + 5),
        "no list": dict(plen=0),
    }
    for what, kw in cases.items():
        rc, out = sanitize(disk, OVERWRITE, tmp_path, **kw)
        assert re.search(r"Illegal Request", sense_of(out), re.I), f"{what}: {out}"
    # Nothing was sanitized: the data is there, the LUN ready.
    assert tur(disk)[0] == "GOOD"
    assert pread_direct(disk, 0, MiB) == b"\x77" * MiB


def test_a_session_logging_out_does_not_wait_for_its_sanitize(slow_lun, ietd):
    """A SANITIZE without IMMED waits for its operation; its session logging
    out ends it unanswered, as the connection's other tasks, and the Logout
    Response does not wait for the operation, which goes on. (A raw
    initiator: open-iscsi itself waits for its outstanding commands before
    it sends the Logout.)"""
    name = iqn("sanitize-logout")
    ietd(Target(name, [Lun(0, slow_lun.path, type="blockio")]))
    slow_lun.set_write_delay(400)        # 64 steps: about half a minute
    log = kmsg.KernelLog()
    lines = []
    c = Connection(name, timeout=30).connect()
    c.login(clear_ua=True)
    cdb = bytes([0x48, OVERWRITE, 0, 0, 0, 0, 0]) + struct.pack(">H", 6) + b"\0"
    c.submit(cdb, data=bytes([1, 0, 0, 2, 0x5a, 0xa5]))     # one pass of 5a a5
    wait_until(lambda: lines.extend(log.new_lines()) or
               any("sanitize (overwrite) started" in x for x in lines), 30,
               "the sanitize running")
    t0 = time.monotonic()
    rsp = c.logout(timeout=60)
    took = time.monotonic() - t0
    assert rsp.response == 0, rsp
    assert took < 10, f"the Logout Response waited {took:.1f} s for the sanitize"

    d = Connection(name, timeout=30).connect()
    d.login(clear_ua=True)
    r = d.execute(bytes(6))                                  # TEST UNIT READY
    assert r.sense_triple[:3] == (2, 0x04, 0x1b), \
        f"the sanitize did not go on past its session: {r.sense_triple}"
    wait_until(lambda: d.execute(bytes(6)).status == 0, 120, "the sanitize ending")
    d.logout()
    slow_lun.set_write_delay(0)
    lines += log.new_lines()
    assert any("sanitize done" in x for x in lines), lines
    assert not any("still in the backend" in x for x in lines), lines
