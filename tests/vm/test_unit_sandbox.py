# SPDX-License-Identifier: GPL-2.0
"""ietd inside the limits its systemd unit (etc/ietd.service) sets, as far
as they can be set without systemd: the capability bounding set, no new
privileges, the descriptor limit and the umask, read from the unit itself;
within them ietd keeps only CAP_NET_ADMIN and CAP_DAC_OVERRIDE once it
listens.
So limited, it must still serve a fileio LUN on a file root does not own
and a blockio LUN, and the unit's ExecReload must apply a good
configuration and fail, changing nothing, on a refused one. (The unit's
seccomp settings -- system calls, address families, W^X, personality --
need systemd to apply; systemd-analyze checks their syntax and rates the
unit on the host.)"""

import os
import re
import shlex

from ietlib import IETADM, Daemon
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import REPO, MiB, run

UNIT = REPO / "etc" / "ietd.service"


def unit_settings():
    """The [Service] settings of the unit (the last of a repeated key)."""
    settings, section = {}, None
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings[key] = value
    return settings


def sandboxed(unit, argv):
    """argv as systemd would start it under the unit's limits."""
    caps = [c.lower().removeprefix("cap_") for c in unit["CapabilityBoundingSet"].split()]
    assert unit["NoNewPrivileges"] == "yes"
    nofile = int(unit["LimitNOFILE"])
    umask = unit["UMask"]
    assert re.fullmatch(r"0[0-7]{3}", umask), umask
    return ["setpriv", "--no-new-privs", "--inh-caps=-all",
            "--bounding-set=-all," + ",".join(f"+{c}" for c in caps),
            "prlimit", f"--nofile={nofile}:{nofile}", "--",
            "sh", "-c", f'umask {umask} && exec "$@"', "sh", *argv]


def cap_mask(names):
    """The capability set of CAP_ names, numbered as <linux/capability.h> does."""
    header = open("/usr/include/linux/capability.h").read()
    numbers = dict(re.findall(r"^#define (CAP_[A-Z_]+)\s+(\d+)$", header, re.M))
    return sum(1 << int(numbers[n.upper()]) for n in names)


def status(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def roundtrip(dev, seed):
    """Write 1 MiB of data to dev, bypassing the initiator's cache, and
    read it back the same way."""
    data = os.urandom(MiB)
    src = f"/tmp/iet-sandbox-{seed}.in"
    back = f"/tmp/iet-sandbox-{seed}.out"
    with open(src, "wb") as f:
        f.write(data)
    run(["dd", f"if={src}", f"of={dev}", "bs=64k", "oflag=direct", "status=none"])
    run(["dd", f"if={dev}", f"of={back}", "bs=64k", "count=16", "iflag=direct", "status=none"])
    with open(back, "rb") as f:
        assert f.read() == data, f"{dev}: 1 MiB read back differs from what was written"
    os.unlink(src)
    os.unlink(back)


def test_ietd_serves_and_reloads_within_the_units_limits(kmod, brd, backing, initiator):
    unit = unit_settings()
    name = iqn("sandbox")
    # A LUN file root does not own, as an administrator's may be.
    other = backing("other", 16 * MiB)
    os.chown(other, 65534, 65534)
    os.chmod(other, 0o600)
    text = (f"Target {name}\n\tLun 0 Path={other},Type=fileio,IOMode=wt\n"
            f"\tLun 1 Path={brd.dev},Type=blockio\n")
    d = Daemon(text, "ietd-unit-sandbox")
    d.args = sandboxed(unit, d.args)
    d.start()
    try:
        st = status(d.proc.pid)
        assert st["Name"] == "ietd"
        assert st["NoNewPrivs"] == "1"
        assert st["Umask"] == unit["UMask"]
        want = cap_mask(unit["CapabilityBoundingSet"].split())
        assert int(st["CapBnd"], 16) == want
        # Once its portals are bound, ietd keeps what the hand-off needs.
        assert int(st["CapEff"], 16) == cap_mask(["CAP_NET_ADMIN", "CAP_DAC_OVERRIDE"])
        assert int(st["CapPrm"], 16) == cap_mask(["CAP_NET_ADMIN", "CAP_DAC_OVERRIDE"])
        limits = open(f"/proc/{d.proc.pid}/limits").read()
        assert re.search(rf"Max open files\s+{unit['LimitNOFILE']}\s+{unit['LimitNOFILE']}", limits)

        lg = initiator.login(name)
        roundtrip(lg.disk(0), "fileio")
        roundtrip(lg.disk(1), "blockio")

        # systemctl reload ietd: the unit's ExecReload, under the same limits.
        reload = [str(IETADM) if w == "/usr/sbin/ietadm" else w
                  for w in shlex.split(unit["ExecReload"])]
        assert reload[0] == str(IETADM), unit["ExecReload"]
        d.config.write_text(text + "\tLun 2 Type=nullio\n")
        cp = run(sandboxed(unit, reload), check=False)
        assert cp.returncode == 0, cp.stderr
        assert [x.lun for x in proc.target(proc.volumes(), name).luns] == [0, 1, 2]

        d.config.write_text(text + "\tLun 2 Type=nullio\n\tMaxBurstLength lots\n")
        cp = run(sandboxed(unit, reload), check=False)
        assert cp.returncode == 1
        assert "MaxBurstLength" in cp.stderr
        assert [x.lun for x in proc.target(proc.volumes(), name).luns] == [0, 1, 2]
        assert d.running
    finally:
        initiator.cleanup()
        d.stop()
