# SPDX-License-Identifier: GPL-2.0
"""A peer that never authenticates cannot keep initiators out of ietd.

While one peer holds every place ietd has for connections before login
(1024 silent connections from 32 addresses of 127.0.0.0/8, each reopened
as soon as ietd closes it) and floods discovery from four more addresses
(SendTargets=All on each as fast as ietd answers), a real initiator's
discovery (iscsiadm -m discovery) and login (open-iscsi) each complete
within LOGIN_WITHIN_S, and the session works. The figures (how long each
took, what the flood held and what ietd shed) are printed and appended
to RESULTS/prelogin-flood.txt."""

import multiprocessing
import resource
import select
import socket
import threading
import time

from vmlib import initiator as ini
from vmlib import rawiscsi as ri
from vmlib import util
from vmlib.target import Lun, Target, iqn
from vmlib.util import RESULTS, run

SILENT_ADDRS = 32
PER_ADDR = 32                    # ietd's limit of one address
DISCOVERY_FLOODERS = 4
LOGIN_WITHIN_S = 10              # "a few seconds", with room for emulation
PORT = 3260


def silent_flood(stop, ready, opened, closed_by_ietd):
    """SILENT_ADDRS * PER_ADDR connections that send nothing, each reopened
    (from its address) when ietd closes it. A process of its own: its
    thousand descriptors stay out of the test's select()s."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = SILENT_ADDRS * PER_ADDR + 256
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), max(hard, need)))

    def connect(ip):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((ip, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", PORT))
        s.setblocking(False)
        opened.value += 1
        return s

    socks, poll = {}, select.poll()
    try:
        for i in range(SILENT_ADDRS * PER_ADDR):
            ip = f"127.0.3.{1 + i // PER_ADDR}"
            s = connect(ip)
            socks[s.fileno()] = (s, ip)
            poll.register(s, select.POLLIN)
        ready.set()
        while not stop.is_set():
            for fd, _ in poll.poll(100):
                s, ip = socks.pop(fd)
                poll.unregister(fd)
                s.close()
                closed_by_ietd.value += 1
                try:
                    s = connect(ip)
                except OSError:
                    continue
                socks[s.fileno()] = (s, ip)
                poll.register(s, select.POLLIN)
                time.sleep(0.002)
    finally:
        ready.set()
        for s, _ in socks.values():
            s.close()


class From(ri.Connection):
    """A raw connection from a source address of its own."""

    def __init__(self, source, **kw):
        super().__init__(None, **kw)
        self.source = source

    def connect(self):
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout,
                                             source_address=(self.source, 0))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self


class DiscoveryFlood(threading.Thread):
    """Discovery sessions from one address, each asking SendTargets=All
    as fast as it is answered, again after ietd ends one."""

    def __init__(self, source):
        super().__init__(daemon=True)
        self.source = source
        self.stop = threading.Event()
        self.answers = 0

    def run(self):
        while not self.stop.is_set():
            c = From(self.source, timeout=5)
            try:
                c.connect()
                c.login(session_type="Discovery")
                while not self.stop.is_set():
                    c.text([("SendTargets", "All")])
                    self.answers += 1
            except (OSError, AssertionError, ri.TargetClosed):
                time.sleep(0.05)
            finally:
                c.close()


def timed(fn):
    t0 = time.monotonic()
    result = fn()
    return result, time.monotonic() - t0


def test_a_real_initiator_logs_in_while_one_peer_holds_every_place_and_floods_discovery(
        ietd, initiator):
    name = iqn("prelogin-flood")
    daemon = ietd(Target(name, [Lun(0, type="nullio", params={"Blocks": 2048})]))
    stop, ready = multiprocessing.Event(), multiprocessing.Event()
    opened, closed = multiprocessing.Value("i", 0), multiprocessing.Value("i", 0)
    silent = multiprocessing.Process(target=silent_flood, args=(stop, ready, opened, closed),
                                     daemon=True)
    flooders = [DiscoveryFlood(f"127.0.4.{i + 1}") for i in range(DISCOVERY_FLOODERS)]
    silent.start()
    try:
        assert ready.wait(120), "the silent connections were not all opened"
        held = opened.value
        for f in flooders:
            f.start()
        time.sleep(2)
        found, t_disc = timed(lambda: ini.discover(timeout=60))
        login, t_login = timed(lambda: initiator.login(name))
        cp = run(["sg_turs", login.disk(0)], check=False, timeout=30)
    finally:
        stop.set()
        for f in flooders:
            f.stop.set()
        silent.join(60)
        if silent.is_alive():
            silent.kill()
        for f in flooders:
            f.join(60)
    answers = sum(f.answers for f in flooders)
    log = util.read(daemon.log, "")
    shed = log.count("connections in login or discovery, the most")
    report = (f"discovery {t_disc:.2f} s, login {t_login:.2f} s under {held} silent "
              f"connections ({closed.value} closed by ietd and reopened) and "
              f"{answers} SendTargets answers to {DISCOVERY_FLOODERS} flooders; "
              f"ietd logged {shed} evictions (rate-limited)")
    print(report)
    with open(RESULTS / "prelogin-flood.txt", "a") as f:
        f.write(report + "\n")
    assert any(d.iqn == name for d in found), f"discovery under the flood found {found}"
    assert t_disc < LOGIN_WITHIN_S, report
    assert t_login < LOGIN_WITHIN_S, report
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert held == SILENT_ADDRS * PER_ADDR, report
    assert closed.value > 0, "ietd never closed a silent connection: " + report
    assert answers > 0, "the discovery flood got no answer: " + report
