# SPDX-License-Identifier: GPL-2.0
"""VERIFY, WRITE AND VERIFY, PRE-FETCH and READ DEFECT DATA through the
kernel initiator with sg3-utils, on fileio (a file) and blockio (a RAM
disk): the medium is really read back and compared, a miscompare says
where, and the data written by WRITE AND VERIFY is what reads back."""

import os

import pytest

from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, run

BS = 512
MISCOMPARE_EXIT = 14        # sg3-utils' SG_LIB_CAT_MISCOMPARE


@pytest.fixture(params=["fileio", "blockio"])
def sd(request, ietd, backing, initiator):
    if request.param == "fileio":
        path = str(backing("verify", 16 * MiB))
    else:
        path = request.getfixturevalue("brd").dev
    name = iqn(f"verify-{request.param}")
    ietd(Target(name, [Lun(0, path, type=request.param)]))
    return initiator.login(name).disk(0)


def write_direct(dev, lba, data):
    pwrite_direct(dev, lba * BS, data)


def read_direct(dev, lba, n):
    return pread_direct(dev, lba * BS, n)


def verify(dev, *args):
    cp = run(["sg_verify", *args, dev], check=False)
    return cp.returncode, cp.stdout + cp.stderr


def test_verify_compares_the_medium(sd, tmp_path):
    data = os.urandom(64 * BS)
    write_direct(sd, 100, data)
    f = tmp_path / "data"
    f.write_bytes(data)

    assert verify(sd, "--lba=100", "--count=64")[0] == 0          # BYTCHK 0
    for sixteen in ([], ["--16"]):
        rc, out = verify(sd, *sixteen, "--lba=100", "--count=64",
                         f"--ndo={len(data)}", f"--in={f}")
        assert rc == 0, out

    bad = bytearray(data)
    bad[12345] ^= 0x5a
    f.write_bytes(bytes(bad))
    rc, out = verify(sd, "--lba=100", "--count=64", f"--ndo={len(data)}",
                     f"--in={f}", "-v")
    assert rc == MISCOMPARE_EXIT, out
    # The INFORMATION field: the offset of the first byte that differs.
    assert "12345" in out or "0x3039" in out.lower(), out


def test_verify_bytchk_3_compares_one_block_with_each(sd, tmp_path):
    block = os.urandom(BS)
    write_direct(sd, 300, block * 16)
    f = tmp_path / "block"
    f.write_bytes(block)
    rc, out = verify(sd, "--lba=300", "--count=16", "--ebytchk=3",
                     f"--ndo={BS}", f"--in={f}")
    assert rc == 0, out
    write_direct(sd, 310, os.urandom(BS))
    rc, out = verify(sd, "--lba=300", "--count=16", "--ebytchk=3",
                     f"--ndo={BS}", f"--in={f}")
    assert rc == MISCOMPARE_EXIT, out


def test_verify_refuses_what_it_cannot_do(sd, tmp_path):
    blocks = int(run(["blockdev", "--getsz", sd]).stdout)
    rc, out = verify(sd, f"--lba={blocks - 1}", "--count=2")
    assert rc != 0 and "out of range" in out.lower(), out
    rc, out = verify(sd, "--lba=0", "--count=1", "--vrprotect=1")
    assert rc != 0 and "bad field in verify(10) cdb" in out.lower(), out
    rc, out = verify(sd, "--lba=0", "--count=1", "--ebytchk=2",
                     f"--ndo={BS}", "--0")
    assert rc != 0 and "bad field in verify(10) cdb" in out.lower(), out


@pytest.mark.short
def test_write_and_verify_writes_what_reads_back(sd, tmp_path):
    for sixteen, lba in (([], 500), (["--16"], 600)):
        data = os.urandom(8 * BS)
        f = tmp_path / "wv"
        f.write_bytes(data)
        for bytchk in ("0", "1"):
            cp = run(["sg_write_verify", *sixteen, f"--lba={lba}", "--num=8",
                      f"--bytchk={bytchk}", f"--in={f}", sd], check=False)
            assert cp.returncode == 0, cp.stdout + cp.stderr
        assert read_direct(sd, lba, 8 * BS) == data


def test_prefetch_and_read_defect_data(sd):
    blocks = int(run(["blockdev", "--getsz", sd]).stdout)
    for cdb in ("34 00 00 00 00 00 00 00 10 00",
                "90 02 00 00 00 00 00 00 00 00 00 00 00 10 00 00"):
        cp = run(["sg_raw", "-v", sd, *cdb.split()], check=False)
        assert cp.returncode == 0, cp.stdout + cp.stderr
    past = f"{blocks:08x}"
    cdb = ["34", "00", past[0:2], past[2:4], past[4:6], past[6:8],
           "00", "00", "01", "00"]
    cp = run(["sg_raw", "-v", sd, *cdb], check=False)
    assert cp.returncode != 0 and "out of range" in (cp.stdout + cp.stderr).lower()

    # Both lists asked for, in the bytes-from-index format: valid and empty.
    cp = run(["sg_raw", "-r", "64", sd, "37", "00", "1c", "00", "00", "00",
              "00", "00", "40", "00"])
    out = cp.stdout + cp.stderr     # sg_raw reports on stderr
    assert "Received 4 bytes" in out and "00 1c 00 00" in out, out
    cp = run(["sg_raw", "-r", "64", sd, "b7", "1c", "00", "00", "00", "00",
              "00", "00", "00", "40", "00", "00"])
    out = cp.stdout + cp.stderr
    assert "Received 8 bytes" in out and "00 1c 00 00 00 00 00 00" in out, out
