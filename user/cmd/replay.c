// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval replay: the live XDP object, run offline over a capture. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "json.h"
#include "live/loader.h"
#include "log.h"
#include "numbers.h"
#include "replay/offline.h"
#include "report/report.h"
#include "rule_names.h"
#include "settings.h"

extern const struct command cmd_replay;

static int set_or_usage(struct roceval_settings *cfg, const char *key, const char *value)
{
	char err[256];

	if (settings_set(cfg, key, value, err, sizeof(err)))
		return command_usage_error(&cmd_replay, "%s", err);
	return 0;
}

/*
 * Every ICRC checked failed, and failed both ways between two hosts.  A
 * receiver silently drops a frame whose ICRC fails, so a conversation whose
 * frames all fail in both directions could not have gone on as captured:
 * the capture point saw the frames before the NIC inserted the ICRC, or the
 * capture path rewrote them.  The verdicts stand; they are about the file.
 */
static const struct flow_entry *icrc_bad_both_ways(const struct roceval_counters *c,
						   const struct flow_entry *flows, int nflows)
{
	if (c->total[TOTAL_ICRC_OK] || !c->total[TOTAL_ICRC_BAD])
		return NULL;
	return flows_icrc_bad_both_ways(flows, nflows);
}

/* What the command line asks beside the settings. */
struct replay_opts {
	struct roceval_settings *cfg;
	bool json, join;
	int fail_on; /* the lowest severity that fails the run (exit 3), or -1 */
	__u32 top, flow_entries; /* flow_entries: 0 unless --flows */
	char ports[64]; /* every --port so far: the ports setting takes the list */
};

/* --fail-on: a capture broke a rule of that severity or above */
#define EXIT_FAIL_ON 3

#define OPT_JOIN OPT_LONG
#define OPT_FAIL_ON (OPT_LONG + 1)

static int fail_on(struct replay_opts *o, const char *arg)
{
	for (int sev = SEV_INFO; sev <= SEV_ERROR; sev++) {
		if (!strcmp(arg, severity_name(sev))) {
			o->fail_on = sev;
			return 0;
		}
	}
	return command_usage_error(&cmd_replay, "--fail-on %s: expected error, warning or info", arg);
}

static int replay_option(void *ctx, int opt, const char *arg)
{
	struct replay_opts *o = ctx;
	struct roceval_settings *cfg = o->cfg;
	char msg[256];

	switch (opt) {
	case 'j':
		o->json = true;
		return 0;
	case OPT_JOIN:
		o->join = true;
		return 0;
	case OPT_FAIL_ON:
		return fail_on(o, arg);
	case 'm':
		return set_or_usage(cfg, "pmtu", arg);
	case 'k':
		return set_or_usage(cfg, "pkeys", arg);
	case 'p':
		if (strlen(o->ports) + strlen(arg) + 2 > sizeof(o->ports))
			return command_usage_error(&cmd_replay, "too many --port values");
		if (*o->ports)
			strcat(o->ports, ",");
		strcat(o->ports, arg);
		return set_or_usage(cfg, "ports", o->ports);
	case 't':
		if (!parse_u32(arg, 1000000, &o->top))
			return command_usage_error(&cmd_replay, "--top %s: expected a number of flows", arg);
		return 0;
	case 'f':
		if (!parse_flow_entries(arg, &o->flow_entries))
			return command_usage_error(&cmd_replay, "--flows %s: expected 1 to %u flows", arg,
						   ROCEVAL_MAX_FLOW_ENTRIES);
		return 0;
	case 's':
		if (settings_assign(cfg, arg, msg, sizeof(msg)))
			return command_usage_error(&cmd_replay, "%s", msg);
		return 0;
	}
	return 0;
}

/* The options, then at least one capture file; 0 or EXIT_USAGE. */
static int parse_options(int argc, char **argv, struct replay_opts *o)
{
	int ret = command_options(&cmd_replay, argc, argv, replay_option, o);

	if (ret)
		return ret;
	if (optind == argc)
		return command_usage_error(&cmd_replay, "a capture file is required");
	return 0;
}

/* What the program learned, read back once the capture has run. */
struct replay_result {
	struct roceval_counters c;
	struct roceval_latency_hist latency[LAT__COUNT];
	struct roceval_congestion cc;
	struct flow_entry *flows;
	struct mirror_entry *mirrors;
	int nflows, nmirrors, conns_fd, ends_fd, rej_fd;
};

