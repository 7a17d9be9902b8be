#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check: the unit tests, then ietd-fake with real initiator software
# and as a daemon, the packaging, the VM suite's kernel-log audit, then the
# total over all of them.
cd "$(dirname "$0")"
./run-tests | tee obj/unit.out
./initiator-check.sh | tee obj/initiator.out
./daemon-check.sh | tee obj/daemon.out
./packaging-check.sh | tee obj/packaging.out
./kmsg-check.sh | tee obj/kmsg.out
# Count from the summaries (tee hides exit codes); a missing one fails.
summary='s/^\([a-z]*: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed$/\2 \3/p'
set -- $(sed -n "$summary" obj/unit.out obj/initiator.out obj/daemon.out \
	obj/packaging.out obj/kmsg.out)
if [ $# != 10 ]; then
	echo "a test run ended without its summary"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "$(($1 + $3 + $5 + $7 + $9)) passed, $(($2 + $4 + $6 + $8 + ${10})) failed"
[ "$(($2 + $4 + $6 + $8 + ${10}))" = 0 ]
