# SPDX-License-Identifier: GPL-2.0
"""Task attributes (SAM-5 8.6) from a raw-PDU initiator, on a blockio LUN
whose writes land seconds after they are sent (dm-delay over a RAM disk): an
ORDERED command waits for every older one of its I_T nexus and holds back
every younger one, but not another nexus's; a HEAD OF QUEUE one runs at
once; a command held behind one whose data never comes runs once that one is
aborted; a connection reset with commands held, behind a slow write and
behind one whose data never comes, leaves a target that serves. INQUIRY's
extended page says all three are supported. RFC 7144's task management
functions: QUERY TASK and QUERY TASK SET see the nexus's tasks, QUERY
ASYNCHRONOUS EVENT a pending unit attention without clearing it, and I_T
NEXUS RESET ends this nexus's tasks, not another's, and tells it so. A
LOGICAL UNIT RESET ends another nexus's tasks with TASK ABORTED (TAS), each
once, whether in the backend, waiting for data or held, and its own
without an answer; with TAS cleared by MODE SELECT, all without one."""

import os
import time

import pytest

from vmlib import proc
from vmlib import rawiscsi as ri
from vmlib.rawiscsi import Connection
from vmlib.storage import SlowWrites
from vmlib.target import Lun, Target, iqn
from vmlib.util import wait_until

BS = 512
DELAY_MS = 2000


@pytest.fixture
def slow_writes(brd):
    """Set up before the target, so it goes after the target lets go of it."""
    dev = SlowWrites("iet-tattr-slow", brd.dev).create()
    yield dev
    dev.set_write_delay(0)
    dev.remove()


@pytest.fixture
def conn(slow_writes, ietd):
    name = iqn("task-attr")
    # ModeSelect: an initiator may clear TAS (below).
    ietd(Target(name, [Lun(0, slow_writes.path, type="blockio",
                           params={"ModeSelect": "Yes"})]))
    c = Connection(name, timeout=30).connect()
    c.login()
    slow_writes.set_write_delay(DELAY_MS)
    yield c
    c.reset()


def read(c, lba, attr):
    return c.submit(ri.cdb_read10(lba, 1), read=True, edtl=BS, attr=attr)


def finishing_order(c, tasks, timeout=30):
    """The ITTs of tasks in the order their status came."""
    want, order = {t.itt for t in tasks}, []
    deadline = time.monotonic() + timeout
    while len(order) < len(want):
        p = c.recv(max(0.1, deadline - time.monotonic()))
        ended = p.opcode == ri.SCSI_RSP or (p.opcode == ri.DATA_IN and p.flags & ri.DATA_STATUS)
        if ended and p.itt in want:
            assert p.status == ri.GOOD, f"ITT {p.itt:#x}: status {p.status:#x}"
            order.append(p.itt)
    return order


@pytest.mark.short
def test_ordered_waits_for_older_and_holds_younger_head_of_queue_goes_first(conn):
    c = conn
    w = c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))        # lands in 2 s
    o = read(c, 100, ri.ATTR_ORDERED)
    s = read(c, 200, ri.ATTR_SIMPLE)
    h = read(c, 300, ri.ATTR_HEAD_OF_QUEUE)
    names = {w.itt: "WRITE", o.itt: "ORDERED", s.itt: "SIMPLE", h.itt: "HEAD OF QUEUE"}
    order = [names[i] for i in finishing_order(c, [w, o, s, h])]
    assert order == ["HEAD OF QUEUE", "WRITE", "ORDERED", "SIMPLE"], order


def test_an_ordered_command_orders_its_own_nexus_only(conn):
    """A task set per I_T nexus (TST=001b): another initiator's commands,
    ORDERED ones too, neither wait for this one's nor hold them back."""
    c = conn
    other = Connection(c.target, timeout=30).connect()
    other.login()
    try:
        w = c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))
        o = read(c, 100, ri.ATTR_ORDERED)
        r = other.execute(ri.cdb_read10(200, 1), read=True, edtl=BS, attr=ri.ATTR_ORDERED)
        assert r.status == ri.GOOD
        ended = [p.itt for p in c.poll() if p.opcode in (ri.SCSI_RSP, ri.DATA_IN)]
        assert w.itt not in ended, "the other nexus's READ waited for the slow WRITE"
        assert finishing_order(c, [w, o]) == [w.itt, o.itt]
        other.logout()
    finally:
        other.close()


def test_simple_commands_still_pass_each_other(conn):
    """Without an ORDERED one, reads do not wait for the slow write."""
    c = conn
    w = c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))
    r = read(c, 100, ri.ATTR_SIMPLE)
    order = finishing_order(c, [w, r])
    assert order == [r.itt, w.itt]


