# SPDX-License-Identifier: GPL-2.0
"""Where a job's instructions go, by kernel function: the counts of the
tcgprof QEMU plugin (tcgprof.c: every guest instruction a window executed,
by the start of its translated block) named through the guest's
/proc/kallsyms. Under TCG an instruction is what the host spends time on,
so this is the profile perf cannot take in this guest (no PMU, and its
software clock never samples kernel code)."""

import bisect
import re
from collections import Counter

KALLSYMS = re.compile(r"^([0-9a-f]+) [tTwW] (\S+)(?:\s+\[(\S+)\])?")


def symbols(kallsyms):
    """Sorted [(address, name, module)] of the text symbols of a
    /proc/kallsyms read with kptr_restrict=0 (the vmlinux's module is
    'vmlinux')."""
    out = []
    for ln in kallsyms.splitlines():
        m = KALLSYMS.match(ln)
        if m and int(m[1], 16):
            out.append((int(m[1], 16), m[2], m[3] or "vmlinux"))
    out.sort()
    return out


def attribute(profile, syms):
    """(Counter{(module, function): instructions}, user instructions) of a
    tcgprof profile: a block is its start's function."""
    addrs = [s[0] for s in syms]
    funcs = Counter()
    user = 0
    for ln in profile.splitlines():
        f = ln.split()
        if len(f) != 2:
            continue
        addr, n = int(f[0], 16), int(f[1])
        if addr == 0:
            user += n
            continue
        i = bisect.bisect_right(addrs, addr) - 1
        key = (syms[i][2], syms[i][1]) if i >= 0 else ("?", hex(addr))
        funcs[key] += n
    return funcs, user


def report(profile, kallsyms, commands, top=60, module_top=15):
    """A text report: instructions per command (commands: those the disks
    completed in the window; 0 if unknown) by user and kernel, by kernel
    module, the top functions, and each module's own top functions."""
    funcs, user = attribute(profile, symbols(kallsyms))
    kernel = sum(funcs.values())
    total = kernel + user
    per = (lambda n: f"{n / commands:10.0f}") if commands else (lambda n: f"{'-':>10}")
    lines = [f"instructions in the window: {total:,} ({commands:,} commands)",
             f"{'per command':>10}  {'share':>6}  where", ""]

    def row(n, what):
        lines.append(f"{per(n)}  {100 * n / total if total else 0:5.1f}%  {what}")

    row(total, "all")
    row(user, "user space (fio, ietd, ...)")
    row(kernel, "kernel")
    lines += ["", "by module:"]
    mods = Counter()
    for (mod, _), n in funcs.items():
        mods[mod] += n
    for mod, n in mods.most_common():
        if n * 1000 < total:
            break
        row(n, mod)
    lines += ["", "by function:"]
    for (mod, fn), n in funcs.most_common(top):
        row(n, fn if mod == "vmlinux" else f"{fn} [{mod}]")
    for mod, n in mods.most_common():
        if mod == "vmlinux" or n * 100 < total:
            continue
        lines += ["", f"in {mod}:"]
        for fn, n in Counter({f: v for (m, f), v in funcs.items() if m == mod}).most_common(module_top):
            row(n, fn)
    return "\n".join(lines) + "\n"
