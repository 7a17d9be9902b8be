#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ietd-fake against Debian's open-isns isnsd on 127.0.0.1, with a private
# configuration and database: ietd registers its targets and portal, an
# initiator in a target's discovery domain sees it and logs in, another is
# refused, a membership change reaches ietd through an SCN, losing the
# server refuses logins, and a clean stop deregisters. Prints one line per
# check and "isns: N passed, N failed".
set -u
cd "$(dirname "$0")"

suite=isns
. ./checks.sh

if ! command -v isnsd >/dev/null || ! command -v isnsadm >/dev/null ||
   ! command -v iscsi-inq >/dev/null; then
	echo "skip isns checks: open-isns-server, open-isns-utils or libiscsi-bin not installed (scripts/deps)"
	echo "isns: 0 passed, 0 failed"
	exit 0
fi

dir=$(mktemp -d /tmp/ietd-isns.XXXXXX)
pid=
spid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

T1=iqn.2026-12.com.example:isns1
T2=iqn.2026-12.com.example:isns2
I1=iqn.2026-12.com.example:member
I2=iqn.2026-12.com.example:stranger
I4=iqn.2026-12.com.example:unregistered
T4=iqn.2026-12.com.example:isns4
sport=$(random_port)
iport=$(random_port)
[ "$iport" = "$sport" ] && iport=$((sport + 1))

mkdir "$dir/db"
cat >"$dir/isnsd.conf" <<EOC
Database = $dir/db
BindAddress = 127.0.0.1:$sport
ControlSocket = $dir/isnsctl
PIDFile = $dir/isnsd.pid
DefaultDiscoveryDomain = 0
SLPRegister = 0
Security = 0
ESIMinInterval = 1
ESIMaxInterval = 2
ESIRetries = 2
EOC
# isnsadm as a client named $1 (-> $dir/$1.conf).
client_conf() {
	printf 'ServerAddress = 127.0.0.1:%s\nControlSocket = %s/isnsctl\nSecurity = 0\nSourceName = %s\n' \
		"$sport" "$dir" "$1" >"$dir/$1.conf"
}
client_conf "$I1"
client_conf "$I2"
adm() { local who=$1; shift; timeout 10 isnsadm -c "$dir/$who.conf" "$@"; }

start_isnsd() {
	isnsd -f -c "$dir/isnsd.conf" >>"$dir/isnsd.log" 2>&1 &
	spid=$!
	for i in $(seq 50); do
		ss -ltn "sport = :$sport" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.1
	done
	return 1
}
if ! start_isnsd; then
	bad "isnsd did not start: $(tail -1 "$dir/isnsd.log")"
	summary
	exit 1
fi

# Both initiators registered (open-isns sends SCNs only about nodes that
# are), the first in a domain with T1.
adm "$I1" --register initiator >>"$dir/isnsadm.log" 2>&1
adm "$I2" --register initiator >>"$dir/isnsadm.log" 2>&1
dd=$(adm "$I1" --local --dd-register dd-name=isns-check dd-member-name=$T1 \
	dd-member-name=$I1 2>>"$dir/isnsadm.log" | sed -n 's/.*DD ID = \([0-9]*\)$/\1/p')
check "isnsd makes the discovery domain" test -n "$dd"
# T4's domain, with an initiator that never registers: to be removed.
dd4=$(adm "$I1" --local --dd-register dd-name=isns-check-4 dd-member-name=$T4 \
	dd-member-name=$I4 2>>"$dir/isnsadm.log" | sed -n 's/.*DD ID = \([0-9]*\)$/\1/p')

cat >"$dir/ietd.conf" <<EOC
iSNSServer 127.0.0.1:$sport
iSNSAccessControl Yes
Target $T1
	Alias first disk
	Lun 0 Type=nullio
Target $T2
	Lun 0 Type=nullio
Target $T4
	Lun 0 Type=nullio
EOC
./ietd-fake -f -d 1 -p "$iport" -c "$dir/ietd.conf" --socket "$dir/ietd.sock" \
	>"$dir/log" 2>&1 &
