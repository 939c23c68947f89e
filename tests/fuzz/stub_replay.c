// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * user/replay.c and the bits of main.c and loader.c that `roceval replay`
 * calls, without BPF: the pcap target fuzzes libpcap's parser and the
 * capture loop of cmd_replay.c thousands of times a second, which loading
 * the real program each time would not allow.  Each frame is copied at the
 * length libpcap reports, so AddressSanitizer sees any read past the data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cmd.h"
#include "common.h"
#include "flows.h"
#include "replay.h"

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

int replay_counters(struct replay *r, struct roceval_counters *out)
{
	memset(out, 0, sizeof(*out));
	out->total[TOTAL_FRAMES] = r->frames;
	return 0;
}

/* An empty table of the real layout, so the flow output path runs too. */
int replay_flows_fd(struct replay *r)
{
	static int fd = -1;

	if (fd < 0)
		fd = bpf_map_create(BPF_MAP_TYPE_HASH, "flows", sizeof(struct roceval_flow_key),
				    sizeof(struct roceval_flow), 16, NULL);
	return fd;
}

void replay_cm_fds(struct replay *r, int *conns_fd, int *ends_fd, int *rej_fd)
{
	*conns_fd = *ends_fd = *rej_fd = -1;
}

void replay_free(struct replay *r)
{
	free(r);
}

void roceval_set_flow_entries(__u32 entries)
{
}

int command_usage_error(const struct command *cmd, const char *fmt, ...)
{
	return EXIT_USAGE;
}

int command_bad_option(const struct command *cmd, char **argv)
{
	return EXIT_USAGE;
}
