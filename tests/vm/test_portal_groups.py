# SPDX-License-Identifier: GPL-2.0
"""Several portal groups (ietd.conf PortalGroup lines): ietd listens on
their portals only, SendTargets gives every portal with its tag, a login
answers with the tag of the portal it came through and the kernel puts the
session in that target port, so that VPD 0x83 and REPORT TARGET PORT
GROUPS tell the paths apart and ALUA states apply per group. open-iscsi
logs in through both groups and Linux's ALUA handler sees one path
optimized and one standby. A reload that changes the groups is refused;
a restart takes them."""

import json
import socket
import threading
import struct

import pytest

from ietlib import daemon, ietadm  # noqa: F401
from vmlib import initiator as ini
from vmlib import rawiscsi as ri
from vmlib.rawiscsi import Connection
from vmlib.target import iqn
from vmlib.util import wait_until

NAME = iqn("groups")
GROUPS = "PortalGroup 1 127.0.0.1\nPortalGroup 2 127.0.0.2:3260\n"
TARGET = f"Target {NAME}\n\tLun 0 Type=nullio,Blocks=65536\n"


def rtpg_groups(c):
    cdb = bytes([0xa3, 0x0a, 0, 0, 0, 0]) + struct.pack(">I", 1024) + bytes(2)
    r = c.execute(cdb, read=True, edtl=1024)
    assert r.status == ri.GOOD, r.sense_triple
    out, off = {}, 4
    while off < len(r.data):
        d = r.data[off:]
        out[struct.unpack(">H", d[2:4])[0]] = (d[0] & 0xf, struct.unpack(">H", d[10:12])[0])
        off += 12
    return out


def vpd83_port(c):
    """(relative target port, target port group, SCSI name of the port)"""
    r = c.execute(ri.cdb_inquiry(255, evpd=True, page=0x83), read=True, edtl=255)
    d, off, got = r.data, 4, {}
    while off < len(d):
        n = d[off + 3]
        got[(d[off + 1] >> 4) & 3, d[off + 1] & 0xf] = d[off + 4:off + 4 + n]
        off += 4 + n
    return (struct.unpack(">H", got[1, 4][2:])[0], struct.unpack(">H", got[1, 5][2:])[0],
            got[1, 8].rstrip(b"\0").decode())


def proc_sessions():
    with open("/proc/net/iet/session") as f:
        return f.read()


def raw(host):
    c = Connection(NAME, host=host, timeout=30).connect()
    c.login(clear_ua=True)
    return c


def test_each_group_is_a_target_port_with_its_own_alua_state(daemon, iscsid):  # noqa: F811
    daemon(GROUPS + TARGET)
    # Only the configured portals listen.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.3", 3260), timeout=5).close()
    cp = ini.iscsiadm("-m", "discovery", "-t", "st", "-p", "127.0.0.1")
    ini.iscsiadm("-m", "node", "-o", "delete", check=False)
    found = sorted(line.split()[0] for line in cp.stdout.splitlines())
    assert found == ["127.0.0.1:3260,1", "127.0.0.2:3260,2"], cp.stdout

    one, two = raw("127.0.0.1"), raw("127.0.0.2")
    try:
        assert one.target_keys["TargetPortalGroupTag"] == "1"
        assert two.target_keys["TargetPortalGroupTag"] == "2"
        # SendTargets in a normal session: the portal it came through, its tag.
        for c, addr in ((one, "127.0.0.1:3260,1"), (two, "127.0.0.2:3260,2")):
            assert dict(c.text({"SendTargets": "All"}, timeout=30).text) == \
                {"TargetName": NAME, "TargetAddress": addr}
        assert vpd83_port(one) == (1, 1, f"{NAME},t,0x0001")
        assert vpd83_port(two) == (2, 2, f"{NAME},t,0x0002")
        assert rtpg_groups(one) == {1: (0x0, 1), 2: (0x0, 2)}

        ietadm("--op", "update", "--tid=1", "--params", "PortalGroup=2,State=standby")
        for c in (one, two):
            c.clear_unit_attentions()
        read = dict(cdb=ri.cdb_read10(0, 1), read=True, edtl=512)
        assert one.execute(**read).status == ri.GOOD
        r = two.execute(**read)
        assert (r.status, r.sense_triple) == (ri.CHECK_CONDITION, (0x02, 0x04, 0x0b))
        assert rtpg_groups(two) == {1: (0x0, 1), 2: (0x2, 2)}
        shown = ietadm("--op", "show", "--tid=1").stdout
        assert "PortalGroup=1,State=active/optimized,Sessions=1\n" in shown
        assert "PortalGroup=2,State=standby,Sessions=1\n" in shown
        sessions = json.loads(ietadm("--op", "show", "--tid=1", "--json").stdout)["sessions"]
        assert sorted(s["portal_group"] for s in sessions) == [1, 2]
    finally:
        one.close()
        two.close()


