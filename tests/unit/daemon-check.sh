#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ietd-fake as a daemon: it reports start-up failures through its exit
# status, writes its pid file, drops to another user keeping exactly
# CAP_NET_ADMIN, and stops on SIGTERM. Prints "daemon: N passed, N failed".
set -u
cd "$(dirname "$0")"

suite=daemon
. ./checks.sh

dir=$(mktemp -d /tmp/ietd-daemon.XXXXXX)
chmod 755 "$dir"
cleanup() {
	[ -s "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
	[ -s "$dir/pid2" ] && kill "$(cat "$dir/pid2")" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
printf 'Target iqn.2001-04.com.example:d\n Lun 0 Type=nullio\n' >"$dir/ietd.conf"
port=$(random_port)

# In the background; the parent returns once start-up is done.
./ietd-fake -c "$dir/ietd.conf" -p "$port" --socket "$dir/ietd.sock" \
	--pidfile "$dir/pid" 2>"$dir/err"
rc=$?
check "daemon start-up returns success" test "$rc" = 0
pid=$(cat "$dir/pid" 2>/dev/null)
check "pid file names the running daemon" kill -0 "${pid:-0}"
check "root ietd keeps only CAP_NET_ADMIN and CAP_DAC_OVERRIDE once it listens" \
	test "$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")" = 0000000000001002
check "and lowers its bounding set to them, with no new privileges" \
	test "$(awk '/^CapBnd:/ { print $2 }' "/proc/$pid/status") $(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$pid/status")" = "0000000000001002 1"
check "daemon answers ietadm" \
	test "$(obj/ietadm --socket "$dir/ietd.sock" --op show --tid=1 | head -1)" = "Wthreads=8"

# A second one finds the first and reports the failure in its status.
./ietd-fake -c "$dir/ietd.conf" -p "$((port + 1))" --socket "$dir/ietd.sock" \
	--pidfile "$dir/pid2" 2>"$dir/err2"
rc=$?
check "a second daemon on the same socket fails start-up" \
	test "$rc" != 0 -a -n "$(grep 'another ietd is running' "$dir/err2")"

# CHAP secrets from standard input or a file, never on the command line.
adm() { obj/ietadm --socket "$dir/ietd.sock" "$@"; }
printf 'secret-from-stdin\n' | adm --op new --tid=1 --user \
	--params IncomingUser=joe --password-file=- >/dev/null
printf 'secret-from-a-file\r\n' >"$dir/ann.secret"
adm --op new --tid=1 --user --params IncomingUser=ann \
	--password-file="$dir/ann.secret" >/dev/null
saved=$(adm --op save)
check "ietadm --password-file=- takes the secret from standard input" \
	grep -q "IncomingUser joe secret-from-stdin$" <<<"$saved"
check "ietadm --password-file takes the first line of a file" \
	grep -q "IncomingUser ann secret-from-a-file$" <<<"$saved"
err=$(printf 'a,b=c\n' | adm --op new --tid=1 --user \
	--params IncomingUser=bob --password-file=- 2>&1)
rc=$?
check "a secret ietadm cannot pass is refused with one line" \
	test "$rc" = 1 -a "$(wc -l <<<"$err")" = 1 -a -z "$(adm --op show --tid=1 --user | grep bob)"

kill -TERM "$pid"
for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM stops the daemon" bash -c "! kill -0 $pid 2>/dev/null"
check "the pid file is removed at exit" test ! -e "$dir/pid"

# --check reads the access files too: one typo there refuses every login.
mkdir "$dir/acl"
printf 'ALL 10.0.0.0/8,iqn.2001-04.com.example:.*\n' >"$dir/acl/initiators.allow"
out=$(./ietd-fake --check -c "$dir/ietd.conf" --access-dir "$dir/acl" 2>&1)
check "ietd --check passes good access files and names them" \
	test $? = 0 -a -n "$(grep "$dir/acl/initiators.allow OK" <<<"$out")"
