# SPDX-License-Identifier: GPL-2.0
"""Thin provisioning on a fileio LUN over a sparse file, through the kernel
initiator: Linux turns discard on by itself from what the target reports,
UNMAP and WRITE SAME with UNMAP punch holes that give the space back and
read as zeros, GET LBA STATUS reports them, WRITE SAME writes its block to
every block, and ext4 with discard and fstrim keeps its data intact -- on
that file and on a blockio LUN over a thin LVM volume, whose pool gets the
space back."""

import glob
import hashlib
import os
from pathlib import Path

import pytest

from vmlib import volumes
from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, run

BS = 512
SIZE = 64 * MiB


@pytest.fixture
def thin(ietd, backing, initiator):
    """(the disk, its backing file)"""
    path = backing("thin", SIZE)
    name = iqn("thin")
    ietd(Target(name, [Lun(0, str(path))]))
    return initiator.login(name).disk(0), path


def allocated(path):
    return os.stat(path).st_blocks * 512


def lba_status(dev, lba):
    """sg_get_lba_status --brief: [(lba, blocks, status)]"""
    out = run(["sg_get_lba_status", "--brief", "--maxlen=1024", f"--lba={lba}",
               dev]).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].startswith("0x"):
            rows.append((int(f[0], 16), int(f[1], 16), int(f[2])))
    assert rows, out
    return rows


@pytest.mark.short
def test_linux_sees_a_thin_disk_and_discard_gives_space_back(thin):
    sd, path = thin
    disk = os.path.basename(sd)
    mode = glob.glob(f"/sys/block/{disk}/device/scsi_disk/*/provisioning_mode")
    assert mode and Path(mode[0]).read_text().strip() == "unmap"
    assert int(Path(f"/sys/block/{disk}/queue/discard_max_bytes").read_text()) > 0
    out = run(["sg_readcap", "--16", sd]).stdout
    assert "lbpme=1, lbprz=1" in out, out

    data = os.urandom(32 * MiB)
    pwrite_direct(sd, 0, data)
    assert allocated(path) >= 32 * MiB
    run(["blkdiscard", sd])
    assert allocated(path) < 1 * MiB, allocated(path)
    assert pread_direct(sd, 0, 1 * MiB) == bytes(MiB)


def test_unmap_and_get_lba_status(thin):
    sd, path = thin
    pwrite_direct(sd, 2048 * BS, os.urandom(MiB))
    rows = lba_status(sd, 2048)
    assert rows[0][0] == 2048 and rows[0][2] == 0, rows          # mapped
    assert rows[0][1] >= 2048, rows

    run(["sg_unmap", "--force", "--lba=2048", "--num=1024", sd])
    rows = lba_status(sd, 2048)
    assert rows[0] == (2048, 1024, 1), rows                       # deallocated
    assert rows[1][0] == 3072 and rows[1][2] == 0, rows
    assert pread_direct(sd, 2048 * BS, 1024 * BS) == bytes(1024 * BS)

    # Beyond the end: the whole list is refused, nothing is unmapped.
    blocks = SIZE // BS
    cp = run(["sg_unmap", "--force", "--lba=3072,0", f"--num=8,{blocks + 1}", sd],
             check=False)
    assert cp.returncode != 0 and "out of range" in (cp.stdout + cp.stderr).lower()
    assert lba_status(sd, 3072)[0][2] == 0


@pytest.mark.short
def test_write_same_writes_its_block_everywhere_or_unmaps(thin, tmp_path):
    sd, path = thin
    block = os.urandom(BS)
    f = tmp_path / "block"
    f.write_bytes(block)
    for ws in (["--10"], ["--16"]):
        run(["sg_write_same", *ws, f"--in={f}", "--lba=4096", "--num=300", sd])
        assert pread_direct(sd, 4096 * BS, 300 * BS) == block * 300

    # With UNMAP and a block of zeros: a hole, which reads as zeros.
    before = allocated(path)
    run(["sg_write_same", "--16", "--unmap", "--lba=4096", "--num=2048", sd])
    assert allocated(path) < before
    assert lba_status(sd, 4096)[0][:3:2] == (4096, 1)
    assert pread_direct(sd, 4096 * BS, 300 * BS) == bytes(300 * BS)
    # NDOB: no data out at all.
    pwrite_direct(sd, 8192 * BS, os.urandom(64 * BS))
    run(["sg_write_same", "--16", "--ndob", "--lba=8192", "--num=64", sd])
    assert pread_direct(sd, 8192 * BS, 64 * BS) == bytes(64 * BS)


@pytest.fixture
def thin_lv(tmp_path):
    """A 64 MiB thin LVM volume in a 96 MiB pool of 64 KiB chunks."""
    with volumes.loop_devices(tmp_path, [128 * MiB]) as [pv], \
            volumes.thin_volume(pv, 96, SIZE // MiB) as lv:
        yield lv


@pytest.fixture(params=["fileio-sparse-file",
                        pytest.param("blockio-thin-lv", marks=pytest.mark.short)])
def thin_any(request):
    """(the disk, a function giving what its storage has allocated): a
    fileio LUN over a sparse file, or a blockio LUN over a thin LVM volume
    that says how coarsely it deallocates."""
    if request.param == "fileio-sparse-file":
        sd, path = request.getfixturevalue("thin")
        return sd, lambda: allocated(path)
    # The volume first: it must outlive the module, which holds it open.
    lv = request.getfixturevalue("thin_lv")
    name = iqn("thin-lv")
    request.getfixturevalue("ietd")(Target(name, [Lun(0, lv, type="blockio")]))
    sd = request.getfixturevalue("initiator").login(name).disk(0)
    disk = os.path.basename(sd)
    gran = int(Path(f"/sys/block/{disk}/queue/discard_granularity").read_text())
    assert gran == 64 * 1024, f"discard_granularity {gran}: not the pool's chunk"
    return sd, volumes.thin_mapped_bytes


def test_ext4_with_discard_and_fstrim_keeps_data_and_frees_space(thin_any, tmp_path):
    sd, in_use = thin_any
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run(["mkfs.ext4", "-q", "-F", sd], timeout=120)
    run(["mount", "-o", "discard", sd, str(mnt)])
    try:
        keep = os.urandom(4 * MiB)
        (mnt / "keep").write_bytes(keep)
        (mnt / "gone").write_bytes(os.urandom(24 * MiB))
        run(["sync"])
        full = in_use()
        assert full >= 28 * MiB, full
        (mnt / "gone").unlink()
        run(["sync"])
        run(["fstrim", "-v", str(mnt)])
        assert in_use() <= full - 16 * MiB, (full, in_use())
    finally:
        run(["umount", str(mnt)])
    run(["e2fsck", "-fn", sd], timeout=120)
    run(["mount", "-o", "ro", sd, str(mnt)])
    try:
        got = (mnt / "keep").read_bytes()
        assert hashlib.sha256(got).digest() == hashlib.sha256(keep).digest()
    finally:
        run(["umount", str(mnt)])
