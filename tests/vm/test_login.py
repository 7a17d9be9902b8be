# SPDX-License-Identifier: GPL-2.0
"""Discovery, login and logout with open-iscsi, as /proc/net/iet/session shows them."""

import pytest

from vmlib import initiator as ini
from vmlib import proc
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, wait_until

pytestmark = pytest.mark.short

OPEN_ISCSI_ISID_OUI = 0x00023D    # open-iscsi's ISIDs start 00 02 3D
BOTH_DIGESTS = {"HeaderDigest": "None,CRC32C", "DataDigest": "None,CRC32C"}


def one_target(backing, name, **params):
    return Target(iqn(name), [Lun(0, str(backing(name, 64 * MiB)))], params={**BOTH_DIGESTS, **params})


def test_discovery_reports_every_target_on_the_portal(ietd, backing, initiator):
    ietd(one_target(backing, "first"), one_target(backing, "second"))
    found = initiator.discover("127.0.0.1:3260")
    assert sorted((d.portal, d.iqn) for d in found) == \
        [("127.0.0.1:3260", iqn("first")), ("127.0.0.1:3260", iqn("second"))]


@pytest.mark.parametrize("digest", ["none", "crc32c"])
def test_login_shows_the_session_in_proc(ietd, backing, initiator, digest):
    ietd(one_target(backing, "login"))
    crc = digest == "crc32c"
    login = initiator.login(iqn("login"), header_digest="CRC32C" if crc else None,
                            data_digest="CRC32C" if crc else None)

    [session] = proc.sessions_of(iqn("login"))
    assert session.initiator == initiator.name
    assert session.isid >> 24 == OPEN_ISCSI_ISID_OUI, f"sid {session.sid:#x} is not ISID << 16 | TSIH"
    assert session.tsih != 0
    assert session.conns == [proc.Conn(cid=0, ip="127.0.0.1", state="active", hd=digest, dd=digest)]
    # The initiator agrees on what was negotiated.
    assert login.sysfs.conn_attr("header_digest") == ("1" if crc else "0")
    assert login.sysfs.conn_attr("data_digest") == ("1" if crc else "0")


def test_each_login_is_a_session_of_its_own_target(ietd, backing, initiator):
    ietd(one_target(backing, "a"), one_target(backing, "b"))
    initiator.login(iqn("a"))
    initiator.login(iqn("b"))
    by_target = {t.name: t.sessions for t in proc.sessions()}
    assert len(by_target[iqn("a")]) == 1 and len(by_target[iqn("b")]) == 1
    assert by_target[iqn("a")][0].sid != by_target[iqn("b")][0].sid


def test_logout_ends_the_session(ietd, backing, initiator):
    ietd(one_target(backing, "logout"))
    initiator.login(iqn("logout"))
    initiator.logout(iqn("logout"))
    wait_until(lambda: proc.sessions_of(iqn("logout")) == [], 10, "the session to leave /proc")
    assert proc.SESSION.read_text() == f"tid:1 name:{iqn('logout')}\n"


def test_login_to_a_missing_target_is_refused_as_not_found(ietd, backing, iscsid):
    ietd(one_target(backing, "present"))
    log_offset = iscsid.log_size()
    cp = ini.login_refused(iqn("missing"))
    assert cp.returncode == ini.ISCSI_ERR_FATAL_LOGIN, cp.stderr
    assert "target not found" in iscsid.log_since(log_offset)
    assert ini.find_session(iqn("missing")) is None
    assert proc.SESSION.read_text() == f"tid:1 name:{iqn('present')}\n"
