# SPDX-License-Identifier: GPL-2.0
"""Only root administers the target: ietadm's socket is root's (its
directory 0700, the socket 0600, and ietd checks the peer's credentials
too), and every operation of the iscsi_trgt netlink family needs
CAP_NET_ADMIN -- checked as an unprivileged user."""

import os
import shutil
import tempfile

import pytest

from ietlib import IETD, daemon, ietadm  # noqa: F401
from vmlib import proc
from vmlib.target import iqn
from vmlib.util import run

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all"]


def test_ietadm_as_a_user_cannot_reach_the_socket(daemon):
    daemon(f"Target {iqn('priv-socket')}\n\tLun 0 Type=nullio\n")
    assert oct(os.stat("/run/iet").st_mode & 0o777) == "0o700"
    assert oct(os.stat("/run/iet/ietd.sock").st_mode & 0o777) == "0o600"
    cp = ietadm("--op", "show", "--tid=1", check=False, user="nobody")
    assert cp.returncode == 1
    assert "ietadm must run as root" in cp.stderr


@pytest.fixture
def open_dir():
    """A directory anyone may enter (pytest's tmp_path is root's alone)."""
    d = tempfile.mkdtemp(prefix="iet-priv-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_ietd_checks_the_peer_even_when_the_socket_is_open(daemon, open_dir):
    path = os.path.join(open_dir, "sock", "ietd.sock")
    daemon(f"Target {iqn('priv-peer')}\n\tLun 0 Type=nullio\n", args=["--socket", path])
    # Someone loosened the permissions: ietd still refuses non-root peers.
    os.chmod(os.path.dirname(path), 0o755)
    os.chmod(path, 0o666)
    cp = ietadm("--socket", path, "--op", "delete", check=False, user="nobody")
    assert cp.returncode == 1
    assert cp.stderr == "ietadm: permission denied: ietadm must run as root\n"
    assert proc.target(proc.volumes(), iqn("priv-peer")) is not None


def test_ietd_without_cap_net_admin_cannot_use_the_kernel(kmod, open_dir):
    conf = os.path.join(open_dir, "ietd.conf")
    with open(conf, "w") as f:
        f.write(f"Target {iqn('priv-ietd')}\n\tLun 0 Type=nullio\n")
    os.chmod(conf, 0o644)
    os.chmod(open_dir, 0o777)
    cp = run([*NOBODY, str(IETD), "-f", "-p", "3261", "-c", conf,
              "--socket", os.path.join(open_dir, "run", "ietd.sock")], check=False, timeout=30)
    assert cp.returncode == 1
    assert "Operation not permitted" in cp.stderr
    assert proc.volumes() == []


# A generic netlink request by hand, as any unprivileged program could make:
# resolve iscsi_trgt (allowed to anyone), then try TARGET_NEW and a
# TARGET_GET dump; print the errno of each (0: it went through).
PROBE = r"""
import socket, struct

def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * (-n % 4)

def request(sock, family, cmd, flags, attrs=b""):
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    sock.send(struct.pack("=IHHII", 16 + len(body), family, 1 | flags, 1, 0) + body)
    return sock.recv(65536)

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.bind((0, 0))
rsp = request(s, 0x10, 3, 0, attr(2, b"iscsi_trgt\0"))
off, family = 20, None
while off < len(rsp):
    n, kind = struct.unpack_from("=HH", rsp, off)
    if kind == 1:
        family = struct.unpack_from("=H", rsp, off + 4)[0]
    off += (n + 3) & ~3
errs = []
for cmd, flags, attrs in ((1, 4, attr(3, b"iqn.2001-04.com.example:evil\0")), (4, 0x300, b"")):
    rsp = request(s, family, cmd, flags, attrs)
    kind = struct.unpack_from("=H", rsp, 4)[0]
    errs.append(-struct.unpack_from("=i", rsp, 16)[0] if kind == 2 else 0)
print(*errs)
"""


def test_netlink_operations_need_cap_net_admin(kmod):
    cp = run([*NOBODY, "python3", "-c", PROBE], check=False, timeout=60)
    assert cp.returncode == 0, cp.stderr
    # EPERM for both: creating a target and listing them.
    assert cp.stdout.split() == ["1", "1"], cp.stdout + cp.stderr
    assert proc.volumes() == []
    # Root, with CAP_NET_ADMIN, gets through the same requests.
    cp = run(["python3", "-c", PROBE], timeout=60)
    assert cp.stdout.split() == ["0", "0"]
    assert [t.name for t in proc.volumes()] == ["iqn.2001-04.com.example:evil"]
