# SPDX-License-Identifier: GPL-2.0
"""A raw-PDU iSCSI initiator for hostile tests: every PDU built by hand.

Layouts are RFC 7143 section 11's (the structs of Linux's
include/scsi/iscsi_proto.h). Nothing here keeps an initiator honest: a test
may build any header, break any length, send bytes without ever reading,
and see what the target answers or when it closes the connection.

    c = Connection(target_iqn).connect()
    c.login()                                   # security stage, then operational
    r = c.execute(cdb_inquiry(96), read=True)   # ScsiResult: status, data, sense
    c.send(nop_out(itt=c.next_itt(), cmdsn=c.cmdsn, data=b"x" * 100))
    p = c.expect(lambda p: p.opcode == NOP_IN)
    c.wait_closed(5)                            # "eof" / "reset", or None

Only None digests are exercised by the suite, but CRC32C works too.
Python 3.11 standard library only.
"""

import itertools
import os
import select
import socket
import struct
import time
from dataclasses import dataclass, field

HDR_LEN = 48
RESERVED_TAG = 0xFFFFFFFF
DEFAULT_INITIATOR = "iqn.2024-01.com.example.iet:rawiscsi"

# ---------------------------------------------------------------- opcodes

NOP_OUT = 0x00
SCSI_CMD = 0x01
TMF_REQ = 0x02
LOGIN_REQ = 0x03
TEXT_REQ = 0x04
DATA_OUT = 0x05
LOGOUT_REQ = 0x06
SNACK = 0x10

NOP_IN = 0x20
SCSI_RSP = 0x21
TMF_RSP = 0x22
LOGIN_RSP = 0x23
TEXT_RSP = 0x24
DATA_IN = 0x25
LOGOUT_RSP = 0x26
R2T = 0x31
ASYNC_MSG = 0x32
REJECT = 0x3F

IMMEDIATE = 0x40                 # byte 0
OPCODE_MASK = 0x3F

# What an initiator may send in the full feature phase (RFC 7143 11.2.1.2).
FFP_INITIATOR_OPCODES = frozenset({NOP_OUT, SCSI_CMD, TMF_REQ, TEXT_REQ, DATA_OUT, LOGOUT_REQ})

OPCODE_NAMES = {
    NOP_OUT: "NOP-Out", SCSI_CMD: "SCSI Command", TMF_REQ: "Task Management Request",
    LOGIN_REQ: "Login Request", TEXT_REQ: "Text Request", DATA_OUT: "Data-Out",
    LOGOUT_REQ: "Logout Request", SNACK: "SNACK Request",
    NOP_IN: "NOP-In", SCSI_RSP: "SCSI Response", TMF_RSP: "Task Management Response",
    LOGIN_RSP: "Login Response", TEXT_RSP: "Text Response", DATA_IN: "Data-In",
    LOGOUT_RSP: "Logout Response", R2T: "R2T", ASYNC_MSG: "Asynchronous Message",
    REJECT: "Reject",
}

# byte 1 flags
F_BIT = 0x80                     # Final (SCSI Command, Data, Text), Transit (Login)
CMD_READ = 0x40
CMD_WRITE = 0x20
ATTR_UNTAGGED, ATTR_SIMPLE, ATTR_ORDERED, ATTR_HEAD_OF_QUEUE, ATTR_ACA = range(5)
TEXT_CONTINUE = 0x40
LOGIN_CONTINUE = 0x40
RSP_BIDI_OVERFLOW = 0x10
RSP_BIDI_UNDERFLOW = 0x08
RSP_OVERFLOW = 0x04              # also Data-In
RSP_UNDERFLOW = 0x02             # also Data-In
DATA_ACK = 0x40
DATA_STATUS = 0x01

# AHS types
AHS_EXTENDED_CDB = 1
AHS_BIDI_READ_LENGTH = 2

# Task management functions and responses (RFC 7143 11.5.1, 11.6.1)
TMF_ABORT_TASK = 1
TMF_ABORT_TASK_SET = 2
TMF_CLEAR_ACA = 3
TMF_CLEAR_TASK_SET = 4
TMF_LOGICAL_UNIT_RESET = 5
TMF_TARGET_WARM_RESET = 6
TMF_TARGET_COLD_RESET = 7
TMF_TASK_REASSIGN = 8

TMF_COMPLETE = 0
TMF_NO_TASK = 1
TMF_NO_LUN = 2
TMF_TASK_ALLEGIANT = 3
TMF_NO_FAILOVER = 4
TMF_NOT_SUPPORTED = 5
TMF_AUTH_FAILED = 6
TMF_REJECTED = 0xFF

# Reject reasons (RFC 7143 11.17.1)
REJECT_DATA_DIGEST = 0x02
REJECT_SNACK = 0x03
REJECT_PROTOCOL_ERROR = 0x04
REJECT_CMD_NOT_SUPPORTED = 0x05
REJECT_IMMEDIATE_CMD = 0x06
REJECT_TASK_IN_PROGRESS = 0x07
REJECT_INVALID_DATA_ACK = 0x08
REJECT_INVALID_PDU_FIELD = 0x09
REJECT_LONG_OP = 0x0A
REJECT_NEGOTIATION_RESET = 0x0B
REJECT_WAITING_FOR_LOGOUT = 0x0C

# Logout reasons and responses (RFC 7143 11.14.1, 11.15.1)
LOGOUT_CLOSE_SESSION = 0
LOGOUT_CLOSE_CONNECTION = 1
LOGOUT_RECOVERY = 2
LOGOUT_SUCCESS = 0
LOGOUT_CID_NOT_FOUND = 1
LOGOUT_RECOVERY_UNSUPPORTED = 2
LOGOUT_CLEANUP_FAILED = 3

# Login stages
STAGE_SECURITY = 0
STAGE_OPERATIONAL = 1
STAGE_FFP = 3

