# SPDX-License-Identifier: GPL-2.0
"""The running configuration written back (ietadm --op save) is a
configuration ietd accepts: restarted from the dump -- with the kernel's
state kept, and from scratch -- ietd runs the same targets, LUNs,
parameters and accounts."""

from ietlib import daemon, ietadm, shown_state, volume_state  # noqa: F401
from vmlib.target import iqn
from vmlib.util import MiB

SECRET = "roundtrip-secret-1"


def build_state(daemon, backing):
    a, b, c = iqn("rt-a"), iqn("rt-b"), iqn("rt-c")
    d = daemon(f"IncomingUser disc {SECRET}\n"
               f"Target {a}\n\tAlias first\n\tMaxSessions 2\n"
               f"\tIncomingUser joe {SECRET}\n"
               f"\tLun 0 Path={backing('a', 16 * MiB)},Type=fileio,IOMode=wb\n"
               f"\tLun 3 Type=nullio,Blocks=8192,BlockSize=4096\n"
               f"\tHeaderDigest None,CRC32C\n\tWthreads 4\n"
               f"Target {b}\n\tLun 0 Type=nullio\n")
    # Runtime changes, which the dump must carry.
    ietadm("--op", "new", "--tid=0", "--params", f"Name={c}")
    ietadm("--op", "new", f"--tid={c}", "--lun=1",
           f"--params=Path={backing('c', 16 * MiB)},ScsiId=cid1,ScsiSN=csn1")
    ietadm("--op", "update", "--tid=2", "--params=MaxRecvDataSegmentLength=65536,InitialR2T=No")
    ietadm("--op", "update", "--tid=2", "--redirect=192.0.2.77:3261")
    ietadm("--op", "new", "--user", "--tid=3", f"--params=OutgoingUser=tgt,Password={SECRET}-o")
    return d


def test_dump_and_restart_with_the_kernel_state_kept(daemon, backing, tmp_path):
    d = build_state(daemon, backing)
    dump = tmp_path / "dump.conf"
    ietadm("--op", "save", f"--file={dump}")
    assert oct(dump.stat().st_mode & 0o777) == "0o600"
    state, volume = shown_state(), volume_state()
    d.stop()
    daemon(dump.read_text())
    assert shown_state() == state
    assert volume_state() == volume
    assert ietadm("--op", "reload").stdout == "nothing to change\n"
    # A dump of the restarted ietd is the same dump.
    again = tmp_path / "again.conf"
    ietadm("--op", "save", f"--file={again}")
    assert again.read_text() == dump.read_text()


def test_dump_and_start_from_scratch(daemon, backing, tmp_path):
    d = build_state(daemon, backing)
    dump = tmp_path / "dump.conf"
    ietadm("--op", "save", f"--file={dump}")
    state, volume = shown_state(), volume_state()
    # Everything down, on purpose: then the dump alone rebuilds it.
    ietadm("--op", "delete")
    assert volume_state() == {}
    d.stop()
    daemon(dump.read_text())
    assert volume_state() == volume
    assert shown_state() == state
