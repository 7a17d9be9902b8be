# SPDX-License-Identifier: GPL-2.0
"""Two connections of one session (MaxConnections 2), from a raw
initiator. Their commands share one CmdSN order, so the read thread of one
connection delivers commands that arrived on the other: a Text request so
delivered while its own connection runs another is answered on its own
connection, whole; each connection's writes take their Data-Out on that
connection; a task management function on one ends a task of the other;
and a Logout on one closes the other."""

import os

import pytest

from vmlib import proc
from vmlib import rawiscsi as ri
from vmlib.mcs import second, take_cmdsn
from vmlib.rawiscsi import Connection
from vmlib.target import Lun, Target, iqn
from vmlib.util import wait_until

pytestmark = pytest.mark.guard

NAME = iqn("mcs")
TEXT_ROUNDS = 100
ANSWER_S = 30


@pytest.fixture
def conns(ietd):
    """(a, b): connections 0 and 1 of one session to a nullio LUN."""
    ietd(Target(NAME, [Lun(0, None, "nullio")], {"MaxConnections": 2}))
    a = Connection(NAME, timeout=ANSWER_S).connect()
    a.login({"MaxConnections": 2}, clear_ua=True)
    b = second(a)
    yield a, b
    for c in (a, b):
        c.reset()


def text_answer(c, itt):
    p = c.expect(lambda p: p.opcode == ri.TEXT_RSP and p.itt == itt, ANSWER_S,
                 f"Text Response to ITT {itt:#x}")
    assert p.final, f"the answer to ITT {itt:#x} is not whole: {p}"
    return dict(p.text)


def test_text_requests_the_other_connection_delivers_are_answered_on_their_own(conns):
    """Each round: a's Text request waits for the CmdSN before it, which b
    sends next, so b's read thread runs it, while a's read thread runs an
    immediate Text request of a's at the same time. Both exchanges are a's:
    each is answered, on a, with the target's name."""
    a, b = conns
    for _ in range(TEXT_ROUNDS):
        gap = take_cmdsn(a, b)
        waiting, now = a.next_itt(), a.next_itt()
        a.send(ri.text_request({"SendTargets": "All"}, itt=waiting, cmdsn=take_cmdsn(a, b),
                               exp_statsn=a.exp_statsn))
        a.send(ri.text_request({"SendTargets": "All"}, itt=now, cmdsn=a.cmdsn,
                               exp_statsn=a.exp_statsn, immediate=True))
        tur = b.submit(ri.cdb_test_unit_ready(), cmdsn=gap)
        assert b.wait(tur, ANSWER_S).status == ri.GOOD
        for itt in (waiting, now):
            assert text_answer(a, itt).get("TargetName") == NAME


def test_writes_a_task_management_function_and_a_logout_across_connections(conns):
    a, b = conns
    bs = a.block_size(0, timeout=ANSWER_S)
    b.cmdsn = a.cmdsn
    # Writes on both at once: each R2T and its Data-Out on the write's own
    # connection.
    big = 256 * 1024
    wa = a.submit(ri.cdb_write10(0, big // bs), data=os.urandom(big), cmdsn=take_cmdsn(a, b))
    wb = b.submit(ri.cdb_write10(1024, big // bs), data=os.urandom(big),
                  cmdsn=take_cmdsn(a, b))
    assert a.wait(wa, ANSWER_S).status == ri.GOOD
    assert b.wait(wb, ANSWER_S).status == ri.GOOD

    # ABORT TASK on b for a's write that waits for its data.
    sn = take_cmdsn(a, b)
    stuck = a.submit(ri.cdb_write10(0, 4096 // bs), write=True, edtl=4096, cmdsn=sn)
    a.expect(lambda p: p.opcode == ri.R2T and p.itt == stuck.itt, ANSWER_S, "R2T")
    b.cmdsn = a.cmdsn
    r = b.tmf(ri.TMF_ABORT_TASK, rtt=stuck.itt, refcmdsn=sn, lun=0, timeout=ANSWER_S)
    assert r.response == ri.TMF_COMPLETE, r
    a.ping(timeout=ANSWER_S)
    assert not [p for p in a.unclaimed if p.opcode == ri.SCSI_RSP and p.itt == stuck.itt], \
        "the aborted write was answered"

    # b logs a out: a closes, b goes on.
    itt = b.next_itt()
    b.send(ri.logout_request(itt=itt, cmdsn=b.cmdsn, exp_statsn=b.exp_statsn,
                             reason=ri.LOGOUT_CLOSE_CONNECTION, cid=0))
    rsp = b.expect(lambda p: p.opcode == ri.LOGOUT_RSP and p.itt == itt, ANSWER_S,
                   "Logout Response")
    assert rsp.response == ri.LOGOUT_SUCCESS, rsp
    assert a.wait_closed(ANSWER_S) is not None, "connection 0 stayed open"
    # Its release runs after the close the initiator sees (on PREEMPT_RT
    # later still): the session lists it until then.
    wait_until(lambda: [[c.cid for c in s.conns] for s in proc.sessions_of(NAME)] == [[1]],
               ANSWER_S, "the session to have connection 1 alone")
    tur = b.submit(ri.cdb_test_unit_ready(), cmdsn=take_cmdsn(a, b))
    assert b.wait(tur, ANSWER_S).status == ri.GOOD
