# SPDX-License-Identifier: GPL-2.0
"""Every timing of the cluster in one place, set for nodes under software
emulation (TCG): a guest there runs ten to fifty times slower than on
hardware and stalls for seconds when the host is busy, so the stock
timeouts, made for servers, would have corosync see a stalled node as a
dead one and fence or fail over for nothing. Each value says what it is
in stock form; the deployment guide (doc/cluster.md) says what to use on
real machines."""

# corosync (totem): a node is declared lost when the token has not come
# back for TOKEN_MS (stock 3000; 1000 in corosync 2); consensus must be
# larger than the token (stock 1.2 * token).
TOKEN_MS = 10000
CONSENSUS_MS = 12000
# knet's link heartbeat: ping every KNET_PING_INTERVAL_MS, the link down
# after KNET_PING_TIMEOUT_MS without an answer (stock: token / 4 and
# token / 2, derived; written out so that they show).
KNET_PING_INTERVAL_MS = 2000
KNET_PING_TIMEOUT_MS = 5000

# DRBD (net section; tenths of a second where DRBD says so): the peer is
# gone when a request has no answer within TIMEOUT_DS (stock 60, 6 s) or a
# ping none within PING_TIMEOUT_DS (stock 5); it pings every PING_INT_S
# seconds (stock 10) and tries to connect every CONNECT_INT_S (stock 10).
# drbd.conf(5): the timeout must be shorter than ping-int and connect-int.
DRBD_TIMEOUT_DS = 100
DRBD_PING_TIMEOUT_DS = 30
DRBD_PING_INT_S = 11
DRBD_CONNECT_INT_S = 11

# Pacemaker: how often each resource is monitored (stock examples: 10-30
# s) and how long an operation may take before it counts as failed (the
# agents' own advice: start and stop 10-20 s on hardware). DRBD's two
# monitors must differ so that Pacemaker tells them apart.
MONITOR_S = 20
DRBD_MONITOR_PROMOTED_S = 19
DRBD_MONITOR_UNPROMOTED_S = 21
OP_TIMEOUT_S = 120
# crmsh, a Python program, takes a minute or more to start on a loaded
# emulated node reading its modules over 9p: its commands get this long.
CRM_CLI_S = 300
# How long the harness waits for a resource to come up after a failure or
# a move: corosync must first declare the node lost, then Pacemaker
# promote DRBD and start the target, its LUNs and the address.
FAILOVER_S = 240

# open-iscsi: how long a session may be down before the SCSI layer fails
# its commands (stock 120 s), and its NOP-Out ping (stock 5 s / 5 s):
# the failover must fit in the replacement timeout.
REPLACEMENT_TIMEOUT_S = 300
NOOP_OUT_INTERVAL_S = 5
NOOP_OUT_TIMEOUT_S = 15
# The SCSI disk's command timeout on the initiator (sd, stock 30 s).
SD_TIMEOUT_S = 120

# ALUA (scenario 4): ocf:iet:alua's two monitors (they must differ, as
# DRBD's); open-iscsi's replacement timeout of a path under dm-multipath
# (open-iscsi's advice there: 5 to 20 s, stock 120 s), after which a dead
# path's commands go to the other; multipathd's path checks (stock 5 s).
ALUA_MONITOR_PROMOTED_S = 23
ALUA_MONITOR_UNPROMOTED_S = 25
MULTIPATH_REPLACEMENT_TIMEOUT_S = 20
MULTIPATH_POLLING_S = 5

# Fencing (scenario 5): sbd's watchdog timeout (stock 5 s; a node whose
# sbd has not fed its watchdog for this long is reset) and the time a
# poison pill is given to be read and obeyed (msgwait, at least twice the
# watchdog timeout; stock 10 s); Pacemaker's fencing timeout, past
# msgwait and the delay; the delay of fencing the node that should win.
SBD_WATCHDOG_S = 20
SBD_MSGWAIT_S = 40
STONITH_TIMEOUT_S = 180
FENCE_DELAY_S = 60
