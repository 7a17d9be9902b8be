// SPDX-License-Identifier: GPL-2.0
/* Module init and exit of iscsi_trgt, the IET iSCSI target. */
#include <linux/module.h>
#include <net/genetlink.h>

#include "iet.h"

static int __init iet_init(void)
{
	int ret;

	iet_opcodes_init();
	ret = iet_buf_init();
	if (ret)
		return ret;
	ret = iet_cmd_cache_init();
	if (ret)
		goto out_buf;
	ret = iet_conn_init();
	if (ret)
		goto out_cache;
	ret = iet_sanitize_module_init();
	if (ret)
		goto out_conn;
	ret = iet_procfs_init();
	if (ret)
		goto out_sanitize;
	ret = iet_netlink_init();
	if (ret)
		goto out_procfs;
	pr_info("iSCSI Enterprise Target loaded\n");
	return 0;

out_procfs:
	iet_procfs_exit();
out_sanitize:
	iet_sanitize_module_exit();
out_conn:
	iet_conn_exit();
out_cache:
	iet_cmd_cache_exit();
out_buf:
	iet_buf_exit();
	return ret;
}

static void __exit iet_exit(void)
{
	/*
	 * Refuse new requests and close what runs, while ietd can still hear
	 * of each connection and session closed; then the family goes.
	 */
	iet_targets_destroy();
	iet_cmd_wait_all();	/* commands left in the backend */
	iet_sanitize_module_exit();	/* operations of deleted LUNs end */
	rcu_barrier();		/* a closing backing's callback queues its close */
	iet_conn_exit();	/* waits for the last connection teardown, close */
	iet_netlink_exit();
	iet_procfs_exit();
	iet_cmd_cache_exit();
	iet_buf_exit();
	pr_info("iSCSI Enterprise Target unloaded\n");
}

module_init(iet_init);
module_exit(iet_exit);

MODULE_DESCRIPTION("iSCSI Enterprise Target: an in-kernel iSCSI target");
MODULE_LICENSE("GPL");
MODULE_VERSION("2.0.0");
MODULE_ALIAS_GENL_FAMILY(IET_GENL_NAME);
