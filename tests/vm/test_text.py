# SPDX-License-Identifier: GPL-2.0
"""Text requests in the full feature phase (RFC 7143 11.10, 11.11), from a
raw-PDU initiator: SendTargets answers for this target and refuses a value
that is no iSCSI name; a request's keys may span PDUs, each answered empty
with a tag until the last; an answer longer than the initiator's
MaxRecvDataSegmentLength comes in pieces fetched with that tag; a request
that keeps the exchange open is answered and then ended by the initiator;
and a wrong tag, a request too long or F and C both set are rejected, the
connection still serving."""

import pytest

from vmlib import rawiscsi as ri
from vmlib.rawiscsi import Connection
from vmlib.target import Lun, Target, iqn

NAME = iqn("text")
MAX_RECV = 512          # the initiator's MaxRecvDataSegmentLength


@pytest.fixture
def conn(ietd):
    ietd(Target(NAME, [Lun(0, None, "nullio")]))
    c = Connection(NAME, timeout=20).connect()
    c.login({"MaxRecvDataSegmentLength": MAX_RECV})
    yield c
    c.reset()


def send(c, data, *, itt, ttt=ri.RESERVED_TAG, final=True, cont=False):
    """One Text Request PDU; its answer (a Text Response or a Reject)."""
    c.send(ri.text_request(data=data, itt=itt, cmdsn=c.take_cmdsn(), exp_statsn=c.exp_statsn,
                           ttt=ttt, final=final, cont=cont))
    return c.expect(lambda p: (p.opcode == ri.TEXT_RSP and p.itt == itt) or
                    (p.opcode == ri.REJECT and p.rejected_header is not None and
                     p.rejected_header.itt == itt), None, "Text Response or Reject")


def pairs(data):
    return [kv.split("=", 1) for kv in data.decode().split("\0") if kv]


def assert_serves(c):
    r = c.text({"SendTargets": "All"})
    assert r.flags & ri.F_BIT and ["TargetName", NAME] in pairs(r.data), r


def test_send_targets_answers_for_this_target_and_refuses_what_is_no_name(conn):
    c = conn
    for value in ("All", "", NAME, NAME.upper()):
        r = send(c, f"SendTargets={value}\0".encode(), itt=c.next_itt())
        got = pairs(r.data)
        assert r.opcode == ri.TEXT_RSP and r.flags & ri.F_BIT, r
        assert r.ttt == ri.RESERVED_TAG
        assert got[0] == ["TargetName", NAME], (value, got)
        assert got[1][0] == "TargetAddress" and got[1][1].endswith(":3260,1"), got
    # Another target's name: nothing, as for a target it may not see.
    r = send(c, b"SendTargets=iqn.2001-04.com.example:nobody\0", itt=c.next_itt())
    assert r.flags & ri.F_BIT and r.data == b"", r
    # libiscsi 1.20's iSCSISendTargets.Invalid: each gets an error.
    for data, want in ((b"SendTargets=Alle\0", ["SendTargets", "Reject"]),
                       (b"SendTargets=A\0", ["SendTargets", "Reject"]),
                       (b"sENDtARGETS=aLL\0", ["sENDtARGETS", "NotUnderstood"]),
                       (b"SendTargetsPlease=All\0", ["SendTargetsPlease", "NotUnderstood"])):
        r = send(c, data, itt=c.next_itt())
        assert pairs(r.data) == [want], (data, r)


def test_a_request_spanning_pdus_is_answered_once_it_is_whole(conn):
    c = conn
    itt = c.next_itt()
    r = send(c, b"SendTar", itt=itt, final=False, cont=True)
    assert r.opcode == ri.TEXT_RSP and r.data == b"" and not r.flags & ri.F_BIT, r
    assert r.ttt != ri.RESERVED_TAG
    r = send(c, b"gets=A", itt=itt, ttt=r.ttt, final=False, cont=True)
    assert r.opcode == ri.TEXT_RSP and r.data == b"" and r.ttt != ri.RESERVED_TAG, r
    r = send(c, b"ll\0", itt=itt, ttt=r.ttt)
    assert r.opcode == ri.TEXT_RSP and r.flags & ri.F_BIT, r
    assert pairs(r.data)[0] == ["TargetName", NAME]


def test_a_long_answer_comes_in_pieces_fetched_with_the_tag(conn):
    c = conn
    keys = [f"X-com.example.key{i:04d}" for i in range(150)]      # ~4.5 KiB back
    itt = c.next_itt()
    r = send(c, "".join(f"{k}=1\0" for k in keys).encode(), itt=itt)
    answer, pieces = b"", 0
    while True:
        assert r.opcode == ri.TEXT_RSP, r
        assert len(r.data) <= MAX_RECV
        answer += r.data
        pieces += 1
        if r.flags & ri.F_BIT:
            assert r.ttt == ri.RESERVED_TAG and not r.flags & ri.TEXT_CONTINUE
            break
        assert r.flags & ri.TEXT_CONTINUE and r.ttt != ri.RESERVED_TAG, r
        r = send(c, b"", itt=itt, ttt=r.ttt)
    assert pieces >= 8
    assert pairs(answer) == [[k, "NotUnderstood"] for k in keys]
    assert_serves(c)


def test_an_exchange_left_open_is_ended_by_the_initiator(conn):
    c = conn
    itt = c.next_itt()
    r = send(c, b"SendTargets=All\0", itt=itt, final=False)
    assert pairs(r.data)[0] == ["TargetName", NAME]
    assert not r.flags & ri.F_BIT and r.ttt != ri.RESERVED_TAG, r
    r = send(c, b"", itt=itt, ttt=r.ttt)
    assert r.opcode == ri.TEXT_RSP and r.flags & ri.F_BIT and r.data == b"", r
    assert r.ttt == ri.RESERVED_TAG


def test_wrong_tags_and_lengths_are_rejected_and_the_connection_serves(conn):
    c = conn
    # A tag the target never gave.
    r = send(c, b"SendTargets=All\0", itt=c.next_itt(), ttt=0x12345)
    assert r.opcode == ri.REJECT, r
    # A tag of another exchange.
    first = c.next_itt()
    r = send(c, b"SendTarg", itt=first, final=False, cont=True)
    r = send(c, b"ets=All\0", itt=c.next_itt(), ttt=r.ttt)
    assert r.opcode == ri.REJECT, r
    # F and C both set.
    r = send(c, b"SendTargets=All\0", itt=c.next_itt(), final=True, cont=True)
    assert r.opcode == ri.REJECT, r
    # Keys spanning PDUs past what one exchange may hold.
    itt = c.next_itt()
    r = send(c, b"X" * 4000, itt=itt, final=False, cont=True)
    r = send(c, b"X" * 4000, itt=itt, ttt=r.ttt, final=False, cont=True)
    r = send(c, b"X" * 4000, itt=itt, ttt=r.ttt, final=False, cont=True)
    assert r.opcode == ri.REJECT, r
    # Data with a fetch of an answer's rest.
    itt = c.next_itt()
    r = send(c, b"".join(b"X-k%03d=1\0" % i for i in range(100)), itt=itt)
    assert r.flags & ri.TEXT_CONTINUE, r
    r = send(c, b"SendTargets=All\0", itt=itt, ttt=r.ttt)
    assert r.opcode == ri.REJECT, r
    assert_serves(c)
