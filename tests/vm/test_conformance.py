# SPDX-License-Identifier: GPL-2.0
"""libiscsi's conformance suite, iscsi-test-cu, against a fileio LUN.

Each of its 230 distinct tests runs once (the family ALL; the others,
SCSI, iSCSI and LINUX, only repeat them). A test of a command the target
lacks "passes" with a [SKIPPED] message in libiscsi, so the outcome of
every test is read from the verbose output (vmlib/cunit.py) and written to
libiscsi-results.tsv in the results: passed, failed, or skipped with
libiscsi's reason. Any failure fails, and so does any skip that is not on
data/libiscsi-skips.txt, or a test on that list that no longer skips."""

from pathlib import Path

import pytest

from vmlib import cunit
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, MiB, run

pytestmark = pytest.mark.short

INITIATOR_1 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test"
INITIATOR_2 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2"
SKIPS = Path(__file__).parent / "data" / "libiscsi-skips.txt"


# On the debug kernel (KASAN, lockdep) the run takes minutes: more than the
# suite's 900 s per test is allowed.
@pytest.mark.timeout(2400)
def test_iscsi_test_cu_every_test_passes_or_skips_as_listed(ietd, backing):
    skips = cunit.load_skips(SKIPS.read_text())
    expect = cunit.listed(run(["iscsi-test-cu", "--list"]).stdout)
    assert len(expect) >= 230, f"iscsi-test-cu --list gave {len(expect)} tests"

    name = iqn("conformance")
    ietd(Target(name, [Lun(0, str(backing("conformance", 64 * MiB)))]))
    url = f"iscsi://127.0.0.1/{name}/0"
    # The second URL gives the multipath tests their second I_T nexus.
    cp = run(["iscsi-test-cu", "--dataloss", "--verbose", "--test=ALL",
              "-i", INITIATOR_1, "-I", INITIATOR_2, url, url],
             check=False, timeout=2100)
    out = cp.stdout + cp.stderr
    (RESULTS / "libiscsi.log").write_text(out)

    results = cunit.parse(cp.stdout)
    (RESULTS / "libiscsi-results.tsv").write_text(
        "".join(r.line() + "\n" for r in results.values()))
    counts = {o: sum(r.outcome == o for r in results.values())
              for o in (cunit.PASSED, cunit.SKIPPED, cunit.FAILED)}
    (RESULTS / "libiscsi-summary.txt").write_text(
        " ".join(f"{k} {v}" for k, v in counts.items()) + "\n")

    total, ran, _, failed = cunit.summary(out)
    problems = cunit.check(results, skips, expect)
    if failed != counts[cunit.FAILED]:
        problems.append(f"CUnit counts {failed} failures, the output shows "
                        f"{counts[cunit.FAILED]}")
    if cp.returncode != 0:
        problems.append(f"iscsi-test-cu exited {cp.returncode}")
    assert not problems, (f"{len(problems)} problems in {ran} of {total} "
                          f"tests ({counts}):\n" + "\n".join(problems))
