#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bench's instruction profile: the tcgprof plugin builds cleanly, and
its counts are named through kallsyms (tests/bench/tcgprof.py) as a
made-up case says. Prints "tcgprof: N passed, N failed" for run-check.sh."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import tcgprof  # noqa: E402
from pycheck import Checks  # noqa: E402

check = Checks("tcgprof")

with tempfile.TemporaryDirectory() as tmp:
    so = os.path.join(tmp, "tcgprof.so")
    cc = subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                         "-o", so, os.path.join(HERE, "..", "bench", "tcgprof.c"), "-lpthread"],
                        capture_output=True, text=True)
    if cc.returncode:
        print(cc.stderr, end="")
    check("the plugin builds without a warning", cc.returncode == 0)
    nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True)
    check("the plugin exports what qemu looks for",
          "qemu_plugin_install" in nm.stdout and "qemu_plugin_version" in nm.stdout)

KALLSYMS = "\n".join([
    "0000000000000000 A fixed_percpu_data",
    "ffffffff81000000 T _stext",
    "ffffffff81000100 T tcp_sendmsg",
    "ffffffff81000200 t tcp_push",
    "ffffffff81000300 D some_data",
    "ffffffffc0001000 t rx_thread\t[iscsi_trgt]",
    "ffffffffc0001400 T iet_cmd_complete\t[iscsi_trgt]",
])
PROFILE = "\n".join([
    "0 500",                    # user code
    "ffffffff81000100 300",     # tcp_sendmsg's start
    "ffffffff81000180 100",     # inside tcp_sendmsg
    "ffffffff81000250 200",     # inside tcp_push
    "ffffffffc0001010 600",     # inside rx_thread
    "ffffffffc0001400 300",
    "garbage",
])

syms = tcgprof.symbols(KALLSYMS)
check("only text symbols with an address are kept, in order",
      [s[1] for s in syms] == ["_stext", "tcp_sendmsg", "tcp_push", "rx_thread",
                               "iet_cmd_complete"])
funcs, user = tcgprof.attribute(PROFILE, syms)
check("user code is counted apart", user == 500)
check("a block counts for the function it starts in",
      funcs[("vmlinux", "tcp_sendmsg")] == 400 and funcs[("vmlinux", "tcp_push")] == 200)
check("module symbols carry their module",
      funcs[("iscsi_trgt", "rx_thread")] == 600 and funcs[("iscsi_trgt", "iet_cmd_complete")] == 300)
text = tcgprof.report(PROFILE, KALLSYMS, 10)
check("the report gives the total and per command",
      "instructions in the window: 2,000 (10 commands)" in text and "       200  100.0%  all" in text)
check("the report splits user and kernel", "        50   25.0%  user space" in text
      and "       150   75.0%  kernel" in text)
check("the report sums each module", "        90   45.0%  iscsi_trgt" in text)
check("the report lists a module's own functions",
      text.split("in iscsi_trgt:")[1].split("\n")[1].endswith("rx_thread"))
check("without a command count there is no per-command figure",
      "         -  100.0%  all" in tcgprof.report(PROFILE, KALLSYMS, 0))
check.finish()
