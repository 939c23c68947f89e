// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The operator commands on live attachments: attach, detach, status, stats,
 * top and config.  (trace lives in cmd_trace.c.)  Everything goes through
 * user/live.h, so these commands and the daemon see the same pins.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "json.h"
#include "counters.h"
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
		pr_warn("Couldn't list %s: %s", ROCEVAL_PIN_ROOT, strerror(-n));
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
	if (require_root())
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
				return command_usage_error(&cmd_attach, "--mode %s: expected native, generic or auto",
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
			return command_usage_error(&cmd_attach, "bad option");
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
	if (require_root())
		return 1;
	ret = live_attach(ifname, mode, multiprog, &cfg, &li);
	if (ret)
		return ret == -EINVAL || ret == -ENODEV ? EXIT_USAGE : 1;
	printf("%s: attached roceval (program %u, %s mode%s); pinned in %s/%s\n", ifname, li.prog_id,
	       live_mode_name(li.mode), li.multiprog ? ", libxdp dispatcher" : "", ROCEVAL_PIN_ROOT, ifname);
	live_close(&li);
	return 0;
}

const struct command cmd_attach = {
	.name = "attach",
	.args = "IFACE [--mode native|generic|auto] [--multiprog] [KEY=VALUE]...",
	.summary = "attach the validator to an interface and pin it, counters and all",
	.help = "Loads the roceval XDP program, attaches it to IFACE through a bpf_link and pins the\n"
		"program, the link and the maps under " ROCEVAL_PIN_ROOT "/IFACE/, then exits: the\n"
		"program keeps running and counting until 'roceval detach IFACE'.  Traffic is never\n"
		"changed unless enforce=on.  The program reads frames of any size (multi-buffer).\n\n"
		"If IFACE already runs an XDP program, attach fails and names it: detach it first,\n"
		"or use --multiprog to run beside it through libxdp's dispatcher.\n\n"
		"Options:\n"
		"  -m, --mode MODE   native (driver hook), generic (skb hook, any interface, slower)\n"
		"                    or auto (default: native where the driver supports it)\n"
		"      --multiprog   attach through libxdp's dispatcher (xdp-loader compatible)\n"
		"  -s, --set K=V     a setting, as 'roceval config' takes them; also plain K=V\n"
		"                    arguments and --KEY VALUE options\n"
		"      --flows N     flow table entries (also flows=N), fixed while attached;\n"
		"                    default 65536, about 200 bytes each\n\n"
		"Settings (change them later with 'roceval config'):\n" ROCEVAL_SETTINGS(SETTING_HELP_ARG) "\n"
		"Exit status: 0 attached, 1 it could not be (the reason is printed; nothing is left\n"
		"behind), 2 bad usage, bad setting or no such interface.\n\n"
		"Examples:\n"
		"  roceval attach eth0\n"
		"  roceval attach eth0 --mode generic pmtu=1024 pkeys=0xffff\n"
		"  roceval attach eth0 --multiprog\n",
	.run = do_attach,
};

/* ---- detach ---- */

static int do_detach(int argc, char **argv)
{
	int err;

	if (argc != 2 || argv[1][0] == '-')
		return command_usage_error(&cmd_detach, argc < 2 ? "an interface is required"
								 : "expected exactly one interface");
	if (require_root())
		return 1;
	err = live_detach(argv[1]);
	if (err)
		return err == -EINVAL ? EXIT_USAGE : 1;
	printf("%s: detached roceval\n", argv[1]);
	return 0;
}

const struct command cmd_detach = {
	.name = "detach",
	.args = "IFACE",
	.summary = "detach the validator and remove its pins",
	.help = "Detaches the program (through its bpf_link, or from libxdp's dispatcher) and removes\n"
		ROCEVAL_PIN_ROOT "/IFACE/ with the counters in it.  Other XDP programs are left as\n"
		"they were.  Pins left behind by an interface that no longer exists are removed too.\n\n"
		"Example:\n"
		"  roceval detach eth0\n",
	.run = do_detach,
};

