# SPDX-License-Identifier: GPL-2.0
"""Making a peer vanish: firewall rules on the loopback traffic of a port."""

from .util import run

TABLE = "iet_test"


class Firewall:
    """nftables rules in a table of our own, removed by clear()."""

    def __init__(self):
        self.active = False

    def _setup(self):
        if not self.active:
            run(["nft", "add", "table", "inet", TABLE])
            for chain, hook in (("in", "input"), ("out", "output")):
                run(["nft", "add", "chain", "inet", TABLE, chain,
                     f"{{ type filter hook {hook} priority 0; policy accept; }}"])
            self.active = True

    def silence(self, port):
        """Drop every packet to or from port: both peers hear nothing more,
        as when the initiator's host dies or its cable is pulled."""
        self._setup()
        for chain in ("in", "out"):
            run(["nft", "add", "rule", "inet", TABLE, chain, "tcp", "dport", str(port), "drop"])
            run(["nft", "add", "rule", "inet", TABLE, chain, "tcp", "sport", str(port), "drop"])

    def reset_initiator(self, port):
        """Answer each packet the initiator sends to port with a TCP reset
        to the initiator alone: its socket dies, the target hears nothing
        until it next sends and gets a reset from the closed port."""
        self._setup()
        run(["nft", "add", "rule", "inet", TABLE, "out", "tcp", "dport", str(port),
             "reject", "with", "tcp", "reset"])

    def clear(self):
        if self.active:
            run(["nft", "delete", "table", "inet", TABLE], check=False)
            self.active = False
