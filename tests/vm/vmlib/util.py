# SPDX-License-Identifier: GPL-2.0
"""Running commands and waiting for conditions, with timeouts and clear errors."""

import errno
import os
import shlex
import subprocess
import time
from pathlib import Path

REPO = Path(os.environ.get("IET_REPO", Path(__file__).resolve().parents[3]))
RESULTS = Path(os.environ.get("IET_RESULTS", "/tmp/iet-results"))

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


class CommandError(AssertionError):
    """A command exited with an unexpected status; carries its output."""

    def __init__(self, cmd, rc, out, err):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        super().__init__(
            f"`{shlex.join(cmd)}` exited with {rc}\n"
            f"--- stdout ---\n{out.rstrip()}\n--- stderr ---\n{err.rstrip()}")


def run(cmd, check=True, timeout=120, input=None, env=None):
    """Run cmd (a list); return CompletedProcess with text stdout/stderr.

    check=True: raise CommandError on a non-zero status. A command still
    running after timeout seconds is killed and raises TimeoutError.
    """
    try:
        cp = subprocess.run(cmd, input=input, capture_output=True, text=True,
                            timeout=timeout, env=env, errors="replace")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        raise TimeoutError(f"`{shlex.join(cmd)}` still running after {timeout}s; output so far:\n{out}") from None
    if check and cp.returncode != 0:
        raise CommandError(cmd, cp.returncode, cp.stdout, cp.stderr)
    return cp


def udev_settle():
    """Wait for udev's probes of new devices; a slow kernel (the debug one)
    may take minutes, after which the caller goes on regardless."""
    run(["udevadm", "settle", "--timeout=150"], check=False, timeout=180)


def wait_until(predicate, timeout, what, interval=0.2):
    """Poll predicate() until it returns something true; return that value.

    Raise TimeoutError naming `what` (a string, or a callable giving the
    message, e.g. with the state last seen) after timeout seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            msg = what() if callable(what) else what
            raise TimeoutError(f"timed out after {timeout}s waiting for {msg}")
        time.sleep(interval)


def read(path, default=None):
    """A small file's text, or default when it does not exist.

    The results directory is the host's, shared into the guest: on 7.x
    guests a read of a file that another process (ietd, its log) is
    appending to has failed with ENODATA once; it is read again."""
    for attempt in range(25):
        try:
            return Path(path).read_text()
        except FileNotFoundError:
            if default is None:
                raise
            return default
        except OSError as e:
            if e.errno != errno.ENODATA or attempt == 24:
                raise
            time.sleep(0.2)


def safe_name(text):
    """A string usable as a file name (test ids have '/', '[' and ':')."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:120]


def tail(path, lines=40):
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-lines:])
    except FileNotFoundError:
        return f"({path} does not exist)\n"