pid=$!
# Until the log has a line matching $1 (up to $2 tenths of a second).
wait_log() {
	for i in $(seq "${2:-100}"); do
		grep -q -- "$1" "$dir/log" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# Until $1 matches at least $2 lines (up to $3 tenths of a second).
wait_count() {
	for i in $(seq "${3:-100}"); do
		[ "$(grep -c -- "$1" "$dir/log")" -ge "$2" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
check "ietd registers both targets on its portal" \
	wait_log "iSNS server 127.0.0.1:$sport: registered 3 targets on 1 portal"
check "and learns who shares T1's domain" \
	wait_log "$T1's discovery domains hold 1 other node"

out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
check "the member sees T1 in iSNS, with its alias" \
	grep -q "iSCSI alias = \"first disk\"" <<<"$out"
check "and ietd's portal, with an SCN port" \
	bash -c 'grep -q "Portal TCP/UDP port = $1/tcp" <<<"$2" && grep -q "SCN port = " <<<"$2"' _ "$iport" "$out"
check "and T1's portal group, tag 1" \
	bash -c 'grep -q "Portal group name = \"$1\"" <<<"$2" && grep -q "Portal group tag = 1" <<<"$2"' _ "$T1" "$out"
check "but not T2, in no domain of the member" \
	bash -c '! grep -q "$1" <<<"$2"' _ "$T2" "$out"

inq() { timeout 5 iscsi-inq -i "$1" "iscsi://127.0.0.1:$iport/$2/0" >/dev/null 2>&1; }
inq "$I1" "$T1"
check "the member logs in to T1" \
	wait_log "$I1 logged in to tid 1" 20
inq "$I2" "$T1"
check "a stranger is refused, and the log says why" \
	wait_log "login of $I2 refused: access to $T1 refused by iSNSAccessControl: the initiator is in none" 20
inq "$I1" "$T2"
check "T2, in no domain, refuses even the member" \
	wait_log "login of $I1 refused: access to $T2 refused by iSNSAccessControl" 20

inq "$I4" "$T4"
check "a member that never registered logs in too" \
	wait_log "$I4 logged in to tid 3" 20
# isnsd 0.101 sends no SCN when a domain goes (and crashes removing a
# member, or a domain that had one added, while SCNs are followed):
# ietd's asking every 15 s finds it.
adm "$I1" --local --dd-deregister "$dd4" >>"$dir/isnsadm.log" 2>&1
check "a domain removed at run time is followed within 15 s" \
	wait_log "$T4's discovery domains hold 0 other nodes" 200
inq "$I4" "$T4"
check "and its member is refused" \
	wait_log "login of $I4 refused: access to $T4" 20

adm "$I1" --local --dd-register dd-id="$dd" dd-member-name=$I2 >>"$dir/isnsadm.log" 2>&1
check "a member added at run time reaches ietd by SCN" \
	wait_log "$T1's discovery domains hold 2 other nodes" 50
check "ietd answered the SCN" \
	grep -q "state change notification for $T1" "$dir/log"
inq "$I2" "$T1"
check "and the new member logs in" \
	wait_log "$I2 logged in to tid 1" 20
# A target ietadm adds is registered too, and one it deletes goes.
T3=iqn.2026-12.com.example:isns3
regs=$(grep -c "registered 3 targets" "$dir/log")
obj/ietadm --socket "$dir/ietd.sock" --op new --tid=0 --params Name=$T3 >/dev/null
check "a target ietadm adds is registered" \
	wait_log "registered 4 targets on 1 portal" 50
adm "$I1" --local --dd-register dd-id="$dd" dd-member-name=$T3 >>"$dir/isnsadm.log" 2>&1
for i in $(seq 30); do
	out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
	grep -q "$T3" <<<"$out" && break
	sleep 0.1
done
check "and the member sees it in iSNS" grep -q "iSCSI name = \"$T3\"" <<<"$out"
obj/ietadm --socket "$dir/ietd.sock" --op delete --tid=4 >/dev/null
check "one it deletes is taken out" \
	wait_count "registered 3 targets on 1 portal" $((regs + 1)) 50
sleep 0.5
out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
check "of iSNS too" bash -c '! grep -q "iSCSI name = \"$1\"" <<<"$2"' _ "$T3" "$out"

# A reload that changes what is registered registers again.
regs=$(grep -c "registered 3 targets" "$dir/log")
sed -i 's/Alias first disk/Alias renamed disk/' "$dir/ietd.conf"
kill -HUP "$pid"
check "a reload that renames T1's alias registers again" \
	wait_count "registered 3 targets" $((regs + 1)) 50
sleep 0.3
out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
check "and the member sees the new alias" \
	grep -q "iSCSI alias = \"renamed disk\"" <<<"$out"

# isnsd rounds the minute ietd asks for down to 2 s, and drops an entity
# after two ESIs unanswered.
check "ietd answers the server's entity status inquiries" \
	wait_log "entity status inquiry answered" 50
sleep 5
out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
check "and so stays registered past several of them" \
	grep -q "$T1" <<<"$out"

kill "$spid"
wait "$spid" 2>/dev/null
spid=
check "losing the server is logged, with what it means" \
	wait_log "iSNSAccessControl refuses every login" 50
n=$(grep -c "logged in to tid 1" "$dir/log")
inq "$I1" "$T1"
check "and the member is refused while it is away (fail closed)" \
	wait_log "refused by iSNSAccessControl: the iSNS server has not said" 20
check "with no login meanwhile" \
	test "$(grep -c "logged in to tid 1" "$dir/log")" = "$n"
regs=$(grep -c "registered 3 targets" "$dir/log")
logins=$(grep -c "$I1 logged in to tid 1" "$dir/log")
start_isnsd
check "ietd registers again once the server is back" \
	wait_count "registered 3 targets" $((regs + 1)) 150
wait_count "discovery domains hold" $(($(grep -c "discovery domains hold" "$dir/log") + 1)) 50
inq "$I1" "$T1"
check "and admits the member again" \
	wait_count "$I1 logged in to tid 1" $((logins + 1)) 50

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
check "SIGTERM stops ietd cleanly, deregistering" \
	test "$rc" = 0 -a -n "$(grep "iSNS server 127.0.0.1:$sport: deregistered" "$dir/log")"
out=$(adm "$I1" --query iscsi-node-type=target 2>&1)
check "its targets are gone from iSNS" \
	bash -c '! grep -q "$1" <<<"$2"' _ "$T1" "$out"
# More targets than one PDU open-isns takes (8 KiB) holds: several
# registrations, all of them in the server.
{
	printf 'iSNSServer 127.0.0.1:%s\n' "$sport"
	for i in $(seq 200); do
		printf 'Target iqn.2026-12.com.example:%0150d\n Alias many %d\n' "$i" "$i"
	done
} >"$dir/many.conf"
mv "$dir/log" "$dir/first.log"
./ietd-fake -f -d 1 -p "$iport" -c "$dir/many.conf" --socket "$dir/ietd.sock" \
	>"$dir/log" 2>&1 &
pid=$!
check "200 long-named targets are registered, over several PDUs" \
	wait_log "registered 200 targets on 1 portal" 100
for i in $(seq 30); do
	n=$(isnsd -c "$dir/isnsd.conf" --dump-db 2>/dev/null | grep -c "Portal group name = \"iqn.2026-12.com.example:0")
	[ "$n" = 200 ] && break
	sleep 0.1
done
check "each with its portal group in the server" test "$n" = 200
kill -TERM "$pid"
wait "$pid"
pid=

check "ietd logged no sanitizer error" \
	bash -c '! grep -q "Sanitizer\|runtime error" "$1" "$2"' _ "$dir/first.log" "$dir/log"

[ "$fail" = 0 ] || { echo "--- ietd's log"; cat "$dir/first.log"; echo "--- isnsadm's"; cat "$dir/isnsadm.log"; }
summary
[ "$fail" = 0 ]
