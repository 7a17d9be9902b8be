# SPDX-License-Identifier: GPL-2.0
"""A file system lives on the target: ext4 made, filled, read back from the
target (caches dropped, remounted) and found clean by e2fsck."""

import pytest

from vmlib import fs, storage
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB

pytestmark = pytest.mark.short


def test_ext4_files_read_back_intact_and_fsck_is_clean(ietd, backing, initiator, tmp_path):
    name = iqn("ext4")
    ietd(Target(name, [Lun(0, str(backing("ext4", 128 * MiB)))]))
    disk = initiator.login(name).disk(0)
    mnt = tmp_path / "mnt"

    fs.mkfs_ext4(disk)
    with fs.mounted(disk, mnt):
        written = fs.write_files(mnt)
    storage.drop_caches()
    with fs.mounted(disk, mnt):
        assert fs.checksums(mnt, written) == written

    cp = fs.fsck(disk)
    assert cp.returncode == 0, f"e2fsck -f -n found problems:\n{cp.stdout}{cp.stderr}"
