# SPDX-License-Identifier: GPL-2.0
"""The Linux initiator: iscsid, iscsiadm, and the disks its sessions bring.

Sessions and disks are found through sysfs rather than udev's links (the
guest's udev may still be probing a new disk), and a /dev node devtmpfs
lacks is made with mknod.
"""

import concurrent.futures
import contextlib
import errno
import os
import re
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import util
from .util import RESULTS, run, wait_until

PORTAL = "127.0.0.1:3260"
SYSFS_SESSIONS = Path("/sys/class/iscsi_session")
SYSFS_CONNS = Path("/sys/class/iscsi_connection")
ISCSID_SOCKET = "@ISCSIADM_ABSTRACT_NAMESPACE"

# iscsiadm exit statuses (open-iscsi usr/iscsi_err.h)
ISCSI_ERR_NO_OBJS_FOUND = 21
ISCSI_ERR_FATAL_LOGIN = 19     # e.g. the target answered "target not found"


def initiator_name():
    text = util.read("/etc/iscsi/initiatorname.iscsi", "")
    m = re.search(r"^InitiatorName=(\S+)", text, re.M)
    assert m, "no InitiatorName in /etc/iscsi/initiatorname.iscsi (tests/vm/guest-run writes it)"
    return m.group(1)


def iscsiadm(*args, check=True, timeout=120):
    return run(["iscsiadm", *args], check=check, timeout=timeout)


# ---------------------------------------------------------------- iscsid

class Iscsid:
    """iscsid in the foreground, in its own session: on SIGTERM it signals
    its whole process group, which must not be the test runner's."""

    def __init__(self, log=None):
        self.log = log or RESULTS / "iscsid.log"
        self.proc = None

    @staticmethod
    def listening():
        return ISCSID_SOCKET in util.read("/proc/net/unix", "")

    def start(self, timeout=30):
        assert not self.listening(), "another iscsid is already running"
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(["iscsid", "-f"], stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"iscsid exited with {self.proc.returncode}; log:\n{util.tail(self.log)}")
            return self.listening()
        wait_until(ready, timeout, "iscsid's control socket")

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=20):
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        wait_until(lambda: not self.listening(), 10, "iscsid's control socket to go away")

    def kill9(self):
        """Kill iscsid the hard way (its sessions stay in the kernel)."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None
        wait_until(lambda: not self.listening(), 10, "iscsid's control socket to go away")

    def ensure_running(self):
        if not self.running:
            self.start()

    def log_since(self, offset):
        return util.read(self.log, "")[offset:]

    def log_size(self):
        return len(util.read(self.log, ""))


# ---------------------------------------------------------------- discovery

@dataclass(frozen=True)
class Discovered:
    portal: str      # "127.0.0.1:3260"
    tpgt: int
    iqn: str


def discover(portal=PORTAL, timeout=60):
    """SendTargets discovery: what the target reports, in its order."""
    cp = iscsiadm("-m", "discovery", "-t", "st", "-p", portal, timeout=timeout)
    found = []
    for line in cp.stdout.splitlines():
        m = re.match(r"^(\S+),(\d+) (\S+)$", line.strip())
        assert m, f"unexpected discovery output line {line!r}"
        found.append(Discovered(m[1], int(m[2]), m[3]))
    return found


# ---------------------------------------------------------------- sessions in sysfs

@dataclass
class SysfsSession:
    path: Path

    @property
    def number(self):
        return int(self.path.name[len("session"):])

    def attr(self, name):
        return util.read(self.path / name, "").strip()

    @property
    def targetname(self):
        return self.attr("targetname")

    @property
    def state(self):
        return self.attr("state")

    def connection(self):
        """The sysfs directory of the session's (only) connection."""
        conns = sorted(SYSFS_CONNS.glob(f"connection{self.number}:*"))
        return conns[0] if conns else None

    def conn_attr(self, name):
        c = self.connection()
        return util.read(c / name, "").strip() if c else ""

    def block_devices(self, lun):
        return sorted(self.path.glob(f"device/target*/*:*:*:{lun}/block/*"))


def sysfs_sessions():
    return [SysfsSession(p) for p in sorted(SYSFS_SESSIONS.glob("session*"))]


def find_session(iqn, portal=PORTAL):
    addr, port = portal.rsplit(":", 1)
    for s in sysfs_sessions():
        if s.targetname == iqn and s.conn_attr("persistent_address") == addr \
                and s.conn_attr("persistent_port") == port:
            return s
    return None


