# SPDX-License-Identifier: GPL-2.0
"""Reservations from several I_T nexuses through the kernel initiator and
sg3-utils (sg_persist, sg_raw): every persistent reservation type lets in
whom SPC-4 says and turns away the rest with RESERVATION CONFLICT; PREEMPT
AND ABORT fences a registrant (fence_scsi's way) while its writes are in
flight; REGISTER AND MOVE hands the reservation over; APTPL state survives
an ietd restart and a module reload, and a torn record falls back to the
one before; SPC-2 RESERVE / RELEASE ends with its session; a hostile
parameter list gets its sense and changes nothing, and (raw PDUs) one whose
lengths would wrap the target's arithmetic registers no one."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from ietlib import ietadm, stats
from vmlib import initiator as ini
from vmlib import kmsg
from vmlib import rawiscsi as ri
from vmlib.pr import keys, persist, retry_ua
from vmlib.storage import pread_direct, pwrite_direct
from vmlib.target import PR_DIR, Lun, Target, iqn, listening
from vmlib.util import MiB, run, wait_until
from vmlib.xcopy import cscd, naa_of, raw_xcopy, segment

IFACES = ["pr0", "pr1", "pr2"]
# pr2 is another host: another initiator name, not only another ISID.
OTHER_HOST = "iqn.2024-01.com.example.iet:other-host"
CONFLICT_EXIT = 24          # sg3-utils' SG_LIB_CAT_RES_CONFLICT
ILLEGAL_EXIT = 5            # SG_LIB_CAT_ILLEGAL_REQ

WE, EA, WE_RO, EA_RO, WE_AR, EA_AR = 1, 3, 5, 6, 7, 8


@pytest.fixture
def nexuses(iscsid):
    """nexuses(target): LUN 0's disk in three sessions to target, one per
    iface record (three I_T nexuses, the third of another initiator name);
    all logged out at the end."""
    with ini.iface_logins(IFACES) as login:
        ini.iscsiadm("-m", "iface", "-I", IFACES[2], "-o", "update",
                     "-n", "iface.initiatorname", "-v", OTHER_HOST)
        yield login


def lun_target(ietd, backing, name):
    target = iqn(name)
    ietd(Target(target, [Lun(0, str(backing(name, 16 * MiB)))]))
    return target


def reservation(dev):
    """(key, type) of the reservation, or None."""
    out = persist(dev, "--in", "--read-reservation").stdout
    if "NO reservation" in out:
        return None
    key = int(out.split("Key=")[1].split()[0], 16)
    return key, out.split("type:")[1].strip()


def scsi(dev, cdb, write=False):
    """sg_raw's exit status for a one-block command, a unit attention
    (reported once) retried."""
    args = ["-s", "512", "-i", "/dev/zero"] if write else ["-r", "512"]
    return retry_ua(["sg_raw", *args, dev, *cdb.split()], check=False).returncode


def can_read(dev):
    return {0: True, CONFLICT_EXIT: False}[scsi(dev, "28 00 00 00 00 10 00 00 01 00")]


def can_write(dev):
    return {0: True, CONFLICT_EXIT: False}[
        scsi(dev, "2a 00 00 00 00 10 00 00 01 00", write=True)]


def full_status(dev):
    """READ FULL STATUS, all of it, parsed: [(key, all_tg_pt, holder,
    type, rtpi, TransportID text)]."""
    f = PR_DIR.parent / "iet-prin.bin"
    retry_ua(["sg_raw", "-r", "65535", "-o", str(f), dev,
              *"5e 03 00 00 00 00 00 ff ff 00".split()])
    d = f.read_bytes()
    length = int.from_bytes(d[4:8], "big")
    assert length + 8 == len(d), f"ADDITIONAL LENGTH {length}, {len(d)} bytes came"
    out, off = [], 8
    while off < len(d):
        key = int.from_bytes(d[off:off + 8], "big")
        tlen = int.from_bytes(d[off + 20:off + 24], "big")
        tid = d[off + 24:off + 24 + tlen]
        assert tid[0] & 0x0f == 5, tid.hex()            # iSCSI
        out.append((key, bool(d[off + 12] & 2), bool(d[off + 12] & 1), d[off + 13],
                    int.from_bytes(d[off + 18:off + 20], "big"),
                    tid[4:].split(b"\0")[0].decode()))
        off += 24 + tlen
    return out


def tpid_of(dev, key):
    """The TransportID READ FULL STATUS gives the registration of key."""
    [tid] = [t for k, _, _, _, _, t in full_status(dev) if k == key]
    return tid


def drain_ua(dev):
    scsi(dev, "00 00 00 00 00 00")


# SPC-4 5.13.1, Table 63 and SBC-3 Table 13: (read, write) for a registered
# non-holder and for an unregistered nexus, by type.
ACCESS = {
    WE: ((True, False), (True, False)),
    EA: ((False, False), (False, False)),
    WE_RO: ((True, True), (True, False)),
    EA_RO: ((True, True), (False, False)),
    WE_AR: ((True, True), (True, False)),
    EA_AR: ((True, True), (False, False)),
}


def test_each_reservation_type_admits_whom_spc4_says(ietd, backing, nexuses):
    a, b, c = nexuses(lun_target(ietd, backing, "pr-types"))
    persist(a, "--out", "--register", "--param-sark=a")
    persist(b, "--out", "--register", "--param-sark=b")
    assert keys(c) == [0xa, 0xb]
    for t, (registered, unregistered) in ACCESS.items():
        persist(a, "--out", "--reserve", "--param-rk=a", f"--prout-type={t}")
        held = reservation(c)
        # An all registrants reservation has no one key (5.13.10).
        assert held and held[0] == (0 if t in (WE_AR, EA_AR) else 0xa), (t, held)
        assert (can_read(a), can_write(a)) == (True, True), t
        assert (can_read(b), can_write(b)) == registered, t
        assert (can_read(c), can_write(c)) == unregistered, t
        # TEST UNIT READY and PERSISTENT RESERVE IN pass any reservation.
        assert scsi(c, "00 00 00 00 00 00") == 0
        # Another type while it holds one: conflict; release with the
        # wrong type: INVALID RELEASE OF PERSISTENT RESERVATION.
        other = WE if t != WE else EA
        cp = persist(a, "--out", "--reserve", "--param-rk=a", f"--prout-type={other}",
                     check=False)
        assert cp.returncode == CONFLICT_EXIT, (t, cp.stdout, cp.stderr)
        cp = persist(a, "--out", "--release", "--param-rk=a", f"--prout-type={other}",
                     check=False)
        assert cp.returncode == ILLEGAL_EXIT, (t, cp.stdout, cp.stderr)
        persist(a, "--out", "--release", "--param-rk=a", f"--prout-type={t}")
        assert reservation(c) is None
        for d in (a, b, c):
            drain_ua(d)
        assert (can_read(c), can_write(c)) == (True, True), t
    # The unregistered nexus cannot reserve, nor release with a made-up key.
    cp = persist(c, "--out", "--reserve", "--param-rk=c", "--prout-type=1", check=False)
    assert cp.returncode == CONFLICT_EXIT
    persist(a, "--out", "--register", "--param-rk=a", "--param-sark=0")
    persist(b, "--out", "--register-ignore", "--param-sark=0")
    assert keys(c) == []


@pytest.mark.guard
def test_preempt_and_abort_fences_a_registrant_with_writes_in_flight(ietd, backing, nexuses):
    a, b, c = nexuses(lun_target(ietd, backing, "pr-fence"))
    # fence_scsi: each node registers its key, one reserves write
    # exclusive registrants only, the survivor preempts the other.
    persist(a, "--out", "--register", "--param-sark=a1")
    persist(b, "--out", "--register", "--param-sark=b2")
    persist(a, "--out", "--reserve", "--param-rk=a1", "--prout-type=5")
    assert can_write(a) and can_write(b) and not can_write(c)
    # The fenced node's writes in flight end TASK ABORTED (TAS), which its
    # initiator retries at once, not after its 30 s command timer.
    writer = subprocess.Popen(
        ["sh", "-c", f"while dd if=/dev/zero of={a} bs=64k count=64 oflag=direct "
                     "status=none; do :; done"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        persist(b, "--out", "--preempt-abort", "--param-rk=b2", "--param-sark=a1",
                "--prout-type=5")
        assert keys(c) == [0xb2]
        assert reservation(c) == (0xb2, "Write Exclusive, registrants only")
        # The fenced node's writes fail with RESERVATION CONFLICT.
        writer.wait(timeout=20)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert not can_write(a)
    assert can_write(b)
    # READ FULL STATUS names the holder's initiator port.
    [(key, all_tg_pt, holder, t, rtpi, tid)] = full_status(c)
    assert (key, all_tg_pt, holder, t, rtpi) == (0xb2, False, True, 5, 1)
    assert tid.startswith(ini.initiator_name() + ",i,0x") and len(tid.split(",i,0x")[1]) == 12
    assert "Key=0xb2" in persist(c, "--in", "--read-full-status").stdout
    persist(b, "--out", "--clear", "--param-rk=b2")
    assert keys(c) == [] and reservation(c) is None


def fence_scsi(dev, action, key):
    return run(["fence_scsi", f"--devices={dev}", f"--key={key}", f"--action={action}"],
               check=False, timeout=120)


def test_fence_scsi_fences_one_of_two_nodes(ietd, backing, nexuses):
    """Pacemaker's fence agent (fence-agents): both nodes unfence, which
    registers each one's key and has the first reserve write exclusive
    registrants only; the survivor fences the other, whose writes then get
    RESERVATION CONFLICT while its own go on. The agent keeps "this node's
    key" in /run/cluster.key: each call here speaks for the node it names."""
    a, b, c = nexuses(lun_target(ietd, backing, "pr-fence-scsi"))
    try:
        for dev, key in ((a, "a1"), (b, "b2")):
            drain_ua(dev)
            cp = fence_scsi(dev, "on", key)
            assert cp.returncode == 0, cp.stdout + cp.stderr
        assert keys(c) == [0xa1, 0xb2]
        assert reservation(c) == (0xa1, "Write Exclusive, registrants only")
        assert can_write(a) and can_write(b) and not can_write(c)

        cp = fence_scsi(b, "off", "a1")            # from b, whose key is b2
        assert cp.returncode == 0, cp.stdout + cp.stderr
        assert keys(c) == [0xb2]
        assert reservation(c) == (0xb2, "Write Exclusive, registrants only")
        before = stats(1, "lun=0")
        assert not can_write(a) and can_read(a) and can_write(b)
        # Counted: the one refused write as a conflict, and every status
        # but GOOD as an error (a's first command meets the unit attention
        # of its preempted registration; 7.x's sd asks at an open for
        # writing for a mode page IET has not).
        after = stats(1, "lun=0")
        d = {k: after[k] - before[k] for k in ("reservation_conflicts", "busy", "errors")}
        cc = sum(after["check_conditions"].values()) - sum(before["check_conditions"].values())
        assert d["reservation_conflicts"] == 1
        assert d["errors"] == d["reservation_conflicts"] + d["busy"] + cc
        # The agent's monitor: a is off (2), b on (0).
        assert fence_scsi(c, "status", "a1").returncode == 2
        assert fence_scsi(c, "status", "b2").returncode == 0
    finally:
        for f in ("/run/cluster.key", "/run/cluster.dev"):
            Path(f).unlink(missing_ok=True)


