#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inside the VM: the same fio jobs against IET, LIO and tgt in one boot.

Each target in turn exports the same storage at 127.0.0.1:3260 to the kernel
initiator with the same session limits; fio then runs every workload on the
disk it brings. Three backings: a zero-filled brd RAM disk through the page
cache ("ram": IET fileio with IOMode=wt, and as IET-direct the same with
direct_writes=Y; LIO iblock, tgt rdwr), the same disk
without it ("ram-blockio": IET blockio, LIO iblock, tgt rdwr with O_DIRECT),
and no storage at all ("null": IET nullio, LIO rd_mcp nullio, tgt null),
which measures the protocol path alone.

Absolute numbers under software emulation mean little; the ratios do.
Writes RESULTS/bench.json, RESULTS/bench.md and, if matplotlib is there,
RESULTS/ratios.png.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/vm"))
# vmlib reads where results go when it is imported.
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    os.environ["IET_RESULTS"] = str(Path(sys.argv[1]).resolve())

from vmlib import initiator as ini  # noqa: E402
from vmlib import storage  # noqa: E402
from vmlib.target import Ietd, KernelModule, Lun, Target, render_config  # noqa: E402
from vmlib.util import MiB, run, wait_until  # noqa: E402

WORKLOADS = {
    "4k randread QD32": {"bs": "4k", "rw": "randread", "iodepth": 32},
    "4k randwrite QD32": {"bs": "4k", "rw": "randwrite", "iodepth": 32},
    "4k randread QD1": {"bs": "4k", "rw": "randread", "iodepth": 1},
    "128k read QD8": {"bs": "128k", "rw": "read", "iodepth": 8},
    "128k write QD8": {"bs": "128k", "rw": "write", "iodepth": 8},
}
# The same limits for every target, so the comparison is of implementations.
KEYS = {
    "MaxRecvDataSegmentLength": 262144,
    "MaxXmitDataSegmentLength": 262144,
    "MaxBurstLength": 262144,
    "FirstBurstLength": 65536,
}
IQN = "iqn.2001-04.com.example:bench"
BACKINGS = ["ram", "ram-blockio", "null"]
PORTAL = "127.0.0.1:3260"