printf 'ALL 10.0.0.0/8\niqn.x:y 999.1.2.3\n' >"$dir/acl/initiators.deny"
out=$(./ietd-fake --check -c "$dir/ietd.conf" --access-dir "$dir/acl" 2>&1)
check "ietd --check refuses a broken access file, naming file and line" \
	test $? = 1 -a -n "$(grep "$dir/acl/initiators.deny:2:" <<<"$out")"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	# The state the ietd above left beside the socket, as ietd -u once did.
	check "without -u the state file is beside the socket" \
		test -s "$dir/ietd.state"
	./ietd-fake -f -u nobody -c "$dir/ietd.conf" -p "$port" \
		--socket "$dir/ietd.sock" >"$dir/log" 2>&1 &
	pid=$!
	for i in $(seq 50); do grep -q serving "$dir/log" && break; sleep 0.1; done
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
	caps=$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")
	check "-u drops to the user" test "$uid" = "$(id -u nobody)"
	check "-u keeps exactly CAP_NET_ADMIN" test "$caps" = 0000000000001000
	obj/ietadm --socket "$dir/ietd.sock" --op update --tid=1 \
		--params MaxSessions=7 >/dev/null
	check "-u replaces its state file in a directory of its own" \
		grep -q "MaxSessions 7" "$dir/state/ietd.state"
	check "-u leaves no temporary state file behind" \
		test "$(ls -A "$dir/state")" = ietd.state
	check "-u moves the state an older ietd -u left beside the socket" \
		test ! -e "$dir/ietd.state" -a \
		-n "$(grep "state moved from $dir/ietd.state" "$dir/log")"
	kill -TERM "$pid"
	wait "$pid"

	mkdir -m 700 "$dir/root-only"
	./ietd-fake -f -u nobody -c "$dir/ietd.conf" -p "$port" \
		--socket "$dir/ietd.sock" --state "$dir/root-only/ietd.state" \
		>"$dir/log" 2>&1
	rc=$?
	check "--state the user cannot replace: no start, says where and why" \
		test "$rc" != 0 -a -n "$(grep "$dir/root-only: cannot create ietd.state.new there: Permission denied" "$dir/log")"
fi

# Listening sockets on the port, from /proc (address:port in hex).
listeners() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$4 == "0A" && $2 ~ p"$" { print $2 }' /proc/net/tcp /proc/net/tcp6
}
./ietd-fake -f -c "$dir/ietd.conf" -p "$port" --socket "$dir/ietd.sock" \
	>"$dir/log" 2>&1 &
pid=$!
for i in $(seq 50); do grep -q serving "$dir/log" && break; sleep 0.1; done
l=$(listeners "$port" | sort | tr '\n' ' ')
check "by default ietd listens on all IPv4 and all IPv6 addresses" \
	test "$l" = "00000000000000000000000000000000:$(printf '%04X' "$port") 00000000:$(printf '%04X' "$port") "
kill -TERM "$pid"
wait "$pid"
./ietd-fake -f -a 127.0.0.1 -c "$dir/ietd.conf" -p "$port" \
	--socket "$dir/ietd.sock" >"$dir/log" 2>&1 &
pid=$!
for i in $(seq 50); do grep -q serving "$dir/log" && break; sleep 0.1; done
check "-a ADDR listens on that address only" \
	test "$(listeners "$port")" = "0100007F:$(printf '%04X' "$port")"
kill -TERM "$pid"
wait "$pid"

# Limits before login (ietd(8), LIMITS), each tried by a peer (flood.py).
serve() {
	for i in $(seq 50); do grep -q serving "$dir/log" && break; sleep 0.1; done
}
if command -v python3 >/dev/null; then
	(ulimit -S -n 256; exec ./ietd-fake -f -c "$dir/ietd.conf" -p "$port" \
		--socket "$dir/ietd.sock" >"$dir/log" 2>&1) &
	pid=$!
	serve
	soft=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
	check "RLIMIT_NOFILE is raised to what the connection limits need" \
		test "${soft:-0}" -ge 1104
	check "one address holds at most 32 connections before login" \
		test "$(./flood.py "$port" 40)" = "closed 8 kept 32"
	kill -TERM "$pid"
	wait "$pid"

	(ulimit -n 200; exec ./ietd-fake -f -c "$dir/ietd.conf" -p "$port" \
		--socket "$dir/ietd.sock" >"$dir/log" 2>&1) &
	pid=$!
	serve
	check "a low hard RLIMIT_NOFILE lowers the connection limit to fit" \
		grep -q "at most 120 connections in login or discovery" "$dir/log"
	# 150 connections from 15 addresses: more than ietd takes in all.
	./flood.py "$port" 150 --per-addr 10 --first 2 --hold 2 >"$dir/flood" &
	fpid=$!
	for i in $(seq 30); do test -s "$dir/flood" && break; sleep 0.1; done
	check "peers from many addresses get 120 connections, no more" \
		grep -qx "closed 30 kept 120" "$dir/flood"
	check "ietadm is answered while peers hold every connection" \
		test "$(obj/ietadm --socket "$dir/ietd.sock" --op show --tid=1 | head -1)" = "Wthreads=8"
	wait "$fpid"
	check "ietd never ran out of descriptors" \
		bash -c '! grep -q "out of file descriptors" "$1"' _ "$dir/log"
	if command -v iscsi-ls >/dev/null; then
		check "discovery works again once the peers are gone" \
			bash -c 'timeout 10 iscsi-ls "iscsi://127.0.0.1:$1" | grep -q Target:' _ "$port"
	fi
	kill -TERM "$pid"
	wait "$pid"
	check "ietd logged no sanitizer error under the floods" \
		bash -c '! grep -q "Sanitizer\|runtime error" "$1"' _ "$dir/log"
fi

summary
[ "$fail" = 0 ]
