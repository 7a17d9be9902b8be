# SPDX-License-Identifier: GPL-2.0
"""ietadm against the real kernel with a logged-in initiator: counters in
show (text and JSON), targets by name, clear refusals, closing a
connection, login redirection, and the full teardown of --op delete."""

import json
import socket
import struct
import threading
import time

from ietlib import daemon, ietadm  # noqa: F401
from vmlib import proc
from vmlib import rawiscsi as ri
from vmlib.target import iqn
from vmlib.util import run, wait_until


RAW = "iqn.2024-01.com.example.iet:counters"


def nullio(name, luns=1):
    return f"Target {name}\n" + "".join(f"\tLun {n} Type=nullio,Blocks=65536\n"
                                        for n in range(luns))


def test_show_counts_commands_and_bytes_per_lun_and_session(daemon):
    """Counters of exactly what was sent: a raw initiator's commands (the
    kernel initiator's own probes, and udev's, would blur the counts)."""
    name = iqn("adm-counters")
    daemon(nullio(name))
    c = ri.Connection(name, initiator=RAW)
    c.connect()
    # As an initiator does, the login takes the LUN's POWER ON unit
    # attention: REPORT LUNS, TEST UNIT READY (CHECK CONDITION), again.
    c.login(clear_ua=False)
    assert c.clear_unit_attentions() == {0: [(0x29, 0x00)]}
    reads = [c.execute(ri.cdb_read10(i * 128, 128), read=True, edtl=65536, timeout=10)
             for i in range(32)]
    writes = [c.execute(ri.cdb_write10(i * 128, 128), data=bytes(65536), timeout=10)
              for i in range(16)]
    # One command that fails: READ(10) past the end.
    bad = c.execute(ri.cdb_read10(0xFFFFFFFE, 1), read=True, edtl=512, timeout=10)
    assert all(r.status == ri.GOOD for r in reads + writes)
    assert bad.status == ri.CHECK_CONDITION

    [target] = json.loads(ietadm("--op", "show", "--json").stdout)["targets"]
    lun, session = target["luns"][0]["stats"], target["sessions"][0]
    assert (lun["read_bytes"], lun["write_bytes"]) == (32 * 65536, 16 * 65536)
    assert (lun["commands"], lun["errors"]) == (3 + 49, 1 + 1)
    assert session["stats"] == lun
    assert session["initiator"] == RAW
    assert session["connections"][0]["ip"] == "127.0.0.1"
    sid = session["sid"]
    assert sid == proc.sessions_of(name)[0].sid

    # The same counters as text.
    text = dict(line.split("=", 1) for line in
                ietadm("--op", "show", f"--tid={name}", f"--sid={sid}").stdout.split())
    assert int(text["ReadBytes"]) == lun["read_bytes"]
    text = dict(line.split("=", 1) for line in
                ietadm("--op", "show", "--tid=1", "--lun=0").stdout.split())
    assert text["Type"] == "nullio" and int(text["WrittenBytes"]) == lun["write_bytes"]
    tree = ietadm("--op", "show").stdout
    assert tree.startswith(f"tid:1 name:{name}\n\tlun:0 iotype:nullio iomode:wt commands:52 ")
    c.logout(timeout=10)
    c.close()


def test_refusals_are_one_clear_line_and_a_non_zero_status(daemon, initiator):
    name = iqn("adm-refusals")
    daemon(nullio(name))
    initiator.login(name)
    [s] = proc.sessions_of(name)

    cp = ietadm("--op", "delete", "--tid=1", check=False)
    assert cp.returncode == 1
    assert cp.stderr == (f"ietadm: target 1 {name} has 1 session: close it first "
                         f"(ietadm --op delete --tid=1 --sid={s.sid} --cid=0), "
                         "or let it log out (--params LogoutTimeout=SECONDS)\n")
    cp = ietadm("--op", "show", "--tid=7", check=False)
    assert (cp.returncode, cp.stderr) == (1, "ietadm: no target with tid 7\n")
    cp = ietadm("--op", "new", "--tid=1", "--lun=0", "--params=Type=nullio", check=False)
    assert (cp.returncode, cp.stderr) == (1, "ietadm: target 1 already has LUN 0\n")
    cp = ietadm("--op", "update", "--tid=1", "--params=MaxBurstLength=lots", check=False)
    assert cp.returncode == 1 and "MaxBurstLength: \"lots\" is not a number" in cp.stderr
    cp = ietadm("--op", "frobnicate", check=False)
    assert cp.returncode == 2


