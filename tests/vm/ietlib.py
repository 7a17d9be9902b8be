# SPDX-License-Identifier: GPL-2.0
"""What the security, administration, reload and restart tests share: ietd
started from raw configuration text (accounts, access files, extra options),
CHAP settings for open-iscsi, logins and discoveries expected to fail,
ietadm, fio in the background, a second local address, and ietd's state.

Fixtures here are imported by the test modules that use them (conftest.py
belongs to the harness)."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from vmlib import initiator as ini
from vmlib import proc
from vmlib.target import IETD, Ietd, iqn, listening
from vmlib.util import REPO, RESULTS, run, safe_name, tail, wait_until

IETADM = REPO / "usr" / "ietadm"
# open-iscsi's names of the CHAP algorithms, with their IANA numbers.
ALGORITHMS = {"MD5": 5, "SHA1": 6, "SHA256": 7, "SHA3-256": 8}
# iscsiadm's status when the target refused the login (iscsi_err.h).
ISCSI_ERR_LOGIN_AUTH_FAILED = 24
OTHER_IP = "10.99.0.1"          # a second local address, on lo


def ietadm(*args, check=True, timeout=60, user=None):
    """ietadm with args; user="nobody" runs it without privileges."""
    cmd = [str(IETADM), *args]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user_group(user)}",
               "--clear-groups", "--inh-caps=-all", *cmd]
    return run(cmd, check=check, timeout=timeout)


def stats(tid, what):
    """The --stats JSON of a LUN ("lun=0") or a session ("sid=N")."""
    key, val = what.split("=")
    return json.loads(ietadm("--op", "show", f"--tid={tid}", f"--{key}={val}",
                             "--stats", "--json").stdout)["stats"]


def user_group(user):
    out = run(["id", "-g", user]).stdout.strip()
    return out


# ---------------------------------------------------------------- ietd

class Daemon(Ietd):
    """ietd from configuration text; signals, kill -9 and restarts."""

    def start(self, timeout=30):
        super().start(timeout)
        return self

    def hup(self):
        self.proc.send_signal(signal.SIGHUP)

    def kill9(self):
        """Killed the hard way: nothing of ietd runs its exit path."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None
        wait_until(lambda: not listening(self.port), 10, "the port to close after kill -9")

    def log_text(self):
        return self.log.read_text(errors="replace")

    def wait_log(self, pattern, timeout=30, since=0):
        """The first match of the regular expression in the log after since."""
        rx = re.compile(pattern)
        return wait_until(lambda: rx.search(self.log_text()[since:]), timeout,
                          lambda: f"ietd to log /{pattern}/; log:\n{tail(self.log)}")


@pytest.fixture
def daemon(kmod, request):
    """Factory: daemon(config_text, args=()) -> a running Daemon.
    Like conftest's ietd: at the end sessions are logged out and each ietd
    still running must exit 0 on SIGTERM; the kernel's targets go with the
    module."""
    started = []

    def start(text, args=()):
        n = f"ietd-{safe_name(request.node.name)}-{len(started)}"
        d = Daemon(text, n, args=list(args))
        started.append(d)
        return d.start()

    yield start
    if ini.sysfs_sessions() and ini.Iscsid.listening():
        ini.logout_all()
    for d in reversed(started):
        d.stop()


