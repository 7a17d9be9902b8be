#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inside the VM: the same fio jobs against IET, LIO and tgt in one boot.

The targets serve at once, each on its own port of 127.0.0.1 and its own
zero-filled brd RAM disk of the same size, to the kernel initiator with the
same session limits, write-through everywhere; each fio job runs against
each target in turn before the next job, so that the host's slower minutes
fall on all alike. Like for like, three backings:

  file   through the page cache: IET fileio (IOMode=wt), LIO fileio
         (write_back=false: O_DSYNC), tgt rdwr (O_SYNC);
  block  without it: IET blockio, LIO iblock, tgt rdwr with O_DIRECT;
  null   no storage: IET nullio, LIO rd_mcp nullio, tgt null, which
         measures the protocol path alone.

Beyond IOPS: the VM's CPU time per GiB and per 1,000 commands (initiator
and target share the two vCPUs, so CPU cost decides IOPS here), latency
percentiles, the 4k jobs over 4, 16 and 64 sessions at once, and iperf3
over the same loopback as the wire's limit. Then the seed paper's
macrobenchmarks, PostMark and the network server (macro.py), over the
file backing.

Absolute numbers under software emulation mean little; the ratios do.
Writes RESULTS/bench.json, RESULTS/bench.md and, if matplotlib is there,
RESULTS/ratios.png and RESULTS/latency.png.
"""

import argparse
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/vm"))
# vmlib reads where results go when it is imported.
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    os.environ["IET_RESULTS"] = str(Path(sys.argv[1]).resolve())

import macro  # noqa: E402
import schedshare  # noqa: E402
import tcgprof  # noqa: E402
from vmlib import initiator as ini  # noqa: E402
from vmlib import storage  # noqa: E402
from vmlib.target import Ietd, KernelModule, Lun, Target, render_config  # noqa: E402
from vmlib.util import MiB, run, udev_settle, wait_until  # noqa: E402

WORKLOADS = {
    "4k randread QD1": {"bs": "4k", "rw": "randread", "iodepth": 1},
    "4k randwrite QD1": {"bs": "4k", "rw": "randwrite", "iodepth": 1},
    "4k randread QD32": {"bs": "4k", "rw": "randread", "iodepth": 32},
    "4k randwrite QD32": {"bs": "4k", "rw": "randwrite", "iodepth": 32},
    "128k read QD8": {"bs": "128k", "rw": "read", "iodepth": 8},
    "128k write QD8": {"bs": "128k", "rw": "write", "iodepth": 8},
    "1M read QD4": {"bs": "1M", "rw": "read", "iodepth": 4},
}
# The 4k jobs again over several sessions at once, each session's disk
# with this queue depth (open-iscsi queues 128 a session at most).
SESSIONS = (4, 16, 64)
SESSION_WORKLOADS = {
    "4k randread": {"bs": "4k", "rw": "randread", "iodepth": 8},
    "4k randwrite": {"bs": "4k", "rw": "randwrite", "iodepth": 8},
}
# The same limits for every target, so the comparison is of implementations.
KEYS = {
    "MaxRecvDataSegmentLength": 262144,
    "MaxXmitDataSegmentLength": 262144,
    "MaxBurstLength": 262144,
    "FirstBurstLength": 65536,
}
CMDSN_DEPTH = 128
IQN = "iqn.2001-04.com.example:bench"
BACKINGS = ["file", "block", "null"]
RAMP = 1


class Impl:
    """A target implementation in slot n of the bench: its own port, IQN
    and RAM disk (dev), so that all of them serve at once and each fio job
    runs against each target in turn."""
    name = "?"
    lun = 0

    def __init__(self, results, slot):
        self.results = results
        self.port = 3260 + slot
        self.portal = f"127.0.0.1:{self.port}"
        self.iqn = f"{IQN}-{slot}"
        self.home = (self.iqn, self.portal)
        self.dev = f"/dev/ram{slot}"

    def before_job(self):
        pass


INLINE_SEND = Path("/sys/module/iscsi_trgt/parameters/inline_send")


class Iet(Impl):
    name = "IET"

    def __init__(self, results, slot=0):
        super().__init__(results, slot)
        self.kmod = KernelModule()
        self.ietd = None

    def start(self, backing, size):
        self.kmod.load()
        if backing == "file":
            lun = Lun(0, self.dev, params={"IOMode": "wt"})
        elif backing == "block":
            lun = Lun(0, self.dev, type="blockio", params={"IOMode": "wt"})
        else:
            lun = Lun(0, type="nullio", params={"Blocks": size // 512})
        params = dict(KEYS, NOPInterval=0, QueuedCommands=CMDSN_DEPTH)
        self.ietd = Ietd(render_config([Target(self.iqn, [lun], params=params)]), "bench-ietd",
                         port=self.port).start()

    def stop(self):
        self.ietd.stop()
        self.ietd = None
        self.kmod.unload()      # the kernel keeps targets after ietd exits

    def before_job(self):
        INLINE_SEND.write_text("Y\n")

    def threads(self):
        return kthreads("iet_")


class IetClassic(Iet):
    """IET with inline_send=N: only the write thread sends, as before the
    read and I/O threads sent what they served; the same boot's A/B. With
    IET serving already it is IET's own target and sessions, the module
    parameter switched before each job."""
    name = "IET-classic"
    share = None            # the Iet serving at once, if any

    def start(self, backing, size):
        self.shared = self.share is not None and self.share.ietd is not None
        if self.shared:
            self.iqn, self.portal = self.share.iqn, self.share.portal
        else:
            self.iqn, self.portal = self.home
            super().start(backing, size)

    def stop(self):
        if not self.shared:
            super().stop()

    def before_job(self):
        INLINE_SEND.write_text("N\n")


class Lio(Impl):
    name = "LIO"

    def __init__(self, results, slot=0):
        super().__init__(results, slot)
        run(["modprobe", "-a", "configfs", "target_core_mod", "iscsi_target_mod",
             "target_core_iblock", "target_core_file"], timeout=60)
        if not Path("/sys/kernel/config/target").exists():
            run(["mount", "-t", "configfs", "configfs", "/sys/kernel/config"], check=False)
        Path("/etc/rtslib-fb-target/pr").mkdir(parents=True, exist_ok=True)
        warnings.filterwarnings("ignore", message="Cannot set dbroot")
        import rtslib_fb
        self.r = rtslib_fb
        self.objs = []

    def start(self, backing, size):
        r = self.r
        if backing == "file":
            so = r.FileIOStorageObject("bench", self.dev, write_back=False)
        elif backing == "block":
            so = r.BlockStorageObject("bench", dev=self.dev)
        else:
            so = r.RDMCPStorageObject("bench", size=size, nullio=True)
        t = r.Target(r.FabricModule("iscsi"), self.iqn)
        tpg = r.TPG(t, 1)
        for k, v in KEYS.items():
            tpg.set_parameter(k, str(v))
        tpg.set_attribute("authentication", "0")
        tpg.set_attribute("generate_node_acls", "1")
        tpg.set_attribute("demo_mode_write_protect", "0")
        tpg.set_attribute("default_cmdsn_depth", str(CMDSN_DEPTH))
        r.NetworkPortal(tpg, "127.0.0.1", self.port)
        r.LUN(tpg, 0, so)
        tpg.enable = True
        self.objs = [t, so]

    def stop(self):
        for o in self.objs:
            o.delete()
        self.objs = []

    def threads(self):
        return kthreads("iscsi_t")


class Tgt(Impl):
    name = "tgt"
    lun = 1                 # tgt's LUN 0 is its controller

    def __init__(self, results, slot=0):
        super().__init__(results, slot)
        self.proc = None

    def adm(self, *args):
        return run(["tgtadm", "--lld", "iscsi", *args], timeout=60)

    def start(self, backing, size):
        log = open(self.results / "tgtd.log", "a")
        self.proc = subprocess.Popen(["tgtd", "-f", "--iscsi", f"portal={self.portal}"],
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        wait_until(lambda: run(["tgtadm", "--op", "show", "--mode", "sys"],
                               check=False).returncode == 0, 30, "tgtd to answer")
        self.adm("--op", "new", "--mode", "target", "--tid", "1", "-T", self.iqn)
        if backing == "file":
            lu = ["--bstype", "rdwr", "--bsoflags", "sync", "-b", self.dev]
        elif backing == "block":
            lu = ["--bstype", "rdwr", "--bsoflags", "direct", "-b", self.dev]
        else:
            lu = ["--bstype", "null", "-b", "/dev/null"]
        self.adm("--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", *lu)
        keys = dict(KEYS, MaxQueueCmd=CMDSN_DEPTH)
        for k, v in keys.items():
            self.adm("--op", "update", "--mode", "target", "--tid", "1", "--name", k,
                     "--value", str(v))
        self.adm("--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL")

    def stop(self):
        self.adm("--op", "delete", "--mode", "target", "--tid", "1", "--force")
        # tgtd ignores SIGTERM: it is shut down through its own interface.
        run(["tgtadm", "--op", "delete", "--mode", "system"], check=False)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def threads(self):
        return [self.proc.pid] if self.proc else []


def kthreads(prefix):
    """Pids of the kernel threads whose name starts with prefix."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().startswith(prefix):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


