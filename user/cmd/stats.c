// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cmd.h"
#include "live/live.h"
#include "log.h"
#include "numbers.h"
#include "report/report.h"

extern const struct command cmd_stats;

/* The previous reading of an interface, for the rates of the next report. */
struct reading {
	struct roceval_counters c;
	double t; /* CLOCK_MONOTONIC seconds */
};

/*
 * Reads li and reports against prev, which becomes this reading.  The first
 * report averages over the attachment's whole life: the counters were zero
 * when it was attached.
 */
static int stats_once(const struct live_iface *li, struct reading *prev, bool first, bool json, __u32 top)
{
	double tr[TOTAL__COUNT], rr[RULE__COUNT];
	struct stats_report r = { .total_rates = tr, .rule_rates = rr, .since_attach = first, .top = top };
	struct reading cur;
	int err = counters_read(li->counters_fd, &cur.c);

	if (err) {
		pr_warn("%s: Couldn't read the counters: %s", li->ifname, strerror(-err));
		return err;
	}
	cur.t = mono_now();
	if (first) {
		memset(&prev->c, 0, sizeof(prev->c));
		prev->t = cur.t - (boot_now_ns() - li->attached_boot_ns) / 1e9;
	}
	r.c = &cur.c;
	r.window = cur.t - prev->t;
	counters_rates(&prev->c, &cur.c, r.window, tr, rr);
	*prev = cur;
	return stats_report(li, &r, json);
}

/* --watch 2 as well as --watch=2; false for a bad number of seconds. */
static bool parse_watch(int argc, char **argv, double *interval)
{
	char *end;

	*interval = 1;
	if (!optarg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
		optarg = argv[optind++];
	if (!optarg)
		return true;
	*interval = strtod(optarg, &end);
	return !*end && *interval >= 0.1 && *interval <= 86400;
}

static int do_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "top", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_iface li[LIVE_MAX_IFACES];
	struct reading prev[LIVE_MAX_IFACES];
	__u32 top = 20;
	double interval = 0;
	bool json = false, watch = false;
	int n, opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, ":jw::t:", opts, NULL)) != -1) {
		if (opt == 'j') {
			json = true;
		} else if (opt == 't') {
			if (!parse_u32(optarg, 1000000, &top))
				return command_usage_error(&cmd_stats, "--top %s: expected a number of flows", optarg);
		} else if (opt == 'w') {
			watch = true;
			if (!parse_watch(argc, argv, &interval))
				return command_usage_error(&cmd_stats, "--watch %s: expected seconds, 0.1-86400",
							   optarg);
		} else {
			return command_bad_option(&cmd_stats, opt, argv);
		}
	}
	n = command_open_ifaces(&cmd_stats, argc, argv, li);
	if (n < 0)
		return -n;
	stop_on_signals();
	for (bool first = true; !err && !stop_requested; first = false) {
		if (!first) {
			nap(interval);
			if (stop_requested)
				break;
			if (!json)
				putchar('\n');
		}
		for (int i = 0; i < n && !err; i++) {
			err = stats_once(&li[i], &prev[i], first, json, top);
			if (!json && i + 1 < n)
				putchar('\n');
		}
		if (!watch)
			break;
	}
	live_close_all(li, n);
	return err ? 1 : 0;
}

const struct command cmd_stats = {
	.name = "stats",
	.args = "[IFACE] [--json] [--watch [SECONDS]] [--top N]",
	.summary = "print the live counters with per-second rates",
	.help = "Reads the pinned counters of IFACE, or of every attached interface of this network\n"
		"namespace, sums the per-CPU values and prints every frame total, each rule that\n"
		"fired and the flows with the most violations, with rates.  The first report's rates\n"
		"are averages since attach; with --watch each later report gives the rates over its\n"
		"interval, measured on the monotonic clock.\n\n"
		"Options:\n"
		"  -j, --json            one JSON object per interface and report, one per line: the\n"
		"                        'roceval replay --json' fields (flows included) plus\n"
		"                        \"interface\", \"time\", \"rates\" (same shape, per second),\n"
		"                        \"rates_seconds\" and \"rates_since_attach\"\n"
		"  -w, --watch [SECS]    report again every SECS seconds (default 1) until interrupted\n"
		"  -t, --top N           at most N flows, most violating first (default 20; 0: none)\n\n"
		"Examples:\n"
		"  roceval stats eth0\n"
		"  roceval stats --json --watch 10 | jq .rules.icrc\n",
	.run = do_stats,
};
