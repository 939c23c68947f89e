/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A capture file run through the validator (batch.h): pcap or pcapng,
 * Ethernet, Linux cooked or raw IP, read with libpcap, each frame with its capture
 * time and its length on the wire.
 */
#ifndef ROCEVAL_REPLAY_FILE_H
#define ROCEVAL_REPLAY_FILE_H

#include <stdbool.h>
#include <linux/types.h>

#include "batch.h"

struct pcap;

/* libpcap's message (PCAP_ERRBUF_SIZE; reader.c checks it) and ours around it */
#define REPLAY_DAMAGE_LEN (256 + 64)

struct replay_file {
	const char *path;
	struct pcap *pcap; /* pcap_t */
	char *buf;	   /* its stdio buffer */
	unsigned long long frames;     /* replayed */
	unsigned long long unrecorded; /* of them, cut at snap_unrecorded with the cut recorded as their length */
	__u32 snap_unrecorded;	       /* a snap length the capture did not record, or 0 */
	bool damaged;		       /* the file ends in damage after `frames` frames */
	char damage[REPLAY_DAMAGE_LEN];
};

/* Opens `path` ("-": standard input); 0, or -EINVAL having said in one line why it cannot be read. */
int replay_file_open(struct replay_file *f, const char *path);

/*
 * Runs every frame through `r`, then what is queued; the capture goes on
 * until replay_finish(), so that several files may make one.  Damage part
 * way is not an error here: `damaged` says so and the frames before it
 * count.
 */
int replay_file_run(struct replay_file *f, struct replay *r);

void replay_file_close(struct replay_file *f);

/*
 * At most how many frames one capture holds, from the files' sizes now, for
 * sizing the tables (roceval_set_frame_bound()): the largest file's, as each
 * is judged from empty tables, or with `join` (one capture) all of theirs;
 * 0 when one is not a regular file (standard input, a pipe), whose size says
 * nothing.
 */
__u64 replay_frame_bound(char *const *paths, int n, bool join);

#endif
