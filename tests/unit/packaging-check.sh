#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What a package is made of: one version everywhere, make install-usr and
# uninstall honouring DESTDIR and every directory variable, a systemd unit
# that systemd accepts without a warning, and ietadm's bash completion.
# Prints "packaging: N passed, N failed".
set -u
cd "$(dirname "$0")"
top=$(cd ../.. && pwd)

suite=packaging
. ./checks.sh

dir=$(mktemp -d /tmp/iet-packaging.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# ---- one version: DKMS's, the module's and the tools'
dkms=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
kmod=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$top/kernel/main.c")
tools=$(sed -n 's/^#define IET_VERSION\t"\(.*\)"$/\1/p' "$top/usr/version.h")
check "dkms.conf, MODULE_VERSION and version.h agree ($dkms, $kmod, $tools)" \
	test -n "$dkms" -a "$dkms" = "$kmod" -a "$dkms" = "$tools"
check "ietadm --version prints it" \
	test "$(obj/ietadm --version 2>&1)" = "ietadm $tools"

# ---- make install-usr / uninstall
dest=$dir/root
vars=(DESTDIR="$dest" SBINDIR=/opt/iet/sbin MANDIR=/opt/iet/man
      UNITDIR=/opt/iet/units COMPLETIONSDIR=/opt/iet/completions
      EXAMPLESDIR=/opt/iet/examples SYSCONFDIR=/opt/iet/etc OCFDIR=/opt/iet/ocf)
make -s -C "$top" install-usr "${vars[@]}" >"$dir/install.log" 2>&1
check "make install-usr succeeds" test $? = 0
want=(opt/iet/sbin/ietd opt/iet/sbin/ietadm opt/iet/man/man8/ietd.8
      opt/iet/man/man8/ietadm.8 opt/iet/man/man5/ietd.conf.5
      opt/iet/units/ietd.service opt/iet/completions/ietadm
      opt/iet/examples/ietd.conf opt/iet/examples/initiators.allow
      opt/iet/examples/initiators.deny opt/iet/examples/targets.allow
      opt/iet/examples/grafana-iet.json
      opt/iet/ocf/resource.d/iet/alua
      opt/iet/etc/iet/ietd.conf)
have=$(cd "$dest" 2>/dev/null && find . -type f | sed 's|^\./||' | sort)
check "every file lands where its variable says, and nothing else" \
	test "$have" = "$(printf '%s\n' "${want[@]}" | sort)"
unit=$dest/opt/iet/units/ietd.service
runs_from_sbindir() {
	grep -qx 'ExecStart=/opt/iet/sbin/ietd --foreground' "$unit" &&
		grep -qx 'ExecReload=/opt/iet/sbin/ietadm --op reload' "$unit"
}
check "the installed unit runs the programs from SBINDIR" runs_from_sbindir
check "the sample configuration is root's alone (it holds secrets)" \
	test "$(stat -c %a "$dest/opt/iet/etc/iet/ietd.conf")" = 600
make -s -C "$top" uninstall KDIR=/nonexistent "${vars[@]}" >"$dir/uninstall.log" 2>&1
left=$(cd "$dest" && find . -type f | sed 's|^\./||')
check "make uninstall leaves only the administrator's ietd.conf" \
	test "$left" = opt/iet/etc/iet/ietd.conf

# ---- the unit: systemd parses every line of it (an unknown key or value
# is only a warning to systemd, so any output fails here)
mkdir -p "$dir/unit"
sed "s|/usr/sbin/|$top/usr/|g" "$top/etc/ietd.service" >"$dir/unit/ietd.service"
out=$(systemd-analyze verify --man=no "$dir/unit/ietd.service" 2>&1)
rc=$?
check "systemd-analyze verify accepts ietd.service silently" test "$rc" = 0 -a -z "$out"
[ -z "$out" ] || echo "$out" | sed 's/^/     | /'
# The check itself: a misspelt key must be seen.
sed 's/^NoNewPrivileges=yes/NoNewPrivilege=yes/' "$dir/unit/ietd.service" >"$dir/unit/typo.service"
check "... and would report a misspelt key" \
	test -n "$(systemd-analyze verify --man=no "$dir/unit/typo.service" 2>&1)"
check "reload goes through ietadm, which reports a refused configuration" \
	grep -qx 'ExecReload=/usr/sbin/ietadm --op reload' "$top/etc/ietd.service"
# The sandbox: systemd's own measure of what the unit leaves exposed.
# ietd must see the host's file system as it is (the kernel opens LUN
# paths as ietd), which is most of what keeps it above 4.
exposure=$(systemd-analyze security --offline=yes "$dir/unit/ietd.service" 2>/dev/null |
	sed -n 's/.*Overall exposure level for ietd.service: \([0-9.]*\).*/\1/p')
check "systemd rates ietd.service's exposure 4.5 or less ($exposure)" \
	awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 4.5) }'
check "ietd.service filters system calls to a service's, failing others with EPERM" \
	bash -c 'grep -qx SystemCallFilter=@system-service "$1" &&
		grep -qx SystemCallErrorNumber=EPERM "$1"' _ "$top/etc/ietd.service"

# ---- bash completion: COMPREPLY for a command line, the cursor at its end
cat >"$dir/volume" <<'EOF'
tid:1 name:iqn.2001-04.com.example:disk1
	lun:0 state:0 iotype:fileio iomode:wt blocks:2048 blocksize:512 path:/tmp/a
tid:7 name:iqn.2001-04.com.example:disk7
EOF
complete_line() {
	bash -c '
		. /usr/share/bash-completion/bash_completion || exit 3
		. "$1" || exit 3
		export _IETADM_VOLUME=$2
		COMP_LINE=$3
		COMP_POINT=${#COMP_LINE}
		read -ra COMP_WORDS <<<"$COMP_LINE"
		[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_ietadm ietadm "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
	' sh "$top/etc/ietadm.bash-completion" "$dir/volume" "$1"
}
expect() {
	local got
	got=$(complete_line "$1")
	if [ "$got" = "$2" ]; then
		ok "completion of '$1'"
	else
		bad "completion of '$1': got '$got', want '$2'"
	fi
}
expect "ietadm --op " "delete new reload save show update "
expect "ietadm --op re" "reload "
expect "ietadm --op reload -" "--dry-run --socket "
expect "ietadm --op save --" "--file --socket "
expect "ietadm --op update --tid " "1 7 iqn.2001-04.com.example:disk1 iqn.2001-04.com.example:disk7 "
expect "ietadm --op new --user --params In" "IncomingUser= "
expect "ietadm --op new --user -" "--lun --params --password-file --socket --target --tid --user "
expect "ietadm --op new --tid 1 --lun 0 --params Path=/x,Ty" \
	"Path=/x,Type=blockio Path=/x,Type=fileio Path=/x,Type=nullio "
expect "ietadm --op new --tid 1 --lun 0 --params Path=/x,Th" \
	"Path=/x,ThinProvisioning=No Path=/x,ThinProvisioning=Yes "
expect "ietadm --op update --tid 1 --params NOP" "NOPInterval= NOPTimeout= "
expect "ietadm --op update --tid 1 --lun 0 --params Re" \
	"Reservations=clear Reservations=release Resize=backing "
expect "ietadm --op update --tid 1 --lun 0 --params Size=1G,F" \
	"Size=1G,Force=Yes "
expect "ietadm --op update --tid 1 --params PortalGroup=2,State=s" \
	"PortalGroup=2,State=standby "
expect "ietadm -" "--help --op --socket --version "

summary
[ "$fail" = 0 ]
