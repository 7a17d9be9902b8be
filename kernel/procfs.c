// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/iet/volume and /proc/net/iet/session, in IET's formats exactly:
 * cluster agents and monitoring scripts parse them with regular expressions.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>

#include "iet.h"

static struct proc_dir_entry *iet_proc_dir;

static const char *const iomode_names[] = {
	[IET_IOMODE_WT] = "wt",
	[IET_IOMODE_WB] = "wb",
	[IET_IOMODE_RO] = "ro",
};

static int volume_show(struct seq_file *m, void *v)
{
	struct iet_target *target;
	struct iet_lun *lun;
	unsigned long tid, index;

	mutex_lock(&iet_mutex);
	xa_for_each(&iet_targets, tid, target) {
		seq_printf(m, "tid:%u name:%s\n", target->tid, target->name);
		xa_for_each(&target->luns, index, lun) {
			seq_printf(m, "\tlun:%u state:0 iotype:%s iomode:%s blocks:%llu blocksize:%u",
				   lun->lun, lun->ops->name,
				   iomode_names[lun->iomode], READ_ONCE(lun->blocks),
				   lun->block_size);
			if (lun->path[0])
				seq_printf(m, " path:%s", lun->path);
			seq_putc(m, '\n');
		}
	}
	mutex_unlock(&iet_mutex);
	return 0;
}

static void show_conn(struct seq_file *m, struct iet_conn *conn)
{
	seq_printf(m, "\t\tcid:%u ip:", conn->cid);
	if (conn->peer.ss_family == AF_INET6)
		seq_printf(m, "[%pI6c]",
			   &((struct sockaddr_in6 *)&conn->peer)->sin6_addr);
	else
		seq_printf(m, "%pI4",
			   &((struct sockaddr_in *)&conn->peer)->sin_addr);
	seq_printf(m, " state:%s hd:%s dd:%s\n",
		   iet_stopping(conn) ? "closing" : "active",
		   conn->hdigest ? "crc32c" : "none",
		   conn->ddigest ? "crc32c" : "none");
}

static int session_show(struct seq_file *m, void *v)
{
	struct iet_session *session;
	struct iet_target *target;
	struct iet_conn *conn;
	unsigned long tid;

	mutex_lock(&iet_mutex);
	xa_for_each(&iet_targets, tid, target) {
		seq_printf(m, "tid:%u name:%s\n", target->tid, target->name);
		mutex_lock(&target->lock);
		list_for_each_entry(session, &target->sessions, list) {
			seq_printf(m, "\tsid:%llu initiator:%s\n", session->sid,
				   session->initiator);
			list_for_each_entry(conn, &session->conns, list)
				show_conn(m, conn);
		}
		mutex_unlock(&target->lock);
	}
	mutex_unlock(&iet_mutex);
	return 0;
}

int __init iet_procfs_init(void)
{
	iet_proc_dir = proc_mkdir("iet", init_net.proc_net);
	if (!iet_proc_dir)
		return -ENOMEM;
	if (!proc_create_single("volume", 0444, iet_proc_dir, volume_show) ||
	    !proc_create_single("session", 0444, iet_proc_dir, session_show)) {
		remove_proc_subtree("iet", init_net.proc_net);
		return -ENOMEM;
	}
	return 0;
}

void iet_procfs_exit(void)
{
	remove_proc_subtree("iet", init_net.proc_net);
}
