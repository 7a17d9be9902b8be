# SPDX-License-Identifier: GPL-2.0
"""Our target: the iscsi_trgt module, ietd and its configuration, and what a
target leaves behind (kernel threads, slab caches, the netlink family)."""

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import util
from .util import REPO, RESULTS, run, wait_until

MODULE = "iscsi_trgt"
# The module built for the running kernel (scripts/vm says where).
MODULE_KO = Path(os.environ.get("IET_MODULE_KO") or REPO / "kernel" / f"{MODULE}.ko")
IETD = REPO / "usr" / "ietd"
GENL_FAMILY = "iscsi_trgt"
THREAD_PREFIX = "iet_"
IQN_PREFIX = "iqn.2001-04.com.example:iet-test."


def iqn(name):
    """A target name for the tests: iqn.2001-04.com.example:iet-test.NAME."""
    return IQN_PREFIX + name


# ---------------------------------------------------------------- module

# The module's pr_dir in the VM (see KernelModule.load).
PR_DIR = Path("/tmp/iet-pr")


class KernelModule:
    """iscsi_trgt.ko, loaded from the build tree with insmod."""

    def __init__(self, ko=MODULE_KO, name=MODULE):
        self.ko = Path(ko)
        self.name = name

    @property
    def loaded(self):
        return Path(f"/sys/module/{self.name}").exists()

    def dependencies(self):
        deps = run(["modinfo", "-F", "depends", str(self.ko)]).stdout.strip()
        return [d for d in deps.split(",") if d]

    def load(self, *params):
        """insmod with module parameters ("name=value"), after modprobe of
        what it depends on (insmod does not)."""
        assert self.ko.exists(), f"{self.ko} is not built (make kernel)"
        assert not self.loaded, f"{self.name} is already loaded"
        deps = self.dependencies()
        if deps:
            run(["modprobe", "-a", *deps], timeout=60)
        # The root file system is read-only here: reservations kept
        # through power loss go where tests can see them and rm them.
        run(["insmod", str(self.ko), f"pr_dir={PR_DIR}", *params], timeout=60)
        assert self.loaded, f"insmod {self.ko} succeeded but /sys/module/{self.name} is missing"

    def ensure_loaded(self):
        if not self.loaded:
            self.load()

    def unload(self, timeout=30):
        """rmmod, retrying while the module is briefly in use (a closing
        socket or netlink reference); fail with the holders if it stays so."""
        deadline = time.monotonic() + timeout
        while True:
            cp = run(["rmmod", self.name], check=False, timeout=60)
            if cp.returncode == 0:
                break
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"rmmod {self.name} failed for {timeout}s: {cp.stderr.strip()}\n"
                    f"refcnt: {util.read(f'/sys/module/{self.name}/refcnt', '?').strip()}\n"
                    f"iet threads: {iet_threads()}\n"
                    f"/proc/net/iet/session:\n{util.read('/proc/net/iet/session', '(none)')}")
            time.sleep(0.5)
        assert not self.loaded, f"rmmod {self.name} succeeded but /sys/module/{self.name} remains"


def genl_family_registered(name=GENL_FAMILY):
    """Whether generic netlink knows the family (iproute2's genl)."""
    cp = run(["genl", "ctrl", "get", "name", name], check=False, timeout=30)
    return cp.returncode == 0


# ---------------------------------------------------------------- threads and memory

@dataclass
class Thread:
    pid: int
    comm: str
    state: str

    def stack(self):
        return util.read(f"/proc/{self.pid}/stack", "(no stack)")


