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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import Iet, Lio, prepare_initiator  # noqa: E402  (vmlib's path too)
import macro  # noqa: E402
from vmlib import initiator as ini  # noqa: E402
from vmlib import storage  # noqa: E402
from vmlib.util import MiB  # noqa: E402


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
            runs.append(macro.postmark(impl, a.results, a.files, a.transactions, fs="ext2",
                                       limit_s=a.limit, dirty_bytes=4 << 20))
    finally:
        ini.logout_all()
        iscsid.stop()
        brd.remove()
    (a.results / "postmark.json").write_text(json.dumps(runs, indent=1))
    lines = ["| target | PostMark s | with sync s | |", "|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['target']} | {r.get('postmark_s', float('nan')):.1f} | "
                     f"{r.get('total_s', float('nan')):.1f} | {r.get('error', 'clean')} |")
    table = "\n".join(lines) + "\n"
    (a.results / "postmark.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
