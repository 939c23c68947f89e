/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* For targets whose parser opens a file: the fuzz input as one, through a memfd. */
#ifndef ROCEVAL_FUZZ_INPUT_H
#define ROCEVAL_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes the input to a memfd and its /proc path to path; returns the fd to close, or -1. */
static inline int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz-input", 0);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
