# SPDX-License-Identifier: GPL-2.0
"""Scenario 5: split brain. The link between the nodes (corosync's and
DRBD's network) is cut while both are up, under the initiator's verified
load on the node serving the target. Each node loses the other; both are
quorate (two_node), so both reach for fencing: sbd's poison pill on the
disk they share (fence_sbd), the serving node's fencing undelayed and the
other's delayed, so that the serving node loses, the harder case. DRBD's
`fencing resource-and-stonith` freezes the primary's I/O from the moment
it loses its peer until the peer is fenced: the losing node acknowledges
no write the other lacks. Exactly one node is left, it is the only DRBD
primary at every moment sampled, it serves the target, the initiator's
session recovers to it, and every write the initiator had acknowledged is
on its disk."""

import json
import threading
import time

from clusterlib import config as c
from clusterlib import initiator as ini
from clusterlib import timings as t
from clusterlib.vm import GuestError

STONITH = True


class Roles(threading.Thread):
    """DRBD's role on each node still up, sampled every second: the
    samples in which both were primary (there must be none)."""

    def __init__(self, nodes):
        super().__init__(daemon=True)
        self.nodes, self.samples, self.both = nodes, 0, []
        self.stopped = threading.Event()

    def role(self, vm):
        if not vm.alive():
            return "gone"
        try:
            out = vm.run(f"drbdadm role {c.DRBD_RESOURCE}", check=False, timeout=20).out
        except GuestError:
            return "gone"
        return out.split("/")[0].strip() or "?"

    def run(self):
        while not self.stopped.wait(1.0):
            roles = {vm.name: self.role(vm) for vm in self.nodes}
            self.samples += 1
            if list(roles.values()).count("Primary") > 1:
                self.both.append((time.monotonic(), roles))

    def stop(self):
        self.stopped.set()
        self.join(60)


def test_a_split_leaves_one_writer_and_loses_no_acknowledged_write(cluster):
    vm = cluster.initiator
    active = cluster.active()
    assert active is not None, cluster.crm_mon()
    assert active.name == c.FIRST_ACTIVE, cluster.crm_mon()
    survivor = cluster.other(active)
    session = ini.login(vm)
    load = ini.Load(vm, cluster.shared, session.disk, "split")
    load.start()
    roles = Roles(list(cluster.nodes.values()))
    roles.start()

    before, reads = load.acked(), load.reads()
    for vm_ in cluster.nodes.values():
        vm_.run("echo '<6>iet-cluster: split' >/dev/kmsg")
    cut = time.monotonic()
    for node in cluster.nodes.values():
        cluster.netns.link(f"{node.name[:8]}c", up=False)
    # The serving node is fenced: its VM is reset by sbd and stops.
    deadline = cut + t.FAILOVER_S
    while active.alive():
        assert time.monotonic() < deadline, f"{active.name} not fenced in {t.FAILOVER_S} s"
        time.sleep(1)
    fenced_after = time.monotonic() - cut
    new = cluster.wait_active(t.FAILOVER_S + t.STONITH_TIMEOUT_S, not_on=active)
    assert new is survivor
    load.wait_acked(300, t.REPLACEMENT_TIMEOUT_S)
    load.wait_verified(reads)
    job = load.stop()
    roles.stop()

    assert not active.alive() and survivor.alive()
    assert not roles.both, f"both nodes primary: {roles.both}"
    assert roles.samples > 10
    assert survivor.run(f"drbdadm role {c.DRBD_RESOURCE}").out.startswith("Primary")
    # The survivor's fence of the other succeeded, and nothing fenced it.
    history = survivor.run("stonith_admin --history '*' 2>&1", check=False).out
    assert f"of {active.name} successful" in history, history
    assert f"of {survivor.name} successful" not in history, history
    assert ini.sessions(vm) == {session.sid: "LOGGED_IN"}
    summary = load.check_on(survivor)
    assert summary["acknowledged"] > before
    pause = load.pause(since=before)
    measured = {
        "scenario": "split brain", "implementation": "iet", "pause_s": pause["pause_s"],
        "fenced": active.name, "fenced_after_s": round(fenced_after, 1),
        "survivor": survivor.name, "role_samples": roles.samples,
        "acked_writes": summary["acknowledged"], "fio_writes": job["write"]["total_ios"],
        "fio_verified": job["read"]["total_ios"]}
    (cluster.results / "measured.json").write_text(json.dumps(measured, indent=1))
    print(f"\nsplit brain: {active.name} fenced {fenced_after:.0f} s after the cut, "
          f"{survivor.name} the only primary in {roles.samples} samples; I/O pause "
          f"{pause['pause_s']} s; {summary['acknowledged']} acknowledged writes all on "
          f"{survivor.name}; fio {job['write']['total_ios']} writes, "
          f"{job['read']['total_ios']} verified")
