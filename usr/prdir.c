// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prdir.h"
#include "readfile.h"

int prdir_make(const char *dir, char *err, size_t errlen)
{
	char path[4096];
	size_t i, len = strlen(dir);

	if (dir[0] != '/' || len >= sizeof(path)) {
		snprintf(err, errlen, "%s: not an absolute path", dir);
		return -EINVAL;
	}
	memcpy(path, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			int ret = -errno;

			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return ret;
		}
		path[i] = dir[i];
	}
	return 0;
}

int prdir_read(const char *param, char *buf, size_t len)
{
	char err[256], *data;
	size_t n;
	int ret;

	ret = read_small_file(param, 4096, true, &data, &n, err, sizeof(err));
	if (ret)
		return ret;
	while (n && (data[n - 1] == '\n' || data[n - 1] == ' '))
		n--;
	data[n] = '\0';
	ret = data[0] != '/' || strlen(data) != n ? -EINVAL :
	      n >= len ? -ENAMETOOLONG : 0;
	if (!ret)
		memcpy(buf, data, n + 1);
	free(data);
	return ret;
}
