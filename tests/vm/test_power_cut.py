# SPDX-License-Identifier: GPL-2.0
"""Power cut, proven. The LUN's storage sits on device-mapper's log-writes
target, which logs each write once a flush covers it or it was FUA: the log
up to any entry is what the disk would hold had the power gone then, with
its volatile cache lost. From the kernel initiator, threads write numbered
patterns (O_DIRECT, random offsets and sizes, some RWF_DSYNC, which the
initiator sends as FUA where the LUN has a write cache), in batches; after
each batch (and, in wb, after a SYNCHRONIZE CACHE every third batch) a mark
goes into the log. The log is then replayed to every mark and to flush and
FUA points between them, and each image must hold every write the target
promised: in wt every write acknowledged before the mark, in wb every FUA
write and every write a completed SYNCHRONIZE CACHE covered. For fileio the
LUN is a file on ext4 on the logged device: each image must also pass
e2fsck and keep the file's size.

IET_POWERCUT_BATCHES (default 6) and IET_POWERCUT_CUTS (default 10, sized
for make check's hour) make a long run."""

import mmap
import os
import random
import shutil
import threading
import zlib
from pathlib import Path

import pytest

from ietlib import ietadm
from vmlib import logwrites
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, RESULTS, run

BATCHES = int(os.environ.get("IET_POWERCUT_BATCHES", "6"))
CUTS = int(os.environ.get("IET_POWERCUT_CUTS", "10"))
THREADS = 4
PER_THREAD = 6                  # writes per thread per batch
SLOT = 64 * 1024                # writes never overlap: one per slot
WRITES = BATCHES * THREADS * PER_THREAD
# Room for a slot per write however many batches a long run asks for, and
# for ext4's own blocks around the LUN file.
LUN_FILE_SIZE = max(24 * MiB, WRITES * SLOT)
FS_SIZE = max(64 * MiB, LUN_FILE_SIZE + 40 * MiB)
WORK = Path("/tmp/iet-powercut")


def pattern(seq, length):
    """The bytes of write seq: a stream no other write repeats."""
    return random.Random(seq).randbytes(length)


