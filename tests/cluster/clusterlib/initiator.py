# SPDX-License-Identifier: GPL-2.0
"""The initiator VM's side: open-iscsi logged in to the portal address
that moves with the target (or, with ALUA, to each node's own portal,
dm-multipath over both), the disk it gives, and the load a scenario
runs through a failover (fio with verification, and acked-writes, whose
log says which writes the target acknowledged)."""

import json
import re
import time
from dataclasses import dataclass

from . import config as c
from . import timings as t
from .vm import REPO, GuestError, sh

ACKED = REPO / "tests" / "cluster" / "acked-writes"
# The LUN's parts: fio's verified random writes on the first FIO_MIB, and
# acked-writes from ACKED_OFFSET_MIB, each of its blocks written once, at
# most ACKED_RATE a second: 15 minutes of writes before it runs out (and
# fails), more than a scenario takes.
FIO_MIB = 64
ACKED_OFFSET_MIB = 128
ACKED_BLOCKS = 90000
ACKED_RATE = 100


@dataclass
class Session:
    sid: str            # the sysfs session (sessionN): the same one after a recovery
    disk: str           # /dev/sdX


def login(ini):
    """One session, through open-iscsi's default iface."""
    return _login(ini, ["default"])["default"]


def login_ifaces(ini, names):
    """One session per open-iscsi iface, each iface with an initiator name
    of its own ({iface: name}): the I_T nexuses of as many cluster
    clients, from one VM. {iface: Session}."""
    for iface, name in names.items():
        ini.run(f"iscsiadm -m iface -I {iface} -o new >/dev/null && "
                f"iscsiadm -m iface -I {iface} -o update -n iface.initiatorname -v {name}")
    return _login(ini, list(names))


def _login(ini, ifaces):
    """Discovery and login through each iface, with the node settings;
    {iface: Session} once each has the LUN's disk."""
    ini.run(f"iscsiadm -m discovery -t st -p {c.PORTAL} " +
            " ".join(f"-I {i}" for i in ifaces), timeout=120)
    for key, value in c.iscsi_node_settings().items():
        ini.run(f"iscsiadm -m node -T {c.IQN} -p {c.PORTAL} -o update -n '{key}' -v {value}")
    ini.run(f"iscsiadm -m node -T {c.IQN} -p {c.PORTAL} --login", timeout=180)
    return _disks(ini, ifaces, lambda iface, addr: iface, f"disks of the ifaces {ifaces}")


def _disks(ini, want, key, what):
    """{key(iface, portal address): Session} of the target's sessions with
    the LUN's disk, once it has one for each of want; each disk given the
    suite's command timeout."""
    found = {}

    def each():
        res = ini.run(f"""for s in /sys/class/iscsi_session/session*; do
			[ "$(cat $s/targetname)" = {c.IQN} ] || continue
			n=${{s##*/session}}
			for b in $s/device/target*/*:*:*:0/block/*; do
				[ -e "$b" ] && echo "$(cat $s/ifacename) $(cat /sys/class/iscsi_connection/connection$n:0/persistent_address 2>/dev/null || echo -) session$n ${{b##*/}}"
			done
		done; true""")
        for line in res.out.splitlines():
            iface, addr, sid, dev = line.split()
            found[key(iface, addr)] = Session(sid, f"/dev/{dev}")
        return set(found) >= set(want)
    deadline = time.monotonic() + 120
    while not each():
        if time.monotonic() > deadline:
            raise GuestError(f"{what}: found {found}")
        time.sleep(1)
    for sess in found.values():
        ini.run(f"echo {t.SD_TIMEOUT_S} >/sys/block/{sess.disk[5:]}/device/timeout")
    return {w: found[w] for w in want}


@dataclass
class Multipath:
    dev: str            # the map's block device, /dev/dm-N
    name: str           # its name, mpathX
    paths: dict         # node name -> Session, the path through its portal


def portal_of(node):
    """A node VM's own portal."""
    return f"{node.host.public}:3260"


