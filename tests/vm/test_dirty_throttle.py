# SPDX-License-Identifier: GPL-2.0
"""fileio in loopback under a small dirty limit: the seed paper's PostMark
run (ext2, 4 KiB blocks) on a LUN that the same machine's initiator uses.

The initiator's dirty pages count against the machine's limit, and only the
target can clean them; an I/O thread throttled behind them in
balance_dirty_pages() would never come back (issue 15). With a 4 MiB limit
PostMark (beside a few streaming writers) and the sync after it must finish,
and the kernel log must show no connection error, no I/O error and no hung
task."""

import contextlib
import subprocess
import time
from pathlib import Path

import pytest

from vmlib import kmsg
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, run

DIRTY_BYTES = 4 << 20
SYNC_WITHIN = 180               # seconds; a deadlocked target never finishes
# Smaller than the paper's 20,000 files and 50,000 transactions, with
# streaming writers beside it: enough to hang 88716c9 within a minute or two.
POSTMARK = {"number": 2000, "transactions": 4000, "size": "512 16384"}
WRITERS = 4
BIG_MIB = 10
# What the initiator logs when the target stops answering.
TROUBLE = ("detected conn error", "I/O error", "lost async page write", "ping timeout",
           "session recovery timed out", "offlined", "INFO: task")


@contextlib.contextmanager
def dirty_limit(nbytes):
    """vm.dirty_bytes for the whole VM, restored afterwards."""
    keys = ("dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio")
    saved = {k: Path(f"/proc/sys/vm/{k}").read_text().strip() for k in keys}
    Path("/proc/sys/vm/dirty_bytes").write_text(f"{nbytes}\n")
    try:
        yield
    finally:
        # Writing a ratio clears the matching bytes setting and vice versa.
        for k in ("dirty_ratio", "dirty_background_ratio"):
            if saved[k] != "0":
                Path(f"/proc/sys/vm/{k}").write_text(saved[k] + "\n")
        for k in ("dirty_bytes", "dirty_background_bytes"):
            if saved[k] != "0":
                Path(f"/proc/sys/vm/{k}").write_text(saved[k] + "\n")


def postmark(location, name):
    conf = "\n".join([f"set location {location}",
                      f"set number {POSTMARK['number']}",
                      f"set transactions {POSTMARK['transactions']}",
                      f"set size {POSTMARK['size']}",
                      "run", "quit", ""])
    log = RESULTS / f"postmark-{name}.log"
    start = time.monotonic()
    cp = run(["postmark"], input=conf, timeout=600)
    log.write_text(cp.stdout + cp.stderr)
    return time.monotonic() - start


@pytest.mark.parametrize("iomode", ["wt", "wb"])
def test_postmark_on_loopback_fileio_syncs_under_a_small_dirty_limit(ietd, brd, initiator,
                                                                      tmp_path, iomode):
    name = iqn(f"dirty-{iomode}")
    ietd(Target(name, [Lun(0, brd.dev, params={"IOMode": iomode})]))
    disk = initiator.login(name).disk(0)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    log = kmsg.KernelLog()
    run(["mkfs.ext2", "-q", "-F", "-b", "4096", disk], timeout=300)
    run(["mount", "-t", "ext2", disk, str(mnt)])
    try:
        with dirty_limit(DIRTY_BYTES):
            # Streaming writers beside PostMark: the initiator's writeback
            # then sends the target many large writes at once.
            writers = [subprocess.Popen(["dd", "if=/dev/zero", f"of={mnt}/big{i}", "bs=1M",
                                         f"count={BIG_MIB}", "status=none"])
                       for i in range(WRITERS)]
            took = postmark(mnt, iomode)
            for w in writers:
                w.wait(SYNC_WITHIN)
            sync = subprocess.Popen(["sync"])
            start = time.monotonic()
            try:
                sync.wait(SYNC_WITHIN)
            except subprocess.TimeoutExpired:
                pytest.fail(f"sync after PostMark still running after {SYNC_WITHIN}s "
                            f"(PostMark took {took:.0f}s): the target is stuck")
            print(f"PostMark {iomode}: {took:.1f}s, then sync {time.monotonic() - start:.1f}s")
    finally:
        run(["umount", str(mnt)], check=False, timeout=600)
    lines = log.new_lines()
    log.close()
    trouble = [ln for ln in lines if any(t in ln for t in TROUBLE)]
    assert not trouble, "the kernel log shows trouble:\n" + "\n".join(trouble[:20])
    cp = run(["fsck.ext2", "-f", "-n", disk], check=False, timeout=300)
    assert cp.returncode == 0, f"fsck found problems:\n{cp.stdout}{cp.stderr}"
