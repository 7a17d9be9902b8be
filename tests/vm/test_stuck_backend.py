# SPDX-License-Identifier: GPL-2.0
"""Storage that stops answering (a device-mapper device suspended under the
LUN: its I/O waits for ever) costs the target a bounded teardown and nothing
else. With writes stuck in the backend and the initiator gone:

- the connection and its session are released within release_timeout;
- ietd and ietadm keep answering, and deleting the target returns at once
  (its I/O threads are stopped in the background, not by the request);
- rmmod is refused, not left hanging, while the commands are stuck;
- once the storage answers again the commands end, rmmod succeeds and
  nothing is left behind.

And storage that is only slow, its queue full, never holds the thread that
receives the connection's PDUs."""

import os
import time
from pathlib import Path

import pytest

from vmlib import proc
from vmlib import rawiscsi as ri
from vmlib.target import Lun, Target, assert_module_gone, ietadm, iqn
from vmlib.util import run, udev_settle, wait_until

pytestmark = pytest.mark.short

RELEASE_S = 3                    # release_timeout for the test
GONE_WITHIN = RELEASE_S + 20     # seconds, with room for emulation
PROMPT_S = 10                    # what "at once" means under emulation
STUCK_WRITES = 8
DM_NAME = "iet-stuck"


@pytest.fixture
def stuck_device(brd):
    """/dev/mapper/iet-stuck, a linear map of the brd disk, suspended by the
    test and resumed (then removed) at the end whatever happened. Listed
    before ietd, it outlives the target that uses it."""
    run(["dmsetup", "create", DM_NAME], input=f"0 {brd.size // 512} linear {brd.dev} 0\n")
    try:
        udev_settle()
        yield f"/dev/mapper/{DM_NAME}"
    finally:
        run(["dmsetup", "resume", DM_NAME], check=False, timeout=60)
        run(["dmsetup", "remove", "--retry", DM_NAME], timeout=60)


def set_release_timeout(seconds):
    Path("/sys/module/iscsi_trgt/parameters/release_timeout").write_text(f"{seconds}\n")


# The debug kernel's suite: blockio alone (the test of a full queue below
# is the other way of waiting for a block device).
@pytest.mark.parametrize("lun_type, held", [
    pytest.param("fileio", False, id="fileio-alone"),
    pytest.param("fileio", True, id="fileio-ordered-held"),
    pytest.param("blockio", False, id="blockio-alone", marks=pytest.mark.guard),
    pytest.param("blockio", True, id="blockio-ordered-held"),
])
def test_writes_stuck_in_the_backend_never_stall_teardown(stuck_device, kmod, ietd, lun_type,
                                                          held):
    """held: an ORDERED write waits in the task set behind the stuck ones.
    It runs only once they end, after the target (and its I/O threads) went:
    it must end unexecuted then, not wait for a thread that never comes."""
    set_release_timeout(RELEASE_S)
    name = iqn(f"stuck-{lun_type}")
    daemon = ietd(Target(name, [Lun(0, stuck_device, type=lun_type)]))
    c = ri.Connection(name, initiator="iqn.2024-01.com.example.iet:stuck", timeout=PROMPT_S)
    c.connect()
    c.login()

    run(["dmsetup", "suspend", DM_NAME], timeout=60)
    tasks = [c.submit(ri.cdb_write10(i * 8, 8), data=os.urandom(4096))
             for i in range(STUCK_WRITES)]
    if held:
        tasks.append(c.submit(ri.cdb_write10(STUCK_WRITES * 8, 8), data=os.urandom(4096),
                              attr=ri.ATTR_ORDERED))
    time.sleep(2)
    c.poll()
    answered = [p for p in c.unclaimed if p.opcode == ri.SCSI_RSP]
    assert not answered, f"writes to a suspended device were answered: {answered}"

    c.reset()                     # the initiator vanishes
    start = time.monotonic()
    wait_until(lambda: proc.sessions_of(name) == [], GONE_WITHIN,
               lambda: f"the session to go although {len(tasks)} writes are stuck; "
                       f"/proc/net/iet/session:\n{proc.SESSION.read_text()}")
    took = time.monotonic() - start
    assert took >= RELEASE_S - 1, f"released after {took:.1f}s, before release_timeout"

    start = time.monotonic()
    shown = ietadm("--op", "show", "--tid=1", timeout=PROMPT_S)
    assert "Wthreads" in shown.stdout, shown.stdout
    ietadm("--op", "delete", "--tid=1", timeout=PROMPT_S)
    assert time.monotonic() - start < PROMPT_S, "the control plane waited for the backend"
    assert proc.target(proc.volumes(), name) is None, "the deleted target is still listed"
    daemon.stop()

    cp = run(["rmmod", "iscsi_trgt"], check=False, timeout=PROMPT_S)
    assert cp.returncode != 0 and kmod.loaded, \
        "rmmod succeeded with commands still in the backend"

    run(["dmsetup", "resume", DM_NAME], timeout=60)
    kmod.unload(timeout=60)
    assert_module_gone(kmod)


COMPLETE_S = 3                   # each request of the slow device
SLOW_READS = 4                   # more than its queue (and scheduler) holds


@pytest.fixture
def slow_device():
    """/dev/nullb0 (null_blk): one request at a time, each answered after
    COMPLETE_S. Listed before ietd, it outlives the target that uses it."""
    run(["modprobe", "null_blk", "nr_devices=1", "queue_mode=2", "irqmode=2",
         f"completion_nsec={COMPLETE_S * 10**9}", "hw_queue_depth=1",
         "submit_queues=1", "gb=1"], timeout=60)
    try:
        udev_settle()
        yield "/dev/nullb0"
    finally:
        wait_until(lambda: run(["rmmod", "null_blk"], check=False).returncode == 0, 60,
                   "null_blk to unload")


@pytest.mark.guard
def test_a_full_device_queue_never_holds_the_receiving_thread(slow_device, ietd):
    """blockio starts a command's bios in the thread that received it: one
    that waited there for a request of a full queue held every later PDU
    of the connection (other LUNs, pings, task management) until the
    device answered. With REQ_NOWAIT it goes to an I/O thread instead, and
    the next command is answered before the device answers anything."""
    name = iqn("nowait")
    ietd(Target(name, [Lun(0, slow_device, type="blockio"), Lun(1, type="nullio")]))
    c = ri.Connection(name, initiator="iqn.2024-01.com.example.iet:nowait",
                      timeout=COMPLETE_S * SLOW_READS + 60)
    c.connect()
    c.login()
    c.clear_unit_attentions()

    slow = [c.submit(ri.cdb_read10(i * 8, 8), read=True, edtl=4096)
            for i in range(SLOW_READS)]
    quick = c.submit(ri.cdb_read10(0, 8), lun=1, read=True, edtl=4096)
    first = c.expect(lambda p: p.opcode in (ri.DATA_IN, ri.SCSI_RSP), None,
                     "the first answer")
    c.unclaimed.insert(0, first)
    assert first.itt == quick.itt, \
        f"the read of LUN 1 waited for the slow device: ITT {first.itt:#x} came first"
    assert c.wait(quick).status == 0
    for t in slow:
        assert c.wait(t).status == 0, f"ITT {t.itt:#x}"
    c.logout()