TICK = os.sysconf("SC_CLK_TCK")


def cpu_split():
    """Seconds the VM's CPUs were busy since boot, by context (user,
    system, irq, softirq; not idle, not waiting, nor the host's steal):
    their sum is how busy, which of them grows tells where the time goes."""
    v = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:8]]
    return {"user": (v[0] + v[1]) / TICK, "system": v[2] / TICK,
            "irq": v[5] / TICK, "softirq": v[6] / TICK}


def thread_cpu(task):
    """(name, CPU seconds) of the thread at /proc/PID/task/TID."""
    comm, f = (task / "stat").read_text().split(" (", 1)[1].rsplit(")", 1)
    f = f.split()
    return comm, (int(f[11]) + int(f[12])) / TICK


def all_task_cpu():
    """{thread id: (name, CPU seconds)} of every thread now running; the
    name with digits folded, so that kworker/0:1 and kworker/1:2 count
    together (a kworker's name is that of the work it runs now)."""
    out = {}
    for t in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        try:
            comm, cpu = thread_cpu(t)
        except (OSError, IndexError, ValueError):
            continue
        out[int(t.name)] = (re.sub(r"[0-9]+", "N", comm), cpu)
    return out


def busiest(before, after, secs, n=6):
    """The n names whose threads were busiest between two all_task_cpu()
    samples, in vCPUs (threads born meanwhile count from zero)."""
    by_name = {}
    for tid, (name, cpu) in after.items():
        d = cpu - before.get(tid, (name, 0))[1]
        if d > 0:
            by_name[name] = by_name.get(name, 0) + d
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:n]
    return {name: round(d / secs, 3) for name, d in top}


def task_cpu(pids):
    """CPU seconds of these tasks and all their threads, whatever is still there."""
    total = 0
    for pid in pids:
        for t in Path(f"/proc/{pid}/task").glob("*"):
            try:
                total += thread_cpu(t)[1]
            except (OSError, IndexError, ValueError):
                pass
    return total


