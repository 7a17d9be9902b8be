# SPDX-License-Identifier: GPL-2.0
"""Fixtures of the VM suite: the target (module, ietd), the initiator
(iscsid, logins), backing stores and a kernel-log guard around every test.

Runs in the guest as root, set up by tests/vm/guest-run. Teardown order is
the reverse of a real shutdown's dependencies: initiator sessions end, then
ietd stops (and must exit 0), then the module unloads (and must leave nothing
behind) -- for every test, so a leak is pinned on the test that caused it.
"""

import os
import re
from pathlib import Path

import pytest

from vmlib import initiator as ini
from vmlib import faults, kmsg, storage, util
from vmlib.target import Ietd, KernelModule, assert_module_gone, render_config
from vmlib.util import MiB, RESULTS, run, wait_until

# ---------------------------------------------------------------- one part of the suite

# Seconds each module took under TCG (make check on 6.1, Debian 13's 6.12
# and 7.3.4, stop 46, the host busy; the modules whose parametrized
# cases became one test guessed from it), less what its tests marked
# paths took (PATHS_SECONDS): what splits the suite into parts of about the
# same length. A module not listed counts 10 s a test not marked paths.
MODULE_SECONDS = {
    "test_access": 38, "test_alua": 13, "test_async_logout": 31, "test_big_writes": 58,
    "test_caw": 55, "test_chap": 96, "test_cluster_agent": 20, "test_conformance": 190,
    "test_dirty_throttle": 30, "test_disappear": 23, "test_eio": 104, "test_ext4": 13,
    "test_ha_node": 65,
    "test_fio": 121, "test_hostile": 145, "test_ietadm": 50, "test_isns": 55, "test_libiscsi": 9,
    "test_limits": 4, "test_login": 21, "test_lun_options": 21, "test_mcs": 3,
    "test_mode_select": 38, "test_multipath": 57, "test_opcodes": 62,
    "test_portal_groups": 18, "test_prelogin_flood": 12, "test_privileges": 9,
    "test_proc_format": 7, "test_reload": 28, "test_reservations": 172,
    "test_restart": 32, "test_roundtrip": 5, "test_sanitize": 80, "test_soak": 120,
    "test_stuck_backend": 63,
    "test_task_attr": 66, "test_teardown": 14, "test_text": 8, "test_thin": 43,
    "test_unit_sandbox": 8, "test_verify": 49, "test_volumes": 148, "test_xcopy": 77,
}


def split_modules(weights, parts):
    """Modules (name -> seconds) dealt into parts of about equal seconds:
    the longest first, each to the part that has the fewest so far."""
    loads = [0.0] * parts
    where = {}
    for name in sorted(weights, key=lambda m: (-weights[m], m)):
        i = min(range(parts), key=lambda j: (loads[j], j))
        where[name] = i
        loads[i] += weights[name]
    return where


# Seconds the tests marked paths take in each module that has them (the
# same run): what a part with +paths runs besides its share, and so not
# part of the balance.
PATHS_SECONDS = {
    "test_hostile": 53, "test_power_cut": 71, "test_lent_reads": 14,
    "test_fio": 16, "test_disappear": 10, "test_module_load": 4, "test_ha_node": 5,
}


def pytest_collection_modifyitems(config, items):
    """IET_VM_PART=K/N (scripts/check-kernels NAME:K/N): only the modules
    of part K of N, so that N kernels share the whole suite; K/N+paths:
    besides, every test marked paths, wherever its module went; -guard at
    the end: less the tests marked guard (and not paths), which the debug
    kernel runs (make check: debug:guard). So make check runs the tests of
    the paths that differ between kernels on the two ends of every
    difference (6.1 and the newest) and every other test once."""
    # The packages' tests only when asked for by name (-m packages).
    if "packages" not in (config.option.markexpr or ""):
        slow = [it for it in items if it.get_closest_marker("packages")]
        config.hook.pytest_deselected(items=slow)
        items[:] = [it for it in items if it not in slow]
    spec = os.environ.get("IET_VM_PART")
    if not spec:
        return
    parsed = re.fullmatch(r"([1-9])/([1-9])(\+paths)?(-guard)?", spec)
    assert parsed, f"IET_VM_PART={spec}: expected K/N, then +paths, -guard or both"
    k, n = int(parsed[1]), int(parsed[2])
    assert 1 <= k <= n, f"IET_VM_PART={spec}: expected K/N with 1 <= K <= N"
    plus, less = bool(parsed[3]), bool(parsed[4])
    by_module = {}
    for item in items:
        by_module.setdefault(item.module.__name__, []).append(item)
    where = split_modules({m: MODULE_SECONDS.get(
        m, 10 * sum(not it.get_closest_marker("paths") for it in its))
        for m, its in by_module.items()}, n)

    def kept(it):
        paths = it.get_closest_marker("paths") is not None
        if plus and paths:
            return True
        if less and it.get_closest_marker("guard") and not paths:
            return False
        return where[it.module.__name__] == k - 1

    keep = [it for it in items if kept(it)]
    config.hook.pytest_deselected(items=[it for it in items if it not in keep])
    items[:] = keep


# ---------------------------------------------------------------- session-wide

