# SPDX-License-Identifier: GPL-2.0
"""A Debian system booted with systemd in a container of the guest
(systemd-nspawn --boot), over a throwaway overlay of a root directory: its
own dpkg, systemd and DKMS, the guest's kernel, network and netlink, so
that packages install, start and load modules as on a machine of their
own, and nothing they do outlives the test."""

import filecmp
import os
import subprocess
import time
from pathlib import Path

from .util import run, wait_until

CGROUP = Path("/sys/fs/cgroup/iet-container")


class Container:
    def __init__(self, lower, work, hide=()):
        """lower: the root (read-only), a directory or a file system image
        of one (mounted from a loop device: over 9p, one file reads much
        faster than the many files of a compiler's headers); work: an empty
        directory for the overlay; hide: paths of lower to remove from the
        container's view before it boots (other kernels' headers, say)."""
        self.image = Path(lower) if Path(lower).is_file() else None
        self.lower = Path(work) / "lower" if self.image else Path(lower)
        self.work, self.hide = Path(work), hide
        self.root = self.work / "root"
        self.proc = None
        self.leader = None
        self.loop = None

    def boot(self, timeout=300):
        w = self.work
        w.mkdir(parents=True, exist_ok=True)
        run(["mount", "-t", "tmpfs", "-o", "size=3G", "iet-container", str(w)])
        for d in ("upper", "ovl", "root", "lower"):
            (w / d).mkdir()
        if self.image:
            run(["modprobe", "loop"])
            self.loop = run(["losetup", "-r", "-f", "--show", str(self.image)]).stdout.strip()
            run(["mount", "-o", "ro,noload", self.loop, str(self.lower)])
        run(["mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={self.lower},upperdir={w}/upper,workdir={w}/ovl", str(self.root)])
        for p in self.hide:
            run(["rm", "-rf", "--one-file-system", str(self.root / p.lstrip("/"))])
        # nspawn without a systemd of the guest's: no bus, a cgroup of its own.
        CGROUP.mkdir(exist_ok=True)
        log = open(w / "nspawn.log", "w")
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "-D", str(self.root), "--boot", "--register=no",
             "--keep-unit", "--console=passive", "--hostname=iet-pkg",
             "--capability=CAP_SYS_MODULE,CAP_NET_ADMIN"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=lambda: (CGROUP / "cgroup.procs").write_text(str(os.getpid())))

        def up():
            assert self.proc.poll() is None, \
                f"systemd-nspawn exited with {self.proc.returncode}: {(w / 'nspawn.log').read_text()}"
            kids = run(["pgrep", "-P", str(self.proc.pid)], check=False).stdout.split()
            if not kids:
                return False
            self.leader = kids[0]
            st = self.sh("systemctl is-system-running", check=False).stdout.strip()
            return st in ("running", "degraded")
        wait_until(up, timeout, "the container's systemd to finish booting", interval=1)
        return self

    def sh(self, script, check=True, timeout=120):
        """script run by sh as root inside, in a clean environment."""
        return run(["nsenter", "-t", self.leader, "-a", "env", "-i",
                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive",
                    "LC_ALL=C.UTF-8", "sh", "-c", script], check=check, timeout=timeout)

    def changed(self):
        """What differs from lower: what the overlay's upper directory
        holds (a whiteout is a removal) but directories, files and links
        lower has the same; each as an absolute path inside."""
        up = self.work / "upper"
        out = set()
        for p in up.rglob("*"):
            rel = "/" + str(p.relative_to(up))
            low = self.lower / rel.lstrip("/")
            if p.is_symlink() or low.is_symlink():
                if p.is_symlink() and low.is_symlink() and os.readlink(p) == os.readlink(low):
                    continue
            elif p.is_dir() and low.is_dir():
                continue
            elif p.is_file() and low.is_file() and filecmp.cmp(p, low, shallow=False):
                continue        # written again as it was (depmod's indexes)
            out.add(rel)
        return out

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.sh("systemctl poweroff", check=False, timeout=30)
            try:
                self.proc.wait(120)
            except Exception:
                self.proc.kill()
                self.proc.wait(30)
        for m in (self.root, self.work):
            for _ in range(10):
                if run(["umount", "-R", str(m)], check=False).returncode == 0 or \
                        not os.path.ismount(m):
                    break
                time.sleep(1)
        if self.loop:
            run(["losetup", "-d", self.loop], check=False)
        if CGROUP.exists():
            try:
                CGROUP.rmdir()
            except OSError:
                pass
