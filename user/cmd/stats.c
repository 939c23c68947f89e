// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
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

/* What the options ask; argc and argv for --watch's value given apart. */
struct stats_opts {
	int argc;
	char **argv;
	__u32 top;
	double interval;
	bool json, watch;
};

/* --watch 2 as well as --watch=2; false for a bad number of seconds. */
static bool parse_watch(struct stats_opts *o, const char *arg)
{
	char *end;

	o->interval = 1;
	if (!arg && optind < o->argc && o->argv[optind][0] >= '0' && o->argv[optind][0] <= '9')
		arg = o->argv[optind++];
	if (!arg)
		return true;
	o->interval = strtod(arg, &end);
	return !*end && o->interval >= 0.1 && o->interval <= 86400;
}

static int stats_option(void *ctx, int opt, const char *arg)
{
	struct stats_opts *o = ctx;

	if (opt == 'j') {
		o->json = true;
	} else if (opt == 't') {
		if (!parse_u32(arg, 1000000, &o->top))
			return command_usage_error(&cmd_stats, "--top %s: expected a number of flows", arg);
	} else if (opt == 'w') {
		o->watch = true;
		if (!parse_watch(o, arg))
			return command_usage_error(&cmd_stats, "--watch %s: expected seconds, 0.1-86400", arg);
	}
	return 0;
}

static int do_stats(int argc, char **argv)
{
	struct stats_opts o = { .argc = argc, .argv = argv, .top = 20 };
	struct live_iface li[LIVE_MAX_IFACES];
	struct reading prev[LIVE_MAX_IFACES];
	int n, err;

	err = command_options(&cmd_stats, argc, argv, stats_option, &o);
	if (err)
		return err;
	n = command_open_ifaces(&cmd_stats, argc, argv, li);
	if (n < 0)
		return -n;
	stop_on_signals();
	for (bool first = true; !err && !stop_requested; first = false) {
		if (!first) {
			nap(o.interval);
			if (stop_requested)
				break;
			if (!o.json)
				putchar('\n');
		}
		for (int i = 0; i < n && !err; i++) {
			err = stats_once(&li[i], &prev[i], first, o.json, o.top);
			if (!o.json && i + 1 < n)
				putchar('\n');
		}
		if (!o.watch)
			break;
	}
	live_close_all(li, n);
	return err ? 1 : 0;
}

static const struct cmd_opt stats_opts[] = {
	{ .heading = "Options:" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "one JSON object per interface and report, one per line: the\n"
		  "'roceval replay --json' fields (flows and \"mirrors\" included) plus\n"
		  "\"interface\", \"time\", \"rates\" (same shape, per second),\n"
		  "\"rates_seconds\" and \"rates_since_attach\"" },
	{ .name = "watch", .key = 'w', .arg = optional_argument, .meta = "[SECS]",
	  .help = "report again every SECS seconds (default 1) until interrupted" },
	{ .name = "top", .key = 't', .arg = required_argument, .meta = "N",
	  .help = "at most N flows, most violating first (default 20; 0: none)" },
	CMD_OPT_END,
};

const struct command cmd_stats = {
	.name = "stats",
	.args = "[IFACE] [--json] [--watch [SECONDS]] [--top N]",
	.summary = "print the live counters with per-second rates",
	.help = "Reads the pinned counters of IFACE, or of every attached interface of this network\n"
		"namespace, sums the per-CPU values and prints every frame total, each rule that\n"
		"fired, the mirror sessions and the flows with the most violations, with rates.\n"
		"The first report's rates are averages since attach; with --watch each later report\n"
		"gives the rates over its interval, measured on the monotonic clock.\n\n",
	.opts = stats_opts,
	.col = 24,
	.more = "\n"
		"Examples:\n"
		"  roceval stats eth0\n"
		"  roceval stats --json --watch 10 | jq .rules.icrc\n",
	.run = do_stats,
};
