# SPDX-License-Identifier: GPL-2.0
"""The pass/fail count of the Python host checks, in the shape run-check.sh
reads: a line "ok   SUITE: name" or "FAIL SUITE: name" per check, then
"SUITE: N passed, N failed"."""

import sys


class Checks:
    def __init__(self, suite):
        self.suite = suite
        self.passed = self.failed = 0

    def __call__(self, name, cond):
        if cond:
            print(f"ok   {self.suite}: {name}")
            self.passed += 1
        else:
            print(f"FAIL {self.suite}: {name}")
            self.failed += 1

    def finish(self):
        """Print the count; exit 1 if any check failed."""
        print(f"{self.suite}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
