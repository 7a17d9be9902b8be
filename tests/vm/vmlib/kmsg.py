# SPDX-License-Identifier: GPL-2.0
"""The kernel log: markers, new lines since a point, and the bad patterns.

Reads /dev/kmsg record by record, so a position is a sequence number that
survives the ring buffer's wrap-around (a lost record is reported, not
silently skipped).
"""

import errno
import os
import re
import sys

# Anything the kernel prints when our code (or code we drive) misbehaves.
# tests/vm/guest-run audits the whole run with audit() below.
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


# Reports that kernel code other than ours prints in this VM, where the
# initiator (open-iscsi's kernel half) shares the kernel with the target.
# Each entry is the report's message line and why it is not ours. A report
# is set aside only whole (from "cut here" to "end trace"), with no bad line
# but its one WARNING and one call trace, and only if no frame is ours.
FOREIGN = [
    # 6.1's scsi_transport_iscsi removes a session's SCSI target from the
    # session's WQ_MEM_RECLAIM work queue; device_del() then flushes the
    # target's runtime-PM work on pm_wq, which has no WQ_MEM_RECLAIM, and
    # check_flush_dependency() warns (once per boot) if that work is queued
    # or running just then. A race inside the initiator's logout, seen once
    # when the soak logged out 65 sessions at once.
    (r"workqueue: WQ_MEM_RECLAIM iscsi_ctrl_\d+:\d+:__iscsi_unbind_session "
     r"\[scsi_transport_iscsi\] is flushing !WQ_MEM_RECLAIM pm:pm_runtime_work"),
]
FOREIGN_RE = [re.compile(f) for f in FOREIGN]
CUT = re.compile(r"-{5,}\[ cut here \]-{5,}")
END = re.compile(r"---\[ end trace [0-9a-f]+ \]---")
OUR_FRAME = re.compile(r"\[iscsi_trgt\]")


def _foreign_report(block):
    """The message of a known foreign report, if block (cut here to end
    trace) is exactly one, else None."""
    if any(OUR_FRAME.search(ln) for ln in block):
        return None
    bad = [ln for ln in block if BAD.search(ln)]
    if len(bad) != 2 or "WARNING:" not in bad[0] or "Call Trace" not in bad[1]:
        return None
    for ln in block[1:3]:  # the message follows "cut here"
        if any(f.search(ln) for f in FOREIGN_RE):
            return ln
    return None


def split_foreign(lines):
    """(kept, reports): lines with the known foreign reports taken out, and
    the message line of each report taken out."""
    kept, reports = [], []
    i = 0
    while i < len(lines):
        if CUT.search(lines[i]):
            j = i + 1
            while j < len(lines) and not END.search(lines[j]) and not CUT.search(lines[j]):
                j += 1
            if j < len(lines) and END.search(lines[j]):
                msg = _foreign_report(lines[i:j + 1])
                if msg is not None:
                    reports.append(msg)
                    i = j + 1
                    continue
        kept.append(lines[i])
        i += 1
    return kept, reports


def _matching(lines):
    return [ln for ln in lines if BAD.search(ln) and MARK not in ln]


def bad_lines(lines):
    """The lines that match a bad pattern: our own markers and the known
    foreign reports (FOREIGN) excluded."""
    return _matching(split_foreign(lines)[0])


def audit(path, start, before=False):
    """tests/vm/guest-run's audit of a whole run's kernel log (dmesg.log):
    the bad lines from the line holding start on (or, with before, those
    the boot logged ahead of it), on stdout; a note per known foreign report
    on stderr. Exit status 0 if there is no bad line, 1 if there is, 2 if
    start is not in the log."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    first = next((n for n, ln in enumerate(lines) if start in ln), None)
    if first is None:
        print(f"kmsg audit: '{start}' is not in {path}", file=sys.stderr)
        return 2
    kept, reports = split_foreign(lines[:first] if before else lines[first:])
    for msg in reports:
        print(f"kmsg audit: note: set aside a known report from outside iscsi_trgt: {msg}",
              file=sys.stderr)
    bad = _matching(kept)
    for ln in bad:
        print(ln)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("audit", "boot"):
        print("usage: kmsg.py audit|boot DMESG_LOG START_MARK\n"
              "  audit: the bad lines from START_MARK on; boot: those before it",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(audit(sys.argv[2], sys.argv[3], before=sys.argv[1] == "boot"))