# What tells a stall of TCP from one of the target: a retransmission after
# a timeout costs at least 200 ms (TCP_RTO_MIN) even in loopback.
TCP_COUNTERS = ("Tcp:RetransSegs", "TcpExt:TCPTimeouts", "TcpExt:TCPLossProbes",
                "TcpExt:TCPRcvQDrop", "TcpExt:PruneCalled", "TcpExt:RcvPruned",
                "TcpExt:TCPZeroWindowDrop", "TcpExt:TCPBacklogDrop",
                "TcpExt:TCPToZeroWindowAdv", "TcpExt:TCPFromZeroWindowAdv",
                "TcpExt:TCPRcvCollapsed", "TcpExt:TCPMemoryPressures",
                "TcpExt:TCPWinProbe", "TcpExt:DelayedACKs",
                "Softnet:BacklogDropped", "Softnet:TimeSqueezed")


def tcp_counters():
    """TCP's counters since boot, from /proc/net/snmp and /proc/net/netstat,
    and the packets loopback's per-CPU backlog dropped (over
    netdev_max_backlog) or left for the next softirq, all CPUs'."""
    out = {}
    for f in ("/proc/net/snmp", "/proc/net/netstat"):
        lines = Path(f).read_text().splitlines()
        for names, values in zip(lines[::2], lines[1::2]):
            proto = names.split(":")[0]
            for k, v in zip(names.split()[1:], values.split()[1:]):
                out[f"{proto}:{k}"] = int(v)
    for ln in Path("/proc/net/softnet_stat").read_text().splitlines():
        f = ln.split()
        out["Softnet:BacklogDropped"] = out.get("Softnet:BacklogDropped", 0) + int(f[1], 16)
        out["Softnet:TimeSqueezed"] = out.get("Softnet:TimeSqueezed", 0) + int(f[2], 16)
    return out


SCHED = False


TRACEFS = Path("/sys/kernel/tracing")
SCHED_EVENTS = ("sched/sched_switch", "sched/sched_wakeup")


def sched_record(label, results, seconds):
    """Where the measured window's time goes (schedshare: perf's samples
    never see kernel code under TCG), into sched-LABEL.txt: a second of
    the scheduler's switches and wake-ups, which is plenty at thousands of
    switches a second and keeps the tracing's own cost out of the rest."""
    if not (TRACEFS / "trace").exists():
        run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)])
    (TRACEFS / "tracing_on").write_text("0")
    (TRACEFS / "buffer_size_kb").write_text("16384")
    (TRACEFS / "trace").write_text("")
    for ev in SCHED_EVENTS:
        (TRACEFS / "events" / ev / "enable").write_text("1")
    try:
        (TRACEFS / "tracing_on").write_text("1")
        time.sleep(min(seconds, 1.0))
        (TRACEFS / "tracing_on").write_text("0")
        text = (TRACEFS / "trace").read_text()
    finally:
        for ev in SCHED_EVENTS:
            (TRACEFS / "events" / ev / "enable").write_text("0")
    lost = sum(int(ln.split()[-1]) for st in TRACEFS.glob("per_cpu/cpu*/stats")
               for ln in st.read_text().splitlines() if ln.startswith("overrun:"))
    note = f"{lost} events lost: the figures are short\n" if lost else ""
    (results / f"sched-{label}.txt").write_text(note + schedshare.report(text))
    (TRACEFS / "trace").write_text("")


PROFILE = False
PROFILES = iter(range(1, 1 << 30))


def profile_record(label, results, seconds, names):
    """The guest instructions of seconds of the job by kernel function,
    counted by the emulator (the tcgprof plugin scripts/bench --profile
    loads, driven through RESULTS/tcgprof), into profile-LABEL.txt."""
    ctl, n = results / "tcgprof", next(PROFILES)
    Path("/proc/sys/kernel/kptr_restrict").write_text("0\n")
    before = diskstats(names)
    (ctl / f"start-{n}").touch()
    wait_until(lambda: (ctl / f"started-{n}").exists(), timeout=30, what="tcgprof to start")
    time.sleep(seconds)
    (ctl / f"stop-{n}").touch()
    after = diskstats(names)
    wait_until(lambda: (ctl / f"profile-{n}").exists(), timeout=60, what="tcgprof's profile")
    cmds = sum(after[d][0] - before[d][0] for d in after)
    text = tcgprof.report((ctl / f"profile-{n}").read_text(),
                          Path("/proc/kallsyms").read_text(), cmds)
    for f in ("start", "started", "stop", "profile"):
        (ctl / f"{f}-{n}").unlink()
    (results / f"profile-{label}.txt").write_text(f"{label}, {seconds:.1f} s\n{text}")


def diskstats(names):
    """{name: (requests, bytes)} the disks of these kernel names (sda)
    have completed so far, reads and writes: one read of /proc/diskstats,
    however many disks (a file each would take most of a second for 64
    under TCG). A request is a SCSI command: the block layer splits what
    is larger than the target takes in one."""
    out = {}
    for ln in Path("/proc/diskstats").read_text().splitlines():
        f = ln.split()
        if f[2] in names:
            out[f[2]] = (int(f[3]) + int(f[7]), (int(f[5]) + int(f[9])) * 512)
    return out


