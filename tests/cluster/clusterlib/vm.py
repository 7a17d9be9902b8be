# SPDX-License-Identifier: GPL-2.0
"""One cluster VM: booted by virtme-ng inside the cluster's network
namespace, the host's root read-only as in the VM suite, its own results
directory shared read-write, its NICs on the namespace's bridges, its own
disk images, and the guest agent (../guest-agent) on a virtio serial port
whose other end is a Unix socket here. kill() stops it at once, as a power
failure would: qemu gets SIGKILL."""

import json
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
AGENT = REPO / "tests" / "cluster" / "guest-agent"


class GuestError(AssertionError):
    pass


def sh(*words):
    """Words quoted for the guest's bash."""
    return " ".join(shlex.quote(str(w)) for w in words)


@dataclass
class Result:
    cmd: str
    rc: int
    out: str
    err: str

    def __str__(self):
        return (f"`{self.cmd}` exited {self.rc}\n--- stdout\n{self.out[-3000:]}"
                f"\n--- stderr\n{self.err[-3000:]}")


class VM:
    def __init__(self, name, image, results, netns, nics=(), disks=(), mem="1G",
                 cpus=1, kvm=False, shared=None):
        self.name = name
        self.image = image
        self.results = Path(results)
        self.netns = netns
        self.nics = list(nics)          # (tap, mac)
        self.disks = list(disks)        # (path, serial[, shared with another VM])
        self.mem, self.cpus, self.kvm = mem, cpus, kvm
        self.shared = shared
        self.sock_path = self.results / "ctl.sock"
        self.proc = None
        self.sock = None
        self.lock = threading.Lock()         # pending, next_id
        self.send_lock = threading.Lock()    # whole requests on the socket
        self.pending = {}
        self.next_id = 0

    # ---- boot and stop
    def qemu_opts(self):
        o = ["-device virtio-serial-pci,id=ietser",
             f"-chardev socket,id=ietctl,path={self.sock_path},server=on,wait=off",
             "-device virtserialport,bus=ietser.0,chardev=ietctl,name=iet.ctl",
             f"-chardev file,id=ietcons,path={self.results / 'console.log'}",
             "-device virtconsole,bus=ietser.0,chardev=ietcons"]
        for i, (tap, mac) in enumerate(self.nics):
            o.append(f"-netdev tap,id=n{i},ifname={tap},script=no,downscript=no "
                     f"-device virtio-net-pci,netdev=n{i},mac={mac},romfile=")
        for i, (path, serial, *shared) in enumerate(self.disks):
            # One image both nodes write (sbd's): no lock, coherent through
            # the host's page cache, which both QEMUs go through.
            lock, share = (",file.locking=off", ",share-rw=on") if any(shared) else ("", "")
            o.append(f"-drive file={path},if=none,id=d{i},format=raw,aio=threads,"
                     f"cache=writeback{lock} "
                     f"-device virtio-blk-pci,drive=d{i},serial={serial}{share}")
        return " ".join(o)

    def boot(self):
        self.results.mkdir(parents=True, exist_ok=True)
        self.sock_path.unlink(missing_ok=True)
        guest = self.results / "guest.sh"
        guest.write_text("#!/bin/bash\nexport HOME=/tmp/home TMPDIR=/tmp\nmkdir -p $HOME\n"
                         f"exec /usr/bin/python3 {shlex.quote(str(AGENT))}\n")
        guest.chmod(0o755)
        cmd = [*self.netns.exec_prefix(), "vng", "--run", str(self.image),
               "--cpus", str(self.cpus), "--memory", self.mem, "--name", self.name,
               "--cwd", str(REPO), "--rwdir", str(self.results),
               "--append", "console=hvc0", "--append", "loglevel=7",
               f"--qemu-opts={self.qemu_opts()}", "--exec", str(guest)]
        if self.shared:
            cmd[-2:-2] = ["--rwdir", str(self.shared)]
        if not self.kvm:
            cmd.insert(len(self.netns.exec_prefix()) + 1, "--disable-kvm")
        log = open(self.results / "vng.log", "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 300
        while not self.sock_path.exists():
            if self.proc.poll() is not None:
                raise GuestError(f"{self.name}: vng exited {self.proc.returncode} "
                                 f"before qemu started (see {self.results}/vng.log)")
            if time.monotonic() > deadline:
                raise GuestError(f"{self.name}: qemu made no control socket")
            time.sleep(0.2)
        # The socket file comes before qemu listens on it.
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(str(self.sock_path))
                break
            except (ConnectionRefusedError, FileNotFoundError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise GuestError(f"{self.name}: qemu's control socket refuses") from None
                time.sleep(0.2)
        threading.Thread(target=self._reader, daemon=True).start()
        self.request({"op": "ping"}, timeout=300)

    def qemu_pid(self):
        """The qemu under vng (vng -> virtme-run -> qemu-system-x86_64)."""
        if self.proc is None:
            return None
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            try:
                if Path(f"/proc/{pid}/comm").read_text().startswith("qemu-system"):
                    return pid
                kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            todo.extend(int(k) for k in kids)
        return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """Power failure: qemu stops at once, nothing flushed, nothing said.
        Once: a VM already stopped (and its pids perhaps reused) is left."""
        if self.proc is None or self.proc.returncode is not None:
            return
        pid = self.qemu_pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=60)
        if self.sock is not None:
            self.sock.close()
        self._fail_pending("the VM was killed")

    # ---- the control channel
    def _reader(self):
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._fail_pending("the control channel closed")
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    self._fail_pending(f"the guest agent sent {line[:200]!r}")
                    continue
                with self.lock:
                    slot = self.pending.pop(msg.get("id"), None)
                if slot:
                    slot[1].append(msg)
                    slot[0].set()

    def _fail_pending(self, why):
        with self.lock:
            slots, self.pending = list(self.pending.values()), {}
        for ev, box in slots:
            box.append({"error": f"{self.name}: {why}"})
            ev.set()

    def request(self, req, timeout):
        ev, box = threading.Event(), []
        with self.lock:
            self.next_id += 1
            req = dict(req, id=self.next_id)
            self.pending[req["id"]] = (ev, box)
        with self.send_lock:
            self.sock.sendall((json.dumps(req) + "\n").encode())
        if not ev.wait(timeout):
            with self.lock:
                self.pending.pop(req["id"], None)
            raise GuestError(f"{self.name}: no reply to {req['op']} in {timeout} s")
        msg = box[0]
        if "error" in msg:
            raise GuestError(f"{self.name}: {msg['error']}")
        return msg

    def run(self, cmd, timeout=120, check=True, input=None):
        msg = self.request({"op": "run", "cmd": cmd, "timeout": timeout, "input": input},
                           timeout + 30)
        res = Result(cmd, msg["rc"], msg["out"], msg["err"])
        if check and res.rc != 0:
            raise GuestError(f"{self.name}: {res}")
        return res

    def spawn(self, cmd, log):
        """A daemon; its output goes to log in the VM's results directory."""
        return self.request({"op": "spawn", "cmd": cmd, "log": str(self.results / log)},
                            60)["pid"]

    def wait_for(self, cmd, timeout, what, interval=1.0):
        """Run cmd until it succeeds; its last result."""
        deadline = time.monotonic() + timeout
        while True:
            res = self.run(cmd, check=False, timeout=max(10, interval * 10))
            if res.rc == 0:
                return res
            if time.monotonic() > deadline:
                raise GuestError(f"{self.name}: {what}: not within {timeout} s; last {res}")
            time.sleep(interval)
