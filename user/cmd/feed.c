// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval feed: a capture stream judged as it arrives, its counters pinned under a name. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "caps.h"
#include "cmd.h"
#include "feed/feeder.h"
#include "live/live.h"
#include "live/loader.h"
#include "log.h"
#include "numbers.h"
#include "replay/offline.h"
#include "settings.h"

extern const struct command cmd_feed;

struct feed_opts {
	struct roceval_settings cfg;
	__u32 flow_entries;
	char ports[64]; /* every --port so far: the ports setting takes the list */
	char dev[64];	/* --rdma DEV */
	unsigned int port; /* --rdma's PORT, 1 by default */
};

static int set_or_usage(struct roceval_settings *cfg, const char *key, const char *value)
{
	char err[256];

	if (settings_set(cfg, key, value, err, sizeof(err)))
		return command_usage_error(&cmd_feed, "%s", err);
	return 0;
}

static int rdma_option(struct feed_opts *o, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	__u32 port = 1;

	if (!len || len >= sizeof(o->dev))
		return command_usage_error(&cmd_feed, "--rdma %s: expected DEV[:PORT], an RDMA device's name", arg);
	if (colon && (!parse_u32(colon + 1, 255, &port) || !port))
		return command_usage_error(&cmd_feed, "--rdma %s: PORT must be a number from 1 to 255", arg);
	memcpy(o->dev, arg, len);
	o->dev[len] = 0;
	o->port = port;
	return 0;
}

static int feed_option(void *ctx, int opt, const char *arg)
{
	struct feed_opts *o = ctx;
	char msg[256];

	switch (opt) {
	case 'r':
		return rdma_option(o, arg);
	case 'm':
		return set_or_usage(&o->cfg, "pmtu", arg);
	case 'k':
		return set_or_usage(&o->cfg, "pkeys", arg);
	case 'p':
		if (strlen(o->ports) + strlen(arg) + 2 > sizeof(o->ports))
			return command_usage_error(&cmd_feed, "too many --port values");
		if (*o->ports)
			strcat(o->ports, ",");
		strcat(o->ports, arg);
		return set_or_usage(&o->cfg, "ports", o->ports);
	case 'f':
		if (!parse_flow_entries(arg, &o->flow_entries))
			return command_usage_error(&cmd_feed, "--flows %s: expected 1 to %u flows", arg,
						   ROCEVAL_MAX_FLOW_ENTRIES);
		return 0;
	case 's':
		if (settings_assign(&o->cfg, arg, msg, sizeof(msg)))
			return command_usage_error(&cmd_feed, "%s", msg);
		return 0;
	}
	return 0;
}

/* The stream FILE ("-": standard input), of a link type replay reads; NULL with the reason said. */
static pcap_t *open_stream(const char *name, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	const char *what = strcmp(path, "-") ? path : "standard input";
	pcap_t *pcap = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);

	if (!pcap) {
		pr_warn("%s: %s: %s", name, what, errbuf);
		return NULL;
	}
	if (to_ether_refused(pcap_datalink(pcap))) {
		pr_warn("%s: %s: %s", name, what, to_ether_refused(pcap_datalink(pcap)));
		pcap_close(pcap);
		return NULL;
	}
	return pcap;
}

static void on_stop(int sig)
{
	feed_stop = 1;
}

/* SIGINT and SIGTERM end the feed: they interrupt the read (no SA_RESTART) and what came is kept. */
static void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Runs the source into f to its end and says how it ended; the exit status. */
static int run(struct feed *f, const char *name, pcap_t *pcap, struct feed_rdma *sniffer)
{
	const char *msg = "";
	unsigned long long frames;
	enum feed_end end;
	int err;

	catch_stop();
	if ((err = feed_start(f)))
		end = FEED_END_FAILED;
	else
		end = sniffer ? feed_rdma_run(f, sniffer, &msg) : feed_pcap(f, pcap, &msg);
	err = feed_close(f, &end, &frames);
	if (end == FEED_END_DETACHED) {
		printf("%s: detached; the feed ends after %llu frames\n", name, frames);
		return 0;
	}
	if (end == FEED_END_BROKEN) {
		pr_warn("%s: the stream broke after %llu frames: %s", name, frames, msg);
		return EXIT_RUNTIME;
	}
	if (end == FEED_END_FAILED || err) {
		pr_warn("%s: the feed failed after %llu frames%s%s", name, frames, *msg ? ": " : "", msg);
		return EXIT_RUNTIME;
	}
	printf("%s: %llu frames fed (%s); the counters stay until 'roceval detach %s'\n", name, frames,
	       end == FEED_END_EOF ? "end of stream" : "stopped", name);
	return 0;
}

