# SPDX-License-Identifier: GPL-2.0
"""What administrators export: LVM logical volumes and MD RAID1 arrays, on
loop devices over sparse files (so they never collide with the brd disk)."""

import contextlib
import os
import shutil
from pathlib import Path

from . import storage
from .util import run

# No udev synchronisation (the guest's udev may be slow), only our loops.
LVM_CONFIG = ('devices { filter=["a|^/dev/loop|","r|.*|"] } '
              'activation { udev_sync=0 udev_rules=0 }')
LVM_ENV = dict(os.environ, LVM_SUPPRESS_FD_WARNINGS="1", DM_DISABLE_UDEV="1")


def lvm(*args, check=True):
    return run(["lvm", args[0], "--config", LVM_CONFIG, *args[1:]], check=check,
               timeout=120, env=LVM_ENV)


@contextlib.contextmanager
def loop_devices(tmpdir, sizes):
    """Loop devices over sparse files, detached at the end."""
    run(["modprobe", "loop"], check=False)
    devs = []
    try:
        for i, size in enumerate(sizes):
            f = storage.sparse_file(Path(tmpdir) / f"loop{i}.img", size)
            devs.append(run(["losetup", "--find", "--show", str(f)]).stdout.strip())
        yield devs
    finally:
        for d in devs:
            run(["losetup", "-d", d], check=False)


@contextlib.contextmanager
def logical_volume(pv, size_mib, vg="ietvg", lv="ietlv"):
    """/dev/VG/LV of size_mib on the physical volume pv; removed at the end."""
    Path("/run/lock/lvm").mkdir(parents=True, exist_ok=True)
    lvm("pvcreate", "-ff", "-y", pv)
    lvm("vgcreate", vg, pv)
    try:
        lvm("lvcreate", "-y", "-Wy", "-Zy", "-L", f"{size_mib}m", "-n", lv, vg)
        path = f"/dev/{vg}/{lv}"
        # Without udev the node may have to be made by hand.
        lvm("vgmknodes", vg)
        yield path
    finally:
        # Left behind, the volume would hold its loop device for good.
        lvm("vgremove", "-ff", "-y", vg)
        lvm("pvremove", "-ff", "-y", pv)
        # Without udev, nobody else removes the volume group's directory.
        shutil.rmtree(f"/dev/{vg}", ignore_errors=True)


@contextlib.contextmanager
def thin_volume(pv, pool_mib, size_mib, vg="ietvg", lv="ietthin"):
    """/dev/VG/LV: a thin volume of size_mib in a pool of pool_mib on the
    physical volume pv (64 KiB chunks, discards passed down); removed at the
    end."""
    Path("/run/lock/lvm").mkdir(parents=True, exist_ok=True)
    run(["modprobe", "dm-thin-pool"], check=False)
    lvm("pvcreate", "-ff", "-y", pv)
    lvm("vgcreate", vg, pv)
    try:
        lvm("lvcreate", "-y", "--type", "thin-pool", "-L", f"{pool_mib}m",
            "--chunksize", "64k", "--discards", "passdown", "-n", "pool", vg)
        lvm("lvcreate", "-y", "-V", f"{size_mib}m", "-T", f"{vg}/pool", "-n", lv)
        # It makes the thin volume's node but fails (5) on the pool's spare.
        cp = lvm("vgmknodes", vg, check=False)
        path = f"/dev/{vg}/{lv}"
        assert Path(path).exists(), f"vgmknodes: no {path}: {cp.stderr}"
        yield path
    finally:
        lvm("vgremove", "-ff", "-y", vg)
        lvm("pvremove", "-ff", "-y", pv)
        shutil.rmtree(f"/dev/{vg}", ignore_errors=True)


def thin_mapped_bytes(vg="ietvg", lv="ietthin"):
    """What a thin volume has allocated in its pool (dmsetup status: thin
    MAPPED_SECTORS HIGHEST_MAPPED)."""
    f = run(["dmsetup", "status", f"{vg}-{lv}"], env=LVM_ENV).stdout.split()
    assert f[2] == "thin", f
    return int(f[3]) * 512


def lvextend(path, size_mib):
    lvm("lvextend", "-L", f"{size_mib}m", path)


@contextlib.contextmanager
def raid1(devs, name="/dev/md/ietr1"):
    """An MD RAID1 array of devs (created clean: no resync competes)."""
    run(["mdadm", "--create", name, "--run", "--level=1", "--metadata=1.2",
         "--assume-clean", f"--raid-devices={len(devs)}", *devs], timeout=120)
    try:
        yield name
    finally:
        run(["mdadm", "--stop", name], timeout=120)
        for d in devs:
            run(["mdadm", "--zero-superblock", d])
