// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "json.h"
#include "live/live.h"
#include "report/report.h"

extern const struct command cmd_status;

/* --json and --all, each a bool */
static int status_option(void *ctx, int opt, const char *arg)
{
	bool *flags = ctx;

	flags[opt == 'j' ? 0 : 1] = true;
	return 0;
}

static int do_status(int argc, char **argv)
{
	struct live_iface li[LIVE_MAX_IFACES];
	struct json_writer w;
	const char *ifname = NULL;
	bool flags[2] = {}, json, all;
	int n, err;

	err = command_options(&cmd_status, argc, argv, status_option, flags);
	if (err)
		return err;
	json = flags[0];
	all = flags[1];
	if (optind < argc)
		ifname = argv[optind++];
	if (optind < argc)
		return command_usage_error(&cmd_status, "unexpected '%s'", argv[optind]);
	if (all && ifname)
		return command_usage_error(&cmd_status, "an interface or --all, not both");
	if (require_caps(true) || live_init())
		return 1;
	n = status_open(ifname, all, li, LIVE_MAX_IFACES);
	if (n < 0)
		return 1;
	if (n == 0 && !json) {
		/* nothing attached is a state to report, not an error */
		printf(all ? "roceval is not attached to any interface\n"
			   : "roceval is not attached to any interface in this network namespace\n");
		return 0;
	}
	json_init(&w, stdout);
	if (json)
		json_array_begin(&w, NULL);
	for (int i = 0; i < n; i++)
		err |= status_report(&li[i], json ? &w : NULL, i == 0, all);
	if (json) {
		json_array_end(&w);
		json_end(&w);
	}
	live_close_all(li, n);
	return err ? 1 : 0;
}

static const struct cmd_opt status_opts[] = {
	{ .heading = "Options:" },
	{ .name = "all", .key = 'a', .arg = no_argument,
	  .help = "every network namespace's attachments, each marked with its namespace\n"
		  "(netns-INODE, and the name 'ip netns' knows it by)" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "a JSON array, one object per attachment" },
	CMD_OPT_END,
};

const struct command cmd_status = {
	.name = "status",
	.args = "[IFACE | --all] [--json]",
	.summary = "show where roceval is attached, how, since when, its settings and memory",
	.help = "For IFACE, or every interface of this network namespace roceval is attached to: the\n"
		"attach mode, program id, attach time, whether enforce is on (frames dropped!), the\n"
		"clock latencies are timed by, where a frame's VLAN priority is read (pcp: the frame's\n"
		"tag, the one the NIC stripped as its driver gives it, or the socket buffer's), frames\n"
		"and RoCEv2 frames seen, the mirror sessions seen and the frames they lost before\n"
		"this host (JSON: mirror_sessions, mirror_frames, mirror_lost), the memory the kernel\n"
		"charges for the program's maps (memlock), and every setting.  An attachment whose\n"
		"interface was deleted (or deleted and re-created) since is listed and marked STALE:\n"
		"its pins, and the memory they hold, remain until 'roceval detach IFACE' or\n"
		"'roceval detach --stale'.\n\n",
	.opts = status_opts,
	.col = 15,
	.run = do_status,
};
