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
