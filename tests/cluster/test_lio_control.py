# SPDX-License-Identifier: GPL-2.0
"""Scenario 6, the control: the hard failure of scenario 1 with LIO in
place of IET (the agents' implementation "lio-t", targetcli), in the same
harness, measured the same way: its I/O pause beside IET's in
check-cluster's summary."""

from clusterlib import scenarios

IMPLEMENTATION = "lio-t"


def test_lio_active_node_killed_under_load(cluster):
    scenarios.hard_failure(cluster, "lio-kill")
