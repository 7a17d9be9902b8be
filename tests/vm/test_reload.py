# SPDX-License-Identifier: GPL-2.0
"""Reloading ietd.conf (SIGHUP, ietadm --op reload): the difference with
what runs is applied and nothing else is touched -- fio verifying data on a
target the change does not concern sees no error; removals in use are
refused with a clear message; a bad file changes nothing; --dry-run only
says what would be done; systemd hears of it (Type=notify)."""

import socket

from ietlib import BackgroundFio, daemon, ietadm, wait_gone  # noqa: F401
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import MiB, wait_until


def lun(path=None, n=0, extra=""):
    if path:
        return f"\tLun {n} Path={path},Type=fileio{extra}\n"
    return f"\tLun {n} Type=nullio,Blocks=65536{extra}\n"


def test_sighup_applies_a_changed_config_while_fio_verifies_another_target(
        daemon, backing, initiator):
    busy, changed, removed, added = (iqn("reload-busy"), iqn("reload-changed"),
                                      iqn("reload-removed"), iqn("reload-added"))
    image = backing("busy", 64 * MiB)
    before = (f"Target {busy}\n{lun(image)}"
              f"Target {changed}\n{lun()}\tMaxRecvDataSegmentLength 8192\n"
              f"Target {removed}\n{lun()}")
    d = daemon(before)
    disk = initiator.login(busy).disk(0)
    sid = proc.sessions_of(busy)[0].sid
    fio = BackgroundFio(disk, "reload-busy", seconds=45)
    wait_until(lambda: fio.running(), 5, "fio to start")

    d.config.write_text(f"Target {busy}\n{lun(image)}"
                        f"Target {changed}\n{lun()}{lun(n=1)}"
                        f"\tMaxRecvDataSegmentLength 65536\n\tInitialR2T No\n"
                        f"Target {added}\n{lun()}")
    offset = len(d.log_text())
    d.hup()
    d.wait_log(r"reload: tid 4 " + added + ": create", since=offset)
    d.wait_log(r"reload: tid 2 " + changed + " LUN 1: add", since=offset)
    d.wait_log(r"reload: tid 3 " + removed + ": delete", since=offset)
    d.wait_log(r"reload: tid 2 " + changed + r": set InitialR2T=No, MaxRecvDataSegmentLength=65536",
               since=offset)

    vol = {t.name: t for t in proc.volumes()}
    assert added in vol and removed not in vol
    assert [l.lun for l in vol[changed].luns] == [0, 1]
    assert vol[busy].tid == 1 and vol[changed].tid == 2
    assert "MaxRecvDataSegmentLength=65536" in ietadm("--op", "show", "--tid=2", "--sid=0").stdout
    fio.wait_clean(early=True)
    # The busy target's session is the one it had.
    assert [s.sid for s in proc.sessions_of(busy)] == [sid]


def test_reload_dry_run_prints_the_plan_and_changes_nothing(daemon):
    a, b = iqn("dry-a"), iqn("dry-b")
    d = daemon(f"Target {a}\n{lun()}")
    d.config.write_text(f"Target {a}\n{lun()}{lun(n=1)}Target {b}\n{lun()}")
    cp = ietadm("--op", "reload", "--dry-run")
    assert cp.stdout == (f"tid 2 {b}: create\n"
                         f"tid 2 {b} LUN 0: add (nullio)\n"
                         f"tid 1 {a} LUN 1: add (nullio)\n")
    assert [t.name for t in proc.volumes()] == [a]
    ietadm("--op", "reload")
    assert [t.name for t in proc.volumes()] == [a, b]
    assert ietadm("--op", "reload").stdout == "nothing to change\n"


def test_reload_keeps_a_removed_target_in_use_and_says_so(daemon, initiator):
    used, other = iqn("reload-in-use"), iqn("reload-other")
    d = daemon(f"Target {used}\n{lun()}{lun(n=1)}Target {other}\n{lun()}")
    initiator.login(used)
    d.config.write_text(f"Target {other}\n{lun()}")
    cp = ietadm("--op", "reload", check=False)
    # All it could do done: a success, or systemctl reload would fail.
    assert cp.returncode == 0, cp.stderr
    assert f"refused: tid 1 {used}: removed from the configuration, kept: it has 1 session" \
        in cp.stdout
    assert "1 change deferred while sessions use it (the rest applied)" in cp.stdout
    assert proc.target(proc.volumes(), used) is not None
    assert len(proc.sessions_of(used)) == 1
    # Once the session is gone, the next reload removes it.
    initiator.logout(used)
    wait_until(lambda: proc.sessions_of(used) == [], 20, "the session to end")
    ietadm("--op", "reload")
    wait_gone(used)


def test_reload_of_a_bad_config_changes_nothing(daemon):
    a = iqn("reload-bad")
    d = daemon(f"Target {a}\n{lun()}")
    d.config.write_text(f"Target {a}\n{lun()}\tMaxBurstLength lots\nTarget {iqn('never')}\n")
    cp = ietadm("--op", "reload", check=False)
    assert cp.returncode == 1
    assert cp.stderr == f"ietadm: {d.config}:3: MaxBurstLength: \"lots\" is not a number\n"
    offset = len(d.log_text())
    d.hup()
    d.wait_log(r"reload refused, nothing changed: .*MaxBurstLength", since=offset)
    assert [t.name for t in proc.volumes()] == [a]
    assert d.running


def test_ietd_tells_systemd_it_is_ready_and_reloading(daemon, tmp_path, monkeypatch):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    sock.bind(str(path))
    sock.settimeout(30)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    d = daemon(f"Target {iqn('notify')}\n{lun()}")
    assert sock.recv(256) == b"READY=1"
    d.hup()
    assert sock.recv(256) == b"RELOADING=1"
    assert sock.recv(256) == b"READY=1"
    d.stop()
    assert sock.recv(256) == b"STOPPING=1"
    sock.close()
