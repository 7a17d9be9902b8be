#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Write seed inputs for the fuzzers: valid configurations, text, login and
# discovery PDU streams, ietadm requests, PERSISTENT RESERVE OUT parameter
# lists. Usage: make-seeds.py DIR
import os
import re
import struct
import sys

ISID = bytes([0x80, 0x12, 0x34, 0x56, 0x78, 0x9a])
INIT = "iqn.1993-08.org.debian:01:x"
OPS = ["HeaderDigest=None,CRC32C", "DataDigest=None", "DefaultTime2Wait=2",
       "DefaultTime2Retain=0", "IFMarker=No", "OFMarker=No",
       "ErrorRecoveryLevel=0", "InitialR2T=No", "ImmediateData=Yes",
       "MaxBurstLength=16776192", "FirstBurstLength=262144",
       "MaxOutstandingR2T=1", "MaxConnections=1", "DataPDUInOrder=Yes",
       "DataSequenceInOrder=Yes", "MaxRecvDataSegmentLength=262144"]


def text(*pairs):
    return b"".join(p.encode() + b"\0" for p in pairs)


def pad(data):
    return data + b"\0" * (-len(data) % 4)


def login(csg, nsg, transit, data, tsih=0, cid=0, cont=False):
    flags = (0x80 if transit else 0) | (0x40 if cont else 0) | csg << 2 | \
        (nsg if transit else 0)
    bhs = struct.pack(">BBBBB3s6sHIHHII16x", 0x43, flags, 0, 0, 0,
                      len(data).to_bytes(3, "big"), ISID, tsih, 0x1000, cid,
                      0, 77, 0)
    return bhs + pad(data)


def text_req(data, ttt=0xffffffff, cmdsn=77):
    bhs = struct.pack(">BBH B3s8sIIII16x", 0x04, 0x80, 0, 0,
                      len(data).to_bytes(3, "big"), b"\0" * 8, 0x55, ttt,
                      cmdsn, 0)
    return bhs + pad(data)


def logout(cmdsn=78):
    return struct.pack(">BBH B3s8sIHHII16x", 0x46, 0x80, 0, 0, b"\0\0\0",
                       b"\0" * 8, 0x56, 0, 0, cmdsn, 0)


def nop(data=b"ping"):
    return struct.pack(">BBH B3s8sIIII16x", 0x40, 0x80, 0, 0,
                       len(data).to_bytes(3, "big"), b"\0" * 8, 0x57,
                       0xffffffff, 78, 0) + pad(data)


# iscsi_trgt's netlink messages, numbered as include/uapi/linux/iet.h's
# enums count (each starts at its _UNSPEC); family 0x1d as fuzz_kreply.c.
def uapi_enums():
    here = os.path.dirname(os.path.abspath(__file__))
    names, n = {}, 0
    with open(os.path.join(here, "../../include/uapi/linux/iet.h")) as f:
        for line in f:
            m = re.match(r"\s*(IET_(?:CMD|A|STAT|HIST)_[A-Z0-9_]+),", line)
            if m:
                n = 0 if m.group(1).endswith("_UNSPEC") else n + 1
                names[m.group(1)] = n
    return names


IET = uapi_enums()


def nlattr(typ, payload):
    return struct.pack("=HH", 4 + len(payload), typ) + pad(payload)


def genl(cmd, *attrs, family=0x1d):
    """One message: nlmsghdr, genlmsghdr (version 1), attributes."""
    body = struct.pack("=BBH", cmd, 1, 0) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), family, 2, 1, 0) + body


def u32(typ, v):
    return nlattr(typ, struct.pack("=I", v))


def strz(typ, s):
    return nlattr(typ, s.encode() + b"\0")


# PERSISTENT RESERVE OUT parameter lists (SPC-4 6.16.3, 6.16.4) and iSCSI
# TransportIDs (7.6.4.6), for fuzz_pr_tpid.
def pr_basic(rk=0, sark=0, flags=0):
    return struct.pack(">QQIBxxx", rk, sark, 0, flags)


def pr_tpid(name, fmt=0, pad_to=None):
    body = name.encode() + b"\0"
    body += bytes(-len(body) % 4)
    body += bytes(max(0, 20 - len(body)))
    n = len(body) if pad_to is None else pad_to
    return bytes([fmt << 6 | 0x05, 0]) + struct.pack(">H", n) + body


