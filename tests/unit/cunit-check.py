#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The reading of libiscsi's conformance run (tests/vm/vmlib/cunit.py) on a
real run: iscsi-test-cu 1.19 --verbose --test=ALL -S against IET, as it
printed it (data/libiscsi-1.19-iet.log). Prints "cunit: N passed, N
failed" for run-check.sh."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm", "vmlib"))
import cunit  # noqa: E402
from pycheck import Checks  # noqa: E402

check = Checks("cunit")


def raises(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


with open(os.path.join(HERE, "data", "libiscsi-1.19-iet.log")) as f:
    LOG = f.read()
with open(os.path.join(HERE, "..", "vm", "data", "libiscsi-skips.txt")) as f:
    SKIPS_TEXT = f.read()

res = cunit.parse(LOG)
count = {o: sum(r.outcome == o for r in res.values())
         for o in (cunit.PASSED, cunit.SKIPPED, cunit.FAILED)}
check("every test of the run is read, each once", len(res) == 230)
check("outcomes add up to CUnit's: 1 failed, 229 'passed'",
      count[cunit.FAILED] == 1 and
      count[cunit.PASSED] + count[cunit.SKIPPED] == 229 and
      cunit.summary(LOG) == (230, 230, 229, 1))
check("... of which 165 only skipped", count[cunit.SKIPPED] == 165)
r = res.get("Sanitize.Readonly")
check("the failed test is Sanitize.Readonly, with its assertion",
      r is not None and r.outcome == cunit.FAILED and
      any("test_sanitize_readonly.c:60" in d for d in r.details))
r = res.get("Inquiry.Standard")
check("a test with nothing after '...' but passed passed",
      r is not None and r.outcome == cunit.PASSED and not r.reasons)
r = res.get("CompareAndWrite.InvalidDataOutSize")
check("a skip's reason is its own, not its suite teardown's",
      r is not None and r.outcome == cunit.SKIPPED and
      r.reasons == ["Logical unit is fully provisioned. Skipping test"])
r = res.get("GetLBAStatus.Simple")
check("two different messages of one test are both kept",
      r is not None and len(r.reasons) == 2)
r = res.get("iSCSIdatasn.iSCSIDataSnInvalid")
check("[FAILED] messages of a test that passed do not fail it",
      r is not None and r.outcome == cunit.PASSED)
r = res.get("iSCSITMF.LUNResetSimpleAsync")
check("a test whose 'passed' is followed by teardown output passed",
      r is not None and r.outcome == cunit.PASSED)
check("the names are SUITE.TEST, in run order",
      list(res)[0] == "CompareAndWrite.Simple" and
      list(res)[-1] == "MultipathIO.CompareAndWriteAsync")

# The list this run would need: each of its skips, with its reason.
skips = {r.name: "; ".join(r.reasons) for r in res.values()
         if r.outcome == cunit.SKIPPED}
problems = cunit.check(res, skips)
check("against an exact list, only the failure is wrong",
      len(problems) == 1 and problems[0].startswith("Sanitize.Readonly failed"))
fewer = dict(skips)
del fewer["Verify10.Simple"]
check("a skip not on the list is a problem",
      any(p.startswith("Verify10.Simple skipped and is not on the list")
          for p in cunit.check(res, fewer)))
more = dict(skips, **{"Inquiry.Standard": "no reason"})
check("a listed test that passed is a problem (the list stays exact)",
      any(p.startswith("Inquiry.Standard passed without skipping")
          for p in cunit.check(res, more)))
check("a listed test that does not exist is a problem",
      any("Nosuch.Test is on the list" in p for p in
          cunit.check(res, dict(skips, **{"Nosuch.Test": "x"}))))
check("a test of --list that did not run is a problem",
      any(p == "Extra.Test did not run" for p in
          cunit.check(res, skips, list(res) + ["Extra.Test"])))
check("--list output is read as SUITE.TEST under ALL only",
      cunit.listed("ALL\nALL.Read10\nALL.Read10.Simple\nSCSI.Read10.Simple\n")
      == ["Read10.Simple"])

cut = LOG[:LOG.index("  Test: Miscompare")] + "  Test: Miscompare ...  [SKIPPED] x\n"
check("a run cut off inside a test is an error", raises(cunit.parse, cut))
twice = LOG.replace("Suite: ExtendedCopy", "Suite: CompareAndWrite", 1)
check("a test that runs twice is an error", raises(cunit.parse, twice))
check("a log without a summary is an error", raises(cunit.summary, "nothing"))
check("a list line without a reason is an error",
      raises(cunit.load_skips, "Read10.Simple\n"))
check("a list naming a test twice is an error",
      raises(cunit.load_skips, "A.B x\nA.B y\n"))
check("comments and blank lines are not tests",
      cunit.load_skips("# c\n\nA.B why # c\n") == {"A.B": "why"})
committed = cunit.load_skips(SKIPS_TEXT)
check("the committed list has one line per test, each with a reason",
      len(committed) == len([line for line in SKIPS_TEXT.splitlines()
                             if line.strip() and not line.startswith("#")]))
check("the committed list names only tests libiscsi 1.19 has",
      not [n for n in committed if n not in res])

check.finish()
