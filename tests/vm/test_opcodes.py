# SPDX-License-Identifier: GPL-2.0
"""REPORT SUPPORTED OPERATION CODES and REPORT SUPPORTED TASK MANAGEMENT
FUNCTIONS through the kernel initiator (sg3-utils), held against what the
target really does: every operation code it reports is dispatched, every
other one is refused as INVALID COMMAND OPERATION CODE, and a CDB bit
outside a command's reported usage data is refused with a pointer to it."""

import re
import struct
import subprocess

import pytest

from vmlib.target import Lun, Target, ietadm, iqn
from vmlib.util import MiB, run

SA_COMMANDS = {0x5e, 0x5f, 0x83, 0x84, 0x9e, 0xa3}     # service action in byte 1 (ours)


@pytest.fixture
def sd(ietd, backing, initiator):
    name = iqn("opcodes")
    ietd(Target(name, [Lun(0, str(backing("opcodes", 16 * MiB)))]))
    return initiator.login(name).disk(0)


def raw(*cmd):
    """A command's binary output (sg_opcodes --raw)."""
    return subprocess.run(cmd, capture_output=True, check=True,
                          timeout=60).stdout


def raw_rsoc(dev, *args):
    return raw("sg_opcodes", "--raw", "--no-inquiry", *args, dev)


def all_commands(dev, rctd=False):
    """The all-commands report: [(op, sa or None, cdb_len, timeout or None)]."""
    d = raw_rsoc(dev, *(["--rctd"] if rctd else []))
    length = struct.unpack(">I", d[:4])[0]
    assert length == len(d) - 4, "COMMAND DATA LENGTH is not what came"
    out, off = [], 4
    while off < len(d):
        op, sa, flags, cdb_len = d[off], struct.unpack(">H", d[off + 2:off + 4])[0], \
            d[off + 5], struct.unpack(">H", d[off + 6:off + 8])[0]
        off += 8
        timeout = None
        if flags & 0x02:
            assert struct.unpack(">H", d[off:off + 2])[0] == 0x0a
            timeout = struct.unpack(">I", d[off + 8:off + 12])[0]
            off += 12
        assert bool(flags & 0x02) == rctd, "CTDP must follow RCTD"
        out.append((op, sa if flags & 0x01 else None, cdb_len, timeout))
    return out


def sg_raw(dev, cdb):
    """A CDB with no data out, sent by sg_raw: (exit status, its report)."""
    cp = run(["sg_raw", "-v", "-R", dev] + [f"{b:02x}" for b in cdb],
             check=False)
    return cp.returncode, cp.stdout + cp.stderr


def sense_of(dev, cdb):
    return sg_raw(dev, cdb)[1]


def test_every_reported_command_is_described_alike_alone(sd):
    cmds = all_commands(sd)
    ops = {(op, sa) for op, sa, _, _ in cmds}
    # What IET has always done, and what Linux needs, is there.
    for want in [(0x00, None), (0x12, None), (0x28, None), (0x2a, None),
                 (0x35, None), (0x88, None), (0x8a, None), (0x9e, 0x10),
                 (0xa0, None), (0xa3, 0x0c), (0xa3, 0x0d)]:
        assert want in ops, f"{want} missing from {sorted(ops, key=str)}"
    assert len(ops) == len(cmds), "a command is reported twice"
    for op, sa, cdb_len, _ in cmds:
        spec = f"{op:#x}" if sa is None else f"{op:#x},{sa:#x}"
        d = raw_rsoc(sd, f"--opcode={spec}")
        assert d[1] & 0x07 == 3, f"{spec}: SUPPORT {d[1] & 7}, not 3"
        size = struct.unpack(">H", d[2:4])[0]
        assert size == cdb_len, f"{spec}: CDB SIZE {size}, all-commands said {cdb_len}"
        usage = d[4:4 + size]
        assert usage[0] == op and usage[-1] & 0x04, f"{spec}: usage {usage.hex()}"
        if sa is not None:
            assert usage[1] & 0x1f == sa, f"{spec}: usage {usage.hex()}"


