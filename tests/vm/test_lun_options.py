# SPDX-License-Identifier: GPL-2.0
"""The LUN arguments PhysicalBlockSize, RotationRate and ThinProvisioning,
seen by the Linux initiator: a 512e disk that still takes 512-byte I/O, a
solid-state disk, a fully provisioned disk over a sparse file; ietadm adds
them and shows them back from the kernel, and bad values are refused with
their reason by ietd and, under it, by the module."""

import os
import re
import socket
import struct
import subprocess
from pathlib import Path

import pytest

from vmlib import proc
from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import IETD, Lun, Target, ietadm, iqn
from vmlib.util import REPO, RESULTS, MiB, run, safe_name

SIZE = 16 * MiB
INVALID_OPCODE_EXIT = 9    # sg3-utils' SG_LIB_CAT_INVALID_OP


def queue(sd, attr):
    """/sys/block/sdX/queue/ATTR of the disk."""
    return Path(f"/sys/block/{os.path.basename(sd)}/queue/{attr}").read_text().strip()


def vpd(sd, page):
    """A VPD page, raw, header included (sg_vpd --raw)."""
    return subprocess.run(["sg_vpd", f"--page={page:#x}", "--raw", sd],
                          capture_output=True, check=True, timeout=60).stdout


def test_physical_block_size_makes_a_512e_disk(ietd, backing, initiator):
    name = iqn("lunopt-512e")
    ietd(Target(name, [Lun(0, str(backing("512e", SIZE)),
                           params={"PhysicalBlockSize": 4096})]))
    sd = initiator.login(name).disk(0)

    assert queue(sd, "logical_block_size") == "512"
    assert queue(sd, "physical_block_size") == "4096"
    assert queue(sd, "minimum_io_size") == "4096"
    out = run(["sg_readcap", "--long", sd]).stdout
    assert "Logical block length=512 bytes" in out, out
    assert re.search(r"Logical blocks per physical block exponent=3\b", out), out
    # Block limits: transfers and unmaps in whole physical blocks.
    bl = vpd(sd, 0xb0)
    assert struct.unpack(">H", bl[6:8])[0] == 8, bl.hex()
    assert struct.unpack(">I", bl[28:32])[0] == 8, bl.hex()
    assert queue(sd, "discard_granularity") == "4096"

    # I/O is still in 512-byte blocks: one odd block alone.
    pwrite_direct(sd, 0, bytes(4096))
    block = os.urandom(512)
    pwrite_direct(sd, 3 * 512, block)
    assert pread_direct(sd, 0, 4096) == bytes(3 * 512) + block + bytes(512 * 4)


