// SPDX-License-Identifier: GPL-2.0
/* Daemonising, pid file and privilege dropping for ietd. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "params.h"

int daemon_start(void)
{
	int pfd[2];
	pid_t pid;
	char status;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(pfd[1]);
		/* EOF without a status: the child died in start-up. */
		if (read(pfd[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(pfd[0]);
	setsid();
	/* Do not pin a mount; "/" always exists. */
	(void)!chdir("/");
	umask(022);
	return pfd[1];
}

void daemon_ready(int fd, int status)
{
	char s = status;
	int null;

	if (fd < 0)
		return;
	if (!status) {
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
	}
	/* If the parent is gone there is no one to tell. */
	(void)!write(fd, &s, 1);
	close(fd);
}

int pidfile_write(const char *path, char *err, size_t errlen)
{
	char buf[32];
	int fd, n, ret;

	/*
	 * Written as root: a symlink planted where the pid file goes must
	 * not make us truncate the file it points to.
	 */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == ELOOP ? " (a symbolic link: refused)" : "");
		return ret;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, n) != n) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	close(fd);
	return 0;
}

int lookup_uid(const char *s, uid_t *uid, gid_t *primary_gid)
{
	struct passwd *pw;
	uint64_t n;

	if (!parse_number(s, &n) && n < (uid_t)-1) {
		*uid = n;
		pw = getpwuid(*uid);
		*primary_gid = pw ? pw->pw_gid : (gid_t)n;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -ENOENT;
	*uid = pw->pw_uid;
	*primary_gid = pw->pw_gid;
	return 0;
}

int lookup_gid(const char *s, gid_t *gid)
{
	struct group *gr;
	uint64_t n;

	if (!parse_number(s, &n) && n < (gid_t)-1) {
		*gid = n;
		return 0;
	}
	gr = getgrnam(s);
	if (!gr)
		return -ENOENT;
	*gid = gr->gr_gid;
	return 0;
}

static int set_caps(uint64_t caps)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = caps;
	data[1].effective = data[1].permitted = caps >> 32;
	return syscall(SYS_capset, &hdr, data);
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

int keep_runtime_caps(uint64_t *kept, char *err, size_t errlen)
{
	const uint64_t keep = 1ull << CAP_NET_ADMIN | 1ull << CAP_DAC_OVERRIDE;
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	uint64_t permitted;
	int cap;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -errno;
	}
	permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
	/* Without CAP_SETPCAP (systemd's bounding set) it stays as given. */
	if (permitted & 1ull << CAP_SETPCAP)
		for (cap = 0; cap < 64; cap++)	/* EINVAL past the last */
			if (!(keep & 1ull << cap))
				prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	if (set_caps(keep & permitted)) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -errno;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -errno;
	}
	*kept = keep & permitted;
	return 0;
}

int drop_privileges(bool set_uid, uid_t uid, bool set_gid, gid_t gid,
		    char *err, size_t errlen)
{
	const uint64_t keep = 1ull << CAP_NET_ADMIN;

	if (!set_uid && !set_gid)
		return 0;
	/* Keep the permitted set over setuid, then trim it to what we need. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
		return -errno;
	}
	if (set_gid && (setgroups(1, &gid) || setresgid(gid, gid, gid))) {
		snprintf(err, errlen, "cannot change to gid %u: %s",
			 (unsigned int)gid, strerror(errno));
		return -errno;
	}
	if (set_uid && setresuid(uid, uid, uid)) {
		snprintf(err, errlen, "cannot change to uid %u: %s",
			 (unsigned int)uid, strerror(errno));
		return -errno;
	}
	if (set_caps(keep) || !has_cap(CAP_NET_ADMIN)) {
		snprintf(err, errlen,
			 "cannot keep CAP_NET_ADMIN after dropping privileges: %s",
			 strerror(errno));
		return -EPERM;
	}
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return 0;
}
