// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval trace: on-demand samples of violating frames, through a trace
 * slot of each interface (report/trace_slot.h) for as long as it runs.  The
 * slot is given back on the way out: --count reached,
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE, or an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"
#include "live/loader.h"
#include "log.h"
#include "numbers.h"
#include "report/report.h"
#include "rule_names.h"
#include "settings.h"

extern const struct command cmd_trace;

#define MAX_IFACES 64
#define STR_(x) #x
#define STR(x) STR_(x)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

struct trace;

struct trace_iface {
	struct live_iface li;
	struct trace *t;
	__u32 idx; /* pcapng interface id */
	struct trace_slot ts;
};

struct trace {
	struct trace_iface ifs[MAX_IFACES];
	int n;
	__u32 count; /* stop after this many samples; 0 = never */
	__u32 seen;
	struct capture pcap;
	struct sample_output out;
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct trace_iface *ti = ctx;
	struct trace *t = ti->t;

	if (t->count && t->seen >= t->count)
		return 0;
	if (size < sizeof(struct roceval_trace_event))
		return 0;
	if (sample_report(&t->out, ti->li.ifname, ti->idx, ti->li.cm_ends_fd, data, size)) {
		pr_warn("Couldn't write the pcapng file: %s", strerror(errno));
		stop = SIGPIPE;
	}
	t->seen++;
	if (t->count && t->seen >= t->count) {
		/* switch sampling off now rather than after the poll returns: fewer frames sampled in vain */
		for (int i = 0; i < t->n; i++)
			trace_disarm(&t->ifs[i].li, &t->ifs[i].ts);
		stop = -1;
	}
	return 0;
}

/* ---- the command ---- */

static int parse_addr(const char *s, struct roceval_trace_filter *want)
{
	memset(want->addr, 0, sizeof(want->addr));
	if (inet_pton(AF_INET, s, want->addr) == 1)
		want->addr_family = 4;
	else if (inet_pton(AF_INET6, s, want->addr) == 1)
		want->addr_family = 6;
	else
		return -EINVAL;
	return 0;
}

static int parse_rules(const char *list, struct roceval_rule_set *mask)
{
	char tmp[512], *save, *tok;

	if (strlen(list) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, list);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int r = rule_lookup(tok);

		if (r < 0) {
			command_usage_error(&cmd_trace, "--rule %s: no such rule; 'roceval rules' lists them", tok);
			return -EINVAL;
		}
		rule_set_add(mask, r);
	}
	return 0;
}

