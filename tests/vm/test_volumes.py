# SPDX-License-Identifier: GPL-2.0
"""What administrators export: an LVM logical volume and an MD RAID1 array,
with blockio and with fileio, under fio with verification and ext4; blockio
leaves the page cache alone; and a volume grown while the initiator stays
logged in (Proxmox VE's resize: delete the LUN, add it back) shows its new
size, with CAPACITY DATA HAS CHANGED and the data intact; and a live LUN
resized in place by ietadm (Resize=backing, Size=) under fio verify, its
registrations kept, every way a resize can be wrong refused with its reason
and nothing changed."""

import hashlib
import os
import time
from pathlib import Path

import pytest

from ietlib import ietadm
from vmlib import fio, fs, kmsg, proc, storage, volumes
from vmlib.pr import keys, persist
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, MiB, read, wait_until

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


def lun_blocks(name, n=0):
    """LUN n's size in blocks as /proc/net/iet/volume says."""
    t = proc.target(proc.volumes(), name)
    return next(lun.blocks for lun in t.luns if lun.lun == n)


def resize(name, params, check=True):
    return ietadm("--op", "update", f"--tid={name}", "--lun=0", f"--params={params}",
                  check=check)


def refused(name, params, why):
    cp = resize(name, params, check=False)
    assert cp.returncode != 0, f"{params}: accepted"
    assert why in cp.stderr, f"{params}: {cp.stderr}"


@pytest.fixture
def growable(request, tmp_path, backing):
    """(path, type, grow): a 64 MiB blockio LUN's logical volume, which
    ietd follows by itself once it grows, or a fileio LUN's file, which
    ietadm's Size= grows; grow() makes it GROWN_MIB."""
    if request.param == "fileio":
        yield (str(backing("growable", LV_MIB * MiB)), "fileio",
               lambda: resize(NAME_GROW, f"Size={GROWN_MIB}M"))
        return
    with volumes.loop_devices(tmp_path, [128 * MiB]) as [pv], \
            volumes.logical_volume(pv, LV_MIB) as lv:
        # The kernel's uevent of the volume's change is all ietd hears.
        yield lv, "blockio", lambda: volumes.lvextend(lv, GROWN_MIB)


NAME_GROW = iqn("grow")


@pytest.mark.parametrize("growable", ["blockio", "fileio"], indirect=True)
def test_a_live_lun_grows_in_place_under_fio_verify_and_keeps_its_reservation(
        growable, ietd, initiator):
    path, lun_type, grow = growable
    name = NAME_GROW
    ietd(Target(name, [Lun(0, path, type=lun_type)]))
    disk = initiator.login(name).disk(0)
    persist(disk, "--out", "--register", "--param-sark=0x1e7")
    persist(disk, "--out", "--reserve", "--param-rk=0x1e7", "--prout-type=5")
    log = kmsg.KernelLog()
    # Random 4 KiB writes over the whole LUN as it was, each pass
    # verified: the resize lands in the middle of it.
    job = RESULTS / f"fio-grow-{lun_type}.fio"
    job.write_text("\n".join([
        "[grow]", f"filename={disk}", "ioengine=libaio", "direct=1", "rw=randwrite",
        "bs=4k", "iodepth=16", f"size={LV_MIB}M", "loops=2", "do_verify=1",
        "verify=crc32c", "verify_fatal=1"]) + "\n")
    out = RESULTS / f"fio-grow-{lun_type}.log"
    runner = fio.start_fio([str(job)], out)
    try:
        time.sleep(1)
        grow()
        assert runner.poll() is None, "fio ended before the resize: " + out.read_text()
        wait_until(lambda: lun_blocks(name) == GROWN_MIB * MiB // 512, 30,
                   lambda: f"the LUN to follow its {lun_type} backing "
                   f"(has {lun_blocks(name)} blocks)")
        Path(f"/sys/block/{Path(disk).name}/device/rescan").write_text("1\n")
        wait_until(lambda: storage.blockdev_size(disk) == GROWN_MIB * MiB, 60,
                   lambda: f"{disk} to show {GROWN_MIB} MiB (shows {storage.blockdev_size(disk)})")
        rc = runner.wait(timeout=600)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert rc == 0, f"fio verify failed across the resize:\n{out.read_text()}"
    lines = log.new_lines()
    log.close()
    assert any("Capacity data has changed" in ln for ln in lines), \
        "the initiator was not told CAPACITY DATA HAS CHANGED:\n" + "\n".join(lines[-30:])
    # The same LUN: its registration and reservation are where they were.
    assert keys(disk) == [0x1e7]
    assert "Write Exclusive, registrants only" in \
        persist(disk, "--in", "--read-reservation").stdout
    # What was grown is there to write and read back.
    top = (GROWN_MIB - 1) * MiB
    data = os.urandom(MiB)
    storage.pwrite_direct(disk, top, data)
    assert storage.pread_direct(disk, top, MiB) == data


