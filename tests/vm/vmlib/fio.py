# SPDX-License-Identifier: GPL-2.0
"""fio job files and their verdicts.

One job file runs several (bs, rw, iodepth) combinations one after the other
(stonewall), each on its own region of the disk, so one login covers them all.
A job moves at most 512 blocks each way (4k: 2 MiB; 128k: the whole 8 MiB
region): enough for queues to fill, cheap on the debug kernel, where every
4k I/O costs tens of milliseconds under emulation.
"""

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .util import MiB, RESULTS, CommandError, safe_name


@dataclass(frozen=True)
class Combo:
    bs: str        # "4k", "128k"
    rw: str        # "write", "randwrite", "randrw", "read", ...
    iodepth: int

    @property
    def name(self):
        return f"{self.rw}-{self.bs}-qd{self.iodepth}"

    def size(self, region):
        units = {"k": 1024, "m": 1024 * 1024}
        bs = int(self.bs[:-1]) * units[self.bs[-1].lower()] if self.bs[-1].isalpha() else int(self.bs)
        return min(region, 512 * bs)


# 4k and 128k, sequential and random, QD1 and QD32.
MATRIX = [Combo(bs, rw, qd) for bs in ("4k", "128k") for rw in ("write", "randwrite") for qd in (1, 32)]


def job_file(filename, combos, region=8 * MiB, verify=True):
    g = ["[global]", f"filename={filename}", "ioengine=libaio", "direct=1"]
    if verify:
        g += ["verify=crc32c", "verify_fatal=1", "do_verify=1"]
    jobs = []
    for i, c in enumerate(combos):
        jobs += ["", f"[{c.name}]", "stonewall", f"offset={i * region}", f"size={c.size(region)}",
                 f"bs={c.bs}", f"rw={c.rw}", f"iodepth={c.iodepth}"]
    return "\n".join(g + jobs) + "\n"


def needed_size(combos, region=8 * MiB):
    return len(combos) * region


class FioResult:
    def __init__(self, rc, report, stderr, json_path):
        self.rc = rc
        self.report = report
        self.stderr = stderr
        self.json_path = json_path

    @property
    def jobs(self):
        return self.report.get("jobs", [])

    def errors(self):
        """{job name: error} for every job that reported an error."""
        return {j["jobname"]: j.get("error") for j in self.jobs if j.get("error")}

    def bytes(self, job, ddir):
        return next(j[ddir]["io_bytes"] for j in self.jobs if j["jobname"] == job)

    def assert_clean(self, combos):
        assert self.rc == 0, f"fio exited with {self.rc}:\n{self.stderr}\n(report {self.json_path})"
        assert self.errors() == {}, f"fio jobs reported errors: {self.errors()} ({self.json_path})"
        names = sorted(j["jobname"] for j in self.jobs)
        assert names == sorted(c.name for c in combos), f"fio ran jobs {names}"
        for c in combos:
            moved = self.bytes(c.name, "write") + self.bytes(c.name, "read")
            assert moved > 0, f"fio job {c.name} moved no data"


def run_fio(job_text, name, timeout=900):
    """Run a job file; the file, JSON report and stderr are kept in RESULTS."""
    base = RESULTS / f"fio-{safe_name(name)}"
    job = Path(f"{base}.fio")
    out = Path(f"{base}.json")
    job.write_text(job_text)
    cmd = ["fio", "--output-format=json", f"--output={out}", str(job)]
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"fio still running after {timeout}s ({job})") from None
    try:
        text = out.read_text()
        # fio may print notes before the JSON object.
        report = json.loads(text[text.index("{"):])
    except (FileNotFoundError, ValueError) as e:
        raise CommandError(cmd, cp.returncode, f"(no JSON report: {e})", cp.stderr) from None
    return FioResult(cp.returncode, report, cp.stderr, out)


def start_fio(args, log):
    """fio in the background (for tests that pull the rug from under it)."""
    f = open(log, "w")
    return subprocess.Popen(["fio", *args], stdout=f, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