def test_a_fenced_node_cannot_write_the_fenced_lun_through_an_xcopy_to_another(
        ietd, backing, nexuses, tmp_path):
    """Node B fences node A off LUN 1 as fence_scsi does (both register,
    B reserves Write Exclusive, Registrants Only and preempts A's key; the
    agent itself and PREEMPT AND ABORT are tested above); A's EXTENDED COPY addressed to LUN 0,
    which no reservation guards, with LUN 1 as its destination gets
    RESERVATION CONFLICT and LUN 1 keeps its data: the copy manager checks
    the reservations of every LUN it writes, not only of the LUN the command
    was sent to. Reading LUN 1 into LUN 0 is still allowed."""
    target = iqn("pr-fence-xcopy")
    ietd(Target(target, [Lun(0, str(backing("x0", 16 * MiB))),
                         Lun(1, str(backing("x1", 16 * MiB)))]))
    a, _, b = nexuses(target)
    by_iface = ini.sessions_by_iface(target)
    a1, b1 = (ini.disk_of(by_iface[IFACES[i]], 1) for i in (0, 2))
    n = MiB // 512
    data, kept = bytes(range(256)) * (MiB // 256), b"\x5a" * MiB
    pwrite_direct(a, 0, data)
    pwrite_direct(b1, 0, kept)
    for dev, key in ((a1, "a1"), (b1, "b2")):
        drain_ua(dev)
        persist(dev, "--out", "--register", f"--param-sark={key}")
    persist(b1, "--out", "--reserve", "--param-rk=b2", f"--prout-type={WE_RO}")
    # B fences A: its key goes, the reservation stays B's. (PREEMPT: with
    # no command of A in flight, what PREEMPT AND ABORT adds is the task
    # management test_preempt_and_abort_fences_... is about.)
    persist(b1, "--out", "--preempt", "--param-rk=b2", "--param-sark=a1",
            f"--prout-type={WE_RO}")
    assert keys(b1) == [0xb2]
    assert not can_write(a1)
    drain_ua(a)

    lists = [cscd(naa_of(a)), cscd(naa_of(a1))]
    rc, out = raw_xcopy(a, lists, [segment(0, 1, n, 0, 0)], tmp_path)
    assert rc == CONFLICT_EXIT, f"the fenced node's copy into LUN 1: {rc} {out}"
    assert pread_direct(b1, 0, MiB) == kept, "the fenced LUN was written"
    # Write exclusive lets A read LUN 1, so a copy out of it goes on.
    rc, out = raw_xcopy(a, lists, [segment(1, 0, n, 0, 8192)], tmp_path)
    assert rc == 0, f"a copy out of the fenced LUN: {rc} {out}"
    assert pread_direct(a, 8192 * 512, MiB) == kept


def test_register_and_move_hands_the_reservation_over(ietd, backing, nexuses):
    a, b, c = nexuses(lun_target(ietd, backing, "pr-move"))
    persist(b, "--out", "--register", "--param-sark=1b")
    tid = tpid_of(c, 0x1b)          # b's initiator port: name and ISID
    persist(b, "--out", "--register", "--param-rk=1b", "--param-sark=0")
    persist(a, "--out", "--register", "--param-sark=a")
    persist(a, "--out", "--reserve", "--param-rk=a", "--prout-type=1")
    assert tpid_of(c, 0xa) != tid
    persist(a, "--out", "--register-move", "--param-rk=a", "--param-sark=b",
            "--prout-type=1", "--relative-target-port=1", f"--transport-id={tid}")
    assert reservation(c) == (0xb, "Write Exclusive")
    assert can_write(b) and not can_write(a)
    assert sorted(k for k, *_ in full_status(c)) == [0xa, 0xb]
    # To itself: INVALID FIELD IN PARAMETER LIST; by a non-holder: conflict.
    cp = persist(b, "--out", "--register-move", "--param-rk=b", "--param-sark=c",
                 "--prout-type=1", "--relative-target-port=1", f"--transport-id={tid}",
                 check=False)
    assert cp.returncode == ILLEGAL_EXIT, cp.stdout + cp.stderr
    cp = persist(a, "--out", "--register-move", "--param-rk=a", "--param-sark=c",
                 "--prout-type=1", "--relative-target-port=1", f"--transport-id={tid}",
                 check=False)
    assert cp.returncode == CONFLICT_EXIT, cp.stdout + cp.stderr
    persist(b, "--out", "--clear", "--param-rk=b")


def test_spc2_reserve_ends_with_its_session(ietd, backing, nexuses):
    a, b, c = nexuses(lun_target(ietd, backing, "pr-spc2"))
    assert scsi(a, "16 00 00 00 00 00") == 0            # RESERVE(6)
    assert scsi(a, "16 00 00 00 00 00") == 0            # again: GOOD
    assert not can_write(b) and not can_read(b)
    assert scsi(b, "16 00 00 00 00 00") == CONFLICT_EXIT
    assert scsi(b, "17 00 00 00 00 00") == 0            # RELEASE: does nothing
    assert not can_write(b)
    assert scsi(b, "12 00 00 00 24 00") == 0            # INQUIRY passes
    # The holder's session ends: so does its reservation (nexus loss).
    ini.iscsiadm("-m", "node", "-T", iqn("pr-spc2"), "-I", IFACES[0], "--logout")
    assert can_write(b) and can_read(c)
    # With registrations present, RESERVE conflicts (SPC-4 5.13.3).
    persist(b, "--out", "--register", "--param-sark=b")
    assert scsi(c, "16 00 00 00 00 00") == CONFLICT_EXIT
    persist(b, "--out", "--register", "--param-rk=b", "--param-sark=0")


def test_ietadm_shows_reservations_and_ends_a_dead_nodes(ietd, backing, nexuses):
    a, b, c = nexuses(lun_target(ietd, backing, "pr-admin"))
    persist(a, "--out", "--register", "--param-sark=a1")
    persist(b, "--out", "--register", "--param-sark=b2")
    persist(a, "--out", "--reserve", "--param-rk=a1", "--prout-type=1")
    assert scsi(b, "16 00 00 00 00 00") == CONFLICT_EXIT     # SPC-2 vs PR
    shown = ietadm("--op", "show", "--tid=1", "--lun=0").stdout
    assert "Reservation=Write Exclusive\n" in shown, shown
    [holder] = [ln for ln in shown.splitlines() if ln.endswith(" holder")]
    assert holder.startswith("Registration=0x00000000000000a1 " + ini.initiator_name() + ",i,0x")
    assert holder.split()[1] == tpid_of(c, 0xa1)
    assert "Registration=0x00000000000000b2 " in shown
    data = json.loads(ietadm("--op", "show", "--tid=1", "--lun=0", "--json").stdout)
    assert data["reservations"]["type"] == "Write Exclusive"
    assert [r["key"] for r in data["reservations"]["registrations"]] == \
        ["0x00000000000000a1", "0x00000000000000b2"]

    # The holder's node dies: its session goes, the reservation stays.
    log = kmsg.KernelLog()
    ini.iscsiadm("-m", "node", "-T", iqn("pr-admin"), "-I", IFACES[0], "--logout")
    assert not can_write(b)
    ietadm("--op", "update", "--tid=1", "--lun=0", "--params", "Reservations=release")
    assert reservation(c) is None and keys(c) == [0xa1, 0xb2]
    drain_ua(b)
    assert can_write(b)
    ietadm("--op", "update", "--tid=1", "--lun=0", "--params", "Reservations=clear")
    assert keys(c) == []
    lines = log.new_lines()
    log.close()
    assert any("the administrator ended the persistent reservation" in ln for ln in lines), lines
    assert any("the administrator ended every registration" in ln for ln in lines), lines
    # A LUN is not otherwise updated; one that is not there is named.
    cp = ietadm("--op", "update", "--tid=1", "--lun=0", "--params", "Path=/dev/null",
                check=False)
    assert cp.returncode != 0 and "Reservations=release" in cp.stderr, cp.stderr
    cp = ietadm("--op", "update", "--tid=1", "--lun=7", "--params", "Reservations=clear",
                check=False)
    assert cp.returncode != 0 and "no such LUN" in cp.stderr, cp.stderr


def records():
    return sorted(p.name for p in PR_DIR.glob("*.[ab]"))


def test_aptpl_survives_ietd_restart_and_module_reload_and_a_torn_record(
        kmod, ietd, backing, nexuses):
    for p in PR_DIR.glob("*"):
        p.unlink()
    name = iqn("pr-aptpl")
    image = str(backing("pr-aptpl", 16 * MiB))
    target = Target(name, [Lun(0, image)])
    d = ietd(target)
    a, b, c = nexuses(name)
    persist(a, "--out", "--register", "--param-sark=a", "--param-aptpl")
    persist(a, "--out", "--reserve", "--param-rk=a", "--prout-type=3")
    # Two records: the registration, then with the reservation.
    assert len(records()) == 2, records()
    out = persist(c, "--in", "--report-capabilities").stdout
    assert "Persist Through Power Loss Active(PTPL_A): 1" in out, out

    # ietd goes and comes back: the kernel kept it all by itself.
    d.proc.kill()
    d.proc.wait(10)
    d.proc = None
    wait_until(lambda: not listening(3260), 10, "ietd's port to close")
    d = ietd(target)
    assert keys(c) == [0xa] and reservation(c) == (0xa, "Exclusive Access")

    def reload():
        ini.logout_all(timeout=300)
        d.stop()
        kmod.unload()
        kmod.load()
        new = ietd(target)
        disks = nexuses(name)
        return new, disks

    # open-iscsi's sessions come back with ISIDs of their own: the
    # registration, kept for the initiator port that made it, gives none
    # of them access; READ FULL STATUS still names that port.
    port = tpid_of(c, 0xa)
    d, [a, b, c] = reload()
    assert keys(c) == [0xa] and reservation(c) == (0xa, "Exclusive Access")
    assert tpid_of(c, 0xa) == port
    assert not can_write(a) and not can_read(b)

    # A torn newest record: the one before it (no reservation) is the state.
    newest = max(PR_DIR.glob("*.[ab]"), key=lambda p: p.stat().st_mtime)
    data = newest.read_bytes()
    newest.write_bytes(data[:len(data) // 2])
    d, [a, b, c] = reload()
    assert keys(c) == [0xa] and reservation(c) is None
    assert can_write(a) and can_write(b)

    # APTPL=0 from now on: nothing is kept through the next reload.
    persist(a, "--out", "--register", "--param-sark=c", "--param-aptpl")
    persist(a, "--out", "--register", "--param-rk=c", "--param-sark=c")
    out = persist(c, "--in", "--report-capabilities").stdout
    assert "Persist Through Power Loss Active(PTPL_A): 0" in out, out
    d, [a, b, c] = reload()
    assert keys(c) == []


def test_aptpl_records_are_each_luns_own_though_they_share_a_scsi_id(
        kmod, ietd, backing, initiator):
    """Two LUNs of one ScsiId (the same disk through two targets, or a
    volume added at a LUN number another had: ietd derives the ScsiId from
    the number) keep their registrations apart through a reload, and a
    volume added where another was registered starts with none."""
    for p in PR_DIR.glob("*"):
        p.unlink()
    name = iqn("pr-aptpl-ids")
    images = [str(backing(f"pr-ids-{i}", 16 * MiB)) for i in range(3)]
    target = Target(name, [Lun(0, images[0], params={"ScsiId": "shared"}),
                           Lun(1, images[1], params={"ScsiId": "shared"})])
    daemon = [ietd(target)]
    s = initiator.login(name)

    def reload(target, between=lambda: None):
        """Module reloaded under a new ietd (between() done while it is
        out); the new session."""
        ini.logout_all(timeout=300)
        daemon[0].stop()
        kmod.unload()
        between()
        kmod.load()
        daemon[0] = ietd(target)
        return initiator.login(name)

    persist(s.disk(0), "--out", "--register", "--param-sark=a", "--param-aptpl")
    persist(s.disk(1), "--out", "--register", "--param-sark=b", "--param-aptpl")
    persist(s.disk(1), "--out", "--register", "--param-rk=b", "--param-sark=c",
            "--param-aptpl")
    assert len({p.name.split(".")[0] for p in PR_DIR.glob("*.[ab]")}) == 2, records()

    s = reload(target)
    assert (keys(s.disk(0)), keys(s.disk(1))) == ([0xa], [0xc])

    # Another volume at LUN 1 (as Proxmox VE deletes and adds): the same
    # identity, none of its registrations; the volume back where it was:
    # its own again. The initiator's disk stays, and meets the UAs.
    disk = s.disk(1)
    for path, want in ((images[2], []), (images[1], [0xc])):
        ietadm("--op", "delete", f"--tid={name}", "--lun=1")
        ietadm("--op", "new", f"--tid={name}", "--lun=1",
               f"--params=Path={path},ScsiId=shared")
        assert keys(disk) == want, path

    # An older module's records (NAA.a, NAA.b) are read where a LUN has
    # none of its own yet, and its next record is its own.
    one = Target(name, [Lun(0, images[0], params={"ScsiId": "shared"})])

    def unlink(pattern):
        for p in PR_DIR.glob(pattern):
            p.unlink()

    def rename_to_old():
        for p in PR_DIR.glob("*.[ab]"):
            naa, rest = p.name.split("-")
            p.rename(PR_DIR / f"{naa}.{rest.split('.')[1]}")

    s = reload(one, lambda: unlink("*.[ab]"))
    assert keys(s.disk(0)) == []
    persist(s.disk(0), "--out", "--register", "--param-sark=d", "--param-aptpl")
    s = reload(one, rename_to_old)
    assert keys(s.disk(0)) == [0xd]
    # (The registration is the old session's initiator port, not this one's.)
    persist(s.disk(0), "--out", "--register-ignore", "--param-sark=e", "--param-aptpl")
    assert keys(s.disk(0)) == [0xd, 0xe]
    assert any("-" in p.name for p in PR_DIR.glob("*.[ab]")), records()
    # The older records are emptied (a header, no registration): a LUN that
    # again has none of its own (its Path spelt otherwise) gets nothing back.
    old = [p for p in PR_DIR.glob("*.[ab]") if "-" not in p.name]
    assert len(old) == 2 and all(p.stat().st_size == 24 for p in old), records()
    s = reload(one, lambda: unlink("*-*.[ab]"))
    assert keys(s.disk(0)) == []


def pr_out(dev, sa, plist, tp=0, length=None):
    """PERSISTENT RESERVE OUT of the bytes plist through sg_raw; its exit
    status and output."""
    n = len(plist) if length is None else length
    cdb = [0x5f, sa, tp, 0, 0] + list(n.to_bytes(4, "big")) + [0]
    f = PR_DIR.parent / "iet-prout.bin"
    f.write_bytes(plist)
    cp = run(["sg_raw", "-s", str(len(plist)), "-i", str(f), dev,
              *(f"{x:02x}" for x in cdb)], check=False, timeout=60)
    return cp.returncode, cp.stdout + cp.stderr


def basic(rk=0, sark=0, flags=0):
    return rk.to_bytes(8, "big") + sark.to_bytes(8, "big") + bytes(4) + bytes([flags, 0, 0, 0])


def tpid(name):
    body = name.encode() + b"\0"
    body += bytes(-len(body) % 4)
    return bytes([0x45, 0]) + len(body).to_bytes(2, "big") + body


def test_hostile_parameter_lists_get_their_sense_and_change_nothing(ietd, backing, nexuses):
    a, _, c = nexuses(lun_target(ietd, backing, "pr-hostile"))
    cases = {
        "short list": (0, basic(sark=1)[:20], "Parameter list length error"),
        "long list": (0, basic(sark=1) + bytes(4), "Parameter list length error"),
        "SPEC_I_PT on RESERVE": (1, basic(rk=1, flags=0x08), "Invalid field in parameter list"),
        "TransportIDs past the list": (
            0, basic(sark=1, flags=0x08) + (400).to_bytes(4, "big") + tpid("iqn.x"),
            "Parameter list length error"),
        "a TransportID of another protocol": (
            0, basic(sark=1, flags=0x08) + (24).to_bytes(4, "big")
            + bytes([0x01, 0, 0, 20]) + bytes(20), "Invalid field in parameter list"),
        "a TransportID without its NUL": (
            0, basic(sark=1, flags=0x08) + (24).to_bytes(4, "big")
            + bytes([0x05, 0, 0, 20]) + b"i" * 20, "Invalid field in parameter list"),
        "an ISID that is no number": (
            0, basic(sark=1, flags=0x08) + (28).to_bytes(4, "big")
            + tpid("iqn.a,i,0xzz3d00000001"), "Invalid field in parameter list"),
        "service action 9": (9, basic(sark=1), "Invalid field in cdb"),
    }
    for what, (sa, plist, sense) in cases.items():
        rc, out = pr_out(a, sa, plist, tp=1 if sa in (1, 2, 4, 5) else 0)
        assert rc == ILLEGAL_EXIT and sense.lower() in out.lower(), f"{what}: {rc}\n{out}"
        assert keys(c) == [], what
    # A bad type, and a scope other than LU_SCOPE.
    rc, out = pr_out(a, 1, basic(rk=1), tp=0x02)
    assert rc == ILLEGAL_EXIT and "invalid field in cdb" in out.lower(), out
    rc, out = pr_out(a, 1, basic(rk=1), tp=0x21)
    assert rc == ILLEGAL_EXIT and "invalid field in cdb" in out.lower(), out
    # 129 registrations asked at once: more than a LUN keeps.
    ids = b"".join(tpid(f"iqn.2024-01.com.example:flood{i},i,0x00023d{i:06x}")
                   for i in range(128))
    rc, out = pr_out(a, 0, basic(sark=7, flags=0x08) + len(ids).to_bytes(4, "big") + ids)
    assert rc == ILLEGAL_EXIT and "insufficient registration resources" in out.lower(), out
    assert keys(c) == []
    # 127 more fit, and READ FULL STATUS lists all 128.
    ids = b"".join(tpid(f"iqn.2024-01.com.example:flood{i},i,0x00023d{i:06x}")
                   for i in range(127))
    rc, out = pr_out(a, 0, basic(sark=7, flags=0x08) + len(ids).to_bytes(4, "big") + ids)
    assert rc == 0, out
    assert keys(c) == [7] * 128
    status = full_status(c)
    assert len(status) == 128 and {k for k, *_ in status} == {7}
    assert len({t for *_, t in status}) == 128
    persist(a, "--out", "--clear", "--param-rk=7")


# Raw PDUs (vmlib.rawiscsi): parameter lists sg_raw would not send as such,
# with lengths that wrap "offset + length > list length" in 32 bits.

ILLEGAL_REQUEST = 0x05
PARAMETER_LIST_LENGTH_ERROR = (0x1a, 0x00)
INVALID_FIELD_IN_PARAMETER_LIST = (0x26, 0x00)


def raw_login(target):
    """A raw-PDU session to LUN 0 of target (an I_T nexus of its own, its
    unit attentions taken) and the TransportID READ FULL STATUS names it by."""
    c = ri.Connection(target, timeout=30).connect()
    c.login()
    return c, f"{c.initiator},i,0x{c.isid.hex()}"


def raw_pr_out(c, sa, plist, tp=0):
    """PERSISTENT RESERVE OUT with plist, all of it, as the parameter list."""
    cdb = bytes([0x5f, sa, tp, 0, 0]) + len(plist).to_bytes(4, "big") + bytes(1)
    return c.execute(cdb, lun=0, data=plist, write=True, edtl=len(plist))


def raw_full_status(c):
    """READ FULL STATUS through c: [(key, holder, TransportID text)]."""
    r = c.execute(bytes([0x5e, 0x03, 0, 0, 0, 0, 0, 0xff, 0xff, 0]), lun=0,
                  read=True, edtl=0xffff)
    assert r.status == ri.GOOD, f"READ FULL STATUS: {r.status:#x} {r.sense.hex()}"
    d = r.data
    assert int.from_bytes(d[4:8], "big") + 8 == len(d), d[:8].hex()
    out, off = [], 8
    while off < len(d):
        tlen = int.from_bytes(d[off + 20:off + 24], "big")
        tid = d[off + 24:off + 24 + tlen]
        out.append((int.from_bytes(d[off:off + 8], "big"), bool(d[off + 12] & 1),
                    tid[4:].split(b"\0")[0].decode()))
        off += 24 + tlen
    return out


def move_list(rk, sark, tpids_len, tpid_bytes, rtpi=1):
    """A REGISTER AND MOVE parameter list (SPC-4 6.16.4) with a TRANSPORTID
    PARAMETER DATA LENGTH of tpids_len, whatever tpid_bytes hold."""
    return (rk.to_bytes(8, "big") + sark.to_bytes(8, "big") + bytes(2)
            + rtpi.to_bytes(2, "big") + tpids_len.to_bytes(4, "big") + tpid_bytes)


# Lengths near 4 GiB, each tried in one session (one setup, under KASAN too).
WRAPPING_LENGTHS = [0xFFFFFFF0, 0xFFFFFFE8, 0xFFFFFFEC, 0xFFFFFFFF]


@pytest.mark.guard
def test_register_and_move_with_a_wrapping_transportid_length_moves_nothing(ietd, backing):
    """REGISTER AND MOVE whose TRANSPORTID PARAMETER DATA LENGTH is near
    4 GiB (24 plus it wraps to less than the list) is refused, whether the
    TransportID in the list is a whole one or one that claims 64 KiB past
    its end: the target reads nothing past the list, so no name from its
    memory becomes a registration that READ FULL STATUS would hand out, and
    the reservation stays where it was."""
    c, me = raw_login(lun_target(ietd, backing, "pr-move-wrap"))
    r = raw_pr_out(c, 0, basic(sark=0xA))                   # REGISTER
    assert r.status == ri.GOOD, r.sense.hex()
    r = raw_pr_out(c, 1, basic(rk=0xA), tp=WE)              # RESERVE
    assert r.status == ri.GOOD, r.sense.hex()
    for tpids_len in WRAPPING_LENGTHS:
        for kind, tid in [("a whole TransportID", tpid(OTHER_HOST + ",i,0x00023d000001")),
                          ("a TransportID claiming 64 KiB", bytes([0x45, 0, 0xff, 0xfc])
                           + OTHER_HOST.encode())]:
            what = f"{kind}, length {tpids_len:#x}"
            r = raw_pr_out(c, 7, move_list(0xA, 0xB, tpids_len, tid))
            assert r.status == ri.CHECK_CONDITION, f"{what}: status {r.status:#x}"
            key, *asc = r.sense_triple
            assert key == ILLEGAL_REQUEST and tuple(asc) in (
                PARAMETER_LIST_LENGTH_ERROR, INVALID_FIELD_IN_PARAMETER_LIST), \
                f"{what}: sense {r.sense.hex()}"
            assert raw_full_status(c) == [(0xA, True, me)], what
    r = raw_pr_out(c, 3, basic(rk=0xA))                     # CLEAR
    assert r.status == ri.GOOD, r.sense.hex()
    c.logout()
    c.close()


@pytest.mark.guard
def test_register_with_spec_i_pt_and_no_transportid_length_registers_no_one(ietd, backing):
    """REGISTER with SPEC_I_PT and a list of fewer than the 28 bytes that
    hold its TRANSPORTID PARAMETER DATA LENGTH gets PARAMETER LIST LENGTH
    ERROR: the target neither takes TransportIDs from past the list's end
    (27 bytes once let "length - 28" wrap) nor registers anyone. Each
    length in one session."""
    c, _ = raw_login(lun_target(ietd, backing, "pr-spec-i-pt-short"))
    for length in (24, 25, 26, 27):
        plist = (basic(sark=0x7, flags=0x08) + b"\xff" * 4)[:length]
        r = raw_pr_out(c, 0, plist)
        assert r.status == ri.CHECK_CONDITION, f"{length} bytes: status {r.status:#x}"
        key, *asc = r.sense_triple
        assert key == ILLEGAL_REQUEST and tuple(asc) == PARAMETER_LIST_LENGTH_ERROR, \
            f"{length} bytes: sense {r.sense.hex()}"
        assert raw_full_status(c) == [], f"{length} bytes"
    c.logout()
    c.close()


@pytest.mark.guard
def test_one_initiator_cannot_take_every_registration(ietd, backing):
    """REGISTER with SPEC_I_PT naming 40 made-up ports of the initiator's own
    name is refused whole (INSUFFICIENT REGISTRATION RESOURCES: an
    initiator name has at most 32 of the LUN's 128 registrations) and
    registers no one; 31 and itself fit; another initiator still registers."""
    target = lun_target(ietd, backing, "pr-per-name")
    c, _ = raw_login(target)
    name = c.initiator

    def spec_i_pt(count, sark):
        ids = b"".join(tpid(f"{name},i,0x{0x400000000000 + k:012x}") for k in range(count))
        return basic(sark=sark, flags=0x08) + len(ids).to_bytes(4, "big") + ids

    r = raw_pr_out(c, 0, spec_i_pt(40, 0xA))
    assert r.status == ri.CHECK_CONDITION, f"status {r.status:#x}"
    assert r.sense_triple == (ILLEGAL_REQUEST, 0x55, 0x04), r.sense.hex()
    assert raw_full_status(c) == []
    r = raw_pr_out(c, 0, spec_i_pt(31, 0xA))
    assert r.status == ri.GOOD, r.sense.hex()
    assert len(raw_full_status(c)) == 32
    other = ri.Connection(target, initiator=OTHER_HOST, timeout=30).connect()
    other.login()
    r = raw_pr_out(other, 0, basic(sark=0xB))
    assert r.status == ri.GOOD, r.sense.hex()
    assert len(raw_full_status(c)) == 33
    for conn in (other, c):
        conn.logout()
        conn.close()
