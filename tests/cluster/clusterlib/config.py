# SPDX-License-Identifier: GPL-2.0
"""The cluster's configuration files, as an administrator writes them:
corosync.conf, the DRBD resource, the Pacemaker configuration in crm
syntax and the initiator's node settings. The deployment guide
(doc/cluster.md) is made of these."""

from dataclasses import dataclass

from . import timings as t


@dataclass(frozen=True)
class Host:
    name: str
    public: str                 # address on the initiators' network
    cluster: str | None         # address on the nodes' own network
    mac_public: str
    mac_cluster: str | None


NODES = [Host("nodea", "10.77.1.11", "10.77.2.11", "52:54:00:77:01:11", "52:54:00:77:02:11"),
         Host("nodeb", "10.77.1.12", "10.77.2.12", "52:54:00:77:01:12", "52:54:00:77:02:12")]
INITIATOR = Host("initiator", "10.77.1.20", None, "52:54:00:77:01:20", None)
NETMASK = 24
PORTAL_IP = "10.77.1.100"       # the address that moves with the target
PORTAL = f"{PORTAL_IP}:3260"
IQN = "iqn.2001-04.com.example:iet-cluster.disk"
DRBD_RESOURCE = "r0"
DRBD_DEVICE = "/dev/drbd0"          # volume 0: the LUN
PR_DEVICE = "/dev/drbd1"            # volume 1: the file system of PR_DIR
DRBD_PORT = 7789
# The module's pr_dir (its default): where a LUN's persistent reservations
# are kept. Mounted from the replicated volume where the target runs, so
# the node that takes the LUN over reads the registrations the other wrote.
PR_DIR = "/var/lib/iet/pr"
# The LUN's identity must be the same on either node: the initiator takes
# the other node's LUN for the same disk only if INQUIRY says so.
SCSI_ID = "iet-cluster-0"
SCSI_SN = "ietclu00"
INITIATOR_NAME = "iqn.2001-04.com.example:iet-cluster.initiator"


def corosync_conf(nodes=NODES):
    nodelist = "".join(
        f"\tnode {{\n\t\tring0_addr: {n.cluster}\n\t\tname: {n.name}\n\t\tnodeid: {i}\n\t}}\n"
        for i, n in enumerate(nodes, 1))
    return f"""totem {{
	version: 2
	cluster_name: ietclu
	transport: knet
	# A private network of the two nodes: no encryption to pay for here;
	# across any other network use crypto_cipher aes256, crypto_hash sha256.
	crypto_cipher: none
	crypto_hash: none
	token: {t.TOKEN_MS}
	consensus: {t.CONSENSUS_MS}
	interface {{
		linknumber: 0
		knet_ping_interval: {t.KNET_PING_INTERVAL_MS}
		knet_ping_timeout: {t.KNET_PING_TIMEOUT_MS}
	}}
}}

nodelist {{
{nodelist}}}

quorum {{
	provider: corosync_votequorum
	# Two nodes: the one left keeps quorum when the other is lost
	# (fencing decides which is left; wait_for_all, implied, keeps a
	# node that boots alone from starting resources).
	two_node: 1
}}

logging {{
	to_stderr: yes
	to_syslog: no
	timestamp: on
}}
"""


