# SPDX-License-Identifier: GPL-2.0
"""The host side of the cluster suite (tests/cluster): networks, VMs,
the cluster on them, the initiator's load, and the timings they share."""
