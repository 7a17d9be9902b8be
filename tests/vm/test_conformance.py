# SPDX-License-Identifier: GPL-2.0
"""libiscsi's conformance suite, iscsi-test-cu, against a fileio LUN: every
test it runs must pass. Tests of commands IET does not implement (PERSISTENT
RESERVE, WRITE SAME, UNMAP, VERIFY, ...) skip themselves once the target
answers INVALID COMMAND OPERATION CODE; how many did is written to the
results, so the number is watched, not hidden."""

import re

import pytest

from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, MiB, run

pytestmark = pytest.mark.short

INITIATOR_1 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test"
INITIATOR_2 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2"
# iscsi-test-cu 1.19 runs 615 tests (a test of a command the target lacks
# passes with a "[SKIPPED]" message); far fewer means it did not really run.
MIN_TESTS_RUN = 600


def run_summary(out):
    """CUnit's "Run Summary" tests row: (total, ran, passed, failed)."""
    m = re.search(r"^\s*tests\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
    assert m, f"no CUnit run summary in iscsi-test-cu's output:\n{out[-3000:]}"
    return tuple(int(x) for x in m.groups())


# Its 615 tests take about 15 minutes on the debug kernel (KASAN, lockdep):
# more than the suite's 900 s per test.
@pytest.mark.timeout(2400)
def test_iscsi_test_cu_passes_every_test_it_runs(ietd, backing, request):
    name = iqn("conformance")
    ietd(Target(name, [Lun(0, str(backing("conformance", 64 * MiB)))]))
    url = f"iscsi://127.0.0.1/{name}/0"

    # The second URL gives the multipath tests their second I_T nexus.
    cp = run(["iscsi-test-cu", "--dataloss", "--normal",
              "-i", INITIATOR_1, "-I", INITIATOR_2, url, url],
             check=False, timeout=2100)
    out = cp.stdout + cp.stderr
    (RESULTS / f"{request.node.name}.log").write_text(out)

    total, ran, passed, failed = run_summary(out)
    skipped = len(re.findall(r"\[SKIPPED\]", out))
    (RESULTS / f"{request.node.name}.summary").write_text(
        f"total {total} ran {ran} passed {passed} failed {failed} "
        f"skip-messages {skipped}\n")
    failures = [line for line in out.splitlines()
                if "[FAILED]" in line or "had failures" in line or ".c:" in line]
    assert failed == 0 and cp.returncode == 0, \
        f"{failed} of {ran} libiscsi tests failed:\n" + "\n".join(failures[:40])
    assert ran >= MIN_TESTS_RUN, f"only {ran} of {total} tests ran:\n{out[-3000:]}"