/* ---- status ---- */

static int status_one(struct live_iface *li, bool json, bool first)
{
	struct roceval_settings cfg;
	struct roceval_counters c;
	char since[64], dur[32];
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
	stale = (int)if_nametoindex(li->ifname) != li->ifindex;
	if (json) {
		printf("%s{\"interface\": ", first ? "" : ", ");
		json_str(stdout, li->ifname);
		printf(", \"ifindex\": %d, \"mode\": \"%s\", \"multiprog\": %s, "
		       "\"program_id\": %u, \"attached_since\": \"%s\", \"attached_since_unix\": %lld, "
		       "\"stale\": %s, \"enforce\": %s, \"settings\": ",
		       li->ifindex, live_mode_name(li->mode),
		       li->multiprog ? "true" : "false", li->prog_id,
		       iso_time(li->attached_since, since, sizeof(since)), (long long)li->attached_since,
		       stale ? "true" : "false", cfg.enforce ? "true" : "false");
		settings_print_json(stdout, &cfg);
		printf(", \"memory_bytes\": %llu, \"maps\": %d, \"frames\": %llu, \"roce\": %llu}",
		       (unsigned long long)mem, nmaps, (unsigned long long)c.total[TOTAL_FRAMES],
		       (unsigned long long)c.total[TOTAL_ROCE]);
		return 0;
	}
	printf("%s%s: %s mode%s, program %u, attached since %s (%s)\n", first ? "" : "\n", li->ifname,
	       live_mode_name(li->mode), li->multiprog ? " (libxdp dispatcher)" : "", li->prog_id,
	       since_text(li->attached_since, since, sizeof(since)),
	       duration_text(difftime(time(NULL), li->attached_since), dur, sizeof(dur)));
	if (stale)
		printf("  STALE: the interface it was attached to is gone; 'roceval detach %s' removes the pins\n",
		       li->ifname);
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

static int do_status(int argc, char **argv)
{
	struct live_iface li[MAX_IFACES];
	const char *ifname = NULL;
	bool json = false;
	int n, err = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = true;
		else if (argv[i][0] == '-' || ifname)
			return command_usage_error(&cmd_status, "unexpected '%s'", argv[i]);
		else
			ifname = argv[i];
	}
	if (require_root())
		return 1;
	if (!ifname) {
		char names[MAX_IFACES][IF_NAMESIZE];

		n = live_list_local(names, MAX_IFACES);
		if (n == 0) {
			/* nothing attached is a state to report, not an error */
			printf(json ? "[]\n" : "roceval is not attached to any interface\n");
			return 0;
		}
	}
	n = open_ifaces(ifname, li, MAX_IFACES);
	if (n < 0)
		return 1;
	if (json)
		putchar('[');
	for (int i = 0; i < n; i++)
		err |= status_one(&li[i], json, i == 0);
	if (json)
		puts("]");
	close_ifaces(li, n);
	return err ? 1 : 0;
}

const struct command cmd_status = {
	.name = "status",
	.args = "[IFACE] [--json]",
	.summary = "show where roceval is attached, how, since when, its settings and memory",
	.help = "For IFACE, or every interface of this network namespace roceval is attached to: the\n"
		"attach mode, program id, attach time, whether enforce is on (frames dropped!), frames\n"
		"and RoCEv2 frames seen, the memory the kernel charges for the program's maps\n"
		"(memlock), and every setting.  An attachment whose interface was deleted (or deleted\n"
		"and re-created) since is marked stale: its pins remain until 'roceval detach'.\n\n"
		"Options:\n"
		"  -j, --json   a JSON array, one object per interface\n",
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
			return command_usage_error(&cmd_stats, "bad option");
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
	if (require_root())
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

static struct termios saved_tty;
static bool tty_raw;

static void tty_restore(void)
{
	if (!tty_raw)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	/* show the cursor again, leave the alternate screen */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tty_raw = false;
}

static int tty_make_raw(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tty))
		return -errno;
	t = saved_tty;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	tty_raw = true;
	atexit(tty_restore);
	/* alternate screen, hidden cursor: the shell's screen comes back on exit */
	fputs("\033[?1049h\033[?25l", stdout);
	return 0;
}

