# SPDX-License-Identifier: GPL-2.0
"""The statistics of a LUN and of a session (ietadm --op show --stats, the
kernel's per-CPU counters and latency histograms), counted against what fio
and sg3-utils sent, and the same numbers as Prometheus reads them: ietd's
MetricsFile collected by Debian's prometheus-node-exporter (its textfile
collector parses the file, and says so when it cannot)."""

import json
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from ietlib import ietadm, stats
from vmlib import initiator as ini
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB, RESULTS, run, safe_name

WRITES = 400
READS = 200
FLUSHES = 3
BS = 4096
HIST_BUCKETS = 23


def fio(disk, rw, ios, name):
    """ios direct 4 KiB I/Os at QD1 over the first 16 MiB; fio's JSON."""
    out = RESULTS / f"fio-{safe_name(name)}-{rw}.json"
    run(["fio", "--name=stats", f"--filename={disk}", f"--rw={rw}", f"--bs={BS}",
         "--direct=1", "--ioengine=libaio", "--iodepth=1", "--size=16M",
         f"--number_ios={ios}", "--randrepeat=0", "--norandommap",
         "--output-format=json", f"--output={out}"], timeout=600)
    text = out.read_text()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    ddir = "write" if "write" in rw else "read"
    assert job["error"] == 0
    return job[ddir]["total_ios"], job[ddir]["io_bytes"]


def hist_count(h):
    assert len(h["buckets"]) == HIST_BUCKETS
    assert sum(b["count"] for b in h["buckets"]) == h["count"]
    return h["count"]


def sid_of(tid):
    [t] = [t for t in json.loads(ietadm("--op", "show", "--json").stdout)["targets"]
           if t["tid"] == tid]
    [s] = t["sessions"]
    return s["sid_str"]


def test_counters_and_histograms_match_what_the_initiator_sent(request, ietd, backing, initiator):
    name = iqn("stats")
    ietd(Target(name, [Lun(0, str(backing("stats", 64 * MiB)))]))
    disk = initiator.login(name).disk(0)
    sid = sid_of(1)
    lun0, ses0 = stats(1, "lun=0"), stats(1, f"sid={sid}")

    w_ios, w_bytes = fio(disk, "randwrite", WRITES, request.node.name)
    r_ios, r_bytes = fio(disk, "randread", READS, request.node.name)
    for _ in range(FLUSHES):
        run(["sg_sync", disk])
    # READ(10) of one block past the end: ILLEGAL REQUEST, LBA out of range.
    # Counted from just before it: the initiator's kernel asks on its own
    # for what a LUN may not have (7.x's sd, at each open for writing, the
    # command duration limits page, MODE SENSE 0Ah/05h: refused, rightly).
    pre = {"lun": stats(1, "lun=0"), "ses": stats(1, f"sid={sid}")}
    blocks = 64 * MiB // 512
    cp = run(["sg_raw", "-r", "512", disk, "28", "00",
              *(f"{b:02x}" for b in blocks.to_bytes(4, "big")), "00", "00", "01", "00"],
             check=False)
    assert cp.returncode != 0, cp.stdout + cp.stderr
    lun, ses = stats(1, "lun=0"), stats(1, f"sid={sid}")

    assert (w_ios, w_bytes) == (WRITES, WRITES * BS)
    for after, before, just in ((lun, lun0, pre["lun"]), (ses, ses0, pre["ses"])):
        ops = {k: after["commands_by_op"][k] - before["commands_by_op"][k]
               for k in after["commands_by_op"]}
        # Only fio writes; the initiator's own scans and udev read too.
        assert ops["write"] == WRITES
        assert after["write_bytes"] - before["write_bytes"] == WRITES * BS
        assert ops["read"] >= READS + 1
        assert after["read_bytes"] - before["read_bytes"] >= r_bytes
        assert ops["flush"] == FLUSHES
        assert after["commands"] - before["commands"] == sum(ops.values())
        assert after["check_conditions"]["illegal_request"] - \
            just["check_conditions"]["illegal_request"] == 1
        assert after["errors"] - before["errors"] >= 1
        for op, n in (("write", WRITES), ("flush", FLUSHES)):
            for kind in ("total", "backend"):
                h, h0 = after["latency"][op][kind], before["latency"][op][kind]
                got = hist_count(h) - hist_count(h0)
                assert got == n, (op, kind, got)
                mean = (h["sum_ns"] - h0["sum_ns"]) / n
                # A write-through write through an emulated VM: between a
                # microsecond and a second; the total includes the backend.
                assert 1e3 < mean < 1e9, (op, kind, mean)
        total, backend = (after["latency"]["write"][k]["sum_ns"] -
                          before["latency"]["write"][k]["sum_ns"] for k in ("total", "backend"))
        assert total > backend
        # The lone out-of-range read has a status but never reached the backend.
        reads_total = hist_count(after["latency"]["read"]["total"]) - \
            hist_count(before["latency"]["read"]["total"])
        reads_backend = hist_count(after["latency"]["read"]["backend"]) - \
            hist_count(before["latency"]["read"]["backend"])
        assert reads_total == ops["read"]
        assert reads_backend == ops["read"] - 1

    text = ietadm("--op", "show", "--tid=1", "--stats").stdout
    assert re.search(rf"\tlun:0\n\t\tcommands:\d+ read:\d+ write:{lun['commands_by_op']['write']} ", text)
    assert re.search(r"\t\twrite total latency: count:\d+ mean:[\d.]+us p50:<=", text)
    assert f"illegal_request:{lun['check_conditions']['illegal_request']}" in text


