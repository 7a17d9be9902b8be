# SPDX-License-Identifier: GPL-2.0
"""kmemleak (debug kernel only): scan, keep what it found, start afresh.

Reports are appended to RESULTS/kmemleak.log, which tests/vm/guest-run fails
on, so a checkpoint never hides a leak found before it.
"""

import time
from pathlib import Path

from .util import RESULTS

KMEMLEAK = Path("/sys/kernel/debug/kmemleak")
MIN_AGE = 5.5   # kmemleak ignores objects younger than 5 s


def available():
    return KMEMLEAK.exists()


def checkpoint(label, settle=True):
    """Scan; append any report (under label) to RESULTS/kmemleak.log, then
    clear the list. Returns the report text ('' when clean or unavailable)."""
    if not available():
        return ""
    if settle:
        time.sleep(MIN_AGE)
    KMEMLEAK.write_text("scan")
    report = KMEMLEAK.read_text()
    if report.strip():
        with open(RESULTS / "kmemleak.log", "a") as f:
            f.write(f"=== {label}\n{report}")
    KMEMLEAK.write_text("clear")
    return report