def test_a_file_lun_is_resized_by_size_and_refuses_to_drop_data(ietd, initiator, backing):
    path = backing("sized", 16 * MiB)
    ro = backing("sized-ro", 16 * MiB)
    name = iqn("sized")
    ietd(Target(name, [Lun(0, str(path)), Lun(1, str(ro), params={"IOMode": "ro"})]))
    disk = initiator.login(name).disk(0)
    # Grown: the file (sparse) and the LUN, in place.
    resize(name, "Size=32M")
    assert path.stat().st_size == 32 * MiB
    assert path.stat().st_blocks * 512 < 16 * MiB, "the grown part was allocated"
    assert lun_blocks(name) == 32 * MiB // 512
    Path(f"/sys/block/{Path(disk).name}/device/rescan").write_text("1\n")
    wait_until(lambda: storage.blockdev_size(disk) == 32 * MiB, 60,
               lambda: f"{disk} to show 32 MiB (shows {storage.blockdev_size(disk)})")
    data = os.urandom(MiB)
    storage.pwrite_direct(disk, 30 * MiB, data)
    # Cut short past written data: refused without Force, nothing changed.
    refused(name, "Size=24M", "data is written past the new end: Force=Yes drops it")
    assert path.stat().st_size == 32 * MiB and lun_blocks(name) == 32 * MiB // 512
    assert storage.pread_direct(disk, 30 * MiB, MiB) == data
    # Past holes only: cut without asking; past data with Force=Yes.
    resize(name, "Blocks=65536")
    assert path.stat().st_size == 32 * MiB
    resize(name, "Size=31M")
    assert path.stat().st_size == 31 * MiB
    resize(name, "Size=20M,Force=Yes")
    assert path.stat().st_size == 20 * MiB and lun_blocks(name) == 20 * MiB // 512
    # A file grown by another tool: followed when asked.
    os.truncate(path, 24 * MiB)
    resize(name, "Resize=backing")
    assert lun_blocks(name) == 24 * MiB // 512
    resize(name, "Size=20M")
    # Every way to ask wrong: its reason, and the LUN as it was.
    refused(name, "Size=1000", "not a whole number of 512-byte blocks")
    refused(name, "Size=0", "Size:")
    refused(name, "Blocks=0", "Blocks:")
    refused(name, "Size=9T,Resize=backing", "one of Size=")
    refused(name, "Force=Yes", "one of Size=")
    refused(name, "Resize=grow", "the only value is")
    refused(name, "Size=9000000T", "Size:")
    refused(name, "Blocks=18014398509481984", "Blocks:")
    cp = ietadm("--op", "update", f"--tid={name}", "--lun=1", "--params=Size=32M",
                check=False)
    assert cp.returncode != 0 and "a read-only LUN's file keeps its size" in cp.stderr, \
        cp.stderr
    assert ro.stat().st_size == 16 * MiB
    cp = ietadm("--op", "update", f"--tid={name}", "--lun=3", "--params=Size=1M", check=False)
    assert cp.returncode != 0 and "no LUN 3" in cp.stderr, cp.stderr
    assert path.stat().st_size == 20 * MiB and lun_blocks(name) == 20 * MiB // 512


def test_a_volume_lun_follows_its_device_and_refuses_a_size_of_its_own(logical_volume, ietd):
    lv = logical_volume
    name = iqn("shrunk")
    ietd(Target(name, [Lun(0, lv, type="blockio"),
                       Lun(1, None, type="nullio", params={"Blocks": 2048})]))
    refused(name, "Size=128M", "a block device keeps its own size")
    volumes.lvm("lvreduce", "-f", "-L", "32m", lv)
    # The device shrank: followed only when told what that means.
    refused(name, "Resize=backing",
            "the backing is smaller than the LUN: Force=Yes follows it")
    assert lun_blocks(name) == LV_MIB * MiB // 512
    resize(name, "Resize=backing,Force=Yes")
    assert lun_blocks(name) == 32 * MiB // 512
    # A nullio LUN only reports a size; it has no backing to follow.
    cp = ietadm("--op", "update", f"--tid={name}", "--lun=1", "--params=Resize=backing",
                check=False)
    assert cp.returncode != 0 and "a nullio LUN has no backing" in cp.stderr, cp.stderr
    ietadm("--op", "update", f"--tid={name}", "--lun=1", "--params=Size=4M")
    assert lun_blocks(name, 1) == 4 * MiB // 512


# A defect a review found: the debug kernel runs it.
@pytest.mark.guard
def test_writes_in_flight_at_the_end_are_never_lost_to_a_shrink_nor_land_past_it(
        ietd, initiator, backing):
    path = backing("shrink", 32 * MiB)
    name = iqn("shrink")
    ietd(Target(name, [Lun(0, str(path))]))
    disk = initiator.login(name).disk(0)
    # Written there before the writes at depth begin, however slow the
    # guest is to start them.
    storage.pwrite_direct(disk, 30 * MiB, os.urandom(MiB))
    # Writes at depth over the last 2 MiB, for as long as the test needs.
    job = RESULTS / "fio-shrink.fio"
    job.write_text("\n".join([
        "[tail]", f"filename={disk}", "ioengine=libaio", "direct=1", "rw=randwrite",
        "bs=4k", "iodepth=16", f"offset={30 * MiB}", f"size={2 * MiB}", "time_based=1",
        "runtime=40"]) + "\n")
    out = RESULTS / "fio-shrink.log"
    runner = fio.start_fio([str(job)], out)
    try:
        time.sleep(2)
        # Written there, and being written: refused, again and again,
        # while the writes go on.
        for _ in range(10):
            refused(name, "Size=16M", "data is written past the new end")
        assert runner.poll() is None, "the writes failed: " + out.read_text()
        assert path.stat().st_size == 32 * MiB and lun_blocks(name) == 32 * MiB // 512
        # Forced: the writes past the end fail from now on, none lands there.
        resize(name, "Size=16M,Force=Yes")
        assert lun_blocks(name) == 16 * MiB // 512
        runner.wait(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode != 0, "fio wrote past the end without an error"
    assert "Input/output error" in out.read_text() or "err=" in out.read_text(), \
        out.read_text()
    time.sleep(1)
    assert path.stat().st_size == 16 * MiB, \
        f"a write landed past the end: the file is {path.stat().st_size} bytes"