# SCSI status (SAM-5)
GOOD = 0x00
CHECK_CONDITION = 0x02
UNIT_ATTENTION = 0x06             # the sense key
BUSY = 0x08
RESERVATION_CONFLICT = 0x18
TASK_SET_FULL = 0x28
TASK_ABORTED = 0x40

# Keys the target only declares: no answer is due (RFC 7143 section 13).
TARGET_DECLARATIONS = frozenset({"TargetPortalGroupTag", "TargetAlias", "TargetAddress",
                                 "MaxRecvDataSegmentLength"})

# What login() proposes unless told otherwise: the whole set, so that the
# target has nothing left to offer and the first operational request that
# asks for the full feature phase is the final one.
DEFAULT_KEYS = {
    "HeaderDigest": "None",
    "DataDigest": "None",
    "MaxRecvDataSegmentLength": "262144",
    "MaxConnections": "1",
    "InitialR2T": "Yes",
    "ImmediateData": "Yes",
    "MaxBurstLength": "262144",
    "FirstBurstLength": "65536",
    "DefaultTime2Wait": "2",
    "DefaultTime2Retain": "0",
    "MaxOutstandingR2T": "1",
    "DataPDUInOrder": "Yes",
    "DataSequenceInOrder": "Yes",
    "ErrorRecoveryLevel": "0",
}


# ---------------------------------------------------------------- small pieces

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    """CRC32C (Castagnoli) as iSCSI digests use it (RFC 7143 13.1)."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def digest(data):
    """The 4 digest bytes as they go on the wire (little-endian CRC)."""
    return struct.pack("<I", crc32c(data))


def pad_len(n):
    return (4 - n % 4) % 4


def sna_gt(a, b):
    """Serial number arithmetic, 32 bits (RFC 1982)."""
    return a != b and ((a < b and b - a > 0x80000000) or (a > b and a - b < 0x80000000))


def sna_lte(a, b):
    return a == b or sna_gt(b, a)


def lun_bytes(lun):
    """The 8-byte LUN field: Linux's int_to_scsilun() of an int, or bytes as given."""
    if isinstance(lun, (bytes, bytearray)):
        assert len(lun) == 8
        return bytes(lun)
    out = bytearray(8)
    for i in range(0, 8, 2):
        out[i] = (lun >> 8) & 0xFF
        out[i + 1] = lun & 0xFF
        lun >>= 16
    return bytes(out)


def text_encode(keys):
    """key=value pairs, each NUL-terminated; keys a dict or a list of pairs."""
    items = keys.items() if isinstance(keys, dict) else keys
    return b"".join(f"{k}={v}".encode() + b"\0" for k, v in items)


def text_decode(data):
    """[(key, value)] of a text data segment."""
    pairs = []
    for item in bytes(data).split(b"\0"):
        if not item:
            continue
        k, _, v = item.decode(errors="replace").partition("=")
        pairs.append((k, v))
    return pairs


def random_isid():
    """A 'random' format ISID (T=10b, RFC 7143 11.12.5)."""
    return b"\x80" + os.urandom(5)


# ---------------------------------------------------------------- PDUs

