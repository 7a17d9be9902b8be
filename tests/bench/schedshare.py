# SPDX-License-Identifier: GPL-2.0
"""Where a job's time goes, from the scheduler's own switches: each
thread's share of each CPU and who wakes whom, read from an ftrace of
sched_switch and sched_wakeup.

perf's sampling cannot say it here: under TCG there is no PMU, and its
software clock never samples kernel code (a thread busy in the kernel gets
no samples, the idle task gets them). The switches are exact whatever the
clock: a thread's time on a CPU is from the switch to it to the switch
away. tcgprof.py says where the instructions go."""

import re
from collections import Counter, defaultdict

SWITCH = re.compile(r"\[(\d+)\]\s.*?\s(\d+\.\d+): sched_switch: prev_comm=(.*?) prev_pid=\d+"
                    r" .*?==> next_comm=(.*?) next_pid=\d+")
WAKEUP = re.compile(r"^\s*(.+?)-\d+\s+\[\d+\]\s.*?: sched_wakeup: comm=(.*?) pid=\d+")


def fold(comm):
    """kworker/1:2H and kworker/0:1H alike: digits folded."""
    return "idle" if comm.startswith("swapper") or comm == "<idle>" else re.sub(r"\d+", "N", comm)


def share(trace):
    """(span s, {cpu: {thread: seconds}}, Counter((waker, wakee))) of an
    ftrace text with sched_switch and sched_wakeup events. A CPU's time
    counts from its first switch to the last switch of any CPU, which is
    the span."""
    on = {}
    busy = defaultdict(Counter)
    wakes = Counter()
    first = last = None
    for ln in trace.splitlines():
        if ln.startswith("#"):
            continue
        m = SWITCH.search(ln)
        if m:
            cpu, t, nxt = int(m[1]), float(m[2]), fold(m[4])
            first = t if first is None else first
            last = t
            if cpu in on:
                busy[cpu][on[cpu][0]] += t - on[cpu][1]
            on[cpu] = (nxt, t)
            continue
        m = WAKEUP.search(ln)
        if m:
            wakes[fold(m[1]), fold(m[2])] += 1
    for cpu, (name, t) in on.items():
        busy[cpu][name] += last - t      # still running when tracing stopped
    return (last - first if first is not None else 0.0), dict(busy), wakes


def report(trace, top=12):
    """The share() of a trace as text: threads by vCPUs used, then the
    wake-ups that most often hand work from one thread to another."""
    span, busy, wakes = share(trace)
    if span <= 0:
        return "no scheduler switches traced\n"
    cpus = sorted(busy)
    total = Counter()
    for c in cpus:
        total.update(busy[c])
    out = [f"{span:.3f} s traced; vCPUs each thread used (1.0 = a whole CPU), per CPU and in all", "",
           f"{'thread':32s} " + " ".join(f"cpu{c:<4d}" for c in cpus) + "  all"]
    for name, secs in total.most_common(top):
        out.append(f"{name:32s} " + " ".join(f"{busy[c][name] / span:7.3f}" for c in cpus)
                   + f"  {secs / span:.3f}")
    out += ["", f"{'wakes':>8s}  waker -> wakee (per second)"]
    for (waker, wakee), n in wakes.most_common(top):
        out.append(f"{n / span:8.0f}  {waker} -> {wakee}")
    return "\n".join(out) + "\n"
