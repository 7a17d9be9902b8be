# SPDX-License-Identifier: GPL-2.0
"""Making a peer vanish: firewall rules on the loopback traffic of a port.

The table and its two base chains are installed once, by install(), while
the guest is still quiet, and stay for the whole boot: tests only add and
flush rules. Registering a netfilter hook flips a static key, and the kernel
patches the branch in ip_local_deliver() with a text_poke through an int3.
Under QEMU's TCG, another vCPU receiving loopback traffic at that moment can
take the int3 after the poke has finished -- an "Oops: int3" in
ip_local_deliver that is the emulator's, not ours -- so no hook may come or
go while iSCSI traffic flows.
"""

from .util import run

TABLE = "iet_test"
CHAINS = ("in", "out")


def install():
    """The table, its accepting base chains on input and output, and the
    reject expression's modules, loaded now rather than mid-test."""
    run(["nft", "add", "table", "inet", TABLE])
    for chain, hook in zip(CHAINS, ("input", "output")):
        run(["nft", "add", "chain", "inet", TABLE, chain,
             f"{{ type filter hook {hook} priority 0; policy accept; }}"])
    run(["nft", "add", "rule", "inet", TABLE, "out", "tcp", "dport", "9", "reject", "with", "tcp", "reset"])
    run(["nft", "flush", "table", "inet", TABLE])


class Firewall:
    """Rules in install()'s chains, removed by clear()."""

    def __init__(self):
        self.active = False

    def _rule(self, chain, *match):
        run(["nft", "add", "rule", "inet", TABLE, chain, *match])
        self.active = True

    def silence(self, port):
        """Drop every packet to or from port: both peers hear nothing more,
        as when the initiator's host dies or its cable is pulled."""
        for chain in CHAINS:
            self._rule(chain, "tcp", "dport", str(port), "drop")
            self._rule(chain, "tcp", "sport", str(port), "drop")

    def reset_initiator(self, port):
        """Answer each packet the initiator sends to port with a TCP reset
        to the initiator alone: its socket dies, the target hears nothing
        until it next sends and gets a reset from the closed port."""
        self._rule("out", "tcp", "dport", str(port), "reject", "with", "tcp", "reset")

    def clear(self):
        if self.active:
            run(["nft", "flush", "table", "inet", TABLE])
            self.active = False
