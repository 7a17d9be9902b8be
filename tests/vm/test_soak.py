# SPDX-License-Identifier: GPL-2.0
"""Soak: many sessions under verified I/O while everything around them
churns.

PER_TARGET sessions of the kernel initiator (one per open-iscsi iface
record) to each of four targets -- fileio write-through, fileio write-back,
blockio on brd, and a target with two fileio LUNs -- plus one session to a
fifth target that takes LUN resets: 17 sessions by default. Each carries an
fio job at queue depth 32 writing and verifying (verify_backlog) its own
region of its LUN, in 4, 8 or 64 KiB blocks.

While fio runs (and for one round before, with the sessions idle, which
times a round: fio runs for two at least), rounds of churn go on, one
event after another:
  - a raw initiator logs in, runs TEST UNIT READY and logs out, or vanishes
    (RST) without a logout;
  - a raw session on the write-through LUN, which fio keeps busy, sends
    1 MiB READs and aborts them (ABORT TASK, then ABORT TASK SET): each
    answered Function Complete, or No Task for a READ already done;
  - sg_reset sends a LOGICAL UNIT RESET to the fifth target's LUN while its
    fio job runs (on a LUN of its own: the reset's effect on another
    initiator's I/O is test_hostile.py's);
  - open-iscsi logs in to a spare target, reads from it and logs out;
  - ietd reloads a config that adds or drops a target (ietadm --op reload);
  - ietd is stopped and started again (SIGTERM, then a new ietd).

Then: every fio job ended without error having written and verified data;
no session was dropped (the target lists the same sessions before and after
the churn); after logout the target lists no session and no connection
thread is left; available memory, less what processes hold more than before
(iscsid keeps, mlocked, the heap its sessions grew), and unreclaimable
slab come back within MEM_MARGIN_KIB and SLAB_MARGIN_KIB of where they were
before the logins.
The figures go to RESULTS/soak.txt.

IET_SOAK_SECONDS (default 30, or two rounds of churn if longer) and
IET_SOAK_PER_TARGET (default 4, sized for make check's hour) make a long
run, e.g. IET_SOAK_SECONDS=14400 IET_SOAK_PER_TARGET=16 for four hours.
"""

import json
import os
import subprocess
import threading
import time
import traceback

import pytest

from ietlib import daemon, ietadm  # noqa: F401
from vmlib import initiator as ini
from vmlib import memory, proc, storage
from vmlib import rawiscsi as ri
from vmlib.target import iet_threads, iqn
from vmlib.util import KiB, MiB, RESULTS, run, wait_until

SECONDS = int(os.environ.get("IET_SOAK_SECONDS", "30"))
PER_TARGET = int(os.environ.get("IET_SOAK_PER_TARGET", "4"))
QD = 32
BLOCK_SIZES = ("4k", "8k", "64k")
LUN_SIZE = 64 * MiB
RESET_LUN_SIZE = 16 * MiB
# After logout, available memory (vmlib.memory: MemAvailable and the free
# pages of the per-CPU lists, less the growth of AnonPages: process memory,
# iscsid's above all) and SUnreclaim must come back this close to where
# they were before the logins: the target keeps nothing per session, the
# initiator frees its hosts and disks, and what is left is slab pages not
# yet given back.
MEM_MARGIN_KIB = 32 * 1024
SLAB_MARGIN_KIB = 16 * 1024
SETTLE_S = 60
RAW = "iqn.2026-11.org.iet.test:soak-raw"
ANSWER_S = 30


def memory_now():
    storage.drop_caches()
    m = memory.meminfo()
    return memory.available_kib(m), m["SUnreclaim"], m


