# SPDX-License-Identifier: GPL-2.0
"""Scenario 3: reservations follow the data. Two cluster clients (two
initiator names, one session each) unfence with fence_scsi, which
registers each one's key with APTPL and reserves Write Exclusive,
Registrants Only; one fences the other (PREEMPT AND ABORT). Then the
active target node is killed under the survivor's verified load. On the
other node the registration, the reservation and the fence are as they
were: the kernel wrote them to pr_dir before it answered, pr_dir is a file
system on the replicated DRBD volume, mounted there before the LUN is
added, and the LUN restores them before it takes a command."""

import json

from clusterlib import config as c
from clusterlib import initiator as ini
from clusterlib import scenarios

CLIENTS = {"n1": "iqn.2001-04.com.example:iet-cluster.client1",
           "n2": "iqn.2001-04.com.example:iet-cluster.client2"}
KEYS = {"n1": "a1", "n2": "b2"}
UA_EXIT, CONFLICT_EXIT = 6, 24          # sg3-utils' exit categories
# One block at 200 MiB: outside fio's and acked-writes' regions.
READ = "28 00 00 06 40 00 00 00 01 00"
WRITE = "2a 00 00 06 40 00 00 00 01 00"


def sg(vm, cmd):
    """An sg3-utils command; run again while it meets a unit attention
    (each is reported once: after the failover, the new LUN's power on)."""
    for _ in range(4):
        res = vm.run(cmd, check=False, timeout=120)
        if res.rc != UA_EXIT:
            return res
    return res


def keys(vm, dev):
    res = sg(vm, f"sg_persist -n --in --read-keys {dev}")
    assert res.rc == 0, res
    return sorted(int(w, 16) for w in res.out.split() if w.startswith("0x"))


def reservation(vm, dev):
    res = sg(vm, f"sg_persist -n --in --read-reservation {dev}")
    assert res.rc == 0, res
    if "NO reservation" in res.out:
        return None
    return int(res.out.split("Key=")[1].split()[0], 16), res.out.split("type:")[1].strip()


def access(vm, dev, cdb, write):
    data = "-s 512 -i /dev/zero" if write else "-r 512"
    rc = sg(vm, f"sg_raw {data} {dev} {cdb}").rc
    assert rc in (0, CONFLICT_EXIT), f"sg_raw {cdb} on {dev}: exit {rc}"
    return rc == 0


def fence(vm, dev, action, key):
    return vm.run(f"fence_scsi --aptpl --devices={dev} --key={key} --action={action}",
                  check=False, timeout=180)


def state(vm, a, b):
    return {"keys": keys(vm, a), "reservation": reservation(vm, a),
            "fenced reads": access(vm, b, READ, False),
            "fenced writes": access(vm, b, WRITE, True),
            "fence status": (fence(vm, a, "status", KEYS["n1"]).rc,
                             fence(vm, a, "status", KEYS["n2"]).rc)}


def test_registrations_reservation_and_fence_follow_a_failover(cluster):
    vm = cluster.initiator
    active = cluster.active()
    assert active is not None, cluster.crm_mon()
    sess = ini.login_ifaces(vm, CLIENTS)
    a, b = sess["n1"].disk, sess["n2"].disk
    # Both clients unfence, the fencing one last (fence_scsi keeps "this
    # node's key" in a file of its own); then it fences the other.
    for iface in ("n2", "n1"):
        res = fence(vm, sess[iface].disk, "on", KEYS[iface])
        assert res.rc == 0, res
    res = fence(vm, a, "off", KEYS["n2"])
    assert res.rc == 0, res
    expected = {"keys": [0xa1], "reservation": (0xa1, "Write Exclusive, registrants only"),
                "fenced reads": True, "fenced writes": False, "fence status": (0, 2)}
    assert state(vm, a, b) == expected
    # Kept where the other node will look: the LUN's record (its pair of
    # files, NAA-ID.a and .b) on the replicated volume.
    records = active.run(f"mountpoint -q {c.PR_DIR} && ls {c.PR_DIR}").out.split()
    assert [r for r in records if r.endswith((".a", ".b")) and "-" in r], records

    load = ini.Load(vm, cluster.shared, a, "pr")
    load.start()
    cluster.other(active).run("echo '<6>iet-cluster: failover' >/dev/kmsg")
    new, before = scenarios.kill_active(cluster, load)
    job = load.stop()
    # The LUN added there read the record: one registration (the
    # survivor's) and the reservation.
    restored = new.run("dmesg | sed -n '/iet-cluster: failover/,$p' | "
                       "grep 'persistent registrations restored'", check=False).out
    assert ": 1 persistent registrations restored, and a reservation" in restored, restored

    assert state(vm, a, b) == expected
    assert ini.sessions(vm) == {s.sid: "LOGGED_IN" for s in sess.values()}
    summary = load.check_on(new)
    assert summary["acknowledged"] > before
    pause = load.pause(since=before)
    (cluster.results / "measured.json").write_text(json.dumps({
        "scenario": "reservations follow a hard failure", "implementation": "iet",
        "pause_s": pause["pause_s"], "acked_writes": summary["acknowledged"],
        "fio_writes": job["write"]["total_ios"], "fio_verified": job["read"]["total_ios"],
        "after": {k: str(v) for k, v in expected.items()}}, indent=1))
    print(f"\nreservations after failover to {new.name}: {expected}; I/O pause "
          f"{pause['pause_s']} s; fio {job['write']['total_ios']} writes, "
          f"{job['read']['total_ios']} verified; {summary['acknowledged']} acknowledged on "
          f"{new.name}")
