# SPDX-License-Identifier: GPL-2.0
"""Big writes at depth through one session, as a VMware or Proxmox host
sends them: four fileio LUNs, fio writing 1 MiB and then 4 MiB blocks at
queue depth 32 on each at once, with verification.

That is 128 MiB and more of writes in flight, twice what the target lets
one connection pin (IET_CONN_PIN_MAX, 64 MiB), however long each job runs:
64 MiB a LUN, 32 MiB on the debug kernel (KASAN makes each byte slow;
32 MiB still puts each job's whole depth in flight). Writes past that wait for
memory; none may wait for ever (each admitted write holds the memory to
finish), none may be on two lists at once, and the initiator must see no
timeout, no error recovery and no I/O error."""

from pathlib import Path

from vmlib import fio, kmemleak, kmsg
from vmlib.target import Lun, Target, iqn
from vmlib.util import MiB

# Not in the debug kernel's guard suite: there 256 MiB of verified writes
# took five minutes of CI, and the raw-PDU hostile test of writes past
# the pin limit (test_hostile.py) covers the same paths under KASAN.

LUNS = 4
SIZE = (32 if kmemleak.available() else 64) * MiB
# What the initiator logs when the target stops answering (as in
# test_dirty_throttle.py): a command timed out, recovery reset the session.
TROUBLE = ("detected conn error", "I/O error", "ping timeout", "timing out command",
           "session recovery timed out", "offlined", "abort", "INFO: task")

def whole_commands(disk):
    """A 4 MiB write is one SCSI command, as from an ESXi host: the block
    layer may send requests that large (the target's Block Limits VPD says
    8 MiB; a kernel that kept its default max_sectors_kb is raised).
    Returns the request size in KiB."""
    q = Path("/sys/block") / Path(disk).name / "queue" / "max_sectors_kb"
    if int(q.read_text()) < 4096:
        q.write_text("4096\n")
    return int(q.read_text())

def job_file(disks):
    g = ["[global]", "ioengine=libaio", "direct=1", "rw=write", "iodepth=32",
         f"size={SIZE}", "verify=crc32c", "verify_fatal=1", "do_verify=1"]
    jobs = []
    for bs in ("1m", "4m"):
        for i, d in enumerate(disks):
            jobs += ["", f"[write-{bs}-lun{i}]", f"filename={d}", f"bs={bs}"]
            if i == 0:
                jobs.append("stonewall")
    return "\n".join(g + jobs) + "\n"

def test_big_writes_at_depth_on_four_luns_of_one_session_verify_without_recovery(
        request, ietd, backing, initiator):
    name = iqn("big-writes")
    ietd(Target(name, [Lun(i, str(backing(f"lun{i}", SIZE))) for i in range(LUNS)]))
    login = initiator.login(name)
    disks = [login.disk(i) for i in range(LUNS)]
    kib = [whole_commands(d) for d in disks]
    assert min(kib) >= 4096, f"requests of at most {kib} KiB: no 4 MiB writes"
    log = kmsg.KernelLog()
    try:
        result = fio.run_fio(job_file(disks), request.node.name, timeout=600)
        trouble = [ln for ln in log.new_lines() if any(t in ln for t in TROUBLE)]
    finally:
        log.close()
    assert trouble == [], f"the initiator had trouble with the target: {trouble[:10]}"
    assert result.rc == 0, f"fio exited with {result.rc}:\n{result.stderr}"
    assert result.errors() == {}, f"fio jobs reported errors: {result.errors()}"
    for j in result.jobs:
        assert j["write"]["io_bytes"] == SIZE, f"{j['jobname']} wrote {j['write']['io_bytes']}"
        assert j["read"]["io_bytes"] == SIZE, f"{j['jobname']} verified {j['read']['io_bytes']}"
