# SPDX-License-Identifier: GPL-2.0
"""Inside the VM: the seed paper's macrobenchmarks (section 4.4), scaled to
the VM, for bench.py (and postmark.py, the PostMark run that once hung).

PostMark: a file system on the LUN, small files created, read, appended
and deleted at random, from cold caches. Reported: PostMark's own
transactions per second, and transactions over the run plus the sync that
puts its data on the target. postmark.py also holds the whole VM's dirty
limit at 4 MiB, as on a small-memory host: the initiator then writes back
while PostMark runs, and a target whose writes are throttled against the
initiator's dirty pages stalls (LIO's fileio does, IET's does not).

Network server: a directory of 2 MiB files on the LUN, read whole by four
readers in a random order that is the same for every target, the
target's cache hot from one pass over the set before. The readers use
O_DIRECT, so that each read reaches the target (the initiator's cache
would otherwise serve it, and it is the target being measured). Reported:
MB/s and files/s, the per-file read time, and the target's page-cache hit
rate: the bytes it served that it did not have to read from its backing
device, counted by the kernel's pgpgin (all block reads) less the
initiator's own disk's reads.
"""

import mmap
import os
import random
import re
import subprocess
import threading
import time
from pathlib import Path

from vmlib import fs as vmfs
from vmlib import initiator as ini
from vmlib import kmsg, storage
from vmlib.util import MiB, run

TROUBLE = ("detected conn error", "I/O error", "lost async page write", "ping timeout",
           "offlined", "blocked for more than")
MNT = Path("/tmp/bench-mnt")


def postmark_config(location, files, transactions):
    return "\n".join([f"set location {location}", f"set number {files}",
                      f"set transactions {transactions}", "set size 512 16384",
                      "run", "quit", ""])


def postmark(impl, results, files=20000, transactions=50000, fs="ext4", limit_s=1200,
             dirty_bytes=None):
    """One PostMark run through impl's "file" backing, from cold caches on
    both sides, with the VM's dirty limit at dirty_bytes if given. A run
    that logs a connection or I/O error, or does not finish within
    limit_s, has "error" set."""
    MNT.mkdir(exist_ok=True)
    storage.drop_caches()
    impl.start("file", 0)
    impl.before_job()
    log = kmsg.KernelLog()
    out = {"target": impl.name, "fs": fs, "files": files, "transactions": transactions,
           "dirty_bytes": dirty_bytes}
    dirty = Path("/proc/sys/vm/dirty_bytes")
    old_ratio = Path("/proc/sys/vm/dirty_ratio").read_text()
    try:
        login = ini.login(impl.iqn, impl.portal)
        disk = login.disk(impl.lun)
        if fs == "ext2":
            run(["mkfs.ext2", "-q", "-F", "-b", "4096", disk], timeout=600)
        else:
            vmfs.mkfs_ext4(disk, eager=True, timeout=600)
        run(["mount", "-t", fs, disk, str(MNT)])
        storage.drop_caches()
        if dirty_bytes:
            dirty.write_text(f"{dirty_bytes}\n")
        start = time.monotonic()
        pm = subprocess.run(["postmark"], input=postmark_config(MNT, files, transactions),
                            capture_output=True, text=True, timeout=limit_s)
        out["postmark_s"] = time.monotonic() - start
        run(["sync"], timeout=limit_s)
        out["total_s"] = time.monotonic() - start
        out["tps"] = transactions / out["total_s"]
        (results / f"postmark-{impl.name}.log").write_text(pm.stdout + pm.stderr)
        m = re.search(r"seconds of transactions \((\d+) per second\)", pm.stdout)
        if pm.returncode != 0 or not m:
            out["error"] = f"postmark exited {pm.returncode} without its report"
        else:
            out["postmark_tps"] = int(m.group(1))
        run(["umount", str(MNT)], timeout=600)
        login.logout()
    except (subprocess.TimeoutExpired, TimeoutError) as e:
        out["error"] = f"did not finish: {e}"
    finally:
        Path("/proc/sys/vm/dirty_ratio").write_text(old_ratio)   # clears dirty_bytes
        lines = log.new_lines()
        log.close()
        trouble = [ln for ln in lines if any(t in ln for t in TROUBLE)]
        if trouble:
            out["error"] = f"{len(trouble)} kernel log lines of trouble, first: " + \
                " ".join(trouble[0].split()[:12])
        if os.path.ismount(MNT):
            run(["umount", "-l", str(MNT)], check=False)
        ini.logout_all()
        impl.stop()
    print(f"bench: postmark {impl.name}: {fmt_dict(out)}", flush=True)
    return out


