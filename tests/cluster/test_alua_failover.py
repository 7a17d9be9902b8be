# SPDX-License-Identifier: GPL-2.0
"""Scenario 4: ALUA across two kernels. Both nodes export the LUN with the
same identity (NAA name, serial) through target ports of their own: each
node's portal group (ietd.conf PortalGroup) and its peer's
(RemotePortalGroup), so that REPORT TARGET PORT GROUPS lists both with
different relative target port identifiers and groups. The initiator logs
in through both and dm-multipath groups the paths by ALUA priority. The
standby node serves the LUN without its backing (DRBD secondary cannot be
opened): INQUIRY, READ CAPACITY and REPORT TARGET PORT GROUPS answer, a
READ gets NOT READY, TARGET PORT IN STANDBY STATE. Then the active node is
killed under verified load: Pacemaker promotes DRBD and ocf:iet:alua on
the other node, whose group becomes active/optimized (the LUN opened
first); the initiator hears ASYMMETRIC ACCESS STATE CHANGED on its path
there, scsi_dh_alua reads the new state, multipathd moves I/O to that
path, and neither fio nor the writer sees an I/O error."""

import json
import re

from clusterlib import config as c
from clusterlib import initiator as ini
from clusterlib import scenarios
from clusterlib import timings as t

ALUA = True


def vpd83(vm, disk):
    """(NAA designator, relative target port, target port group) of a path."""
    out = vm.run(f"sg_raw -r 255 -o /tmp/vpd83 {disk} 12 01 83 00 ff 00 2>/dev/null && "
                 "od -An -tx1 -v /tmp/vpd83").out
    raw = bytes(int(b, 16) for b in out.split())
    naa, rtpi, tpg, off = None, None, None, 4
    while off + 4 <= len(raw):
        assoc, kind, n = (raw[off + 1] >> 4) & 3, raw[off + 1] & 0xf, raw[off + 3]
        value = raw[off + 4:off + 4 + n]
        if assoc == 0 and kind == 3 and naa is None:
            naa = value.hex()
        elif assoc == 1 and kind == 4:
            rtpi = int.from_bytes(value[2:4], "big")
        elif assoc == 1 and kind == 5:
            tpg = int.from_bytes(value[2:4], "big")
        off += 4 + n
    return naa, rtpi, tpg


STATES = r"(active/optimized|active/non[- ]optimized|standby|unavailable|transitioning)"


def rtpg(vm, disk):
    """{group: state} of REPORT TARGET PORT GROUPS through a path."""
    out = vm.run(f"sg_rtpg --decode {disk}").out
    groups = {}
    for part in re.split(r"target port group id\s*:\s*", out)[1:]:
        m = re.search(STATES, part, re.I)
        groups[int(part.split()[0].rstrip(","), 16)] = m[1].lower() if m else part[:80]
    return groups


def path_group(groups, node):
    """(prio, group status, path state) of node's path in multipath -ll."""
    return next((prio, status, paths[node]) for prio, status, paths in groups if node in paths)


def access_state(vm, disk):
    return vm.run(f"cat /sys/block/{disk[5:]}/device/access_state").out.strip()


def sense_of_read(vm, disk):
    """sg_raw's READ(10) of one block: its exit status and what it printed."""
    res = vm.run(f"sg_raw -r 512 {disk} 28 00 00 00 00 00 00 00 01 00", check=False)
    return res.rc, res.out + res.err


def test_alua_paths_follow_a_hard_failover(cluster):
    vm = cluster.initiator
    active = cluster.active()
    assert active is not None, cluster.crm_mon()
    standby = cluster.other(active)
    mp = ini.login_multipath(vm, list(cluster.nodes.values()))
    a, b = mp.paths[active.name].disk, mp.paths[standby.name].disk
    own = {n: c.ALUA_GROUPS[n] for n in cluster.nodes}

    # One logical unit through two target ports, in two groups.
    ids = {n: vpd83(vm, s.disk) for n, s in mp.paths.items()}
    assert ids[active.name][0] and ids[active.name][0] == ids[standby.name][0], ids
    assert {n: ids[n][1:] for n in ids} == {n: (own[n], own[n]) for n in ids}, ids
    serials = {vm.run(f"sg_vpd --page=sn {s.disk}").out.split()[-1] for s in mp.paths.values()}
    assert serials == {c.SCSI_SN}, serials
    # Both groups listed through either path, with the cluster's states.
    want = {own[active.name]: "active/optimized", own[standby.name]: "standby"}
    for disk in (a, b):
        assert rtpg(vm, disk) == want, disk
    # The standby node answers for the LUN it cannot open: its size, as
    # the active one's, and NOT READY for what standby refuses.
    sizes = {vm.run(f"cat /sys/block/{d[5:]}/size").out.strip() for d in (a, b)}
    assert len(sizes) == 1 and sizes != {"0"}, sizes
    assert (access_state(vm, a), access_state(vm, b)) == ("active/optimized", "standby")
    rc, said = sense_of_read(vm, b)
    assert rc != 0 and re.search(r"Not Ready.*target port in standby state", said, re.S | re.I), said
    assert sense_of_read(vm, a)[0] == 0
    groups = ini.multipath_groups(vm, mp)
    used, idle = path_group(groups, active.name), path_group(groups, standby.name)
    assert len(groups) == 2 and used[0] > idle[0], groups
    assert used[1:] == ("active", "active ready running"), groups
    assert idle[2] == "active ghost running", groups

    load = ini.Load(vm, cluster.shared, mp.dev, "alua")
    load.start()
    standby.run("echo '<6>iet-cluster: failover' >/dev/kmsg")
    vm.run("echo '<6>iet-cluster: failover' >/dev/kmsg")
    new, before = scenarios.kill_active(cluster, load)
    assert new is standby
    job = load.stop()
    summary = load.check_on(new)
    assert summary["acknowledged"] > before
    pause = load.pause(since=before)

    # The survivor's group is active/optimized; its path carries the I/O.
    assert access_state(vm, b) == "active/optimized"
    assert rtpg(vm, b).get(own[standby.name], "").lower() == "active/optimized"
    groups = ini.multipath_groups(vm, mp)
    assert path_group(groups, standby.name)[1:] == ("active", "active ready running"), groups
    # The initiator heard it: scsi_dh_alua read the new state of the path
    # after ASYMMETRIC ACCESS STATE CHANGED (it logs each state it reads).
    log = vm.run("dmesg | sed -n '/iet-cluster: failover/,$p'").out
    assert re.search(rf"alua: port group {own[standby.name]:02x} state A", log), log[-3000:]
    # On the survivor: the LUN opened there, after the promotion.
    shown = new.run("ietadm --op show --tid=1 --lun=0").out
    assert "Backing=open" in shown, shown

    measured = {
        "scenario": "ALUA hard failure", "implementation": "iet", "pause_s": pause["pause_s"],
        "acked_writes": summary["acknowledged"], "fio_writes": job["write"]["total_ios"],
        "fio_verified": job["read"]["total_ios"], "survivor": new.name,
        "multipath_after": groups}
    (cluster.results / "measured.json").write_text(json.dumps(measured, indent=1))
    print(f"\nALUA hard failure: I/O pause {pause['pause_s']} s; "
          f"{summary['acknowledged']} acknowledged writes all on {new.name}; "
          f"fio {job['write']['total_ios']} writes, {job['read']['total_ios']} verified; "
          f"multipath after: {groups}")
    assert pause["pause_s"] < t.FAILOVER_S + t.MULTIPATH_REPLACEMENT_TIMEOUT_S
