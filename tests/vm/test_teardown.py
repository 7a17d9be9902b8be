# SPDX-License-Identifier: GPL-2.0
"""The whole life cycle, in the order an administrator shuts down: log out,
stop ietd, unload the module -- and nothing is left: no thread, no /proc
entry, no slab cache, no netlink family, no leaked object (kmemleak, on the
debug kernel)."""

from vmlib import fio, kmemleak, proc
from vmlib.target import Lun, Target, assert_module_gone, iet_threads, iqn
from vmlib.util import MiB, wait_until


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
