# SPDX-License-Identifier: GPL-2.0
"""Before IET closes sessions on purpose, it asks their initiators to log
out (Async Message, AsyncEvent 1, RFC 7143 11.9.1), so that a multipath
initiator moves to another path at once instead of timing out: ietadm's
full teardown does so by default, and --op delete of a target, a session
or a connection with --params LogoutTimeout=SECONDS. An initiator that
logs out is let go without more; one that ignores the request is dropped
at the deadline; every connection of a session hears the request on its
own. open-iscsi answers with a Logout."""

import threading
import time

from ietlib import ietadm
from vmlib import initiator as ini
from vmlib import proc
from vmlib import rawiscsi as ri
from vmlib.mcs import second
from vmlib.kmsg import KernelLog
from vmlib.rawiscsi import Connection
from vmlib.target import Lun, Target, iqn
from vmlib.util import wait_until

NAME = iqn("async-logout")


def target(ietd, name=NAME):
    ietd(Target(name, [Lun(0, None, "nullio")], {"MaxConnections": 2}))


def raw(name=NAME):
    c = Connection(name, timeout=30).connect()
    c.login({"MaxConnections": 2}, clear_ua=True)
    return c


def in_background(*args):
    """ietadm args in a thread: (thread, result holder)."""
    out = {}

    def go():
        t0 = time.monotonic()
        out["cp"] = ietadm(*args, check=False, timeout=90)
        out["secs"] = time.monotonic() - t0

    t = threading.Thread(target=go)
    t.start()
    return t, out


def expect_request(c, timeout=20):
    p = c.expect(lambda p: p.opcode == ri.ASYNC_MSG, timeout, "Async Message")
    event, param1, param2, param3 = p.u8(36), p.u16(38), p.u16(40), p.u16(42)
    assert p.final and p.itt == ri.RESERVED_TAG and p.dlength == 0, p
    assert (event, param1, param2) == (1, 0, 0), p
    return p, param3


def test_a_session_asked_to_log_out_that_does_is_let_go(ietd):
    target(ietd)
    c = raw()
    [s] = proc.sessions_of(NAME)
    statsn = c.exp_statsn
    t, out = in_background("--op", "delete", "--tid=1", f"--sid={s.sid}",
                           "--params", "LogoutTimeout=20")
    p, wait = expect_request(c)
    assert wait == 20
    # A status of its own: the StatSN it carries is the next one.
    assert p.statsn == statsn
    # The session still works until the initiator goes.
    r = c.execute(ri.cdb_test_unit_ready())
    assert r.status == ri.GOOD
    rsp = c.logout()
    assert rsp.response == 0
    t.join(60)
    assert out["cp"].returncode == 0, out["cp"].stderr
    # Done once it logged out, not at the deadline.
    assert out["secs"] < 15, out["secs"]
    assert proc.sessions_of(NAME) == []
    c.close()


def test_an_initiator_that_ignores_the_request_is_dropped_at_the_deadline(ietd):
    target(ietd)
    log = KernelLog()
    c = raw()
    t, out = in_background("--op", "delete", "--tid=1", "--params", "LogoutTimeout=2")
    expect_request(c)
    t0 = time.monotonic()
    how = c.wait_closed(30)
    assert how is not None, "the target kept the connection past the deadline"
    assert time.monotonic() - t0 >= 1
    t.join(60)
    assert out["cp"].returncode == 0, out["cp"].stderr
    # The target went with its session.
    assert proc.volumes() == []
    assert any("no Logout within 2 s of asking for it" in ln for ln in log.new_lines())
    log.close()
    c.close()


def test_every_connection_of_a_session_hears_the_request(ietd):
    target(ietd)
    a = raw()
    b = second(a)
    t, out = in_background("--op", "delete", "--params", "LogoutTimeout=20")
    expect_request(a)
    expect_request(b)
    # One Logout for the session ends both connections.
    assert a.logout().response == 0
    assert b.wait_closed(20) is not None
    t.join(60)
    assert out["cp"].returncode == 0, out["cp"].stderr
    assert out["secs"] < 15, out["secs"]
    assert proc.volumes() == []
    a.close()
    b.close()


def test_one_connection_is_asked_alone(ietd):
    target(ietd)
    a = raw()
    b = second(a)
    [s] = proc.sessions_of(NAME)
    t, out = in_background("--op", "delete", "--tid=1", f"--sid={s.sid}", "--cid=1",
                           "--params", "LogoutTimeout=20")
    expect_request(b)
    assert b.logout(reason=ri.LOGOUT_CLOSE_CONNECTION).response == 0
    t.join(60)
    assert out["cp"].returncode == 0, out["cp"].stderr
    # The other connection heard nothing and carries on.
    assert not [p for p in a.poll() if p.opcode == ri.ASYNC_MSG]
    assert a.execute(ri.cdb_test_unit_ready()).status == ri.GOOD
    [s] = proc.sessions_of(NAME)
    assert [x.cid for x in s.conns] == [0]
    a.logout()
    a.close()
    b.close()


def test_wrong_logout_times_are_refused_and_nothing_changes(ietd):
    target(ietd)
    c = raw()
    for bad in ("LogoutTimeout=61", "LogoutTimeout=-1", "LogoutTimeout=soon"):
        cp = ietadm("--op", "delete", "--params", bad, check=False)
        assert cp.returncode != 0
        assert "LogoutTimeout=SECONDS (0..60)" in cp.stderr
    # Without a LogoutTimeout a target with sessions stays, as in IET.
    cp = ietadm("--op", "delete", "--tid=1", check=False)
    assert cp.returncode != 0 and "LogoutTimeout" in cp.stderr
    assert not [p for p in c.poll() if p.opcode == ri.ASYNC_MSG]
    assert len(proc.sessions_of(NAME)) == 1
    c.logout()
    c.close()


def test_open_iscsi_logs_out_when_the_target_is_shut_down(ietd, initiator):
    target(ietd)
    log = KernelLog()
    initiator.login(NAME, settings={"node.session.initial_login_retry_max": 1,
                                    "node.session.timeo.replacement_timeout": 5})
    t0 = time.monotonic()
    ietadm("--op", "delete", timeout=90)
    # open-iscsi answered the request with a Logout: well before the
    # default deadline of 10 s, and nothing had to be dropped.
    assert time.monotonic() - t0 < 8
    assert proc.volumes() == []
    lines = log.new_lines()
    assert any("asked to log out within 10 s" in ln for ln in lines), lines[-20:]
    assert not any("no Logout within" in ln for ln in lines), lines[-20:]
    log.close()
    wait_until(lambda: not ini.find_session(NAME, ini.PORTAL) or
               ini.find_session(NAME, ini.PORTAL).state != "LOGGED_IN", 30,
               "open-iscsi to see the session end")

