# SPDX-License-Identifier: GPL-2.0
"""A second connection of a raw session (MaxConnections 2), and the one
CmdSN order both share."""

from . import proc
from .rawiscsi import Connection
from .util import wait_until


def second(a, keys=None):
    """Connection 1 of a's session, logged in with keys (MaxConnections 2
    unless they say otherwise) at a's CmdSN."""
    b = Connection(a.target, timeout=a.timeout, isid=a.isid, cid=1).connect()
    b.tsih = a.tsih
    b.login({"MaxConnections": 2, **(keys or {})}, cmdsn=a.cmdsn, clear_ua=False)
    # Session-wide keys are the leading connection's (Irrelevant here).
    for k, v in a.params.items():
        if b.params.get(k) == "Irrelevant":
            b.params[k] = v

    # ietd hands the socket to the kernel after the final Login Response
    # has gone out, so the connection may reach /proc a moment later.
    def both():
        [s] = proc.sessions_of(a.target)
        return sorted(c.cid for c in s.conns) == [0, 1]

    wait_until(both, 10, "connection 1 to join the session in /proc")
    return b


def take_cmdsn(*conns):
    """The session's next CmdSN, taken for a command on any of conns."""
    sn = max(c.cmdsn for c in conns)
    for c in conns:
        c.cmdsn = (sn + 1) & 0xFFFFFFFF
    return sn
