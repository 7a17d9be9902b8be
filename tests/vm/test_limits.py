# SPDX-License-Identifier: GPL-2.0
"""MaxSessions is enforced at login, and changes at runtime for the logins
that follow (ietadm --op update), without touching the sessions in place."""

from ietlib import daemon, ietadm  # noqa: F401
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import run

OTHER = "iqn.2024-01.com.example.iet:second-host"


def inq_as(name, initiator_name):
    return run(["iscsi-inq", "-i", initiator_name, f"iscsi://127.0.0.1/{name}/0"],
               check=False, timeout=60)


def test_max_sessions_refuses_one_more_and_follows_updates(daemon, initiator):
    name = iqn("limits-sessions")
    d = daemon(f"Target {name}\n\tMaxSessions 1\n\tLun 0 Type=nullio\n")
    initiator.login(name)
    [held] = proc.sessions_of(name)

    cp = inq_as(name, OTHER)
    assert cp.returncode != 0
    assert f"target {name} has its MaxSessions=1 sessions" in d.log_text()

    ietadm("--op", "update", f"--tid={name}", "--params=MaxSessions=2")
    assert inq_as(name, OTHER).returncode == 0
    assert held in proc.sessions_of(name)