def pr_spec_i_pt(sark, *tpids, length=None):
    ids = b"".join(tpids)
    n = len(ids) if length is None else length
    return pr_basic(sark=sark, flags=0x08) + struct.pack(">I", n) + ids


def pr_move(rk, sark, rtpi, tpid, unreg=False, length=None):
    n = len(tpid) if length is None else length
    return struct.pack(">QQBBHI", rk, sark, 0, 0x02 if unreg else 0, rtpi,
                       n) + tpid


def crc32c(data):
    """CRC32C (Castagnoli), as iSCSI digests are."""
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def with_digests(pdu):
    """A PDU (BHS and padded data) with its header and data digests, in
    the byte order iSCSI sends them (least significant first)."""
    bhs, data = pdu[:48], pdu[48:]
    out = bhs + crc32c(bhs).to_bytes(4, "little")
    if data:
        out += data + crc32c(data).to_bytes(4, "little")
    return out


def write(d, name, blob):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(blob)


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "../../etc/ietd.conf"), "rb") as f:
        write(out + "/config", "sample", f.read())
    write(out + "/config", "small",
          b"iSNSAccessControl No\nTarget iqn.2001-04.com.example:a\n"
          b" Lun 0 Path=/dev/null,IOMode=wb,ScsiId=x\n"
          b" Lun 1 Type=nullio,Blocks=100\n MaxBurstLength 65536\n"
          b" FirstBurstLength 4096\n HeaderDigest None,CRC32C\n"
          b" OFMarkInt 1~65535\nTarget eui.0123456789abcdef\n")
    write(out + "/config", "chap",
          b"AllowShortSecrets Yes\nCHAPAlgorithms 7,8\n"
          b"IncomingUser disc short\nOutgoingUser dout secretsecret99\n"
          b"Target iqn.2001-04.com.example:a\n Redirect [2001:db8::1]:3261\n"
          b" IncomingUser joe secretsecret\n OutgoingUser tgt targetsecret\n"
          b" CHAPAlgorithms SHA3-256,MD5\n Lun 0 Type=blockio,Path=/dev/sda\n")
    write(out + "/config", "lun-options",
          b"Target iqn.2001-04.com.example:a\n"
          b" Lun 0 Path=/dev/null,PhysicalBlockSize=4096,RotationRate=1,"
          b"ThinProvisioning=No\n"
          b" Lun 1 Path=/srv/a.img,BlockSize=4096,physicalblocksize=32768,"
          b"rotationrate=0x1c20,thinprovisioning=yes\n")
    write(out + "/config", "ha-node",
          b"PortalGroup 2 192.0.2.12:3260\nRemotePortalGroup 1\n"
          b"Target iqn.2001-04.com.example:a\n"
          b" Lun 0 Path=/dev/drbd0,Type=blockio,ScsiId=clu0,ScsiSN=clu0\n"
          b" Lun 1 Path=/srv/a.img,Blocks=2048\n")

    write(out + "/text", "login", text(INIT and "InitiatorName=" + INIT,
                                       *OPS))
    write(out + "/text", "chap", text("CHAP_C=0x" + "ab" * 64, "CHAP_I=1"))

    t1 = "TargetName=iqn.2001-04.com.example:disk1"
    t2 = "TargetName=iqn.2001-04.com.example:disk2"
    write(out + "/login", "normal",
          login(0, 1, True, text("InitiatorName=" + INIT, t1,
                                 "SessionType=Normal", "AuthMethod=None")) +
          login(1, 3, True, text(*OPS)))
    write(out + "/login", "offers",
          login(1, 3, True, text("InitiatorName=" + INIT, t2,
                                 "MaxRecvDataSegmentLength=8192")) +
          login(1, 3, True, text("ImmediateData=No", "MaxBurstLength=4096",
                                 "DataDigest=CRC32C",
                                 "DefaultTime2Retain=0")))
    write(out + "/login", "continued",
          login(1, 0, False, text("InitiatorName=" + INIT, t1)[:20],
                cont=True) +
          login(1, 3, True, text("InitiatorName=" + INIT, t1)[20:] +
                text(*OPS)))
    write(out + "/login", "add-connection",
          login(1, 3, True, text("InitiatorName=" + INIT, t1,
                                 "HeaderDigest=None"), tsih=1, cid=1))
    write(out + "/login", "discovery",
          login(1, 3, True, text("InitiatorName=" + INIT,
                                 "SessionType=Discovery", *OPS)) +
          text_req(text("SendTargets=All")) + nop() +
          text_req(text("SendTargets=iqn.2001-04.com.example:disk2"),
                   cmdsn=78) + logout(79))

    write(out + "/acl", "allow",
          b"# initiators.allow\n"
          b"iqn.2001-04.com.example:disk1 iqn.1993-08.org.debian:01:.*, "
          b"10.0.0.0/8\n"
          b"iqn.2001-04.com.example:disk2 [2001:db8::/32],[fe80::]/10,"
          b"192.0.2.77\nALL ALL\n")
    write(out + "/acl", "deny", b"ALL ALL\n")

    chap_r = "0x" + "00" * 32
    write(out + "/chap", "one-way", b"7,5\0joe\0" + chap_r.encode())
    write(out + "/chap", "mutual",
          b"5\0joe\0" + ("0x" + "11" * 16).encode() + b"\0" + b"77\0" +
          b"0xdeadbeef")
    write(out + "/chap", "base64", b"0bAAECAwQFBgcICQoLDA0ODw==\0joe\0"
          b"0bAAECAwQFBgcICQoLDA0ODw==")

    chap = "TargetName=iqn.2001-04.com.example:chap"
    write(out + "/login", "chap",
          login(0, 0, False, text("InitiatorName=" + INIT, chap,
                                  "AuthMethod=CHAP,None")) +
          login(0, 0, False, text("CHAP_A=7,5")) +
          login(0, 1, True, text("CHAP_N=joe", "CHAP_R=" + chap_r,
                                 "CHAP_I=1", "CHAP_C=0x0102030405")))

    # fuzz_login's second configuration: discovery CHAP, named initiators.
    write(out + "/login", "chap-named",
          login(0, 0, False, text("InitiatorName=" + INIT, t1,
                                  "AuthMethod=CHAP")) +
          login(0, 0, False, text("CHAP_A=5")) +
          login(0, 1, True, text("CHAP_N=joe", "CHAP_R=" + "0x" + "00" * 16)) +
          login(0, 0, False, text("InitiatorName=iqn.1993-08.org.debian:01:y",
                                  "SessionType=Discovery", "AuthMethod=CHAP")) +
          login(0, 0, False, text("CHAP_A=5")) +
          login(0, 1, True, text("CHAP_N=disc", "CHAP_R=" + "0x" + "00" * 16)))

    # fuzz_conn: a discovery session with both digests, sent right (and
    # once with a header digest wrong, which closes).
    dig = ["HeaderDigest=CRC32C", "DataDigest=CRC32C"]
    disc = login(1, 3, True, text("InitiatorName=" + INIT,
                                  "SessionType=Discovery", *dig))
    asks = with_digests(text_req(text("SendTargets=All"))) + \
        with_digests(nop()) + with_digests(logout(78))
    write(out + "/conn", "discovery-digests", b"\x01" + disc + asks)
    bad = bytearray(with_digests(text_req(text("SendTargets=All"))))
    bad[48] ^= 1
    write(out + "/conn", "discovery-bad-header-digest", b"\x01" + disc + bytes(bad))

    # fuzz_conn: the first byte says whether the peer reads the answers.
    for name in os.listdir(out + "/login"):
        with open(os.path.join(out + "/login", name), "rb") as f:
            stream = f.read()
        write(out + "/conn", name, b"\x01" + stream)
        write(out + "/conn", name + "-unread", b"\x00" + stream)

    def st(peer, local, allow, deny, targets, *pdus):
        def f(b):
            return b"\xff\xff" if b is None else len(b).to_bytes(2, "big") + b
        return bytes([peer, local]) + f(allow) + f(deny) + f(targets) + b"".join(pdus)
    d1 = b"iqn.2001-04.com.example:disk1"
    ask = text_req(text("SendTargets=All"))
    write(out + "/sendtargets", "no-files", st(2, 0, None, None, None, ask))
    write(out + "/sendtargets", "allow-by-net",
          st(2, 1, d1 + b" 192.0.2.0/24\nALL iqn.1993-08.org.debian:.*\n",
             b"ALL ALL\n", None, ask,
             text_req(text("SendTargets=" + d1.decode()), cmdsn=2)))
    write(out + "/sendtargets", "ipv6-peer-portals",
          st(3, 1, None, d1 + b" [2001:db8::/64]\n",
             b"ALL 192.0.2.200\n" + d1 + b" [2001:db8::200]\n", ask))
    write(out + "/sendtargets", "broken-file",
          st(4, 0, b"ALL 999.1.1.1\n", None, None, ask))

    write(out + "/ctl", "show",
          b"IETCTL 1\nop=show\ntid=1\nsid=281474997486080\n\n")
    write(out + "/ctl", "new",
          b"IETCTL 1\nop=new\ntid=2\nlun=0\nuser=1\n"
          b"params=Path=/dev/sdb,Type=fileio\nredirect=192.0.2.1:3260\n\n")
    write(out + "/ctl", "v2",
          b"IETCTL 2\nop=show\ntarget=iqn.2001-04.com.example:disk1\n"
          b"json=1\n\n")
    write(out + "/ctl", "reload", b"IETCTL 2\nop=reload\ndryrun=1\n\n")

    pr, who = out + "/pr_tpid", "iqn.2024-01.com.example:node"
    write(pr, "register", pr_basic(sark=0x1234))
    write(pr, "reserve", pr_basic(rk=0x1234))
    write(pr, "spec-i-pt", pr_spec_i_pt(
        7, pr_tpid(who + "1"), pr_tpid(who + "2,i,0x00023d000001", fmt=1)))
    write(pr, "register-and-move", pr_move(
        0x1234, 0x5678, 1, pr_tpid(who + "3,i,0x00023d000002", fmt=1),
        unreg=True))
    # Lengths that wrap "off + x > len": the checks must be "x > len - off".
    write(pr, "move-length-wraps", pr_move(
        0x1234, 0x5678, 1, pr_tpid(who + "4", pad_to=0xfffc),
        length=0xfffffff0))
    write(pr, "spec-i-pt-27-bytes", pr_basic(sark=7, flags=0x08) + b"\0" * 3)
    write(pr, "spec-i-pt-length-past", pr_spec_i_pt(
        7, pr_tpid(who + "5"), length=0xffffffe4))
    write(pr, "tpid-past-its-list", pr_spec_i_pt(
        7, pr_tpid(who + "6", pad_to=0x100)))
    write(pr, "tpid-longest-names",
          pr_tpid("n" * 223) + pr_tpid("i" * 223 + ",i,0x00023d000003", fmt=1))
    write(pr, "tpid-name-too-long", pr_tpid("n" * 224))
    write(pr, "tpid-isid-prefixed", pr_tpid("iqn.x,i,0x0x23d0000004", fmt=1) +
          pr_tpid("iqn.x,i,0x+23d0000004\n", fmt=1))

    a = IET
    write(out + "/kreply", "dump",
          genl(a["IET_CMD_TARGET_GET"], u32(a["IET_A_TID"], 1),
               strz(a["IET_A_TARGET_NAME"], "iqn.2001-04.com.example:disk1"),
               nlattr(a["IET_A_TARGET_PARAMS"], u32(1, 8) + u32(4, 30)),
               nlattr(a["IET_A_SESSION_PARAMS"], u32(1, 1) + u32(5, 262144))) +
          genl(a["IET_CMD_LUN_GET"], u32(a["IET_A_TID"], 1),
               u32(a["IET_A_LUN"], 0), u32(a["IET_A_LUN_TYPE"], 1),
               strz(a["IET_A_LUN_PATH"], "/dev/vg0/lv0"),
               nlattr(a["IET_A_LUN_BLOCKS"], struct.pack("=Q", 1 << 21)),
               u32(a["IET_A_LUN_PHYS_BLOCK_SIZE"], 4096),
               u32(a["IET_A_LUN_ROTATION_RATE"], 7200),
               u32(a["IET_A_LUN_THIN"], 0)) +
          genl(a["IET_CMD_SESSION_GET"], u32(a["IET_A_TID"], 1),
               nlattr(a["IET_A_SID"], struct.pack("=Q", 1 << 48)),
               strz(a["IET_A_INITIATOR_NAME"], "iqn.1993-08.org.debian:01:x"),
               nlattr(a["IET_A_CONNS"], nlattr(a["IET_A_CONN"],
                      u32(a["IET_A_CID"], 0) +
                      nlattr(a["IET_A_PEER_ADDR"], bytes([127, 0, 0, 1])) +
                      nlattr(a["IET_A_PEER_PORT"], struct.pack("=H", 3260))))))
    def u64(typ, v):
        return nlattr(typ, struct.pack("=Q", v))

    def hist(op, kind):
        return nlattr(a["IET_STAT_HIST"], u32(a["IET_HIST_OP"], op) +
                      u32(a["IET_HIST_KIND"], kind) + u64(a["IET_HIST_SUM_NS"], 123456) +
                      nlattr(a["IET_HIST_COUNTS"],
                             struct.pack("=23Q", *range(1, 24))))
    # Counters and histograms, one of an unknown op and one of a short length.
    write(out + "/kreply", "stats",
          genl(a["IET_CMD_LUN_GET"], u32(a["IET_A_TID"], 1), u32(a["IET_A_LUN"], 0),
               nlattr(a["IET_A_STATS"],
                      u64(a["IET_STAT_CMDS"], 9) + u64(a["IET_STAT_READ_BYTES"], 4096) +
                      u64(a["IET_STAT_ERRORS"], 2) +
                      nlattr(a["IET_STAT_OP_CMDS"], b"".join(u64(i + 1, i) for i in range(4))) +
                      nlattr(a["IET_STAT_SENSE_KEYS"], u64(6, 1) + u64(7, 1)) +
                      u64(a["IET_STAT_CONFLICTS"], 1) + u64(a["IET_STAT_BUSY"], 0) +
                      hist(0, 0) + hist(2, 1) + hist(7, 0) +
                      nlattr(a["IET_STAT_HIST"], u32(a["IET_HIST_OP"], 1) +
                             u32(a["IET_HIST_KIND"], 0) +
                             nlattr(a["IET_HIST_COUNTS"], b"\1" * 20)))))
    write(out + "/kreply", "events",
          genl(a["IET_CMD_CONN_CLOSED"], u32(a["IET_A_TID"], 1),
               nlattr(a["IET_A_SID"], struct.pack("=Q", 7)),
               u32(a["IET_A_CID"], 0)) +
          genl(a["IET_CMD_SESSION_CLOSED"], u32(a["IET_A_TID"], 1),
               nlattr(a["IET_A_SID"], struct.pack("=Q", 7))))
    write(out + "/kreply", "pr",
          genl(a["IET_CMD_PR_GET"], u32(a["IET_A_TID"], 1), u32(a["IET_A_LUN"], 0),
               u32(a["IET_A_PR_GENERATION"], 4), u32(a["IET_A_PR_APTPL"], 1),
               u32(a["IET_A_PR_TYPE"], 5),
               nlattr(a["IET_A_SID"], struct.pack("=Q", 1 << 48)),
               nlattr(a["IET_A_PR_REGS"],
                      nlattr(a["IET_A_PR_REG"],
                             nlattr(a["IET_A_PR_KEY"], struct.pack("=Q", 0xabc)) +
                             strz(a["IET_A_INITIATOR_NAME"], "iqn.1993-08.org.debian:01:x") +
                             nlattr(a["IET_A_PR_ISID"], struct.pack("=Q", 0x23d000001)) +
                             u32(a["IET_A_PR_RTPI"], 1) +
                             nlattr(a["IET_A_PR_HOLDER"], b"")) +
                      nlattr(a["IET_A_PR_REG"],
                             nlattr(a["IET_A_PR_KEY"], struct.pack("=Q", 0xdef)) +
                             strz(a["IET_A_INITIATOR_NAME"], "iqn.1993-08.org.debian:01:y") +
                             u32(a["IET_A_PR_RTPI"], 0)))))
    write(out + "/kreply", "tpg",
          genl(a["IET_CMD_TARGET_GET"], u32(a["IET_A_TID"], 1),
               strz(a["IET_A_TARGET_NAME"], "iqn.2001-04.com.example:t")) +
          b"".join(genl(a["IET_CMD_TPG_GET"], u32(a["IET_A_TID"], 1),
                        u32(a["IET_A_TPGT"], tag), u32(a["IET_A_ALUA_STATE"], state),
                        u32(a["IET_A_TPG_SESSIONS"], 2),
                        u32(a["IET_A_TPG_REMOTE"], remote))
                   for tag, state, remote in ((1, 1, 0), (2, 3, 1))))
    # An HA pair's standby node: LUN backings closing, one LUN closed.
    write(out + "/kreply", "closing",
          genl(a["IET_CMD_TARGET_GET"], u32(a["IET_A_TID"], 1),
               strz(a["IET_A_TARGET_NAME"], "iqn.2001-04.com.example:t"),
               u32(a["IET_A_LUNS_CLOSING"], 2)) +
          genl(a["IET_CMD_LUN_GET"], u32(a["IET_A_TID"], 1),
               u32(a["IET_A_LUN"], 0), u32(a["IET_A_LUN_TYPE"], 3),
               strz(a["IET_A_LUN_PATH"], "/dev/drbd0"),
               u32(a["IET_A_LUN_BACKING"], 3)))
    write(out + "/kreply", "new", genl(a["IET_CMD_TARGET_NEW"],
                                       u32(a["IET_A_TID"], 3)))

    isns_seeds(out)


