# SPDX-License-Identifier: GPL-2.0
"""iSNS (RFC 4171) against Debian's open-isns isnsd on 127.0.0.1:3205 in
the guest: ietd registers its targets, open-iscsi's iSNS discovery finds
the one sharing a discovery domain with the initiator, which logs in and
does I/O while an initiator outside the domain is refused; a membership
changed at run time is followed; losing the server refuses logins (fail
closed) until ietd has registered again; a clean stop deregisters.
"Another initiator" is libiscsi's iscsi-inq with a name of its own."""

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ietlib import daemon, login_fails  # noqa: F401
from vmlib import initiator as ini
from vmlib import proc
from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import iqn
from vmlib.util import MiB, RESULTS, run, tail, wait_until

ISNS = "127.0.0.1:3205"
OTHER = "iqn.2024-01.com.example.iet:isns-outsider"
# Never registered: a member counts by its name. (isnsd 0.101 drops from
# a second domain a name that is already in one.)
GONER = "iqn.2024-01.com.example.iet:isns-goner"


class Isnsd:
    """isnsd in the foreground, with a configuration, database and control
    socket of its own under a temporary directory."""

    def __init__(self, name):
        self.dir = Path(tempfile.mkdtemp(prefix="iet-isnsd-"))
        (self.dir / "db").mkdir()
        self.log = RESULTS / f"{name}-isnsd.log"
        self.conf = self.dir / "isnsd.conf"
        self.conf.write_text(f"Database = {self.dir}/db\nBindAddress = {ISNS}\n"
                             f"ControlSocket = {self.dir}/ctl\nPIDFile = {self.dir}/pid\n"
                             "DefaultDiscoveryDomain = 0\nSLPRegister = 0\nSecurity = 0\n")
        self.proc = None

    def start(self):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(["isnsd", "-f", "-c", str(self.conf)],
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(lambda: "127.0.0.1:3205 " in run(["ss", "-ltnH"]).stdout, 20,
                   lambda: f"isnsd to listen on {ISNS}; log:\n{tail(self.log)}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def adm(self, source, *args, check=True):
        """isnsadm as the client named source."""
        conf = self.dir / f"{re.sub(r'[^a-z0-9]', '_', source)}.conf"
        conf.write_text(f"ServerAddress = {ISNS}\nControlSocket = {self.dir}/ctl\n"
                        f"Security = 0\nSourceName = {source}\n")
        return run(["isnsadm", "-c", str(conf), *args], check=check, timeout=30)

    def dd(self, *members, dd_id=None, dd_name="iet-test"):
        """Register a discovery domain (or add to dd_id's); its ID."""
        key = [f"dd-id={dd_id}"] if dd_id else [f"dd-name={dd_name}"]
        out = self.adm("isns.control", "--local", "--dd-register", *key,
                       *[f"dd-member-name={m}" for m in members]).stdout
        return int(re.search(r"DD ID = (\d+)", out)[1])

    def dd_remove(self, dd_id):
        """The whole domain."""
        self.adm("isns.control", "--local", "--dd-deregister", str(dd_id))


@pytest.fixture
def isnsd(request):
    if not shutil.which("isnsd") or not shutil.which("isnsadm"):
        pytest.fail("isnsd or isnsadm missing: scripts/deps installs open-isns-server and -utils")
    s = Isnsd(re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name))
    s.start()
    yield s
    s.stop()
    shutil.rmtree(s.dir, ignore_errors=True)


def isns_discover(timeout=60):
    """open-iscsi's iSNS discovery: the (portal, tpgt, target) it found."""
    cp = ini.iscsiadm("-m", "discovery", "-t", "isns", "-p", ISNS, check=False,
                      timeout=timeout)
    found = []
    for line in cp.stdout.splitlines():
        m = re.match(r"^(\S+),(\d+) (\S+)$", line.strip())
        if m:
            found.append((m[1], int(m[2]), m[3]))
    return cp, found


def other_logs_in(name, initiator_name=OTHER):
    cp = run(["iscsi-inq", "-i", initiator_name, f"iscsi://127.0.0.1/{name}/0"], check=False,
             timeout=60)
    return cp.returncode == 0


def conf(backing, *names):
    text = f"iSNSServer {ISNS.split(':')[0]}\niSNSAccessControl Yes\n"
    for n in names:
        text += f"Target {n}\n\tLun 0 Path={backing(n.split(':')[-1], 16 * MiB)},Type=fileio\n"
    return text


def test_isns_discovery_finds_the_domain_s_target_which_admits_only_its_members(
        isnsd, daemon, backing, iscsid, initiator):
    mine, other = iqn("isns-mine"), iqn("isns-other")
    isnsd.dd(mine, initiator.name)
    d = daemon(conf(backing, mine, other))
    d.wait_log(r"registered 2 targets on 1 portal as ietd:")
    d.wait_log(rf"{re.escape(mine)}'s discovery domains hold 1 other node\b")

    cp, found = isns_discover()
    assert ("127.0.0.1:3260", 1, mine) in found, \
        f"iscsiadm found {found}: {cp.stdout} {cp.stderr}\nisnsd:\n{tail(isnsd.log)}"
    assert all(t != other for _, _, t in found), f"a target of no shared domain listed: {found}"
    # SendTargets shows the initiator no more than iSNS does.
    assert [t.iqn for t in initiator.discover()] == [mine]

    lg = initiator.login(mine)
    dev = lg.disk()
    block = os.urandom(64 * 1024)
    pwrite_direct(dev, 1 * MiB, block)
    assert pread_direct(dev, 1 * MiB, len(block)) == block
    assert len(proc.sessions_of(mine)) == 1

    assert not other_logs_in(mine)
    refused = f"access to {mine} refused by iSNSAccessControl: the initiator is in none"
    assert refused in d.log_text()
    login_fails(other)
    assert proc.sessions_of(other) == []


def test_isns_membership_changed_at_run_time_is_followed(isnsd, daemon, backing, iscsid,
                                                         initiator):
    name, gone = iqn("isns-change"), iqn("isns-gone")
    # open-isns announces (SCN) changes of registered nodes only.
    isnsd.adm(OTHER, "--register", "initiator")
    dd = isnsd.dd(name, initiator.name)
    dd_gone = isnsd.dd(gone, GONER, dd_name="iet-test-gone")
    # -d 1: ietd logs each SCN it answers.
    d = daemon(conf(backing, name, gone), args=["-d", "1"])
    d.wait_log(rf"{re.escape(name)}'s discovery domains hold 1 other node\b")
    d.wait_log(rf"{re.escape(gone)}'s discovery domains hold 1 other node\b")
    assert other_logs_in(gone, GONER)

    # A domain removed: isnsd 0.101 sends no SCN for it (and crashes
    # removing a member, or a domain that had one added, while SCNs are
    # followed): ietd's asking every 15 s finds it.
    since = len(d.log_text())
    isnsd.dd_remove(dd_gone)
    d.wait_log(rf"{re.escape(gone)}'s discovery domains hold 0 other nodes", 30, since)
    assert not other_logs_in(gone, GONER)

    # A member added: the SCN brings it at once.
    assert not other_logs_in(name)
    since = len(d.log_text())
    isnsd.dd(OTHER, dd_id=dd)
    d.wait_log(rf"{re.escape(name)}'s discovery domains hold 2 other nodes", 10, since)
    assert "state change notification" in d.log_text()[since:]
    assert other_logs_in(name)
    initiator.login(name)


def test_isns_server_lost_refuses_logins_until_registered_again(isnsd, daemon, backing, iscsid,
                                                                initiator):
    name = iqn("isns-lost")
    # OTHER, registered and in the domain, is who looks the target up.
    isnsd.adm(OTHER, "--register", "initiator")
    isnsd.dd(name, initiator.name, OTHER)
    d = daemon(conf(backing, name))
    d.wait_log(rf"{re.escape(name)}'s discovery domains hold 2 other nodes")

    since = len(d.log_text())
    isnsd.stop()
    d.wait_log(r"until it answers, iSNSAccessControl refuses every login", 20, since)
    login_fails(name)
    assert "the iSNS server has not said who is in its discovery domains" in d.log_text()[since:]

    isnsd.start()
    d.wait_log(rf"{re.escape(name)}'s discovery domains hold 2 other nodes", 60, since)
    initiator.login(name)
    assert f'iSCSI name = "{name}"' in isnsd.adm(OTHER, "--query", "iscsi-node-type=target").stdout

    # A clean stop takes the entity out of the server.
    d.stop()
    assert "deregistered" in d.log_text()
    out = isnsd.adm(OTHER, "--query", "iscsi-node-type=target", check=False).stdout
    assert f'iSCSI name = "{name}"' not in out
