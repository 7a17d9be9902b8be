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


def drbd_res(disk, pr_disk, nodes=NODES, stonith=False):
    """disk: each node's disk for the LUN; pr_disk: its small one for the
    reservations' file system. Two volumes of one resource: they fail over
    together, and a write to either is ordered with the other's. stonith:
    the cluster fences (sbd): a primary that loses its peer freezes its I/O
    until the peer is fenced or outdated."""
    fencing = DRBD_FENCING_STONITH if stonith else DRBD_FENCING
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
{fencing}
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


# DRBD's fencing policy, without a fence device and with one (sbd).
DRBD_FENCING = """		# A primary that loses its peer has the cluster forbid the
		# peer's promotion until it has resynced: an outdated node
		# never becomes primary.
		fencing resource-only;"""
DRBD_FENCING_STONITH = """		# A primary that loses its peer freezes its I/O, acknowledging
		# no write, until the cluster has fenced the peer (or the peer
		# is outdated): of two nodes cut apart, only one ever writes.
		fencing resource-and-stonith;"""

# sbd (scenario 5): each node's path to the disk both share, and the node
# the suite has serve the target at first (crm_config(stonith=True)).
SBD_DEVICE = "/dev/iet-sbd"
FIRST_ACTIVE = "nodea"


def stonith_lines():
    """Fencing by sbd's poison pill on the shared disk (fence_sbd), for
    crm_config(stonith=True). The suite has the node serving the target
    lose a fencing race (its fencing is not delayed, the other's is): the
    harder case, where writes the losing node took must not be
    acknowledged. In production set priority-fencing-delay instead, so
    that the node serving the target wins."""
    first, other = FIRST_ACTIVE, next(n.name for n in NODES if n.name != FIRST_ACTIVE)
    return f"""property stonith-enabled=true stonith-timeout={t.STONITH_TIMEOUT_S}s
primitive st_sbd stonith:fence_sbd \\
	params devices={SBD_DEVICE} pcmk_delay_base="{first}:0s;{other}:{t.FENCE_DELAY_S}s" \\
	op monitor interval={t.MONITOR_S}s timeout={t.OP_TIMEOUT_S}s
"""


def _ops():
    o = t.OP_TIMEOUT_S
    return f"op start timeout={o}s op stop timeout={o}s"


def _promotable(name, agent, params, promoted_s, unpromoted_s, meta=""):
    """A promotable resource on both nodes: its two monitors (which must
    differ) and every operation's timeout."""
    o = t.OP_TIMEOUT_S
    return f"""primitive p_{name} {agent} \\
	params {params} \\
	op monitor interval={promoted_s}s role=Promoted timeout={o}s \\
	op monitor interval={unpromoted_s}s role=Unpromoted timeout={o}s \\
	{_ops()} op promote timeout={o}s op demote timeout={o}s op notify timeout={o}s
ms ms_{name} p_{name} \\
	meta promoted-max=1 promoted-node-max=1 clone-max=2 clone-node-max=1 notify=true{meta}
"""


def _target_and_lun(implementation, target_params):
    """The stock agents' target and LUN 0 on /dev/drbd0, with the identity
    that makes it the same disk on either node."""
    m, o = t.MONITOR_S, t.OP_TIMEOUT_S
    return f"""primitive p_target ocf:heartbeat:iSCSITarget \\
	params implementation={implementation} iqn={IQN}{target_params} \\
	op monitor interval={m}s timeout={o}s {_ops()}
primitive p_lun0 ocf:heartbeat:iSCSILogicalUnit \\
	params implementation={implementation} target_iqn={IQN} lun=0 path={DRBD_DEVICE} \\
	scsi_id={SCSI_ID} scsi_sn={SCSI_SN} \\
	op monitor interval={m}s timeout={o}s {_ops()}
"""


def crm_config(implementation="iet", stonith=False):
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
    fencing = stonith_lines() if stonith else "property stonith-enabled=false\n"
    # Where the suite has the target start, so that it knows who loses.
    first = f"location l_iscsi_first g_iscsi 100: {FIRST_ACTIVE}\n" if stonith else ""
    drbd = _promotable("drbd", "ocf:linbit:drbd", f"drbd_resource={DRBD_RESOURCE}",
                       t.DRBD_MONITOR_PROMOTED_S, t.DRBD_MONITOR_UNPROMOTED_S)
    return f"""{fencing}rsc_defaults resource-stickiness=100
{drbd}primitive p_prfs ocf:heartbeat:Filesystem \\
	params device={PR_DEVICE} directory={PR_DIR} fstype=ext4 \\
	op monitor interval={m}s timeout={o}s {_ops()}
{_target_and_lun(implementation, target_params)}primitive p_portal ocf:heartbeat:IPaddr2 \\
	params ip={PORTAL_IP} cidr_netmask={NETMASK} \\
	op monitor interval={m}s timeout={o}s {_ops()}
group g_iscsi p_prfs p_target p_lun0 p_portal
colocation c_iscsi_with_drbd inf: g_iscsi ms_drbd:Promoted
order o_drbd_before_iscsi Mandatory: ms_drbd:promote g_iscsi:start
{first}"""


