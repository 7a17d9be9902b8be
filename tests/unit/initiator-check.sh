#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real initiator software (libiscsi's iscsi-ls and iscsi-inq) against
# ietd-fake: ietd linked with the fake kernel, on a high port of 127.0.0.1.
# Discovery must list the targets; a normal login must get to the hand-off.
# Prints one line per check and "initiator: N passed, N failed".
set -u
cd "$(dirname "$0")"

suite=initiator
. ./checks.sh

if ! command -v iscsi-ls >/dev/null || ! command -v iscsi-inq >/dev/null; then
	echo "skip initiator checks: libiscsi-bin (iscsi-ls, iscsi-inq) not installed"
	echo "initiator: 0 passed, 0 failed"
	exit 0
fi

dir=$(mktemp -d /tmp/ietd-initiator.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

T1=iqn.2001-04.com.example:check1
T2=iqn.2001-04.com.example:check2
cat >"$dir/ietd.conf" <<EOC
Target $T1
	Lun 0 Type=nullio,Blocks=2048
Target $T2
	Alias Second disk
	MaxRecvDataSegmentLength 65536
	Lun 0 Type=nullio
EOC
adm() { obj/ietadm --socket "$dir/ietd.sock" "$@"; }

# A free port: another tenant's listener may hold the one drawn; try again.
for try in 1 2 3 4 5; do
	port=$(random_port)
	./ietd-fake -f -d 1 -p "$port" -c "$dir/ietd.conf" \
		--socket "$dir/ietd.sock" >"$dir/log" 2>&1 &
	pid=$!
	for i in $(seq 50); do
		grep -q "serving" "$dir/log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "serving" "$dir/log" && break
	wait "$pid" 2>/dev/null
	pid=
done
if [ -z "$pid" ]; then
	bad "ietd-fake did not start: $(tail -1 "$dir/log")"
	summary
	exit 1
fi

out=$(timeout 10 iscsi-ls "iscsi://127.0.0.1:$port" 2>&1)
check "iscsi-ls discovery lists the first target" \
	grep -qx "Target:$T1 Portal:127.0.0.1:$port,1" <<<"$out"
check "iscsi-ls discovery lists the second target" \
	grep -qx "Target:$T2 Portal:127.0.0.1:$port,1" <<<"$out"

if timeout 5 iscsi-ls "iscsi://[::1]:$port" >"$dir/ls6" 2>&1; then
	check "discovery over IPv6 gives a bracketed portal" \
		grep -q "Portal:\[::1\]:$port,1" "$dir/ls6"
fi

# With the fake kernel nobody answers INQUIRY: the login is what counts.
timeout 2 iscsi-inq "iscsi://127.0.0.1:$port/$T2/0" >/dev/null 2>&1
check "iscsi-inq login reaches the kernel hand-off" \
	grep -q "iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-inq logged in to tid 2" "$dir/log"
sid=$(sed -n 's/.*iscsi-inq logged in to tid 2, sid \([0-9]*\),.*/\1/p' "$dir/log" | head -1)

check "ietadm shows the target's parameters" \
	test "$(adm --op show --tid=1 | head -1)" = "Wthreads=8"
if [ -n "$sid" ]; then
	out=$(adm --op show --tid 2 --sid "$sid")
	check "ietadm shows the session's negotiated keys" \
		grep -qx "MaxRecvDataSegmentLength=65536" <<<"$out"
else
	bad "no session id in the log"
fi
out=$(adm --op show --tid=9 2>&1)
rc=$?
check "ietadm fails clearly on a missing target" \
	test "$rc" != 0 -a "$out" = "ietadm: no target with tid 9"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
check "SIGTERM stops ietd cleanly" test "$rc" = 0
check "ietd logged no sanitizer error" bash -c '! grep -q "Sanitizer\|runtime error" "$1"' _ "$dir/log"

printf 'Target %s\n MaxBurstLength 1k\n' "$T1" >"$dir/bad.conf"
err=$(./ietd-fake -f -c "$dir/bad.conf" -p "$port" --socket "$dir/ietd.sock" 2>&1)
rc=$?
check "a configuration error is one line naming file, line and key" \
	test "$rc" != 0 -a "$err" = "$dir/bad.conf:2: MaxBurstLength: \"1k\" is not a number"

summary
[ "$fail" = 0 ]
