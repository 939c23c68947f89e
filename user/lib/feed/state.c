// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A feed's pinned state: read back for status, and what it says in words. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "feeder.h"
#include "live/live.h"

bool feed_state_read(const struct live_iface *li, struct feed_state *st)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	bool ok;
	int fd;

	if (li->mode != LIVE_MODE_FEED)
		return false;
	fd = pin_get_ns(li->netns, li->ifname, "feed");
	if (fd < 0)
		return false;
	/* another build's state is not read into this one's struct */
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.value_size == sizeof(*st) &&
	     !bpf_map_lookup_elem(fd, &key, st);
	close(fd);
	return ok;
}

/* The start time of process pid, in clock ticks after boot (/proc/PID/stat field 22), or 0. */
unsigned long long feed_pid_start(unsigned int pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024];
	const char *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* after the command name, which may hold spaces and parentheses: field 3 on */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

bool feed_running(const struct feed_state *st)
{
	return st->end == FEED_RUNNING && st->pid && feed_pid_start(st->pid) == st->pid_start;
}

const char *feed_icrc_word(const struct feed_state *st)
{
	switch (st->icrc) {
	case FEED_ICRC_VALID:
	case FEED_ICRC_UNPROVEN:
		return "checked";
	case FEED_ICRC_ARTEFACT:
		return "off: capture-path artefact";
	}
	return feed_running(st) ? "deciding" : "undecided";
}

const char *feed_end_word(const struct feed_state *st)
{
	switch (st->end) {
	case FEED_END_EOF:
		return "end of stream";
	case FEED_END_BROKEN:
		return "broken stream";
	case FEED_END_STOPPED:
		return "stopped";
	case FEED_END_FAILED:
		return "failed";
	case FEED_END_DETACHED:
		return "detached";
	}
	/* a feeder killed outright never wrote its end */
	return feed_running(st) ? "running" : "feeder gone";
}

const char *feed_clock_word(const struct feed_state *st)
{
	return st->clock == FEED_CLOCK_NIC ? "nic" : st->clock == FEED_CLOCK_POLL ? "poll" : "capture";
}

static const char *const clock_text[] = {
	[FEED_CLOCK_CAPTURE] = "the capture's timestamps",
	[FEED_CLOCK_NIC] = "the NIC's completion timestamps",
	[FEED_CLOCK_POLL] = "the host's clock when the sniffer's ring is polled (not the wire's time)",
};

void feed_status_text(const struct feed_state *st)
{
	const char *src = !st->rdma && !strcmp(st->source, "-") ? "standard input" : st->source;

	printf("  %-12s %s (%s)\n", "source", src, st->rdma ? "RDMA sniffer" : "pcap stream");
	if (feed_running(st))
		printf("  %-12s running (pid %u), %llu frames so far\n", "feed", st->pid,
		       (unsigned long long)st->frames);
	else
		printf("  %-12s ended (%s) after %llu frames; the counters stay until 'roceval detach'\n", "feed",
		       feed_end_word(st), (unsigned long long)st->frames);
	printf("  %-12s %s\n", "frame times", clock_text[st->clock < FEED_CLOCK_POLL + 1 ? st->clock : 0]);
	switch (st->icrc) {
	case FEED_ICRC_VALID:
		printf("  %-12s checked: ICRCs valid in the copies, which are the wire's bytes\n", "icrc");
		break;
	case FEED_ICRC_UNPROVEN:
		printf("  %-12s checked: no valid ICRC seen, and no two hosts failing both ways\n", "icrc");
		break;
	case FEED_ICRC_ARTEFACT:
		printf("  %-12s off: every ICRC failed, both ways between %s:\n"
		       "  %-12s the copies are not the wire's bytes (a capture path that rewrites frames,\n"
		       "  %-12s as the mlx5 sniffer does); icrc_sample=off for this feed\n",
		       "icrc", st->hosts, "", "");
		break;
	default:
		if (feed_running(st))
			printf("  %-12s deciding: RoCEv2 frames are held until their ICRCs show the kind of copy\n",
			       "icrc");
		else
			printf("  %-12s undecided: no whole RoCEv2 frame came\n", "icrc");
	}
}