class Pdu:
    """One PDU: the 48-byte BHS, the AHS and the data segment.

    Outgoing PDUs are built with the helpers below and may be changed at
    will (set8/set16/set24/set32 or the bhs bytearray) before encode();
    incoming ones are parsed by Connection. The accessors name a field by
    its meaning in the PDU types that have it at that offset.
    """

    def __init__(self, bhs, ahs=b"", data=b""):
        assert len(bhs) == HDR_LEN, f"a BHS is {HDR_LEN} bytes, not {len(bhs)}"
        self.bhs = bytearray(bhs)
        self.ahs = bytes(ahs)
        self.data = bytes(data)

    # -- raw access
    def u8(self, off):
        return self.bhs[off]

    def u16(self, off):
        return struct.unpack_from(">H", self.bhs, off)[0]

    def u24(self, off):
        return int.from_bytes(self.bhs[off:off + 3], "big")

    def u32(self, off):
        return struct.unpack_from(">I", self.bhs, off)[0]

    def set8(self, off, v):
        self.bhs[off] = v & 0xFF
        return self

    def set16(self, off, v):
        struct.pack_into(">H", self.bhs, off, v & 0xFFFF)
        return self

    def set24(self, off, v):
        self.bhs[off:off + 3] = (v & 0xFFFFFF).to_bytes(3, "big")
        return self

    def set32(self, off, v):
        struct.pack_into(">I", self.bhs, off, v & 0xFFFFFFFF)
        return self

    # -- common fields
    @property
    def opcode(self):
        return self.bhs[0] & OPCODE_MASK

    @property
    def immediate(self):
        return bool(self.bhs[0] & IMMEDIATE)

    @property
    def flags(self):
        return self.bhs[1]

    @property
    def final(self):
        return bool(self.bhs[1] & F_BIT)

    @property
    def ahs_words(self):
        return self.bhs[4]

    @property
    def dlength(self):
        return self.u24(5)

    @property
    def lun(self):
        return bytes(self.bhs[8:16])

    @property
    def itt(self):
        return self.u32(16)

    @property
    def ttt(self):
        """Target Transfer Tag: NOP, R2T, Data, Text (also TMF's RTT)."""
        return self.u32(20)

    @property
    def name(self):
        return OPCODE_NAMES.get(self.opcode, f"opcode {self.opcode:#04x}")

    # -- the target's numbering, at the same place in all of its PDUs
    @property
    def statsn(self):
        return self.u32(24)

    @property
    def exp_cmdsn(self):
        return self.u32(28)

    @property
    def max_cmdsn(self):
        return self.u32(32)

    # -- the initiator's numbering
    @property
    def cmdsn(self):
        return self.u32(24)

    @property
    def exp_statsn(self):
        return self.u32(28)

    @property
    def edtl(self):
        return self.u32(20)

    @property
    def cdb(self):
        return bytes(self.bhs[32:48])

    # -- responses
    @property
    def response(self):
        """SCSI Response: iSCSI response; TMF and Logout Response: response."""
        return self.bhs[2]

    @property
    def status(self):
        """SCSI status of a SCSI Response, or of a Data-In with the S bit."""
        return self.bhs[3]

    @property
    def reason(self):
        """Reject reason; Logout Request reason code."""
        return self.bhs[2] if self.opcode == REJECT else self.bhs[1] & 0x7F

    @property
    def has_status(self):
        return self.opcode == SCSI_RSP or (self.opcode == DATA_IN and self.flags & DATA_STATUS)

    @property
    def datasn(self):
        """DataSN of Data-In/Data-Out; R2TSN of R2T; ExpDataSN of SCSI Response."""
        return self.u32(36)

    @property
    def offset(self):
        """Buffer Offset of Data-In, Data-Out and R2T."""
        return self.u32(40)

    @property
    def residual(self):
        """Residual Count of SCSI Response and Data-In."""
        return self.u32(44)

    @property
    def desired_length(self):
        """Desired Data Transfer Length of an R2T."""
        return self.u32(44)

    @property
    def overflow(self):
        return bool(self.flags & RSP_OVERFLOW)

    @property
    def underflow(self):
        return bool(self.flags & RSP_UNDERFLOW)

    @property
    def sense(self):
        """Sense data of a SCSI Response (after its 2-byte SenseLength)."""
        if self.opcode != SCSI_RSP or len(self.data) < 2:
            return b""
        n = struct.unpack_from(">H", self.data, 0)[0]
        return self.data[2:2 + n]

    @property
    def sense_key(self):
        return sense_triple(self.sense)[0]

    @property
    def rejected_header(self):
        """The header a Reject carries back."""
        if self.opcode != REJECT or len(self.data) < HDR_LEN:
            return None
        return Pdu(self.data[:HDR_LEN])

    @property
    def text(self):
        return text_decode(self.data)

    # -- login
    @property
    def transit(self):
        return bool(self.bhs[1] & F_BIT)

    @property
    def cont(self):
        return bool(self.bhs[1] & LOGIN_CONTINUE)

    @property
    def csg(self):
        return (self.bhs[1] >> 2) & 3

    @property
    def nsg(self):
        return self.bhs[1] & 3

    @property
    def isid(self):
        return bytes(self.bhs[8:14])

    @property
    def tsih(self):
        return self.u16(14)

    @property
    def login_status(self):
        return self.bhs[36], self.bhs[37]

    # -- encoding
    def encode(self, hdigest=False, ddigest=False, fix_lengths=True):
        """The bytes on the wire. fix_lengths: set TotalAHSLength and
        DataSegmentLength from the AHS and data (else send them as set)."""
        bhs = bytearray(self.bhs)
        if fix_lengths:
            assert len(self.ahs) % 4 == 0, "AHS is a whole number of words"
            bhs[4] = len(self.ahs) // 4
            bhs[5:8] = len(self.data).to_bytes(3, "big")
        out = bytearray(bhs) + self.ahs
        if hdigest:
            out += digest(out)
        if self.data:
            padded = self.data + bytes(pad_len(len(self.data)))
            out += padded
            if ddigest:
                out += digest(padded)
        return bytes(out)

    def __bytes__(self):
        return self.encode()

    def __repr__(self):
        extra = ""
        if self.opcode == SCSI_RSP:
            extra = f" response={self.response} status={self.status:#x} residual={self.residual}"
        elif self.opcode == REJECT:
            rh = self.rejected_header
            extra = f" reason={self.reason:#x}" + (f" of {rh.name} itt={rh.itt:#x}" if rh else "")
        elif self.opcode in (TMF_RSP, LOGOUT_RSP):
            extra = f" response={self.response}"
        return (f"<{self.name} flags={self.flags:#04x} itt={self.itt:#x} dlen={self.dlength}"
                f"{extra}>")


def sense_triple(sense):
    """(key, asc, ascq) of fixed- or descriptor-format sense data."""
    if len(sense) < 3:
        return None, None, None
    if sense[0] & 0x7F in (0x72, 0x73):
        return sense[1] & 0xF, sense[2] if len(sense) > 2 else None, \
            sense[3] if len(sense) > 3 else None
    return sense[2] & 0xF, sense[12] if len(sense) > 12 else None, \
        sense[13] if len(sense) > 13 else None


def bhs(opcode, *, immediate=False, flags=0, b2=0, b3=0, lun=0, itt=0, tail=b""):
    """A BHS: opcode, flags, bytes 2-3, LUN (bytes 8-15), ITT (16-19) and
    bytes 20-47 as given (tail, zero-padded). Lengths are set at encode()."""
    assert len(tail) <= 28
    head = struct.pack(">BBBB4x8sI", (opcode & OPCODE_MASK) | (IMMEDIATE if immediate else 0),
                       flags & 0xFF, b2 & 0xFF, b3 & 0xFF, lun_bytes(lun), itt & 0xFFFFFFFF)
    return head + bytes(tail) + bytes(28 - len(tail))


def raw_pdu(opcode, *, immediate=False, flags=F_BIT, itt=0, cmdsn=0, exp_statsn=0, lun=0,
            ttt=RESERVED_TAG, data=b"", ahs=b""):
    """Any opcode with the layout most initiator PDUs share: TTT or EDTL at
    20, CmdSN at 24, ExpStatSN at 28."""
    tail = struct.pack(">III", ttt, cmdsn, exp_statsn)
    return Pdu(bhs(opcode, immediate=immediate, flags=flags, lun=lun, itt=itt, tail=tail),
               ahs, data)


def extended_cdb_ahs(cdb):
    """The Extended CDB AHS for the bytes of a CDB beyond the sixteenth."""
    rest = bytes(cdb[16:])
    body = struct.pack(">HBB", len(rest) + 1, AHS_EXTENDED_CDB, 0) + rest
    return body + bytes(pad_len(len(body)))