def test_a_command_held_behind_one_whose_data_never_comes_runs_when_it_is_aborted(conn):
    c = conn
    # A WRITE whose R2T is never answered: it stays in the task set.
    w = c.submit(ri.cdb_write10(0, 8), write=True, edtl=8 * BS)
    o = read(c, 100, ri.ATTR_ORDERED)
    with pytest.raises(TimeoutError):
        c.expect(lambda p: p.itt == o.itt and p.opcode in (ri.DATA_IN, ri.SCSI_RSP), 3,
                 "the ORDERED READ, which must wait")
    rsp = c.tmf(ri.TMF_ABORT_TASK, rtt=w.itt, refcmdsn=w.cmdsn)
    assert rsp.response == 0, f"ABORT TASK: response {rsp.response}"
    assert c.wait(o, 30).status == ri.GOOD

    # A held command aborted itself is not left waiting, nor its TMF. (The
    # SIMPLE one first: with the ORDERED one gone, it would run at once.)
    w = c.submit(ri.cdb_write10(0, 8), write=True, edtl=8 * BS)
    o = read(c, 100, ri.ATTR_ORDERED)
    s = read(c, 200, ri.ATTR_SIMPLE)
    for t in (s, o):
        rsp = c.tmf(ri.TMF_ABORT_TASK, rtt=t.itt, refcmdsn=t.cmdsn, timeout=10)
        assert rsp.response == 0, f"ABORT TASK: response {rsp.response}"
    rsp = c.tmf(ri.TMF_ABORT_TASK, rtt=w.itt, refcmdsn=w.cmdsn, timeout=10)
    assert rsp.response == 0, f"ABORT TASK: response {rsp.response}"
    ended = [p.itt for p in c.poll() if p.opcode in (ri.SCSI_RSP, ri.DATA_IN)]
    assert not set(ended) & {w.itt, o.itt, s.itt}, "an aborted task answered"
    assert c.execute(ri.cdb_read10(0, 1), read=True, edtl=BS,
                     attr=ri.ATTR_ORDERED).status == ri.GOOD


def test_a_reset_with_commands_held_leaves_a_target_that_serves(conn, slow_writes):
    c = conn
    c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))
    c.submit(ri.cdb_write10(50, 8), write=True, edtl=8 * BS)     # no data
    for i in range(8):
        read(c, 100 + i, ri.ATTR_ORDERED if i % 2 else ri.ATTR_SIMPLE)
    c.reset()
    slow_writes.set_write_delay(0)
    d = Connection(c.target, timeout=30).connect()
    d.login()
    r = d.execute(ri.cdb_read10(0, 1), read=True, edtl=BS, attr=ri.ATTR_ORDERED)
    assert r.status == ri.GOOD
    inq = d.execute(ri.cdb_inquiry(64, evpd=True, page=0x86), read=True, edtl=64)
    assert inq.status == ri.GOOD and inq.data[1] == 0x86
    assert inq.data[5] & 0x07 == 0x07, "HEADSUP, ORDSUP, SIMPSUP"
    d.logout()
    d.close()


TMF_QUERY_TASK, TMF_QUERY_TASK_SET, TMF_I_T_NEXUS_RESET, TMF_QUERY_ASYNC_EVENT = 9, 10, 11, 12
FUNCTION_COMPLETE, LUN_DOES_NOT_EXIST, FUNCTION_SUCCEEDED = 0, 2, 7