static void top_render(FILE *f, const struct live_iface *li, const struct roceval_settings *cfg,
		       const struct roceval_counters *c, const double *tr, const double *rr, double window)
{
	int fired = 0;

	fprintf(f, "%s: %s mode, program %u, enforce %s, rates over %.1f s\n", li->ifname,
		live_mode_name(li->mode), li->prog_id, cfg->enforce ? "ON" : "off", window);
	fprintf(f, "  frames %14llu %12.1f/s    roce   %14llu %12.1f/s\n",
		(unsigned long long)c->total[TOTAL_FRAMES], tr[TOTAL_FRAMES],
		(unsigned long long)c->total[TOTAL_ROCE], tr[TOTAL_ROCE]);
	fprintf(f, "  icrc   ok %llu  bad %llu  unchecked %llu  skipped %llu    dropped %llu\n",
		(unsigned long long)c->total[TOTAL_ICRC_OK], (unsigned long long)c->total[TOTAL_ICRC_BAD],
		(unsigned long long)c->total[TOTAL_ICRC_UNCHECKED],
		(unsigned long long)c->total[TOTAL_ICRC_SKIPPED], (unsigned long long)c->total[TOTAL_DROPPED]);
	fprintf(f, "\n  %-18s %14s %12s  %s\n", "RULE", "COUNT", "RATE", "SEVERITY");
	for (int i = 0; i < RULE__COUNT; i++) {
		if (!c->rule[i])
			continue;
		fired++;
		fprintf(f, "  %-18s %14llu %10.1f/s  %s\n", rule_ids[i], (unsigned long long)c->rule[i], rr[i],
			severity_name(rule_sevs[i]));
	}
	if (!fired)
		fprintf(f, "  (no rule has fired)\n");
}

static int by_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	return x->val.packets < y->val.packets ? 1 : x->val.packets > y->val.packets ? -1 : 0;
}

static void top_flow_rows(FILE *f, const struct flow_entry *e, int n, int rows, bool violating)
{
	char name[128];
	int shown = 0;

	for (int i = 0; i < n && shown < rows; i++) {
		if (violating && !e[i].val.violations)
			break;
		fprintf(f, "  %-52s %12llu %14llu %10llu\n", flow_name(&e[i].key, name, sizeof(name)),
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].val.violations);
		shown++;
	}
	if (!shown)
		fprintf(f, "  (none)\n");
}

/* The flows that broke the most rules, then the busiest, from the flow table. */
static int top_render_flows(FILE *f, const struct live_iface *li, int rows)
{
	struct flow_entry *e = NULL;
	int n = flows_collect(li->flows_fd, &e);

	if (n < 0)
		return n;
	fprintf(f, "\n  %-52s %12s %14s %10s\n", "MOST VIOLATING FLOWS", "PACKETS", "BYTES", "VIOLATIONS");
	top_flow_rows(f, e, n, rows, true);
	if (n) /* e is NULL for an empty table, which qsort() must not be given */
		qsort(e, n, sizeof(*e), by_packets);
	fprintf(f, "\n  %-52s %12s %14s %10s\n", "BUSIEST FLOWS", "PACKETS", "BYTES", "VIOLATIONS");
	top_flow_rows(f, e, n, rows, false);
	fprintf(f, "  (%d flow%s in the table)\n", n, n == 1 ? "" : "s");
	free(e);
	return 0;
}

