# SPDX-License-Identifier: GPL-2.0
"""dm-multipath over two portal groups: open-iscsi logs in through both,
multipathd groups the paths by their ALUA priority (detect_prio reads
REPORT TARGET PORT GROUPS), and fio writing and verifying through the map
keeps going without an error while ietadm moves the optimized state from
one group to the other and while one group's portal is cut off and comes
back. The target's per-session counters show which path carried the I/O."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from ietlib import BackgroundFio, daemon, ietadm  # noqa: F401
from vmlib import initiator as ini
from vmlib.util import RESULTS, run, wait_until

NAME = "iqn.2001-04.com.example:iet-test.multipath"
GROUPS = "PortalGroup 1 127.0.0.1\nPortalGroup 2 127.0.0.2\n"
CONF = Path("/etc/multipath.conf")
MULTIPATH_CONF = """\
defaults {
	find_multipaths "off"
	user_friendly_names "no"
	polling_interval 1
}
blacklist {
	device {
		vendor ".*"
		product ".*"
	}
}
blacklist_exceptions {
	device {
		vendor "IET"
		product "VIRTUAL-DISK"
	}
}
devices {
	device {
		vendor "IET"
		product "VIRTUAL-DISK"
		path_grouping_policy "group_by_prio"
		prio "alua"
		hardware_handler "1 alua"
		failback "immediate"
		path_checker "tur"
		no_path_retry 30
	}
}
"""
NFT_TABLE = "iet_multipath"


@pytest.fixture
def multipathd(alua_handler):
    """multipathd in the foreground with our configuration; at the end the
    maps are flushed and the configuration is gone, so that later tests'
    disks are nobody's paths."""
    if run(["modprobe", "dm_multipath"], check=False).returncode:
        pytest.skip("this kernel has no dm-multipath")
    CONF.write_text(MULTIPATH_CONF)
    log = open(RESULTS / "multipathd.log", "w")
    proc = subprocess.Popen(["multipathd", "-d", "-s", "-v", "3"], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: run(["multipathd", "show", "daemon"], check=False).returncode == 0,
                   30, "multipathd to answer")
        yield proc
    finally:
        run(["nft", "delete", "table", "inet", NFT_TABLE], check=False)
        run(["multipathd", "shutdown"], check=False)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
        wait_until(lambda: run(["multipath", "-F"], check=False) and no_maps(), 30,
                   "the multipath maps to go")
        CONF.unlink(missing_ok=True)
        Path("/etc/multipath/wwids").unlink(missing_ok=True)


def no_maps():
    out = run(["dmsetup", "ls", "--target", "multipath"], check=False).stdout
    return "No devices found" in out or not out.strip()


def paths_by_portal():
    """{sdX: portal address} of the target's sessions."""
    out = {}
    for s in ini.sysfs_sessions():
        if s.targetname == NAME:
            for blk in s.block_devices(0):
                out[blk.name] = s.conn_attr("persistent_address")
    return out


def topology():
    """(map name, [(prio, group status, {portal: path state})]) of multipath -ll."""
    text = run(["multipath", "-ll"], check=False).stdout
    portal = paths_by_portal()
    name, groups = None, []
    for line in text.splitlines():
        if name is None and re.match(r"^\S+ dm-\d+ IET", line):
            name = line.split()[0]
        elif m := re.search(r"prio=(\d+) status=(\w+)", line):
            groups.append((int(m[1]), m[2], {}))
        elif (m := re.search(r"\d+:\d+:\d+:\d+ (sd\w+) \S+ (.*)$", line)) and groups:
            groups[-1][2][portal.get(m[1], m[1])] = m[2].strip()
    return name, groups


def optimized_portal():
    """The portal of the only path of the highest-priority group, or None."""
    _, groups = topology()
    if len(groups) != 2:
        return None
    best = max(groups, key=lambda g: g[0])
    if best[0] != 50 or len(best[2]) != 1:
        return None
    return next(iter(best[2]))


def path_state(portal):
    """multipath's states of the path through portal ("" if none)."""
    for _, _, paths in topology()[1]:
        if portal in paths:
            return paths[portal]
    return ""


def written_by_group():
    """{portal group: bytes written} from the target's session counters."""
    out = {}
    for s in json.loads(ietadm("--op", "show", "--tid=1", "--json").stdout)["sessions"]:
        g = s["portal_group"]
        out[g] = out.get(g, 0) + s["stats"]["write_bytes"]
    return out


