# SPDX-License-Identifier: GPL-2.0
"""Helpers for the VM tests: the target (module, ietd, /proc/net/iet), the
initiator (iscsid, iscsiadm, sysfs), backing stores, fio and the kernel log.

They run inside the throwaway VM as root (see tests/vm/guest-run) and never
wait forever: every wait has a timeout and says what it waited for.
"""