static int do_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_iface li[MAX_IFACES];
	struct sample prev[MAX_IFACES];
	double delay = 1;
	__u32 iterations = 0, done = 0;
	bool interactive;
	int n, opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:n:", opts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'd':
			delay = strtod(optarg, &end);
			if (*end || !(delay >= 0.1 && delay <= 3600))
				return command_usage_error(&cmd_top, "--delay %s: expected seconds, 0.1-3600", optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, 1000000000, &iterations) || !iterations)
				return command_usage_error(&cmd_top, "--iterations %s: expected a count from 1", optarg);
			break;
		default:
			return command_usage_error(&cmd_top, "bad option");
		}
	}
	n = open_iface_arg(&cmd_top, argc, argv, li);
	if (n < 0)
		return -n;
	catch_signals();
	interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !tty_make_raw();

	/* the first refresh averages over the attachment's life: zero counters at attach time */
	for (int i = 0; i < n; i++) {
		prev[i].t = mono_now() - (boot_now_ns() - li[i].attached_boot_ns) / 1e9;
		memset(&prev[i].c, 0, sizeof(prev[i].c));
	}
	while (!err && !stop) {
		char *text = NULL, now[32];
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		time_t t = time(NULL);
		struct tm tm;

		if (!f) {
			err = -errno;
			break;
		}
		localtime_r(&t, &tm);
		strftime(now, sizeof(now), "%H:%M:%S", &tm);
		fprintf(f, "roceval top - %s%s\n\n", now, interactive ? "   (q quits)" : "");
		for (int i = 0; i < n && !err; i++) {
			struct roceval_settings cfg;
			double tr[TOTAL__COUNT], rr[RULE__COUNT];
			struct sample cur;

			err = counters_read(li[i].counters_fd, &cur.c);
			if (!err)
				err = roceval_settings_read(li[i].settings_fd, &cfg);
			if (err)
				break;
			cur.t = mono_now();
			counters_rates(&prev[i].c, &cur.c, cur.t - prev[i].t, tr, rr);
			top_render(f, &li[i], &cfg, &cur.c, tr, rr, cur.t - prev[i].t);
			if (li[i].flows_fd >= 0 && (err = top_render_flows(f, &li[i], 5)))
				break;
			fputc('\n', f);
			prev[i] = cur;
		}
		fclose(f);
		if (!err) {
			/* one write per frame, cursor home and clear-to-end: no flicker */
			if (interactive)
				fputs("\033[H", stdout);
			fwrite(text, 1, len, stdout);
			if (interactive)
				fputs("\033[J", stdout);
			fflush(stdout);
		}
		free(text);
		if (err || (iterations && ++done >= iterations))
			break;
		if (interactive) {
			struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
			double until = mono_now() + delay;

			while (!stop) {
				double left = until - mono_now();
				char ch;

				if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
					break;
				if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
					stop = 1;
			}
		} else {
			nap(delay);
		}
	}
	tty_restore();
	if (err)
		pr_warn("Couldn't read the maps: %s", strerror(-err));
	close_ifaces(li, n);
	return err ? 1 : 0;
}

const struct command cmd_top = {
	.name = "top",
	.args = "[IFACE] [--delay SECONDS] [--iterations N]",
	.summary = "live view of counters, rates and the rules that fire",
	.help = "Redraws in place every --delay seconds (default 1), like top(1): frame totals and\n"
		"rates, ICRC results, every rule that has fired with its count and rate, and the flows\n"
		"with the most violations and the most packets, for IFACE or every attached interface\n"
		"of this network namespace.  Press q (or Ctrl-C) to quit; the terminal is restored.\n"
		"When stdin or stdout is not a terminal, each refresh is printed after the last one.\n\n"
		"Options:\n"
		"  -d, --delay SECS      refresh interval, 0.1-3600 (default 1)\n"
		"  -n, --iterations N    stop after N refreshes\n",
	.run = do_top,
};
