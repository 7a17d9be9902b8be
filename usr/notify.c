// SPDX-License-Identifier: GPL-2.0
/* sd_notify: a datagram to $NOTIFY_SOCKET. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	ssize_t n;
	int fd;

	if (!path || !*path)
		return 0;
	/* A path, or "@name" for the abstract namespace. */
	if ((path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sun.sun_path))
		return -EINVAL;
	strcpy(sun.sun_path, path);
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	else
		len++;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
		   (struct sockaddr *)&sun, len);
	close(fd);
	return n < 0 ? -errno : 0;
}
