#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check: the unit tests, then ietd-fake with real initiator software,
# as a daemon and against a real iSNS server (isnsd), the packaging, the VM
# suite's kernel-log audit and its reading of libiscsi's conformance run,
# the bench's reading of the scheduler's switches and its instruction
# profile, how make check shares the VM suite between kernels, the cluster
# suite's pieces that need no VM, then the total over all of them.
cd "$(dirname "$0")"
./run-tests | tee obj/unit.out
./initiator-check.sh | tee obj/initiator.out
./daemon-check.sh | tee obj/daemon.out
./isns-check.sh | tee obj/isns.out
./packaging-check.sh | tee obj/packaging.out
./kmsg-check.sh | tee obj/kmsg.out
./cunit-check.py | tee obj/cunit.out
./sched-check.py | tee obj/sched.out
./tcgprof-check.py | tee obj/tcgprof.out
./split-check.py | tee obj/split.out
./cluster-check.py | tee obj/cluster.out
# Count from the summaries (tee hides exit codes); a missing one fails.
summary='s/^\([a-z]*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed$/\2 \3/p'
passed=0
failed=0
for out in unit initiator daemon isns packaging kmsg cunit sched tcgprof split cluster; do
	set -- $(sed -n "$summary" "obj/$out.out")
	if [ $# != 2 ]; then
		echo "the $out run ended without its summary"
		echo "0 passed, 1 failed"
		exit 1
	fi
	passed=$((passed + $1))
	failed=$((failed + $2))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
