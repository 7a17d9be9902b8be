# SPDX-License-Identifier: GPL-2.0
"""How much memory the guest has to give, for tests that hold the target to
a memory bound, and where it went when a bound is missed.

MemAvailable alone misleads: pages freed go first to the freeing CPU's
per-CPU list and stay there, counted neither free nor used, until that CPU
allocates again. Each list may hold up to the zone's low watermark split
over the CPUs (27 MiB per CPU in a 2 GiB guest with THP), so a burst of
frees on a CPU that then idles looked like 26 to 33 MiB never given back.
available_kib() adds those pages back."""

from pathlib import Path


def meminfo():
    """/proc/meminfo as {field: KiB}."""
    out = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, value = line.split(":", 1)
        out[name] = int(value.split()[0])
    return out


def per_cpu_free_kib():
    """Free pages held in the per-CPU lists of every zone, in KiB."""
    pages = 0
    for line in Path("/proc/zoneinfo").read_text().splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "count:":
            pages += int(words[1])
    return pages * 4


PER_CPU = "per-CPU free lists"


def available_kib(info=None):
    """MemAvailable with the per-CPU lists' free pages counted in (those
    of a snapshot()'s meminfo, else read now)."""
    info = info or meminfo()
    per_cpu = info[PER_CPU] if PER_CPU in info else per_cpu_free_kib()
    return info["MemAvailable"] + per_cpu


def tcp_socket_kib():
    """What TCP's sockets hold now, in KiB: the pages charged to them (the
    mem figure of /proc/net/sockstat's TCP line), queued data and its skb
    overhead on both ends of every connection. The kernel bounds it
    (net.ipv4.tcp_mem, tcp_rmem, tcp_wmem), whatever the sockets' owners do."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        words = line.split()
        if words and words[0] == "TCP:":
            return int(words[words.index("mem") + 1]) * 4
    raise RuntimeError("/proc/net/sockstat has no TCP line")


def slab_kib():
    """{cache: KiB in its slabs} from /proc/slabinfo."""
    out = {}
    for line in Path("/proc/slabinfo").read_text().splitlines()[2:]:
        w = line.split()
        # name active_objs num_objs objsize objperslab pagesperslab
        #   : tunables ... : slabdata active_slabs num_slabs sharedavail
        out[w[0]] = int(w[14]) * int(w[5]) * 4
    return out


def vmstat_kib():
    """The page counts (nr_*) of /proc/vmstat, in KiB."""
    out = {}
    for line in Path("/proc/vmstat").read_text().splitlines():
        name, value = line.split()
        if name.startswith("nr_"):
            out[name] = int(value) * 4
    return out


def snapshot():
    m = meminfo()
    m[PER_CPU] = per_cpu_free_kib()
    return m, slab_kib(), vmstat_kib()


def moved(old, new, over_kib):
    """[(field, KiB it moved by)] of two {field: KiB}, for the fields that
    moved by more than over_kib, the most first."""
    deltas = ((k, new.get(k, 0) - old.get(k, 0)) for k in old.keys() | new.keys())
    return sorted(((k, d) for k, d in deltas if abs(d) > over_kib), key=lambda t: -abs(t[1]))


def where_it_went(before, after, over_kib=1023):
    """What moved by more than over_kib between two snapshot()s, and the
    kernel's socket memory: the explanation of a missed bound."""
    lines = []
    for label, old, new in zip(("meminfo", "slab", "vmstat"), before, after):
        lines += [f"  {label} {k}: {d:+d} KiB" for k, d in moved(old, new, over_kib)]
    sockstat = Path("/proc/net/sockstat").read_text().strip().splitlines()
    return "\n".join(lines + ["  " + s for s in sockstat])
