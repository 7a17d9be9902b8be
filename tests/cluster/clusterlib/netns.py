# SPDX-License-Identifier: GPL-2.0
"""The cluster's networks: a network namespace of its own on the host, with
a bridge per network and a tap device per VM port. Nothing in it has a
route out and the host has no address in it: the VMs reach each other and
nothing else. Removed, with all its devices, when the harness ends."""

import os
import subprocess


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class Netns:
    def __init__(self, name):
        self.name = name

    def create(self, bridges):
        ip("netns", "del", self.name, check=False)
        ip("netns", "add", self.name)
        for br in bridges:
            ip("-n", self.name, "link", "add", br, "type", "bridge")
            # No STP delay: a port forwards as soon as it is up.
            ip("-n", self.name, "link", "set", br, "type", "bridge", "forward_delay", "0")
            ip("-n", self.name, "link", "set", br, "up")

    def tap(self, tap, bridge):
        ip("-n", self.name, "tuntap", "add", tap, "mode", "tap")
        ip("-n", self.name, "link", "set", tap, "master", bridge)
        ip("-n", self.name, "link", "set", tap, "up")

    def link(self, tap, up):
        """A VM's port on its bridge brought down (the cable pulled) or up."""
        ip("-n", self.name, "link", "set", tap, "up" if up else "down")

    def exec_prefix(self):
        return ["ip", "netns", "exec", self.name]

    def delete(self):
        ip("netns", "del", self.name, check=False)

    @staticmethod
    def usable():
        return os.geteuid() == 0 and ip("netns", "list", check=False).returncode == 0