def isns_tlv(tag, val=b""):
    if isinstance(val, str):
        val = pad(val.encode() + b"\0")
    elif isinstance(val, int):
        val = struct.pack(">I", val)
    return struct.pack(">II", tag, len(val)) + val


def isns_pdu(func, payload, xid=1, flags=0x4c00):
    return struct.pack(">HHHHHH", 1, func, len(payload), flags, xid, 0) + payload


def isns_seeds(out):
    """What isnsd sends ietd: answers to each request, an SCN, an ESI."""
    t = "iqn.2001-04.com.example:disk1"
    ok = struct.pack(">I", 0)
    write(out + "/isns", "dd-answer", isns_pdu(0x8002, ok + isns_tlv(2065) + isns_tlv(0) +
          isns_tlv(2065, 1) + isns_tlv(2066, "dd1") + isns_tlv(2078, 0) +
          isns_tlv(2067, 2) + isns_tlv(2068, t) + isns_tlv(2067, 6) +
          isns_tlv(2068, INIT) + isns_tlv(2065, 2) +
          isns_tlv(2068, "iqn.1993-08.org.debian:01:other")))
    write(out + "/isns", "reg-answer", isns_pdu(0x8001, ok + isns_tlv(1, "ietd:h:3260") +
          isns_tlv(0) + isns_tlv(1, "ietd:h:3260") + isns_tlv(2, 2) + isns_tlv(6, 600) +
          isns_tlv(16, b"\0" * 10 + b"\xff\xff\x7f\0\0\1") + isns_tlv(17, 3260) +
          isns_tlv(32, t) + isns_tlv(33, 1)))
    write(out + "/isns", "scn", isns_pdu(0x0008, isns_tlv(32, t) +
          isns_tlv(4, b"\0\0\0\0\x6b\x11\x6c\x08") + isns_tlv(35, 1) + isns_tlv(32, INIT)))
    write(out + "/isns", "esi", isns_pdu(0x000d, isns_tlv(4, b"\0" * 8) +
          isns_tlv(1, "ietd:h:3260") + isns_tlv(16, b"\0" * 10 + b"\xff\xff\x7f\0\0\1") +
          isns_tlv(17, 3260)))
    write(out + "/isns", "refused", isns_pdu(0x8005, struct.pack(">I", 17)))
    # The kernel's uevents (NULs between): a loop device resized, dm's resume.
    write(out + "/uevent", "resize", b"\0".join([
        b"change@/devices/virtual/block/loop3", b"ACTION=change",
        b"DEVPATH=/devices/virtual/block/loop3", b"SUBSYSTEM=block", b"RESIZE=1",
        b"MAJOR=7", b"MINOR=3", b"DEVNAME=loop3", b"DEVTYPE=disk", b"SEQNUM=4242"]) + b"\0")
    write(out + "/uevent", "dm", b"\0".join([
        b"change@/devices/virtual/block/dm-2", b"ACTION=change", b"SUBSYSTEM=block",
        b"DEVTYPE=disk", b"MAJOR=254", b"MINOR=2", b"DM_COOKIE=4194304"]) + b"\0")


main()
