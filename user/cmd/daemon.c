// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval daemon: the options, then lib/daemon/service.c runs it. */
#include <stdio.h>

#include "caps.h"
#include "cmd.h"
#include "daemon/service.h"
#include "live/live.h"
#include "settings.h"

extern const struct command cmd_daemon;

#define STR_(x) #x
#define STR(x) STR_(x)

/* The keys these options set, as the configuration file names them. */
static int option_key(int opt, struct daemon_options *o, const char **key)
{
	switch (opt) {
	case 'l':
		o->have_listen = true;
		*key = "listen";
		return 0;
	case 'n':
		o->have_interval = true;
		*key = "interval";
		return 0;
	case 'i':
		*key = "interface";
		return 0;
	}
	return -1;
}

enum { OPT_CHECK = OPT_LONG };

/* What the options ask, beside the configuration they override. */
struct daemon_cli {
	struct daemon_options o;
	bool check;
};

static int daemon_option(void *ctx, int opt, const char *arg)
{
	struct daemon_cli *cli = ctx;
	const char *key;
	char err[512];

	if (opt == 'c') {
		cli->o.config_path = arg;
	} else if (opt == OPT_CHECK) {
		cli->check = true;
	} else if (!option_key(opt, &cli->o, &key) && config_set(&cli->o.overrides, key, arg, err, sizeof(err))) {
		return command_usage_error(&cmd_daemon, "%s", err);
	}
	return 0;
}

static int do_daemon(int argc, char **argv)
{
	struct daemon_cli cli = {};
	struct daemon_config cfg;
	int err;

	config_defaults(&cli.o.overrides);
	err = command_options(&cmd_daemon, argc, argv, daemon_option, &cli);
	if (err)
		return err;
	if (optind != argc)
		return command_usage_error(&cmd_daemon, "unexpected argument '%s'", argv[optind]);
	if (daemon_config_load(&cli.o, &cfg))
		return EXIT_USAGE;
	if (cli.check) {
		printf("%s: OK\n", cli.o.config_path ?: "options");
		return 0;
	}
	if (require_caps(true))
		return 1;
	return daemon_run(&cli.o, &cfg);
}

static const struct cmd_opt daemon_opts[] = {
	{ .heading = "Options (they override the file, on every reload too):" },
	{ .name = "config", .key = 'c', .arg = required_argument, .meta = "FILE",
	  .help = "the configuration file, e.g. " DAEMON_DEFAULT_CONFIG ";\n"
		  "without one, the defaults and these options" },
	{ .name = "listen", .key = 'l', .arg = required_argument, .meta = "ADDR:PORT",
	  .help = "where to serve metrics (the listen key)" },
	{ .name = "interval", .key = 'n', .arg = required_argument, .meta = "S",
	  .help = "seconds between JSON lines (the interval key)" },
	{ .name = "interface", .key = 'i', .arg = required_argument, .meta = "IFACE",
	  .help = "serve IFACE (repeatable; replaces the file's interfaces)" },
	{ .name = "check", .key = OPT_CHECK, .arg = no_argument,
	  .help = "check the configuration, print 'FILE: OK' and exit\n"
		  "(0, or 2 with the error): run it before a SIGHUP" },
	CMD_OPT_END,
};

