#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What Pacemaker's iSCSITarget and iSCSILogicalUnit agents do with IET
# (implementation "iet"), step by step and in their words: ietadm for every
# change, /proc/net/iet/volume and /proc/net/iet/session parsed with sed and
# grep for tids, sessions and connections, and /etc/initiators.allow and
# /etc/initiators.deny for access.
#
#   cluster-agent.sh target-start IQN [PARAMS] [ALLOWED] [USER] [PASSWORD]
#   cluster-agent.sh target-monitor IQN
#   cluster-agent.sh target-stop IQN [USER]
#   cluster-agent.sh lun-start IQN LUN PATH [SCSI_ID] [SCSI_SN]
#   cluster-agent.sh lun-monitor IQN LUN PATH
#   cluster-agent.sh lun-stop IQN LUN
#
# Exit status: 0 success (running, for monitor), 7 not running, 1 error.
# Environment: IETADM (default ietadm), ETC (default /etc), STOP_TIMEOUT.
set -u

IETADM=${IETADM:-ietadm}
ETC=${ETC:-/etc}
OCF_SUCCESS=0
OCF_ERR_GENERIC=1
OCF_NOT_RUNNING=7

log() { echo "cluster-agent: $*" >&2; }
ocf_run() { log "running: $*"; "$@" || { log "failed ($?): $*"; return 1; }; }

target_monitor() {
	grep -Eq "tid:[0-9]+ name:$1$" /proc/net/iet/volume && return $OCF_SUCCESS
	return $OCF_NOT_RUNNING
}

tid_of() {
	sed -ne "s/tid:\([[:digit:]]\+\) name:$1$/\1/p" </proc/net/iet/volume
}

target_start() {
	local iqn=$1 params=${2:-} allowed=${3:-} user=${4:-} password=${5:-}
	local lasttid tid param name value

	target_monitor "$iqn" && return $OCF_SUCCESS
	# Figure out the last used target ID, add 1 to get the new target ID.
	lasttid=$(sed -ne "s/tid:\([[:digit:]]\+\) name:.*/\1/p" </proc/net/iet/volume | sort -n | tail -n1)
	[ -z "$lasttid" ] && lasttid=0
	tid=$((++lasttid))
	ocf_run "$IETADM" --op new --tid=$tid --params Name=$iqn || return $OCF_ERR_GENERIC
	for param in $params; do
		name=${param%=*}
		value=${param#*=}
		ocf_run "$IETADM" --op update --tid=$tid --params $name=$value || return $OCF_ERR_GENERIC
	done
	if [ -n "$allowed" ]; then
		echo "$iqn ALL" >>"$ETC/initiators.deny"
		echo "$iqn ${allowed// /,}" >>"$ETC/initiators.allow"
	else
		echo "$iqn ALL" >>"$ETC/initiators.allow"
	fi
	if [ -n "$user" ]; then
		ocf_run "$IETADM" --op new --user --tid=$tid \
			--params=IncomingUser=$user,Password=$password || return $OCF_ERR_GENERIC
	fi
	target_monitor "$iqn"
}

target_stop() {
	local iqn=$1 user=${2:-} tid deadline

	target_monitor "$iqn" || return $OCF_SUCCESS
	tid=$(tid_of "$iqn")
	[ -n "$tid" ] || { log "no tid for $iqn"; return $OCF_ERR_GENERIC; }
	close_connections() {
		# Close existing connections: there is no other way with IET
		# than to parse /proc/net/iet/session.
		set -- $(sed -ne '/^tid:'$tid' /,/^tid/ {
				/^[[:space:]]*sid:\([0-9]\+\)/ {
					s/^[[:space:]]*sid:\([0-9]*\).*/--sid=\1/; h;
				};
				/^[[:space:]]*cid:\([0-9]\+\)/ {
					s/^[[:space:]]*cid:\([0-9]*\).*/--cid=\1/; G; p;
				};
			}' </proc/net/iet/session)
		while [[ -n ${2:-} ]]; do
			# $2 $1 looks like "--sid=X --cid=Y"
			ocf_run "$IETADM" --op delete --tid=$tid $2 $1
			shift 2
		done
	}
	close_connections
	if [ -n "$user" ]; then
		ocf_run "$IETADM" --op delete --user --tid=$tid \
			--params=IncomingUser=$user || return $OCF_ERR_GENERIC
	fi
	# Loop on delete until it works (an initiator may log in again
	# meanwhile: close its connections once more).
	deadline=$((SECONDS + ${STOP_TIMEOUT:-60}))
	while true; do
		if "$IETADM" --op delete --tid=$tid; then
			log "removed target $iqn"
			break
		fi
		[ $SECONDS -lt $deadline ] || { log "could not remove $iqn"; return $OCF_ERR_GENERIC; }
		log "failed to remove target $iqn, retrying"
		close_connections
		sleep 0.2
	done
	[ -e "$ETC/initiators.deny" ] && ocf_run sed -e "/^${iqn}[[:space:]]/d" -i "$ETC/initiators.deny"
	[ -e "$ETC/initiators.allow" ] && ocf_run sed -e "/^${iqn}[[:space:]]/d" -i "$ETC/initiators.allow"
	return $OCF_SUCCESS
}

lun_monitor() {
	local iqn=$1 lun=$2 path=$3 tid

	[ -e "$path" ] || return $OCF_NOT_RUNNING
	tid=$(tid_of "$iqn")
	[ -n "$tid" ] || return $OCF_NOT_RUNNING
	grep -E -q "[[:space:]]+lun:$lun.*path:$path$" /proc/net/iet/volume && return $OCF_SUCCESS
	return $OCF_NOT_RUNNING
}

lun_start() {
	local iqn=$1 lun=$2 path=$3 scsi_id=${4:-} scsi_sn=${5:-} params tid

	lun_monitor "$iqn" "$lun" "$path" && return $OCF_SUCCESS
	tid=$(tid_of "$iqn")
	params="Path=$path"
	# use blockio if path points to a block device, fileio otherwise.
	if [ -b "$path" ]; then
		params="$params Type=blockio"
	else
		params="$params Type=fileio"
	fi
	[ -n "$scsi_id" ] && params="$params ScsiId=$scsi_id"
	[ -n "$scsi_sn" ] && params="$params ScsiSN=$scsi_sn"
	# As the agent does: with no additional parameters a trailing comma.
	params="$params "
	ocf_run "$IETADM" --op new --tid=$tid --lun=$lun --params ${params// /,} || return $OCF_ERR_GENERIC
	lun_monitor "$iqn" "$lun" "$path"
}

lun_stop() {
	local iqn=$1 lun=$2 tid

	tid=$(tid_of "$iqn")
	[ -n "$tid" ] || return $OCF_SUCCESS
	grep -E -q "[[:space:]]+lun:$lun " /proc/net/iet/volume || return $OCF_SUCCESS
	# IET allows us to remove LUs while they are in use
	ocf_run "$IETADM" --op delete --tid=$tid --lun=$lun || return $OCF_ERR_GENERIC
}

action=${1:-}
shift || true
case $action in
target-start) target_start "$@" ;;
target-monitor) target_monitor "$@" ;;
target-stop) target_stop "$@" ;;
lun-start) lun_start "$@" ;;
lun-monitor) lun_monitor "$@" ;;
lun-stop) lun_stop "$@" ;;
*) echo "usage: $0 target-start|target-monitor|target-stop|lun-start|lun-monitor|lun-stop ..." >&2; exit 2 ;;
esac
