# SPDX-License-Identifier: GPL-2.0
"""An initiator that disappears in the middle of I/O, three ways, and the
clean-up that gives the next test a working initiator again."""

import subprocess
import time

from . import fio, initiator as ini
from .faults import Firewall
from .util import RESULTS, safe_name, wait_until

# The kernel initiator gives up quickly too: its I/O errors out after 5 s
# instead of hanging for the default two minutes once its connection is gone.
INITIATOR_FAST = {
    "node.session.timeo.replacement_timeout": 5,
    "node.conn[0].timeo.noop_out_interval": 2,
    "node.conn[0].timeo.noop_out_timeout": 2,
}


def disk_ios(disk):
    """Reads and writes completed on /dev/sdX so far."""
    return sum(ini.disk_stat(disk))


class Rug:
    """Pulls the rug from under an initiator; restore() puts it back:
    firewall rules gone, busy processes gone, iscsid running, no session."""

    def __init__(self, iscsid, name):
        self.iscsid = iscsid
        self.firewall = Firewall()
        self.name = safe_name(name)
        self.procs = []

    # -- load

    def busy_disk(self, disk, seconds=300):
        """Mixed 128k I/O at QD32 on the disk until killed; returns once
        I/O is flowing."""
        p = fio.start_fio([f"--filename={disk}", "--name=busy", "--ioengine=libaio", "--direct=1",
                           "--rw=randrw", "--bs=128k", "--iodepth=32", "--size=32m",
                           "--time_based", f"--runtime={seconds}"],
                          RESULTS / f"{self.name}-fio.log")
        self.procs.append(p)
        start = disk_ios(disk)
        wait_until(lambda: p.poll() is None and disk_ios(disk) >= start + 64, 60,
                   lambda: f"I/O to flow on {disk} (fio status {p.poll()})")
        return p

    def busy_userspace(self, url, session_up):
        """libiscsi's iscsi-perf reading 128k at QD32 over its own TCP
        connection; returns once the target shows its session."""
        log = open(RESULTS / f"{self.name}-iscsi-perf.log", "w")
        p = subprocess.Popen(["iscsi-perf", "-i", ini.initiator_name(), "-m", "32", "-b", "256", url],
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(p)
        wait_until(lambda: p.poll() is None and session_up(), 60,
                   lambda: f"iscsi-perf's session (iscsi-perf status {p.poll()})")
        time.sleep(2)       # reads in flight, Data-In queued
        assert p.poll() is None, f"iscsi-perf exited early with {p.returncode}"
        return p

    # -- the ways to vanish

    def kill_daemon_and_reset_connection(self, port=3260):
        """kill -9 iscsid, then reset the kernel initiator's connection: it
        cannot reconnect without iscsid, and the target learns of it only from
        the reset its next segment (NOP-In or Data-In) gets from the dead port."""
        self.iscsid.kill9()
        self.firewall.reset_initiator(port)

    def silence(self, port=3260):
        """Drop every packet either way, as if the initiator's host died."""
        self.firewall.silence(port)

    @staticmethod
    def kill9(p):
        p.kill()
        p.wait(30)

    # -- back to normal

    def restore(self):
        self.firewall.clear()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(90)      # a process in D state dies once its I/O fails
            except subprocess.TimeoutExpired:
                raise AssertionError(f"{p.args[0]} (pid {p.pid}) did not die within 90s") from None
        self.procs = []
        self.iscsid.ensure_running()
        ini.logout_all()