def writes_go_through(group, secs=3):
    """Whether, over a few seconds, only `group`'s sessions took writes."""
    before = written_by_group()
    time.sleep(secs)
    after = written_by_group()
    grew = {g for g in after if after[g] > before.get(g, 0)}
    return grew == {group}


def set_state(group, state):
    ietadm("--op", "update", "--tid=1", "--params", f"PortalGroup={group},State={state}")


def cut(addr):
    """Drop every packet to and from the portal addr:3260, both ways."""
    run(["nft", "add", "table", "inet", NFT_TABLE])
    run(["nft", "add", "chain", "inet", NFT_TABLE, "input",
         "{ type filter hook input priority 0; }"])
    for rule in (f"ip daddr {addr} tcp dport 3260 drop", f"ip saddr {addr} tcp sport 3260 drop"):
        run(["nft", "add", "rule", "inet", NFT_TABLE, "input", *rule.split()])


def test_fio_keeps_verifying_while_the_optimized_path_moves_and_a_portal_fails(  # noqa: F811
        daemon, iscsid, multipathd, backing):
    image = backing("mpath", 128 << 20)
    daemon(GROUPS + f"Target {NAME}\n\tLun 0 Path={image},Type=fileio\n")
    set_state(2, "an")
    found = ini.discover("127.0.0.1")
    assert sorted((d.portal, d.tpgt) for d in found) == [("127.0.0.1:3260", 1),
                                                         ("127.0.0.2:3260", 2)]
    for k, v in {"node.session.timeo.replacement_timeout": 5,
                 "node.conn[0].timeo.noop_out_interval": 2,
                 "node.conn[0].timeo.noop_out_timeout": 2}.items():
        ini.iscsiadm("-m", "node", "-T", NAME, "-o", "update", "-n", k, "-v", str(v))
    ini.iscsiadm("-m", "node", "-T", NAME, "--login")
    try:
        wait_until(lambda: len(paths_by_portal()) == 2 or None, 120, "a disk through each group")
        run(["multipath", "-r"], check=False)
        # One group optimized (ALUA prio 50), the other not (10).
        wait_until(lambda: optimized_portal() == "127.0.0.1", 60, lambda: f"multipath to prefer 127.0.0.1: {topology()}")
        name, groups = topology()
        assert sorted(g[0] for g in groups) == [10, 50], groups
        dm = f"/dev/mapper/{name}"

        fio = BackgroundFio(dm, "multipath", seconds=240, size="64M")
        try:
            wait_until(lambda: writes_go_through(1), 60, "writes through group 1")

            # The cluster manager moves the optimized path.
            set_state(1, "an")
            set_state(2, "ao")
            wait_until(lambda: optimized_portal() == "127.0.0.2", 60,
                       lambda: f"multipath to prefer 127.0.0.2: {topology()}")
            wait_until(lambda: writes_go_through(2), 60, "writes through group 2")
            assert fio.running()

            # Group 2's portal goes dark: I/O goes on through group 1.
            cut("127.0.0.2")
            wait_until(lambda: "failed" in path_state("127.0.0.2"), 90,
                       lambda: f"the path through 127.0.0.2 to fail: {topology()}")
            wait_until(lambda: writes_go_through(1), 60, "writes through group 1 again")
            assert fio.running()

            # It comes back, and being optimized takes the I/O again.
            run(["nft", "delete", "table", "inet", NFT_TABLE])
            wait_until(lambda: optimized_portal() == "127.0.0.2" and
                       "active ready" in path_state("127.0.0.2"), 120,
                       lambda: f"the path through 127.0.0.2 to come back: {topology()}")
            wait_until(lambda: writes_go_through(2), 60, "writes through group 2 again")
            job = fio.wait_clean(early=True)
            assert job["write"]["io_bytes"] > 0
        finally:
            fio.stop()
    finally:
        run(["nft", "delete", "table", "inet", NFT_TABLE], check=False)
        wait_until(lambda: run(["multipath", "-F"], check=False) and no_maps(), 30,
                   "the multipath map to go")
        # The disks go before the ALUA handler does.
        ini.logout_all()
        ini.iscsiadm("-m", "node", "-o", "delete", check=False)
