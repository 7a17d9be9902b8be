# SPDX-License-Identifier: GPL-2.0
"""libiscsi's iscsi-test-cu, read test by test.

libiscsi counts a test that skips itself as passed: it prints "[SKIPPED]
why" and returns. So a run's summary alone cannot tell a command that works
from one that is missing. parse() tells the three outcomes apart from the
verbose output (--verbose), and check() holds them against the list of
tests that may skip here (tests/vm/data/libiscsi-skips.txt), which must be
exact: a skip not on it fails, and so does a test on it that no longer
skips, so the list only ever shrinks as commands are implemented.

The verbose output, per suite:

    Suite: CompareAndWrite
      Test: Simple ...    [SKIPPED] COMPAREANDWRITE is not implemented.
        [SKIPPED] COMPAREANDWRITE is not implemented.
    passed
      Test: Miscompare ...passed    [SKIPPED] ... (the suite's teardown)
      Test: Readonly ...    SWP is not changeable
    FAILED
        1. test_sanitize_readonly.c:60  - CU_ASSERT_EQUAL(ret,0)

What follows "passed" or "FAILED" on its line belongs to no test.
"""

import re
import sys

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"

_SUITE = re.compile(r"^Suite: (\S+)")
_TEST = re.compile(r"^  Test: (\S+) \.\.\.(.*)$")
_END = re.compile(r"^(passed|FAILED)")
_SKIP = re.compile(r"\[SKIPPED\]\s*(.*?)\s*$")
_DETAIL = re.compile(r"^\s+\d+\. \S")          # CUnit's failed assertions
_SUMMARY = re.compile(r"^\s*tests\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", re.M)


class Result:
    """One test: its outcome, why it skipped, what failed."""

    def __init__(self, name):
        self.name = name
        self.outcome = None         # None while the test has not ended
        self.reasons = []           # each distinct [SKIPPED] message
        self.details = []           # the lines after FAILED

    def line(self):
        why = "; ".join(self.reasons if self.outcome == SKIPPED else self.details)
        return f"{self.name}\t{self.outcome}\t{why}"


def parse(out):
    """The tests of a verbose run in order, as a dict SUITE.TEST -> Result."""
    results = {}
    suite = None
    cur = None          # the test running, or one that failed (its details)
    for line in out.splitlines():
        m = _SUITE.match(line)
        if m:
            suite, cur = m.group(1), None
            continue
        m = _TEST.match(line)
        if m:
            if cur is not None and cur.outcome is None:
                raise ValueError(f"{cur.name} never ended")
            name = f"{suite}.{m.group(1)}"
            if name in results:
                raise ValueError(f"{name} ran twice")
            cur = results[name] = Result(name)
            line = m.group(2).lstrip()
        if cur is None:
            continue
        if cur.outcome is None:
            end = _END.match(line)
            if end:
                cur.outcome = PASSED if end.group(1) == "passed" else FAILED
                if cur.outcome == PASSED and cur.reasons:
                    cur.outcome = SKIPPED
                if cur.outcome == PASSED:
                    cur = None
                continue
            m = _SKIP.search(line)
            if m and m.group(1) not in cur.reasons:
                cur.reasons.append(m.group(1))
        elif cur.outcome == FAILED and _DETAIL.match(line):
            cur.details.append(line.strip())
    if cur is not None and cur.outcome is None:
        raise ValueError(f"{cur.name} never ended")
    return results


def summary(out):
    """CUnit's Run Summary tests row: (total, ran, passed, failed)."""
    m = _SUMMARY.search(out)
    if not m:
        raise ValueError("no CUnit run summary")
    return tuple(int(x) for x in m.groups())


def load_skips(text):
    """The expected skips: "SUITE.TEST  reason" per line, # comments."""
    skips = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or parts[0].count(".") != 1:
            raise ValueError(f"line {n}: want 'Suite.Test reason': {line!r}")
        if parts[0] in skips:
            raise ValueError(f"line {n}: {parts[0]} listed twice")
        skips[parts[0]] = parts[1]
    return skips


def check(results, skips, expect=None):
    """What is wrong with a run: failures, skips not on the list, tests on
    it that ran, listed tests that do not exist, and (given the names from
    --list) tests that did not run."""
    problems = []
    for r in results.values():
        if r.outcome == FAILED:
            problems.append(f"{r.name} failed: " + " | ".join(r.details[:3]))
        elif r.outcome == SKIPPED and r.name not in skips:
            problems.append(f"{r.name} skipped and is not on the list: "
                            + "; ".join(r.reasons))
        elif r.outcome == PASSED and r.name in skips:
            problems.append(f"{r.name} passed without skipping: take it off "
                            f"the list ({skips[r.name]})")
    for name in skips:
        if name not in results:
            problems.append(f"{name} is on the list but did not run")
    for name in expect or ():
        if name not in results:
            problems.append(f"{name} did not run")
    return problems


def listed(out):
    """The tests of iscsi-test-cu --list under FAMILY, as SUITE.TEST."""
    names = []
    for line in out.splitlines():
        parts = line.strip().split(".")
        if len(parts) == 3 and parts[0] == "ALL":
            names.append(f"{parts[1]}.{parts[2]}")
    return names


def main(argv):
    if len(argv) != 3:
        print("usage: cunit.py RUN_LOG SKIPS\n"
              "  prints each test's outcome, then what is wrong; exit 1 if any",
              file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        results = parse(f.read())
    with open(argv[2]) as f:
        skips = load_skips(f.read())
    for r in results.values():
        print(r.line())
    problems = check(results, skips)
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