const struct command cmd_daemon = {
	.name = "daemon",
	.args = "[--config FILE] [--listen ADDR:PORT] [--interval S] [--interface IFACE]... [--check]",
	.summary = "keep interfaces attached, export the counters to Prometheus, log what moved",
	.help =
		"Attaches roceval to every configured interface, or adopts the attachment already\n"
		"pinned there (counters continue where they were), then runs until SIGTERM or\n"
		"SIGINT.  With no interface configured it serves every attachment under\n"
		ROCEVAL_PIN_ROOT " of its network namespace, picks up new\n"
		"ones at each interval and drops those detached.\n\n"
		"  GET /metrics on the listen address: Prometheus text format, read at each scrape:\n"
		"      roceval_violations_total{interface,rule,severity}  one series per rule\n"
		"      roceval_frames_total, roceval_roce_frames_total{family}, roceval_dropped_frames_total,\n"
		"      roceval_icrc_frames_total{result=ok|bad|unchecked|skipped},\n"
		"      roceval_trace_frames_total{result=sampled|skipped}  (all {interface,...})\n"
		"      roceval_flows and roceval_flows_max{interface}  flow table occupancy\n"
		"      roceval_latency_seconds_bucket{kind,le}, _sum and _count: histograms by kind (ack,\n"
		"      read, nak_retx, rnr_retry, ce_cnp)\n"
		"      roceval_reorder_distance_psns_bucket{le}, _sum and _count: how far behind the\n"
		"      newest PSN of their flow reordered packets came (psn_reorder)\n"
		"      roceval_cm_rejections_total{reason}  CM REJ messages by the reason they carry\n"
		"      roceval_mac_control_frames_total{kind=pfc|other|malformed},\n"
		"      roceval_pfc_frames_total{priority,kind=xoff|xon}, roceval_pfc_pause_quanta_total{priority},\n"
		"      roceval_pfc_pause_seconds_total{priority} (given link_speed), and the histogram\n"
		"      roceval_cnp_reaction_ratio_bucket{le}, _sum and _count (a flow's rate after a CNP\n"
		"      over before it)\n"
		"      roceval_mirror_frames_total, roceval_mirror_lost_frames_total and the other\n"
		"      mirror_* totals; per mirror session, {interface,source,encap,session}:\n"
		"      roceval_mirror_session_frames_total, roceval_mirror_session_bytes_total,\n"
		"      roceval_mirror_session_lost_frames_total; and roceval_mirror_sessions and\n"
		"      roceval_mirror_sessions_max{interface}, sessions listed and the bound of those\n"
		"      series (" STR(ROCEVAL_MIRROR_SESSIONS) " an interface; a listed session stays until detach)\n"
		"      roceval_attached_info{interface,mode,hook,prog_id}, roceval_attached_since_seconds,\n"
		"      roceval_start_time_seconds and roceval_build_info{version}.\n"
		"      Served by libmicrohttpd: idle or slow clients time out after "
		STR(HTTP_CONN_TIMEOUT_S) " s and never\n"
		"      delay a scrape; at most " STR(HTTP_MAX_CONNS) " connections at once.\n"
		"  Every interval, one JSON line per interface whose counters moved:\n"
		"      {\"time\", \"interface\", \"seconds\", \"delta\": {...}, \"total\": {...}}, with\n"
		"      only the counters that moved, frame totals and \"rules\" as in replay --json.\n"
		"  SIGHUP re-reads the configuration.  One with an error is rejected with its\n"
		"      file and line, and the daemon goes on with the running one.  New interfaces\n"
		"      are attached, removed ones are left attached but no longer served, settings\n"
		"      are applied to every interface.\n"
		"  SIGTERM, SIGINT: exit, leaving the programs attached and counting unless\n"
		"      detach_on_exit = yes.\n\n"
		"A second daemon for an interface already served refuses to start: each interface\n"
		"is locked through " DAEMON_LOCK_DIR "/daemon-netns-INODE-IFACE.lock.  Messages go to stderr.\n\n",
	.opts = daemon_opts,
	.col = 25,
	.more = "\n"
		"Configuration file: one 'key = value' per line; '#' starts a comment at the start\n"
		"of a line or after white space.  Keys:\n"
		"  interface = IFACE\n"
		"      an interface to attach to or adopt; repeat the line for more (at most 64).\n"
		"      Without any: serve the attachments of this network namespace.\n"
		"  listen = ADDR:PORT|none\n"
		"      address for /metrics: IPv4:PORT or [IPv6]:PORT, bound exactly there;\n"
		"      default " DAEMON_DEFAULT_LISTEN ".  none: no HTTP server.\n"
		"  interval = S\n"
		"      seconds between JSON lines and checks for removed attachments; default 10\n"
		"  mode = native|generic|auto|tc\n"
		"      how to attach an interface that is not attached yet; default auto\n"
		"  detach_on_exit = yes|no\n"
		"      detach every served interface when stopping; default no\n"
		"  json_log = -|none|FILE\n"
		"      where the JSON lines go: stdout (default), nowhere, or appended to FILE\n"
		"\nRun-time settings, applied to every served interface at start and on reload (only\n"
		"the keys named; the others keep their current values):\n"
		SETTINGS_HELP_CONF
		"\nExample:\n"
		"  # /etc/roceval/roceval.conf\n"
		"  interface = eth0\n"
		"  interface = eth1\n"
		"  listen = 127.0.0.1:9435\n"
		"  pmtu = 4096\n\n"
		"  roceval daemon --config /etc/roceval/roceval.conf\n"
		"  curl -s 127.0.0.1:9435/metrics | grep 'rule=\"icrc\"'\n"
		"  kill -HUP $(pidof roceval)     # re-read the file\n",
	.run = do_daemon,
};
