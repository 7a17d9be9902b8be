#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bench's reading of the scheduler's switches (tests/bench/schedshare.py)
on a made-up trace whose answer is known. Prints "sched: N passed, N failed"
for run-check.sh."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import schedshare  # noqa: E402
from pycheck import Checks  # noqa: E402

check = Checks("sched")


def sw(cpu, t, prev, nxt):
    return (f"  {prev}-1 [{cpu:03d}] d..2. {t:.6f}: sched_switch: prev_comm={prev} prev_pid=1 "
            f"prev_prio=120 prev_state=S ==> next_comm={nxt} next_pid=2 next_prio=120")


def wk(t, waker, wakee):
    return (f"  {waker}-1 [000] d..2. {t:.6f}: sched_wakeup: comm={wakee} pid=3 prio=120 "
            f"target_cpu=000")


TRACE = "\n".join([
    "# tracer: nop",
    sw(0, 10.0, "swapper/0", "iet_rx/1.1"),
    sw(1, 10.1, "swapper/1", "fio"),
    wk(10.2, "iet_rx/1.1", "fio"),
    sw(0, 10.3, "iet_rx/1.1", "kworker/0:1H"),
    wk(10.35, "<idle>", "iet_rx/1.1"),
    wk(10.36, "<idle>", "iet_rx/1.1"),
    sw(0, 10.4, "kworker/0:1H", "swapper/0"),
    sw(1, 10.5, "fio", "kworker/1:2H"),
    sw(1, 11.0, "kworker/1:2H", "swapper/1"),
])

span, busy, wakes = schedshare.share(TRACE)
check("the span runs from the first switch to the last", abs(span - 1.0) < 1e-9)
check("a thread's time on a CPU is from its switch in to its switch out",
      abs(busy[0]["iet_rx/N.N"] - 0.3) < 1e-9 and abs(busy[1]["fio"] - 0.4) < 1e-9)
check("names fold their digits, so kworkers of both CPUs count together",
      abs(busy[0]["kworker/N:NH"] - 0.1) < 1e-9 and abs(busy[1]["kworker/N:NH"] - 0.5) < 1e-9)
check("a CPU's last thread runs until the trace ends", abs(busy[0]["idle"] - 0.6) < 1e-9)
check("a CPU's time before its first switch is not guessed",
      abs(sum(busy[1].values()) - 0.9) < 1e-9 and abs(sum(busy[0].values()) - 1.0) < 1e-9)
check("wake-ups counted by waker and wakee",
      wakes == {("iet_rx/N.N", "fio"): 1, ("idle", "iet_rx/N.N"): 2})
text = schedshare.report(TRACE)
kw = next(ln for ln in text.splitlines() if ln.startswith("kworker/N:NH"))
check("the report gives a thread's vCPUs per CPU and in all", kw.split()[1:] == ["0.100", "0.500", "0.600"])
check("the report gives wake-ups per second", "       2  idle -> iet_rx/N.N" in text)
check("a trace without switches says so", schedshare.report("# nothing\n").startswith("no scheduler"))
check.finish()
