# SPDX-License-Identifier: GPL-2.0
"""ALUA (SPC-4 5.16) of a target's portal group: INQUIRY says TPGS 01b
(implicit), VPD 0x83 names the target port and its target port group,
REPORT TARGET PORT GROUPS lists the group with its state; ietadm sets the
state at runtime, every I_T nexus hears ASYMMETRIC ACCESS STATE CHANGED,
and a command through a standby, unavailable or transitioning group gets
the NOT READY SPC-4 prescribes unless that state lets it through. Linux's
ALUA device handler follows the state from a real session."""

import json
import struct
from pathlib import Path

import pytest

from ietlib import ietadm
from vmlib import rawiscsi as ri
from vmlib.alua import groups, rtpg
from vmlib.rawiscsi import Connection
from vmlib.target import Lun, Target, iqn
from vmlib.util import run, wait_until

NAME = iqn("alua")
NOT_READY = 0x02
STATES = {"ao": 0x0, "an": 0x1, "s": 0x2, "u": 0x3, "t": 0xf}


@pytest.fixture
def conn(ietd):
    ietd(Target(NAME, [Lun(0, None, "nullio"), Lun(1, None, "nullio")]))
    c = Connection(NAME, timeout=30).connect()
    c.login(clear_ua=True)
    yield c
    c.reset()


def designators(page):
    """{(association, type): value} of VPD 0x83."""
    out, off = {}, 4
    while off < len(page):
        length = page[off + 3]
        out[((page[off + 1] >> 4) & 3, page[off + 1] & 0xf)] = page[off + 4:off + 4 + length]
        off += 4 + length
    return out


def naa_designators(page):
    """The NAA designators of VPD 0x83 naming the logical unit, in order."""
    out, off = [], 4
    while off < len(page):
        length = page[off + 3]
        if (page[off + 1] >> 4) & 3 == 0 and page[off + 1] & 0xf == 3:
            out.append(page[off + 4:off + 4 + length])
        off += 4 + length
    return out


def set_state(state, tag=1):
    ietadm("--op", "update", "--tid=1", "--params", f"PortalGroup={tag},State={state}")


def sense_of(c, cdb, **kw):
    r = c.execute(cdb, **kw)
    return r.status, r.sense_triple[1:] if r.status == ri.CHECK_CONDITION else None


def test_inquiry_vpd_and_rtpg_describe_the_portal_group(conn):
    c = conn
    r = c.execute(ri.cdb_inquiry(96), read=True, edtl=96)
    assert r.data[5] & 0x30 == 0x10, f"TPGS {r.data[5]:#x}: implicit ALUA"
    r = c.execute(ri.cdb_inquiry(255, evpd=True, page=0x83), read=True, edtl=255)
    d = designators(r.data)
    assert d[(1, 4)] == bytes([0, 0, 0, 1])               # relative target port 1
    assert d[(1, 5)] == bytes([0, 0, 0, 1])               # target port group 1
    assert d[(1, 8)].rstrip(b"\0") == f"{NAME},t,0x0001".encode()
    # Without a company ID of the administrator's: NAA 3 alone.
    assert [n[0] >> 4 for n in naa_designators(r.data)] == [3]
    for extended in (False, True):
        data = rtpg(c, extended)
        if extended:
            assert data[4] == 0x10, data[:8].hex()         # FORMAT TYPE 001b
        assert groups(data, extended) == [(STATES["ao"], 0x8f, 1, 0, [1])]
    # A short allocation length gets the header's beginning; a format
    # that does not exist is refused.
    cdb = bytes([0xa3, 0x0a, 0, 0, 0, 0]) + struct.pack(">I", 4) + bytes(2)
    r = c.execute(cdb, read=True, edtl=4)
    assert r.status == ri.GOOD and r.data == struct.pack(">I", 12)
    cdb = bytes([0xa3, 0x0a | 0x40, 0, 0, 0, 0]) + struct.pack(">I", 64) + bytes(2)
    assert sense_of(c, cdb, read=True, edtl=64) == (ri.CHECK_CONDITION, (0x24, 0x00))


def test_a_company_id_of_the_administrators_adds_an_naa6_name(kmod, ietd):
    # Out of range: the module refuses to load.
    kmod.unload()
    cp = run(["insmod", str(kmod.ko), "naa_company_id=0x1000000"], check=False)
    assert cp.returncode != 0 and not kmod.loaded
    kmod.load("naa_company_id=0x123456")
    other = iqn("alua-other")
    ietd(Target(NAME, [Lun(0, None, "nullio", {"ScsiId": "shared-lu"}),
                       Lun(1, None, "nullio", {"ScsiId": "own-lu"})]),
         Target(other, [Lun(0, None, "nullio", {"ScsiId": "shared-lu"})]))
    names = {}
    for target, lun in ((NAME, 0), (NAME, 1), (other, 0)):
        c = Connection(target, timeout=30).connect()
        c.login(clear_ua=True)
        r = c.execute(ri.cdb_inquiry(255, evpd=True, page=0x83), read=True, edtl=255,
                      lun=lun)
        assert r.status == ri.GOOD
        names[target, lun] = naa_designators(r.data)
        c.logout()
        c.close()
    for naa6, naa3 in names.values():
        # IEEE Registered Extended under the company ID, with 36 bits of
        # the NAA 3 name that stays as it was.
        assert len(naa6) == 16 and len(naa3) == 8
        first = int.from_bytes(naa6[:8], "big")
        assert first >> 36 == 0x6123456, naa6.hex()
        assert first & (2 ** 36 - 1) == int.from_bytes(naa3, "big") & (2 ** 36 - 1)
    # One logical unit behind two targets (an HA pair's ScsiId) is one name.
    assert names[NAME, 0] == names[other, 0]
    assert names[NAME, 0][0] != names[NAME, 1][0]


