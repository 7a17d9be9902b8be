# SPDX-License-Identifier: GPL-2.0
"""The Debian packages on a clean Debian 13 system (make check-packages).

The system is Debian 13 (scripts/buildroot's root: systemd, dkms, the
headers and modules of the kernel this VM runs; the other kernels' hidden,
so that it has one kernel as a machine would) booted with systemd in a
container of the guest, over a throwaway overlay. In it: dpkg installs
iscsitarget-dkms and iscsitarget, DKMS builds iscsi_trgt for the running
kernel, systemd starts ietd, which loads it; the guest's open-iscsi logs
in through the portal and writes. An upgrade to the next version (built
from the same tree, make deb DEB_UPGRADE=) keeps the administrator's
ietd.conf and the session, which neither logs out nor loses a write.
Removing and purging both leaves nothing of them on the system.

Slow under emulation (DKMS compiles the module twice, minutes each): not
part of make check's VM suite (marker packages, which only -m packages
selects)."""

import mmap
import os
import re

import pytest

from vmlib import initiator as ini
from vmlib import proc
from vmlib.container import Container
from vmlib.target import iqn
from vmlib.util import REPO, RESULTS, run, wait_until

pytestmark = pytest.mark.packages

ROOT = REPO / "build/debian13"
DEBS = {"old": REPO / "build/deb/debian13", "new": REPO / "build/deb/debian13-upgrade"}
NAME = iqn("packaged")
# What dpkg, systemd and DKMS themselves keep, not the packages': their
# logs and databases, and the key DKMS makes to sign what it builds.
NOT_OURS = re.compile(r"^/(var/log|var/lib/dpkg|var/cache|var/lib/systemd|etc/\.pwd\.lock|"
                      r"var/lib/dkms/mok\.(key|pub)|etc/machine-id|"
                      r"var/lib/dkms$|root/debs)(/|$)")
RELEASE = os.uname().release


def debs(which):
    d = DEBS[which]
    found = {p: sorted(d.glob(f"{p}_*.deb")) for p in ("iscsitarget", "iscsitarget-dkms")}
    if not all(found.values()):
        pytest.fail(f"no packages in {d}: make check-packages builds them")
    return [v[-1] for v in found.values()]


def version(deb):
    return deb.name.split("_")[1]


@pytest.fixture(scope="module")
def system(iscsid):
    if not (ROOT / "lib/modules" / RELEASE / "build").exists():
        pytest.fail(f"{ROOT} has no headers of {RELEASE}: run on the kernel "
                    f"check-packages boots (scripts/check-kernels trixie:packages)")
    others = [f"/lib/modules/{k}" for k in os.listdir(ROOT / "lib/modules") if k != RELEASE]
    others += [f"/usr/src/{h}" for h in os.listdir(ROOT / "usr/src")
               if h.startswith("linux-") and RELEASE.rsplit("-", 1)[0] not in h]
    image = REPO / "build/debian13.ext4"
    c = Container(image if image.exists() else ROOT, "/run/iet-packages", hide=others).boot()
    run(["mkdir", "-p", f"{c.root}/root/debs/old", f"{c.root}/root/debs/new"])
    for which in DEBS:
        run(["cp", *map(str, debs(which)), f"{c.root}/root/debs/{which}/"])
    c.baseline = c.changed()
    c.state = {}
    yield c
    ini.logout_all()
    c.stop()
    run(["rmmod", "iscsi_trgt"], check=False)


def dpkg(c, *args, timeout=1500):
    r = c.sh("dpkg " + " ".join(args) + " 2>&1", check=False, timeout=timeout)
    with open(RESULTS / "packages-transcript.txt", "a") as t:
        t.write(f"# dpkg {' '.join(args)}\n{r.stdout}\n")
    assert r.returncode == 0, f"dpkg {' '.join(args)} failed:\n{r.stdout}"
    return r.stdout


def ietd_pid(c):
    return c.sh("systemctl show -P MainPID ietd").stdout.strip()


def pattern(n):
    return bytes((i * 7 + n) & 0xff for i in range(4096)) * 16


def write_read(disk, n):
    """64 KiB written at offset n MiB with O_DIRECT, read back the same."""
    data = pattern(n)
    fd = os.open(disk, os.O_RDWR | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, len(data))
        buf.write(data)
        assert os.pwritev(fd, [buf], n << 20) == len(data)
        buf.seek(0)
        buf.write(b"\0" * len(data))
        assert os.preadv(fd, [buf], n << 20) == len(data)
        assert bytes(buf) == data, f"what was read at {n} MiB is not what was written"
    finally:
        os.close(fd)


