#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The cluster suite's pieces that need no VM: acked-writes (its record,
its check finding a lost write), the timings' order, and the deployment
guide (doc/cluster.md) holding the very configurations the suite runs.
Prints "cluster: N passed, N failed" for run-check.sh."""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
CLUSTER = os.path.join(REPO, "tests", "cluster")
ACKED = os.path.join(CLUSTER, "acked-writes")
sys.path.insert(0, CLUSTER)
from clusterlib import config, timings as t  # noqa: E402
from pycheck import Checks  # noqa: E402

check = Checks("cluster")
loader = importlib.machinery.SourceFileLoader("acked_writes", ACKED)
spec = importlib.util.spec_from_loader("acked_writes", loader)
aw = importlib.util.module_from_spec(spec)
loader.exec_module(aw)

# ---- the record
rec = aw.record(7, 42)
check("a record is one 4 KiB block", len(rec) == aw.BS)
check("a record parses back", aw.parse(rec) == (7, 42))
flipped = bytearray(rec)
flipped[100] ^= 1
check("a flipped bit is no record", aw.parse(bytes(flipped)) is None)
check("zeroes are no record", aw.parse(bytes(aw.BS)) is None)


def acked(*args):
    return subprocess.run([sys.executable, ACKED, *args], capture_output=True, text=True)


# ---- write, check, lose one, check again (O_DIRECT: a file on the build
# tree's file system, not tmpfs)
with tempfile.TemporaryDirectory(dir=os.path.join(HERE, "obj")) as d:
    img, log, stop = (os.path.join(d, n) for n in ("img", "log", "stop"))
    with open(img, "wb") as f:
        f.truncate(4 << 20)
    threading.Timer(0.5, lambda: open(stop, "w").close()).start()
    t0 = time.monotonic()
    w = acked("write", img, log, stop, "--offset", "1", "--blocks", "768", "--rate", "400")
    took = time.monotonic() - t0
    check("the writer stops on its stop file, status 0", w.returncode == 0)
    lines = open(log).read().splitlines()
    check("the writer logs its acknowledged writes, each to a block of its own",
          len(lines) > 64 and [int(ln.split()[1]) for ln in lines] == list(range(len(lines))))
    check("the writer keeps to its rate", len(lines) <= 400 * took + 1)
    c = acked("check", img, log, "--offset", "1", "--blocks", "768")
    got = json.loads(c.stdout) if c.stdout else {}
    check("every logged write is found", c.returncode == 0 and got.get("missing") == 0
          and got.get("acknowledged") == len(lines))
    # An early write the disk lost: no later write hides it.
    with open(img, "r+b") as f:
        f.seek((1 << 20) + 3 * aw.BS)
        f.write(bytes(aw.BS))
    c = acked("check", img, log, "--offset", "1", "--blocks", "768")
    got = json.loads(c.stdout) if c.stdout else {}
    check("a lost acknowledged write is found", c.returncode == 1 and got.get("missing") == 1)
    with open(img, "r+b") as f:
        f.seek((1 << 20) + 3 * aw.BS)
        f.write(aw.record(4, 5))
    c = acked("check", img, log, "--offset", "1", "--blocks", "768")
    check("a record at the wrong block is found", c.returncode == 1)
    with open(img, "r+b") as f:
        f.seek((1 << 20) + 3 * aw.BS)
        f.write(aw.record(3, 3))
    c = acked("check", img, log, "--offset", "1", "--blocks", "768")
    check("an older generation is found", c.returncode == 1)
    with open(log, "a") as f:
        f.write(f"{len(lines) + 1} {len(lines)} {time.monotonic() + 30:.6f}\n")
    p = json.loads(acked("pause", log).stdout)
    check("the pause is the longest gap between acknowledgements", p["pause_s"] >= 29)
    p = json.loads(acked("pause", log, "--from", str(len(lines) + 1)).stdout)
    check("a pause counted from later on sees nothing", p["pause_s"] == 0)
    with open(log, "a") as f:
        f.write("7 3")
    c = acked("check", img, log, "--offset", "1", "--blocks", "768")
    check("a damaged log is an error, not a pass", c.returncode == 2)
    os.unlink(log)
    os.unlink(stop)
    w = acked("write", img, log, stop, "--offset", "1", "--blocks", "8", "--rate", "1000")
    check("a writer out of blocks fails rather than write one twice",
          w.returncode == 3 and len(open(log).read().splitlines()) == 8)

# ---- the timings' order
check("corosync's consensus exceeds its token", t.CONSENSUS_MS > t.TOKEN_MS)
check("knet declares a link down within the token",
      t.KNET_PING_INTERVAL_MS < t.KNET_PING_TIMEOUT_MS < t.TOKEN_MS)
check("DRBD's ping timeout is shorter than its request timeout",
      t.DRBD_PING_TIMEOUT_DS < t.DRBD_TIMEOUT_DS)
check("DRBD's request timeout is shorter than ping-int and connect-int (drbd.conf(5))",
      t.DRBD_TIMEOUT_DS < 10 * min(t.DRBD_PING_INT_S, t.DRBD_CONNECT_INT_S))
check("a failover fits in open-iscsi's replacement timeout",
      t.FAILOVER_S < t.REPLACEMENT_TIMEOUT_S)
check("DRBD's two monitors differ",
      t.DRBD_MONITOR_PROMOTED_S != t.DRBD_MONITOR_UNPROMOTED_S)

# ---- the guide holds the configurations as the suite renders them
doc = open(os.path.join(REPO, "doc", "cluster.md")).read()
check("the guide has corosync.conf", config.corosync_conf() in doc)
check("the guide has the DRBD resource", config.drbd_res("/dev/vdb", "/dev/vdc") in doc)
check("the guide has the Pacemaker configuration", config.crm_config() in doc)
check("the guide has LIO's target and LUN lines", all(
    line in doc for line in config.crm_config("lio-t").splitlines() if "lio-t" in line))
check("the guide has the initiator's settings", all(
    f"-n '{k}' -v {v}" in doc for k, v in config.iscsi_node_settings().items()))
check("the guide has the ALUA resources", config.crm_config_alua() in doc)
check("the guide has each node's ietd.conf for ALUA",
      all(config.ietd_conf_alua(n) in doc for n in config.NODES))
check("the guide has the initiator's multipath.conf", config.multipath_conf() in doc)
check("the guide has each path's settings under dm-multipath", all(
    f"-p {n.public}:3260 -o update -n '{k}' -v {v}" in doc
    for n in config.NODES for k, v in config.iscsi_node_settings_alua().items()))
check("the guide has the fence device and DRBD's fencing with it",
      config.stonith_lines() in doc and config.DRBD_FENCING_STONITH in doc and
      config.drbd_res("/dev/vdb", "/dev/vdc", stonith=True).replace(
          config.DRBD_FENCING_STONITH, config.DRBD_FENCING) == config.drbd_res("/dev/vdb", "/dev/vdc"))
check("the guide has sbd's timeouts",
      f"-1 {t.SBD_WATCHDOG_S} -4 {t.SBD_MSGWAIT_S} create" in doc)
check("sbd's msgwait is at least twice its watchdog timeout",
      t.SBD_MSGWAIT_S >= 2 * t.SBD_WATCHDOG_S)
check("fencing waits past msgwait and the delay",
      t.STONITH_TIMEOUT_S > t.SBD_MSGWAIT_S + t.FENCE_DELAY_S)
check("the ALUA agent's two monitors differ",
      t.ALUA_MONITOR_PROMOTED_S != t.ALUA_MONITOR_UNPROMOTED_S)
check("the guide's timings table is the suite's",
      f"| corosync `token` | {t.TOKEN_MS} ms |" in doc and
      f"`replacement_timeout` | {t.REPLACEMENT_TIMEOUT_S} s |" in doc)
check.finish()
