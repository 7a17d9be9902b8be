#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM suite's kernel-log audit (tests/vm/vmlib/kmsg.py): a known report
# from outside iscsi_trgt is set aside only whole and only while none of its
# frames is ours; anything else bad still fails the run.
# data/kmsg-foreign-6.1.log is the report as 6.1 printed it in a soak run.
# Prints "kmsg: N passed, N failed".
set -u
cd "$(dirname "$0")"
top=$(cd ../.. && pwd)

suite=kmsg
. ./checks.sh

dir=$(mktemp -d /tmp/iet-kmsg.XXXXXX)
trap 'rm -rf "$dir"' EXIT
report=data/kmsg-foreign-6.1.log
mark="iet-guest-run: start tok"

# audit NAME: runs the audit of $dir/NAME.log; status, bad lines and notes
# in $dir/NAME.{rc,out,err}
audit() {
	python3 "$top/tests/vm/vmlib/kmsg.py" audit "$dir/$1.log" "$mark" \
		>"$dir/$1.out" 2>"$dir/$1.err"
	echo $? >"$dir/$1.rc"
}
# log NAME: a log of the start mark and then standard input
log() { { echo "[    1.000000] $mark"; cat; } >"$dir/$1.log"; }
rc() { test "$(cat "$dir/$1.rc")" = "$2"; }

log clean </dev/null
audit clean
check "a log with nothing bad passes" rc clean 0

log known <"$report"
audit known
check "the known 6.1 pm_runtime_work report is set aside" rc known 0
check "... and noted" grep -q 'set aside a known report.*pm:pm_runtime_work' "$dir/known.err"

cat "$report" "$report" | log twice
audit twice
check "two of them are set aside" rc twice 0
check "... and both noted" test "$(grep -c 'set aside' "$dir/twice.err")" = 2

sed 's/__iscsi_unbind_session+0xd0\/0x1c0 \[scsi_transport_iscsi\]/iet_conn_release+0x10\/0x80 [iscsi_trgt]/' \
	"$report" | log ours
audit ours
check "the same report with a frame in iscsi_trgt fails" rc ours 1
check "... showing its WARNING and call trace" \
	test "$(grep -c 'WARNING:\|Call Trace' "$dir/ours.out")" = 2

sed '/end trace/d' "$report" | log cut
audit cut
check "a report without its end fails" rc cut 1

sed 's/pm:pm_runtime_work/events:vmstat_update/' "$report" | log other
audit other
check "another work queue's flush warning fails" rc other 1

sed '/RSP: 0018/i [  906.700000] BUG: unable to handle page fault for address: 0000000000000008' \
	"$report" | log inner
audit inner
check "a report of ours inside the known one's lines still fails" rc inner 1
check "... naming the BUG" grep -q 'BUG: unable to handle' "$dir/inner.out"

awk '/Call Trace/ { print; print "[  906.770000] WARNING: CPU: 1 PID: 9 at kernel/iet/x.c:1 f+0x1/0x2"; next } 1' \
	"$report" | log interleaved
audit interleaved
check "a second WARNING interleaved with the report fails" rc interleaved 1

{ cat "$report"; echo "[  950.000000] INFO: task iet_io:123 blocked for more than 60 seconds."; } |
	log after
audit after
check "a hung task after the known report fails" rc after 1
check "... and only that line is bad" test "$(wc -l <"$dir/after.out")" = 1

{ echo "[    0.500000] WARNING: CPU: 0 PID: 1 at boot.c:1 boot+0x1/0x2"; echo "[    1.000000] $mark"; } \
	>"$dir/boot.log"
echo "[    0.600000] no mark here" >"$dir/nomark.log"
audit boot
audit nomark
check "the audit starts at the start mark" rc boot 0
python3 "$top/tests/vm/vmlib/kmsg.py" boot "$dir/boot.log" "$mark" >"$dir/boot.out"
check "boot lists what the boot logged before it" grep -q 'WARNING: CPU: 0 PID: 1 at boot.c' "$dir/boot.out"
check "a log without the start mark is an error, not a pass" rc nomark 2

summary
