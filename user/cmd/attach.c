// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval attach: options and settings in, live_attach() does the rest. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"
#include "live/loader.h"
#include "report/report.h"
#include "settings.h"

extern const struct command cmd_attach;

enum { OPT_MULTIPROG = OPT_LONG, OPT_FLOWS, OPT_SETTING = 0x200 };

/* flows=N sizes the flow table at load time, so it is an attach option, not a setting. */
static int attach_assign(struct roceval_settings *cfg, const char *arg)
{
	char err[256];
	__u32 n;

	if (!strncmp(arg, "flows=", 6)) {
		if (!parse_flow_entries(arg + 6, &n))
			return command_usage_error(&cmd_attach, "%s: expected a number of flows, 1-%u", arg,
						   ROCEVAL_MAX_FLOW_ENTRIES);
		roceval_set_flow_entries(n);
		return 0;
	}
	if (settings_assign(cfg, arg, err, sizeof(err)))
		return command_usage_error(&cmd_attach, "%s", err);
	return 0;
}

/* What the options ask. */
struct attach_opts {
	struct roceval_settings cfg;
	enum live_mode mode;
	bool multiprog;
};

static int attach_option(void *ctx, int opt, const char *arg)
{
	struct attach_opts *o = ctx;
	char buf[256];

	if (opt == 'm') {
		if (!live_mode_parse(arg, &o->mode))
			return command_usage_error(&cmd_attach, "--mode %s: expected native, generic, auto or tc", arg);
	} else if (opt == OPT_MULTIPROG) {
		o->multiprog = true;
	} else if (opt == 's' || opt == OPT_FLOWS) {
		snprintf(buf, sizeof(buf), opt == OPT_FLOWS ? "flows=%s" : "%s", arg);
		return attach_assign(&o->cfg, buf);
	} else if (opt >= OPT_SETTING) {
		if (settings_set(&o->cfg, settings_keys[opt - OPT_SETTING], arg, buf, sizeof(buf)))
			return command_usage_error(&cmd_attach, "%s", buf);
	}
	return 0;
}

static int do_attach(int argc, char **argv)
{
	struct attach_opts o = { .mode = LIVE_MODE_AUTO };
	const char *ifname = NULL;
	struct live_iface li;
	int ret;

	settings_defaults(&o.cfg);
	ret = command_options(&cmd_attach, argc, argv, attach_option, &o);
	if (ret)
		return ret;
	for (; optind < argc; optind++) {
		if (strchr(argv[optind], '=')) {
			if ((ret = attach_assign(&o.cfg, argv[optind])))
				return ret;
		} else if (!ifname) {
			ifname = argv[optind];
		} else {
			return command_usage_error(&cmd_attach, "one interface at a time ('%s'?)", argv[optind]);
		}
	}
	if (!ifname)
		return command_usage_error(&cmd_attach, "an interface is required");
	if (require_caps(true))
		return 1;
	ret = live_attach(ifname, o.mode, o.multiprog, &o.cfg, &li);
	if (ret)
		return ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	printf("%s: attached roceval (program %u, %s mode%s); pinned in %s/%s/%s\n", ifname, li.prog_id,
	       live_mode_name(li.mode), li.multiprog ? ", libxdp dispatcher" : "", live_pin_root(), li.netns,
	       ifname);
	live_close(&li);
	return 0;
}

static const struct cmd_opt attach_opts[] = {
	{ .heading = "Options:" },
	{ .name = "mode", .key = 'm', .arg = required_argument, .meta = "MODE",
	  .help = "native (driver hook), generic (skb hook, any interface, slower),\n"
		  "auto (default: native where the driver supports it), or tc\n"
		  "(tc ingress, not XDP: beside any XDP program, kernel 6.6+)" },
	{ .name = "multiprog", .key = OPT_MULTIPROG, .arg = no_argument,
	  .help = "beside the XDP program already there: libxdp's dispatcher\n"
		  "(xdp-loader compatible) where it can run, else tc ingress" },
	{ .name = "set", .key = 's', .arg = required_argument, .meta = "K=V",
	  .help = "a setting, as 'roceval config' takes them; also plain K=V\n"
		  "arguments and --KEY VALUE options" },
	{ .name = "flows", .key = OPT_FLOWS, .arg = required_argument, .meta = "N",
	  .help = "flows the flow table is sized for (also flows=N), fixed\n"
		  "while attached; default 65536, about 1 KB each with the\n"
		  "tables sized with it (connections, PSN-window hints)" },
	/* every setting is also an option: --pmtu 1024 is pmtu=1024 */
	{ .key = OPT_SETTING, .each_setting = true },
	CMD_OPT_END,
};

const struct command cmd_attach = {
	.name = "attach",
	.args = "IFACE [--mode native|generic|auto] [--multiprog] [KEY=VALUE]...",
	.summary = "attach the validator to an interface and pin it, counters and all",
	.help = "Loads the roceval XDP program, attaches it to IFACE through a bpf_link and pins the\n"
		"program, the link and the maps under "
		ROCEVAL_PIN_ROOT
		"/netns-INODE/IFACE/ (INODE:\n"
		"the network namespace's, as 'lsns -t net' shows it), then exits: the program keeps\n"
		"running and counting until 'roceval detach IFACE'.  Traffic is never changed unless\n"
		"enforce=on.  The program reads frames of any size (multi-buffer).\n\n"
		"Where nothing is mounted on /sys/fs/bpf yet (a freshly booted host), it mounts\n"
		"bpffs there first.  Run from a private mount namespace ('ip netns exec'), it pins\n"
		"in the host's bpffs through /proc/1/root (kthreadd's /proc/2/root where pid 1's\n"
		"links are closed), or refuses when that is out of reach or not mounted: a bpffs of\n"
		"that namespace would vanish, and the attachment with it, when the command exits.\n\n"
		"If IFACE already runs an XDP program, attach fails and names it: detach it first,\n"
		"or use --multiprog to run beside it.  That goes through libxdp's dispatcher where it\n"
		"can (the other program attached through libxdp too, and a kernel that runs freplace\n"
		"programs), else at tc ingress through a tcx link (kernel 6.6 or later), after the XDP\n"
		"program: roceval then sees the frames it passes on, with VLAN tags already taken out\n"
		"of the frame.  status says which hook is in use.\n\n"
		"In native mode, on kernel 6.3 or later, the program is loaded bound to IFACE so\n"
		"that it can read the NIC's receive timestamp of each frame for the latencies\n"
		"(while the driver's receive timestamping is on: hwstamp_ctl -i IFACE -r 1);\n"
		"otherwise, and in the other modes, they are timed by the kernel's clock.\n"
		"status says which clock is in use.\n\n",
	.opts = attach_opts,
	.col = 20,
	.more = "\n"
		"Settings (change them later with 'roceval config'):\n"
		SETTINGS_HELP_ARG
		"\n"
		"Exit status: 0 attached, 1 it could not be, no such interface included (the reason\n"
		"is printed; nothing is left behind), 2 bad usage or a bad setting.\n\n"
		"Examples:\n"
		"  roceval attach eth0\n"
		"  roceval attach eth0 --mode generic pmtu=1024 pkeys=0xffff\n"
		"  roceval attach eth0 --multiprog\n"
		"  roceval attach eth0 --mode tc\n",
	.run = do_attach,
};
