# SPDX-License-Identifier: GPL-2.0
"""Persistent reservations through the kernel initiator (sg_persist), each
command run again while it meets a unit attention."""

from vmlib.util import CommandError, run

UA_EXIT = 6                 # SG_LIB_CAT_UNIT_ATTENTION


def retry_ua(cmd, check=True):
    """A command through the kernel initiator, run again while it meets a
    unit attention (the initiator's own error handling, a LUN reset after
    an abort, gives every nexus one): each is reported once."""
    for _ in range(4):
        cp = run(cmd, check=False, timeout=60)
        if cp.returncode != UA_EXIT:
            break
    if check and cp.returncode:
        raise CommandError(cmd, cp.returncode, cp.stdout, cp.stderr)
    return cp


def persist(dev, *args, check=True):
    return retry_ua(["sg_persist", "-n", *args, dev], check=check)


def keys(dev):
    out = persist(dev, "--in", "--read-keys").stdout
    return sorted(int(ln.strip(), 16) for ln in out.splitlines()
                  if ln.strip().startswith("0x"))
