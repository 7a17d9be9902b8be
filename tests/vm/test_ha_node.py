# SPDX-License-Identifier: GPL-2.0
"""One node of an HA pair (a RemotePortalGroup line): its LUNs are served
through both nodes' target ports with one identity, and its backings are
open only while its own portal group is active. A standby node cannot open
its replicated device (DRBD secondary), so its LUNs start closed, sized
from what the path says without opening it, and answer INQUIRY, READ
CAPACITY and REPORT TARGET PORT GROUPS (both groups) while refusing what
the standby state refuses. Making the group active opens every backing or
none; leaving it closes each once its commands in flight have ended, and
ietadm returns then, so that a cluster agent may demote the device."""

import errno
import os
import struct
import threading
import time
from pathlib import Path

import pytest

from ietlib import IETADM, daemon, ietadm  # noqa: F401
from vmlib import alua
from vmlib import rawiscsi as ri
from vmlib.rawiscsi import Connection
from vmlib.storage import SlowWrites
from vmlib.target import iqn
from vmlib.util import REPO, MiB, run, udev_settle

NAME = iqn("ha-node")
GROUPS = "PortalGroup 1 127.0.0.1\nRemotePortalGroup 2\n"
STANDBY, AO = 0x2, 0x0


def config(*luns):
    return GROUPS + f"Target {NAME}\n" + "".join(f"\tLun {n} {args}\n" for n, args in luns)


def login():
    c = Connection(NAME, timeout=60).connect()
    c.login(clear_ua=True)
    return c


def set_state(tag, state, check=True):
    return ietadm("--op", "update", "--tid=1", "--params",
                  f"PortalGroup={tag},State={state}", check=check, timeout=120)


def claimed(dev):
    """Whether a holder (the target) has the block device open exclusively."""
    try:
        fd = os.open(dev, os.O_RDWR | os.O_EXCL)
    except OSError as e:
        assert e.errno == errno.EBUSY, e
        return True
    os.close(fd)
    return False


def backing_of(lun):
    shown = ietadm("--op", "show", "--tid=1", f"--lun={lun}").stdout
    return next(line.split("=", 1)[1] for line in shown.splitlines()
                if line.startswith("Backing="))


def groups(c):
    """{tag: (state, status code, [rtpi])} of REPORT TARGET PORT GROUPS."""
    return {tag: (state, status, ports)
            for state, _, tag, status, ports in alua.groups(alua.rtpg(c))}


def capacity(c, lun):
    r = c.execute(ri.cdb_read_capacity16(32), read=True, edtl=32, lun=lun)
    assert r.status == ri.GOOD, r.sense_triple
    return struct.unpack(">QI", r.data[:12])


def sense(c, cdb, **kw):
    r = c.execute(cdb, **kw)
    return (r.status, r.sense_triple) if r.status else (r.status, None)


def attentions(c, lun):
    """The unit attentions a nexus hears on lun, one a command, sorted,
    until TEST UNIT READY passes."""
    heard = []
    while (s := sense(c, ri.cdb_test_unit_ready(), lun=lun)) != (ri.GOOD, None):
        assert s[0] == ri.CHECK_CONDITION and s[1][0] == 0x06 and len(heard) < 8, (s, heard)
        heard.append(s[1])
    return sorted(heard)


def discards(dev):
    """Whether a block device takes discards (brd does from 6.12 on)."""
    name = os.path.basename(os.path.realpath(dev))
    return int(Path(f"/sys/block/{name}/queue/discard_max_bytes").read_text()) > 0


def pattern(lba, blocks):
    return b"".join(struct.pack(">Q", lba + i) * 64 for i in range(blocks))