def scsi_command(cdb, *, itt, cmdsn, exp_statsn=0, edtl=0, lun=0, read=False, write=False,
                 final=True, attr=ATTR_SIMPLE, immediate=False, data=b"", ahs=b""):
    """SCSI Command (RFC 7143 11.3). A CDB longer than 16 bytes gets its
    Extended CDB AHS (in front of any other AHS given)."""
    cdb = bytes(cdb)
    if len(cdb) > 16:
        ahs = extended_cdb_ahs(cdb) + bytes(ahs)
    flags = (F_BIT if final else 0) | (CMD_READ if read else 0) | (CMD_WRITE if write else 0) | attr
    tail = struct.pack(">III16s", edtl, cmdsn, exp_statsn, cdb[:16].ljust(16, b"\0"))
    return Pdu(bhs(SCSI_CMD, immediate=immediate, flags=flags, lun=lun, itt=itt, tail=tail),
               ahs, data)


def data_out(*, itt, ttt=RESERVED_TAG, offset=0, data=b"", datasn=0, exp_statsn=0, lun=0,
             final=True):
    """SCSI Data-Out (RFC 7143 11.7)."""
    tail = struct.pack(">IIIIIII", ttt, 0, exp_statsn, 0, datasn, offset, 0)
    return Pdu(bhs(DATA_OUT, flags=F_BIT if final else 0, lun=lun, itt=itt, tail=tail), b"", data)


def nop_out(*, itt, cmdsn, exp_statsn=0, ttt=RESERVED_TAG, data=b"", lun=0, immediate=True):
    """NOP-Out (RFC 7143 11.18): a ping with ITT set, or the answer to the
    target's ping with ITT 0xffffffff and its TTT."""
    tail = struct.pack(">III", ttt, cmdsn, exp_statsn)
    return Pdu(bhs(NOP_OUT, immediate=immediate, flags=F_BIT, lun=lun, itt=itt, tail=tail),
               b"", data)


def tmf_request(function, *, itt, cmdsn, exp_statsn=0, rtt=RESERVED_TAG, refcmdsn=0,
                exp_datasn=0, lun=0, immediate=True):
    """Task Management Function Request (RFC 7143 11.5)."""
    tail = struct.pack(">IIIII", rtt, cmdsn, exp_statsn, refcmdsn, exp_datasn)
    return Pdu(bhs(TMF_REQ, immediate=immediate, flags=F_BIT | (function & 0x7F), lun=lun,
                   itt=itt, tail=tail))


def text_request(keys=None, *, itt, cmdsn, exp_statsn=0, ttt=RESERVED_TAG, final=True,
                 cont=False, immediate=False, data=None, lun=0):
    """Text Request (RFC 7143 11.10): keys (dict/pairs) or raw data."""
    if data is None:
        data = text_encode(keys or {})
    flags = (F_BIT if final else 0) | (TEXT_CONTINUE if cont else 0)
    tail = struct.pack(">III", ttt, cmdsn, exp_statsn)
    return Pdu(bhs(TEXT_REQ, immediate=immediate, flags=flags, lun=lun, itt=itt, tail=tail),
               b"", data)


def logout_request(*, itt, cmdsn, exp_statsn=0, reason=LOGOUT_CLOSE_SESSION, cid=0,
                   immediate=True):
    """Logout Request (RFC 7143 11.14)."""
    tail = struct.pack(">H2xII", cid, cmdsn, exp_statsn)
    return Pdu(bhs(LOGOUT_REQ, immediate=immediate, flags=F_BIT | (reason & 0x7F), itt=itt,
                   tail=tail))


def snack_request(*, itt, snack_type=0, ttt=RESERVED_TAG, exp_statsn=0, begrun=0, runlength=0,
                  lun=0):
    """SNACK Request (RFC 7143 11.16)."""
    tail = struct.pack(">I4xI8xII", ttt, exp_statsn, begrun, runlength)
    return Pdu(bhs(SNACK, flags=F_BIT | (snack_type & 0x0F), lun=lun, itt=itt, tail=tail))


def login_request(*, isid, tsih=0, itt=0, cid=0, cmdsn=0, exp_statsn=0, csg=STAGE_SECURITY,
                  nsg=STAGE_OPERATIONAL, transit=True, cont=False, keys=None, data=None,
                  vmax=0, vmin=0):
    """Login Request (RFC 7143 11.12); always immediate."""
    if data is None:
        data = text_encode(keys or {})
    flags = (F_BIT if transit else 0) | (LOGIN_CONTINUE if cont else 0) | (csg & 3) << 2 | \
        (nsg & 3 if transit else 0)
    b = bytearray(bhs(LOGIN_REQ, immediate=True, flags=flags, b2=vmax, b3=vmin, itt=itt,
                      tail=struct.pack(">H2xII", cid, cmdsn, exp_statsn)))
    b[8:14] = bytes(isid)
    struct.pack_into(">H", b, 14, tsih)
    return Pdu(b, b"", data)


# ---------------------------------------------------------------- CDBs

def cdb_test_unit_ready():
    return bytes(6)


def cdb_inquiry(alloc, evpd=False, page=0):
    return struct.pack(">BBBHB", 0x12, 1 if evpd else 0, page, alloc & 0xFFFF, 0)


def cdb_report_luns(alloc, select_report=0):
    return struct.pack(">BxB3xIxx", 0xA0, select_report, alloc)


def cdb_read_capacity10():
    return bytes([0x25]) + bytes(9)


def cdb_read_capacity16(alloc):
    """SERVICE ACTION IN(16) / READ CAPACITY(16)."""
    return struct.pack(">BBQIxx", 0x9E, 0x10, 0, alloc)


def cdb_mode_sense10(alloc, page=0x3F, subpage=0, dbd=False, pc=0):
    return struct.pack(">BBBB3xHx", 0x5A, 0x08 if dbd else 0, (pc << 6) | page, subpage,
                       alloc & 0xFFFF)


def cdb_request_sense(alloc=18):
    return struct.pack(">BxxxBx", 0x03, alloc)


