/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Inside feed/: the feed as run.c keeps it and pin.c loads it. */
#ifndef ROCEVAL_FEED_INT_H
#define ROCEVAL_FEED_INT_H

#include <net/if.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "feeder.h"
#include "replay/offline.h"

/* A frame held while the ICRCs are undecided: its record, its bytes at `off` in the hold buffer. */
struct feed_held {
	__u32 caplen, wire;
	__u64 time_ns;
	size_t off;
};

struct feed {
	char name[IF_NAMESIZE];
	struct replay *r;
	int state_fd;
	struct feed_state st;
	struct feed_probe *probe;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t ticker, reader;
	bool ticking, quit;
	bool detached;	 /* the pins went: `roceval detach NAME` */
	ino_t dir_ino;	 /* of the pin directory, which a detach removes */
	int err; /* the ticker's failure, which the next frame returns */
	unsigned char *hold;
	size_t hold_used, hold_size;
	struct feed_held *held;
	__u32 nheld;
	struct timespec hold_since; /* CLOCK_MONOTONIC of the first frame held */
};

int feed_load(struct feed *f, const struct roceval_settings *cfg, enum feed_clock clock);
int feed_state_write(struct feed *f);
/* The inode of name's pin directory, 0 when it has none. */
ino_t pin_dir_ino(const char *name);

#endif