# ALUA (scenario 4): both nodes serve the target, each through a portal
# group of its own on its own address; multipath initiators log in through
# both, and send I/O where REPORT TARGET PORT GROUPS says active/optimized.
ALUA_GROUPS = {"nodea": 1, "nodeb": 2}
ALUA_AGENT_DIR = "/usr/lib/ocf/resource.d/iet"


def ietd_conf_alua(node):
    """A node's /etc/iet/ietd.conf: its portal group on its own address,
    and its peer's as another node's. Its targets start standby there
    (their LUNs closed) until the cluster promotes this node."""
    own = ALUA_GROUPS[node.name]
    other = next(tag for name, tag in ALUA_GROUPS.items() if name != node.name)
    return f"PortalGroup {own} {node.public}:3260\nRemotePortalGroup {other}\n"


def crm_config_alua():
    """The resources for ALUA: DRBD promotable as before; the target and
    its LUN on both nodes (a clone: the LUN added on the standby node
    stays closed, sized as /dev/drbd0 is, until its portal group becomes
    active); ocf:iet:alua promotable, promoted where DRBD is primary and
    after it, demoted (the LUN closed) before DRBD is demoted."""
    drbd = _promotable("drbd", "ocf:linbit:drbd", f"drbd_resource={DRBD_RESOURCE}",
                       t.DRBD_MONITOR_PROMOTED_S, t.DRBD_MONITOR_UNPROMOTED_S)
    alua = _promotable("alua", "ocf:iet:alua", f"iqn={IQN}", t.ALUA_MONITOR_PROMOTED_S,
                       t.ALUA_MONITOR_UNPROMOTED_S, meta=" interleave=true")
    return f"""property stonith-enabled=false
rsc_defaults resource-stickiness=100
{drbd}{_target_and_lun("iet", " tid=1")}group g_iscsi p_target p_lun0
clone cl_iscsi g_iscsi \\
	meta interleave=true
{alua}order o_drbd_before_iscsi Mandatory: ms_drbd:start cl_iscsi:start
order o_iscsi_before_alua Mandatory: cl_iscsi:start ms_alua:start
colocation c_alua_with_drbd inf: ms_alua:Promoted ms_drbd:Promoted
order o_drbd_before_alua Mandatory: ms_drbd:promote ms_alua:promote
"""


def multipath_conf():
    """The initiator's /etc/multipath.conf: IET's disks grouped by ALUA
    priority, the optimized group used, and I/O queued (not failed) while
    no path is usable, as it is between the active node's death and the
    other's promotion."""
    return f"""defaults {{
	find_multipaths "off"
	user_friendly_names "yes"
	polling_interval {t.MULTIPATH_POLLING_S}
}}
devices {{
	device {{
		vendor "IET"
		product "VIRTUAL-DISK"
		path_grouping_policy "group_by_prio"
		prio "alua"
		hardware_handler "1 alua"
		failback "immediate"
		path_checker "tur"
		no_path_retry "queue"
	}}
}}
"""


def iscsi_node_settings_alua():
    """open-iscsi's node settings of each path: a dead path's commands go
    back to dm-multipath soon, which sends them down the other path (or
    queues them while none is usable)."""
    return dict(iscsi_node_settings(),
                **{"node.session.timeo.replacement_timeout": t.MULTIPATH_REPLACEMENT_TIMEOUT_S})


def iscsi_node_settings():
    """open-iscsi's node settings for the portal: a failover must fit in
    the replacement timeout, or the SCSI layer fails the I/O."""
    return {
        "node.session.timeo.replacement_timeout": t.REPLACEMENT_TIMEOUT_S,
        "node.conn[0].timeo.noop_out_interval": t.NOOP_OUT_INTERVAL_S,
        "node.conn[0].timeo.noop_out_timeout": t.NOOP_OUT_TIMEOUT_S,
    }