def cdb_read10(lba, blocks):
    return struct.pack(">BBIxHx", 0x28, 0, lba, blocks)


def cdb_write10(lba, blocks, fua=False):
    return struct.pack(">BBIxHx", 0x2A, 0x08 if fua else 0, lba, blocks)


def cdb_synchronize_cache10(lba=0, blocks=0):
    return struct.pack(">BBIxHx", 0x35, 0, lba, blocks)


# ---------------------------------------------------------------- errors

class TargetClosed(ConnectionError):
    """The target closed (how="eof") or reset (how="reset") the connection."""

    def __init__(self, how, pending=()):
        self.how = how
        self.pending = list(pending)
        super().__init__(f"the target closed the connection ({how})")


class LoginFailed(AssertionError):
    def __init__(self, status, keys, why=""):
        self.status = status
        self.keys = keys
        super().__init__(f"login refused: status class {status[0]:#x} detail {status[1]:#x}"
                         f" {why} {keys}")


class Rejected(AssertionError):
    def __init__(self, reject):
        self.reject = reject
        super().__init__(f"the target rejected the PDU: {reject!r}")


@dataclass
class ScsiResult:
    """What a SCSI command came back with."""
    itt: int
    status: int = None
    response: int = None
    data: bytes = b""
    sense: bytes = b""
    flags: int = 0
    residual: int = 0
    pdus: list = field(default_factory=list)

    @property
    def underflow(self):
        return bool(self.flags & RSP_UNDERFLOW)

    @property
    def overflow(self):
        return bool(self.flags & RSP_OVERFLOW)

    @property
    def sense_triple(self):
        return sense_triple(self.sense)


@dataclass
class Task:
    """A SCSI command on its way: what is needed to answer its R2Ts."""
    itt: int
    lun: object
    cmdsn: int
    write_data: bytes = b""
    edtl: int = 0
    sent: int = 0                 # bytes of write data sent so far
    result: ScsiResult = None


# ---------------------------------------------------------------- the connection

