#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How make check shares the VM suite between kernels (tests/vm/conftest.py,
IET_VM_PART), read off pytest's own collection of the suite on the host:
with K/N+paths on every part each test marked paths runs on every kernel
and every other test exactly once; with K/N alone every test runs once;
-guard leaves the guard tests to the debug kernel.
Prints "split: N passed, N failed" for run-check.sh."""

import os
import functools
import subprocess
import sys
from collections import Counter

from pycheck import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
VM = os.path.join(HERE, "..", "vm")
# The system's python3 has pytest (scripts/deps installs python3-pytest).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable

check = Checks("split")


@functools.lru_cache(maxsize=None)
def collect(part=None, marker=None):
    env = dict(os.environ)
    env.pop("IET_VM_PART", None)
    if part:
        env["IET_VM_PART"] = part
    cmd = [PYTHON, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    if marker:
        cmd += ["-m", marker]
    out = subprocess.run(cmd, cwd=VM, env=env, capture_output=True, text=True)
    if out.returncode:
        print(out.stdout[-2000:], out.stderr[-2000:], file=sys.stderr)
        return None
    return tuple(line for line in out.stdout.splitlines() if "::" in line)


every = collect()
paths = collect(marker="paths")
check("pytest collects the suite and its paths tests on the host",
      bool(every) and bool(paths) and set(paths) < set(every))
if not every or not paths:
    check.finish()

for n in (3,):
    parts = [collect(f"{k}/{n}+paths") for k in range(1, n + 1)]
    seen = Counter(t for p in parts if p for t in p)
    check(f"{n} parts with +paths: every test marked paths in each",
          all(p is not None and set(paths) <= set(p) for p in parts))
    check(f"{n} parts with +paths: every other test in exactly one",
          all(seen[t] == 1 for t in every if t not in paths) and set(seen) == set(every))
    plain = [collect(f"{k}/{n}") for k in range(1, n + 1)]
    once = Counter(t for p in plain if p for t in p)
    check(f"{n} parts without +paths: every test exactly once",
          set(once) == set(every) and all(c == 1 for c in once.values()))

# make check's own layout (Makefile KERNELS): the paths tests on 6.1 and the
# newest, the guard tests on the debug kernel alone (unless marked paths),
# every other test on exactly one of the three kernels' parts.
guard = collect(marker="guard")
layout = [collect("1/3+paths-guard"), collect("2/3-guard"), collect("3/3+paths-guard")]
check("pytest collects the guard tests, some not marked paths",
      bool(guard) and bool(set(guard) - set(paths)))
if guard and all(p is not None for p in layout):
    seen = Counter(t for p in layout for t in p)
    check("make check's layout: each paths test on 6.1 and the newest",
          all(t in layout[0] and t in layout[2] for t in paths))
    check("make check's layout: no guard test outside the debug kernel unless marked paths",
          not any(t in p for p in layout for t in set(guard) - set(paths)))
    check("make check's layout: every other test in exactly one part",
          all(seen[t] == 1 for t in every if t not in paths and t not in guard))
    with open(os.path.join(HERE, "..", "..", "Makefile")) as f:
        kernels = next(line for line in f if line.startswith("KERNELS ?="))
    check("the Makefile's KERNELS is the layout checked here",
          sorted(kernels.split()[2:]) == ["6.1:1/3+paths-guard", "debug:guard",
                                          "newest:3/3+paths-guard", "trixie:2/3-guard"]
          and kernels.split()[:2] == ["KERNELS", "?="])
else:
    check("make check's layout collects", False)

# A module stays whole (its fixtures' cost is paid once): the tests of a
# module that are not marked paths share a part.
parts = [collect(f"{k}/3+paths") for k in range(1, 4)]
home = {}
whole = True
for k, p in enumerate(parts):
    for t in p or []:
        if t in paths:
            continue
        mod = t.split("::")[0]
        whole &= home.setdefault(mod, k) == k
check("a module's other tests stay together in one part", whole)
check("no part is empty", all(p for p in parts))

check.finish()
