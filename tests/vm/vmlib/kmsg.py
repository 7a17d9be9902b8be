# SPDX-License-Identifier: GPL-2.0
"""The kernel log: markers, new lines since a point, and the bad patterns.

Reads /dev/kmsg record by record, so a position is a sequence number that
survives the ring buffer's wrap-around (a lost record is reported, not
silently skipped).
"""

import errno
import os
import re

# Anything the kernel prints when our code (or code we drive) misbehaves.
# Kept in step with tests/vm/guest-run, which audits the whole run.
BAD_PATTERNS = [
    r"WARNING:", r"BUG:", r"Oops", r"general protection", r"KASAN", r"UBSAN",
    r"possible circular locking", r"possible recursive locking", r"lockdep",
    r"INFO: task .* blocked", r"soft lockup", r"unreferenced object",
    r"Call Trace",
]
BAD = re.compile("|".join(BAD_PATTERNS))
MARK = "iet-test:"


def mark(text):
    """Write a line to the kernel log (shows test boundaries in dmesg)."""
    with open("/dev/kmsg", "w") as f:
        f.write(f"<6>{MARK} {text}\n")


class KernelLog:
    """New kernel log lines since this object was created."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def new_lines(self):
        lines = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:  # overwritten before we read it
                    lines.append("(kernel log records lost: ring buffer wrapped)")
                    continue
                raise
            if not rec:
                break
            head, _, msg = rec.decode(errors="replace").partition(";")
            # Continuation lines (" KEY=value") carry metadata, not text.
            lines.append(msg.split("\n", 1)[0])
        return lines

    def close(self):
        os.close(self.fd)


def bad_lines(lines):
    """The lines that match a bad pattern (our own markers excluded)."""
    return [ln for ln in lines if BAD.search(ln) and not ln.startswith(MARK)]
