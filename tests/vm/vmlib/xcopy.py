# SPDX-License-Identifier: GPL-2.0
"""EXTENDED COPY parameter lists by hand, sent through sg_raw to a kernel
initiator's disk or by a raw initiator: for the copy tests and the fencing
tests that copy."""

import struct
import subprocess

from .util import run


def vpd_raw(dev, page):
    return subprocess.run(["sg_vpd", f"--page={page:#x}", "--raw", dev],
                          capture_output=True, check=True, timeout=60).stdout


def naa_of(dev):
    """The NAA designator of the disk's logical unit (VPD 0x83)."""
    return naa_in(vpd_raw(dev, 0x83))


def naa_in(page):
    """The logical unit's NAA designator in a device identification page."""
    off = 4
    while off < len(page):
        code_set, kind, n = page[off] & 0x0F, page[off + 1], page[off + 3]
        if code_set == 1 and kind == 0x03:        # binary, LU, NAA
            return page[off + 4:off + 4 + n]
        off += 4 + n
    raise AssertionError(f"no NAA designator in {page.hex()}")


def cscd(naa):
    """An identification CSCD descriptor of a 512-byte-block disk."""
    return (bytes([0xE4, 0, 0, 0, 0x01, 0x03, 0, len(naa)]) + naa.ljust(20, b"\0")
            + bytes([0, 0, 0x02, 0x00]))


def segment(src, dst, nr, src_lba, dst_lba):
    """A block-to-block segment descriptor."""
    return struct.pack(">BBHHHHHQQ", 0x02, 0, 24, src, dst, 0, nr, src_lba, dst_lba)


def param_list(cscds, segs):
    """An EXTENDED COPY (LID1) parameter list, no list identifier held."""
    return (struct.pack(">BBHIII", 0, 0x3 << 3, 32 * len(cscds), 0, 28 * len(segs), 0)
            + b"".join(cscds) + b"".join(segs))


def cdb(length):
    return bytes([0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0, *struct.pack(">I", length), 0, 0])


def raw_xcopy(dev, cscds, segs, tmp_path, length=None):
    """EXTENDED COPY (LID1, no list identifier held) through sg_raw:
    (exit status, what it printed)."""
    plist = param_list(cscds, segs)
    length = len(plist) if length is None else length
    f = tmp_path / "xcopy-list"
    f.write_bytes(plist.ljust(length, b"\0"))
    cp = run(["sg_raw", "-s", str(length), "-i", str(f), dev,
              *(f"{b:02x}" for b in cdb(length))], check=False, timeout=120)
    return cp.returncode, cp.stdout + cp.stderr
