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
blocks), and so does SANITIZE's reset test on a LUN whose sanitize takes
long enough for it (a RAM disk behind dm-delay); those outcomes are
theirs. The run allows SANITIZE (--allow-sanitize) on LUN 0, whose mode
page SWP initiators may set (ModeSelect=Yes) as its read-only test does."""

from pathlib import Path

import pytest

from vmlib import cunit
from vmlib.storage import SlowWrites
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, MiB, run

INITIATOR_1 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test"
INITIATOR_2 = "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-test-2"
SKIPS = Path(__file__).parent / "data" / "libiscsi-skips.txt"
RO_SUITE = "ReadOnly"
# The tests that skip unless a physical block holds more than one logical
# block (LBPPB >= 2). Only they run on the 512e LUN, not the whole suite:
# GetLBAStatus.UnmapSingle (libiscsi 1.19) asks for the status of LBA i + 1
# and wants a first descriptor at i + LBPPB, which holds only for LBPPB 1.
# It needs a SANITIZE that still runs after a 3 s wait, resets and a new
# login: 64 MiB written in 1 MiB steps that each take WRITE_DELAY_MS.
RESET_TEST = "Sanitize.Reset"
WRITE_DELAY_MS = 250
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


@pytest.fixture
def slow_disk(brd):
    """The RAM disk behind dm-delay, its writes held WRITE_DELAY_MS.
    Listed before ietd, it outlives the target that uses it."""
    dev = SlowWrites("iet-conformance-slow", brd.dev).create()
    dev.set_write_delay(WRITE_DELAY_MS)
    yield dev
    dev.set_write_delay(0)
    dev.remove()


def all_but(tests, left_out):
    """--test= for every test but one: the other suites whole (suites split
    test by test do not all run as they do whole), its own test by test."""
    suite = left_out.split(".")[0]
    spec = []
    for t in tests:
        s = t.split(".")[0]
        if s == suite and t != left_out:
            spec.append(f"ALL.{t}")
        elif s != suite and f"ALL.{s}" not in spec:
            spec.append(f"ALL.{s}")
    return spec


def run_some(name, lun, tests, log, timeout=600):
    """iscsi-test-cu for some tests on one LUN: their outcomes, what is
    wrong with the run."""
    cp = run(["iscsi-test-cu", "--dataloss", "--allow-sanitize", "--verbose",
              "--test=" + ",".join(f"ALL.{t}" for t in tests),
              "-i", INITIATOR_1, f"iscsi://127.0.0.1/{name}/{lun}"],
             check=False, timeout=timeout)
    (RESULTS / log).write_text(cp.stdout + cp.stderr)
    results = cunit.parse(cp.stdout)
    where = f"{name} LUN {lun}"
    assert sorted(results) == sorted(tests), \
        f"not the tests asked for on {where}:\n{cp.stdout[-2000:]}"
    return results, summary_problems(cp, results, f" on {where}")


# On the debug kernel (KASAN, lockdep) the run takes minutes: more than the
# suite's 900 s per test is allowed.
@pytest.mark.timeout(2400)
def test_iscsi_test_cu_every_test_passes_or_skips_as_listed(slow_disk, ietd, backing):
    skips = cunit.load_skips(SKIPS.read_text())
    expect = cunit.listed(run(["iscsi-test-cu", "--list"]).stdout)
    assert len(expect) >= 230, f"iscsi-test-cu --list gave {len(expect)} tests"
    assert RESET_TEST in expect

    name, slow_name = iqn("conformance"), iqn("conformance-slow")
    ro = Lun(1, str(backing("conformance-ro", 16 * MiB)),
             params={"IOMode": "ro"})
    e512 = Lun(2, str(backing("conformance-512e", 16 * MiB)),
               params={"PhysicalBlockSize": 4096})
    # Some tests reset the target (Reserve6, PreventAllow): allowed here.
    ietd(Target(name, [Lun(0, str(backing("conformance", 64 * MiB)),
                           params={"ModeSelect": "Yes"}), ro, e512],
                {"AllowTargetReset": "Yes"}),
         # The reset test waits for the end of its sanitize in a sleep of
         # 60 s that reads nothing: no NOP-In for it to miss.
         Target(slow_name, [Lun(0, slow_disk.path, type="blockio")],
                {"AllowTargetReset": "Yes", "NOPInterval": 0}))
    url = f"iscsi://127.0.0.1/{name}/0"
    # The second URL gives the multipath tests their second I_T nexus.
    cp = run(["iscsi-test-cu", "--dataloss", "--allow-sanitize", "--verbose",
              "--test=" + ",".join(all_but(expect, RESET_TEST)),
              "-i", INITIATOR_1, "-I", INITIATOR_2, url, url],
             check=False, timeout=2100)
    out = cp.stdout + cp.stderr
    (RESULTS / "libiscsi.log").write_text(out)
    results = cunit.parse(cp.stdout)
    problems = summary_problems(cp, results, "")

    # The tests of a write-protected LU skip on LUN 0: they run again on
    # LUN 1 (IOMode=ro), whose outcome counts.
    ro_tests = [t for t in expect if t.startswith(RO_SUITE + ".")]
    for where, tests, log in (((name, 1), ro_tests, "libiscsi-ro.log"),
                              # Those that need LBPPB >= 2: LUN 2 is 512e.
                              ((name, 2), LBPPB_TESTS, "libiscsi-512e.log"),
                              ((slow_name, 0), [RESET_TEST], "libiscsi-reset.log")):
        some, more = run_some(*where, tests, log)
        problems += more
        results.update(some)

    (RESULTS / "libiscsi-results.tsv").write_text(
        "".join(r.line() + "\n" for r in results.values()))
    counts = {o: sum(r.outcome == o for r in results.values())
              for o in (cunit.PASSED, cunit.SKIPPED, cunit.FAILED)}
    (RESULTS / "libiscsi-summary.txt").write_text(
        " ".join(f"{k} {v}" for k, v in counts.items()) + "\n")
    problems = cunit.check(results, skips, expect) + problems
    assert not problems, (f"{len(problems)} problems ({counts}):\n"
                          + "\n".join(problems))
