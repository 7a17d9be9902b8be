# SPDX-License-Identifier: GPL-2.0
"""The cluster suite (make check-cluster): each test file boots its own
cluster (two target nodes, one initiator; clusterlib.cluster), runs its
scenario and leaves no VM, tap or namespace behind. A file's
IMPLEMENTATION names the target its cluster runs ("iet", the default, or
LIO's "lio-t"); ALUA = True has both nodes serve it, each through its own
portal group (config.crm_config_alua()); STONITH = True has the nodes
fence each other with sbd on a shared disk. A VM's kernel log with
a WARN, BUG, oops, lockdep or KASAN report fails the file's last test.

Environment: IET_CLUSTER_KERNEL (a name scripts/kernels knows; default
6.1), IET_CLUSTER_RESULTS (default build/cluster-results)."""

import os
import signal
import subprocess
from pathlib import Path

import pytest

from clusterlib.cluster import Cluster
from clusterlib.netns import Netns
from clusterlib.vm import REPO

RESULTS = Path(os.environ.get("IET_CLUSTER_RESULTS", REPO / "build" / "cluster-results"))


def kernel(what):
    name = os.environ.get("IET_CLUSTER_KERNEL", "6.1")
    kdir = subprocess.run([str(REPO / "scripts" / "kernels"), "kdir", name],
                          capture_output=True, text=True, check=True).stdout.strip()
    return subprocess.run([str(REPO / "scripts" / "kernels"), what, kdir],
                          capture_output=True, text=True, check=True).stdout.strip()


def kvm_usable():
    boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    cache = Path(f"/tmp/iet-vm-kvm.{boot_id}")
    return cache.exists() and cache.read_text().strip() == "yes"


def pytest_configure(config):
    """SIGTERM ends the run through pytest's teardown, which stops the
    VMs (they are in sessions of their own and would outlive it)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)


@pytest.fixture(scope="module")
def cluster(request):
    if not Netns.usable():
        pytest.fail("the cluster suite needs root and ip netns")
    ko = Path(kernel("module"))
    assert ko.exists(), f"{ko} is not built (make kernel KDIR=...)"
    for tool in ("ietd", "ietadm"):
        assert (REPO / "usr" / tool).exists(), f"usr/{tool} is not built (make usr)"
    name = request.module.__name__.rsplit(".", 1)[-1]
    cl = Cluster(RESULTS / name, kernel("image"), ko, kvm=kvm_usable(),
                 implementation=getattr(request.module, "IMPLEMENTATION", "iet"),
                 alua=getattr(request.module, "ALUA", False),
                 stonith=getattr(request.module, "STONITH", False))
    try:
        cl.start()
        yield cl
        bad = cl.audit()
        assert not bad, "kernel log reports:\n" + "\n".join(
            f"--- {vm}\n{lines}" for vm, lines in bad.items())
    finally:
        cl.stop()
