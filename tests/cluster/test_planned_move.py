# SPDX-License-Identifier: GPL-2.0
"""Scenario 2: the target moved to the other node and back under load with
crmsh (crm resource move, then clear): no I/O error, fio's verification
clean, every acknowledged write on the node that ends primary, and DRBD
connected and in sync after each move."""

import json

from clusterlib import config as c
from clusterlib import initiator as ini
from clusterlib import timings as t


def move(cluster, to):
    via = cluster.other(to)
    via.run(f"crm resource move g_iscsi {to.name}", timeout=t.CRM_CLI_S)
    got = cluster.wait_active(t.FAILOVER_S, not_on=via)
    assert got is to
    # The move's location constraint goes; stickiness keeps the target where it is.
    via.run("crm resource clear g_iscsi", timeout=t.CRM_CLI_S)
    to.wait_for(f"[ \"$(drbdadm dstate {c.DRBD_RESOURCE} | sort -u)\" = UpToDate/UpToDate ]",
                t.FAILOVER_S, "both DRBD volumes in sync after the move")


def test_move_and_back_under_load(cluster):
    first = cluster.active()
    assert first is not None, cluster.crm_mon()
    second = cluster.other(first)
    session = ini.login(cluster.initiator)
    load = ini.Load(cluster.initiator, cluster.shared, session.disk, "move")
    load.start()

    pauses = []
    for to in (second, first):
        mark, reads = load.acked(), load.reads()
        move(cluster, to)
        load.wait_acked(300, t.REPLACEMENT_TIMEOUT_S)
        load.wait_verified(reads)
        assert load.acked() > mark
        pauses.append(load.pause(since=mark)["pause_s"])
    job = load.stop()
    assert cluster.active() is first
    assert ini.sessions(cluster.initiator) == {session.sid: "LOGGED_IN"}
    summary = load.check_on(first)
    (cluster.results / "measured.json").write_text(json.dumps({
        "scenario": "planned move and back", "implementation": cluster.implementation,
        "pauses_s": pauses, "acked_writes": summary["acknowledged"],
        "fio_writes": job["write"]["total_ios"], "fio_verified": job["read"]["total_ios"]},
        indent=1))
    print(f"\nplanned move and back: I/O pauses {pauses[0]} s and {pauses[1]} s; "
          f"{summary['acknowledged']} acknowledged writes on {first.name}; "
          f"fio {job['write']['total_ios']} writes, "
          f"{job['read']['total_ios']} verified")