def login_multipath(ini, nodes):
    """ALUA: one session through each node VM's own portal, dm-multipath
    over them (multipathd, config.multipath_conf()); once the map has both
    paths. scsi_dh_alua is loaded (start_initiator) before the logins, so
    that it attaches to each path."""
    ini.run("cat >/etc/multipath.conf", input=c.multipath_conf())
    ini.spawn("exec multipathd -d -s -v 3", "multipathd.log")
    ini.wait_for("multipathd show daemon >/dev/null 2>&1", 60, "multipathd to answer")
    for node in nodes:
        portal = portal_of(node)
        ini.run(f"iscsiadm -m discovery -t st -p {portal}", timeout=120)
        for key, value in c.iscsi_node_settings_alua().items():
            ini.run(f"iscsiadm -m node -T {c.IQN} -p {portal} -o update -n '{key}' -v {value}")
        ini.run(f"iscsiadm -m node -T {c.IQN} -p {portal} --login", timeout=180)
    name_of = {n.host.public: n.name for n in nodes}
    paths = _disks(ini, [n.name for n in nodes], lambda iface, addr: name_of.get(addr, addr),
                   "paths of the nodes")
    # Both paths in one map (multipathd adds them as udev announces them).
    res = ini.wait_for(f"""for d in /sys/block/dm-*; do
		[ "$(ls $d/slaves | sort | tr '\\n' ' ')" = "{' '.join(sorted(p.disk[5:] for p in paths.values()))} " ] &&
			echo "${{d##*/}} $(cat $d/dm/name)"
	done | grep .""", 120, "the multipath map of both paths", interval=2)
    dm, name = res.out.split()[:2]
    return Multipath(f"/dev/{dm}", name, paths)


def multipath_groups(ini, mp):
    """[(prio, status, {node: path state})] of `multipath -ll`, best first."""
    text = ini.run(f"multipath -ll {mp.name}", check=False).out
    node_of = {s.disk[5:]: n for n, s in mp.paths.items()}
    groups = []
    for line in text.splitlines():
        m = re.search(r"prio=(\d+) status=(\w+)", line)
        if m:
            groups.append((int(m[1]), m[2], {}))
            continue
        m = re.search(r"\d+:\d+:\d+:\d+ (sd\w+) \S+ (.*)$", line)
        if m and groups:
            groups[-1][2][node_of.get(m[1], m[1])] = " ".join(m[2].split())
    return groups


def sessions(ini):
    """sessionN -> state, of the target's sessions."""
    out = ini.run(f"""for s in /sys/class/iscsi_session/session*; do
		[ -e $s ] && [ "$(cat $s/targetname)" = {c.IQN} ] && echo "${{s##*/}} $(cat $s/state)"
	done; true""").out
    return dict(line.split() for line in out.splitlines())


