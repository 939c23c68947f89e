// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <getopt.h>
#include <stdlib.h>

#include "clock.h"
#include "cmd.h"
#include "live/live.h"
#include "numbers.h"
#include "report/report.h"

extern const struct command cmd_top;

static int do_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_iface li[LIVE_MAX_IFACES];
	struct top_view view = { .sort = TOP_SORT_RATE, .delay = 1, .flow_rows = 5 };
	__u32 iterations = 0;
	int n, opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, ":d:n:s:", opts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'd':
			view.delay = strtod(optarg, &end);
			if (*end || !(view.delay >= 0.1 && view.delay <= 3600))
				return command_usage_error(&cmd_top, "--delay %s: expected seconds, 0.1-3600", optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, 1000000000, &iterations) || !iterations)
				return command_usage_error(&cmd_top, "--iterations %s: expected a count from 1", optarg);
			break;
		case 's':
			if (!top_sort_parse(optarg, &view.sort))
				return command_usage_error(&cmd_top, "--sort %s: expected rate, count or name", optarg);
			break;
		default:
			return command_bad_option(&cmd_top, opt, argv);
		}
	}
	n = command_open_ifaces(&cmd_top, argc, argv, li);
	if (n < 0)
		return -n;
	stop_on_signals();
	ret = top_run(li, n, &view, iterations);
	live_close_all(li, n);
	return ret;
}

const struct command cmd_top = {
	.name = "top",
	.args = "[IFACE] [--delay SECONDS] [--iterations N] [--sort rate|count|name]",
	.summary = "live view of counters, rates and the rules that fire",
	.help = "A full-screen view like top(1), redrawn every --delay seconds (default 1) and\n"
		"whenever the terminal is resized: frame totals, ICRC results, every rule that has\n"
		"fired, and the flows with the most violations and the most packets, for IFACE or\n"
		"every attached interface of this network namespace.  Rates are over the last\n"
		"refresh first (from the second screen on), the average since attach beside them.\n"
		"Error-severity rules are red, warnings yellow, bold while they fire.  What does\n"
		"not fit the terminal is cut, and a line says how much more there is.\n\n"
		"Keys: q quits (so does Ctrl-C); p or space pauses and resumes; s changes the\n"
		"sort order of the rules: current rate, count, name.\n\n"
		"When stdin or stdout is not a terminal, each refresh is printed in full after the\n"
		"last one, without escape sequences (with -n 1: a one-shot report).\n\n"
		"Options:\n"
		"  -d, --delay SECS      refresh interval, 0.1-3600 (default 1)\n"
		"  -n, --iterations N    stop after N refreshes\n"
		"  -s, --sort KEY        rules by rate (default), count or name\n",
	.run = do_top,
};