static __s64 mono_to_real_offset_ns(void)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return (r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

/* The pcapng file, "-" for stdout, which then carries nothing else. */
static int trace_pcap_open(struct trace *t, const char *path)
{
	const char *names[MAX_IFACES];
	FILE *f = !strcmp(path, "-") ? stdout : fopen(path, "wb");

	for (int i = 0; i < t->n; i++)
		names[i] = t->ifs[i].li.ifname;
	if (!f || capture_start(&t->pcap, f, true, "roceval " ROCEVAL_VERSION " trace", names, t->n)) {
		int err = -errno;

		pr_warn("Couldn't write %s: %s", path, strerror(errno));
		if (f && f != stdout)
			fclose(f);
		return err ?: -EIO;
	}
	t->out.pcap = &t->pcap;
	t->out.quiet = f == stdout;
	return 0;
}

/* What the options fill in. */
struct trace_opts {
	struct trace *t;
	struct roceval_trace_filter *want;
	const char *pcap_path;
};

static int trace_option(void *ctx, int opt, const char *arg)
{
	struct trace_opts *o = ctx;
	struct roceval_trace_filter *want = o->want;

	switch (opt) {
	case 'r':
		return parse_rules(arg, &want->rules) ? EXIT_USAGE : 0;
	case 'q':
		if (!parse_u32(arg, 0xFFFFFF, &want->qpn))
			return command_usage_error(&cmd_trace, "--qpn %s: expected a QP number 0-0xffffff", arg);
		return 0;
	case 'a':
		if (parse_addr(arg, want))
			return command_usage_error(&cmd_trace, "--addr %s: expected an IPv4 or IPv6 address", arg);
		return 0;
	case 'c':
		if (!parse_u32(arg, 0xFFFFFFFF, &o->t->count) || !o->t->count)
			return command_usage_error(&cmd_trace, "--count %s: expected a count from 1", arg);
		return 0;
	case 's':
		if (!parse_u32(arg, ROCEVAL_MAX_SNAPLEN, &want->snaplen) || want->snaplen < 14)
			return command_usage_error(&cmd_trace, "--snaplen %s: expected bytes, 14-%d", arg,
						   ROCEVAL_MAX_SNAPLEN);
		return 0;
	case 'w':
		o->pcap_path = arg;
		return 0;
	case 'j':
		o->t->out.json = true;
		return 0;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct trace *t, struct roceval_trace_filter *want,
			 const char **ifname, const char **pcap_path)
{
	struct trace_opts o = { .t = t, .want = want };
	int ret;

	want->qpn = ROCEVAL_ANY_QPN;
	want->snaplen = ROCEVAL_DEFAULT_SNAPLEN;
	ret = command_options(&cmd_trace, argc, argv, trace_option, &o);
	if (ret)
		return ret;
	*pcap_path = o.pcap_path;
	if (optind < argc)
		*ifname = argv[optind++];
	if (optind < argc)
		return command_usage_error(&cmd_trace, "one interface at a time ('%s'?)", argv[optind]);
	return 0;
}

static int open_ifaces(struct trace *t, const char *ifname)
{
	char names[MAX_IFACES][IF_NAMESIZE];
	int n = 1;

	if (ifname) {
		snprintf(names[0], IF_NAMESIZE, "%s", ifname);
	} else {
		n = live_list_local(names, MAX_IFACES);
		if (n <= 0) {
			pr_warn("no interface has roceval attached; see 'roceval help attach'");
			return -ENOENT;
		}
	}
	for (int i = 0; i < n; i++) {
		struct trace_iface *ti = &t->ifs[t->n];

		ti->ts.rb_fd = -1;
		if (live_open_report(names[i], &ti->li)) {
			live_close(&ti->li); /* what it opened before failing */
			return -ENOENT;
		}
		ti->t = t;
		ti->idx = t->n++;
		if (ti->li.trace_rbs_fd < 0) {
			pr_warn("%s: the attached program has no trace slots (attached by an older roceval?); "
				"detach and attach again", ti->li.ifname);
			return -ENOTSUP;
		}
	}
	return 0;
}

/* Takes a slot on every interface and gathers their ring buffers into one to poll. */
static int arm_all(struct trace *t, const struct roceval_trace_filter *want, struct ring_buffer **rb)
{
	int err = 0;

	for (int i = 0; i < t->n && !err; i++) {
		struct trace_iface *ti = &t->ifs[i];

		err = trace_arm(&ti->li, &ti->ts, want);
		if (err)
			break;
		if (!*rb)
			*rb = ring_buffer__new(ti->ts.rb_fd, on_event, ti, NULL);
		else if (ring_buffer__add(*rb, ti->ts.rb_fd, on_event, ti))
			err = -errno;
		if (!*rb || err) {
			err = err ?: -errno;
			pr_warn("Couldn't open the trace ring buffer of %s: %s", ti->li.ifname, strerror(-err));
		}
	}
	return err;
}

/* Polls until --count, a signal or an error; then switches sampling off and reports the totals. */
static int run_trace(struct trace *t, struct ring_buffer *rb, const char *pcap_path)
{
	__u64 skipped = 0;
	int err = 0;

	while (!err && !stop) {
		int ret = ring_buffer__poll(rb, 200);

		if (ret < 0 && ret != -EINTR) {
			err = ret;
			pr_warn("Couldn't poll the trace ring buffer: %s", strerror(-ret));
		}
	}
	for (int i = 0; i < t->n; i++) {
		struct roceval_counters c;

		if (trace_disarm(&t->ifs[i].li, &t->ifs[i].ts))
			err = err ?: -EIO;
		if (!counters_read(t->ifs[i].li.counters_fd, &c))
			skipped += c.total[TOTAL_TRACE_SKIPPED] - t->ifs[i].ts.skipped0;
	}
	/* samples already in the ring when sampling stopped are still reported */
	if (!err && (!t->count || t->seen < t->count))
		ring_buffer__consume(rb);
	if (t->pcap.f && fflush(t->pcap.f)) {
		pr_warn("Couldn't write %s: %s", pcap_path, strerror(errno));
		err = err ?: -EIO;
	}
	fflush(stdout);
	fprintf(stderr, "%u sample%s, %llu skipped (rate limit or ring buffer full)\n", t->seen,
		t->seen == 1 ? "" : "s", (unsigned long long)skipped);
	return err;
}

/* Every slot given back, every interface and file closed, however the trace ended. */
static void trace_close(struct trace *t, struct ring_buffer *rb)
{
	for (int i = 0; i < t->n; i++) {
		trace_disarm(&t->ifs[i].li, &t->ifs[i].ts);
		live_close(&t->ifs[i].li);
	}
	ring_buffer__free(rb);
	for (int i = 0; i < t->n; i++)
		if (t->ifs[i].ts.rb_fd >= 0)
			close(t->ifs[i].ts.rb_fd);
	if (t->pcap.f && t->pcap.f != stdout)
		fclose(t->pcap.f);
}

static int do_trace(int argc, char **argv)
{
	static struct trace t;
	struct roceval_trace_filter want = {};
	struct ring_buffer *rb = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *ifname = NULL, *pcap_path = NULL;
	int err;

	err = parse_options(argc, argv, &t, &want, &ifname, &pcap_path);
	if (err)
		return err;
	if (require_caps(true))
		return 1;
	err = open_ifaces(&t, ifname);
	if (!err && pcap_path)
		err = trace_pcap_open(&t, pcap_path);
	if (err)
		goto out;

	/* from here on every way out goes through trace_disarm() */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	t.out.mono_to_real_ns = mono_to_real_offset_ns();
	err = arm_all(&t, &want, &rb);
	if (err)
		goto out;
	/* stderr, so it never mixes with samples on stdout; scripts may wait for it */
	fprintf(stderr, "roceval: tracing %s; Ctrl-C to stop\n", ifname ?: "every attached interface");
	fflush(stderr);
	err = run_trace(&t, rb, pcap_path);
out:
	trace_close(&t, rb);
	return err ? 1 : 0;
}

static const struct cmd_opt trace_opts[] = {
	{ .heading = "Options:" },
	{ .name = "rule", .key = 'r', .arg = required_argument, .meta = "ID[,ID]",
	  .help = "only frames that broke one of these rules ('roceval rules')" },
	{ .name = "qpn", .key = 'q', .arg = required_argument, .meta = "N",
	  .help = "only frames to DestQP N" },
	{ .name = "addr", .key = 'a', .arg = required_argument, .meta = "IP",
	  .help = "only frames from or to IP (IPv4 or IPv6)" },
	{ .name = "count", .key = 'c', .arg = required_argument, .meta = "N",
	  .help = "stop after N samples" },
	{ .name = "snaplen", .key = 's', .arg = required_argument, .meta = "N",
	  .help = "bytes of each frame to capture, 14-9216 (default: its headers,\n"
		  "Ethernet to the last transport header, never payload; the\n"
		  "unmasked-ICRC diagnosis needs the whole frame)" },
	{ .name = "pcap", .key = 'w', .arg = required_argument, .meta = "FILE",
	  .help = "also write the samples to FILE as pcapng ('-' for stdout), each\n"
		  "with a comment naming the rules it broke" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "one JSON object per sample and line instead of text" },
	CMD_OPT_END,
};

const struct command cmd_trace = {
	.name = "trace",
	.args = "[IFACE] [--rule ID[,ID...]] [--qpn N] [--addr IP] [--count N] [--snaplen N] "
		"[--pcap FILE] [--json]",
	.summary = "sample violating frames live, decoded like tcpdump, optionally to pcapng",
	.help = "Switches sampling of violating frames on in the attached program for as long as the\n"
		"trace runs (it is off, and costs nothing, otherwise) and prints one line per frame:\n"
		"time, interface, addresses and UDP ports, opcode, DestQP, PSN, length, the rules the\n"
		"frame broke and, for icrc, the expected and found values with a diagnosis where one\n"
		"fits (stored byte-swapped; would match if the variant fields were not masked).  A\n"
		"retransmitted request also names its episode: the PSN it started at and whether a NAK\n"
		"or a timeout started it (JSON: \"retx_episode\": {\"from_psn\", \"after\"}).\n\n"
		"Filters run in the program.  Samples are rate-limited there by a per-CPU token bucket\n"
		"(settings trace_rate, trace_burst); frames turned away are counted in trace_skipped and\n"
		"reported when the trace ends.  Sampling is switched off again however the trace ends.\n"
		"Up to "
		STR(ROCEVAL_MAX_TRACES)
		" traces can run on one interface at once, as with tcpdump: each has its\n"
		"own filters, ring buffer and rate limit, and one ending does not stop the others.\n\n",
	.opts = trace_opts,
	.col = 22,
	.more = "\n"
		"Examples:\n"
		"  roceval trace eth0 --rule icrc --count 10\n"
		"  roceval trace eth0 --qpn 0x11 --snaplen 9216 --pcap bad.pcapng\n",
	.run = do_trace,
};
