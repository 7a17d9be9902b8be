#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inside the VM: the seed paper's PostMark run (section 4.4.1) against IET
and LIO in one boot, each exporting the same brd RAM disk in loopback.

ext2 with 4 KiB blocks, default mount, 20,000 files of 512 B to 16 KiB and
50,000 transactions, cold caches, with the whole VM's dirty limit at 4 MiB
(vm.dirty_bytes, as on a small-memory host): the initiator's dirty pages
then compete with the target's own writes. Each run is PostMark and the
sync after it; a run that logs a connection error or an I/O error, or does
not finish, counts as failed. Writes RESULTS/postmark.json and .md.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import IQN, PORTAL, Iet, Lio, prepare_initiator  # noqa: E402
from vmlib import initiator as ini  # noqa: E402
from vmlib import kmsg, storage  # noqa: E402
from vmlib.util import MiB, run  # noqa: E402

DIRTY_BYTES = 4 << 20
TROUBLE = ("detected conn error", "I/O error", "lost async page write", "ping timeout",
           "offlined", "blocked for more than")


def postmark_config(location, files, transactions):
    return "\n".join([f"set location {location}", f"set number {files}",
                      f"set transactions {transactions}", "set size 512 16384",
                      "run", "quit", ""])


def one_run(impl, results, files, transactions, limit_s):
    mnt = Path("/tmp/postmark-mnt")
    mnt.mkdir(exist_ok=True)
    impl.start("file", 0)
    log = kmsg.KernelLog()
    out = {"target": impl.name}
    try:
        login = ini.login(IQN, PORTAL)
        disk = login.disk(getattr(impl, "lun", 0))
        run(["mkfs.ext2", "-q", "-F", "-b", "4096", disk], timeout=600)
        run(["mount", "-t", "ext2", disk, str(mnt)])
        storage.drop_caches()
        Path("/proc/sys/vm/dirty_bytes").write_text(f"{DIRTY_BYTES}\n")
        start = time.monotonic()
        pm = subprocess.run(["postmark"], input=postmark_config(mnt, files, transactions),
                            capture_output=True, text=True, timeout=limit_s)
        out["postmark_s"] = time.monotonic() - start
        sync_start = time.monotonic()
        run(["sync"], timeout=limit_s)
        out["sync_s"] = time.monotonic() - sync_start
        out["total_s"] = time.monotonic() - start
        (results / f"postmark-{impl.name}.log").write_text(pm.stdout + pm.stderr)
        run(["umount", str(mnt)], timeout=600)
        login.logout()
    except (subprocess.TimeoutExpired, TimeoutError) as e:
        out["error"] = f"did not finish: {e}"
    finally:
        Path("/proc/sys/vm/dirty_ratio").write_text("20\n")
        lines = log.new_lines()
        log.close()
        trouble = [ln for ln in lines if any(t in ln for t in TROUBLE)]
        if trouble:
            out["error"] = "; ".join(trouble[:3])
        impl.stop()
    print(f"postmark: {impl.name}: {out}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--transactions", type=int, default=50000)
    ap.add_argument("--size", type=int, default=512, help="MiB of RAM disk")
    ap.add_argument("--limit", type=int, default=1200, help="seconds a run may take")
    a = ap.parse_args()
    a.results.mkdir(parents=True, exist_ok=True)
    iscsid = prepare_initiator()
    brd = storage.Brd(a.size * MiB).create()
    runs = []
    try:
        for impl in (Iet(a.results), Lio(a.results)):
            runs.append(one_run(impl, a.results, a.files, a.transactions, a.limit))
    finally:
        ini.logout_all()
        iscsid.stop()
        brd.remove()
    (a.results / "postmark.json").write_text(json.dumps(runs, indent=1))
    lines = ["| target | PostMark s | sync s | total s | |", "|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['target']} | {r.get('postmark_s', float('nan')):.1f} | "
                     f"{r.get('sync_s', float('nan')):.1f} | {r.get('total_s', float('nan')):.1f} | "
                     f"{r.get('error', 'clean')} |")
    table = "\n".join(lines) + "\n"
    (a.results / "postmark.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
