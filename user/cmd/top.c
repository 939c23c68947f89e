// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>

#include "clock.h"
#include "cmd.h"
#include "live/live.h"
#include "numbers.h"
#include "report/report.h"

extern const struct command cmd_top;

/* What the options ask. */
struct top_opts {
	struct top_view view;
	__u32 iterations;
};

static int top_option(void *ctx, int opt, const char *arg)
{
	struct top_opts *o = ctx;
	char *end;

	switch (opt) {
	case 'd':
		o->view.delay = strtod(arg, &end);
		if (*end || !(o->view.delay >= 0.1 && o->view.delay <= 3600))
			return command_usage_error(&cmd_top, "--delay %s: expected seconds, 0.1-3600", arg);
		break;
	case 'n':
		if (!parse_u32(arg, 1000000000, &o->iterations) || !o->iterations)
			return command_usage_error(&cmd_top, "--iterations %s: expected a count from 1", arg);
		break;
	case 's':
		if (!top_sort_parse(arg, &o->view.sort))
			return command_usage_error(&cmd_top, "--sort %s: expected rate, count or name", arg);
		break;
	}
	return 0;
}

static int do_top(int argc, char **argv)
{
	struct top_opts o = { .view = { .sort = TOP_SORT_RATE, .delay = 1, .flow_rows = 5 } };
	struct live_iface li[LIVE_MAX_IFACES];
	int n, ret;

	ret = command_options(&cmd_top, argc, argv, top_option, &o);
	if (ret)
		return ret;
	n = command_open_ifaces(&cmd_top, argc, argv, li);
	if (n < 0)
		return -n;
	stop_on_signals();
	ret = top_run(li, n, &o.view, o.iterations);
	live_close_all(li, n);
	return ret;
}

static const struct cmd_opt top_opts[] = {
	{ .heading = "Options:" },
	{ .name = "delay", .key = 'd', .arg = required_argument, .meta = "SECS",
	  .help = "refresh interval, 0.1-3600 (default 1)" },
	{ .name = "iterations", .key = 'n', .arg = required_argument, .meta = "N",
	  .help = "stop after N refreshes" },
	{ .name = "sort", .key = 's', .arg = required_argument, .meta = "KEY",
	  .help = "rules by rate (default), count or name" },
	CMD_OPT_END,
};

const struct command cmd_top = {
	.name = "top",
	.args = "[IFACE] [--delay SECONDS] [--iterations N] [--sort rate|count|name]",
	.summary = "live view of counters, rates and the rules that fire",
	.help = "A full-screen view like top(1), redrawn every --delay seconds (default 1) and\n"
		"whenever the terminal is resized: frame totals, ICRC results, every rule that has\n"
		"fired, the mirror sessions frames come in (those that lost frames first, in yellow;\n"
		"LOST is - for a session whose sequence numbers never advance), and the flows with\n"
		"the most violations and the most packets, for IFACE or every attached interface of\n"
		"this network namespace.  Rates are over the last\n"
		"refresh first (from the second screen on), the average since attach beside them.\n"
		"Error-severity rules are red, warnings yellow, bold while they fire.  A flow's\n"
		"name longer than its column (IPv6, a CM service and peer QP) goes on below its\n"
		"row, the numbers staying in their columns.  What does not fit the terminal is\n"
		"cut, and a line says how much more there is.\n\n"
		"Keys: q quits (so does Ctrl-C); p or space pauses and resumes; s changes the\n"
		"sort order of the rules: current rate, count, name.\n\n"
		"When stdin or stdout is not a terminal, each refresh is printed in full after the\n"
		"last one, without escape sequences (with -n 1: a one-shot report).\n\n",
	.opts = top_opts,
	.col = 24,
	.run = do_top,
};