static int do_feed(int argc, char **argv)
{
	struct feed_opts o = { .flow_entries = ROCEVAL_DEFAULT_FLOWS };
	struct feed_rdma *sniffer = NULL;
	enum feed_clock clock = FEED_CLOCK_CAPTURE;
	const char *name, *path = "-";
	char source[80];
	pcap_t *pcap = NULL;
	struct feed *f;
	int err;

	settings_defaults(&o.cfg);
	if ((err = command_options(&cmd_feed, argc, argv, feed_option, &o)))
		return err;
	if (optind == argc)
		return command_usage_error(&cmd_feed, "a NAME for the feed is required");
	name = argv[optind++];
	if (optind < argc && !*o.dev)
		path = argv[optind++];
	if (optind < argc)
		return command_usage_error(&cmd_feed, *o.dev ? "--rdma reads no FILE ('%s'?)" : "unexpected '%s'",
					   argv[optind]);
	if (!live_ifname_valid(name))
		return command_usage_error(&cmd_feed, "%s: not a valid name for a feed (an interface's: up to 15 "
					   "characters, no '/', ':' or spaces)", name);
	if (*o.dev) {
		if ((err = feed_rdma_open(o.dev, o.port, &sniffer, &clock)))
			return err == -EOPNOTSUPP ? EXIT_USAGE : EXIT_RUNTIME;
		snprintf(source, sizeof(source), "%s:%u", o.dev, o.port);
	} else if (!(pcap = open_stream(name, path))) {
		return EXIT_USAGE;
	} else {
		snprintf(source, sizeof(source), "%s", path);
	}
	err = EXIT_RUNTIME;
	roceval_set_flow_entries(o.flow_entries);
	if (!require_caps(true) && (f = feed_open(name, &o.cfg, source, sniffer, clock)))
		err = run(f, name, pcap, sniffer);
	if (pcap)
		pcap_close(pcap);
	feed_rdma_close(sniffer);
	return err;
}

static const struct cmd_opt feed_opts[] = {
	{ .heading = "Options:" },
	{ .name = "rdma", .key = 'r', .arg = required_argument, .meta = "DEV[:PORT]",
	  .help = "no stream: open the RDMA sniffer of device DEV (as ibv_devices\n"
		  "names it; PORT 1 by default) with libibverbs, a raw-packet QP\n"
		  "and an IBV_FLOW_ATTR_SNIFFER rule.  Needs CAP_NET_RAW and\n"
		  "CAP_NET_ADMIN; frames are timed by the NIC's completion\n"
		  "timestamps where it gives them, else when the ring is polled.\n"
		  "This path has not been run on RDMA hardware" },
	{ .name = "flows", .key = 'f', .arg = required_argument, .meta = "N",
	  .help = "flows the flow table is sized for (default 65536), fixed\n"
		  "for the name until detached" },
	CMD_OPTS_OFFLINE_SETTINGS,
	CMD_OPT_END,
};

const struct command cmd_feed = {
	.name = "feed",
	.args = "[--rdma DEV[:PORT]] [--flows N] [--pmtu N] [--pkey LIST] [--port N]... [--set KEY=VALUE]... NAME [FILE|-]",
	.summary = "validate a capture stream as it arrives, counters pinned under NAME",
	.help = "Reads a pcap or pcapng stream from FILE or standard input (Ethernet, Linux cooked or\n"
		"raw IP, as replay reads them) and runs its frames through the program replay runs,\n"
		"as they arrive: in batches, and at least every 200 ms, so the counters move while the\n"
		"stream runs.  Frames are timed by the capture's timestamps, as in a replay.  The\n"
		"maps are pinned under NAME as an attachment's are, so 'roceval status', 'stats NAME',\n"
		"'top NAME' and the daemon's /metrics (hook=\"feed\") show them.  They outlive the\n"
		"stream until 'roceval detach NAME'; a new feed of NAME continues them.  NAME is any\n"
		"name an interface could have, but not one roceval is attached to.\n\n"
		"This is how roceval sees the RoCE traffic of a NIC that offloads it: the NIC's own\n"
		"copy, from ibdump or from tcpdump on the RDMA sniffer.  Such a copy is not always the\n"
		"wire's bytes: the first frames are held until their ICRCs tell which kind it is.\n"
		"One valid ICRC, and the ICRCs are checked; every ICRC failing both ways between two\n"
		"hosts (the mlx5 sniffer's copies), and the feed says so in one line and turns ICRC\n"
		"checking off (icrc_sample=off), raising no icrc alarm for the capture path's\n"
		"artefact; neither within 1 s or 4096 frames, and they are checked.  'roceval status'\n"
		"says which.\n\n"
		"A stream that breaks mid-record ends the feed with one line; the frames before it\n"
		"stay counted.  SIGINT or SIGTERM end it as the end of the stream does.\n\n",
	.opts = feed_opts,
	.col = 22,
	.more = "\n"
		"Exit status: 0 when the stream ended (or SIGINT or SIGTERM ended the feed), 1 when it\n"
		"broke mid-record, BPF failed, the name is taken, or the RDMA device is missing or\n"
		"out of reach, 2 for a bad option, a stream that is not a capture or of another\n"
		"link type, or --rdma in a build without libibverbs.\n\n"
		"Examples:\n"
		"  ibdump -d mlx5_0 -w - | roceval feed mlx5_0\n"
		"  tcpdump -i eth1 -U -w - | roceval feed eth1-span\n"
		"  roceval feed --rdma mlx5_0:1 mlx5_0\n",
	.run = do_feed,
};