def test_timeouts_are_given_when_asked(sd):
    cmds = all_commands(sd, rctd=True)
    assert all(t and t >= 10 for _, _, _, t in cmds), cmds
    out = run(["sg_opcodes", "--rctd", "--opcode=0x2a", "--no-inquiry", sd]).stdout
    assert "recommended timeout: 30 secs" in out, out


def test_one_command_not_supported_and_wrong_options(sd):
    d = raw_rsoc(sd, "--opcode=0x04")             # FORMAT UNIT
    assert d[1] & 0x07 == 1 and d[2:4] == b"\0\0"
    d = raw_rsoc(sd, "--opcode=0x9e,0x1f")         # no such service action
    assert d[1] & 0x07 == 1
    # Options 1 (no service action) for a command that has them: refused.
    cdb = [0xa3, 0x0c, 0x01, 0x9e, 0, 0, 0, 0, 0x10, 0, 0, 0]
    out = sense_of(sd, cdb)
    assert "invalid field in cdb" in out.lower(), out
    cdb[2] = 0x05                                  # reserved options
    assert "invalid field in cdb" in sense_of(sd, cdb).lower()


def test_each_opcode_is_dispatched_exactly_when_reported(sd):
    reported = {}
    for op, sa, cdb_len, _ in all_commands(sd):
        reported.setdefault(op, []).append((sa, cdb_len))
    wrong = []
    for op in range(256):
        if op in reported:
            sa, cdb_len = reported[op][0]
        else:
            sa, cdb_len = None, [6, 10, 10, 16, 16, 12, 16, 16][op >> 5]
        cdb = [op] + [0] * (cdb_len - 1)
        if sa is not None:
            cdb[1] = sa
        if op in (0x9e,):
            cdb[13] = 32                           # allocation length
        out = sense_of(sd, cdb).lower()
        # sg_raw decodes the sense, except for group 3 (0x60-0x7f), which
        # it takes for NVMe and dumps: fixed format, ILLEGAL REQUEST, 20h.
        dump = " ".join(re.findall(r"\b[0-9a-f]{2}\b", out))
        refused = "invalid command operation code" in out or \
            "70 00 05 00 00 00 00 0a 00 00 00 00 20 00" in dump
        if refused == (op in reported):
            wrong.append(f"{op:#04x} reported={op in reported}: {out[-200:]}")
    assert not wrong, "\n".join(wrong)


def test_a_bit_outside_the_usage_data_is_refused_with_its_place(sd):
    # READ(10) byte 1 bit 2 (RARC) is not looked at: refused, pointed at.
    out = sense_of(sd, [0x28, 0x04, 0, 0, 0, 0, 0, 0, 1, 0])
    assert "invalid field in cdb" in out.lower(), out
    assert "byte 1 bit 2" in out, out
    # The same with DPO and FUA, which are in its usage data, is a read.
    rc, out = sg_raw(sd, [0x28, 0x18, 0, 0, 0, 0, 0, 0, 1, 0])
    assert rc == 0, out
    # LINK in the control byte is not supported either.
    out = sense_of(sd, [0x00, 0, 0, 0, 0, 0x01])
    assert "byte 5 bit 0" in out, out


def test_task_management_functions_reported_are_those_performed(sd):
    out = run(["sg_opcodes", "--tmf", "--no-inquiry", sd]).stdout
    for name in ("Abort task", "Abort task set", "Clear task set",
                 "Logical unit reset", "Query task",
                 "Query asynchronous event", "Query task set", "I_T nexus reset"):
        assert name in out, out
    assert "Clear ACA" not in out, out      # test_task_attr performs the RFC 7144 ones
    # Target resets only where the target allows them (AllowTargetReset).
    assert "Target reset" not in out, out
    ietadm("--op", "update", f"--tid={iqn('opcodes')}", "--params=AllowTargetReset=Yes")
    out = run(["sg_opcodes", "--tmf", "--no-inquiry", sd]).stdout
    assert "Target reset" in out, out
    d = raw("sg_opcodes", "--tmf", "--repd", "--raw", "--no-inquiry", sd)
    assert len(d) == 16 and d[3] == 0x0c, d.hex()