class Soak:
    """The targets, their configuration and the sessions to them."""

    def __init__(self, daemon, backing, brd):
        self.daemon_factory = daemon
        self.wt, self.wb, self.blockio, self.two, self.reset, self.spare, self.extra = (
            iqn(f"soak-{n}") for n in ("wt", "wb", "blockio", "two", "reset", "spare", "extra"))
        files = {}
        for name, size in (("wt", LUN_SIZE), ("wb", LUN_SIZE), ("two0", LUN_SIZE // 2),
                           ("two1", LUN_SIZE // 2), ("reset", RESET_LUN_SIZE)):
            files[name] = backing(name, size)
            # Allocated now, so that what fio writes later costs no memory
            # the measurement after the soak would count against the target.
            fd = os.open(files[name], os.O_RDWR)
            try:
                os.posix_fallocate(fd, 0, size)
            finally:
                os.close(fd)
        self.stanzas = [
            f"Target {self.wt}\n\tLun 0 Path={files['wt']},Type=fileio,IOMode=wt\n",
            f"Target {self.wb}\n\tLun 0 Path={files['wb']},Type=fileio,IOMode=wb\n",
            f"Target {self.blockio}\n\tLun 0 Path={brd.dev},Type=blockio\n",
            f"Target {self.two}\n\tLun 0 Path={files['two0']},Type=fileio\n"
            f"\tLun 1 Path={files['two1']},Type=fileio,IOMode=wb\n",
            f"Target {self.reset}\n\tLun 0 Path={files['reset']},Type=fileio\n",
            f"Target {self.spare}\n\tLun 0 Type=nullio,Blocks=65536\n",
        ]
        self.with_extra = False
        self.daemon = daemon(self.config())

    def config(self):
        text = "".join(self.stanzas)
        if self.with_extra:
            text += f"Target {self.extra}\n\tLun 0 Type=nullio,Blocks=1024\n"
        return text

    # -- the jobs: (target, iface, lun, offset, size)
    def jobs(self):
        def split(size, n):     # n regions, each whole 64 KiB blocks
            return size // n // (64 * KiB) * (64 * KiB)

        jobs = []
        for t in (self.wt, self.wb, self.blockio):
            region = split(LUN_SIZE, PER_TARGET)
            jobs += [(t, i, 0, i * region, region) for i in range(PER_TARGET)]
        per_lun = (PER_TARGET + 1) // 2
        region = split(LUN_SIZE // 2, per_lun)
        jobs += [(self.two, i, i % 2, (i // 2) * region, region) for i in range(PER_TARGET)]
        jobs.append((self.reset, 0, 0, 0, RESET_LUN_SIZE))
        return jobs


# ---------------------------------------------------------------- open-iscsi, one session per iface

def iface(i):
    return f"soak{i}"


def ifaces_of(n):
    return [iface(i) for i in range(n)]


# ---------------------------------------------------------------- fio

def fio_job_file(jobs_with_disks, seconds):
    """Each job verifies what it wrote every quarter of its region (at most
    every 128 blocks), so that a slow kernel verifies too: a time-based job
    verifies only its backlog."""
    lines = ["[global]", "ioengine=libaio", "direct=1", "thread=1", f"iodepth={QD}",
             "rw=randwrite", "verify=crc32c", "verify_fatal=1",
             "time_based=1", f"runtime={seconds}", ""]
    for n, (target, i, lun, offset, size, disk) in enumerate(jobs_with_disks):
        bs = BLOCK_SIZES[n % len(BLOCK_SIZES)]
        blocks = size // (int(bs[:-1]) * 1024)
        lines += [f"[{target.rsplit(':', 1)[-1]}-s{i}-lun{lun}]", f"filename={disk}",
                  f"offset={offset}", f"size={size}", f"bs={bs}",
                  f"verify_backlog={max(1, min(128, blocks // 4))}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- churn

class Churn:
    """Rounds of churn events, one after another, until told to stop
    (after at least one whole round); counts and errors per event."""

    EVENTS = ("raw-login", "abort", "lun-reset", "iscsi-login", "reload", "restart")

    def __init__(self, soak, reset_disk):
        self.soak = soak
        self.reset_disk = reset_disk
        self.counts = {e: 0 for e in self.EVENTS}
        self.aborted = {"complete": 0, "no-task": 0}
        self.n = 0
        self.rounds = 0
        self.rounds_while_fio_ran = None
        self.errors = []
        self.stop = threading.Event()
        self.log = open(RESULTS / "soak-events.txt", "w")
        self.thread = threading.Thread(target=self._run, daemon=True)

    def note(self, text):
        self.log.write(f"{time.monotonic():.1f} {text}\n")
        self.log.flush()

    def round(self):
        """Each event once; False (the error noted) if one failed."""
        for event in self.EVENTS:
            try:
                getattr(self, event.replace("-", "_"))(self.n)
                self.counts[event] += 1
                self.note(f"{event} ok")
            except Exception:
                self.errors.append(f"{event} (round {self.rounds}):\n{traceback.format_exc()}")
                self.note(f"{event} FAILED")
                return False
            self.n += 1
            time.sleep(0.5)
        self.rounds += 1
        return True

    def _run(self):
        first = self.rounds
        while not (self.stop.is_set() and self.rounds > first):
            if not self.round():
                return

    # -- events
    def raw_login(self, n):
        c = ri.Connection(self.soak.spare, initiator=RAW, timeout=ANSWER_S)
        c.connect()
        c.login()
        r = c.execute(ri.cdb_test_unit_ready(), lun=0, timeout=ANSWER_S)
        assert r.status == ri.GOOD, f"TEST UNIT READY: status {r.status:#x}"
        if n % 2:
            c.reset()               # gone without a logout
            return
        assert c.logout(timeout=ANSWER_S).response == ri.LOGOUT_SUCCESS
        c.close()

    def _abort_answer(self, rsp, what):
        if rsp.response == ri.TMF_COMPLETE:
            self.aborted["complete"] += 1
        elif rsp.response == ri.TMF_NO_TASK:
            self.aborted["no-task"] += 1
        else:
            raise AssertionError(f"{what}: response {rsp.response}")

    def abort(self, n):
        c = ri.Connection(self.soak.wt, initiator=RAW, timeout=ANSWER_S)
        c.connect()
        c.login()
        bs = c.block_size(0, timeout=ANSWER_S)
        blocks = MiB // bs
        lba = (n * blocks) % (LUN_SIZE // bs - blocks)
        task = c.submit(ri.cdb_read10(lba, blocks), lun=0, read=True, edtl=MiB)
        rsp = c.tmf(ri.TMF_ABORT_TASK, rtt=task.itt, refcmdsn=task.cmdsn, lun=0,
                    timeout=ANSWER_S)
        self._abort_answer(rsp, "ABORT TASK of a 1 MiB READ")
        for _ in range(4):
            c.submit(ri.cdb_read10(lba, blocks), lun=0, read=True, edtl=MiB)
        rsp = c.tmf(ri.TMF_ABORT_TASK_SET, lun=0, timeout=ANSWER_S)
        assert rsp.response == ri.TMF_COMPLETE, f"ABORT TASK SET: response {rsp.response}"
        r = c.execute(ri.cdb_test_unit_ready(), lun=0, timeout=ANSWER_S)
        assert r.status == ri.GOOD, f"TEST UNIT READY after the aborts: status {r.status:#x}"
        assert c.logout(timeout=ANSWER_S).response == ri.LOGOUT_SUCCESS
        c.close()

    def lun_reset(self, n):
        cp = run(["sg_reset", "-d", self.reset_disk], check=False, timeout=120)
        assert cp.returncode == 0, f"sg_reset -d {self.reset_disk}: {cp.returncode} {cp.stderr}"

    def iscsi_login(self, n):
        lg = ini.login(self.soak.spare)
        disk = lg.disk(0)
        run(["dd", f"if={disk}", "of=/dev/null", "bs=64k", "count=16", "iflag=direct",
             "status=none"], timeout=120)
        ini.logout(self.soak.spare)

    def reload(self, n):
        self.soak.with_extra = not self.soak.with_extra
        self.soak.daemon.config.write_text(self.soak.config())
        ietadm("--op", "reload", timeout=120)
        listed = proc.target(proc.volumes(), self.soak.extra) is not None
        assert listed == self.soak.with_extra, \
            f"after reload {self.soak.extra} is {'' if listed else 'not '}listed"

    def restart(self, n):
        self.soak.daemon.stop()
        self.soak.daemon = self.soak.daemon_factory(self.soak.config())
        self.soak.daemon.wait_log(r"sessions already in the kernel", timeout=60)


# ---------------------------------------------------------------- the test

@pytest.fixture
def ifaces(iscsid):
    ini.make_ifaces(ifaces_of(PER_TARGET))
    yield PER_TARGET
    if ini.sysfs_sessions():
        ini.logout_all(timeout=600)
    ini.iscsiadm("-m", "node", "-o", "delete", check=False)
    ini.delete_ifaces(ifaces_of(PER_TARGET))


@pytest.mark.timeout(SECONDS + 1800)
def test_soak_many_sessions_with_churn(daemon, backing, brd, initiator, ifaces):  # noqa: F811
    soak = Soak(daemon, backing, brd)
    before_mem = memory_now()       # the backing files allocated, no session yet
    threads_before = {t.pid for t in iet_threads()}

    t0 = time.monotonic()
    for t in (soak.wt, soak.wb, soak.blockio, soak.two):
        ini.login_ifaces(t, ifaces_of(PER_TARGET))
    ini.login_ifaces(soak.reset, ifaces_of(1))
    jobs = []
    for target, i, lun, offset, size in soak.jobs():
        s = ini.sessions_by_iface(target).get(iface(i))
        assert s is not None, f"no session to {target} through iface {iface(i)}"
        jobs.append((target, i, lun, offset, size, ini.disk_of(s, lun)))
    logged_in = time.monotonic() - t0
    names = (soak.wt, soak.wb, soak.blockio, soak.two, soak.reset)
    sids_before = sorted((n, s.sid) for n in names for s in proc.sessions_of(n))
    assert len(sids_before) == 4 * PER_TARGET + 1, \
        f"the target lists {len(sids_before)} sessions, not {4 * PER_TARGET + 1}"
    reset_disk = next(d for (t, _, _, _, _, d) in jobs if t == soak.reset)

    # A first round of churn with the sessions idle tells how long one
    # takes on this kernel: fio runs for two at least.
    churn = Churn(soak, reset_disk)
    t2 = time.monotonic()
    assert churn.round(), "churn failed:\n" + "\n".join(churn.errors)
    seconds = max(SECONDS, int(2 * (time.monotonic() - t2)) + 5)
    job = RESULTS / "fio-soak.fio"
    out = RESULTS / "fio-soak.json"
    job.write_text(fio_job_file(jobs, seconds))
    fio = subprocess.Popen(["fio", "--output-format=json", f"--output={out}", str(job)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    churn.thread.start()
    try:
        fio_out, _ = fio.communicate(timeout=seconds + 900)
    finally:
        if fio.poll() is None:
            fio.kill()
            fio.wait(30)
        churn.rounds_while_fio_ran = churn.rounds - 1
        churn.stop.set()
    churn.thread.join(600)
    assert not churn.thread.is_alive(), "the churn did not end within 600 s"
    churn.log.close()
    assert not churn.errors, "churn failed:\n" + "\n".join(churn.errors)

    text = out.read_text() if out.exists() else ""
    assert fio.returncode == 0, f"fio exited with {fio.returncode}:\n{fio_out[-3000:]}"
    report = json.loads(text[text.index("{"):])
    bad = {j["jobname"]: j["error"] for j in report["jobs"] if j["error"]}
    assert not bad, f"fio jobs failed: {bad} ({out})"
    idle = [j["jobname"] for j in report["jobs"]
            if j["write"]["io_bytes"] == 0 or j["read"]["io_bytes"] == 0]
    assert not idle, f"fio jobs that wrote or verified nothing: {idle} ({out})"
    writes = sum(j["write"]["total_ios"] for j in report["jobs"])
    verified = sum(j["read"]["total_ios"] for j in report["jobs"])

    sids_after = sorted((n, s.sid) for n in names for s in proc.sessions_of(n))
    assert sids_after == sids_before, \
        f"sessions were dropped and made again: {sorted(set(sids_before) - set(sids_after))[:8]}"

    # Teardown: every session goes, with its threads; memory comes back.
    t1 = time.monotonic()
    ini.logout_all(timeout=600)
    wait_until(lambda: not any(t.sessions for t in proc.sessions()), 120, "the target to list no session")
    wait_until(lambda: not [t for t in iet_threads() if t.comm.startswith(("iet_rx", "iet_tx"))],
               60, lambda: f"connection threads to end: "
               f"{[t.comm for t in iet_threads() if t.pid not in threads_before][:8]}")
    logged_out = time.monotonic() - t1
    deadline = time.monotonic() + SETTLE_S
    while True:
        after_mem = memory_now()
        anon_rise = max(0, after_mem[2]["AnonPages"] - before_mem[2]["AnonPages"])
        mem_drop = before_mem[0] - after_mem[0] - anon_rise
        slab_rise = after_mem[1] - before_mem[1]
        if (mem_drop < MEM_MARGIN_KIB and slab_rise < SLAB_MARGIN_KIB) or \
                time.monotonic() >= deadline:
            break
        time.sleep(2)

    meminfo_moved = ", ".join(f"{k} {d:+d}" for k, d in
                              memory.moved(before_mem[2], after_mem[2], 512))
    figures = (f"soak: {len(jobs)} sessions ({PER_TARGET} per target over 4 targets + 1 reset), "
               f"QD{QD}, {seconds} s; logged in in {logged_in:.0f} s, out in {logged_out:.0f} s\n"
               f"soak: fio {writes} writes, {verified} verify reads, 0 errors\n"
               f"soak: churn {churn.rounds} rounds ({churn.rounds_while_fio_ran} while fio ran): " +
               ", ".join(f"{k} {v}" for k, v in churn.counts.items()) +
               f"; aborts complete {churn.aborted['complete']}, no-task {churn.aborted['no-task']}\n"
               f"soak: available memory {before_mem[0]} KiB before, {after_mem[0]} KiB after "
               f"(drop {mem_drop} KiB besides {anon_rise} KiB more AnonPages, margin {MEM_MARGIN_KIB}); "
               f"SUnreclaim {before_mem[1]} KiB before, {after_mem[1]} KiB after "
               f"(rise {slab_rise} KiB, margin {SLAB_MARGIN_KIB})\n"
               f"soak: /proc/meminfo moved (KiB): {meminfo_moved}\n")
    print(figures)
    with open(RESULTS / "soak.txt", "a") as f:
        f.write(figures)
    assert churn.rounds_while_fio_ran >= 1, \
        f"not one whole round of churn while fio ran ({churn.counts})"
    assert mem_drop < MEM_MARGIN_KIB, \
        f"available memory {mem_drop} KiB below its start after the soak, besides process memory"
    assert slab_rise < SLAB_MARGIN_KIB, f"SUnreclaim {slab_rise} KiB above its start after the soak"
