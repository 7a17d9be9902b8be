# SPDX-License-Identifier: GPL-2.0
# ietd's modules other than main (ietd.c) and the kernel facade (kernel.c):
# usr/Makefile links them into ietd, tests/ link them against a fake kernel.
IET_CORE = log text pdu crc32c model params readfile config confwrite chap acl acl_cache peerlog digest backoff \
	registry login discovery handoff conn loop portal fdlimit ctl_proto ctl \
	ctl_ops op_show op_admin op_config utf8 json metrics metrics_file plan state reload notify \
	daemon wipe prdir op_pr op_resize op_alua logout tpg_retire isns_pdu isns_acl isns backing uevent_parse uevent
# The netlink requests kernel.c sends and the answers and events it
# receives, built and taken apart without a socket (libmnl): ietd links
# them, and so do the tests and fuzzer that feed them messages.
IET_KMSG = kmsg kreply
# ietadm's modules besides its main (ietadm.c).
IET_ADM = adm_args ctl_proto params text wipe
