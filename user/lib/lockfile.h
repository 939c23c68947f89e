/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_LOCKFILE_H
#define ROCEVAL_LOCKFILE_H

#include <stdbool.h>

/*
 * Lock files that do not pile up: lockfile_lock() creates and flocks path
 * (and its directory), waiting or not; lockfile_unlock() removes it and lets
 * go.  A locker that finds the file it locked removed retries on a new one.
 * Returns the fd, -EWOULDBLOCK when held elsewhere and !wait, or -errno.
 */
int lockfile_lock(const char *path, bool wait);
void lockfile_unlock(const char *path, int fd);

#endif