def threads(prefix=""):
    """Processes and kernel threads whose name starts with prefix."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state = stat[stat.rindex(")") + 2]
        if comm.startswith(prefix):
            found.append(Thread(int(d.name), comm, state))
    return found


def iet_threads():
    return threads(THREAD_PREFIX)


def assert_no_stuck_iet_threads(timeout=15):
    """Within timeout, a moment comes when no iet_* thread is in D state.

    A thread that waits on a peer that is gone stays in D; one doing
    ordinary I/O leaves it. Fails with the kernel stacks of the stuck ones.
    """
    deadline = time.monotonic() + timeout
    while True:
        stuck = [t for t in iet_threads() if t.state == "D"]
        if not stuck:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"iet threads still in D state after {timeout}s:\n" +
                "\n".join(f"{t.pid} {t.comm}:\n{t.stack()}" for t in stuck))
        time.sleep(0.5)


def slab_caches(prefix="iet"):
    """{name: active objects} of the kmem caches whose name starts with prefix.

    Meaningful with slab_nomerge on the kernel command line (scripts/vm-test
    sets it): a merged cache has no entry of its own, only a sysfs alias
    symlink that SLUB never removes. Unmerged, a cache destroyed with objects
    still allocated is reported in the kernel log and stays listed here."""
    caches = {}
    for line in util.read("/proc/slabinfo", "").splitlines()[2:]:
        fields = line.split()
        if fields and fields[0].startswith(prefix):
            caches[fields[0]] = int(fields[1])
    for d in Path("/sys/kernel/slab").glob(f"{prefix}*"):
        if not d.is_symlink():
            caches.setdefault(d.name, -1)
    return caches


def assert_module_gone(module):
    """After rmmod: nothing of the module is left in the kernel."""
    assert not module.loaded, f"/sys/module/{module.name} still exists"
    assert not Path("/proc/net/iet").exists(), "/proc/net/iet still exists after rmmod"
    assert iet_threads() == [], f"iet threads survive rmmod: {iet_threads()}"
    assert slab_caches() == {}, f"kmem caches survive rmmod: {slab_caches()}"
    assert not genl_family_registered(), f"generic netlink family {GENL_FAMILY} survives rmmod"


# ---------------------------------------------------------------- configuration

def _params(params):
    return [f"\t{k} {v}" for k, v in params.items()]


@dataclass
class Lun:
    """One `Lun N Key=Value,...` line of ietd.conf."""
    n: int
    path: str | None = None
    type: str = "fileio"
    # IOMode, ScsiId, ScsiSN, BlockSize, Blocks, PhysicalBlockSize,
    # RotationRate, ThinProvisioning, ModeSelect
    params: dict = field(default_factory=dict)

    def line(self):
        args = []
        if self.path is not None:
            args.append(f"Path={self.path}")
        args.append(f"Type={self.type}")
        args += [f"{k}={v}" for k, v in self.params.items()]
        return f"\tLun {self.n} " + ",".join(args)


@dataclass
class Target:
    """One `Target IQN` stanza of ietd.conf."""
    iqn: str
    luns: list = field(default_factory=list)
    params: dict = field(default_factory=dict)   # HeaderDigest, NOPInterval, ...

    def lines(self):
        return [f"Target {self.iqn}"] + [lun.line() for lun in self.luns] + _params(self.params)


def render_config(targets, global_params=None):
    lines = ["# written by tests/vm"] + _params(global_params or {})
    for t in targets:
        lines += t.lines()
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- ietd

def listening(port):
    """Whether some socket listens on TCP port (IPv4 or IPv6)."""
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in util.read(f, "").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False


class Ietd:
    """`ietd -f -c CONFIG` in the foreground, its output in a log file."""

    def __init__(self, config_text, name, port=3260, args=()):
        self.name = name
        self.port = port
        self.config = RESULTS / f"{name}.conf"
        self.log = RESULTS / f"{name}.log"
        self.config.write_text(config_text)
        self.args = [str(IETD), "-f", "-c", str(self.config)]
        if port != 3260:
            self.args += ["-p", str(port)]
        self.args += list(args)
        self.proc = None

    def start(self, timeout=30):
        assert IETD.exists(), f"{IETD} is not built (make usr)"
        assert not listening(self.port), f"something already listens on port {self.port}"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

        # Ready is what it says once it listens, has given up its
        # privileges (-u) and serves: listening alone comes before those.
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"ietd exited with {self.proc.returncode} while starting; "
                                     f"config {self.config}, log:\n{util.tail(self.log)}")
            return listening(self.port) and " serving " in util.read(self.log, "")
        wait_until(ready, timeout, f"ietd to listen on port {self.port} and say it serves "
                   f"(log {self.log})")
        return self

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=20):
        """SIGTERM; ietd must exit with status 0 within timeout."""
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
                raise AssertionError(f"ietd ignored SIGTERM for {timeout}s; killed. "
                                     f"Log {self.log}:\n{util.tail(self.log)}") from None
        assert proc.returncode == 0, \
            f"ietd exited with status {proc.returncode}; log {self.log}:\n{util.tail(self.log)}"
        wait_until(lambda: not listening(self.port), 10, f"port {self.port} to close after ietd stopped")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


def connect_refused(host="127.0.0.1", port=3260):
    """Whether a TCP connect to host:port is refused (nobody listens)."""
    try:
        with socket.create_connection((host, port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def ietadm(*args, check=True, timeout=30):
    return run([str(REPO / "usr" / "ietadm"), *args], check=check, timeout=timeout)


def pids_of(name):
    return [t.pid for t in threads() if t.comm == name]


def kill9(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
