// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The operator commands on live attachments: attach, detach, status, stats,
 * top and config.  (trace lives in cmd_trace.c.)  Everything goes through
 * user/live.h, so these commands and the daemon see the same pins.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <curses.h>
#include <locale.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "json.h"
#include "counters.h"
#include "cm.h"
#include "flows.h"
#include "live.h"
#include "loader.h"
#include "settings.h"

extern const struct command cmd_attach, cmd_detach, cmd_status, cmd_stats, cmd_top, cmd_config;

#define MAX_IFACES 64

/* Help texts list the settings from their table, like everything else about settings. */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double boot_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Sleeps `secs`, returning early on a signal. */
static void nap(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Opens IFACE, or every attached interface when ifname is NULL.  Returns the
 * count opened, or -1 with the reason printed.
 */
static int open_ifaces(const char *ifname, struct live_iface *li, int max)
{
	char names[MAX_IFACES][IF_NAMESIZE];
	int n, opened = 0;

	if (ifname)
		return live_open_report(ifname, &li[0]) ? -1 : 1;
	n = live_list_local(names, max < MAX_IFACES ? max : MAX_IFACES);
	if (n < 0) {
		pr_warn("Couldn't list %s: %s", live_pin_root(), strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (live_open_report(names[i], &li[opened]))
			continue;
		opened++;
	}
	if (!opened)
		pr_warn("no interface has roceval attached; see 'roceval help attach'");
	return opened ? opened : -1;
}

/*
 * The optional IFACE after a live command's options: at most one, root, and
 * open it (or every attachment here).  Returns the count opened, or minus
 * the exit status with the reason printed.
 */
static int open_iface_arg(const struct command *cmd, int argc, char **argv, struct live_iface *li)
{
	const char *ifname = NULL;
	int n;

	if (optind < argc)
		ifname = argv[optind++];
	if (optind < argc)
		return -command_usage_error(cmd, "one interface at a time ('%s'?)", argv[optind]);
	if (require_caps(true))
		return -1;
	n = open_ifaces(ifname, li, MAX_IFACES);
	return n < 0 ? -1 : n;
}

static void close_ifaces(struct live_iface *li, int n)
{
	for (int i = 0; i < n; i++)
		live_close(&li[i]);
}

static const char *since_text(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	return buf;
}

static const char *iso_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static const char *duration_text(double secs, char *buf, size_t len)
{
	unsigned long s = secs > 0 ? (unsigned long)secs : 0;

	if (s >= 86400)
		snprintf(buf, len, "%lud %luh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%luh %lum", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum %lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
	return buf;
}

/* ---- attach ---- */

static int parse_mode(const char *s, enum live_mode *mode)
{
	if (!strcmp(s, "native") || !strcmp(s, "drv"))
		*mode = LIVE_MODE_NATIVE;
	else if (!strcmp(s, "generic") || !strcmp(s, "skb"))
		*mode = LIVE_MODE_GENERIC;
	else if (!strcmp(s, "auto"))
		*mode = LIVE_MODE_AUTO;
	else if (!strcmp(s, "tc"))
		*mode = LIVE_MODE_TC;
	else
		return -EINVAL;
	return 0;
}

enum { OPT_MULTIPROG = 0x100, OPT_FLOWS, OPT_SETTING = 0x200 };

/* flows=N sizes the flow table at load time, so it is an attach option, not a setting. */
static int attach_assign(struct roceval_settings *cfg, const char *arg)
{
	char err[256];
	__u32 n;

	if (!strncmp(arg, "flows=", 6)) {
		if (!parse_flow_entries(arg + 6, &n))
			return command_usage_error(&cmd_attach, "%s: expected flow table entries, 1-%u", arg,
						   ROCEVAL_MAX_FLOW_ENTRIES);
		live_set_flow_entries(n);
		return 0;
	}
	if (settings_assign(cfg, arg, err, sizeof(err)))
		return command_usage_error(&cmd_attach, "%s", err);
	return 0;
}

static int do_attach(int argc, char **argv)
{
#define SETTING_COUNT(key, syntax, desc) +1
	/* the fixed options, one per setting, the terminator */
	struct option opts[4 + (0 ROCEVAL_SETTINGS(SETTING_COUNT)) + 1] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "multiprog", no_argument, NULL, OPT_MULTIPROG },
		{ "set", required_argument, NULL, 's' },
		{ "flows", required_argument, NULL, OPT_FLOWS },
	};
	enum live_mode mode = LIVE_MODE_AUTO;
	struct roceval_settings cfg;
	struct live_iface li;
	bool multiprog = false;
	const char *ifname = NULL;
	char err[256];
	int nopts = 4, opt, idx, ret;

	/* every setting is also an option: --pmtu 1024 is pmtu=1024 */
	for (int i = 0; settings_keys[i]; i++)
		opts[nopts++] = (struct option){ settings_keys[i], required_argument, NULL, OPT_SETTING + i };
	settings_defaults(&cfg);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "m:s:", opts, &idx)) != -1) {
		if (opt == 'm') {
			if (parse_mode(optarg, &mode))
				return command_usage_error(&cmd_attach, "--mode %s: expected native, generic, auto or tc",
							   optarg);
		} else if (opt == OPT_MULTIPROG) {
			multiprog = true;
		} else if (opt == 's' || opt == OPT_FLOWS) {
			char arg[256];

			snprintf(arg, sizeof(arg), opt == OPT_FLOWS ? "flows=%s" : "%s", optarg);
			if ((ret = attach_assign(&cfg, arg)))
				return ret;
		} else if (opt >= OPT_SETTING) {
			if (settings_set(&cfg, settings_keys[opt - OPT_SETTING], optarg, err, sizeof(err)))
				return command_usage_error(&cmd_attach, "%s", err);
		} else {
			return command_bad_option(&cmd_attach, argv);
		}
	}
	for (; optind < argc; optind++) {
		if (strchr(argv[optind], '=')) {
			if ((ret = attach_assign(&cfg, argv[optind])))
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
	ret = live_attach(ifname, mode, multiprog, &cfg, &li);
	if (ret)
		return ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	printf("%s: attached roceval (program %u, %s mode%s); pinned in %s/%s/%s\n", ifname, li.prog_id,
	       live_mode_name(li.mode), li.multiprog ? ", libxdp dispatcher" : "", live_pin_root(), li.netns,
	       ifname);
	live_close(&li);
	return 0;
}

const struct command cmd_attach = {
	.name = "attach",
	.args = "IFACE [--mode native|generic|auto] [--multiprog] [KEY=VALUE]...",
	.summary = "attach the validator to an interface and pin it, counters and all",
	.help = "Loads the roceval XDP program, attaches it to IFACE through a bpf_link and pins the\n"
		"program, the link and the maps under " ROCEVAL_PIN_ROOT "/netns-INODE/IFACE/ (INODE:\n"
		"the network namespace's, as 'lsns -t net' shows it), then exits: the program keeps\n"
		"running and counting until 'roceval detach IFACE'.  Traffic is never changed unless\n"
		"enforce=on.  The program reads frames of any size (multi-buffer).\n\n"
		"Run from a private mount namespace ('ip netns exec'), it pins in the host's bpffs\n"
		"through /proc/1/root, or refuses when that is out of reach: a bpffs of that\n"
		"namespace would vanish, and the attachment with it, when the command exits.\n\n"
		"If IFACE already runs an XDP program, attach fails and names it: detach it first,\n"
		"or use --multiprog to run beside it.  That goes through libxdp's dispatcher where it\n"
		"can (the other program attached through libxdp too, and a kernel that runs freplace\n"
		"programs), else at tc ingress through a tcx link (kernel 6.6 or later), after the XDP\n"
		"program: roceval then sees the frames it passes on, with VLAN tags already taken out\n"
		"of the frame.  status says which hook is in use.\n\n"
		"Options:\n"
		"  -m, --mode MODE   native (driver hook), generic (skb hook, any interface, slower),\n"
		"                    auto (default: native where the driver supports it), or tc\n"
		"                    (tc ingress, not XDP: beside any XDP program, kernel 6.6+)\n"
		"      --multiprog   beside the XDP program already there: libxdp's dispatcher\n"
		"                    (xdp-loader compatible) where it can run, else tc ingress\n"
		"  -s, --set K=V     a setting, as 'roceval config' takes them; also plain K=V\n"
		"                    arguments and --KEY VALUE options\n"
		"      --flows N     flow table entries (also flows=N), fixed while attached;\n"
		"                    default 65536, about 200 bytes each\n\n"
		"Settings (change them later with 'roceval config'):\n" ROCEVAL_SETTINGS(SETTING_HELP_ARG) "\n"
		"Exit status: 0 attached, 1 it could not be, no such interface included (the reason\n"
		"is printed; nothing is left behind), 2 bad usage or a bad setting.\n\n"
		"Examples:\n"
		"  roceval attach eth0\n"
		"  roceval attach eth0 --mode generic pmtu=1024 pkeys=0xffff\n"
		"  roceval attach eth0 --multiprog\n"
		"  roceval attach eth0 --mode tc\n",
	.run = do_attach,
};

/* ---- detach ---- */

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

/* ---- status ---- */

/* The name 'ip netns' knows a namespace by, if any. */
static const char *netns_name(__u64 ino, char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir("/run/netns");

	*buf = '\0';
	while (d && (de = readdir(d))) {
		char path[300];
		struct stat st;

		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == ino) {
			snprintf(buf, len, "%s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return buf;
}

static int status_one(struct live_iface *li, bool json, bool first, bool all)
{
	struct roceval_settings cfg;
	struct roceval_counters c;
	char since[64], dur[32], nsname[256];
	__u64 mem = 0;
	int nmaps = 0, err;
	bool stale;

	err = roceval_settings_read(li->settings_fd, &cfg);
	if (!err)
		err = counters_read(li->counters_fd, &c);
	if (err) {
		pr_warn("%s: Couldn't read the maps: %s", li->ifname, strerror(-err));
		return err;
	}
	live_memory(li, &mem, &nmaps);
	/* the pins outlive the interface: a deleted or re-created one no longer runs the program */
	stale = live_stale(li);
	netns_name(li->netns_ino, nsname, sizeof(nsname));
	if (json) {
		printf("%s{\"interface\": ", first ? "" : ", ");
		json_str(stdout, li->ifname);
		printf(", \"ifindex\": %d, \"netns\": \"%s\", \"netns_inode\": %llu, \"netns_name\": ",
		       li->ifindex, li->netns, (unsigned long long)li->netns_ino);
		if (*nsname)
			json_str(stdout, nsname);
		else
			fputs("null", stdout);
		printf(", \"this_netns\": %s, \"hook\": \"%s\", \"mode\": \"%s\", \"multiprog\": %s, "
		       "\"program_id\": %u, \"attached_since\": \"%s\", \"attached_since_unix\": %lld, "
		       "\"stale\": %s, \"enforce\": %s, \"settings\": ",
		       li->this_netns ? "true" : "false", live_hook_name(li->mode), live_mode_name(li->mode),
		       li->multiprog ? "true" : "false", li->prog_id,
		       iso_time(li->attached_since, since, sizeof(since)), (long long)li->attached_since,
		       stale ? "true" : "false", cfg.enforce ? "true" : "false");
		settings_print_json(stdout, &cfg);
		printf(", \"memory_bytes\": %llu, \"maps\": %d, \"frames\": %llu, \"roce\": %llu}",
		       (unsigned long long)mem, nmaps, (unsigned long long)c.total[TOTAL_FRAMES],
		       (unsigned long long)c.total[TOTAL_ROCE]);
		return 0;
	}
	printf("%s%s: %s%s, program %u, attached since %s (%s)\n", first ? "" : "\n", li->ifname,
	       li->mode == LIVE_MODE_TC ? "tc ingress (tcx link)" : live_mode_name(li->mode),
	       li->mode == LIVE_MODE_TC ? "" : li->multiprog ? " mode (libxdp dispatcher)" : " mode", li->prog_id,
	       since_text(li->attached_since, since, sizeof(since)),
	       duration_text(difftime(time(NULL), li->attached_since), dur, sizeof(dur)));
	if (all)
		printf("  %-12s %s%s%s%s\n", "netns", li->netns, *nsname ? " (" : "", nsname,
		       li->this_netns ? (*nsname ? ", this one)" : " (this one)") : *nsname ? ")" : "");
	if (stale && li->this_netns)
		printf("  STALE: the interface it was attached to is gone; 'roceval detach %s' removes the pins\n",
		       li->ifname);
	else if (stale)
		printf("  STALE: the interface it was attached to is gone; 'roceval detach --stale --all' "
		       "removes the pins\n");
	printf("  %-12s %s\n", "enforce", cfg.enforce ? "ON: frames breaking error rules are DROPPED"
						     : "off (observe only)");
	printf("  %-12s %llu\n  %-12s %llu\n", "frames", (unsigned long long)c.total[TOTAL_FRAMES], "roce",
	       (unsigned long long)c.total[TOTAL_ROCE]);
	if (c.total[TOTAL_DROPPED])
		printf("  %-12s %llu\n", "dropped", (unsigned long long)c.total[TOTAL_DROPPED]);
	if (mem >= 10 << 20)
		printf("  %-12s %.1f MiB in %d maps\n", "memory", mem / 1048576.0, nmaps);
	else
		printf("  %-12s %.1f KiB in %d maps\n", "memory", mem / 1024.0, nmaps);
	printf("  settings:\n");
	settings_print(stdout, &cfg, "    ");
	return 0;
}

/* Opens what status shows: IFACE, this namespace's attachments (stale ones too), or all. */
static int status_open(const char *ifname, bool all, struct live_iface *li, int max)
{
	struct live_ref refs[MAX_IFACES];
	char names[MAX_IFACES][IF_NAMESIZE];
	int n, opened = 0;

	if (ifname)
		return live_open_report(ifname, &li[0]) ? -1 : 1;
	n = all ? live_list_all(refs, max) : live_list(names, max);
	if (n < 0) {
		pr_warn("Couldn't list %s: %s", live_pin_root(), strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int err = all ? live_open_ref(&refs[i], &li[opened]) : live_open_report(names[i], &li[opened]);

		if (err && all)
			pr_warn("%s/%s: Couldn't open the pins: %s", refs[i].netns, refs[i].ifname,
				strerror(-err));
		opened += !err;
	}
	return opened;
}

static int do_status(int argc, char **argv)
{
	struct live_iface li[MAX_IFACES];
	const char *ifname = NULL;
	bool json = false, all = false;
	int n, err = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else if (!strcmp(argv[i], "--all") || !strcmp(argv[i], "-a"))
			all = true;
		else if (argv[i][0] == '-' || ifname)
			return command_usage_error(&cmd_status, "unexpected '%s'", argv[i]);
		else
			ifname = argv[i];
	}
	if (all && ifname)
		return command_usage_error(&cmd_status, "an interface or --all, not both");
	if (require_caps(true))
		return 1;
	if (live_init())
		return 1;
	n = status_open(ifname, all, li, MAX_IFACES);
	if (n < 0)
		return 1;
	if (n == 0) {
		/* nothing attached is a state to report, not an error */
		printf(json ? "[]\n" : all ? "roceval is not attached to any interface\n"
					   : "roceval is not attached to any interface in this network namespace\n");
		return 0;
	}
	if (json)
		putchar('[');
	for (int i = 0; i < n; i++)
		err |= status_one(&li[i], json, i == 0, all);
	if (json)
		puts("]");
	close_ifaces(li, n);
	return err ? 1 : 0;
}

const struct command cmd_status = {
	.name = "status",
	.args = "[IFACE | --all] [--json]",
	.summary = "show where roceval is attached, how, since when, its settings and memory",
	.help = "For IFACE, or every interface of this network namespace roceval is attached to: the\n"
		"attach mode, program id, attach time, whether enforce is on (frames dropped!), frames\n"
		"and RoCEv2 frames seen, the memory the kernel charges for the program's maps\n"
		"(memlock), and every setting.  An attachment whose interface was deleted (or deleted\n"
		"and re-created) since is listed and marked STALE: its pins, and the memory they hold,\n"
		"remain until 'roceval detach IFACE' or 'roceval detach --stale'.\n\n"
		"Options:\n"
		"  -a, --all    every network namespace's attachments, each marked with its namespace\n"
		"               (netns-INODE, and the name 'ip netns' knows it by)\n"
		"  -j, --json   a JSON array, one object per attachment\n",
	.run = do_status,
};

/* ---- stats ---- */

struct sample {
	struct roceval_counters c;
	double t; /* CLOCK_MONOTONIC seconds */
};

static void print_rates_json(const double *tr, const double *rr)
{
	fputs("\"rates\": {", stdout);
	for (int i = 0; i < TOTAL__COUNT; i++)
		printf("\"%s\": %.3f, ", total_ids[i], tr[i]);
	fputs("\"rules\": {", stdout);
	for (int i = 0; i < RULE__COUNT; i++)
		printf("%s\"%s\": %.3f", i ? ", " : "", rule_ids[i], rr[i]);
	fputs("}}", stdout);
}

static int stats_print(const struct live_iface *li, const struct roceval_counters *c, const double *tr,
		       const double *rr, double window, bool since_attach, bool json, __u32 top)
{
	struct flow_entry *flows = NULL;
	int nflows = 0;

	if (top && li->flows_fd >= 0) {
		nflows = flows_collect(li->flows_fd, &flows);
		if (nflows < 0) {
			pr_warn("%s: Couldn't read the flow table: %s", li->ifname, strerror(-nflows));
			return nflows;
		}
		cm_annotate(li->cm_ends_fd, flows, nflows);
	}
	if (json) {
		fputs("{\"interface\": ", stdout);
		json_str(stdout, li->ifname);
		printf(", \"time\": %lld, ", (long long)time(NULL));
		counters_print_json_fields(stdout, c);
		fputs(", ", stdout);
		if (top && li->flows_fd >= 0) {
			flows_print_json_array(stdout, flows, nflows, top);
			fputs(", ", stdout);
		}
		print_rates_json(tr, rr);
		printf(", \"rates_seconds\": %.3f, \"rates_since_attach\": %s}\n", window,
		       since_attach ? "true" : "false");
	} else {
		printf("%s: rates %s %.1f s%s\n", li->ifname, since_attach ? "averaged over" : "over the last",
		       window, since_attach ? " since attach" : "");
		counters_print_table(stdout, c, tr, rr, 0);
		flows_print_table(stdout, flows, nflows, top);
	}
	free(flows);
	return 0;
}

static int do_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "top", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_iface li[MAX_IFACES];
	struct sample prev[MAX_IFACES];
	__u32 top = 20;
	double interval = 0, tr[TOTAL__COUNT], rr[RULE__COUNT];
	bool json = false, watch = false;
	int n, opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "jw::t:", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 't':
			if (!parse_u32(optarg, 1000000, &top))
				return command_usage_error(&cmd_stats, "--top %s: expected a number of flows", optarg);
			break;
		case 'w':
			watch = true;
			interval = 1;
			/* --watch 2 as well as --watch=2 */
			if (!optarg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
				optarg = argv[optind++];
			if (optarg) {
				char *end;

				interval = strtod(optarg, &end);
				if (*end || !(interval >= 0.1 && interval <= 86400))
					return command_usage_error(&cmd_stats,
								   "--watch %s: expected seconds, 0.1-86400", optarg);
			}
			break;
		default:
			return command_bad_option(&cmd_stats, argv);
		}
	}
	n = open_iface_arg(&cmd_stats, argc, argv, li);
	if (n < 0)
		return -n;
	catch_signals();

	for (int i = 0; i < n && !err; i++) {
		/* the first report averages over the attachment's whole life */
		double secs = (boot_now_ns() - li[i].attached_boot_ns) / 1e9;
		struct roceval_counters zero = {};

		prev[i].t = mono_now();
		err = counters_read(li[i].counters_fd, &prev[i].c);
		if (err) {
			pr_warn("%s: Couldn't read the counters: %s", li[i].ifname, strerror(-err));
			break;
		}
		counters_rates(&zero, &prev[i].c, secs, tr, rr);
		err = stats_print(&li[i], &prev[i].c, tr, rr, secs, true, json, top);
		if (!json && i + 1 < n)
			putchar('\n');
	}
	while (watch && !err && !stop) {
		nap(interval);
		if (stop)
			break;
		if (!json)
			putchar('\n');
		for (int i = 0; i < n && !err; i++) {
			struct sample cur;

			err = counters_read(li[i].counters_fd, &cur.c);
			if (err) {
				pr_warn("%s: Couldn't read the counters: %s", li[i].ifname, strerror(-err));
				break;
			}
			cur.t = mono_now();
			counters_rates(&prev[i].c, &cur.c, cur.t - prev[i].t, tr, rr);
			err = stats_print(&li[i], &cur.c, tr, rr, cur.t - prev[i].t, false, json, top);
			if (!json && i + 1 < n)
				putchar('\n');
			prev[i] = cur;
		}
	}
	close_ifaces(li, n);
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

/* ---- config ---- */

static int do_config(int argc, char **argv)
{
	struct roceval_settings cfg;
	struct live_iface li;
	char err[256];
	int ret;

	if (argc < 2 || argv[1][0] == '-')
		return command_usage_error(&cmd_config, "an interface is required");
	if (require_caps(true))
		return 1;
	if (live_open_report(argv[1], &li))
		return 1;
	ret = roceval_settings_read(li.settings_fd, &cfg);
	if (ret) {
		pr_warn("%s: Couldn't read the settings: %s", argv[1], strerror(-ret));
		goto out;
	}
	/* all or nothing: the map is written once every assignment has been checked */
	for (int i = 2; i < argc; i++) {
		if (settings_assign(&cfg, argv[i], err, sizeof(err))) {
			live_close(&li);
			return command_usage_error(&cmd_config, "%s", err);
		}
	}
	if (argc > 2) {
		ret = roceval_settings_write(li.settings_fd, &cfg);
		if (!ret)
			ret = roceval_settings_read(li.settings_fd, &cfg);
		if (ret) {
			pr_warn("%s: Couldn't write the settings: %s", argv[1], strerror(-ret));
			goto out;
		}
	}
	printf("%s:\n", argv[1]);
	settings_print(stdout, &cfg, "  ");
out:
	live_close(&li);
	return ret ? 1 : 0;
}

const struct command cmd_config = {
	.name = "config",
	.args = "IFACE [KEY=VALUE]...",
	.summary = "show or change the settings of an attached interface at run time",
	.help = "Writes the settings into the pinned settings map; the program uses them from the\n"
		"next frame on, and the result is printed back.  Every assignment is checked before\n"
		"any is applied, so a bad value changes nothing.  Without assignments, prints the\n"
		"current settings.\n\n"
		"Settings:\n" ROCEVAL_SETTINGS(SETTING_HELP_ARG) "\n"
		"Examples:\n"
		"  roceval config eth0 pmtu=1024\n"
		"  roceval config eth0 enforce=on pkeys=0xffff,0x8001\n",
	.run = do_config,
};

/* ---- top ---- */

/*
 * One screen of top is a list of lines, built without regard to the
 * terminal; on a terminal ncurses shows what fits (each line cut at the
 * width, the list at the height), elsewhere every line is printed.
 */
struct top_line {
	char text[160];
	int sev; /* -1: plain; else the rule severity it is coloured by */
	bool bold;
};

struct top_screen {
	struct top_line *v;
	int n, cap;
};

enum top_sort { SORT_RATE, SORT_COUNT, SORT_NAME, SORT__COUNT };
static const char *const sort_names[SORT__COUNT] = { "rate", "count", "name" };

static void __attribute__((format(printf, 4, 5)))
top_add(struct top_screen *sc, int sev, bool bold, const char *fmt, ...)
{
	va_list ap;

	if (sc->n == sc->cap) {
		int cap = sc->cap ? sc->cap * 2 : 64;
		struct top_line *v = realloc(sc->v, cap * sizeof(*v));

		if (!v)
			return; /* a line less on the screen; the next refresh tries again */
		sc->v = v;
		sc->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(sc->v[sc->n].text, sizeof(sc->v[sc->n].text), fmt, ap);
	va_end(ap);
	sc->v[sc->n].sev = sev;
	sc->v[sc->n].bold = bold;
	sc->n++;
}

/* An interface name as it can be shown on a terminal: control bytes become '?'. */
static const char *printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* A rate, or "-" before there is an interval to measure it over. */
static const char *rate_text(double r, bool known, char *buf, size_t len)
{
	if (!known)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", r);
	return buf;
}

struct top_view {
	enum top_sort sort;
	bool paused;
	double delay;
	int flow_rows;
};

struct rule_order {
	const double *rate;
	const struct roceval_counters *c;
	enum top_sort sort;
};
static struct rule_order order; /* qsort() passes no context */

static int by_sort_key(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (order.sort == SORT_RATE && order.rate[x] != order.rate[y])
		return order.rate[x] < order.rate[y] ? 1 : -1;
	if (order.sort != SORT_NAME && order.c->rule[x] != order.c->rule[y])
		return order.c->rule[x] < order.c->rule[y] ? 1 : -1;
	return strcmp(rule_ids[x], rule_ids[y]);
}

static void top_build(struct top_screen *sc, const struct live_iface *li,
		      const struct roceval_settings *cfg, const struct roceval_counters *c,
		      const double *tr, const double *rr, bool current, const double *ta,
		      const double *ra, const struct top_view *view)
{
	char name[IF_NAMESIZE * 2], a[32], b[32];
	int idx[RULE__COUNT], fired = 0;

	top_add(sc, -1, true, "%s: %s mode, program %u, enforce %s", printable(li->ifname, name, sizeof(name)),
		live_mode_name(li->mode), li->prog_id, cfg->enforce ? "ON" : "off");
	top_add(sc, -1, false, "  %-7s %14llu %10s/s  avg %10.1f/s", "frames",
		(unsigned long long)c->total[TOTAL_FRAMES], rate_text(tr[TOTAL_FRAMES], current, a, sizeof(a)),
		ta[TOTAL_FRAMES]);
	top_add(sc, -1, false, "  %-7s %14llu %10s/s  avg %10.1f/s", "roce",
		(unsigned long long)c->total[TOTAL_ROCE], rate_text(tr[TOTAL_ROCE], current, b, sizeof(b)),
		ta[TOTAL_ROCE]);
	top_add(sc, -1, false, "  family rocev1 %llu rocev2_ipv4 %llu rocev2_ipv6 %llu",
		(unsigned long long)c->total[TOTAL_ROCEV1], (unsigned long long)c->total[TOTAL_ROCEV2_IPV4],
		(unsigned long long)c->total[TOTAL_ROCEV2_IPV6]);
	top_add(sc, -1, false, "  icrc ok %llu bad %llu unchecked %llu skipped %llu; dropped %llu",
		(unsigned long long)c->total[TOTAL_ICRC_OK], (unsigned long long)c->total[TOTAL_ICRC_BAD],
		(unsigned long long)c->total[TOTAL_ICRC_UNCHECKED],
		(unsigned long long)c->total[TOTAL_ICRC_SKIPPED], (unsigned long long)c->total[TOTAL_DROPPED]);
	top_add(sc, -1, true, "  %-17s %10s %9s %9s %s", "RULE", "COUNT", "RATE/s", "AVG/s", "SEVERITY");
	for (int i = 0; i < RULE__COUNT; i++)
		if (c->rule[i])
			idx[fired++] = i;
	order = (struct rule_order){ .rate = rr, .c = c, .sort = view->sort };
	qsort(idx, fired, sizeof(idx[0]), by_sort_key);
	for (int k = 0; k < fired; k++) {
		int i = idx[k];

		/* bold while it fires: a rate over the last interval */
		top_add(sc, rule_sevs[i], current && rr[i] > 0, "  %-17s %10llu %9s %9.1f %s", rule_ids[i],
			(unsigned long long)c->rule[i], rate_text(rr[i], current, a, sizeof(a)), ra[i],
			severity_name(rule_sevs[i]));
	}
	if (!fired)
		top_add(sc, -1, false, "  (no rule has fired)");
}

static int by_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	return x->val.packets < y->val.packets ? 1 : x->val.packets > y->val.packets ? -1 : 0;
}

static void top_flow_rows(struct top_screen *sc, const struct flow_entry *e, int n, int rows,
			  bool violating)
{
	char name[128];
	int shown = 0;

	for (int i = 0; i < n && shown < rows; i++) {
		if (violating && !e[i].val.violations)
			break;
		top_add(sc, -1, false, "  %-52s %10llu %12llu %10llu", flow_entry_name(&e[i], name, sizeof(name)),
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].val.violations);
		shown++;
	}
	if (!shown)
		top_add(sc, -1, false, "  (none)");
}

/* The flows that broke the most rules, then the busiest, from the flow table. */
static int top_build_flows(struct top_screen *sc, const struct live_iface *li, int rows)
{
	struct flow_entry *e = NULL;
	int n = flows_collect(li->flows_fd, &e);

	if (n < 0)
		return n;
	cm_annotate(li->cm_ends_fd, e, n);
	top_add(sc, -1, true, "  %-52s %10s %12s %10s", "MOST VIOLATING FLOWS", "PACKETS", "BYTES",
		"VIOLATIONS");
	top_flow_rows(sc, e, n, rows, true);
	if (n) /* e is NULL for an empty table, which qsort() must not be given */
		qsort(e, n, sizeof(*e), by_packets);
	top_add(sc, -1, true, "  %-52s %10s %12s %10s", "BUSIEST FLOWS", "PACKETS", "BYTES", "VIOLATIONS");
	top_flow_rows(sc, e, n, rows, false);
	top_add(sc, -1, false, "  (%d flow%s in the table)", n, n == 1 ? "" : "s");
	free(e);
	return 0;
}

/* Colour pairs by severity; 0 is the terminal's own. */
enum { PAIR_ERROR = 1, PAIR_WARNING = 2 };

static void top_draw(const struct top_screen *sc, const char *title)
{
	int rows = LINES, cols = COLS, y = 0;

	erase();
	/* the title and the key line are always there; the body gets what is left */
	attron(A_REVERSE);
	mvaddnstr(y++, 0, title, cols);
	for (int x = (int)strlen(title); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
	for (int i = 0; i < sc->n && y < rows - 1; i++, y++) {
		int attr = sc->v[i].bold ? A_BOLD : 0;

		if (y == rows - 2 && i < sc->n - 1) {
			mvprintw(y, 0, "  (%d more line%s; a larger terminal shows them)", sc->n - i,
				 sc->n - i == 1 ? "" : "s");
			break;
		}
		if (has_colors() && sc->v[i].sev == SEV_ERROR)
			attr |= COLOR_PAIR(PAIR_ERROR);
		else if (has_colors() && sc->v[i].sev == SEV_WARNING)
			attr |= COLOR_PAIR(PAIR_WARNING);
		attron(attr);
		mvaddnstr(y, 0, sc->v[i].text, cols);
		attroff(attr);
	}
	if (rows > 1)
		mvaddnstr(rows - 1, 0, "q quit  p pause  s sort: rate/count/name", cols);
	refresh();
}

static void top_plain(const struct top_screen *sc, const char *title)
{
	printf("%s\n\n", title);
	for (int i = 0; i < sc->n; i++)
		printf("%s\n", sc->v[i].text);
	putchar('\n');
	fflush(stdout);
}

static void curses_end(void)
{
	if (!isendwin())
		endwin();
}

static int do_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_iface li[MAX_IFACES];
	struct sample prev[MAX_IFACES], first[MAX_IFACES];
	struct top_view view = { .sort = SORT_RATE, .delay = 1, .flow_rows = 5 };
	struct top_screen sc = { 0 };
	__u32 iterations = 0, done = 0;
	bool interactive, current = false, redraw_only = false;
	int n, opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:n:s:", opts, NULL)) != -1) {
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
			for (view.sort = 0; view.sort < SORT__COUNT; view.sort++)
				if (!strcmp(optarg, sort_names[view.sort]))
					break;
			if (view.sort == SORT__COUNT)
				return command_usage_error(&cmd_top, "--sort %s: expected rate, count or name", optarg);
			break;
		default:
			return command_bad_option(&cmd_top, argv);
		}
	}
	n = open_iface_arg(&cmd_top, argc, argv, li);
	if (n < 0)
		return -n;
	catch_signals();
	interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (interactive) {
		const char *term = getenv("TERM");

		setlocale(LC_ALL, "");
		if (!term || !*term || !newterm(term, stdout, stdin)) {
			pr_warn("top: %s%s%s: set TERM to your terminal's type, or run 'roceval top' with "
				"output to a pipe or a file", term && *term ? "unknown terminal type '" : "TERM is not set",
				term && *term ? term : "", term && *term ? "'" : "");
			close_ifaces(li, n);
			return 1;
		}
		atexit(curses_end);
		cbreak();
		noecho();
		curs_set(0);
		keypad(stdscr, TRUE);
		if (has_colors()) {
			start_color();
			use_default_colors();
			init_pair(PAIR_ERROR, COLOR_RED, -1);
			init_pair(PAIR_WARNING, COLOR_YELLOW, -1);
		}
	}

	/* averages since attach: the counters were zero at attach time */
	for (int i = 0; i < n; i++) {
		first[i].t = mono_now() - (boot_now_ns() - li[i].attached_boot_ns) / 1e9;
		memset(&first[i].c, 0, sizeof(first[i].c));
		prev[i] = first[i];
	}
	while (!err && !stop) {
		char title[192], now[32];
		time_t t = time(NULL);
		struct tm tm;

		if (!redraw_only && !view.paused) {
			sc.n = 0;
			for (int i = 0; i < n && !err; i++) {
				struct roceval_settings cfg;
				double tr[TOTAL__COUNT], rr[RULE__COUNT], ta[TOTAL__COUNT], ra[RULE__COUNT];
				struct sample cur;

				err = counters_read(li[i].counters_fd, &cur.c);
				if (!err)
					err = roceval_settings_read(li[i].settings_fd, &cfg);
				if (err)
					break;
				cur.t = mono_now();
				counters_rates(&prev[i].c, &cur.c, cur.t - prev[i].t, tr, rr);
				counters_rates(&first[i].c, &cur.c, cur.t - first[i].t, ta, ra);
				if (i)
					top_add(&sc, -1, false, "%s", "");
				top_build(&sc, &li[i], &cfg, &cur.c, tr, rr, current, ta, ra, &view);
				if (li[i].flows_fd >= 0 && (err = top_build_flows(&sc, &li[i], view.flow_rows)))
					break;
				prev[i] = cur;
			}
		}
		if (err)
			break;
		localtime_r(&t, &tm);
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
		snprintf(title, sizeof(title), "roceval top - %s  every %.1fs  sort %s%s%s", now, view.delay,
			 sort_names[view.sort], view.paused ? "  PAUSED" : "",
			 current ? "" : "  measuring");
		if (interactive)
			top_draw(&sc, title);
		else
			top_plain(&sc, title);
		redraw_only = false;
		if (!view.paused)
			current = true;
		if (iterations && ++done >= iterations)
			break;
		if (!interactive) {
			nap(view.delay);
			continue;
		}
		for (double until = mono_now() + view.delay; !stop;) {
			double left = until - mono_now();
			int ch;

			if (left <= 0)
				break;
			timeout((int)(left * 1000) + 1);
			ch = getch();
			if (ch == ERR)
				continue;
			if (ch == 'q' || ch == 'Q') {
				stop = 1;
			} else if (ch == KEY_RESIZE) {
				redraw_only = true;
				break;
			} else if (ch == 'p' || ch == ' ') {
				view.paused = !view.paused;
				/* rates after a pause are over the time since the last reading */
				redraw_only = true;
				break;
			} else if (ch == 's') {
				view.sort = (view.sort + 1) % SORT__COUNT;
				/* re-sorted from fresh counters */
				break;
			}
		}
	}
	if (interactive)
		curses_end();
	free(sc.v);
	if (err)
		pr_warn("Couldn't read the maps: %s", strerror(-err));
	close_ifaces(li, n);
	return err ? 1 : 0;
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
