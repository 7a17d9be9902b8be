# SPDX-License-Identifier: GPL-2.0
"""Scenario 1: the active node's VM stops at once under load. Pacemaker
promotes DRBD on the other node and starts the target, its LUN and the
portal address there; the initiator's session recovers within its
replacement timeout, fio's verification finds no error, and every write
the target had acknowledged is on the new primary's disk."""

from clusterlib import scenarios


def test_active_node_killed_under_load(cluster):
    scenarios.hard_failure(cluster, "kill")