static int collect(struct replay *r, struct replay_result *res)
{
	int err = replay_counters(r, &res->c);
	struct mirror_fds mirror;

	if (err)
		return err;
	err = latency_read(replay_latency_fd(r), res->latency);
	if (err) {
		pr_warn("Couldn't read the latency histograms: %s", strerror(-err));
		return err;
	}
	err = congestion_read(replay_congestion_fd(r), &res->cc);
	if (err) {
		pr_warn("Couldn't read the congestion map: %s", strerror(-err));
		return err;
	}
	replay_cm_fds(r, &res->conns_fd, &res->ends_fd, &res->rej_fd);
	res->nflows = flows_collect(replay_flows_fd(r), replay_flow_sets_fd(r), replay_flow_cold_fd(r), &res->flows);
	if (res->nflows < 0) {
		pr_warn("Couldn't read the flow table: %s", strerror(-res->nflows));
		return res->nflows;
	}
	cm_annotate(res->ends_fd, res->flows, res->nflows);
	mirror = replay_mirror_fds(r);
	res->nmirrors = mirrors_collect(&mirror, &res->mirrors);
	if (res->nmirrors < 0) {
		pr_warn("Couldn't read the mirror sessions: %s", strerror(-res->nmirrors));
		return res->nmirrors;
	}
	return 0;
}

/* file: the capture's name, first, when it is one of several judged apart */
static void print_json(const struct replay_result *res, const struct replay_opts *o,
		       const struct flow_entry *both_ways, const char *file)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	if (file)
		json_string(&w, "file", file);
	counters_json(&w, &res->c);
	json_bool(&w, "icrc_all_bad_both_directions", both_ways);
	retransmission_json(&w, &res->c);
	latency_json(&w, res->latency);
	reorder_json(&w, &res->c);
	congestion_json(&w, &res->cc, o->cfg);
	cm_rej_json(&w, res->rej_fd);
	cm_connections_json(&w, res->conns_fd);
	mirrors_json(&w, res->mirrors, res->nmirrors);
	flows_json(&w, res->flows, res->nflows, o->top);
	json_object_end(&w);
	json_end(&w);
}

static void print_text(const struct replay_result *res, const struct replay_opts *o,
		       const struct flow_entry *both_ways, const struct replay_file *f)
{
	const struct roceval_counters *c = &res->c;
	char hosts[2 * INET6_ADDRSTRLEN + 8];

	printf("%s: %llu frames, %d flows\n", f->path, f->frames, res->nflows);
	if (both_ways)
		printf("note: all %llu ICRCs checked failed, both ways between %s: usually a capture "
		       "taken before the NIC inserts the ICRC, or a capture path that rewrites "
		       "frames; the bytes in the file are bad, the fabric may be fine\n",
		       (unsigned long long)c->total[TOTAL_ICRC_BAD], flow_hosts(&both_ways->val.key, hosts, sizeof(hosts)));
	if (c->total[TOTAL_SNAPPED])
		printf("snapped: %llu of the %llu frames were cut by the capture, not on the wire:"
		       " judged on the bytes kept, ICRC not checked\n",
		       (unsigned long long)c->total[TOTAL_SNAPPED], f->frames);
	if (f->unrecorded)
		printf("snapped: %llu frames stop at %u bytes, the capture's longest, though their"
		       " IP lengths say more: the capture cut them and recorded the cut as their"
		       " wire length\n",
		       f->unrecorded, f->snap_unrecorded);
	putchar('\n');
	counters_print_table(stdout, c, NULL, NULL, 1);
	latency_print(stdout, res->latency);
	reorder_print(stdout, &res->c);
	congestion_print(stdout, &res->cc, o->cfg);
	mirrors_print_table(stdout, res->mirrors, res->nmirrors);
	flows_print_table(stdout, res->flows, res->nflows, o->top);
}

/* A capture's row of the table that ends the text of several files judged apart. */
struct row {
	const char *path;
	bool read, damaged;
	unsigned long long frames, roce, errors, warnings;
	struct roceval_rule_set fired;
};

/*
 * A run over the files: the program, loaded once the first file opens (so
 * that one file that cannot be read fails as it always did, before the
 * privileges are asked for), the rows, what the exit status says.
 */
