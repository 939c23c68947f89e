// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"

extern const struct command cmd_detach;

static int do_detach(int argc, char **argv)
{
	bool stale = false, all = false;
	const char *ifname = NULL;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stale"))
			stale = true;
		else if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))
			all = true;
		else if (argv[i][0] == '-' || ifname)
			return command_usage_error(&cmd_detach, "unexpected '%s'", argv[i]);
		else
			ifname = argv[i];
	}
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

const struct command cmd_detach = {
	.name = "detach",
	.args = "IFACE | --stale [--all]",
	.summary = "detach the validator and remove its pins",
	.help = "Detaches the program (through its bpf_link, or from libxdp's dispatcher) and removes\n"
		"its pins with the counters in them.  Other XDP programs are left as they were.  IFACE\n"
		"is an interface of this network namespace: an attachment of the same name in another\n"
		"namespace is not touched.  Pins left behind by an interface that no longer exists\n"
		"are removed too.\n\n"
		"Options:\n"
		"      --stale   remove every stale attachment of this namespace (its interface was\n"
		"                deleted, or deleted and re-created): 'roceval status' marks them\n"
		"  -a, --all     with --stale: of every network namespace\n\n"
		"Examples:\n"
		"  roceval detach eth0\n"
		"  roceval detach --stale --all\n",
	.run = do_detach,
};