def fmt_dict(d):
    return ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())


FILE_SIZE = 2 * MiB
CHUNK = 1 * MiB         # the readers' read size


def make_files(dev, count):
    """ext4 on dev itself (no target in the way), count files of FILE_SIZE
    in one directory, each a distinct pattern."""
    MNT.mkdir(exist_ok=True)
    vmfs.mkfs_ext4(dev, eager=True, timeout=600)
    run(["mount", dev, str(MNT)])
    try:
        d = MNT / "files"
        d.mkdir()
        block = os.urandom(FILE_SIZE)
        for i in range(count):
            with open(d / f"{i:05d}", "wb") as f:
                f.write(i.to_bytes(8, "little") + block[8:])
    finally:
        run(["umount", str(MNT)], timeout=600)


def vmstat(key):
    for ln in Path("/proc/vmstat").read_text().splitlines():
        k, v = ln.split()
        if k == key:
            return int(v)
    raise KeyError(key)


def disk_read_kib(disk):
    return ini.block_stat(disk)[2] // 2     # sectors read


def read_whole(path, buf):
    """Read path to its end with O_DIRECT into buf; the bytes read."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        total = 0
        while True:
            n = os.preadv(fd, [buf], total)
            total += n
            if n < len(buf):
                return total
    finally:
        os.close(fd)


def read_files(paths, readers):
    """Read each of paths whole, readers at a time; (seconds, per-file
    seconds in completion order)."""
    todo = iter(paths)
    lock = threading.Lock()
    times = []
    errors = []

    def reader():
        buf = mmap.mmap(-1, CHUNK)
        try:
            while True:
                with lock:
                    p = next(todo, None)
                if p is None:
                    return
                t = time.monotonic()
                n = read_whole(p, buf)
                if n != FILE_SIZE:
                    raise OSError(f"{p}: read {n} bytes of {FILE_SIZE}")
                with lock:
                    times.append(time.monotonic() - t)
        except OSError as e:
            errors.append(e)
        finally:
            buf.close()

    start = time.monotonic()
    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.monotonic() - start, times


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def netserver(impl, sets, reads, readers=4, seed=12):
    """The network-server workload through impl's "file" backing over the
    file set make_files() left on the RAM disk: for each count in sets,
    a warming pass over files 0..count-1 (those a smaller set warmed
    before left out), then reads of whole files in a seeded random order.
    Returns {count: result}."""
    storage.drop_caches()
    impl.start("file", 0)
    impl.before_job()
    out = {}
    try:
        login = ini.login(impl.iqn, impl.portal)
        disk = login.disk(impl.lun)
        MNT.mkdir(exist_ok=True)
        run(["mount", "-o", "ro,noatime", disk, str(MNT)])
        try:
            warm = 0
            for count in sorted(sets):
                names = [MNT / "files" / f"{i:05d}" for i in range(count)]
                read_files(names[warm:], readers)           # hot caches
                warm = count
                order = random.Random(seed + count).choices(names, k=reads)
                in0, disk0 = vmstat("pgpgin"), disk_read_kib(disk)
                secs, times = read_files(order, readers)
                served = disk_read_kib(disk) - disk0
                backing = vmstat("pgpgin") - in0 - served
                times.sort()
                r = {"mbps": reads * FILE_SIZE / secs / 1e6, "files_per_s": reads / secs,
                     "file_p50_ms": percentile(times, 0.5) * 1000,
                     "file_p99_ms": percentile(times, 0.99) * 1000,
                     "hit_rate": max(0.0, 1 - backing / served) if served else float("nan"),
                     "served_mib": served / 1024, "backing_mib": backing / 1024}
                out[count] = r
                print(f"bench: netserver {impl.name} {count} files: {fmt_dict(r)}", flush=True)
        finally:
            run(["umount", str(MNT)], timeout=600)
        login.logout()
    finally:
        ini.logout_all()
        impl.stop()
    return out