class JobClock(threading.Thread):
    """Runs plan, (delay, fn, args, alone) each, delay seconds after every
    one of the disks (kernel names) has completed an I/O of the job, not
    after fio was started: fio's start-up takes a second or more under
    TCG and is not the job, and over many sessions its jobs start one
    after the other.
    The items run one after the other in this thread, in order (a sample
    late because the one before it was slow still comes after it), those
    alone in a thread of their own."""

    def __init__(self, names, plan):
        super().__init__(daemon=True)
        self.names, self.plan = names, plan
        self.done = threading.Event()
        self.timers = []

    def run(self):
        before = diskstats(self.names)
        waiting = set(self.names)
        while waiting:
            if self.done.wait(0.02):
                return
            now = diskstats(waiting)
            waiting = {d for d in waiting if now.get(d) == before.get(d)}
        t0 = time.monotonic()
        for delay, fn, args, alone in self.plan:
            if alone:
                t = threading.Timer(max(0.0, t0 + delay - time.monotonic()), fn, args)
                t.start()
                self.timers.append(t)
        for delay, fn, args, alone in self.plan:
            if not alone:
                if self.done.wait(max(0.0, t0 + delay - time.monotonic())):
                    return
                fn(*args)

    def stop(self):
        """fio has ended: what has not begun will not; what has, ends."""
        self.done.set()
        self.join()
        for t in self.timers:
            t.cancel()
        for t in self.timers:
            t.join()


def fio(disks, job, runtime, results, label, impl):
    """One fio run over disks (a job per disk), its CPU cost sampled over
    a window inside the measured time (after the ramp, before the end)."""
    args = ["fio", "--direct=1", "--ioengine=libaio", "--time_based",
            f"--runtime={runtime}", f"--ramp_time={RAMP}", "--output-format=json",
            "--randrepeat=0", "--norandommap", "--group_reporting",
            # Threads, and no disk statistics of fio's own: with 64 disks,
            # those took fio 20 s to start under TCG.
            "--thread", "--disk_util=0"]
    args += [f"--{k}={v}" for k, v in job.items()]
    for d in disks:
        args += ["--name=" + Path(d).name, f"--filename={d}"]
    started = time.monotonic()
    names = {Path(d).resolve().name for d in disks}
    # Over many sessions, the target's threads (hundreds) and every
    # thread take seconds to read under TCG, longer than the window
    # lasts: those jobs have the whole VM's figures only.
    one = len(disks) == 1
    pids = impl.threads() if one else []
    samples = {}

    def sample(key):
        # A window's edge: how busy the VM, and the commands and bytes the
        # disks completed, read at once; then the target's threads.
        m, wall, split, io = time.monotonic(), time.time(), cpu_split(), diskstats(names)
        samples[key] = {"t": m, "wall": wall, "split": split,
                        "cmds": sum(v[0] for v in io.values()),
                        "bytes": sum(v[1] for v in io.values()),
                        "threads": task_cpu(pids) if one else math.nan}

    def snapshot(key):
        # Every thread's CPU time, for the busiest: once every disk has
        # done I/O, well before the window, and after it.
        samples[key] = (time.monotonic(), all_task_cpu())

    tcp0 = tcp_counters()

    plan = [(RAMP + 0.5, sample, ("a",), False), (RAMP + runtime - 0.5, sample, ("b",), False)]
    if one:
        plan = [(0, snapshot, ("pre",), False)] + plan + \
            [(RAMP + runtime - 0.5, snapshot, ("post",), False)]
    if SCHED:
        # Mid-window, clear of both samples.
        plan.append((RAMP + runtime / 2 - 0.5, sched_record, (label, results, 1), True))
    if PROFILE:
        plan.append((RAMP + 0.5, profile_record, (label, results, runtime - 1, names), True))
    clock = JobClock(names, plan)
    clock.start()
    try:
        out = run(args, timeout=runtime * 4 + 300).stdout
    finally:
        clock.stop()
    tcp1 = tcp_counters()
    (results / f"fio-{label}.json").write_text(out)
    top = json.loads(out)
    j = top["jobs"][0]
    assert j["error"] == 0, f"fio reported error {j['error']} on {label}"
    side = j["write"] if "write" in job["rw"] else j["read"]
    pct = side["clat_ns"].get("percentile", {})
    res = {"iops": side["iops"], "mbps": side["bw_bytes"] / 1e6,
           "lat_us": side["lat_ns"]["mean"] / 1000}
    for p, key in (("50.000000", "p50_us"), ("99.000000", "p99_us"), ("99.900000", "p999_us")):
        res[key] = pct.get(p, float("nan")) / 1000
    res["tcp"] = {k.split(":")[1]: tcp1.get(k, 0) - tcp0.get(k, 0)
                  for k in TCP_COUNTERS if tcp1.get(k, 0) != tcp0.get(k, 0)}
    res["wall_s"] = round(time.monotonic() - started, 1)
    res.update(cpu_figures(samples, top["timestamp_ms"] / 1000, label))
    return res


def cpu_figures(samples, end, label):
    """The CPU figures of the window between samples a and b, if it was
    inside fio's run (which ended at end, fio's timestamp, wall clock): a
    sample held up (a slow one before it, a host that stalls) can fall
    after the end, and the window would then hold idle time. The
    commands and bytes are those the disks completed in the window, so
    the figures hold even where fio's jobs ramped up or ended apart."""
    a, b = samples.get("a"), samples.get("b")
    if not a or not b or b["wall"] > end or b["cmds"] == a["cmds"]:
        print(f"bench: {label}: the CPU samples missed fio's run", flush=True)
        return {}
    secs = b["t"] - a["t"]
    busy = sum(b["split"].values()) - sum(a["split"].values())
    cmds = b["cmds"] - a["cmds"]
    gib = (b["bytes"] - a["bytes"]) / 2**30
    res = {"window_s": round(secs, 2), "window_iops": cmds / secs,
           "cpu_busy": busy / secs,          # vCPUs busy, 0..2
           "cpu_s_per_gib": busy / gib,
           "cpu_ms_per_kcmd": busy * 1e6 / cmds,
           "tgt_threads_ms_per_kcmd": (b["threads"] - a["threads"]) * 1e6 / cmds,
           # Where the time went: vCPUs busy in each context, and the
           # busiest threads (tasks that ended in the window are missed).
           "cpu_split": {k: round((b["split"][k] - a["split"][k]) / secs, 3)
                         for k in a["split"]}}
    if "pre" in samples and "post" in samples:
        (p0, a0), (p1, a1) = samples["pre"], samples["post"]
        res["busiest"] = busiest(a0, a1, p1 - p0)
    return res