def test_each_state_is_announced_and_enforced(conn):
    c = conn
    other = Connection(NAME, timeout=30, initiator=iqn("alua-other-host")).connect()
    other.login(clear_ua=True)
    try:
        read = dict(cdb=ri.cdb_read10(0, 1), read=True, edtl=512)
        mode_sense = dict(cdb=ri.cdb_mode_sense10(255), read=True, edtl=255)
        pr_in = dict(cdb=bytes([0x5e, 0, 0, 0, 0, 0, 0, 0, 255, 0]), read=True, edtl=255)
        inquiry = dict(cdb=ri.cdb_inquiry(96), read=True, edtl=96)
        tur = dict(cdb=ri.cdb_test_unit_ready())
        # In every state, as LIO and SCST answer it: a standby path's disk
        # has its size, which a multipath map needs.
        capacity = dict(cdb=ri.cdb_read_capacity10(), read=True, edtl=8)
        capacity16 = dict(cdb=ri.cdb_read_capacity16(32), read=True, edtl=32)
        good = (ri.GOOD, None)
        for state, ascq, passes in [
                ("standby", 0x0b, [mode_sense, pr_in, inquiry, capacity, capacity16]),
                ("unavailable", 0x0c, [inquiry, capacity, capacity16]),
                ("transitioning", 0x0a, [inquiry, capacity, capacity16])]:
            set_state(state)
            # Every nexus hears of it, on each LU, once.
            for x in (c, other):
                for lun in (0, 1):
                    assert sense_of(x, ri.cdb_test_unit_ready(), lun=lun) == \
                        (ri.CHECK_CONDITION, (0x2a, 0x06)), (state, lun)
            assert groups(rtpg(c)) == [(STATES[state[0]], 0x8f, 1, 2, [1])]
            for kw in (read, tur, mode_sense, pr_in, inquiry, capacity, capacity16):
                want = good if kw in passes else (ri.CHECK_CONDITION, (0x04, ascq))
                r = c.execute(**kw)
                assert (r.status, r.sense_triple[1:] if r.status else None) == want, \
                    (state, kw["cdb"].hex())
                if r.status:
                    assert r.sense_triple[0] == NOT_READY
        # Active/non-optimized serves as active/optimized does.
        set_state("an")
        c.clear_unit_attentions()
        assert sense_of(c, **read) == good
        assert groups(rtpg(c)) == [(STATES["an"], 0x8f, 1, 2, [1])]
        set_state("ao")
        c.clear_unit_attentions()
        assert sense_of(c, **read) == good
        # Setting the state it has changes nothing, and no one hears of it.
        set_state("ao")
        assert sense_of(c, **tur) == good
        other.logout()
    finally:
        other.close()


def test_ietadm_shows_groups_and_refuses_what_is_not_there(conn):
    shown = ietadm("--op", "show", "--tid=1").stdout
    assert "PortalGroup=1,State=active/optimized,Sessions=1\n" in shown
    data = json.loads(ietadm("--op", "show", "--tid=1", "--json").stdout)
    assert data["portal_groups"] == [{"tag": 1, "state": "active/optimized", "sessions": 1,
                                      "remote": False}]
    assert data["sessions"][0]["portal_group"] == 1
    for params, says in [("PortalGroup=2,State=standby", "no portal group 2"),
                         ("PortalGroup=1,State=asleep", "wrong State"),
                         ("PortalGroup=1", "PortalGroup=TAG,State=STATE")]:
        cp = ietadm("--op", "update", "--tid=1", "--params", params, check=False)
        assert cp.returncode != 0 and says in cp.stderr, (params, cp.stderr)
    assert sense_of(conn, ri.cdb_test_unit_ready()) == (ri.GOOD, None)


def test_linux_alua_handler_follows_the_state(alua_handler, ietd, initiator):
    """scsi_dh_alua attaches to a TPGS disk, reads REPORT TARGET PORT
    GROUPS, and moves its access_state on ASYMMETRIC ACCESS STATE CHANGED."""
    ietd(Target(NAME, [Lun(0, None, "nullio")]))
    disk = initiator.login(NAME).disk(0)
    dev = Path("/sys/class/block", Path(disk).name, "device")
    assert (dev / "dh_state").read_text().strip() == "alua"
    assert (dev / "access_state").read_text().strip() == "active/optimized"
    set_state("standby")
    # The next command meets the unit attention; the handler re-reads.
    run(["sg_turs", disk], check=False)
    wait_until(lambda: (dev / "access_state").read_text().strip() == "standby", 30,
               lambda: f"access_state {(dev / 'access_state').read_text().strip()}")
    out = run(["sg_rtpg", "--decode", disk]).stdout
    assert "standby" in out.lower(), out
    set_state("ao")
    run(["sg_turs", disk], check=False)
    wait_until(lambda: (dev / "access_state").read_text().strip() == "active/optimized", 30,
               lambda: f"access_state {(dev / 'access_state').read_text().strip()}")
    run(["dd", f"if={disk}", "of=/dev/null", "bs=4k", "count=16", "iflag=direct"])
