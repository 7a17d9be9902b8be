# SPDX-License-Identifier: GPL-2.0
# Sourced by the *-check.sh scripts after setting suite=NAME: one line per
# check, and "NAME: N passed, N failed" from summary, which run-check.sh
# adds up.
pass=0
fail=0
ok() { echo "ok   $suite: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $suite: $1"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
summary() { echo "$suite: $pass passed, $fail failed"; }
# A port for a test daemon, below the kernel's range for ephemeral ports: a
# port there is never some client connection's, in use or in TIME_WAIT.
random_port() {
	local lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "${lo:-0}" -gt 12000 ] 2>/dev/null || lo=32768
	echo $(( 10000 + RANDOM % (lo - 10002) ))
}