def test_open_iscsi_sees_an_optimized_path_and_a_standby_one(alua_handler, daemon,  # noqa: F811
                                                             iscsid):
    daemon(GROUPS + TARGET)
    ietadm("--op", "update", "--tid=1", "--params", "PortalGroup=2,State=standby")
    ini.iscsiadm("-m", "discovery", "-t", "st", "-p", "127.0.0.1")
    try:
        ini.iscsiadm("-m", "node", "-T", NAME, "--login")
        sessions = wait_until(lambda: len([s for s in ini.sysfs_sessions()
                                           if s.targetname == NAME]) == 2 or None, 60,
                              "two sessions")
        assert sessions
        states = {}
        for s in ini.sysfs_sessions():
            if s.targetname != NAME:
                continue
            # Through the standby path the disk has no capacity: it is
            # there, its size unknown.
            blk = wait_until(lambda: s.block_devices(0), 120, "the path's disk")[0]
            with open(f"/sys/class/block/{blk.name}/device/access_state") as f:
                states[s.conn_attr("persistent_address")] = f.read().strip()
        assert states == {"127.0.0.1": "active/optimized", "127.0.0.2": "standby"}, states
    finally:
        ini.logout_all()
        ini.iscsiadm("-m", "node", "-o", "delete", check=False)


def test_a_reload_keeps_the_groups_and_a_restart_takes_new_ones(daemon):  # noqa: F811
    d = daemon(GROUPS + TARGET)
    d.config.write_text("PortalGroup 1 127.0.0.1\nPortalGroup 3 127.0.0.3\n" + TARGET)
    cp = ietadm("--op", "reload", check=False)
    assert cp.returncode != 0 and "PortalGroup lines changed" in cp.stderr, cp.stderr
    c = raw("127.0.0.2")
    c.logout()
    c.close()
    wait_until(lambda: "sid:" not in proc_sessions(), 30, "the session to end")
    d.stop()
    d2 = daemon("PortalGroup 1 127.0.0.1\nPortalGroup 3 127.0.0.3\n" + TARGET)
    assert d2.running
    c = raw("127.0.0.3")
    try:
        assert c.target_keys["TargetPortalGroupTag"] == "3"
        assert sorted(rtpg_groups(c)) == [1, 3]
    finally:
        c.close()


def test_a_restart_without_a_group_lets_its_sessions_go_first(daemon):  # noqa: F811
    d = daemon(GROUPS + TARGET)
    stay, go = raw("127.0.0.1"), raw("127.0.0.2")
    heard = {}

    def answer():
        # What an initiator does: log out when asked to.
        p = go.expect(lambda p: p.opcode == ri.ASYNC_MSG, 60, "Async Message")
        heard["event"], heard["wait"] = p.u8(36), p.u16(42)
        heard["logout"] = go.logout().response

    t = threading.Thread(target=answer)
    t.start()
    try:
        d.stop()
        d2 = daemon("PortalGroup 1 127.0.0.1\n" + TARGET)
        t.join(60)
        assert heard == {"event": 1, "wait": 10, "logout": 0}
        assert d2.running
        # The group goes once its session has logged out (ietd served on
        # meanwhile: it does not wait for it), the other group's carried on.
        wait_until(lambda: "PortalGroup=2" not in ietadm("--op", "show", "--tid=1").stdout,
                   15, "portal group 2 to go after its session logged out")
        assert stay.execute(ri.cdb_test_unit_ready()).status == ri.GOOD
        assert not [p for p in stay.poll() if p.opcode == ri.ASYNC_MSG]
        sessions = json.loads(ietadm("--op", "show", "--tid=1", "--json").stdout)["sessions"]
        assert [s["portal_group"] for s in sessions] == [1]
    finally:
        t.join(60)
        stay.close()
        go.close()