@pytest.fixture(scope="session", autouse=True)
def guest():
    """The guest is prepared (tests/vm/guest-run does it) and results go to RESULTS."""
    assert os.geteuid() == 0, "the VM tests run as root inside the VM (scripts/vm-test)"
    RESULTS.mkdir(parents=True, exist_ok=True)
    assert Path("/sys/module/iscsi_tcp").exists(), "iscsi_tcp not loaded: run through tests/vm/guest-run"
    ini.initiator_name()
    faults.install()        # before any traffic: see vmlib/faults.py


@pytest.fixture(scope="session")
def iscsid():
    """One iscsid for the whole run, started with setsid (see VM-NOTES)."""
    d = ini.Iscsid()
    d.start()
    yield d
    if d.running and ini.sysfs_sessions():
        ini.logout_all()
    d.stop()


@pytest.fixture(scope="session")
def brd():
    """/dev/ram0, 64 MiB, zero-filled. Session-scoped: removed after every
    test's module unload has released it."""
    disk = storage.Brd(64 * MiB).create()
    yield disk
    disk.remove()


# ---------------------------------------------------------------- the target

@pytest.fixture
def alua_handler():
    """Linux's ALUA device handler (scsi_dh_alua), loaded for the test --
    ask for it before the logins -- and unloaded after, so that no other
    test's disks get it; skipped on a kernel without it."""
    if run(["modprobe", "scsi_dh_alua"], check=False).returncode:
        pytest.skip("this kernel has no ALUA device handler (CONFIG_SCSI_DH_ALUA)")
    yield
    wait_until(lambda: run(["modprobe", "-r", "scsi_dh_alua"], check=False).returncode == 0,
               30, "scsi_dh_alua to unload")


@pytest.fixture
def kmod():
    """iscsi_trgt loaded for the test; at the end it must unload and leave
    nothing behind (threads, /proc entries, slab caches, netlink family).
    A test may unload it itself (e.g. to check that explicitly)."""
    m = KernelModule()
    if m.loaded:        # left over by a test that failed: not ours to judge
        m.unload()
    m.load()
    yield m
    if m.loaded:
        m.unload()
    assert_module_gone(m)


@pytest.fixture
def unloaded_kmod():
    """The module, not loaded, for tests that load and unload it themselves;
    unloaded again at the end whatever happened."""
    m = KernelModule()
    if m.loaded:
        m.unload()
    yield m
    if m.loaded:
        m.unload()


@pytest.fixture
def ietd(kmod, request):
    """Factory: ietd(Target(...), ..., port=3260, global_params={}) writes
    the config to RESULTS and starts `usr/ietd -f -c CONFIG`. At the end the
    initiator's sessions are logged out and ietd must exit 0 on SIGTERM."""
    started = []

    def start(*targets, port=3260, global_params=None, args=()):
        name = f"ietd-{util.safe_name(request.node.name)}-{len(started)}"
        d = Ietd(render_config(targets, global_params), name, port=port, args=args)
        started.append(d)
        return d.start()

    yield start
    if ini.sysfs_sessions() and ini.Iscsid.listening():
        ini.logout_all()
    for d in reversed(started):
        d.stop()


@pytest.fixture
def backing(request):
    """Factory: backing(name, size) -> a sparse file in /tmp, removed at the end."""
    files = []

    def make(name, size):
        p = storage.sparse_file(Path("/tmp") / f"iet-{util.safe_name(request.node.name)}-{name}.img", size)
        files.append(p)
        return p

    yield make
    for p in files:
        p.unlink(missing_ok=True)


# ---------------------------------------------------------------- the initiator

@pytest.fixture
def initiator(iscsid):
    """The kernel initiator; its logins are logged out at the end."""
    i = ini.Initiator()
    yield i
    if iscsid.running:
        i.cleanup()


# ---------------------------------------------------------------- kernel log guard

@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def dump_state(name, klines):
    """What a person debugging a failure wants to see, in RESULTS/NAME.state."""
    parts = []
    for title, cmd in (("iet threads", ["ps", "-eo", "pid,stat,wchan:32,comm"]),
                       ("iscsiadm -m session -P 3", ["iscsiadm", "-m", "session", "-P", "3"]),
                       ("sockets", ["ss", "-tanp"])):
        cp = util.run(cmd, check=False, timeout=30)
        parts.append(f"### {title}\n{cp.stdout}{cp.stderr}")
    for f in ("/proc/net/iet/volume", "/proc/net/iet/session"):
        parts.append(f"### {f}\n{util.read(f, '(missing)')}")
    from vmlib.target import iet_threads
    for t in iet_threads():
        parts.append(f"### stack of {t.pid} {t.comm} ({t.state})\n{t.stack()}")
    parts.append("### kernel log during the test\n" + "\n".join(klines))
    (RESULTS / f"{util.safe_name(name)}.state").write_text("\n".join(parts))


@pytest.fixture(autouse=True)
def kernel_log_guard(request):
    """Fails the test (at teardown) if the kernel logged a warning, oops,
    lockdep or KASAN report, hung task or leak while it ran."""
    log = kmsg.KernelLog()
    kmsg.mark(f"start {request.node.nodeid}")
    yield
    kmsg.mark(f"end {request.node.nodeid}")
    lines = log.new_lines()
    log.close()
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        dump_state(request.node.name, lines)
    bad = kmsg.bad_lines(lines)
    if bad:
        first = lines.index(bad[0])
        pytest.fail(f"kernel log during {request.node.nodeid} has {len(bad)} bad line(s):\n"
                    + "\n".join(lines[max(0, first - 5):first + 60]), pytrace=False)
