/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_USER_MIRRORS_H
#define ROCEVAL_USER_MIRRORS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "live/live.h"
#include "roceval.h"

struct json_writer;

/* One mirror session as the maps hold it, its counts summed over the CPUs. */
struct mirror_entry {
	struct roceval_mirror_key key;
	__u32 slot;
	__u64 frames, bytes, lost, truncated, nested;
	__u32 last_seq;
	bool numbered; /* its sequence numbers advanced: loss is counted */
	bool seq_seen; /* it carries sequence numbers at all */
};

/* The id of an encapsulation ("erspan2"), "?" for none. */
const char *mirror_encap_id(unsigned int encap);
struct bpf_object;


/* The mirror session maps of a loaded object (-1 each it has none). */
struct mirror_fds mirror_fds_of(const struct bpf_object *obj);

/*
 * Every session of fds->sessions with its counts, ordered by source,
 * encapsulation and session, into *out (the caller frees it; NULL with 0).
 * The count or -errno; any fd below 0 reads none.
 */
int mirrors_collect(const struct mirror_fds *fds, struct mirror_entry **out);
/*
 * "mirrors": [{"source", "encap", "session", "frames", "bytes", "lost",
 * "numbered", "truncated", "nested", "last_seq"}] into the object being written.
 */
void mirrors_json(struct json_writer *w, const struct mirror_entry *e, int n);
/* A sessions table (nothing when there is none). */
void mirrors_print_table(FILE *f, const struct mirror_entry *e, int n);

#endif