def show(impl, backing, w, r):
    print(f"bench: {impl.name:4} {backing:5} {w:22} {r['iops']:9.0f} IOPS {r['mbps']:8.1f} MB/s "
          f"p50 {r['p50_us']:7.0f} p99 {r['p99_us']:7.0f} us "
          f"cpu {r.get('cpu_ms_per_kcmd', float('nan')):6.1f} ms/kcmd "
          f"tcp {r.get('tcp', {})} in {r['wall_s']} s", flush=True)
    print(f"bench:      vCPUs busy {r.get('cpu_busy', float('nan')):.2f} "
          f"{r.get('cpu_split', {})} busiest {r.get('busiest', {})} "
          f"(window {r.get('window_iops', float('nan')):.0f} IOPS, "
          f"{r.get('window_s', float('nan'))} s)", flush=True)


def warm_cache(backing, impls):
    """Every target starts from the same page cache: the file backing's
    whole device in it (as after a while of service), the others' not.
    With the targets serving: the last close of a block device drops its
    page cache, so a device read before a target opens it is cold again."""
    storage.drop_caches()
    if backing == "file":
        for dev in sorted({i.dev for i in impls}):
            run(["dd", f"if={dev}", "of=/dev/null", "bs=1M", "status=none"], timeout=300)


def measure(impls, backing, size, runtime, results, sessions):
    """Every workload on every target, all of them serving at once: a job
    runs against each in turn before the next job, so that the host's
    slower minutes fall on all alike. Then the session jobs, a target at a
    time (their logins take long). {target: {workload: result}}."""
    out = {i.name: {} for i in impls}
    started = []
    try:
        for impl in impls:
            impl.start(backing, size)
            started.append(impl)
        warm_cache(backing, impls)
        disks = {}
        for impl in impls:
            if (impl.iqn, impl.portal) not in disks:
                login = ini.login(impl.iqn, impl.portal)
                disks[impl.iqn, impl.portal] = login.disk(impl.lun)
        # udev probing the last disk logged in (sg_inq, multipath: a third
        # of a vCPU here) must not overlap the first job, which is IET's.
        udev_settle()
        for w, job in WORKLOADS.items():
            for impl in impls:
                label = f"{impl.name}-{backing}-{w}".replace(" ", "_")
                impl.before_job()
                out[impl.name][w] = fio([disks[impl.iqn, impl.portal]], job, runtime, results,
                                        label, impl)
                show(impl, backing, w, out[impl.name][w])
        ini.logout_all()
        if sessions:
            session_jobs(impls, sessions, runtime, results, backing, out)
    finally:
        ini.logout_all()
        for impl in reversed(started):
            impl.stop()
    return out


def session_jobs(impls, sessions, runtime, results, backing, out):
    """The session jobs, a target at a time, into out: one login of
    them all (logins are slow here); the first n serve the n-session
    jobs while the others idle."""
    names = [f"bench{i}" for i in range(max(sessions))]
    t = time.monotonic()
    ini.make_ifaces(names)
    print(f"bench: {len(names)} iface records made in {time.monotonic() - t:.0f} s", flush=True)
    try:
        with udev_paused():
            session_logins(impls, names, sessions, runtime, results, backing, out)
    finally:
        ini.delete_ifaces(names)


def session_logins(impls, names, sessions, runtime, results, backing, out):
    """session_jobs' logins and jobs, each target in turn."""
    for impl in impls:
        t = time.monotonic()
        disks = login_sessions(impl, names)
        print(f"bench: {impl.name}: {len(names)} sessions logged in in "
              f"{time.monotonic() - t:.0f} s", flush=True)
        try:
            for n in sorted(sessions):
                for w, job in SESSION_WORKLOADS.items():
                    key = f"{w} x{n} sessions"
                    label = f"{impl.name}-{backing}-{key}".replace(" ", "_")
                    impl.before_job()
                    out[impl.name][key] = fio(disks[:n], job, runtime, results, label, impl)
                    show(impl, backing, key, out[impl.name][key])
        finally:
            ini.logout_all(timeout=600)
            ini.iscsiadm("-m", "node", "-T", impl.iqn, "-o", "delete", check=False)


