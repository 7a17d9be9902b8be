# SPDX-License-Identifier: GPL-2.0
"""A cluster resource manager's agents (Pacemaker's iSCSITarget and
iSCSILogicalUnit, implementation "iet", replayed by cluster-agent.sh) manage
a target with ietadm and /proc/net/iet while an initiator is logged in:
create it, set parameters, add a CHAP user, add LUNs with Path, Type, ScsiId
and ScsiSN, find the tid, sessions and connections with sed and grep, close
the connections, delete the user, the LUNs and the target."""

import os
from pathlib import Path

import pytest

from ietlib import IETADM, chap, daemon, ietadm  # noqa: F401
from vmlib import kmsg, proc
from vmlib.target import iqn
from vmlib.util import MiB, REPO, run, wait_until

AGENT = REPO / "tests" / "vm" / "cluster-agent.sh"
SECRET = "agent-secret-1234"
FILES = [Path("/etc/initiators.allow"), Path("/etc/initiators.deny")]


@pytest.fixture
def etc_access_files():
    """The agents write /etc/initiators.{allow,deny}; the test starts
    without them and leaves none behind."""
    for f in FILES + [Path("/etc/iet/initiators.allow"), Path("/etc/iet/initiators.deny")]:
        assert not f.exists(), f"{f} exists before the test"
    yield
    for f in FILES:
        f.unlink(missing_ok=True)


def agent(*args, check=True):
    env = dict(os.environ, IETADM=str(IETADM), STOP_TIMEOUT="90")
    return run([str(AGENT), *args], check=check, timeout=180, env=env)


def test_cluster_agent_manages_a_target_under_a_logged_in_initiator(
        daemon, backing, brd, initiator, etc_access_files):
    bystander = iqn("agent-bystander")
    name = iqn("agent-managed")
    image = str(backing("agent-lun0", 64 * MiB))
    daemon(f"Target {bystander}\n\tLun 0 Type=nullio\n")
    before = proc.target(proc.volumes(), bystander)

    # Start: target, parameters, access, CHAP user.
    agent("target-start", name, "MaxRecvDataSegmentLength=65536 HeaderDigest=None,CRC32C",
          initiator.name, "joe", SECRET)
    assert agent("target-monitor", name).returncode == 0
    tid = proc.target(proc.volumes(), name).tid
    assert tid == 2
    assert "MaxRecvDataSegmentLength=65536" in ietadm("--op", "show", f"--tid={tid}", "--sid=0").stdout
    assert ietadm("--op", "show", f"--tid={tid}", "--user").stdout == "IncomingUser=joe\n"
    assert Path("/etc/initiators.allow").read_text() == f"{name} {initiator.name}\n"
    assert Path("/etc/initiators.deny").read_text() == f"{name} ALL\n"
    agent("lun-start", name, "0", image, "agent0", "agentsn0")
    assert agent("lun-monitor", name, "0", image).returncode == 0

    # An initiator logs in (with CHAP: the agent added a user).
    login = initiator.login(name, settings=chap("joe", SECRET))
    disk0 = login.disk(0)
    run(["dd", f"if={disk0}", "of=/dev/null", "bs=4k", "count=16", "iflag=direct"])
    assert len(proc.sessions_of(name)) == 1

    # A LUN more while it is logged in: a block device, so Type=blockio.
    log = kmsg.KernelLog()
    agent("lun-start", name, "1", brd.dev, "agent1", "agentsn1")
    assert agent("lun-monitor", name, "1", brd.dev).returncode == 0
    lun1 = next(l for l in proc.target(proc.volumes(), name).luns if l.lun == 1)
    assert lun1.path == brd.dev
    assert "ScsiId=agent1" in ietadm("--op", "show", f"--tid={tid}", "--lun=1").stdout
    # The initiator hears of it: REPORTED LUNS DATA HAS CHANGED.
    run(["dd", f"if={disk0}", "of=/dev/null", "bs=4k", "count=16", "iflag=direct", "skip=64"])
    seen = []

    def reported():
        seen.extend(log.new_lines())
        return any("LUN assignments on this target have changed" in line for line in seen)
    wait_until(reported, 30, "the initiator to report the unit attention")
    log.close()

    # Stop, as the agents do, the initiator still logged in.
    agent("lun-stop", name, "1")
    agent("lun-stop", name, "0")
    assert proc.target(proc.volumes(), name).luns == []
    agent("target-stop", name, "joe")
    assert agent("target-monitor", name, check=False).returncode == 7
    assert proc.target(proc.volumes(), name) is None
    assert Path("/etc/initiators.allow").read_text() == ""
    assert Path("/etc/initiators.deny").read_text() == ""
    # The target ietd.conf defined was not touched.
    assert proc.target(proc.volumes(), bystander) == before