def test_rfc7144_queries_see_the_task_set_and_a_pending_unit_attention(conn):
    c = conn
    w = c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))      # lands in 2 s
    assert c.tmf(TMF_QUERY_TASK, rtt=w.itt).response == FUNCTION_SUCCEEDED
    assert c.tmf(TMF_QUERY_TASK, rtt=0x7A5C0FFE).response == FUNCTION_COMPLETE
    assert c.tmf(TMF_QUERY_TASK, rtt=w.itt, lun=3).response == LUN_DOES_NOT_EXIST
    assert c.tmf(TMF_QUERY_TASK_SET).response == FUNCTION_SUCCEEDED
    assert c.wait(w).status == ri.GOOD
    assert c.tmf(TMF_QUERY_TASK, rtt=w.itt).response == FUNCTION_COMPLETE
    assert c.tmf(TMF_QUERY_TASK_SET).response == FUNCTION_COMPLETE

    assert c.tmf(TMF_QUERY_ASYNC_EVENT).response == FUNCTION_COMPLETE
    # A LOGICAL UNIT RESET from another nexus: this one has a unit
    # attention pending, which the query reports and leaves in place.
    other = Connection(c.target, timeout=30).connect()
    other.login()
    assert other.tmf(ri.TMF_LOGICAL_UNIT_RESET).response == FUNCTION_COMPLETE
    other.logout()
    other.close()
    for _ in range(2):
        rsp = c.tmf(TMF_QUERY_ASYNC_EVENT)
        assert rsp.response == FUNCTION_SUCCEEDED
        # UADE DEPTH 1, UNIT ATTENTION; POWER ON, RESET, OR BUS DEVICE
        # RESET / LOGICAL UNIT RESET
        assert bytes(rsp.bhs[8:11]) == bytes([0x16, 0x29, 0x03]), bytes(rsp.bhs[8:16]).hex()
    r = c.execute(ri.cdb_test_unit_ready())
    assert r.status == ri.CHECK_CONDITION and r.sense_triple == (0x6, 0x29, 0x03), r
    assert c.tmf(TMF_QUERY_ASYNC_EVENT).response == FUNCTION_COMPLETE


def test_i_t_nexus_reset_ends_this_nexus_tasks_and_tells_it(conn):
    c = conn
    other = Connection(c.target, timeout=30).connect()
    other.login()
    try:
        mine = c.submit(ri.cdb_write10(0, 8), write=True, edtl=8 * BS)   # no data
        theirs = other.submit(ri.cdb_write10(100, 8), write=True, edtl=8 * BS)
        other.expect(lambda p: p.opcode == ri.R2T and p.itt == theirs.itt, 10, "R2T")
        assert c.tmf(TMF_I_T_NEXUS_RESET, timeout=10).response == FUNCTION_COMPLETE
        assert c.tmf(TMF_QUERY_TASK, rtt=mine.itt).response == FUNCTION_COMPLETE
        # The other nexus's task lives on, and it was told nothing.
        assert other.tmf(TMF_QUERY_TASK, rtt=theirs.itt).response == FUNCTION_SUCCEEDED
        assert other.tmf(TMF_QUERY_ASYNC_EVENT).response == FUNCTION_COMPLETE
        # This one: I_T NEXUS LOSS OCCURRED, once, then it serves.
        r = c.execute(ri.cdb_test_unit_ready())
        assert r.status == ri.CHECK_CONDITION and r.sense_triple == (0x6, 0x29, 0x07), r
        assert c.execute(ri.cdb_test_unit_ready()).status == ri.GOOD
    finally:
        other.reset()


def test_a_new_nexus_hears_power_on_and_a_returning_port_its_nexus_loss(ietd):
    """SAM-5 6.3: each logical unit tells a new I_T nexus of its power on,
    once; an initiator port whose last session ended hears I_T NEXUS LOSS
    OCCURRED in its next one instead; another port hears nothing of it."""
    name = iqn("first-ua")
    ietd(Target(name, [Lun(0, type="nullio"), Lun(1, type="nullio")]))
    isid = bytes([0x80, 0x12, 0x34, 0x56, 0x78, 0x9a])
    c = Connection(name, isid=isid, timeout=30).connect()
    c.login(clear_ua=False)
    # INQUIRY and REPORT LUNS do not report it (SPC-4 5.14).
    assert c.execute(ri.cdb_inquiry(36), read=True, edtl=36).status == ri.GOOD
    assert c.tmf(TMF_QUERY_ASYNC_EVENT, lun=1).response == FUNCTION_SUCCEEDED
    taken = c.clear_unit_attentions()
    assert taken == {0: [(0x29, 0x00)], 1: [(0x29, 0x00)]}, taken
    assert c.clear_unit_attentions() == {}
    c.logout()
    c.close()
    # The session is gone (the kernel says so) before the port returns.
    wait_until(lambda: not proc.sessions_of(name), 30, "the first session to end")

    c = Connection(name, isid=isid, timeout=30).connect()
    c.login(clear_ua=False)
    other = Connection(name, timeout=30).connect()
    other.login(clear_ua=False)
    try:
        taken = c.clear_unit_attentions()
        assert taken == {0: [(0x29, 0x07)], 1: [(0x29, 0x07)]}, taken
        taken = other.clear_unit_attentions()
        assert taken == {0: [(0x29, 0x00)], 1: [(0x29, 0x00)]}, taken
    finally:
        other.reset()
        c.reset()


