#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A peer that tries to hold ietd's connections: open COUNT TCP connections
to 127.0.0.1:PORT, spread over source addresses 127.0.0.FIRST onwards with
PER_ADDR each, send nothing, and print how many ietd closed at once and how
many it kept. With --hold SECONDS, keep them open that long first (while
the caller checks ietd still works), then close them all."""
import argparse
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("--per-addr", type=int, default=1000)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--hold", type=float, default=0)
    a = ap.parse_args()
    socks = []
    for i in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((f"127.0.0.{a.first + i // a.per_addr}", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", a.port))
        socks.append(s)
    deadline = time.monotonic() + 1.0
    closed = set()
    while time.monotonic() < deadline and len(closed) < len(socks):
        r, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.1)
        for s in r:
            try:
                if not s.recv(1, socket.MSG_DONTWAIT):
                    closed.add(s)
            except OSError:
                closed.add(s)
    print(f"closed {len(closed)} kept {len(socks) - len(closed)}", flush=True)
    if a.hold:
        time.sleep(a.hold)
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