struct replay_run {
	const struct replay_opts *o;
	struct replay *r;
	/* several files judged apart: "file" in each JSON object, the table in text */
	bool many;
	unsigned int reports; /* printed so far */
	bool unread;	      /* a file could not be read, or not whole: exit 2 */
	bool broke;	      /* a capture broke a rule of --fail-on's severity or above: exit 3 */
	struct row *rows;
	int nrows, cap;
	/* --join: the files read as one, what the text calls them, how many */
	struct replay_file total;
	char name[PATH_MAX + 64];
	unsigned int joined;
};

static int add_row(struct replay_run *run, const struct row *row)
{
	if (!run->many || run->o->json)
		return 0;
	if (run->nrows == run->cap) {
		int cap = run->cap ? 2 * run->cap : 64;
		struct row *grown = realloc(run->rows, cap * sizeof(*grown));

		if (!grown) {
			pr_warn("Couldn't allocate the table of files: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		run->rows = grown;
		run->cap = cap;
	}
	run->rows[run->nrows++] = *row;
	return 0;
}

/* The capture's verdicts in the table and the exit status. */
static int judged(struct replay_run *run, const struct replay_file *f, const struct roceval_counters *c)
{
	struct row row = { .path = f->path, .read = true, .damaged = f->damaged, .frames = f->frames,
			   .roce = c->total[TOTAL_ROCE] };

	for (int i = 0; i < RULE__COUNT; i++) {
		if (!c->rule[i])
			continue;
		rule_set_add(&row.fired, i);
		if (rule_sevs[i] == SEV_ERROR)
			row.errors += c->rule[i];
		else if (rule_sevs[i] == SEV_WARNING)
			row.warnings += c->rule[i];
		if (run->o->fail_on >= 0 && rule_sevs[i] >= run->o->fail_on)
			run->broke = true;
	}
	return add_row(run, &row);
}

/* The capture ends: its verdicts read and printed. */
static int report(struct replay_run *run, const struct replay_file *f)
{
	const struct replay_opts *o = run->o;
	struct replay_result res = {};
	int err = replay_finish(run->r) ?: collect(run->r, &res);

	if (!err) {
		/* one flow of the two hosts, for the note */
		const struct flow_entry *both_ways = icrc_bad_both_ways(&res.c, res.flows, res.nflows);

		if (o->json) {
			print_json(&res, o, both_ways, run->many ? f->path : NULL);
		} else {
			if (run->reports)
				putchar('\n');
			print_text(&res, o, both_ways, f);
		}
		run->reports++;
		err = judged(run, f, &res.c);
	}
	free(res.flows);
	free(res.mirrors);
	return err;
}

static void print_rules(const struct roceval_rule_set *fired)
{
	const char *sep = "";

	for (int i = 0; i < RULE__COUNT; i++) {
		if (rule_set_has(fired, i)) {
			printf("%s%s", sep, rule_ids[i]);
			sep = ",";
		}
	}
	if (!*sep)
		putchar('-');
}

/* One row a file: what it came to, or that it could not be read. */
static void print_table(const struct replay_run *run)
{
	int w = 4;

	for (int i = 0; i < run->nrows; i++)
		if ((int)strlen(run->rows[i].path) > w)
			w = strlen(run->rows[i].path);
	printf("\n%-*s %10s %10s %8s %8s  %s\n", w, "file", "frames", "roce", "errors", "warnings", "rules");
	for (int i = 0; i < run->nrows; i++) {
		const struct row *r = &run->rows[i];

		if (!r->read) {
			printf("%-*s %10s %10s %8s %8s  unreadable\n", w, r->path, "-", "-", "-", "-");
			continue;
		}
		printf("%-*s %10llu %10llu %8llu %8llu  ", w, r->path, r->frames, r->roce, r->errors, r->warnings);
		print_rules(&r->fired);
		printf("%s\n", r->damaged ? " (damaged)" : "");
	}
}

/* The program loaded for the first file read; for each file after it in its own capture, reset. */
static int ready(struct replay_run *run)
{
	if (run->r)
		return run->o->join ? 0 : replay_reset(run->r);
	if (require_caps(false))
		return -EPERM;
	if (run->o->flow_entries)
		roceval_set_flow_entries(run->o->flow_entries);
	run->r = replay_new(run->o->cfg);
	return run->r ? 0 : -EIO;
}

/* --join: the file read adds to the one capture. */
static void join(struct replay_run *run, const struct replay_file *f)
{
	struct replay_file *t = &run->total;

	if (!run->joined++)
		t->path = f->path;
	if (run->joined == 1)
		snprintf(run->name, sizeof(run->name), "%s", f->path);
	else
		snprintf(run->name, sizeof(run->name), "%s ... %s (%u files)", t->path, f->path, run->joined);
	t->frames += f->frames;
	t->unrecorded += f->unrecorded;
	if (f->unrecorded)
		t->snap_unrecorded = f->snap_unrecorded;
}

/* One file: judged, or with --join read into the capture; 0, or the runtime failure that ends the run. */
static int one_file(struct replay_run *run, const char *path)
{
	struct replay_file f;
	int err;

	if (replay_file_open(&f, path)) {
		run->unread = true;
		return add_row(run, &(struct row){ .path = path });
	}
	err = ready(run) ?: replay_file_run(&f, run->r);
	if (!err && run->o->join)
		join(run, &f);
	else if (!err)
		err = report(run, &f);
	if (!err && f.damaged) {
		/* The counters cover every frame before the damage. */
		pr_warn("%s", f.damage);
		run->unread = true;
	}
	replay_file_close(&f);
	return err;
}

static int run_files(struct replay_run *run, char **files, int n)
{
	int err = 0;

	roceval_set_frame_bound(replay_frame_bound(files, n, run->o->join));
	for (int i = 0; i < n && !err; i++)
		err = one_file(run, files[i]);
	if (!err && run->o->join && run->r) {
		struct replay_file whole = run->total;

		whole.path = run->name;
		err = report(run, &whole);
	}
	if (!err && run->many && !run->o->json)
		print_table(run);
	return err;
}

static int do_replay(int argc, char **argv)
{
	struct roceval_settings cfg;
	struct replay_opts o = { .cfg = &cfg, .top = 20, .fail_on = -1 };
	struct replay_run run = { .o = &o };
	int err;

	settings_defaults(&cfg);
	err = parse_options(argc, argv, &o);
	if (err)
		return err;
	run.many = !o.join && argc - optind > 1;
	err = run_files(&run, argv + optind, argc - optind);
	replay_free(run.r);
	free(run.rows);
	if (err)
		return EXIT_RUNTIME;
	return run.unread ? EXIT_USAGE : run.broke ? EXIT_FAIL_ON : 0;
}

static const struct cmd_opt replay_opts[] = {
	{ .heading = "Options:" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "one JSON object on stdout: every total (frames, roce, rocev1,\n"
		  "rocev2_ipv4, rocev2_ipv6, icrc_ok, icrc_bad, icrc_unchecked,\n"
		  "icrc_skipped, snapped, ...), \"rules\" with every rule id\n"
		  "(zeros too), \"icrc_all_bad_both_directions\" (true when every ICRC\n"
		  "checked failed, both ways between two hosts: a capture-path\n"
		  "artefact, also said in a note in the table form),\n"
		  "\"latency\" (histograms by kind, ce_cnp among them), \"reorder\"\n"
		  "(the psn_reorder packets by how many PSNs behind the newest\n"
		  "they came: count, sum_psns, p50_psns, p99_psns, buckets of\n"
		  "le_psns), \"pfc\" (PFC pause frames per priority: frames, xoff,\n"
		  "xon, quanta, and pause_ns with link_speed), \"cnp_reaction\"\n"
		  "(after/before rate ratios around CNPs, with cnp_reaction),\n"
		  "\"cm_rej_reasons\" (RDMA CM rejections per reason),\n"
		  "\"connections\" (each RDMA CM connection learned: state,\n"
		  "service, both sides' address, QPN and Starting PSN, PMTU,\n"
		  "P_Key, retry counts, ACK timeout) and \"flows\": per (source,\n"
		  "destination, DestQP) its addresses, packets, bytes,\n"
		  "violations and non-zero rule counts, and for a CM-learned\n"
		  "flow its \"service\" and \"peer_qpn\", sorted by violations\n"
		  "then packets.  Several files: one object a line each, in\n"
		  "order, its \"file\" first" },
	{ .name = "join", .key = OPT_JOIN, .arg = no_argument,
	  .help = "judge the files as one capture, in the order given: the\n"
		  "rotations of tcpdump -C or -G (one report, the state of\n"
		  "each file carried into the next)" },
	{ .name = "fail-on", .key = OPT_FAIL_ON, .arg = required_argument, .meta = "LEVEL",
	  .help = "exit 3 when a capture broke a rule of severity LEVEL or\n"
		  "above: error, warning or info ('roceval rules' lists them)" },
	{ .name = "top", .key = 't', .arg = required_argument, .meta = "N",
	  .help = "at most N flows in the output (default 20)" },
	{ .name = "flows", .key = 'f', .arg = required_argument, .meta = "N",
	  .help = "flows the flow table is sized for (default 65536), in sets of\n"
		  "8 slots, 1.5 slots a flow; a new flow whose two sets are\n"
		  "full evicts the oldest of one, counted in flow_evicted;\n"
		  "the RDMA CM connection table holds N connections (oldest\n"
		  "open ones evicted are counted in conn_evicted).  Without it,\n"
		  "files of at most 4096 frames by their size (16 bytes a\n"
		  "frame) get a power of two of sets with 16 slots a frame:\n"
		  "the largest file's frames, or with --join all of theirs" },
	CMD_OPTS_OFFLINE_SETTINGS,
	CMD_OPT_END,
};

const struct command cmd_replay = {
	.name = "replay",
	.args = "[--json] [--join] [--fail-on LEVEL] [--top N] [--flows N] [--pmtu N] [--pkey LIST] [--port N]... [--set KEY=VALUE]... FILE...",
	.summary = "validate pcap or pcapng captures offline with the same XDP program",
	.help = "Runs every frame of FILE through the roceval XDP object with BPF_PROG_TEST_RUN,\n"
		"in capture order, and prints the counters.  What it reports is exactly what the\n"
		"program would have counted on a live interface: sequence state (PSN, message\n"
		"order, MSN) is kept across the frames of the capture.\n\n"
		"Several FILEs are each judged as if alone, by one load of the program (the kernel\n"
		"verifies it once, which is most of what a small capture costs): between two files\n"
		"every table the program keeps is emptied, the settings kept.  The text gives each\n"
		"file's report, then a table of one row a file: frames, RoCE frames, the counts of\n"
		"error and warning rules, the rules that fired.  A file that cannot be read is named\n"
		"in one line and the others are still judged.  FILE '-' is standard input.\n\n"
		"FILE is Ethernet, Linux cooked as `tcpdump -i any` writes it (LINUX_SLL2, or\n"
		"LINUX_SLL), or raw IP (RAW, IPV4, IPV6: tunnel interfaces, cloud capture\n"
		"services).  A cooked frame gets an Ethernet header with the cooked protocol as\n"
		"EtherType and the sender's MAC when the cooked address is one, else zeros; a raw\n"
		"IP frame gets zero MACs and the EtherType of its IP version (RAW: the first\n"
		"nibble's; neither 4 nor 6, EtherType 0: a frame, not RoCE).\n\n"
		"Frames the capture cut (captured length below the wire length) are snapped: judged\n"
		"on the bytes kept, their ICRC unchecked, never truncated; one line says how many\n"
		"there were.\n\n",
	.opts = replay_opts,
	.col = 22,
	.more = "\n"
		"Exit status: 0 when every capture was read whole, 1 when BPF failed, 2 for a bad\n"
		"option, a file that cannot be read or is of another link type, or a capture damaged\n"
		"part way (the counters for the frames before the damage are still printed), and\n"
		"with --fail-on 3 when a capture broke a rule of that severity or above (0 when none\n"
		"did).  A failure outranks a file not read, which outranks a rule broken.\n\n"
		"Examples:\n"
		"  roceval replay --json --pmtu 1024 rc-send-ack-ipv4.pcap\n"
		"  roceval replay --join ring.pcap0 ring.pcap1 ring.pcap2\n\n"
		"A CI job that fails when a regression run's captures break any error rule, keeping\n"
		"one JSON line a capture:\n"
		"  roceval replay --fail-on error --json results/*.pcap > verdicts.jsonl\n",
	.run = do_replay,
};