def samples(text, name, **labels):
    """(labels, value) of each sample of name whose labels include labels
    (node_exporter sorts the labels and writes values its own way)."""
    found = []
    for line in text.splitlines():
        m = re.match(r"([a-z_]+)(?:\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if all(have.get(k) == str(v) for k, v in labels.items()):
            found.append((have, float(m.group(3))))
    return found


def metric(text, name, **labels):
    """The value of the one sample of name whose labels include labels."""
    found = samples(text, name, **labels)
    assert len(found) == 1, (name, labels, found)
    return found[0][1]


@pytest.fixture
def node_exporter(tmp_path_factory):
    """Debian's prometheus-node-exporter, the textfile collector alone, on
    a port of loopback; its directory is where ietd writes."""
    exe = shutil.which("prometheus-node-exporter")
    assert exe, "prometheus-node-exporter is not installed (scripts/deps)"
    d = Path("/tmp/iet-textfile")
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    log = open(RESULTS / "node-exporter.log", "w")
    p = subprocess.Popen([exe, "--collector.disable-defaults", "--collector.textfile",
                          f"--collector.textfile.directory={d}",
                          "--web.listen-address=127.0.0.1:9919"],
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    yield d, "http://127.0.0.1:9919/metrics"
    p.terminate()
    p.wait(timeout=30)
    log.close()
    shutil.rmtree(d, ignore_errors=True)


def scrape(url, until, timeout=60):
    """/metrics, once until(text) holds."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            text = urllib.request.urlopen(url, timeout=10).read().decode()
            if until(text):
                return text
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} never showed what was waited for:\n{text[-3000:]}")


def test_node_exporter_shows_what_fio_did(request, ietd, backing, initiator, node_exporter):
    d, url = node_exporter
    name = iqn("prom")
    ietd(Target(name, [Lun(0, str(backing("prom", 64 * MiB)))]),
         global_params={"MetricsFile": str(d / "iet.prom"), "MetricsInterval": 1})
    disk = initiator.login(name).disk(0)
    ios, nbytes = fio(disk, "randwrite", WRITES, request.node.name)
    lun = {"target": name, "lun": 0}

    def done(text):
        return [v for _, v in samples(text, "iet_lun_commands_total", op="write", **lun)] == \
            [WRITES]

    text = scrape(url, done)
    assert metric(text, "node_textfile_scrape_error") == 0
    assert metric(text, "iet_lun_written_bytes_total", **lun) == nbytes == WRITES * BS
    assert metric(text, "iet_lun_write_latency_seconds_count", **lun) == ios
    assert metric(text, "iet_lun_write_latency_seconds_bucket", le="+Inf", **lun) == ios
    assert metric(text, "iet_lun_write_backend_latency_seconds_count", **lun) == ios
    mean = metric(text, "iet_lun_write_latency_seconds_sum", **lun) / ios
    assert 1e-6 < mean < 1.0
    # Buckets are cumulative, up to the count; bounds double from 2.048 us.
    buckets = sorted((float(have["le"]), v) for have, v in
                     samples(text, "iet_lun_write_latency_seconds_bucket", **lun))
    les = [le for le, _ in buckets]
    counts = [v for _, v in buckets]
    assert len(les) == HIST_BUCKETS and les[-1] == float("inf")
    assert all(abs(les[i] - 2.048e-6 * 2 ** i) < 1e-15 for i in range(HIST_BUCKETS - 1))
    assert counts == sorted(counts) and counts[-1] == ios
    assert metric(text, "iet_session_written_bytes_total", target=name,
                  initiator=ini.initiator_name()) == nbytes
    # ietadm says the same, for a timer of one's own.
    prom = ietadm("--op", "show", "--tid=1", "--prometheus").stdout
    assert metric(prom, "iet_lun_commands_total", op="write", **lun) == WRITES
