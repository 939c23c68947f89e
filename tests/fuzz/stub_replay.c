// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * user/lib/replay/batch.c without BPF: the pcap target fuzzes libpcap's parser
 * and the capture loop of user/lib/replay/reader.c thousands of times a
 * second, which loading the real program each time would not allow.  Each
 * frame is copied at the length libpcap reports, so AddressSanitizer sees
 * any read past the data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay/offline.h"

struct replay {
	__u64 frames;
};

struct replay *replay_new(const struct roceval_settings *cfg)
{
	return calloc(1, sizeof(struct replay));
}

int replay_frame(struct replay *r, const void *data, size_t len, __u32 wire, __u64 time_ns)
{
	void *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, len);
	free(copy);
	r->frames++;
	return 0;
}

int replay_flush(struct replay *r)
{
	return 0;
}

int replay_finish(struct replay *r)
{
	return 0;
}

void replay_free(struct replay *r)
{
	free(r);
}
