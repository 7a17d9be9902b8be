# SPDX-License-Identifier: GPL-2.0
"""A write the storage fails is never answered GOOD: a LUN whose backing
device has a device-mapper `error` range in its middle, written there one
block at a time while other writers keep the same LUN busy elsewhere. Every
write into the range fails with MEDIUM ERROR, every write outside it
succeeds and reads back (fio verify)."""

import mmap
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ietlib import fio_report_clean
from vmlib import kmsg
from vmlib.initiator import writes_completed
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, RESULTS, run, safe_name, udev_settle, wait_until

SECTOR = 512
GOOD = 16 * MiB                 # good blocks before the error range
BAD = 1 * MiB                   # the error range
TRIES = 64                      # single-block writes into it
SPREAD_S = 10                   # over this long, while fio writes elsewhere
MIN_TRIES = 16                  # as many at least before fio's end
RUNTIME_S = 60                  # fio's longest run: it is stopped after the tries


@pytest.fixture
def error_device(brd):
    """/dev/mapper/iet-eio: the brd disk with BAD bytes at GOOD that fail
    every I/O. Listed before ietd, it outlives the target that uses it."""
    name = "iet-eio"
    g, b = GOOD // SECTOR, BAD // SECTOR
    rest = brd.size // SECTOR - g - b
    dev = brd.dev
    table = (f"0 {g} linear {dev} 0\n"
             f"{g} {b} error\n"
             f"{g + b} {rest} linear {dev} {g + b}\n")
    run(["dmsetup", "create", name], input=table)
    try:
        udev_settle()
        yield f"/dev/mapper/{name}"
    finally:
        # A device left behind would hold the brd disk for every later test.
        run(["dmsetup", "remove", "--retry", name], timeout=60)


def write_block(disk, offset):
    """One 4 KiB O_DIRECT write: None if it succeeded, else the errno."""
    fd = os.open(disk, os.O_WRONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, 4096)
        buf.write(os.urandom(4096))
        os.pwrite(fd, buf, offset)
        return None
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


@pytest.mark.parametrize("lun_type", ["fileio", "fileio-direct", "blockio"])
def test_writes_into_a_failing_range_are_never_answered_good(error_device, kmod, ietd, initiator,
                                                             request, lun_type):
    dev = error_device
    name = iqn(f"eio-{lun_type}")
    # fileio writes through by buffered writes and a sync each, or with
    # direct_writes by direct I/O: both must hold.
    direct = lun_type == "fileio-direct"
    Path("/sys/module/iscsi_trgt/parameters/direct_writes").write_text("1\n" if direct else "0\n")
    log = kmsg.KernelLog()
    ietd(Target(name, [Lun(0, dev, type=lun_type.split("-")[0], params={"IOMode": "wt"})]))
    if lun_type.startswith("fileio"):
        how = "direct I/O" if direct else "buffered I/O and a sync each"
        assert any(f"stable writes by {how}" in ln for ln in log.new_lines()), \
            f"the LUN does not say it writes through by {how}"
    disk = initiator.login(name).disk(0)
    job = RESULTS / f"fio-{safe_name(request.node.name)}.fio"
    # Two writers, each verifying a half of the good range of its own: over
    # one shared region each would read back blocks the other overwrote.
    job.write_text("\n".join([
        "[global]", f"filename={disk}", "ioengine=libaio", "direct=1", "bs=4k",
        "iodepth=16", "rw=randwrite", f"size={GOOD // 2}",
        f"offset_increment={GOOD // 2}", "verify=crc32c",
        "verify_fatal=1", "verify_backlog=64", "time_based=1", f"runtime={RUNTIME_S}",
        "numjobs=2", "", "[busy]", ""]))
    busy = subprocess.Popen(["fio", "--output-format=json",
                             f"--output={job.with_suffix('.json')}", str(job)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Into the range only once fio's writers are busy, and spread over
        # its run: every failure then lands among writes that succeed.
        start = writes_completed(disk)
        wait_until(lambda: busy.poll() is not None or writes_completed(disk) >= start + 256,
                   60, "fio's writes to flow")
        # Each failed write costs the initiator's error handling: on a slow
        # (debug) kernel fewer fit in fio's run, and only those count.
        results = []
        interrupted = False
        for i in range(TRIES):
            if busy.poll() is not None:
                break
            results.append(write_block(disk, GOOD + (i * 4096) % BAD))
            time.sleep(SPREAD_S / TRIES)
        overlapped = len(results) >= MIN_TRIES
        # Writes elsewhere go on a little after the last failure, then
        # fio is told to end (and still reports what it verified).
        time.sleep(2)
        if busy.poll() is None:
            busy.send_signal(signal.SIGINT)
            interrupted = True
    finally:
        out, _ = busy.communicate(timeout=300)
    lines = log.new_lines()
    log.close()

    answered_good = [i for i, err in enumerate(results) if err is None]
    assert not answered_good, \
        f"{len(answered_good)} of {len(results)} writes into the error range were answered GOOD"
    fio_report_clean(busy.returncode, out, job.with_suffix(".json"), interrupted)
    assert overlapped, \
        f"only {len(results)} writes into the error range before fio ended (want {MIN_TRIES})"
    medium = [ln for ln in lines if "Medium Error" in ln]
    assert medium, "the initiator never saw MEDIUM ERROR sense:\n" + "\n".join(lines[-40:])