def test_install_builds_the_module_and_serves_a_lun(system):
    c = system
    old = debs("old")
    out = dpkg(c, "-i", "/root/debs/old/*.deb")
    assert f"Building initial module iscsi_trgt/2.0.0 for {RELEASE}" in out
    # DKMS built it for this kernel and no other; systemd started ietd,
    # which loaded it.
    status = c.sh("dkms status iscsi_trgt").stdout
    assert re.search(rf"iscsi_trgt/[^,]+, {re.escape(RELEASE)}, x86_64: installed", status), status
    assert len(status.strip().splitlines()) == 1, status
    assert c.sh("systemctl is-active ietd", check=False).stdout.strip() == "active"
    ko = c.sh(f"modinfo -k {RELEASE} -n iscsi_trgt").stdout.strip()
    assert "/updates/dkms/" in ko, ko
    src = c.sh(f"modinfo -k {RELEASE} -F srcversion iscsi_trgt").stdout.strip()
    assert open("/sys/module/iscsi_trgt/srcversion").read().strip() == src
    assert c.sh("dpkg-query -W -f '${Version}' iscsitarget").stdout == version(old[0])
    # What the purge must take away again is seen as a change (/lib is
    # usr/lib on Debian 13).
    new = c.changed() - c.baseline
    for path in ("/usr/sbin/ietd", "/etc/iet/ietd.conf", "/usr/src/iscsi_trgt-2.0.0/dkms.conf",
                 f"/usr/lib/modules/{RELEASE}/updates/dkms",
                 "/etc/systemd/system/multi-user.target.wants/ietd.service"):
        assert any(p == path or p.startswith(path + "/") for p in new), (path, sorted(new)[:40])

    # The administrator's configuration: a target with a file LUN.
    c.sh("truncate -s 64M /var/lib/iet-lun0.img")
    c.sh(f"printf 'Target {NAME}\\n\\tLun 0 Path=/var/lib/iet-lun0.img,Type=fileio\\n' "
         ">>/etc/iet/ietd.conf && systemctl reload ietd")
    wait_until(lambda: proc.target(proc.volumes(), NAME), 30, "the target ietd.conf names")
    disk = ini.login(NAME).disk(0)
    write_read(disk, 1)
    [s] = proc.sessions_of(NAME)
    c.state.update(disk=disk, sid=s.sid, conf=c.sh("cat /etc/iet/ietd.conf").stdout,
                   pid=ietd_pid(c))


def test_upgrade_keeps_the_config_and_the_session(system):
    c = system
    assert c.state, "the install test did not get this far"
    new = debs("new")
    assert version(new[0]) != c.sh("dpkg-query -W -f '${Version}' iscsitarget").stdout
    sysfs = ini.find_session(NAME)
    out = dpkg(c, "-i", "/root/debs/new/*.deb")
    assert "Building" in out and "iscsi_trgt" in out
    assert c.sh("dpkg-query -W -f '${Version}' iscsitarget iscsitarget-dkms").stdout == \
        version(new[0]) * 2
    # The conffile as the administrator left it, no prompt, no copy aside.
    assert c.sh("cat /etc/iet/ietd.conf").stdout == c.state["conf"]
    assert not c.sh("ls /etc/iet | grep -E 'dpkg-(new|old|dist)'", check=False).stdout
    # ietd was restarted; the session lived on in the kernel, untouched.
    assert ietd_pid(c) not in ("0", c.state["pid"])
    assert c.sh("systemctl is-active ietd", check=False).stdout.strip() == "active"
    assert [s.sid for s in proc.sessions_of(NAME)] == [c.state["sid"]]
    assert ini.find_session(NAME).number == sysfs.number
    assert sysfs.state == "LOGGED_IN"
    write_read(c.state["disk"], 2)
    # The new ietd knows the session it did not make.
    show = c.sh(f"ietadm --op show --tid=1 --sid={c.state['sid']}").stdout
    assert "InitialR2T=" in show, show
    # And DKMS has the new build in place for the next boot.
    status = c.sh("dkms status iscsi_trgt").stdout
    assert re.search(rf"{re.escape(RELEASE)}, x86_64: installed", status), status


def test_remove_and_purge_leave_nothing_behind(system):
    c = system
    assert c.state, "the install test did not get this far"
    ini.logout(NAME)
    dpkg(c, "-r", "iscsitarget", "iscsitarget-dkms", timeout=600)
    assert c.sh("systemctl is-active ietd", check=False).stdout.strip() != "active"
    # Removed, not purged: the configuration is still there.
    assert c.sh("cat /etc/iet/ietd.conf").stdout == c.state["conf"]
    dpkg(c, "-P", "iscsitarget", "iscsitarget-dkms", timeout=600)
    known = c.sh("dpkg-query -W -f '${Package} ${db:Status-Status}\\n' "
                 "iscsitarget iscsitarget-dkms 2>/dev/null", check=False).stdout.split("\n")
    assert all(line.endswith(" not-installed") for line in known if line), known
    assert not c.sh(f"modinfo -k {RELEASE} -n iscsi_trgt 2>/dev/null", check=False).stdout
    left = sorted(p for p in c.changed() - c.baseline
                  if not NOT_OURS.match(p) and p != "/var/lib/iet-lun0.img")
    assert not left, f"left behind after purge: {left}"
    # The module they loaded unloads.
    run(["rmmod", "iscsi_trgt"])
