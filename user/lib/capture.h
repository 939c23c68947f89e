/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Writing captures: classic pcap (microseconds) or pcapng (nanoseconds, one
 * interface description per interface, a comment per packet).  What the
 * generator writes and what `roceval trace --pcap` writes is one format.
 */
#ifndef ROCEVAL_CAPTURE_H
#define ROCEVAL_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct capture {
	FILE *f;
	bool pcapng;
};

/*
 * Writes the file header: for pcapng a section header naming `app` and
 * one interface description per name in `ifnames` (packets name them by
 * index); classic pcap has one unnamed interface.  0 or -EIO, errno set.
 */
int capture_start(struct capture *c, FILE *f, bool pcapng, const char *app, const char *const *ifnames,
		  unsigned int n_ifnames);

/* One frame of `len` bytes on the wire, `cap` of them kept; `comment` only in pcapng (NULL: none). */
int capture_frame(struct capture *c, uint32_t ifidx, uint64_t ts_ns, const uint8_t *data, uint32_t cap,
		  uint32_t len, const char *comment);

#endif