# Opening and closing a block device differ between kernels (paths), and
# the drain is where a use after free or a lock order would show (guard).
@pytest.mark.paths
@pytest.mark.guard
def test_a_standby_node_serves_its_luns_closed_and_opens_them_when_active(
        daemon, brd, backing):  # noqa: F811
    f = backing("file", 8 * MiB)
    daemon(config((0, f"Path={brd.dev},Type=blockio"), (1, f"Path={f},Type=fileio")))
    shown = ietadm("--op", "show", "--tid=1").stdout
    assert "PortalGroup=1,State=standby,Sessions=0\n" in shown, shown
    assert "PortalGroup=2,State=standby,Sessions=0,Remote=Yes\n" in shown, shown
    assert (backing_of(0), backing_of(1)) == ("closed", "closed")
    assert not claimed(brd.dev)

    c = login()
    try:
        # Both nodes' target ports, each a group of its own; sized as the
        # paths are, without opening them.
        assert groups(c) == {1: (STANDBY, 2, [1]), 2: (STANDBY, 0, [2])}
        assert capacity(c, 0) == (64 * MiB // 512 - 1, 512)
        assert capacity(c, 1) == (8 * MiB // 512 - 1, 512)
        read = dict(cdb=ri.cdb_read10(0, 1), read=True, edtl=512)
        for lun in (0, 1):
            assert sense(c, lun=lun, **read) == (ri.CHECK_CONDITION, (0x02, 0x04, 0x0b))
            assert sense(c, ri.cdb_test_unit_ready(), lun=lun) == \
                (ri.CHECK_CONDITION, (0x02, 0x04, 0x0b))

        # The file grows while closed (a replica resized meanwhile).
        os.truncate(f, 16 * MiB)
        set_state(1, "ao")
        assert (backing_of(0), backing_of(1)) == ("open", "open")
        assert claimed(brd.dev)
        # LUN 0 thin where the kernel's brd discards (6.12 on), which it
        # could not say while closed; LUN 1 opened at its new size, and thin
        # (a file's holes): its nexuses hear of each change, once.
        changed, grew, provisioning = (0x06, 0x2a, 0x06), (0x06, 0x2a, 0x09), (0x06, 0x3f, 0x03)
        assert attentions(c, 0) == sorted([changed] + [provisioning] * discards(brd.dev))
        assert attentions(c, 1) == sorted([changed, grew, provisioning])
        assert groups(c)[1] == (AO, 2, [1])
        assert capacity(c, 1) == (16 * MiB // 512 - 1, 512)
        data = pattern(100, 4)
        for lun in (0, 1):
            r = c.execute(ri.cdb_write10(100, 4), lun=lun, data=data)
            assert r.status == ri.GOOD, r.sense_triple
            r = c.execute(ri.cdb_read10(100, 4), lun=lun, read=True, edtl=len(data))
            assert (r.status, r.data) == (ri.GOOD, data)

        # The other node takes over: this one closes, what it wrote is there.
        set_state(1, "standby")
        set_state(2, "ao")
        assert (backing_of(0), backing_of(1)) == ("closed", "closed")
        assert not claimed(brd.dev)
        with open(brd.dev, "rb") as d:
            d.seek(100 * 512)
            assert d.read(len(data)) == data
        assert sense(c, lun=0, **read)[1] == (0x06, 0x2a, 0x06)
        assert sense(c, lun=0, **read) == (ri.CHECK_CONDITION, (0x02, 0x04, 0x0b))
        assert groups(c) == {1: (STANDBY, 2, [1]), 2: (AO, 2, [2])}
        c.logout()
    finally:
        c.close()


def test_activation_opens_every_backing_or_none(daemon, brd, backing):  # noqa: F811
    f = backing("file", 8 * MiB)
    daemon(config((0, f"Path={f},Type=fileio"), (1, f"Path={brd.dev},Type=blockio")))
    # Another holder of the device, as DRBD's secondary refuses opens.
    fd = os.open(brd.dev, os.O_RDWR | os.O_EXCL)
    try:
        cp = set_state(1, "ao", check=False)
        assert cp.returncode != 0 and "Path is in use" in cp.stderr, cp.stderr
        # Nothing half-applied: LUN 0, opened first, is closed again.
        assert (backing_of(0), backing_of(1)) == ("closed", "closed")
        assert "PortalGroup=1,State=standby," in ietadm("--op", "show", "--tid=1").stdout
    finally:
        os.close(fd)
    set_state(1, "ao")
    assert (backing_of(0), backing_of(1)) == ("open", "open")


@pytest.mark.guard
def test_leaving_the_active_state_waits_for_the_writes_in_flight(daemon, brd):  # noqa: F811
    slow = SlowWrites("iet-ha-slow", brd.dev).create()
    try:
        daemon(config((0, f"Path={slow.path},Type=blockio")))
        set_state(1, "ao")
        c = login()
        c.clear_unit_attentions()
        slow.set_write_delay(2000)
        tasks = [c.submit(ri.cdb_write10(8 * i, 8), data=pattern(8 * i, 8))
                 for i in range(8)]
        time.sleep(0.5)         # in the backend by now, held by dm-delay
        start = time.monotonic()
        set_state(1, "standby")
        took = time.monotonic() - start
        # Closed only once they ended, and ietadm said so then.
        assert not claimed(slow.path)
        assert took >= 1.0, f"ietadm returned after {took:.2f} s, before the writes ended"
        for t in tasks:
            r = c.wait(t)
            assert r.status == ri.GOOD, r.sense_triple
        slow.set_write_delay(0)
        with open(slow.path, "rb") as d:
            assert d.read(64 * 512) == b"".join(pattern(8 * i, 8) for i in range(8))
        c.logout()
        c.close()
    finally:
        slow.remove()


@pytest.mark.guard
def test_a_command_under_way_finishes_as_its_backing_closes(daemon, brd):  # noqa: F811
    """COMPARE AND WRITE (VMware's ATS) reads, then writes, each an I/O of
    its own: begun before the group left the active state, its write still
    goes to the backing, which closes after it."""
    LBA = 40000
    # Reads of sectors 32768-65535 held 1.5 s, writes not.
    slow = SlowWrites("iet-ha-slowreads", brd.dev, slow_reads=(32768, 32768, 1500)).create()
    try:
        daemon(config((0, f"Path={slow.path},Type=blockio")))
        set_state(1, "ao")
        c = login()
        c.clear_unit_attentions()
        old, new = pattern(0, 1), pattern(99, 1)
        r = c.execute(ri.cdb_write10(LBA, 1), data=old)
        assert r.status == ri.GOOD, r.sense_triple
        caw = struct.pack(">BBQxxxBxx", 0x89, 0, LBA, 1)
        task = c.submit(caw, data=old + new, edtl=1024)
        time.sleep(0.5)         # its read is held by dm-delay
        set_state(1, "standby")
        r = c.wait(task)
        assert r.status == ri.GOOD, r.sense_triple
        assert not claimed(slow.path)
        with open(slow.path, "rb") as d:
            d.seek(LBA * 512)
            assert d.read(512) == new
        c.logout()
        c.close()
    finally:
        udev_settle()
        slow.remove()


@pytest.mark.guard
def test_a_stalled_initiator_cannot_hold_a_backing_open(daemon, brd):  # noqa: F811
    """A command waiting for its turn (here behind an ORDERED write whose
    data never comes) holds no backing: leaving the active state closes it
    at once, however the initiator stalls."""
    daemon(config((0, f"Path={brd.dev},Type=blockio")))
    set_state(1, "ao")
    c = login()
    try:
        c.clear_unit_attentions()
        # 256 KiB: the first burst goes with the command, the rest waits
        # for an R2T nobody answers.
        c.submit(ri.cdb_write10(0, 512), data=bytes(256 * 1024), attr=ri.ATTR_ORDERED)
        c.submit(ri.cdb_read10(1024, 8), read=True, edtl=4096)
        time.sleep(0.5)
        start = time.monotonic()
        set_state(1, "standby")
        took = time.monotonic() - start
        assert not claimed(brd.dev)
        assert took < 20, f"ietadm waited {took:.1f} s for commands that never ran"
    finally:
        c.close()


def test_remote_group_state_is_reported_and_opens_nothing(daemon, backing):  # noqa: F811
    f = backing("file", 8 * MiB)
    daemon(config((0, f"Path={f},Type=fileio")))
    c = login()
    try:
        set_state(2, "ao")
        assert backing_of(0) == "closed"
        # Every nexus hears of another node's change too (SPC-4 5.16.2.8).
        assert sense(c, ri.cdb_test_unit_ready())[1] == (0x06, 0x2a, 0x06)
        assert groups(c) == {1: (STANDBY, 2, [1]), 2: (AO, 2, [2])}
        c.logout()
    finally:
        c.close()
    # Many at once: the state changes take their turns.
    errors = []

    def flip(state):
        cp = set_state(2, state, check=False)
        if cp.returncode:
            errors.append(cp.stderr)
    threads = [threading.Thread(target=flip, args=(s,)) for s in ("s", "ao", "u", "an")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert backing_of(0) == "closed"


AGENT = REPO / "etc" / "ocf" / "alua"


def agent(action, **env):
    """ocf:iet:alua's action, as Pacemaker runs it: its exit status."""
    e = dict(os.environ, OCF_ROOT="/usr/lib/ocf", OCF_RESOURCE_INSTANCE="p_alua",
             OCF_RESKEY_iqn=NAME, OCF_RESKEY_ietadm=str(IETADM))
    e.update(env)
    return run([str(AGENT), action], env=e, check=False, timeout=180).returncode


def test_the_ocf_agent_promotes_and_demotes_this_node(daemon, backing):  # noqa: F811
    f = backing("file", 8 * MiB)
    daemon(config((0, f"Path={f},Type=fileio")))
    # Pacemaker's own checks of an agent: meta-data, idempotent start,
    # stop, promote and demote, monitor's codes for each.
    cp = run(["ocf-tester", "-n", "p_alua", "-o", f"iqn={NAME}",
              "-o", f"ietadm={IETADM}", str(AGENT)], check=False, timeout=600,
             env=dict(os.environ, OCF_ROOT="/usr/lib/ocf"))
    assert cp.returncode == 0 and "passed" in cp.stdout, cp.stdout + cp.stderr
    assert agent("monitor") == 7                          # stopped
    assert agent("start") == 0 and agent("monitor") == 0  # unpromoted
    assert backing_of(0) == "closed"
    assert agent("promote") == 0 and agent("monitor") == 8
    assert backing_of(0) == "open"
    shown = ietadm("--op", "show", "--tid=1").stdout
    assert "PortalGroup=1,State=active/optimized," in shown, shown
    assert "PortalGroup=2,State=standby,Sessions=0,Remote=Yes" in shown, shown
    # The peer promoted, as a notification tells: its group is active.
    assert agent("demote") == 0 and backing_of(0) == "closed"
    assert agent("notify", OCF_RESKEY_CRM_meta_notify_type="post",
                 OCF_RESKEY_CRM_meta_notify_operation="promote",
                 OCF_RESKEY_CRM_meta_notify_promote_uname="the-peer") == 0
    assert "PortalGroup=2,State=active/optimized,Sessions=0,Remote=Yes" in \
        ietadm("--op", "show", "--tid=1").stdout
    # A backing that cannot be opened fails the promotion, and says why.
    os.rename(f, f"{f}.away")
    try:
        assert agent("promote") == 1 and agent("monitor") == 0
    finally:
        os.rename(f"{f}.away", f)
    assert agent("stop") == 0 and agent("monitor") == 7
    # Unknown target: configured wrong, not running.
    assert agent("start", OCF_RESKEY_iqn=iqn("none")) == 1