def drbd_res(disk, pr_disk, nodes=NODES):
    """disk: each node's disk for the LUN; pr_disk: its small one for the
    reservations' file system. Two volumes of one resource: they fail over
    together, and a write to either is ordered with the other's."""
    hosts = "".join(f"\ton {n.name} {{\n\t\taddress {n.cluster}:{DRBD_PORT};\n\t}}\n"
                    for n in nodes)
    return f"""resource {DRBD_RESOURCE} {{
	# Protocol C: a write completes once it is on both nodes' disks.
	protocol C;
	volume 0 {{
		device {DRBD_DEVICE};
		disk {disk};
		meta-disk internal;
	}}
	volume 1 {{
		device {PR_DEVICE};
		disk {pr_disk};
		meta-disk internal;
	}}
	disk {{
		# A primary that loses its peer has the cluster forbid the
		# peer's promotion until it has resynced: an outdated node
		# never becomes primary.
		fencing resource-only;
	}}
	net {{
		timeout {t.DRBD_TIMEOUT_DS};
		ping-timeout {t.DRBD_PING_TIMEOUT_DS};
		ping-int {t.DRBD_PING_INT_S};
		connect-int {t.DRBD_CONNECT_INT_S};
		after-sb-0pri discard-zero-changes;
		after-sb-1pri discard-secondary;
		after-sb-2pri disconnect;
	}}
	handlers {{
		fence-peer "/usr/lib/drbd/crm-fence-peer.sh";
		after-resync-target "/usr/lib/drbd/crm-unfence-peer.sh";
	}}
{hosts}}}
"""


def crm_config(implementation="iet"):
    """The resources: DRBD promotable on both nodes; where it is primary,
    the reservations' file system, the target, its LUN and the portal
    address, in that order (and stopped in the reverse: the address goes
    first, so that initiators meet no target without its LUN; the file
    system last, once the LUN that writes there is gone). IET listens on every address and
    ignores `portals`; LIO (lio-t) binds to the one named, before it is
    up (the nodes allow a non-local bind)."""
    m, o = t.MONITOR_S, t.OP_TIMEOUT_S
    # lio-t knows no tid (the agent warns and ignores it).
    target_params = " tid=1" if implementation == "iet" else f" portals={PORTAL}"
    ops = f"op start timeout={o}s op stop timeout={o}s"
    return f"""property stonith-enabled=false
rsc_defaults resource-stickiness=100
primitive p_drbd ocf:linbit:drbd \\
	params drbd_resource={DRBD_RESOURCE} \\
	op monitor interval={t.DRBD_MONITOR_PROMOTED_S}s role=Promoted timeout={o}s \\
	op monitor interval={t.DRBD_MONITOR_UNPROMOTED_S}s role=Unpromoted timeout={o}s \\
	{ops} op promote timeout={o}s op demote timeout={o}s op notify timeout={o}s
ms ms_drbd p_drbd \\
	meta promoted-max=1 promoted-node-max=1 clone-max=2 clone-node-max=1 notify=true
primitive p_prfs ocf:heartbeat:Filesystem \\
	params device={PR_DEVICE} directory={PR_DIR} fstype=ext4 \\
	op monitor interval={m}s timeout={o}s {ops}
primitive p_target ocf:heartbeat:iSCSITarget \\
	params implementation={implementation} iqn={IQN}{target_params} \\
	op monitor interval={m}s timeout={o}s {ops}
primitive p_lun0 ocf:heartbeat:iSCSILogicalUnit \\
	params implementation={implementation} target_iqn={IQN} lun=0 path={DRBD_DEVICE} \\
	scsi_id={SCSI_ID} scsi_sn={SCSI_SN} \\
	op monitor interval={m}s timeout={o}s {ops}
primitive p_portal ocf:heartbeat:IPaddr2 \\
	params ip={PORTAL_IP} cidr_netmask={NETMASK} \\
	op monitor interval={m}s timeout={o}s {ops}
group g_iscsi p_prfs p_target p_lun0 p_portal
colocation c_iscsi_with_drbd inf: g_iscsi ms_drbd:Promoted
order o_drbd_before_iscsi Mandatory: ms_drbd:promote g_iscsi:start
"""


def iscsi_node_settings():
    """open-iscsi's node settings for the portal: a failover must fit in
    the replacement timeout, or the SCSI layer fails the I/O."""
    return {
        "node.session.timeo.replacement_timeout": t.REPLACEMENT_TIMEOUT_S,
        "node.conn[0].timeo.noop_out_interval": t.NOOP_OUT_INTERVAL_S,
        "node.conn[0].timeo.noop_out_timeout": t.NOOP_OUT_TIMEOUT_S,
    }
