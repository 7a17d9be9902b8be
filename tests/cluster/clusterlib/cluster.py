# SPDX-License-Identifier: GPL-2.0
"""The two-node cluster and its initiator: three VMs on two private
networks (the initiators' and the nodes' own), each node with its own disk
for DRBD, corosync and Pacemaker on the nodes, the target managed by the
resource agents, open-iscsi on the initiator. One Cluster per test module:
booted, configured and checked at the start, each VM's kernel log audited
at the end."""

import os
import subprocess
import threading
import time
from pathlib import Path

from . import config as c
from . import timings as t
from .netns import Netns
from .vm import REPO, VM, GuestError, sh

KMSG = REPO / "tests" / "vm" / "vmlib" / "kmsg.py"
DISK_MIB = 512
DRBD_SERIAL = "iet-drbd"
PR_DISK_MIB = 64
PR_SERIAL = "iet-prfs"
SBD_DISK_MIB = 16
SBD_SERIAL = "iet-sbd"


class Cluster:
    def __init__(self, results, image, module_ko, kvm=False, implementation="iet",
                 alua=False, stonith=False):
        """implementation: the agents' name of the target, "iet" or LIO's
        "lio-t" (the control). alua: both nodes serve the target, each
        through its own portal group, and ocf:iet:alua says which is
        active (config.crm_config_alua()), instead of one node serving it
        on the address that moves. stonith: the nodes fence each other
        with sbd on a disk they share (config.stonith_lines())."""
        assert implementation in ("iet", "lio-t"), implementation
        assert not alua or implementation == "iet"
        assert not (alua and stonith)
        self.implementation = implementation
        self.alua = alua
        self.stonith = stonith
        self.results = Path(results)
        self.image = image
        self.module_ko = Path(module_ko)
        self.kvm = kvm
        self.netns = Netns(f"ietclu{os.getpid()}")
        self.mark = f"iet-cluster: start {os.getpid()}-{time.time():.0f}"
        # Seen by every VM at the same path: what one writes, another checks.
        self.shared = self.results / "shared"
        self.nodes = {}
        self.initiator = None

    # ---------------------------------------------------------- boot
    def start(self):
        self.shared.mkdir(parents=True, exist_ok=True)
        self.netns.create(["brpub", "brclu"])
        sbd_img = self.results / "sbd.img"
        if self.stonith:
            sbd_img.unlink(missing_ok=True)
            with open(sbd_img, "wb") as f:
                f.truncate(SBD_DISK_MIB << 20)
        vms = []
        for h in c.NODES + [c.INITIATOR]:
            nics = [(f"{h.name[:8]}p", h.mac_public)]
            self.netns.tap(nics[0][0], "brpub")
            if h.cluster:
                nics.append((f"{h.name[:8]}c", h.mac_cluster))
                self.netns.tap(nics[1][0], "brclu")
            disks = []
            if h in c.NODES:
                for serial, mib in ((DRBD_SERIAL, DISK_MIB), (PR_SERIAL, PR_DISK_MIB)):
                    img = self.results / f"{h.name}-{serial}.img"
                    img.unlink(missing_ok=True)
                    with open(img, "wb") as f:
                        f.truncate(mib << 20)
                    disks.append((img, serial))
                if self.stonith:
                    disks.append((sbd_img, SBD_SERIAL, True))
            vm = VM(h.name, self.image, self.results / h.name, self.netns, nics, disks,
                    mem="1G", kvm=self.kvm, shared=self.shared)
            vm.host = h
            vms.append(vm)
        # Known before they boot: stop() kills whatever got started.
        for vm in vms:
            if vm.host in c.NODES:
                self.nodes[vm.name] = vm
            else:
                self.initiator = vm
        errors = []

        def boot(vm):
            try:
                vm.boot()
                self.prepare(vm)
            except Exception as e:     # reported below, with the VM's name
                errors.append(f"{vm.name}: {e}")
        threads = [threading.Thread(target=boot, args=(vm,), daemon=True) for vm in vms]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            raise GuestError("; ".join(errors))
        for vm in self.nodes.values():
            self.start_node(vm)
            self.start_drbd_and_corosync(vm)
        self.start_initiator(self.initiator)
        self.form()

    def prepare(self, vm):
        """Addresses by MAC address, the kernel log captured from a mark."""
        h = vm.host
        vm.run(f"echo '<6>{self.mark}' >/dev/kmsg")
        vm.spawn("exec dmesg --follow", "dmesg.log")
        vm.run("ip link set lo up")
        for mac, addr in ((h.mac_public, h.public), (h.mac_cluster, h.cluster)):
            if not mac:
                continue
            vm.run(f"""for d in /sys/class/net/*; do
				[ "$(cat $d/address)" = {mac} ] && dev=${{d##*/}}
			done
			[ -n "$dev" ] || {{ echo no NIC with address {mac}; exit 1; }}
			ip link set "$dev" up && ip addr add {addr}/{c.NETMASK} dev "$dev" """)

    def start_node(self, vm):
        # The host's root is the guest's: a CIB a host's Pacemaker left in
        # /var/lib/pacemaker would seed the cluster's.
        vm.run("""set -e
			modprobe drbd
			rm -rf /var/lib/pacemaker/cib/* /var/lib/pacemaker/pengine/*
			mkdir -p /var/log/pacemaker /var/log/cluster /var/log/crmsh /var/lib/pacemaker/cores
			chown hacluster:haclient /var/log/pacemaker
			""")
        if self.implementation == "iet":
            self.start_iet(vm)
        else:
            self.start_lio(vm)

    @staticmethod
    def disk_of(vm, serial):
        disk = vm.run(f"""for d in /sys/block/vd*; do
			[ "$(cat $d/serial)" = {serial} ] && echo /dev/${{d##*/}}
			done; true""").out.strip()
        assert disk.startswith("/dev/vd"), f"{vm.name}: no disk with serial {serial}"
        return disk

    def start_drbd_and_corosync(self, vm):
        results = vm.results
        disks = [self.disk_of(vm, serial) for serial in (DRBD_SERIAL, PR_SERIAL)]
        vm.run(f"cat >/etc/drbd.d/{c.DRBD_RESOURCE}.res",
               input=c.drbd_res(*disks, stonith=self.stonith))
        vm.run("cat >/etc/drbd.d/global_common.conf",
               input="global {\n\tusage-count no;\n}\ncommon {\n}\n")
        vm.run(f"yes yes | drbdadm create-md --force {c.DRBD_RESOURCE} && "
               f"drbdadm up {c.DRBD_RESOURCE}", timeout=120)
        vm.run("cat >/etc/corosync/corosync.conf", input=c.corosync_conf())
        vm.spawn("exec corosync -f", "corosync.log")
        (results / "pacemaker.log").touch()
        vm.spawn("exec tail -n +1 -F /var/log/pacemaker/pacemaker.log", "pacemaker.log")

    def start_iet(self, vm):
        ko = self.module_ko
        vm.run(f"""set -e
			modprobe -a $(modinfo -F depends {sh(ko)} | tr , ' ')
			mkdir -p {c.PR_DIR} /etc/iet {c.ALUA_AGENT_DIR}
			insmod {sh(ko)} pr_dir={c.PR_DIR}
			ln -sf {REPO}/usr/ietadm /usr/sbin/ietadm
			ln -sf {REPO}/etc/ocf/alua {c.ALUA_AGENT_DIR}/alua
			""", timeout=120)
        vm.run("cat >/etc/iet/ietd.conf",
               input=c.ietd_conf_alua(vm.host) if self.alua else "")
        vm.spawn(f"exec {REPO}/usr/ietd -f -c /etc/iet/ietd.conf", "ietd.log")
        vm.wait_for("[ -S /run/iet/ietd.sock ]", 60, "ietd to serve")

    @staticmethod
    def start_lio(vm):
        """LIO's modules and configfs, a system D-Bus and the directory of
        its reservations for targetcli, and a non-local bind for its
        portal on the address that is not up yet."""
        vm.run("""set -e
			modprobe -a configfs target_core_mod target_core_iblock iscsi_target_mod
			mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
			mkdir -p /run/dbus /etc/rtslib-fb-target/pr /etc/target
			dbus-daemon --system --fork
			sysctl -qw net.ipv4.ip_nonlocal_bind=1
			""", timeout=120)

    def start_initiator(self, vm):
        vm.run(f"""set -e
			modprobe iscsi_tcp; modprobe dm_multipath || true
			modprobe scsi_dh_alua || true
			mkdir -p /run/lock/iscsi /var/lib/iscsi /etc/iscsi
			echo InitiatorName={c.INITIATOR_NAME} >/etc/iscsi/initiatorname.iscsi
			sed -i '/^[[:space:]]*iscsid.startup/d' /etc/iscsi/iscsid.conf
			echo 'iscsid.startup = /bin/true' >>/etc/iscsi/iscsid.conf
			""")
        vm.spawn("exec iscsid -f", "iscsid.log")
        vm.wait_for("iscsiadm -m session 2>&1 | grep -q 'No active sessions'", 60,
                    "iscsid to answer")

    def form(self):
        """DRBD in sync (both disks are new and zeroed: no full resync
        needed), then down for Pacemaker to bring up; corosync and
        Pacemaker formed; the resources configured and started."""
        a, b = self.nodes["nodea"], self.nodes["nodeb"]
        r = c.DRBD_RESOURCE
        a.wait_for(f"[ \"$(drbdadm cstate {r} | sort -u)\" = Connected ]", 120,
                   "DRBD to connect")
        for vol in (0, 1):
            a.run(f"drbdadm -- --clear-bitmap new-current-uuid {r}/{vol}")
        for vm in (a, b):
            vm.wait_for(f"[ \"$(drbdadm dstate {r} | sort -u)\" = UpToDate/UpToDate ]", 60,
                        "both DRBD disks UpToDate")
        # The reservations' file system, made once, replicated like the rest.
        a.run(f"drbdadm primary {r} && mkfs.ext4 -q {c.PR_DEVICE} && drbdadm secondary {r}",
              timeout=120)
        for vm in (a, b):
            vm.run(f"drbdadm down {r}")
        if self.stonith:
            self.start_sbd()
        for vm in (a, b):
            vm.spawn("exec pacemakerd", "pacemakerd.log")
        a.wait_for("crm_mon -1 2>/dev/null | grep -Eq 'Online: \\[ nodea nodeb \\]'",
                   t.FAILOVER_S, "both nodes online in Pacemaker")
        a.run("crm configure load update -",
              input=c.crm_config_alua() if self.alua else
              c.crm_config(self.implementation, stonith=self.stonith),
              timeout=t.CRM_CLI_S)
        self.wait_active(t.FAILOVER_S)

    def start_sbd(self):
        """sbd on each node, before Pacemaker: the shared disk's slots
        made once, the softdog watchdog, and the daemon that resets its
        node when its slot holds a poison pill (or it cannot feed the
        watchdog)."""
        for vm in self.nodes.values():
            vm.run(f"modprobe softdog && ln -sf {self.disk_of(vm, SBD_SERIAL)} {c.SBD_DEVICE}")
        self.nodes["nodea"].run(
            f"sbd -d {c.SBD_DEVICE} -1 {t.SBD_WATCHDOG_S} -4 {t.SBD_MSGWAIT_S} create")
        for vm in self.nodes.values():
            vm.spawn(f"exec sbd -d {c.SBD_DEVICE} -W -w /dev/watchdog -n {vm.name} "
                     "-p /run/sbd.pid -v watch", "sbd.log")
        for vm in self.nodes.values():
            vm.wait_for(f"sbd -d {c.SBD_DEVICE} list | grep -qw {vm.name}", 60,
                        "sbd to take its slot")

    # ---------------------------------------------------------- state
    def crm_mon(self, via=None):
        vm = via or next((v for v in self.nodes.values() if v.alive()), None)
        if vm is None:
            return "(no node left to ask)"
        return vm.run("crm_mon -1 -r", check=False).out

    def active(self):
        """The node whose kernel serves the target with its LUN, or None.
        With ALUA: its LUN's backing open, its own portal group
        active/optimized."""
        if self.alua:
            for vm in self.nodes.values():
                if vm.alive() and vm.run(
                        "ietadm --op show --tid=1 --lun=0 2>/dev/null | grep -qx Backing=open && "
                        "ietadm --op show --tid=1 | grep -Eq "
                        "'^PortalGroup=[0-9]+,State=active/optimized,Sessions=[0-9]+$'",
                        check=False).rc == 0:
                    return vm
            return None
        if self.implementation == "iet":
            serves = (f"grep -A1 -F 'name:{c.IQN}' /proc/net/iet/volume 2>/dev/null | "
                      "grep -q 'lun:0 '")
        else:
            serves = f"[ -e /sys/kernel/config/target/iscsi/{c.IQN}/tpgt_1/lun/lun_0 ]"
        for vm in self.nodes.values():
            if not vm.alive():
                continue
            res = vm.run(f"{serves} && ip -o addr | grep -qF ' {c.PORTAL_IP}/'", check=False)
            if res.rc == 0:
                return vm
        return None

    def wait_active(self, timeout, not_on=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            vm = self.active()
            if vm is not None and vm is not not_on:
                return vm
            time.sleep(2)
        raise GuestError(f"the target did not come up within {timeout} s"
                         f"{f' away from {not_on.name}' if not_on else ''}:\n{self.crm_mon()}")

    def other(self, vm):
        return next(v for v in self.nodes.values() if v is not vm)

    # ---------------------------------------------------------- the end
    def audit(self):
        """Bad lines in each VM's kernel log since the mark: a killed VM's
        too, up to its end."""
        bad = {}
        for vm in [*self.nodes.values(), self.initiator]:
            if vm is None or vm.proc is None:
                continue
            if vm.alive():
                vm.run("echo '<6>iet-cluster: end' >/dev/kmsg; sleep 1")
            res = subprocess.run(["/usr/bin/python3", str(KMSG), "audit",
                                  str(vm.results / "dmesg.log"), self.mark],
                                 capture_output=True, text=True)
            if res.returncode > 1:
                bad[vm.name] = f"the audit could not run: {res.stderr}"
            elif res.stdout.strip():
                bad[vm.name] = res.stdout
        return bad

    def stop(self):
        try:
            for vm in [*self.nodes.values(), self.initiator]:
                if vm is not None:
                    try:
                        vm.kill()
                    except Exception as e:      # the others are still stopped
                        print(f"cluster: stopping {vm.name}: {e}")
        finally:
            self.netns.delete()