def test_closing_a_connection_as_in_proc(daemon, initiator):
    name = iqn("adm-close")
    daemon(nullio(name))
    initiator.login(name, settings={"node.session.timeo.replacement_timeout": 5})
    [s] = proc.sessions_of(name)
    ietadm("--op", "delete", f"--tid={name}", f"--sid={s.sid}", f"--cid={s.conns[0].cid}")
    # The session ends with its only connection (the initiator may come
    # back later, as a new session).
    wait_until(lambda: all(x.sid != s.sid for x in proc.sessions_of(name)), 10,
               "the closed session to leave /proc/net/iet/session")


def test_delete_alone_tears_everything_down(daemon, initiator):
    a, b = iqn("adm-down-a"), iqn("adm-down-b")
    d = daemon(nullio(a) + nullio(b, 2))
    initiator.login(a, settings={"node.session.initial_login_retry_max": 1,
                                 "node.session.timeo.replacement_timeout": 5})
    ietadm("--op", "delete")
    assert proc.volumes() == []
    assert proc.SESSION.read_text() == ""
    assert d.running
    # ietd carries on, ready for new targets.
    ietadm("--op", "new", "--tid=0", "--params", f"Name={a}")
    assert [t.name for t in proc.volumes()] == [a]


def login_request(target):
    """A Login Request in the security stage, straight to the operational."""
    text = (f"InitiatorName=iqn.2024-01.com.example.iet:raw\0TargetName={target}\0"
            "SessionType=Normal\0AuthMethod=None\0").encode()
    text += b"\0" * (-len(text) % 4)
    n = len(text.rstrip(b"\0")) + 1
    bhs = struct.pack(">BBBBB3s6sHIHHII16x", 0x43, 0x81, 0, 0, 0, n.to_bytes(3, "big"),
                      bytes([0x80, 0, 0, 0, 0, 1]), 0, 1, 0, 0, 1, 0)
    return bhs + text


def test_update_redirect_sends_new_logins_elsewhere(daemon):
    name = iqn("adm-redirect")
    daemon(nullio(name))
    ietadm("--op", "update", f"--tid={name}", "--redirect=192.0.2.33")
    assert "Redirect=192.0.2.33:3260\n" in ietadm("--op", "show", "--tid=1").stdout

    with socket.create_connection(("127.0.0.1", 3260), timeout=10) as s:
        s.sendall(login_request(name))
        rsp = b""
        while len(rsp) < 48:
            rsp += s.recv(4096)
        dlen = int.from_bytes(rsp[5:8], "big")
        while len(rsp) < 48 + dlen:
            rsp += s.recv(4096)
    assert rsp[0] & 0x3f == 0x23
    assert (rsp[36], rsp[37]) == (1, 1), "status: target moved temporarily"
    assert b"TargetAddress=192.0.2.33:3260,1\0" in rsp[48:48 + dlen]

    ietadm("--op", "update", f"--tid={name}", "--redirect=")
    assert "Redirect=" not in ietadm("--op", "show", "--tid=1").stdout
    wait_until(lambda: proc.sessions_of(name) == [], 5, "no session")


def test_show_while_sessions_come_and_go_never_fails(daemon):
    """The kernel marks a dump that a login or a logout cut across
    (NLM_F_DUMP_INTR), which libmnl reports as EINTR: ietd reads the state
    again rather than failing the command (it failed `--op delete` with
    LogoutTimeout, whose wait reads the state over and over)."""
    name = iqn("adm-churn")
    # Enough LUNs that their dump takes several reads, each a chance for
    # a login or logout to come between.
    daemon(nullio(name, luns=1000))
    stop = threading.Event()
    churned = []
    errors = []

    def churn():
        while not stop.is_set():
            try:
                c = ri.Connection(name, initiator=RAW, timeout=30).connect()
                c.login(clear_ua=False)
                c.logout()
                c.close()
                churned.append(1)
            except Exception as e:      # reported below, not lost in the thread
                errors.append(e)
                return

    threads = [threading.Thread(target=churn) for _ in range(3)]
    for t in threads:
        t.start()
    shows = 0
    try:
        # 30 s, and on, up to 120 s, until there were 50 shows and 10
        # logins: a guest of one vCPU beside another may need longer.
        start = time.monotonic()
        while time.monotonic() < start + 30 or \
                ((shows < 50 or len(churned) < 10) and time.monotonic() < start + 120):
            cp = ietadm("--op", "show", "--tid=1", check=False)
            assert cp.returncode == 0, cp.stderr
            shows += 1
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert not errors, errors
    assert len(churned) >= 10 and shows >= 50, (len(churned), shows)
    assert ietadm("--op", "show", "--tid=1").returncode == 0
