# SPDX-License-Identifier: GPL-2.0
"""An initiator that disappears mid-I/O costs the target nothing: the session
ends within NOPInterval + NOPTimeout (or at once if the connection closes),
no iet_* thread stays stuck in D state, ietd exits cleanly and the module
unloads."""

import pytest

from vmlib import proc
from vmlib.target import Lun, Target, assert_module_gone, assert_no_stuck_iet_threads, iqn
from vmlib.util import MiB, wait_until
from vmlib.vanish import INITIATOR_FAST, Rug

pytestmark = pytest.mark.short

NOP_FAST = {"NOPInterval": 1, "NOPTimeout": 2}
GONE_WITHIN = 30      # seconds: NOPInterval + NOPTimeout = 3, with room for emulation


@pytest.fixture
def rug(ietd, iscsid, initiator, request):
    """Torn down before ietd and the module: the initiator is made whole again."""
    r = Rug(iscsid, request.node.name)
    yield r
    r.restore()


def start_target(ietd, backing, name):
    return ietd(Target(name, [Lun(0, str(backing(name.rsplit(".", 1)[-1], 64 * MiB)))],
                       params=NOP_FAST))


def assert_session_dropped(name):
    wait_until(lambda: proc.sessions_of(name) == [], GONE_WITHIN,
               lambda: f"the target to drop the session of {name}; /proc/net/iet/session:\n"
                       f"{proc.SESSION.read_text()}")


def assert_target_recovers(daemon, kmod, rug):
    """No stuck thread; ietd exits 0; the module unloads leaving nothing."""
    assert_no_stuck_iet_threads()
    rug.restore()
    daemon.stop()
    kmod.unload()
    assert_module_gone(kmod)


def test_initiator_daemon_killed_and_connection_reset_mid_io(kmod, ietd, backing, initiator, rug):
    name = iqn("vanish-killed")
    daemon = start_target(ietd, backing, name)
    disk = initiator.login(name, settings=INITIATOR_FAST).disk(0)
    rug.busy_disk(disk)

    rug.kill_daemon_and_reset_connection()

    assert_session_dropped(name)
    assert_target_recovers(daemon, kmod, rug)


# The NOP-In timer, whose API moved (from_timer, timer_container_of).
@pytest.mark.paths
def test_initiator_silenced_mid_io_is_dropped_by_nop_timeout(kmod, ietd, backing, initiator, rug):
    name = iqn("vanish-silent")
    daemon = start_target(ietd, backing, name)
    disk = initiator.login(name, settings=INITIATOR_FAST).disk(0)
    rug.busy_disk(disk)

    rug.silence()

    assert_session_dropped(name)
    assert_target_recovers(daemon, kmod, rug)


def test_userspace_initiator_killed_with_reads_in_flight(kmod, ietd, backing, rug):
    name = iqn("vanish-userspace")
    daemon = start_target(ietd, backing, name)
    perf = rug.busy_userspace(f"iscsi://127.0.0.1/{name}/0",
                              session_up=lambda: proc.sessions_of(name) != [])

    rug.kill9(perf)

    assert_session_dropped(name)
    assert_target_recovers(daemon, kmod, rug)