class Iet:
    name = "IET"

    def __init__(self, results):
        self.results = results
        self.kmod = KernelModule()
        self.ietd = None

    def start(self, backing, size):
        self.kmod.load()
        self.set_params()
        if backing == "ram":
            lun = Lun(0, storage.Brd.dev, params={"IOMode": "wt"})
        elif backing == "ram-blockio":
            lun = Lun(0, storage.Brd.dev, type="blockio", params={"IOMode": "wt"})
        else:
            lun = Lun(0, type="nullio", params={"Blocks": size // 512})
        params = dict(KEYS, NOPInterval=0)
        self.ietd = Ietd(render_config([Target(IQN, [lun], params=params)]), "bench-ietd").start()

    def set_params(self):
        pass

    def stop(self):
        self.ietd.stop()
        self.kmod.unload()      # the kernel keeps targets after ietd exits


class IetDirect(Iet):
    """fileio write-through by direct I/O (direct_writes=Y) instead of
    buffered writes and a sync each: which serves better, in the same boot."""
    name = "IET-direct"
    backings = ("ram",)

    def set_params(self):
        Path("/sys/module/iscsi_trgt/parameters/direct_writes").write_text("1\n")


class Lio:
    name = "LIO"

    def __init__(self, results):
        run(["modprobe", "-a", "configfs", "target_core_mod", "iscsi_target_mod",
             "target_core_iblock"], timeout=60)
        if not Path("/sys/kernel/config/target").exists():
            run(["mount", "-t", "configfs", "configfs", "/sys/kernel/config"], check=False)
        Path("/etc/rtslib-fb-target/pr").mkdir(parents=True, exist_ok=True)
        warnings.filterwarnings("ignore", message="Cannot set dbroot")
        import rtslib_fb
        self.r = rtslib_fb
        self.objs = []

    def start(self, backing, size):
        r = self.r
        if backing.startswith("ram"):
            so = r.BlockStorageObject("bench", dev=storage.Brd.dev)
        else:
            so = r.RDMCPStorageObject("bench", size=size, nullio=True)
        t = r.Target(r.FabricModule("iscsi"), IQN)
        tpg = r.TPG(t, 1)
        for k, v in KEYS.items():
            tpg.set_parameter(k, str(v))
        tpg.set_attribute("authentication", "0")
        tpg.set_attribute("generate_node_acls", "1")
        tpg.set_attribute("demo_mode_write_protect", "0")
        r.NetworkPortal(tpg, "127.0.0.1", 3260)
        r.LUN(tpg, 0, so)
        tpg.enable = True
        self.objs = [t, so]

    def stop(self):
        for o in self.objs:
            o.delete()
        self.objs = []


class Tgt:
    name = "tgt"

    def __init__(self, results):
        self.results = results
        self.proc = None

    def adm(self, *args):
        return run(["tgtadm", "--lld", "iscsi", *args], timeout=60)

    def start(self, backing, size):
        log = open(self.results / "tgtd.log", "a")
        self.proc = subprocess.Popen(["tgtd", "-f", "--iscsi", f"portal={PORTAL}"],
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        wait_until(lambda: run(["tgtadm", "--op", "show", "--mode", "sys"],
                               check=False).returncode == 0, 30, "tgtd to answer")
        self.adm("--op", "new", "--mode", "target", "--tid", "1", "-T", IQN)
        if backing == "ram":
            lu = ["--bstype", "rdwr", "-b", storage.Brd.dev]
        elif backing == "ram-blockio":
            lu = ["--bstype", "rdwr", "--bsoflags", "direct", "-b", storage.Brd.dev]
        else:
            lu = ["--bstype", "null", "-b", "/dev/null"]
        # tgt's LUN 0 is its controller: the disk is LUN 1.
        self.adm("--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", *lu)
        for k, v in KEYS.items():
            self.adm("--op", "update", "--mode", "target", "--tid", "1", "--name", k,
                     "--value", str(v))
        self.adm("--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL")

    lun = 1

    def stop(self):
        self.adm("--op", "delete", "--mode", "target", "--tid", "1", "--force")
        # tgtd ignores SIGTERM: it is shut down through its own interface.
        run(["tgtadm", "--op", "delete", "--mode", "system"], check=False)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def fio(disk, workload, runtime, size, results, label):
    args = ["fio", "--name=bench", f"--filename={disk}", "--direct=1", "--ioengine=libaio",
            "--time_based", f"--runtime={runtime}", "--ramp_time=2", f"--size={size}",
            "--output-format=json", "--randrepeat=0", "--norandommap"]
    args += [f"--{k}={v}" for k, v in WORKLOADS[workload].items()]
    out = run(args, timeout=runtime * 4 + 120).stdout
    (results / f"fio-{label}.json").write_text(out)
    job = json.loads(out)["jobs"][0]
    side = job["write"] if "write" in WORKLOADS[workload]["rw"] else job["read"]
    assert job["error"] == 0, f"fio reported error {job['error']} on {label}"
    return {"iops": side["iops"], "mbps": side["bw_bytes"] / 1e6,
            "lat_us": side["lat_ns"]["mean"] / 1000}


def measure(impl, backing, size, runtime, results):
    impl.start(backing, size)
    try:
        login = ini.login(IQN, PORTAL)
        disk = login.disk(getattr(impl, "lun", 0))
        out = {}
        for w in WORKLOADS:
            label = f"{impl.name}-{backing}-{w}".replace(" ", "_")
            out[w] = fio(disk, w, runtime, size, results, label)
            print(f"bench: {impl.name:12} {backing:11} {w:18} {out[w]['iops']:10.0f} IOPS "
                  f"{out[w]['mbps']:8.1f} MB/s {out[w]['lat_us']:9.1f} us", flush=True)
        login.logout()
    finally:
        impl.stop()
    return out


def report(data, results):
    impls = list(dict.fromkeys(i for per_impl in data.values() for i in per_impl))
    lines = ["| backing | workload | " + " | ".join(f"{i} IOPS" for i in impls) +
             " | IET/LIO | IET/tgt |", "|" + "---|" * (4 + len(impls))]
    ratios = {}
    for backing, per_impl in data.items():
        for w in WORKLOADS:
            iops = {i: per_impl[i][w]["iops"] if i in per_impl else float("nan")
                    for i in impls}
            r_lio = iops["IET"] / iops["LIO"] if iops.get("LIO") else float("nan")
            r_tgt = iops["IET"] / iops["tgt"] if iops.get("tgt") else float("nan")
            ratios[f"{backing}: {w}"] = (r_lio, r_tgt)
            row = (f"| {backing} | {w} | " + " | ".join(f"{iops[i]:.0f}" for i in impls) +
                   f" | {r_lio:.2f} | {r_tgt:.2f} |")
            lines.append(row.replace("| nan", "| —"))
    table = "\n".join(lines) + "\n"
    (results / "bench.md").write_text(table)
    print(table)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: matplotlib is missing: no plot", flush=True)
        return
    names = list(ratios)
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(names) + 1.5))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [ratios[n][0] for n in names], 0.4, label="IET / LIO")
    ax.barh([i - 0.2 for i in y], [ratios[n][1] for n in names], 0.4, label="IET / tgt")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(y), names)
    ax.set_xlabel("IOPS ratio (> 1: IET faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(results / "ratios.png", dpi=100)


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
    iscsid = ini.Iscsid()
    iscsid.start()
    return iscsid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--runtime", type=int, default=10, help="seconds per fio job")
    ap.add_argument("--size", type=int, default=512, help="MiB of storage")
    ap.add_argument("--only", choices=BACKINGS, help="one backing only")
    a = ap.parse_args()
    a.results.mkdir(parents=True, exist_ok=True)
    size = a.size * MiB
    iscsid = prepare_initiator()
    brd = storage.Brd(size).create()
    impls = [Iet(a.results), IetDirect(a.results), Lio(a.results), Tgt(a.results)]
    data = {}
    try:
        for backing in [a.only] if a.only else BACKINGS:
            data[backing] = {}
            for impl in impls:
                if backing not in getattr(impl, "backings", BACKINGS):
                    continue
                data[backing][impl.name] = measure(impl, backing, size, a.runtime, a.results)
                time.sleep(1)
    finally:
        ini.logout_all()
        iscsid.stop()
        brd.remove()
    (a.results / "bench.json").write_text(json.dumps(data, indent=1))
    report(data, a.results)


if __name__ == "__main__":
    main()
