# SPDX-License-Identifier: GPL-2.0
"""libiscsi's conformance suite, iscsi-test-cu, against a fileio LUN.

Each of its 230 distinct tests runs once (the family ALL; the others,
SCSI, iSCSI and LINUX, only repeat them). A test of a command the target
lacks "passes" with a [SKIPPED] message in libiscsi, so the outcome of
every test is read from the verbose output (vmlib/cunit.py) and written to
libiscsi-results.tsv in the results: passed, failed, or skipped with
libiscsi's reason. Any failure fails, and so does any skip that is not on
data/libiscsi-skips.txt, or a test on that list that no longer skips. The
tests that need a write-protected logical unit run once more on one, and
so do those that need a 512e one (PhysicalBlockSize=4096 over 512-byte
blocks); those outcomes are theirs."""

from pathlib import Path

import pytest

from vmlib import cunit
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, MiB, run

INITIATOR_1 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test"
INITIATOR_2 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2"
SKIPS = Path(__file__).parent / "data" / "libiscsi-skips.txt"
RO_TESTS = "ALL.ReadOnly"
# The tests that skip unless a physical block holds more than one logical
# block (LBPPB >= 2). Only they run on the 512e LUN, not the whole suite:
# GetLBAStatus.UnmapSingle (libiscsi 1.19) asks for the status of LBA i + 1
# and wants a first descriptor at i + LBPPB, which holds only for LBPPB 1.
LBPPB_TESTS = ["CompareAndWrite.InvalidDataOutSize",
               "WriteSame10.UnmapUnaligned", "WriteSame10.InvalidDataOutSize",
               "WriteSame16.UnmapUnaligned", "WriteSame16.InvalidDataOutSize"]


def summary_problems(cp, results, where):
    """What CUnit's own summary and exit status say against the outcomes."""
    _, _, _, failed = cunit.summary(cp.stdout + cp.stderr)
    shown = sum(r.outcome == cunit.FAILED for r in results.values())
    problems = []
    if failed != shown:
        problems.append(f"CUnit counts {failed} failures{where}, the output "
                        f"shows {shown}")
    if cp.returncode != 0:
        problems.append(f"iscsi-test-cu exited {cp.returncode}{where}")
    return problems


# On the debug kernel (KASAN, lockdep) the run takes minutes: more than the
# suite's 900 s per test is allowed.
@pytest.mark.timeout(2400)
def test_iscsi_test_cu_every_test_passes_or_skips_as_listed(ietd, backing):
    skips = cunit.load_skips(SKIPS.read_text())
    expect = cunit.listed(run(["iscsi-test-cu", "--list"]).stdout)
    assert len(expect) >= 230, f"iscsi-test-cu --list gave {len(expect)} tests"

    name = iqn("conformance")
    ro = Lun(1, str(backing("conformance-ro", 16 * MiB)),
             params={"IOMode": "ro"})
    e512 = Lun(2, str(backing("conformance-512e", 16 * MiB)),
               params={"PhysicalBlockSize": 4096})
    # Some tests reset the target (Reserve6, PreventAllow): allowed here.
    ietd(Target(name, [Lun(0, str(backing("conformance", 64 * MiB))), ro, e512],
                {"AllowTargetReset": "Yes"}))
    url = f"iscsi://127.0.0.1/{name}/0"
    # The second URL gives the multipath tests their second I_T nexus.
    cp = run(["iscsi-test-cu", "--dataloss", "--verbose", "--test=ALL",
              "-i", INITIATOR_1, "-I", INITIATOR_2, url, url],
             check=False, timeout=2100)
    out = cp.stdout + cp.stderr
    (RESULTS / "libiscsi.log").write_text(out)
    results = cunit.parse(cp.stdout)
    problems = summary_problems(cp, results, "")

    # The tests of a write-protected LU skip on LUN 0: they run again on
    # LUN 1 (IOMode=ro), whose outcome counts.
    cp_ro = run(["iscsi-test-cu", "--dataloss", "--verbose", f"--test={RO_TESTS}",
                 "-i", INITIATOR_1, f"iscsi://127.0.0.1/{name}/1"],
                check=False, timeout=600)
    (RESULTS / "libiscsi-ro.log").write_text(cp_ro.stdout + cp_ro.stderr)
    ro_results = cunit.parse(cp_ro.stdout)
    assert ro_results, f"no test ran on the read-only LUN:\n{cp_ro.stdout[-2000:]}"
    problems += summary_problems(cp_ro, ro_results, " on the read-only LUN")
    results.update(ro_results)

    # Those that need LBPPB >= 2 skip on LUN 0 too: LUN 2 is 512e.
    cp_pb = run(["iscsi-test-cu", "--dataloss", "--verbose",
                 "--test=" + ",".join(f"ALL.{t}" for t in LBPPB_TESTS),
                 "-i", INITIATOR_1, f"iscsi://127.0.0.1/{name}/2"],
                check=False, timeout=600)
    (RESULTS / "libiscsi-512e.log").write_text(cp_pb.stdout + cp_pb.stderr)
    pb_results = cunit.parse(cp_pb.stdout)
    assert sorted(pb_results) == sorted(LBPPB_TESTS), \
        f"not the tests asked for on the 512e LUN:\n{cp_pb.stdout[-2000:]}"
    problems += summary_problems(cp_pb, pb_results, " on the 512e LUN")
    results.update(pb_results)

    (RESULTS / "libiscsi-results.tsv").write_text(
        "".join(r.line() + "\n" for r in results.values()))
    counts = {o: sum(r.outcome == o for r in results.values())
              for o in (cunit.PASSED, cunit.SKIPPED, cunit.FAILED)}
    (RESULTS / "libiscsi-summary.txt").write_text(
        " ".join(f"{k} {v}" for k, v in counts.items()) + "\n")
    problems = cunit.check(results, skips, expect) + problems
    assert not problems, (f"{len(problems)} problems ({counts}):\n"
                          + "\n".join(problems))
