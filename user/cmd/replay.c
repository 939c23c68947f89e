// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval replay: the live XDP object, run offline over a capture. */
#include <errno.h>
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
	bool json;
	__u32 top, flow_entries;
	char ports[64]; /* every --port so far: the ports setting takes the list */
};

static int replay_option(void *ctx, int opt, const char *arg)
{
	struct replay_opts *o = ctx;
	struct roceval_settings *cfg = o->cfg;
	char msg[256];

	switch (opt) {
	case 'j':
		o->json = true;
		return 0;
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

/* The options, then the one capture file; 0 or EXIT_USAGE. */
static int parse_options(int argc, char **argv, struct replay_opts *o)
{
	int ret = command_options(&cmd_replay, argc, argv, replay_option, o);

	if (ret)
		return ret;
	if (optind != argc - 1)
		return command_usage_error(&cmd_replay, optind == argc ? "a capture file is required"
								       : "one capture file at a time");
	return 0;
}

/* What the program learned, read back once the capture has run. */
struct replay_result {
	struct roceval_counters c;
	struct roceval_latency_hist latency[LAT__COUNT];
	struct roceval_congestion cc;
	struct flow_entry *flows;
	int nflows, conns_fd, ends_fd, rej_fd;
};

static int collect(struct replay *r, struct replay_result *res)
{
	int err = replay_counters(r, &res->c);

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
	return 0;
}

static void print_json(const struct replay_result *res, const struct replay_opts *o,
		       const struct flow_entry *both_ways)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	counters_json(&w, &res->c);
	json_bool(&w, "icrc_all_bad_both_directions", both_ways);
	retransmission_json(&w, &res->c);
	latency_json(&w, res->latency);
	reorder_json(&w, &res->c);
	congestion_json(&w, &res->cc, o->cfg);
	cm_rej_json(&w, res->rej_fd);
	cm_connections_json(&w, res->conns_fd);
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
	flows_print_table(stdout, res->flows, res->nflows, o->top);
}

static int do_replay(int argc, char **argv)
{
	struct roceval_settings cfg;
	struct replay_opts o = { .cfg = &cfg, .top = 20, .flow_entries = ROCEVAL_DEFAULT_FLOWS };
	struct replay_result res = {};
	struct replay_file f;
	struct replay *r;
	int err;

	settings_defaults(&cfg);
	err = parse_options(argc, argv, &o);
	if (err)
		return err;
	if (replay_file_open(&f, argv[optind]))
		return EXIT_USAGE;
	if (require_caps(false)) {
		replay_file_close(&f);
		return 1;
	}
	roceval_set_flow_entries(o.flow_entries);
	r = replay_new(&cfg);
	if (!r) {
		replay_file_close(&f);
		return 1;
	}
	err = replay_file_run(&f, r) ?: collect(r, &res);
	if (!err) {
		/* one flow of the two hosts, for the note */
		const struct flow_entry *both_ways = icrc_bad_both_ways(&res.c, res.flows, res.nflows);

		if (o.json)
			print_json(&res, &o, both_ways);
		else
			print_text(&res, &o, both_ways, &f);
	}
	free(res.flows);
	if (!err && f.damaged) {
		/* The counters above cover every frame before the damage. */
		pr_warn("%s", f.damage);
		err = -EINVAL;
	}
	replay_free(r);
	replay_file_close(&f);
	if (err == -EINVAL)
		return EXIT_USAGE;
	return err ? 1 : 0;
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
		  "then packets" },
	{ .name = "top", .key = 't', .arg = required_argument, .meta = "N",
	  .help = "at most N flows in the output (default 20)" },
	{ .name = "flows", .key = 'f', .arg = required_argument, .meta = "N",
	  .help = "flows the flow table is sized for (default 65536), in sets of\n"
		  "8 slots, 1.5 slots a flow; a new flow whose two sets are\n"
		  "full evicts the oldest of one, counted in flow_evicted;\n"
		  "the RDMA CM connection table holds N connections (oldest\n"
		  "open ones evicted are counted in conn_evicted)" },
	{ .name = "pmtu", .key = 'm', .arg = required_argument, .meta = "N",
	  .help = "the path MTU the senders use (settings: pmtu)" },
	{ .name = "pkey", .key = 'k', .arg = required_argument, .meta = "LIST",
	  .help = "allowed P_Keys, comma-separated (settings: pkeys); also --pkeys" },
	{ .name = "pkeys", .key = 'k', .arg = required_argument },
	{ .name = "port", .key = 'p', .arg = required_argument, .meta = "N",
	  .help = "also validate UDP port N as RoCEv2 (repeatable, up to 4)" },
	{ .name = "set", .key = 's', .arg = required_argument, .meta = "KEY=VAL",
	  .help = "any run-time setting, as 'roceval config' takes them" },
	CMD_OPT_END,
};

const struct command cmd_replay = {
	.name = "replay",
	.args = "[--json] [--top N] [--flows N] [--pmtu N] [--pkey LIST] [--port N]... [--set KEY=VALUE]... FILE",
	.summary = "validate a pcap or pcapng capture offline with the same XDP program",
	.help = "Runs every frame of FILE through the roceval XDP object with BPF_PROG_TEST_RUN,\n"
		"in capture order, and prints the counters.  What it reports is exactly what the\n"
		"program would have counted on a live interface: sequence state (PSN, message\n"
		"order, MSN) is kept across the frames of the capture.\n\n"
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
		"Exit status: 0 when the capture was read whole, 1 when BPF failed, 2 for a bad\n"
		"option, an unreadable file or one of another link type, or a capture damaged\n"
		"part way (the counters for the frames before the damage are still printed).\n\n"
		"Example:\n"
		"  roceval replay --json --pmtu 1024 rc-send-ack-ipv4.pcap\n",
	.run = do_replay,
};