class Load:
    """fio (random 4 KiB writes at depth 8, verified as it goes, on the
    LUN's first FIO_MIB) and acked-writes (one write at a time from
    ACKED_OFFSET_MIB), both running until stop()."""

    def __init__(self, ini, shared, disk, name):
        self.ini, self.disk, self.name = ini, disk, name
        self.log = shared / f"{name}-acked.log"
        self.stopfile = shared / f"{name}.stop"
        self.fio_out = ini.results / f"{name}-fio.json"
        for f in (self.log, self.stopfile, self.fio_out):
            f.unlink(missing_ok=True)

    def start(self):
        self.ini.spawn(
            f"cd /tmp && fio --name={self.name} --verify_state_save=0 --filename={self.disk} --ioengine=libaio --direct=1 "
            f"--rw=randwrite --bs=4k --iodepth=8 --size={FIO_MIB}M --verify=crc32c "
            f"--verify_backlog=256 --verify_fatal=1 --time_based --runtime=86400 "
            f"--output-format=json --output={sh(self.fio_out)}; echo fio-exit=$?",
            f"{self.name}-fio.log")
        self.ini.spawn(
            f"{sh(ACKED)} write {self.disk} {sh(self.log)} {sh(self.stopfile)} "
            f"--offset {ACKED_OFFSET_MIB} --blocks {ACKED_BLOCKS} --rate {ACKED_RATE}; "
            f"echo acked-exit=$?",
            f"{self.name}-acked-writes.log")
        self.wait_acked(200, 120)

    def acked(self):
        try:
            return sum(1 for _ in open(self.log))
        except FileNotFoundError:
            return 0

    def wait_acked(self, more, timeout):
        """Until `more` writes beyond those done so far are acknowledged."""
        goal = self.acked() + more
        deadline = time.monotonic() + timeout
        while self.acked() < goal:
            if time.monotonic() > deadline:
                raise GuestError(f"{self.name}: {self.acked()} writes acknowledged, "
                                 f"waited for {goal} for {timeout} s")
            time.sleep(1)

    def reads(self):
        """Reads the LUN's disk has completed: fio's verification alone
        reads it."""
        return int(self.ini.run(f"cat /sys/block/{self.disk[5:]}/stat").out.split()[0])

    def wait_verified(self, since, more=256, timeout=t.REPLACEMENT_TIMEOUT_S):
        """Until fio has verified `more` blocks since the count `since`
        (reads()): it goes on after the event, not only acked-writes."""
        deadline = time.monotonic() + timeout
        while self.reads() < since + more:
            if time.monotonic() > deadline:
                raise GuestError(f"{self.name}: fio verified {self.reads() - since} blocks "
                                 f"in {timeout} s, waited for {more}")
            time.sleep(1)

    def stop(self):
        """Stops both; fio's summary. Fails on any I/O or verify error:
        fio must still be running when stopped (verify_fatal ends it at
        the first bad block), and say no error."""
        self.stopfile.touch()
        running = self.ini.run("pgrep -x fio >/dev/null", check=False).rc == 0
        fio_log = self.ini.results / f"{self.name}-fio.log"
        self.ini.run("pkill -INT -x fio", check=False)
        deadline = time.monotonic() + 600
        while "fio-exit=" not in fio_log.read_text():
            if time.monotonic() > deadline:
                state = self.ini.run("for p in $(pgrep -x fio); do ps -o pid,stat,wchan:30 -p $p; "
                                     "cat /proc/$p/stack; done", check=False).out
                raise GuestError(f"{self.name}: fio still running 600 s after SIGINT:\n{state}")
            time.sleep(1)
        self.ini.wait_for("! pgrep -f '[a]cked-writes write' >/dev/null", 60,
                          "acked-writes to stop")
        acked_log = self.ini.results / f"{self.name}-acked-writes.log"
        self.ini.wait_for(f"grep -q acked-exit= {sh(acked_log)}", 30, "acked-writes' status")
        logs = {"fio": fio_log.read_text(), "acked-writes": acked_log.read_text()}
        assert "acked-exit=0" in logs["acked-writes"], logs["acked-writes"]
        assert running, f"fio ended before it was stopped:\n{logs['fio']}"
        # Stopped by SIGINT, fio exits 128 and says so before its report.
        assert "fio-exit=0" in logs["fio"] or "fio-exit=128" in logs["fio"], logs["fio"]
        text = self.fio_out.read_text()
        report = json.loads(text[text.index("{"):])
        job = report["jobs"][0]
        assert job["error"] == 0, f"fio: error {job['error']}"
        # Its reads are its verification's: written blocks read back.
        assert job["write"]["total_ios"] > 0 and job["read"]["total_ios"] > 0
        return job

    def pause(self, since=0):
        """The longest time without an acknowledgement, from the since-th on
        (and the one before it)."""
        return json.loads(self.ini.run(f"{sh(ACKED)} pause {sh(self.log)} --from {since}").out)

    def check_on(self, node, dev=c.DRBD_DEVICE):
        """Every acknowledged write is on node's device."""
        res = node.run(f"{sh(ACKED)} check {dev} {sh(self.log)} --offset {ACKED_OFFSET_MIB} "
                       f"--blocks {ACKED_BLOCKS}", check=False, timeout=300)
        assert res.out.strip(), f"acked-writes check on {node.name}: {res}"
        summary = json.loads(res.out)
        assert res.rc == 0 and summary["missing"] == 0, \
            f"acknowledged writes missing on {node.name}: {summary}"
        return summary
