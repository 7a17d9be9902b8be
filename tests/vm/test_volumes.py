# SPDX-License-Identifier: GPL-2.0
"""What administrators export: an LVM logical volume and an MD RAID1 array,
with blockio and with fileio, under fio with verification and ext4; blockio
leaves the page cache alone; and a volume grown while the initiator stays
logged in (Proxmox VE's resize: delete the LUN, add it back) shows its new
size, with CAPACITY DATA HAS CHANGED and the data intact."""

import hashlib
import time
from pathlib import Path

import pytest

from ietlib import ietadm
from vmlib import fio, fs, kmsg, storage, volumes
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, read, wait_until

REGION = 4 * MiB
LV_MIB = 64
GROWN_MIB = 96
DATA = 16 * MiB                 # written before a resize, checked after
COMBOS = [fio.Combo("4k", "randwrite", 32), fio.Combo("128k", "write", 8)]


def exercise(disk, name, tmp_path):
    """fio with verification, then ext4 written, read back cold and fscked."""
    result = fio.run_fio(fio.job_file(disk, COMBOS, REGION), name)
    result.assert_clean(COMBOS)
    mnt = tmp_path / "mnt"
    fs.mkfs_ext4(disk)
    files = {"small": 5000, "odd": 1 * MiB + 77, "large": 6 * MiB}
    with fs.mounted(disk, mnt):
        written = fs.write_files(mnt, files)
    storage.drop_caches()
    with fs.mounted(disk, mnt):
        assert fs.checksums(mnt, written) == written
    cp = fs.fsck(disk)
    assert cp.returncode == 0, f"e2fsck found problems:\n{cp.stdout}{cp.stderr}"


# Listed before ietd in a test's arguments, a volume outlives the target.
@pytest.fixture
def logical_volume(tmp_path):
    """A 64 MiB LVM logical volume on a 128 MiB physical volume."""
    with volumes.loop_devices(tmp_path, [128 * MiB]) as [pv], \
            volumes.logical_volume(pv, LV_MIB) as lv:
        yield lv


@pytest.fixture
def raid1_array(tmp_path):
    """An MD RAID1 array of two 64 MiB loop devices."""
    with volumes.loop_devices(tmp_path, [64 * MiB, 64 * MiB]) as devs, \
            volumes.raid1(devs) as md:
        yield md


@pytest.mark.parametrize("lun_type", ["blockio", "fileio"])
def test_lvm_logical_volume_serves_fio_and_ext4(logical_volume, ietd, initiator, tmp_path,
                                                request, lun_type):
    name = iqn(f"lvm-{lun_type}")
    ietd(Target(name, [Lun(0, logical_volume, type=lun_type)]))
    disk = initiator.login(name).disk(0)
    assert storage.blockdev_size(disk) == LV_MIB * MiB
    exercise(disk, request.node.name, tmp_path)


@pytest.mark.parametrize("lun_type", ["blockio", "fileio"])
def test_md_raid1_array_serves_fio_and_ext4(raid1_array, ietd, initiator, tmp_path, request,
                                            lun_type):
    name = iqn(f"md-{lun_type}")
    ietd(Target(name, [Lun(0, raid1_array, type=lun_type)]))
    disk = initiator.login(name).disk(0)
    exercise(disk, request.node.name, tmp_path)


def block_device_cache():
    """Bytes of block devices' page cache (Buffers in /proc/meminfo): the
    target's fileio on brd fills it, the initiator's O_DIRECT I/O does not."""
    for line in read("/proc/meminfo").splitlines():
        if line.startswith("Buffers:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no Buffers in /proc/meminfo")


@pytest.mark.parametrize("lun_type", ["blockio", "fileio"])
def test_only_fileio_fills_the_backing_devices_page_cache(ietd, initiator, brd, request,
                                                          lun_type):
    name = iqn(f"cache-{lun_type}")
    ietd(Target(name, [Lun(0, brd.dev, type=lun_type)]))
    disk = initiator.login(name).disk(0)
    storage.drop_caches()
    before = block_device_cache()
    combos = [fio.Combo("128k", "write", 8), fio.Combo("128k", "randwrite", 8)]
    fio.run_fio(fio.job_file(disk, combos, 16 * MiB), request.node.name).assert_clean(combos)
    cached = block_device_cache() - before
    print(f"{lun_type}: block device cache grew by {cached >> 10} KiB while 64 MiB went "
          f"through {brd.dev}")
    if lun_type == "blockio":
        assert cached < 2 * MiB, f"{cached} bytes entered the page cache through blockio"
    else:
        # The control: the same I/O through fileio is cached, so the
        # measurement above can see a cache when there is one.
        assert cached >= 16 * MiB, f"only {cached} bytes cached through fileio"


def sha256_of(disk, nbytes):
    h = hashlib.sha256()
    with open(disk, "rb") as f:
        left = nbytes
        while left:
            chunk = f.read(min(left, MiB))
            assert chunk, f"{disk} ended early"
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


@pytest.mark.parametrize("lun_type", ["blockio", "fileio"])
def test_grown_volume_shows_its_new_size_after_the_lun_is_added_back(logical_volume, ietd,
                                                                      initiator, lun_type):
    lv = logical_volume
    name = iqn(f"resize-{lun_type}")
    ietd(Target(name, [Lun(0, lv, type=lun_type)]))
    disk = initiator.login(name).disk(0)
    storage.random_file(disk, DATA)
    storage.drop_caches()
    before = sha256_of(disk, DATA)
    log = kmsg.KernelLog()

    volumes.lvextend(lv, GROWN_MIB)
    # Proxmox VE's IET provider: delete the LUN, add it with the same path.
    ietadm("--op", "delete", f"--tid={name}", "--lun=0")
    ietadm("--op", "new", f"--tid={name}", "--lun=0", f"--params=Path={lv},Type={lun_type}")

    # The rescan's commands meet the unit attention, then read the size.
    Path(f"/sys/block/{Path(disk).name}/device/rescan").write_text("1\n")
    wait_until(lambda: storage.blockdev_size(disk) == GROWN_MIB * MiB, 60,
               lambda: f"{disk} to show {GROWN_MIB} MiB (shows {storage.blockdev_size(disk)})")
    time.sleep(1)
    lines = log.new_lines()
    log.close()
    assert any("Capacity data has changed" in ln for ln in lines), \
        "the initiator was not told CAPACITY DATA HAS CHANGED:\n" + "\n".join(lines[-30:])
    storage.drop_caches()
    assert sha256_of(disk, DATA) == before, "the data changed across the resize"
