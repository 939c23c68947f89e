// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lockfile.h"

int lockfile_lock(const char *path, bool wait)
{
	struct stat locked, named;
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST)
		return -errno;
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
			int err = -errno;

			close(fd);
			return err;
		}
		/* the holder before us may have removed the file: then this lock guards nothing */
		if (!fstat(fd, &locked) && !stat(path, &named) && locked.st_ino == named.st_ino)
			return fd;
		close(fd);
	}
}

void lockfile_unlock(const char *path, int fd)
{
	/* removed while still held, so nobody can lock it between the two */
	unlink(path);
	close(fd);
}