class Connection:
    """One TCP connection to the target, one session (ErrorRecoveryLevel 0).

    Keeps the numbering an initiator needs: cmdsn is the next CmdSN to use
    (take_cmdsn() for a non-immediate PDU), exp_statsn what the target's
    responses said, exp_cmdsn / max_cmdsn its last window. PDUs read while
    waiting for something else are kept in `unclaimed` for later expect()s.
    The target's NOP-In pings are answered while reading (auto_ping).
    """

    def __init__(self, target, host="127.0.0.1", port=3260, initiator=DEFAULT_INITIATOR,
                 isid=None, cid=0, timeout=10.0):
        self.target = target
        self.host = host
        self.port = port
        self.initiator = initiator
        self.isid = bytes(isid) if isid is not None else random_isid()
        self.cid = cid
        self.timeout = timeout
        self.sock = None
        self.rbuf = bytearray()
        self.unclaimed = []
        self.closed_how = None
        self.itts = itertools.count(1)
        self.cmdsn = 1
        self.exp_statsn = 0
        self.exp_cmdsn = None
        self.max_cmdsn = None
        self.tsih = 0
        self.params = {}            # negotiated: our proposals and the target's answers
        self.target_keys = {}       # every key the target sent during login
        self.max_send_dsl = 8192    # the target's MaxRecvDataSegmentLength
        self.hdigest = False
        self.ddigest = False
        self.auto_ping = True
        self.pings_answered = 0
        self.received = 0           # PDUs parsed

    # -- socket
    def connect(self):
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    def fileno(self):
        return self.sock.fileno()

    def close(self):
        """An orderly close (FIN), without reading what is left."""
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def reset(self):
        """Close with a RST (SO_LINGER 0)."""
        if self.sock is not None:
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, what, timeout=None):
        """Send a Pdu, bytes, or a list of them, without reading anything.
        Raises TargetClosed if the target closed or reset the connection,
        TimeoutError if it stopped reading for `timeout` seconds."""
        if isinstance(what, Pdu):
            raw = self.encode(what)
        elif isinstance(what, (list, tuple)):
            raw = b"".join(self.encode(p) if isinstance(p, Pdu) else bytes(p) for p in what)
        else:
            raw = bytes(what)
        if self.sock is None:
            raise TargetClosed(self.closed_how or "closed by us")
        self.sock.settimeout(self.timeout if timeout is None else timeout)
        try:
            self.sock.sendall(raw)
        except socket.timeout:
            raise TimeoutError(f"the target did not take {len(raw)} bytes for "
                               f"{self.sock.gettimeout()} s: it stopped reading") from None
        except (BrokenPipeError, ConnectionResetError) as e:
            self.closed_how = "reset" if isinstance(e, ConnectionResetError) else "eof"
            raise TargetClosed(self.closed_how, self.unclaimed) from None

    def encode(self, pdu, fix_lengths=True):
        return pdu.encode(self.hdigest, self.ddigest, fix_lengths)

    # -- receiving
    def _fill(self, timeout):
        """Read what the socket has, waiting up to timeout; False on timeout."""
        if self.closed_how:
            raise TargetClosed(self.closed_how, self.unclaimed)
        if self.sock is None:
            raise TargetClosed("closed by us")
        r, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not r:
            return False
        try:
            self.sock.setblocking(False)
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return True
        except ConnectionResetError:
            self.closed_how = "reset"
            raise TargetClosed("reset", self.unclaimed) from None
        finally:
            if self.sock is not None:
                self.sock.settimeout(self.timeout)
        if not chunk:
            self.closed_how = "eof"
            raise TargetClosed("eof", self.unclaimed)
        self.rbuf += chunk
        return True

    def _take_pdu(self):
        """One complete PDU off the receive buffer, or None."""
        b = self.rbuf
        if len(b) < HDR_LEN:
            return None
        ahs_len = b[4] * 4
        dlen = int.from_bytes(b[5:8], "big")
        hd = 4 if self.hdigest else 0
        dd = 4 if self.ddigest and dlen else 0
        total = HDR_LEN + ahs_len + hd + dlen + pad_len(dlen) + dd
        if len(b) < total:
            return None
        head = bytes(b[:HDR_LEN + ahs_len])
        if hd and bytes(b[HDR_LEN + ahs_len:HDR_LEN + ahs_len + 4]) != digest(head):
            raise AssertionError(f"header digest error in a PDU from the target: {head.hex()}")
        start = HDR_LEN + ahs_len + hd
        data = bytes(b[start:start + dlen])
        if dd:
            padded = bytes(b[start:start + dlen + pad_len(dlen)])
            if bytes(b[total - 4:total]) != digest(padded):
                raise AssertionError("data digest error in a PDU from the target")
        del b[:total]
        return Pdu(head[:HDR_LEN], head[HDR_LEN:], data)

    def _note(self, p):
        """Follow the target's numbering; answer its pings."""
        self.received += 1
        op = p.opcode
        if op in (NOP_IN, SCSI_RSP, TMF_RSP, LOGIN_RSP, TEXT_RSP, DATA_IN, LOGOUT_RSP, R2T,
                  ASYNC_MSG, REJECT):
            exp, mx = p.exp_cmdsn, p.max_cmdsn
            # A MaxCmdSN below ExpCmdSN - 1 carries no window (RFC 7143 4.2.2.1).
            if sna_lte((exp - 1) & 0xFFFFFFFF, mx):
                if self.exp_cmdsn is None or sna_gt(exp, self.exp_cmdsn):
                    self.exp_cmdsn = exp
                if self.max_cmdsn is None or sna_gt(mx, self.max_cmdsn):
                    self.max_cmdsn = mx
        advances = op in (SCSI_RSP, TMF_RSP, LOGIN_RSP, TEXT_RSP, LOGOUT_RSP, REJECT, ASYNC_MSG) \
            or (op == DATA_IN and p.flags & DATA_STATUS) \
            or (op == NOP_IN and p.itt != RESERVED_TAG)
        if advances:
            self.exp_statsn = (p.statsn + 1) & 0xFFFFFFFF
        if op == NOP_IN and p.itt == RESERVED_TAG and p.ttt != RESERVED_TAG and self.auto_ping:
            # The target's ping: answer at once, immediate, with its TTT.
            try:
                self.send(nop_out(itt=RESERVED_TAG, ttt=p.ttt, cmdsn=self.cmdsn,
                                  exp_statsn=self.exp_statsn, lun=p.lun))
                self.pings_answered += 1
            except (TargetClosed, TimeoutError):
                pass
            return False
        return True

    def recv(self, timeout=None):
        """The next PDU from the target (not one kept in unclaimed).
        Raises TimeoutError, or TargetClosed once the connection ended."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            p = self._take_pdu()
            if p is not None:
                if self._note(p):
                    return p
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no PDU from the target within {timeout or self.timeout} s")
            self._fill(left)

    def poll(self):
        """Whatever complete PDUs are there now, without waiting (they also
        go to unclaimed). Raises TargetClosed once the connection ended."""
        got = []
        closed = None
        try:
            while self._fill(0):
                pass
        except TargetClosed as e:
            closed = e          # what came before the end still counts
        while (p := self._take_pdu()) is not None:
            if self._note(p):
                got.append(p)
        self.unclaimed += got
        if closed:
            closed.pending = list(self.unclaimed)
            raise closed
        return got

    def drain(self):
        """Read and forget what has arrived; False once the connection is gone."""
        try:
            self.poll()
        except TargetClosed:
            return False
        finally:
            self.unclaimed.clear()
        return True

    def expect(self, match, timeout=None, what=None):
        """The first PDU (kept or new) for which match(pdu) is true; others
        are kept. TimeoutError names `what` and what came instead."""
        for i, p in enumerate(self.unclaimed):
            if match(p):
                return self.unclaimed.pop(i)
        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what or 'matching PDU'} from the target within {t} s; "
                                   f"received meanwhile: {self.unclaimed[-8:]}")
            try:
                p = self.recv(left)
            except TimeoutError:
                continue
            if match(p):
                return p
            self.unclaimed.append(p)

    def wait_closed(self, timeout):
        """Read (keeping PDUs in unclaimed) until the target closes the
        connection: "eof" or "reset", or None if it is still open."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    self.unclaimed.append(self.recv(left))
                except TimeoutError:
                    return None
        except TargetClosed as e:
            return e.how

    def answer_or_drop(self, match, timeout=None, what=None):
        """The PDU match() wants, or None if the target closed the connection first."""
        try:
            return self.expect(match, timeout, what)
        except TargetClosed:
            return None

    # -- numbering
    def next_itt(self):
        itt = next(self.itts)
        if itt == RESERVED_TAG:
            itt = next(self.itts)
        return itt & 0xFFFFFFFF

    def take_cmdsn(self):
        """The CmdSN of a non-immediate PDU, which advances it."""
        sn = self.cmdsn
        self.cmdsn = (self.cmdsn + 1) & 0xFFFFFFFF
        return sn

    def window(self):
        """How many non-immediate commands the target takes now."""
        if self.max_cmdsn is None or not sna_lte(self.cmdsn, self.max_cmdsn):
            return 0
        return (self.max_cmdsn - self.cmdsn + 1) & 0xFFFFFFFF

    # -- login
    def login(self, keys=None, *, security=True, abandon=None, session_type="Normal",
              cmdsn=None, timeout=None, max_rounds=8, clear_ua=True):
        """Log in: security stage with AuthMethod=None, then the operational
        stage (or straight to it when security=False), answering whatever
        the target offers. keys: operational keys to propose instead of
        DEFAULT_KEYS' values (a value None leaves a key out).

        abandon="before_final_response": send the operational request that
        asks for the full feature phase and return without reading its
        answer (with the default keys the target has nothing left to offer,
        so that request is the final one); the caller then closes.

        clear_ua: as a real initiator does, take the unit attentions every
        logical unit gives a new I_T nexus (POWER ON, I_T NEXUS LOSS) before
        returning (clear_unit_attentions()); False leaves them for the test.

        Returns the final Login Response. Raises LoginFailed on a refusal.
        """
        t = self.timeout if timeout is None else timeout
        if cmdsn is not None:
            self.cmdsn = cmdsn
        itt = self.next_itt()
        ident = {"InitiatorName": self.initiator, "SessionType": session_type}
        if session_type == "Normal":
            ident["TargetName"] = self.target
        proposals = dict(DEFAULT_KEYS)
        for k, v in (keys or {}).items():
            if v is None:
                proposals.pop(k, None)
            else:
                proposals[k] = str(v)
        if session_type != "Normal":
            proposals = {k: v for k, v in proposals.items()
                         if k in ("HeaderDigest", "DataDigest", "MaxRecvDataSegmentLength")}
        sent = set()

        def exchange(pairs, csg, nsg, transit=True):
            p = login_request(isid=self.isid, tsih=self.tsih, itt=itt, cid=self.cid,
                              cmdsn=self.cmdsn, exp_statsn=self.exp_statsn, csg=csg, nsg=nsg,
                              transit=transit, keys=pairs)
            sent.update(k for k, _ in (pairs.items() if isinstance(pairs, dict) else pairs))
            self.send(p.encode())

        def answer():
            r = self.expect(lambda p: p.opcode == LOGIN_RSP, t, "Login Response")
            pairs = r.text
            for k, v in pairs:
                self.target_keys[k] = v
            if r.login_status != (0, 0):
                raise LoginFailed(r.login_status, pairs)
            self.tsih = r.tsih or self.tsih
            return r, pairs

        if security:
            exchange({**ident, "AuthMethod": "None"}, STAGE_SECURITY, STAGE_OPERATIONAL)
            r, pairs = answer()
            if dict(pairs).get("AuthMethod", "None") != "None":
                raise LoginFailed(r.login_status, pairs, "(the target wants authentication)")
            rounds = 0
            while not (r.transit and r.nsg == STAGE_OPERATIONAL):
                rounds += 1
                if rounds > max_rounds:
                    raise AssertionError(f"the security stage does not end: {pairs}")
                exchange({}, STAGE_SECURITY, STAGE_OPERATIONAL)
                r, pairs = answer()
            first = proposals
        else:
            first = {**ident, **proposals}

        out = first
        for _ in range(max_rounds):
            exchange(out, STAGE_OPERATIONAL, STAGE_FFP)
            if abandon == "before_final_response":
                return None
            r, pairs = answer()
            for k, v in pairs:
                # The target's MaxRecvDataSegmentLength bounds what we send
                # (max_send_dsl); params keeps our own declaration.
                if k != "MaxRecvDataSegmentLength" and (k in proposals or k in TARGET_DECLARATIONS):
                    self.params[k] = v
            if "MaxRecvDataSegmentLength" in self.target_keys:
                self.max_send_dsl = int(self.target_keys["MaxRecvDataSegmentLength"])
            # The target's own offers: accept its value (valid for every
            # kind of key it offers: the result function gives it back).
            offers = [(k, v) for k, v in pairs
                      if k not in sent and k not in TARGET_DECLARATIONS and k not in ident]
            for k, v in offers:
                self.params[k] = v
            if r.transit and r.nsg == STAGE_FFP and not offers:
                break
            out = offers
        else:
            raise AssertionError(f"the operational stage does not end: {self.target_keys}")
        for k, v in proposals.items():
            self.params.setdefault(k, v)
        self.exp_cmdsn, self.max_cmdsn = r.exp_cmdsn, r.max_cmdsn
        self.cmdsn = r.exp_cmdsn
        self.exp_statsn = (r.statsn + 1) & 0xFFFFFFFF
        self.hdigest = self.params.get("HeaderDigest") == "CRC32C"
        self.ddigest = self.params.get("DataDigest") == "CRC32C"
        if clear_ua and session_type == "Normal":
            self.clear_unit_attentions(timeout=t)
        return r

    def clear_unit_attentions(self, timeout=None):
        """REPORT LUNS, then TEST UNIT READY on each LUN until it reports
        no unit attention; returns {lun: [(asc, ascq), ...]} of those taken."""
        r = self.execute(cdb_report_luns(4096), lun=0, read=True, edtl=4096, timeout=timeout)
        assert r.status == 0, f"REPORT LUNS: status {r.status:#x}"
        count = struct.unpack(">I", r.data[:4])[0] // 8
        luns = [struct.unpack(">H", r.data[8 + 8 * i:10 + 8 * i])[0] & 0x3FFF
                for i in range(count)]
        taken = {}
        for lun in luns:
            for _ in range(16):
                t = self.execute(cdb_test_unit_ready(), lun=lun, timeout=timeout)
                key, asc, ascq = t.sense_triple if t.sense else (0, 0, 0)
                if t.status != CHECK_CONDITION or key != UNIT_ATTENTION:
                    break
                taken.setdefault(lun, []).append((asc, ascq))
        return taken

    def param(self, key):
        """A negotiated value: int for numbers, bool for Yes/No."""
        v = self.params[key]
        if v in ("Yes", "No"):
            return v == "Yes"
        try:
            return int(v, 0)
        except ValueError:
            return v

    # -- SCSI
    def submit(self, cdb, *, lun=0, read=False, write=None, edtl=None, data=b"",
               immediate=False, attr=ATTR_SIMPLE, itt=None, cmdsn=None, ahs=b""):
        """Send a SCSI Command; data is what to write (immediate data and
        unsolicited Data-Out as negotiated, the rest when R2Ts ask)."""
        data = bytes(data)
        write = bool(data) if write is None else write
        if edtl is None:
            edtl = len(data)
        itt = self.next_itt() if itt is None else itt
        if cmdsn is None:
            cmdsn = self.cmdsn if immediate else self.take_cmdsn()
        task = Task(itt, lun, cmdsn, data, edtl)
        first_burst = self.param("FirstBurstLength") if "FirstBurstLength" in self.params else 65536
        unsol_limit = 0 if self.param_or("InitialR2T", True) else min(first_burst, edtl)
        imm = b""
        if write and data and self.param_or("ImmediateData", True):
            imm = data[:min(first_burst, self.max_send_dsl, edtl)]
        unsol_end = max(len(imm), min(unsol_limit, len(data)))
        final = unsol_end <= len(imm)
        pdus = [scsi_command(cdb, itt=itt, cmdsn=cmdsn, exp_statsn=self.exp_statsn, edtl=edtl,
                             lun=lun, read=read, write=write, final=final, attr=attr,
                             immediate=immediate, data=imm, ahs=ahs)]
        off, datasn = len(imm), 0
        while off < unsol_end:
            n = min(self.max_send_dsl, unsol_end - off)
            pdus.append(data_out(itt=itt, offset=off, data=data[off:off + n], datasn=datasn,
                                 exp_statsn=self.exp_statsn, lun=lun,
                                 final=off + n == unsol_end))
            off += n
            datasn += 1
        task.sent = off
        self.send(pdus)
        return task

    def param_or(self, key, default):
        return self.param(key) if key in self.params else default

    def _answer_r2t(self, task, r2t):
        """Data-Out for what an R2T asks, in PDUs the target's
        MaxRecvDataSegmentLength allows, DataSN from 0, F on the last."""
        off, want = r2t.offset, r2t.desired_length
        end = min(off + want, len(task.write_data))
        pdus, datasn, pos = [], 0, off
        while True:
            n = max(0, min(self.max_send_dsl, end - pos))
            pdus.append(data_out(itt=task.itt, ttt=r2t.ttt, offset=pos,
                                 data=task.write_data[pos:pos + n], datasn=datasn,
                                 exp_statsn=self.exp_statsn, lun=task.lun,
                                 final=pos + n >= end))
            pos += n
            datasn += 1
            if pos >= end:
                break
        self.send(pdus)

    def wait(self, task, timeout=None):
        """Collect a task's Data-In and status, answering its R2Ts. A Reject
        of its command raises Rejected."""
        res = ScsiResult(task.itt)
        buf = bytearray()

        def mine(p):
            if p.opcode in (DATA_IN, SCSI_RSP, R2T):
                return p.itt == task.itt
            if p.opcode == REJECT:
                rh = p.rejected_header
                return rh is not None and rh.itt == task.itt and rh.opcode in (SCSI_CMD, DATA_OUT)
            return False

        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        while True:
            p = self.expect(mine, max(0.0, deadline - time.monotonic()),
                            f"answer to the command with ITT {task.itt:#x}")
            res.pdus.append(p)
            if p.opcode == REJECT:
                raise Rejected(p)
            if p.opcode == R2T:
                self._answer_r2t(task, p)
                continue
            if p.opcode == DATA_IN:
                end = p.offset + len(p.data)
                if len(buf) < end:
                    buf.extend(bytes(end - len(buf)))
                buf[p.offset:end] = p.data
                if p.flags & DATA_STATUS:
                    res.status, res.flags, res.residual = p.status, p.flags, p.residual
                    break
                continue
            res.status, res.response, res.flags = p.status, p.response, p.flags
            res.residual, res.sense = p.residual, p.sense
            break
        res.data = bytes(buf)
        task.result = res
        return res

    def execute(self, cdb, timeout=None, **kw):
        """submit() and wait()."""
        return self.wait(self.submit(cdb, **kw), timeout)

    def block_size(self, lun, timeout=None):
        """The logical block size of a LUN, from READ CAPACITY(10)."""
        r = self.execute(cdb_read_capacity10(), lun=lun, read=True, edtl=8, timeout=timeout)
        assert r.status == GOOD, f"READ CAPACITY(10) of LUN {lun}: status {r.status:#x}"
        return struct.unpack(">I", r.data[4:8])[0]

    def ping(self, data=b"", timeout=None):
        """A NOP-Out ping (immediate); returns the NOP-In."""
        itt = self.next_itt()
        self.send(nop_out(itt=itt, cmdsn=self.cmdsn, exp_statsn=self.exp_statsn, data=data))
        return self.expect(lambda p: p.opcode == NOP_IN and p.itt == itt, timeout, "NOP-In")

    def tmf(self, function, *, rtt=RESERVED_TAG, refcmdsn=None, lun=0, cmdsn=None,
            timeout=None):
        """A task management request (immediate); returns the response PDU."""
        itt = self.next_itt()
        self.send(tmf_request(function, itt=itt, cmdsn=self.cmdsn if cmdsn is None else cmdsn,
                              exp_statsn=self.exp_statsn, rtt=rtt,
                              refcmdsn=self.cmdsn if refcmdsn is None else refcmdsn, lun=lun))
        return self.expect(lambda p: p.opcode == TMF_RSP and p.itt == itt, timeout,
                           "Task Management Response")

    def text(self, keys, timeout=None):
        itt = self.next_itt()
        self.send(text_request(keys, itt=itt, cmdsn=self.take_cmdsn(), exp_statsn=self.exp_statsn))
        return self.expect(lambda p: p.opcode == TEXT_RSP and p.itt == itt, timeout,
                           "Text Response")

    def logout(self, reason=LOGOUT_CLOSE_SESSION, timeout=None, wait=True):
        """Logout (immediate); returns the Logout Response (None if not wait)."""
        itt = self.next_itt()
        self.send(logout_request(itt=itt, cmdsn=self.cmdsn, exp_statsn=self.exp_statsn,
                                 reason=reason, cid=self.cid))
        if not wait:
            return None
        return self.expect(lambda p: p.opcode == LOGOUT_RSP and p.itt == itt, timeout,
                           "Logout Response")
