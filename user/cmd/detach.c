// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"

extern const struct command cmd_detach;

enum { OPT_STALE = OPT_LONG };

/* --stale and --all, each a bool */
static int detach_option(void *ctx, int opt, const char *arg)
{
	bool *flags = ctx;

	flags[opt == OPT_STALE ? 0 : 1] = true;
	return 0;
}

static int do_detach(int argc, char **argv)
{
	bool flags[2] = {}, stale, all;
	const char *ifname = NULL;
	int err;

	err = command_options(&cmd_detach, argc, argv, detach_option, flags);
	if (err)
		return err;
	stale = flags[0];
	all = flags[1];
	if (optind < argc)
		ifname = argv[optind++];
	if (optind < argc)
		return command_usage_error(&cmd_detach, "unexpected '%s'", argv[optind]);
	if (all && !stale)
		return command_usage_error(&cmd_detach, "--all goes with --stale");
	if (stale == !!ifname)
		return command_usage_error(&cmd_detach, ifname ? "an interface or --stale, not both"
							       : "an interface is required");
	if (require_caps(true))
		return 1;
	if (stale) {
		err = live_detach_stale(all);
		if (err == 0)
			printf("no stale attachment%s\n", all ? "" : " in this network namespace");
		return err < 0 ? 1 : 0;
	}
	err = live_detach(ifname);
	if (err)
		return err == -EINVAL ? EXIT_USAGE : 1;
	printf("%s: detached roceval\n", ifname);
	return 0;
}

static const struct cmd_opt detach_opts[] = {
	{ .heading = "Options:" },
	{ .name = "stale", .key = OPT_STALE, .arg = no_argument,
	  .help = "remove every stale attachment of this namespace (its interface was\n"
		  "deleted, or deleted and re-created): 'roceval status' marks them" },
	{ .name = "all", .key = 'a', .arg = no_argument,
	  .help = "with --stale: of every network namespace" },
	CMD_OPT_END,
};

const struct command cmd_detach = {
	.name = "detach",
	.args = "IFACE | --stale [--all]",
	.summary = "detach the validator and remove its pins",
	.help = "Detaches the program (through its bpf_link, or from libxdp's dispatcher) and removes\n"
		"its pins with the counters in them.  Other XDP programs are left as they were.  IFACE\n"
		"is an interface of this network namespace: an attachment of the same name in another\n"
		"namespace is not touched.  Pins left behind by an interface that no longer exists\n"
		"are removed too.\n\n",
	.opts = detach_opts,
	.col = 16,
	.more = "\n"
		"Examples:\n"
		"  roceval detach eth0\n"
		"  roceval detach --stale --all\n",
	.run = do_detach,
};
