# SPDX-License-Identifier: GPL-2.0
"""Restarting ietd never interrupts sessions already in the kernel: killed
with SIGKILL while fio verifies data and started again, it reads the
kernel's targets and sessions back; fio sees no error, the session is still
listed, new logins work, and what ietadm changed at runtime (a target, its
CHAP account) is remembered. ietd also runs as another user keeping only
CAP_NET_ADMIN."""

from ietlib import BackgroundFio, chap, daemon, ietadm, login_fails  # noqa: F401
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import MiB, run, wait_until

SECRET = "restart-secret-99"


def test_kill9_and_restart_while_fio_verifies(daemon, backing, initiator):
    busy, spare = iqn("restart-busy"), iqn("restart-spare")
    text = (f"Target {busy}\n\tLun 0 Path={backing('busy', 64 * MiB)},Type=fileio\n"
            f"Target {spare}\n\tLun 0 Type=nullio,Blocks=65536\n")
    d = daemon(text)
    disk = initiator.login(busy).disk(0)
    [before] = proc.sessions_of(busy)
    fio = BackgroundFio(disk, "restart-busy", seconds=40)
    wait_until(lambda: fio.running(), 5, "fio to start")

    d.kill9()
    assert proc.sessions_of(busy) == [before]
    d2 = daemon(text)
    d2.wait_log(r"1 sessions already in the kernel")
    assert proc.sessions_of(busy) == [before]

    # ietd knows the session again: ietadm shows it, new logins work.
    assert "InitialR2T=" in ietadm("--op", "show", "--tid=1", f"--sid={before.sid}").stdout
    initiator.login(spare).disk(0)
    assert len(proc.sessions_of(spare)) == 1
    fio.wait_clean(early=True)
    assert proc.sessions_of(busy) == [before]


def test_restart_remembers_what_ietadm_changed(daemon, initiator):
    made = iqn("restart-made-by-ietadm")
    text = f"Target {iqn('restart-file')}\n\tLun 0 Type=nullio\n"
    d = daemon(text)
    ietadm("--op", "new", "--tid=0", "--params", f"Name={made}")
    ietadm("--op", "new", f"--tid={made}", "--lun=0", "--params=Type=nullio,Blocks=65536")
    ietadm("--op", "new", "--user", f"--tid={made}",
           f"--params=IncomingUser=joe,Password={SECRET}")
    d.kill9()
    daemon(text)
    # Still the target ietadm made, still guarded by its CHAP account.
    assert proc.target(proc.volumes(), made).tid == 2
    assert ietadm("--op", "show", f"--tid={made}", "--user").stdout == "IncomingUser=joe\n"
    login_fails(made)
    initiator.login(made, settings=chap("joe", SECRET))


def test_restart_with_the_same_config_changes_nothing(daemon, initiator):
    name = iqn("restart-same")
    text = f"Target {name}\n\tLun 0 Type=nullio\n\tMaxRecvDataSegmentLength 65536\n"
    d = daemon(text)
    initiator.login(name)
    [s] = proc.sessions_of(name)
    volume = proc.VOLUME.read_text()
    d.stop()            # SIGTERM: ietd goes, the kernel's state stays
    assert proc.sessions_of(name) == [s]
    d2 = daemon(text)
    assert proc.VOLUME.read_text() == volume
    assert proc.sessions_of(name) == [s]
    assert "nothing to change" in ietadm("--op", "reload").stdout
    assert "start:" not in d2.log_text()


def test_ietd_runs_as_another_user_with_only_cap_net_admin(daemon, initiator):
    name = iqn("restart-nobody")
    d = daemon(f"Target {name}\n\tLun 0 Type=nullio\n", args=["-u", "nobody"])
    status = dict(line.split(":", 1) for line in open(f"/proc/{d.proc.pid}/status"))
    assert status["Uid"].split()[0] == run(["id", "-u", "nobody"]).stdout.strip()
    assert status["CapEff"].strip() == "0000000000001000"
    initiator.login(name).disk(0)
    # It still writes its state (through the descriptor it kept).
    ietadm("--op", "update", "--tid=1", "--params=MaxSessions=4")
    assert "MaxSessions=4" in ietadm("--op", "show", "--tid=1").stdout