def statuses(c, tasks, timeout):
    """{ITT: [status, ...]} of what came for tasks within timeout (every
    status, so that one answered twice shows)."""
    want = {t.itt for t in tasks}
    got = {}
    for p in [p for p in c.unclaimed if p.itt in want and p.has_status]:
        c.unclaimed.remove(p)
        got.setdefault(p.itt, []).append(p.status)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            p = c.recv(max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        if p.itt in want and p.has_status:
            got.setdefault(p.itt, []).append(p.status)
    return got


def tasks_of_every_kind(c):
    """A write in the backend (2 s), one waiting for its data (R2T sent),
    and an ORDERED read held behind both."""
    slow = c.submit(ri.cdb_write10(0, 8), data=os.urandom(8 * BS))
    nodata = c.submit(ri.cdb_write10(50, 8), write=True, edtl=8 * BS)
    r2t = c.expect(lambda p: p.opcode == ri.R2T and p.itt == nodata.itt, 10, "R2T")
    held = read(c, 100, ri.ATTR_ORDERED)
    # The ping is answered once the target has taken everything before it
    # on this connection: a reset from another connection that overtook
    # the read would leave it a new command after the reset (its unit
    # attention, not the abort).
    c.ping()
    return slow, nodata, held, r2t


def late_data(c, task, r2t):
    """The Data-Out an R2T asked for, after its task ended."""
    c.send(ri.data_out(itt=task.itt, ttt=r2t.ttt, offset=r2t.offset,
                       data=bytes(r2t.desired_length), exp_statsn=c.exp_statsn,
                       final=True))


def test_a_reset_by_another_nexus_answers_its_tasks_task_aborted(conn):
    """SAM-5 5.6.3 with TAS=1: another nexus's LOGICAL UNIT RESET ends this
    one's tasks with TASK ABORTED, each once, so that an initiator retries
    them at once instead of after its command timer (a Linux bystander
    stalled 90 s without). The resetting nexus hears of its own tasks by
    the TMF's response alone."""
    c = conn
    other = Connection(c.target, timeout=30).connect()
    other.login()
    try:
        slow, nodata, held, r2t = tasks_of_every_kind(c)
        own = other.submit(ri.cdb_write10(200, 8), write=True, edtl=8 * BS)
        other.expect(lambda p: p.opcode == ri.R2T and p.itt == own.itt, 10, "R2T")
        assert other.tmf(ri.TMF_LOGICAL_UNIT_RESET).response == FUNCTION_COMPLETE
        got = statuses(c, [slow, nodata, held], 5)
        names = {slow.itt: "WRITE in the backend", nodata.itt: "WRITE waiting for data",
                 held.itt: "ORDERED READ held"}
        assert {names[i]: v for i, v in got.items()} == \
            {n: [ri.TASK_ABORTED] for n in names.values()}
        assert not statuses(other, [own], 1), "the resetting nexus's own task answered"

        late_data(c, nodata, r2t)
        c.ping()
        for x in (c, other):
            r = x.execute(ri.cdb_test_unit_ready())
            assert r.status == ri.CHECK_CONDITION and r.sense_triple == (0x6, 0x29, 0x03), r
            assert x.execute(ri.cdb_test_unit_ready()).status == ri.GOOD
        assert c.execute(ri.cdb_read10(50, 8), read=True, edtl=8 * BS).status == ri.GOOD
    finally:
        other.reset()


def test_with_tas_cleared_another_nexus_reset_ends_tasks_unanswered(conn):
    c = conn
    page = bytes([0x0a, 0x0a, 0x22, 0x10, 0x00, 0x00, 0, 0, 0xff, 0xff, 0, 0])
    r = c.execute(bytes([0x15, 0x10, 0, 0, 4 + len(page), 0]), data=bytes(4) + page)
    assert r.status == ri.GOOD, r
    sense = c.execute(ri.cdb_mode_sense10(64, page=0x0a, dbd=True), read=True, edtl=64)
    assert sense.status == ri.GOOD and sense.data[8:20] == page, sense.data.hex()
    other = Connection(c.target, timeout=30).connect()
    other.login()
    try:
        slow, nodata, held, r2t = tasks_of_every_kind(c)
        assert other.tmf(ri.TMF_LOGICAL_UNIT_RESET).response == FUNCTION_COMPLETE
        assert not statuses(c, [slow, nodata, held], 3), "an aborted task answered"
        late_data(c, nodata, r2t)
        c.ping()
        r = c.execute(ri.cdb_test_unit_ready())
        assert r.status == ri.CHECK_CONDITION and r.sense_triple == (0x6, 0x29, 0x03), r
    finally:
        other.reset()