def test_rotation_rate_is_reported_and_one_is_solid_state(ietd, initiator):
    name = iqn("lunopt-rotation")
    nullio = {"Blocks": SIZE // 512}
    ietd(Target(name, [Lun(0, type="nullio", params={**nullio, "RotationRate": 1}),
                       Lun(1, type="nullio", params={**nullio, "RotationRate": 7200}),
                       Lun(2, type="nullio", params=nullio)]))
    login = initiator.login(name)
    ssd, hdd, unsaid = login.disk(0), login.disk(1), login.disk(2)

    assert queue(ssd, "rotational") == "0"
    out = run(["sg_vpd", "--page=bdc", ssd]).stdout
    assert "non-rotating" in out.lower(), out
    assert queue(hdd, "rotational") == "1"
    assert struct.unpack(">H", vpd(hdd, 0xb1)[4:6])[0] == 7200
    # Not configured: not reported, as IET always did.
    assert queue(unsaid, "rotational") == "1"
    assert struct.unpack(">H", vpd(unsaid, 0xb1)[4:6])[0] == 0


def test_thin_provisioning_no_makes_a_fully_provisioned_disk(ietd, backing, initiator):
    name = iqn("lunopt-thick")
    ietd(Target(name, [Lun(0, str(backing("thick", SIZE)),
                           params={"ThinProvisioning": "No"}),
                       Lun(1, str(backing("thin", SIZE)))]))
    login = initiator.login(name)
    thick, thin = login.disk(0), login.disk(1)

    # The same storage, thin where it is allowed to be.
    assert "lbpme=1" in run(["sg_readcap", "--long", thin]).stdout
    out = run(["sg_readcap", "--long", thick]).stdout
    assert "lbpme=0, lbprz=0" in out, out
    assert queue(thick, "discard_max_bytes") == "0"
    assert vpd(thick, 0xb2)[5] == 0, "LBPU, LBPWS or LBPRZ reported"

    cp = run(["sg_unmap", "--force", "--lba=0", "--num=8", thick], check=False)
    assert cp.returncode == INVALID_OPCODE_EXIT, cp.stdout + cp.stderr
    cp = run(["sg_write_same", "--16", "--unmap", "--lba=0", "--num=8", thick],
             check=False)
    assert cp.returncode != 0 and "illegal request" in (cp.stdout + cp.stderr).lower(), \
        cp.stdout + cp.stderr
    # Writes and reads as ever.
    data = os.urandom(MiB)
    pwrite_direct(thick, MiB, data)
    assert pread_direct(thick, MiB, MiB) == data


def test_ietadm_adds_a_lun_with_the_options_and_the_kernel_gives_them_back(ietd, backing):
    name = iqn("lunopt-ietadm")
    ietd(Target(name, [Lun(0, type="nullio")]))
    path = backing("ietadm", SIZE)
    ietadm("--op", "new", "--tid=1", "--lun=1",
           f"--params=Path={path},BlockSize=1024,PhysicalBlockSize=8192,"
           "RotationRate=15000,ThinProvisioning=No,ModeSelect=Yes")
    shown = dict(line.split("=", 1) for line in
                 ietadm("--op", "show", "--tid=1", "--lun=1").stdout.split())
    assert (shown["BlockSize"], shown["PhysicalBlockSize"], shown["RotationRate"],
            shown["ThinProvisioning"], shown["ModeSelect"]) == \
        ("1024", "8192", "15000", "No", "Yes"), shown
    shown = dict(line.split("=", 1) for line in
                 ietadm("--op", "show", "--tid=1", "--lun=0").stdout.split())
    assert (shown["PhysicalBlockSize"], shown["RotationRate"],
            shown["ThinProvisioning"], shown["ModeSelect"]) == ("512", "0", "Yes", "No"), shown

    cp = ietadm("--op", "new", "--tid=1", "--lun=2",
                f"--params=Path={path},RotationRate=1024", check=False)
    assert cp.returncode == 1
    assert 'RotationRate: "1024" is not 0 (not reported), 1 (non-rotating) or ' \
        "1025..65534 (rpm)" in cp.stderr, cp.stderr
    assert [lun.lun for lun in proc.target(proc.volumes(), name).luns] == [0, 1]


BAD = {
    "PhysicalBlockSize=256": 'PhysicalBlockSize: "256" is not a power of 2 from 512 to 32768',
    "PhysicalBlockSize=3000": 'PhysicalBlockSize: "3000" is not a power of 2 from 512 to 32768',
    "BlockSize=4096,PhysicalBlockSize=2048":
        "PhysicalBlockSize: 2048 is smaller than BlockSize 4096",
    "RotationRate=2":
        'RotationRate: "2" is not 0 (not reported), 1 (non-rotating) or 1025..65534 (rpm)',
    "ThinProvisioning=maybe": 'ThinProvisioning: "maybe" is not Yes or No',
    "ModeSelect=on": 'ModeSelect: "on" is not Yes or No',
}


def test_ietd_refuses_a_bad_value_with_its_reason(kmod, backing, request):
    """Each bad value, on one module load: ietd exits 1 naming it, and
    the kernel is given nothing."""
    path = backing("bad", SIZE)
    for i, args in enumerate(BAD):
        conf = RESULTS / f"ietd-{safe_name(request.node.name)}-{i}.conf"
        conf.write_text(f"Target {iqn('lunopt-bad')}\n\tLun 0 Path={path},{args}\n")
        cp = run([str(IETD), "-f", "-c", str(conf)], check=False, timeout=30)
        assert cp.returncode == 1, f"{args}: {cp.stderr}"
        assert f"{conf}:2: Lun: LUN 0: {BAD[args]}\n" in cp.stderr, f"{args}: {cp.stderr}"
        assert proc.volumes() == [], args


# ---------------------------------------------------------------- the module's own checks

def uapi_attrs():
    """IET_A_* of include/uapi/linux/iet.h, numbered as the enum counts."""
    names, n = {}, 0
    for line in (REPO / "include/uapi/linux/iet.h").read_text().splitlines():
        m = re.match(r"\s*(IET_(?:CMD|A)_[A-Z0-9_]+),", line)
        if m:
            n = 0 if m.group(1).endswith("_UNSPEC") else n + 1
            names[m.group(1)] = n
    return names


def nla(kind, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * (-n % 4)


def u32(kind, v):
    return nla(kind, struct.pack("=I", v))


def genl_request(sock, family, cmd, attrs):
    """One request with NLM_F_ACK: the replies before the ACK, and the ACK's
    (errno, extended ACK message)."""
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    sock.send(struct.pack("=IHHII", 16 + len(body), family, 0x1 | 0x4, 1, 0) + body)
    replies = []
    while True:
        rsp = sock.recv(65536)
        kind, flags = struct.unpack_from("=HH", rsp, 4)
        if kind != 2:                               # not NLMSG_ERROR: a reply
            replies.append(rsp)
            continue
        err = -struct.unpack_from("=i", rsp, 16)[0]
        msg, off = "", 16 + 4 + 16                  # error, the request's header
        while flags & 0x200 and off + 4 <= len(rsp):    # NLM_F_ACK_TLVS
            n, typ = struct.unpack_from("=HH", rsp, off)
            if typ == 1:                            # NLMSGERR_ATTR_MSG
                msg = rsp[off + 4:off + n].rstrip(b"\0").decode()
            off += (n + 3) & ~3
        return replies, (err, msg)


@pytest.fixture
def genl(kmod):
    """(request(cmd, attrs) -> (errno, message), the IET_A_* numbers): the
    module asked by hand, as ietd's own checks would never let happen."""
    a = uapi_attrs()
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
    s.setsockopt(270, 10, 1)        # SOL_NETLINK, NETLINK_CAP_ACK: no echo
    s.setsockopt(270, 11, 1)        # NETLINK_EXT_ACK: the kernel's reason
    s.bind((0, 0))
    # nlctrl (0x10), CTRL_CMD_GETFAMILY by CTRL_ATTR_FAMILY_NAME.
    replies, (err, _) = genl_request(s, 0x10, 3, nla(2, b"iscsi_trgt\0"))
    assert err == 0 and replies, "no iscsi_trgt generic netlink family"
    rsp, off, family = replies[0], 20, None
    while off + 4 <= len(rsp):
        n, kind = struct.unpack_from("=HH", rsp, off)
        if kind == 1:                               # CTRL_ATTR_FAMILY_ID
            family = struct.unpack_from("=H", rsp, off + 4)[0]
        off += (n + 3) & ~3
    assert family is not None
    yield (lambda cmd, attrs: genl_request(s, family, a[cmd], attrs)[1]), a
    s.close()


EINVAL, ERANGE = 22, 34
PHYS_REASON = "PhysicalBlockSize must be a power of 2 from BlockSize to 32768"


# What ietd never sends, each with the errno and reason the module answers:
# (what, LUN attributes, errno, reason).
REFUSED_LUNS = [
    ({"IET_A_LUN_BLOCK_SIZE": 4096, "IET_A_LUN_PHYS_BLOCK_SIZE": 2048},
     EINVAL, PHYS_REASON, "phys-below-block"),
    ({"IET_A_LUN_PHYS_BLOCK_SIZE": 3072}, EINVAL, PHYS_REASON, "phys-not-power-of-2"),
    ({"IET_A_LUN_ROTATION_RATE": 2}, EINVAL,
     "RotationRate must be 0, 1 or 1025..65534", "rotation-2"),
    ({"IET_A_LUN_ROTATION_RATE": 0x400}, EINVAL,
     "RotationRate must be 0, 1 or 1025..65534", "rotation-0x400"),
    # Out of the netlink policy's ranges: refused before iet_lun_add().
    ({"IET_A_LUN_PHYS_BLOCK_SIZE": 65536}, ERANGE, "integer out of range", "phys-65536"),
    ({"IET_A_LUN_ROTATION_RATE": 0xffff}, ERANGE, "integer out of range", "rotation-0xffff"),
    ({"IET_A_LUN_THIN": 2}, ERANGE, "integer out of range", "thin-2"),
    ({"IET_A_LUN_MODE_SELECT": 2}, ERANGE, "integer out of range", "mode-select-2"),
]


def test_the_module_refuses_what_ietd_never_sends(genl):
    """Each case on one module load: refused with its reason, nothing made."""
    request, a = genl
    tid = u32(a["IET_A_TID"], 1)
    assert request("IET_CMD_TARGET_NEW", tid + nla(a["IET_A_TARGET_NAME"],
                   iqn("lunopt-raw").encode() + b"\0")) == (0, "")
    for lun_args, errno, reason, what in REFUSED_LUNS:
        attrs = tid + u32(a["IET_A_LUN"], 0) + u32(a["IET_A_LUN_TYPE"], 2)  # nullio
        for k, v in lun_args.items():
            attrs += u32(a[k], v)
        assert request("IET_CMD_LUN_NEW", attrs) == (errno, reason), what
        assert proc.target(proc.volumes(), iqn("lunopt-raw")).luns == [], what
    # What is in range goes through, the same way.
    attrs = tid + u32(a["IET_A_LUN"], 1) + u32(a["IET_A_LUN_TYPE"], 2) + \
        u32(a["IET_A_LUN_PHYS_BLOCK_SIZE"], 32768) + \
        u32(a["IET_A_LUN_ROTATION_RATE"], 0xfffe) + u32(a["IET_A_LUN_THIN"], 0) + \
        u32(a["IET_A_LUN_MODE_SELECT"], 1)
    assert request("IET_CMD_LUN_NEW", attrs) == (0, "")
    assert request("IET_CMD_LUN_DEL", tid + u32(a["IET_A_LUN"], 1)) == (0, "")
    assert request("IET_CMD_TARGET_DEL", tid) == (0, "")
