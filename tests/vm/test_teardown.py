# SPDX-License-Identifier: GPL-2.0
"""The whole life cycle, in the order an administrator shuts down: log out,
stop ietd, unload the module -- and nothing is left: no thread, no /proc
entry, no slab cache, no netlink family, no leaked object (kmemleak, on the
debug kernel)."""

import pytest

from vmlib import fio, kmemleak, proc
from vmlib.initiator import writes_completed
from vmlib.target import Lun, Target, assert_module_gone, iet_threads, iqn
from vmlib.util import RESULTS, MiB, wait_until
from vmlib.vanish import INITIATOR_FAST

pytestmark = pytest.mark.short


def test_logout_stop_unload_leaves_nothing_behind(kmod, ietd, backing, initiator, request):
    kmemleak.checkpoint("before " + request.node.nodeid, settle=False)
    name = iqn("lifecycle")
    daemon = ietd(Target(name, [Lun(0, str(backing("lifecycle", 64 * MiB)))]))
    disk = initiator.login(name).disk(0)
    combos = [fio.Combo("128k", "randwrite", 8)]
    fio.run_fio(fio.job_file(disk, combos), request.node.name).assert_clean(combos)
    assert iet_threads(), "a target serving a session runs iet_* threads"

    initiator.logout(name)
    wait_until(lambda: proc.sessions_of(name) == [], 10, "the session to leave /proc")
    daemon.stop()
    kmod.unload()

    assert_module_gone(kmod)
    leaks = kmemleak.checkpoint("after " + request.node.nodeid)
    assert leaks == "", f"kmemleak:\n{leaks}"


def test_unload_with_a_session_closes_it_first(kmod, ietd, backing, initiator, request):
    """rmmod while an initiator is logged in and writing: the module closes
    the session itself, waits for its I/O, and leaves nothing behind."""
    name = iqn("unload-busy")
    daemon = ietd(Target(name, [Lun(0, str(backing("unload-busy", 64 * MiB)))]))
    login = initiator.login(name, settings=INITIATOR_FAST)
    disk = login.disk(0)
    writer = fio.start_fio(["--name=busy", f"--filename={disk}", "--direct=1",
                            "--ioengine=libaio", "--rw=randwrite", "--bs=4k",
                            "--iodepth=16", "--time_based", "--runtime=60"],
                           RESULTS / f"{request.node.name}-fio.log")
    wait_until(lambda: proc.sessions_of(name) != [], 10, "the session in /proc")
    wait_until(lambda: writes_completed(disk) > 100, 30, "fio's writes to reach the target")
    # The kernel keeps targets and sessions when ietd stops: the module
    # itself must end them.
    daemon.stop()
    assert proc.sessions_of(name) != [], "stopping ietd must not end the session"

    assert writer.poll() is None, "fio ended before the unload"

    kmod.unload(timeout=60)

    assert_module_gone(kmod)
    writer.kill()
    writer.wait(30)