def block_node(name):
    """/dev/NAME for a block device, made with mknod if devtmpfs lacks it."""
    dev = Path("/dev") / name
    if not dev.exists():
        major, minor = util.read(f"/sys/block/{name}/dev").strip().split(":")
        os.mknod(dev, 0o660 | stat.S_IFBLK, os.makedev(int(major), int(minor)))
    assert stat.S_ISBLK(dev.stat().st_mode), f"{dev} is not a block device"
    return str(dev)


def opens(node):
    """True once the block device node opens; False while it gives ENXIO."""
    try:
        os.close(os.open(node, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as e:
        if e.errno in (errno.ENXIO, errno.ENODEV):
            return False
        raise
    return True


def block_stat(disk):
    """The fields of disk's /sys/block/NAME/stat, as integers."""
    return [int(f) for f in
            Path(f"/sys/block/{Path(disk).resolve().name}/stat").read_text().split()]


def disk_stat(disk):
    """(reads, writes) the initiator's block layer completed on disk."""
    fields = block_stat(disk)
    return fields[0], fields[4]


def writes_completed(disk):
    return disk_stat(disk)[1]


# ---------------------------------------------------------------- login / logout

DIGEST = {None: "None", "none": "None", "None": "None", "CRC32C": "CRC32C", "crc32c": "CRC32C"}


class Login:
    """A logged-in session of the kernel initiator to one target."""

    def __init__(self, iqn, portal, sysfs):
        self.iqn = iqn
        self.portal = portal
        self.sysfs = sysfs

    def disk(self, lun=0, timeout=60):
        """/dev/sdX of the LUN, once the SCSI scan found it, read its size
        and the disk opens.

        sysfs shows the disk (and its size) before the block layer hashes
        its device number, so an open in between fails with ENXIO: under
        TCG that window is long enough for a test to fall into it.
        """
        def found():
            devs = self.sysfs.block_devices(lun)
            if not devs or int(util.read(f"/sys/block/{devs[0].name}/size", "0")) <= 0:
                return None
            node = block_node(devs[0].name)
            return node if opens(node) else None
        return wait_until(found, timeout, lambda: f"LUN {lun} of {self.iqn} to appear as a disk "
                          f"(session {self.sysfs.path.name}: state {self.sysfs.state})")

    def logout(self, timeout=60):
        logout(self.iqn, self.portal, timeout=timeout)


def login(iqn, portal=PORTAL, header_digest=None, data_digest=None, settings=None, timeout=120):
    """Log in the kernel initiator; return the Login once sysfs shows it.

    The node record is made afresh each time so no setting leaks between
    tests. settings: more node keys, e.g. {"node.session.timeo.replacement_timeout": 5}.
    """
    node = ["-m", "node", "-T", iqn, "-p", portal]
    iscsiadm(*node, "-o", "delete", check=False)
    iscsiadm(*node, "-o", "new")
    keys = {"node.conn[0].iscsi.HeaderDigest": DIGEST[header_digest],
            "node.conn[0].iscsi.DataDigest": DIGEST[data_digest]}
    keys.update(settings or {})
    for k, v in keys.items():
        iscsiadm(*node, "-o", "update", "-n", k, "-v", str(v))
    iscsiadm(*node, "--login", timeout=timeout)
    s = wait_until(lambda: find_session(iqn, portal), 30, f"a sysfs session to {iqn}")
    wait_until(lambda: s.state == "LOGGED_IN", 30, f"session to {iqn} to be LOGGED_IN (is {s.state})")
    return Login(iqn, portal, s)


def disk(iqn, lun=0, portal=PORTAL, timeout=60):
    """/dev/sdX of LUN lun of the logged-in session to iqn."""
    s = find_session(iqn, portal)
    assert s is not None, f"no session to {iqn} at {portal}"
    return Login(iqn, portal, s).disk(lun, timeout)


def login_refused(iqn, portal=PORTAL, timeout=120):
    """Try to log in; return iscsiadm's CompletedProcess (the caller checks
    that it failed). Retries are cut short so a wrong answer cannot stall."""
    node = ["-m", "node", "-T", iqn, "-p", portal]
    iscsiadm(*node, "-o", "delete", check=False)
    iscsiadm(*node, "-o", "new")
    for k, v in {"node.session.initial_login_retry_max": 1,
                 "node.conn[0].timeo.login_timeout": 5}.items():
        iscsiadm(*node, "-o", "update", "-n", k, "-v", str(v))
    try:
        return iscsiadm(*node, "--login", check=False, timeout=timeout)
    finally:
        iscsiadm(*node, "-o", "delete", check=False)


def _logout_until_gone(cmd, gone, what, timeout):
    """Run an iscsiadm logout until gone() holds. iscsid refuses to log out a
    session while it is reconnecting ("try again later"): retry, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        cp = iscsiadm(*cmd, check=False, timeout=timeout)
        try:
            wait_until(gone, 5, what)
            return
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"iscsiadm {' '.join(cmd)} did not end {what} within {timeout}s; last status "
                    f"{cp.returncode}: {cp.stdout.strip()} {cp.stderr.strip()}") from None
        time.sleep(1)


def logout(iqn, portal=PORTAL, timeout=120):
    """Log out and forget the node; wait until sysfs no longer has the session."""
    node = ["-m", "node", "-T", iqn, "-p", portal]
    if find_session(iqn, portal):
        _logout_until_gone([*node, "-u"], lambda: find_session(iqn, portal) is None,
                           f"the session to {iqn}", timeout)
    iscsiadm(*node, "-o", "delete", check=False)


def logout_all(timeout=120):
    """Log out every session of the kernel initiator (needs iscsid)."""
    if sysfs_sessions():
        _logout_until_gone(["-m", "session", "-u"], lambda: not sysfs_sessions(),
                           "every iSCSI session", timeout)


# ---- several sessions to one target, one through each iface record

def _each_iface(names, fn):
    """fn(name) for each of names, several iscsiadm at once: one at a
    time, 64 records took 20 s under TCG, mostly iscsiadm's start-up."""
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(fn, names))


def make_ifaces(names):
    def make(name):
        iscsiadm("-m", "iface", "-I", name, "-o", "delete", check=False)
        iscsiadm("-m", "iface", "-I", name, "-o", "new")
    _each_iface(names, make)


def delete_ifaces(names):
    _each_iface(names, lambda name: iscsiadm("-m", "iface", "-I", name, "-o", "delete",
                                             check=False))


def login_ifaces(target, names, timeout=600, portal=PORTAL):
    """A session to target through each iface, logged in at once. The
    portal names its TPGT: without one, open-iscsi keeps a single record
    per portal, which each new iface's replaces."""
    iscsiadm("-m", "node", "-T", target, "-o", "delete", check=False)
    for name in names:
        iscsiadm("-m", "node", "-T", target, "-p", f"{portal},1", "-I", name, "-o", "new")
    iscsiadm("-m", "node", "-T", target, "-p", portal, "--login", timeout=timeout)


def sessions_by_iface(target):
    return {s.attr("ifacename"): s for s in sysfs_sessions() if s.targetname == target}


def disk_of(session, lun, timeout=120, portal=PORTAL):
    return Login(session.targetname, portal, session).disk(lun, timeout=timeout)


@contextlib.contextmanager
def iface_logins(names):
    """login(target, n=all): LUN 0's disk in a session to target through
    each of the first n iface records of names (made here), so many I_T
    nexuses of one host. At the end all are logged out and the records
    deleted."""
    make_ifaces(names)
    targets = []

    def login(target, n=None):
        use = names[:n]
        targets.append(target)
        login_ifaces(target, use, timeout=300)
        by_iface = sessions_by_iface(target)
        disks = [disk_of(by_iface[name], 0) for name in use]
        util.udev_settle()     # udev's probes done
        return disks

    try:
        yield login
    finally:
        if sysfs_sessions():
            logout_all(timeout=300)
        for target in targets:
            iscsiadm("-m", "node", "-T", target, "-o", "delete", check=False)
        delete_ifaces(names)


class Initiator:
    """What a test uses: logins it makes are logged out when it ends."""

    portal = PORTAL

    def __init__(self):
        self.logins = []

    @property
    def name(self):
        return initiator_name()

    def discover(self, portal=PORTAL):
        return discover(portal)

    def login(self, iqn, portal=PORTAL, **kw):
        lg = login(iqn, portal, **kw)
        self.logins.append(lg)
        return lg

    def logout(self, iqn, portal=PORTAL):
        logout(iqn, portal)
        self.logins = [lg for lg in self.logins if (lg.iqn, lg.portal) != (iqn, portal)]

    def cleanup(self):
        for lg in reversed(self.logins):
            if find_session(lg.iqn, lg.portal):
                logout(lg.iqn, lg.portal)
        self.logins = []