@pytest.fixture
def access_dir(request):
    """A directory for initiators.allow / .deny / targets.allow
    (ietd --access-dir); removed at the end."""
    d = Path(tempfile.mkdtemp(prefix=f"iet-access-{safe_name(request.node.name)[:40]}-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def other_ip():
    """OTHER_IP on lo for the test: a second portal address."""
    run(["ip", "addr", "add", f"{OTHER_IP}/32", "dev", "lo"])
    yield OTHER_IP
    run(["ip", "addr", "del", f"{OTHER_IP}/32", "dev", "lo"], check=False)


# ---------------------------------------------------------------- open-iscsi

def chap(user, secret, algs=None, user_in=None, secret_in=None):
    """Node settings for CHAP (mutual when user_in is given)."""
    s = {"node.session.auth.authmethod": "CHAP",
         "node.session.auth.username": user,
         "node.session.auth.password": secret}
    if algs:
        s["node.session.auth.chap_algs"] = algs
    if user_in:
        s["node.session.auth.username_in"] = user_in
        s["node.session.auth.password_in"] = secret_in
    return s


def login_fails(name, portal=ini.PORTAL, settings=None, timeout=120):
    """A login that must be refused: iscsiadm's CompletedProcess, once it
    has given up (retries cut short), with no session left behind."""
    node = ["-m", "node", "-T", name, "-p", portal]
    ini.iscsiadm(*node, "-o", "delete", check=False)
    ini.iscsiadm(*node, "-o", "new")
    keys = {"node.session.initial_login_retry_max": 1,
            "node.conn[0].timeo.login_timeout": 5}
    keys.update(settings or {})
    for k, v in keys.items():
        ini.iscsiadm(*node, "-o", "update", "-n", k, "-v", str(v))
    try:
        cp = ini.iscsiadm(*node, "--login", check=False, timeout=timeout)
    finally:
        ini.iscsiadm(*node, "-o", "delete", check=False)
    assert cp.returncode != 0, f"login to {name} via {portal} succeeded: {cp.stdout}"
    assert ini.find_session(name, portal) is None
    return cp


def discover(portal=ini.PORTAL, settings=None, timeout=60):
    """SendTargets discovery with discovery-record settings (CHAP): the
    (returncode, [iqn, ...]) iscsiadm gives."""
    rec = ["-m", "discoverydb", "-t", "st", "-p", portal]
    ini.iscsiadm(*rec, "-o", "delete", check=False)
    ini.iscsiadm(*rec, "-o", "new")
    for k, v in (settings or {}).items():
        ini.iscsiadm(*rec, "-o", "update", "-n", k, "-v", str(v))
    try:
        cp = ini.iscsiadm(*rec, "--discover", check=False, timeout=timeout)
    finally:
        ini.iscsiadm(*rec, "-o", "delete", check=False)
        # discovery leaves node records behind; they are not ours to keep
        ini.iscsiadm("-m", "node", "-o", "delete", check=False)
    names = [line.split()[-1] for line in cp.stdout.splitlines() if line.strip()]
    return cp.returncode, names


def discovery_chap(user, secret):
    return {"discovery.sendtargets.auth.authmethod": "CHAP",
            "discovery.sendtargets.auth.username": user,
            "discovery.sendtargets.auth.password": secret}


# ---------------------------------------------------------------- fio

class BackgroundFio:
    """fio writing and verifying (verify_backlog) a disk for a while, so
    that something can happen to the target meanwhile."""

    def __init__(self, disk, name, seconds=40, size="32M"):
        base = RESULTS / f"fio-{safe_name(name)}"
        self.job = Path(f"{base}.fio")
        self.json = Path(f"{base}.json")
        self.job.write_text("\n".join([
            "[global]", f"filename={disk}", "ioengine=libaio", "direct=1",
            f"size={size}", "bs=4k", "iodepth=8", "rw=randwrite",
            "verify=crc32c", "verify_fatal=1", "verify_backlog=64",
            "time_based=1", f"runtime={seconds}", "", "[verify]", ""]))
        self.proc = subprocess.Popen(
            ["fio", "--output-format=json", f"--output={self.json}", str(self.job)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.started = time.monotonic()

    def running(self):
        return self.proc.poll() is None

    # fio takes SIGINT as "stop and report" only once it has set itself
    # up: before, it dies of it (seen in a VM: status -2, no report).
    STARTUP = 15

    def wait_clean(self, timeout=600, early=False, settle=3):
        """fio ended with status 0, no job error, and it verified data.
        early: once what the test made happen is over, fio need not run
        out its time: after `settle` more seconds of I/O (and STARTUP
        seconds in all) it is told to stop (SIGINT: fio ends its jobs,
        writes its report, exits 128)."""
        interrupted = False
        if early and self.running():
            time.sleep(max(settle, self.STARTUP - (time.monotonic() - self.started)))
            if self.running():
                self.proc.send_signal(signal.SIGINT)
                interrupted = True
        out, _ = self.proc.communicate(timeout=timeout)
        return fio_report_clean(self.proc.returncode, out, self.json, interrupted)

    def stop(self):
        if self.running():
            self.proc.kill()
            self.proc.wait(30)


def fio_report_clean(rc, out, json_path, interrupted=False):
    """The first job of fio's JSON report, asserted free of errors, having
    written and verified data. An interrupted fio (SIGINT) exits 128 after
    writing its report."""
    text = json_path.read_text() if json_path.exists() else ""
    ok = (0, 128) if interrupted else (0,)
    assert rc in ok, f"fio exited with {rc}:\n{out}\n{text[-2000:]}"
    report = json.loads(text[text.index("{"):])
    job = report["jobs"][0]
    assert job["error"] == 0, f"fio job error {job['error']} ({json_path})"
    assert job["write"]["io_bytes"] > 0 and job["read"]["io_bytes"] > 0, \
        f"fio wrote or verified nothing ({json_path})"
    return job


# ---------------------------------------------------------------- state

def volume_state():
    """/proc/net/iet/volume as comparable data: {name: (tid, [luns])}."""
    return {t.name: (t.tid, [(l.lun, l.iotype, l.iomode, l.blocksize, l.path) for l in t.luns])
            for t in proc.volumes()}


def shown_state():
    """ietadm --op show --json without what changes by itself (counters,
    sessions): what a configuration determines."""
    data = json.loads(ietadm("--op", "show", "--json").stdout)
    for t in data["targets"]:
        t.pop("sessions", None)
        # Who made a target is no part of what it is.
        t.pop("origin", None)
        for lun in t.get("luns", []):
            lun.pop("stats", None)
    return data


def wait_gone(name, timeout=30):
    wait_until(lambda: proc.target(proc.volumes(), name) is None, timeout,
               f"{name} to leave /proc/net/iet/volume")


__all__ = ["ALGORITHMS", "BackgroundFio", "Daemon", "IETADM", "IETD", "ISCSI_ERR_LOGIN_AUTH_FAILED",
           "OTHER_IP", "access_dir", "chap", "daemon", "discover", "discovery_chap", "ietadm",
           "iqn", "login_fails", "other_ip", "shown_state", "volume_state", "wait_gone", "time",
           "os"]
