# SPDX-License-Identifier: GPL-2.0
"""Scenarios that more than one test file runs: the hard failure runs on
IET and, as the control, on LIO, measured the same way."""

import json

from . import initiator as ini
from . import timings as t


def kill_active(cluster, load):
    """The active node's VM stopped at once under the load: the other one
    takes over, and I/O goes on through it (more writes acknowledged, and
    fio verifying what it writes). (the new active node, the count of
    acknowledgements before the kill)."""
    active = cluster.active()
    standby = cluster.other(active)
    before, reads = load.acked(), load.reads()
    active.kill()
    new = cluster.wait_active(t.FAILOVER_S, not_on=active)
    assert new is standby
    load.wait_acked(300, t.REPLACEMENT_TIMEOUT_S)
    load.wait_verified(reads)
    return new, before


def hard_failure(cluster, name):
    """The active node's VM stopped at once under load: the other node
    takes over, the session recovers, fio verifies clean and every
    acknowledged write is on the new primary. Returns what was measured
    (also in the scenario's measured.json)."""
    assert cluster.active() is not None, cluster.crm_mon()
    session = ini.login(cluster.initiator)
    load = ini.Load(cluster.initiator, cluster.shared, session.disk, name)
    load.start()
    new, before = kill_active(cluster, load)
    job = load.stop()
    pause = load.pause(since=before)

    # The same session, recovered, not a new login.
    assert ini.sessions(cluster.initiator) == {session.sid: "LOGGED_IN"}
    summary = load.check_on(new)
    assert summary["acknowledged"] > before
    measured = {
        "scenario": "hard failure", "implementation": cluster.implementation,
        "pause_s": pause["pause_s"], "acked_writes": summary["acknowledged"],
        "fio_writes": job["write"]["total_ios"], "fio_verified": job["read"]["total_ios"],
        "survivor": new.name}
    (cluster.results / "measured.json").write_text(json.dumps(measured, indent=1))
    print(f"\nhard failure ({cluster.implementation}): I/O pause {pause['pause_s']} s; "
          f"{summary['acknowledged']} acknowledged writes all on {new.name}; "
          f"fio {job['write']['total_ios']} writes, {job['read']['total_ios']} verified")
    return measured
