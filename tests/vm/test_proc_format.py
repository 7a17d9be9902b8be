# SPDX-License-Identifier: GPL-2.0
"""/proc/net/iet/volume and /proc/net/iet/session keep IET's exact formats
(COMPAT.md): monitoring scripts and cluster agents parse them with regular
expressions. The session and connection lines are checked with a live
session in test_login.py."""

from vmlib import proc
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB


def three_targets(backing):
    """A target with a fileio and a nullio LUN, one with a read-only 4k-block
    LUN numbered 3, and one with no LUN at all."""
    disk = str(backing("disk", 64 * MiB))
    ro = str(backing("ro", 64 * MiB))
    targets = [
        Target(iqn("disk"), [Lun(0, disk), Lun(1, type="nullio", params={"Blocks": 4096})]),
        Target(iqn("ro4k"), [Lun(3, ro, params={"IOMode": "ro", "BlockSize": 4096})]),
        Target(iqn("empty")),
    ]
    return targets, disk, ro


def test_proc_files_are_empty_without_targets(kmod):
    assert proc.VOLUME.read_text() == ""
    assert proc.SESSION.read_text() == ""


def test_volume_lists_targets_in_file_order_with_tids_from_1(kmod, ietd, backing):
    targets, _, _ = three_targets(backing)
    ietd(*targets)
    assert [(t.tid, t.name) for t in proc.volumes()] == \
        [(1, iqn("disk")), (2, iqn("ro4k")), (3, iqn("empty"))]


def test_volume_lun_lines_show_type_mode_size_and_path(kmod, ietd, backing):
    targets, disk, ro = three_targets(backing)
    ietd(*targets)
    disk_t, ro_t, _ = proc.volumes()
    assert disk_t.luns == [
        proc.Lun(lun=0, state=0, iotype="fileio", iomode="wt", blocks=131072, blocksize=512, path=disk),
        proc.Lun(lun=1, state=0, iotype="nullio", iomode="wt", blocks=4096, blocksize=512, path=None),
    ]
    assert ro_t.luns == [
        proc.Lun(lun=3, state=0, iotype="fileio", iomode="ro", blocks=16384, blocksize=4096, path=ro),
    ]


def test_volume_prints_the_tid_line_of_a_target_without_luns(kmod, ietd, backing):
    targets, _, _ = three_targets(backing)
    ietd(*targets)
    assert proc.VOLUME.read_text().splitlines()[-1] == f"tid:3 name:{iqn('empty')}"


def test_session_prints_every_target_without_sessions(kmod, ietd, backing):
    targets, _, _ = three_targets(backing)
    ietd(*targets)
    assert proc.SESSION.read_text() == \
        f"tid:1 name:{iqn('disk')}\ntid:2 name:{iqn('ro4k')}\ntid:3 name:{iqn('empty')}\n"