@contextlib.contextmanager
def udev_paused():
    """No udev while the many sessions log in, serve and log out. Its
    probes of 64 new disks (sg_inq, multipath and the like, over some
    2,000 events) kept the VM's two vCPUs busy most of a minute a login
    under TCG: in no target's figures, but three minutes of the run. The
    disks' nodes come from devtmpfs; sd_mod, which udev would load, is
    loaded here."""
    run(["modprobe", "sd_mod"])
    pids = run(["pgrep", "-x", "systemd-udevd"], check=False).stdout.split()
    if not pids:
        yield
        return
    cmdline = Path(f"/proc/{pids[0]}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    run(["udevadm", "control", "--exit"], timeout=120)
    try:
        yield
    finally:
        run([os.fsdecode(arg) for arg in cmdline], timeout=60)
        udev_settle()


def login_sessions(impl, names):
    """A session to impl through each iface record of names; their
    disks, in that order. Discovery through them all makes a node record
    for each in one call (a call each takes most of a second here)."""
    ini.iscsiadm("-m", "node", "-T", impl.iqn, "-o", "delete", check=False)
    ini.iscsiadm("-m", "discovery", "-t", "st", "-p", impl.portal,
                 *[arg for name in names for arg in ("-I", name)])
    ini.iscsiadm("-m", "node", "-T", impl.iqn, "-p", impl.portal, "--login", timeout=600)
    by_iface = ini.sessions_by_iface(impl.iqn)
    assert len(by_iface) == len(names), f"{len(by_iface)} of {len(names)} sessions logged in"
    return [ini.disk_of(by_iface[name], impl.lun, portal=impl.portal) for name in names]


def iperf3(results, seconds=8):
    """The loopback's own rate, one TCP stream, in MB/s."""
    srv = subprocess.Popen(["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        out = run(["iperf3", "-c", "127.0.0.1", "-t", str(seconds), "-J"],
                  timeout=seconds + 60).stdout
    finally:
        srv.wait(30)
    (results / "iperf3.json").write_text(out)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 8e6


# Goals (issue 12): IET's IOPS over LIO's at least this, per workload.
GOALS = [
    ("4k randread QD32", 1.3), ("4k randwrite QD32", 1.3),
    ("4k randread QD1", 1.2), ("4k randwrite QD1", 1.2),
    ("4k randread x64 sessions", 1.3), ("4k randwrite x64 sessions", 1.3),
    ("128k read QD8", 1.3), ("128k write QD8", 1.3), ("1M read QD4", 1.3),
]


def fmt(x, spec=".0f"):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def get(data, backing, impl, w, key):
    return data.get(backing, {}).get(impl, {}).get(w, {}).get(key, float("nan"))


def ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else float("nan")


def report(data, wire_mbps, results, macros):
    impls = list(dict.fromkeys(i for per in data.values() for i in per))
    works = list(dict.fromkeys(w for per in data.values() for ws in per.values() for w in ws))

    def rows():
        for backing in data:
            for w in works:
                if any(w in data[backing][i] for i in data[backing]):
                    yield backing, w

    md = [f"iperf3, one stream over the same loopback: {fmt(wire_mbps, '.0f')} MB/s", ""]
    others = [i for i in ("LIO", "tgt", "IET-classic") if i in impls]
    md += ["## Throughput", "",
           "| backing | workload | " + " | ".join(f"{i} IOPS" for i in impls) +
           " | IET MB/s | " + " | ".join(f"IET/{o}" for o in others) + " |",
           "|" + "---|" * (3 + len(impls) + len(others))]
    ratios = {}
    for backing, w in rows():
        iops = {i: get(data, backing, i, w, "iops") for i in impls}
        r = {o: ratio(iops["IET"], iops[o]) for o in others}
        ratios[f"{backing}: {w}"] = (r.get("LIO", float("nan")), r.get("tgt", float("nan")))
        md.append(f"| {backing} | {w} | " + " | ".join(fmt(iops[i]) for i in impls) +
                  f" | {fmt(get(data, backing, 'IET', w, 'mbps'), '.1f')} | " +
                  " | ".join(fmt(r[o], ".2f") for o in others) + " |")
    md += ["", "## Latency (completion, µs: p50 / p99 / p99.9)", "",
           "| backing | workload | " + " | ".join(impls) + " |", "|" + "---|" * (2 + len(impls))]
    for backing, w in rows():
        cells = [" / ".join(fmt(get(data, backing, i, w, k)) for k in ("p50_us", "p99_us", "p999_us"))
                 for i in impls]
        md.append(f"| {backing} | {w} | " + " | ".join(cells) + " |")
    md += ["", "## CPU (whole VM, initiator and target: ms per 1,000 commands; s per GiB;"
           " the target's own threads ms per 1,000 commands)", "",
           "| backing | workload | " + " | ".join(impls) + " | IET/LIO per command |",
           "|" + "---|" * (3 + len(impls))]
    for backing, w in rows():
        cells = [f"{fmt(get(data, backing, i, w, 'cpu_ms_per_kcmd'), '.1f')} ms; "
                 f"{fmt(get(data, backing, i, w, 'cpu_s_per_gib'), '.2f')} s; "
                 f"{fmt(get(data, backing, i, w, 'tgt_threads_ms_per_kcmd'), '.1f')} ms"
                 for i in impls]
        r = ratio(get(data, backing, "IET", w, "cpu_ms_per_kcmd"),
                  get(data, backing, "LIO", w, "cpu_ms_per_kcmd"))
        md.append(f"| {backing} | {w} | " + " | ".join(cells) + f" | {fmt(r, '.2f')} |")
    md += ["", "## Goals (IET over LIO, each backing)", "", "| workload | goal | " +
           " | ".join(data) + " |", "|" + "---|" * (2 + len(data))]
    for w, goal in GOALS:
        cells = []
        for backing in data:
            r = ratio(get(data, backing, "IET", w, "iops"), get(data, backing, "LIO", w, "iops"))
            cells.append(f"{fmt(r, '.2f')} {'met' if r >= goal else 'not met'}"
                         if not math.isnan(r) else "—")
        md.append(f"| {w} | {goal} | " + " | ".join(cells) + " |")
    for w, key, what in (("4k randread QD32", "cpu_ms_per_kcmd", "CPU per command"),
                         ("4k randwrite QD32", "cpu_ms_per_kcmd", "CPU per command"),
                         ("128k read QD8", "cpu_s_per_gib", "CPU per GiB"),
                         ("128k write QD8", "cpu_s_per_gib", "CPU per GiB")):
        cells = []
        for backing in data:
            r = ratio(get(data, backing, "IET", w, key), get(data, backing, "LIO", w, key))
            cells.append(f"{fmt(r, '.2f')} {'met' if r <= 0.75 else 'not met'}"
                         if not math.isnan(r) else "—")
        md.append(f"| {what}, {w} (whole VM) | ≤ 0.75 | " + " | ".join(cells) + " |")
    r = ratio(max((get(data, b, "IET", "128k read QD8", "mbps") for b in data), default=float("nan")),
              wire_mbps)
    md.append(f"| 128k read QD8 over iperf3 (best backing) | 0.9 | {fmt(r, '.2f')} "
              f"{'met' if r >= 0.9 else 'not met'} |")
    lines, extra = macro_report(macros)
    md += lines
    ratios.update(extra)
    text = "\n".join(md) + "\n"
    (results / "bench.md").write_text(text)
    print(text, flush=True)
    plot(data, ratios, impls, works, results)


def macro_report(macros):
    """The macrobenchmarks' tables and their goals (1.2 x LIO), and their
    ratios for the plot: {name: (over LIO, over tgt)}."""
    pm, ns = macros.get("postmark", {}), macros.get("netserver", {})
    if not pm and not ns:
        return [], {}

    def over(table, key, other, *where):
        def pick(name):
            v = table.get(name, {})
            for k in where:
                v = v.get(k, {})
            return v.get(key, float("nan"))
        return ratio(pick("IET"), pick(other))
    md = ["", "## PostMark (file backing, ext4, cold caches)", "",
          "| target | transactions/s, run and sync | PostMark's own transactions/s | "
          "run s | run and sync s | |", "|---|---|---|---|---|---|"]
    for name, r in pm.items():
        md.append(f"| {name} | {fmt(r.get('tps'), '.1f')} | {fmt(r.get('postmark_tps'))} | "
                  f"{fmt(r.get('postmark_s'), '.1f')} | {fmt(r.get('total_s'), '.1f')} | "
                  f"{r.get('error', 'clean')} |")
    md += ["", "## Network server (file backing, 2 MiB files read whole, hot target cache)", "",
           "| target | files | MB/s | files/s | per file p50 / p99 ms | target cache hit rate |",
           "|---|---|---|---|---|---|"]
    for name, sets in ns.items():
        for count, r in sets.items():
            md.append(f"| {name} | {count} | {fmt(r['mbps'], '.1f')} | "
                      f"{fmt(r['files_per_s'], '.1f')} | {fmt(r['file_p50_ms'], '.1f')} / "
                      f"{fmt(r['file_p99_ms'], '.1f')} | {fmt(r['hit_rate'] * 100, '.1f')} % |")
    md += ["", "## Macrobenchmark goals (IET over LIO)", "", "| workload | goal | ratio |",
           "|---|---|---|"]
    extra = {"PostMark": (over(pm, "tps", "LIO"), over(pm, "tps", "tgt"))}
    md.append(f"| PostMark transactions/s, run and sync | 1.2 | {verdict(extra['PostMark'][0])} |")
    for count in ns.get("IET", {}):
        name = f"network server, {count} files"
        extra[name] = (over(ns, "mbps", "LIO", count), over(ns, "mbps", "tgt", count))
        md.append(f"| {name}, MB/s | 1.2 | {verdict(extra[name][0])} |")
    return md, extra


def verdict(r, goal=1.2):
    return "—" if math.isnan(r) else f"{r:.2f} {'met' if r >= goal else 'not met'}"


def plot(data, ratios, impls, works, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: matplotlib is missing: no plot", flush=True)
        return
    names = list(ratios)
    fig, ax = plt.subplots(figsize=(10, 0.4 * len(names) + 1.5))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [ratios[n][0] for n in names], 0.4, label="IET / LIO")
    ax.barh([i - 0.2 for i in y], [ratios[n][1] for n in names], 0.4, label="IET / tgt")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(y), names)
    ax.set_xlabel("IOPS ratio (> 1: IET faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(results / "ratios.png", dpi=100)
    plt.close(fig)

    qd1 = [w for w in works if "QD" in w]
    if not qd1:
        return              # only session jobs ran: no latency plot
    fig, axes = plt.subplots(len(data), 1, figsize=(11, 3.2 * len(data)), squeeze=False)
    for ax, backing in zip(axes[:, 0], data):
        x = range(len(qd1))
        width = 0.8 / max(1, len(impls))
        for k, impl in enumerate(impls):
            p99 = [get(data, backing, impl, w, "p99_us") for w in qd1]
            p50 = [get(data, backing, impl, w, "p50_us") for w in qd1]
            xs = [i + (k - (len(impls) - 1) / 2) * width for i in x]
            ax.bar(xs, p99, width, label=f"{impl} p99", alpha=0.45)
            ax.scatter(xs, p50, marker="_", s=120, color="black")
        ax.set_yscale("log")
        ax.set_xticks(list(x), qd1, fontsize=8)
        ax.set_ylabel(f"{backing}: µs")
        ax.legend(fontsize=7)
    axes[0, 0].set_title("completion latency: bars p99, ticks p50")
    fig.tight_layout()
    fig.savefig(results / "latency.png", dpi=100)
    plt.close(fig)


def prepare_initiator():
    os.environ.setdefault("HOME", "/tmp/home")
    for d in ("/tmp/home", "/run/lock/iscsi", "/var/lib/iscsi"):
        Path(d).mkdir(parents=True, exist_ok=True)
    run(["modprobe", "iscsi_tcp"])
    Path("/etc/iscsi/initiatorname.iscsi").write_text(
        "InitiatorName=iqn.2024-01.com.example.iet:bench\n")
    conf = Path("/etc/iscsi/iscsid.conf")
    text = conf.read_text() if conf.exists() else ""
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("iscsid.startup")]
    conf.write_text("\n".join(lines + ["iscsid.startup = /bin/true"]) + "\n")
    # Loopback queues what it sends on the sending CPU's backlog, at most
    # netdev_max_backlog (1,000) packets, and drops the rest: with 64
    # sessions under TCG it dropped hundreds a job, for every target, and
    # each drop cost a retransmission, some a 200 ms timeout. A wire's NIC
    # has its ring and NAPI instead; the comparison is of the targets.
    Path("/proc/sys/net/core/netdev_max_backlog").write_text("16384\n")
    iscsid = ini.Iscsid()
    iscsid.start()
    return iscsid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--runtime", type=int, default=4, help="measured seconds per fio job")
    ap.add_argument("--size", type=int, default=256, help="MiB of storage, each target")
    ap.add_argument("--only", choices=BACKINGS, help="one backing only")
    ap.add_argument("--targets", default="IET,LIO,tgt", help="which, comma-separated")
    ap.add_argument("--sessions", default=",".join(map(str, SESSIONS)),
                    help="session counts for the 4k jobs on the file backing ('' for none)")
    ap.add_argument("--sched", action="store_true",
                    help="where each job's time goes, by thread, from a second of the "
                    "scheduler's switches (RESULTS/sched-*.txt; costs CPU: no figures to compare)")
    ap.add_argument("--profile", action="store_true",
                    help="the guest's instructions by kernel function in each job, counted "
                    "by the emulator (RESULTS/profile-*.txt; needs scripts/bench --profile, "
                    "which loads the tcgprof plugin; no figures to compare)")
    ap.add_argument("--match", default="",
                    help="only the workloads whose name contains this, e.g. randwrite")
    ap.add_argument("--macro",
                    help="which of the targets also run PostMark and the network server "
                    "('' for none; default IET,LIO, none with --only or --match)")
    ap.add_argument("--netserver-reads", type=int, default=4096,
                    help="whole-file reads per file set in the network-server workload")
    ap.add_argument("--report", action="store_true",
                    help="only write the report again from RESULTS/bench.json")
    a = ap.parse_args()
    if a.report:
        saved = json.loads((a.results / "bench.json").read_text())
        report(saved["data"], saved["iperf3_mbps"], a.results, saved.get("macro", {}))
        return
    global SCHED, PROFILE
    SCHED, PROFILE = a.sched, a.profile
    if PROFILE and not (a.results / "tcgprof").is_dir():
        ap.error("--profile: run through scripts/bench --profile (no tcgprof plugin)")
    for table in (WORKLOADS, SESSION_WORKLOADS):
        for w in [w for w in table if a.match not in w]:
            del table[w]
    a.results.mkdir(parents=True, exist_ok=True)
    size = a.size * MiB
    sessions = [int(n) for n in a.sessions.split(",") if n]
    iscsid = prepare_initiator()
    known = {"IET": Iet, "IET-classic": IetClassic, "LIO": Lio, "tgt": Tgt}
    impls = [known[n](a.results, slot) for slot, n in enumerate(a.targets.split(","))]
    for k, impl in enumerate(impls):
        if isinstance(impl, IetClassic):
            # One module, one ietd: IET-classic is IET's target, switched.
            iet = [i for i in impls if type(i) is Iet]
            if iet and impls.index(iet[0]) > k:
                ap.error("--targets: IET-classic switches IET's target: name IET first")
            impl.share = iet[0] if iet else None
    brd = storage.Brd(size, count=len(impls)).create()
    if a.macro is None:
        a.macro = "" if a.only or a.match else "IET,LIO"
    macro_impls = [i for i in impls if i.name in a.macro.split(",")]
    data = {}
    macros = {}
    wire = float("nan")
    start = time.monotonic()
    try:
        wire = iperf3(a.results)
        print(f"bench: iperf3 one stream {wire:.0f} MB/s", flush=True)
        for backing in [a.only] if a.only else BACKINGS:
            data[backing] = measure(impls, backing, size, a.runtime, a.results,
                                    sessions if backing == "file" else ())
        print(f"bench: fio jobs done after {time.monotonic() - start:.0f} s", flush=True)
        if macro_impls:
            macros = run_macros(macro_impls, brd, a)
            print(f"bench: macrobenchmarks done after {time.monotonic() - start:.0f} s",
                  flush=True)
    finally:
        ini.logout_all()
        iscsid.stop()
        brd.remove()            # whichever RAM disk is loaded
        (a.results / "bench.json").write_text(json.dumps(
            {"iperf3_mbps": wire, "data": data, "macro": macros}, indent=1))
    report(data, wire, a.results, macros)


NETSERVER_SETS = (512, 1024)


def run_macros(impls, brd, a):
    """PostMark on the fio jobs' RAM disk, then the network server on one
    big enough for its larger file set, which replaces it."""
    out = {"postmark": {}, "netserver": {}}
    for impl in impls:
        # A target that stalls must not hold the run for long.
        out["postmark"][impl.name] = macro.postmark(impl, a.results, limit_s=420)
    brd.remove()
    # ext4's own share on top of the files, and no more: the larger set
    # must not fit in what memory the RAM disk leaves to the page cache.
    # Not zero-filled: the files fill it, and only they are read.
    big = storage.Brd(max(NETSERVER_SETS) * macro.FILE_SIZE * 9 // 8, zero=False).create()
    macro.make_files(big.dev, max(NETSERVER_SETS))
    for impl in impls:
        impl.dev = big.dev
        out["netserver"][impl.name] = macro.netserver(impl, NETSERVER_SETS, a.netserver_reads)
    return out


if __name__ == "__main__":
    main()