class Workload:
    """Numbered writes in batches; which the target has promised to keep."""

    def __init__(self, disk, size, wb, seed):
        self.disk = disk
        self.wb = wb
        rnd = random.Random(seed)
        slots = list(range(size // SLOT))
        rnd.shuffle(slots)
        n = WRITES
        assert n <= len(slots), f"{n} writes do not fit {len(slots)} slots"
        # (seq, offset, length, fua)
        self.writes = [(i, slots[i] * SLOT, rnd.randrange(1, SLOT // 4096 + 1) * 4096,
                        rnd.random() < 0.25) for i in range(n)]
        self.promised = []      # per batch: the seqs kept from its mark on
        self.errors = []

    def _thread(self, writes):
        fd = os.open(self.disk, os.O_WRONLY | os.O_DIRECT)
        try:
            for seq, off, length, fua in writes:
                buf = mmap.mmap(-1, length)
                buf.write(pattern(seq, length))
                try:
                    if fua:
                        os.pwritev(fd, [buf], off, os.RWF_DSYNC)
                    else:
                        os.pwrite(fd, buf, off)
                except OSError as e:
                    self.errors.append(f"write {seq} at {off}: {e}")
                buf.close()
        finally:
            os.close(fd)

    def run(self, mark):
        per_batch = THREADS * PER_THREAD
        synced = []             # wb: writes a completed SYNCHRONIZE CACHE covers
        fua = []
        for b in range(BATCHES):
            batch = self.writes[b * per_batch:(b + 1) * per_batch]
            threads = [threading.Thread(target=self._thread, args=(batch[t::THREADS],))
                       for t in range(THREADS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not self.errors, self.errors[:5]
            if self.wb:
                fua += [w[0] for w in batch if w[3]]
                if b % 3 == 2:
                    fd = os.open(self.disk, os.O_WRONLY)
                    os.fsync(fd)        # SYNCHRONIZE CACHE
                    os.close(fd)
                    synced = [w[0] for w in self.writes[:(b + 1) * per_batch]]
                self.promised.append(set(synced) | set(fua))
            else:
                self.promised.append({w[0] for w in self.writes[:(b + 1) * per_batch]})
            mark(f"batch-{b}")


def loop_device(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return run(["losetup", "-f", "--show", str(path)]).stdout.strip()


@pytest.fixture
def logged_device():
    """A LogWrites device over a zeroed loop device, its log on another."""
    if not Path("/sys/module/dm_log_writes").exists():
        cp = run(["modprobe", "dm-log-writes"], check=False)
        if cp.returncode:
            pytest.skip(f"this kernel has no dm-log-writes: {cp.stderr.strip()}")
    run(["modprobe", "loop"], check=False)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    loops = [loop_device(WORK / "base", FS_SIZE), loop_device(WORK / "log", 512 * MiB)]
    lw = logwrites.LogWrites("iet-powercut", loops[0], loops[1]).create()
    try:
        yield lw
    finally:
        run(["umount", str(WORK / "mnt")], check=False)
        lw.remove()
        for dev in loops:
            run(["losetup", "-d", dev], check=False)
        shutil.rmtree(WORK, ignore_errors=True)


def cut_points(entries, first):
    """Every mark after first, and flush and FUA points between, CUTS at most
    in all (the marks always)."""
    marks = [e for e in entries[first:] if e.flags & logwrites.MARK]
    others = [e for e in entries[first:]
              if not e.flags & logwrites.MARK and e.flags & (logwrites.FLUSH | logwrites.FUA)]
    room = max(CUTS - len(marks), 0)
    if others and room:
        step = max(len(others) / room, 1)
        others = [others[int(i * step)] for i in range(min(room, len(others)))]
    else:
        others = []
    return sorted(marks + others, key=lambda e: e.index)


def lun_at_cut(image, fileio):
    """The LUN as the replayed image holds it: the image itself, or the
    LUN file taken out of the ext4 file system once e2fsck recovered it."""
    if not fileio:
        return image
    copy = WORK / "fsck.img"
    shutil.copyfile(image, copy)
    cp = run(["e2fsck", "-fy", str(copy)], check=False)
    assert cp.returncode in (0, 1), f"e2fsck -fy: status {cp.returncode}\n{cp.stdout}"
    cp = run(["e2fsck", "-fn", str(copy)], check=False)
    assert cp.returncode == 0, f"not clean after recovery: e2fsck -fn status {cp.returncode}\n" \
                               f"{cp.stdout}"
    out = WORK / "lun.out"
    out.unlink(missing_ok=True)
    run(["debugfs", "-R", f"dump /lun.img {out}", str(copy)])
    assert out.stat().st_size == LUN_FILE_SIZE, \
        f"the LUN file is {out.stat().st_size} bytes, not {LUN_FILE_SIZE}"
    return out


def lost_writes(path, promised, by_seq):
    """The promised writes path does not hold intact."""
    lost = []
    fd = os.open(path, os.O_RDONLY)
    try:
        for s in sorted(promised):
            _, off, length, _ = by_seq[s]
            if os.pread(fd, length, off) != pattern(s, length):
                lost.append(s)
    finally:
        os.close(fd)
    return lost


@pytest.mark.paths
@pytest.mark.parametrize("mode", ["fileio-wt", "fileio-wb", "blockio-wt", "blockio-wb"])
def test_every_promised_write_survives_a_power_cut(mode, logged_device, kmod, ietd, initiator):
    lun_type, iomode = mode.split("-")
    fileio = lun_type == "fileio"
    lw = logged_device
    if fileio:
        run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
             lw.path])
        mnt = WORK / "mnt"
        mnt.mkdir()
        run(["mount", lw.path, str(mnt)])
        path = mnt / "lun.img"
        with open(path, "wb") as f:
            f.truncate(LUN_FILE_SIZE)
        run(["sync", "-f", str(path)])
        size = LUN_FILE_SIZE
    else:
        path, size = lw.path, FS_SIZE
    lw.mark("setup")
    name = iqn(f"powercut-{mode}")
    ietd(Target(name, [Lun(0, str(path), type=lun_type, params={"IOMode": iomode})]))
    disk = initiator.login(name).disk(0)
    w = Workload(disk, size, iomode == "wb", seed=zlib.crc32(mode.encode()))
    w.run(lw.mark)
    # Everything out of the target and the file system, then the log closed.
    initiator.logout(name)
    ietadm("--op", "delete")
    if fileio:
        run(["umount", str(WORK / "mnt")])
    lw.mark("end")
    lw.remove()
    # The log went to the device by bio: drop what udev's probe cached.
    run(["blockdev", "--flushbufs", lw.logdev])

    ss, entries = logwrites.read_log(lw.logdev)
    byname = {e.mark: e for e in entries if e.mark}
    assert all(f"batch-{b}" in byname for b in range(BATCHES)), sorted(byname)
    assert any(e.flags & (logwrites.FLUSH | logwrites.FUA) for e in entries), \
        "the log holds no flush and no FUA write: nothing was ever made durable"
    cuts = cut_points(entries, byname["setup"].index)
    assert len(cuts) >= min(20, CUTS), f"only {len(cuts)} cut points"
    image = WORK / "image"
    with open(image, "wb") as f:
        f.truncate(FS_SIZE)
    by_seq = {wr[0]: wr for wr in w.writes}
    verified, done, report = 0, 0, []
    with open(lw.logdev, "rb") as log, open(image, "r+b") as img:
        for cut in cuts:
            logwrites.replay(log, ss, entries[done:cut.index + 1], img)
            done = cut.index + 1
            img.flush()
            batch = max((int(e.mark.split("-")[1]) for e in entries[:done]
                         if e.mark and e.mark.startswith("batch-")), default=-1)
            promised = w.promised[batch] if batch >= 0 else set()
            lost = lost_writes(lun_at_cut(image, fileio), promised, by_seq)
            assert not lost, (f"{mode}, cut at {cut.describe()} (after batch {batch}): "
                              f"{len(lost)} of {len(promised)} promised writes lost or torn, "
                              f"e.g. write {lost[0]}: {by_seq[lost[0]]}")
            verified += len(promised)
            report.append(f"{cut.describe()}: after batch {batch}, {len(promised)} writes intact")
    summary = (f"{mode}: {len(cuts)} cut points, {verified} promised writes verified, "
               f"{len(w.writes)} written, {len(entries)} log entries")
    (RESULTS / f"powercut-{mode}.txt").write_text(summary + "\n" + "\n".join(report) + "\n")
    print(summary)
