// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval replay: the live XDP object, run offline over a capture. */
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "counters.h"
#include "flows.h"
#include "replay.h"
#include "settings.h"

extern const struct command cmd_replay;

static int set_or_usage(struct roceval_settings *cfg, const char *key, const char *value)
{
	char err[256];

	if (settings_set(cfg, key, value, err, sizeof(err)))
		return command_usage_error(&cmd_replay, "%s", err);
	return 0;
}

static int do_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },   { "pmtu", required_argument, NULL, 'm' },
		{ "pkey", required_argument, NULL, 'k' }, { "pkeys", required_argument, NULL, 'k' },
		{ "port", required_argument, NULL, 'p' }, { "set", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 't' },  { "flows", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct roceval_settings cfg;
	struct roceval_counters c;
	char errbuf[PCAP_ERRBUF_SIZE], ports[64] = "";
	struct pcap_pkthdr *hdr;
	const unsigned char *data;
	struct replay *r = NULL;
	struct flow_entry *flows = NULL;
	__u32 top = 20, flow_entries = ROCEVAL_DEFAULT_FLOWS;
	int nflows = 0;
	bool json = false;
	const char *path;
	pcap_t *pcap;
	int opt, ret, err = 0;
	unsigned long long nframes = 0;

	settings_defaults(&cfg);
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":jm:k:p:s:t:f:", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'm':
			if ((ret = set_or_usage(&cfg, "pmtu", optarg)))
				return ret;
			break;
		case 'k':
			if ((ret = set_or_usage(&cfg, "pkeys", optarg)))
				return ret;
			break;
		case 'p':
			/* --port may be repeated; the ports setting takes the list */
			if (strlen(ports) + strlen(optarg) + 2 > sizeof(ports))
				return command_usage_error(&cmd_replay, "too many --port values");
			if (*ports)
				strcat(ports, ",");
			strcat(ports, optarg);
			if ((ret = set_or_usage(&cfg, "ports", ports)))
				return ret;
			break;
		case 't':
			if (!parse_u32(optarg, 1000000, &top))
				return command_usage_error(&cmd_replay, "--top %s: expected a number of flows", optarg);
			break;
		case 'f':
			if (!parse_flow_entries(optarg, &flow_entries))
				return command_usage_error(&cmd_replay, "--flows %s: expected 1 to %u table entries",
							   optarg, ROCEVAL_MAX_FLOW_ENTRIES);
			break;
		case 's': {
			char msg[256];

			if (settings_assign(&cfg, optarg, msg, sizeof(msg)))
				return command_usage_error(&cmd_replay, "%s", msg);
			break;
		}
		case ':':
			return command_usage_error(&cmd_replay, "option '%s' needs a value", argv[optind - 1]);
		default:
			if (!strncmp(argv[optind - 1], "--", 2))
				return command_bad_option(&cmd_replay, argv);
			return command_usage_error(&cmd_replay, "unknown option '-%c'", optopt);
		}
	}
	if (optind != argc - 1)
		return command_usage_error(&cmd_replay, optind == argc ? "a capture file is required"
								       : "one capture file at a time");
	path = argv[optind];

	pcap = pcap_open_offline(path, errbuf);
	if (!pcap) {
		size_t plen = strlen(path);

		/* libpcap names the file itself in some messages, not in others */
		if (!strncmp(errbuf, path, plen) && !strncmp(errbuf + plen, ": ", 2))
			pr_warn("%s", errbuf);
		else
			pr_warn("%s: %s", path, errbuf);
		return EXIT_USAGE;
	}
	if (pcap_datalink(pcap) != DLT_EN10MB) {
		pr_warn("%s: link type %s is not Ethernet; roceval reads Ethernet captures only", path,
			pcap_datalink_val_to_name(pcap_datalink(pcap)) ?: "unknown");
		pcap_close(pcap);
		return EXIT_USAGE;
	}
	if (require_root()) {
		pcap_close(pcap);
		return 1;
	}
	roceval_set_flow_entries(flow_entries);
	r = replay_new(&cfg);
	if (!r) {
		pcap_close(pcap);
		return 1;
	}
	while ((ret = pcap_next_ex(pcap, &hdr, &data)) == 1) {
		err = replay_frame(r, data, hdr->caplen);
		if (err)
			break;
		nframes++;
	}
	if (!err)
		err = replay_flush(r);
	if (!err)
		err = replay_counters(r, &c);
	if (!err) {
		nflows = flows_collect(replay_flows_fd(r), &flows);
		if (nflows < 0) {
			pr_warn("Couldn't read the flow table: %s", strerror(-nflows));
			err = nflows;
		}
	}
	if (!err) {
		if (json) {
			fputc('{', stdout);
			counters_print_json_fields(stdout, &c);
			fputs(", ", stdout);
			flows_print_json_array(stdout, flows, nflows, top);
			fputs("}\n", stdout);
		} else {
			printf("%s: %llu frames, %d flows\n\n", path, nframes, nflows);
			counters_print_table(stdout, &c, NULL, NULL, 1);
			flows_print_table(stdout, flows, nflows, top);
		}
	}
	free(flows);
	if (!err && ret == PCAP_ERROR) {
		/* The counters above cover every frame before the damage. */
		pr_warn("%s: capture damaged after %llu frames: %s", path, nframes, pcap_geterr(pcap));
		err = -EINVAL;
	}
	replay_free(r);
	pcap_close(pcap);
	if (err == -EINVAL)
		return EXIT_USAGE;
	return err ? 1 : 0;
}

const struct command cmd_replay = {
	.name = "replay",
	.args = "[--json] [--top N] [--flows N] [--pmtu N] [--pkey LIST] [--port N]... [--set KEY=VALUE]... FILE",
	.summary = "validate a pcap or pcapng capture offline with the same XDP program",
	.help = "Runs every frame of FILE (Ethernet link type) through the roceval XDP object with\n"
		"BPF_PROG_TEST_RUN, in capture order, and prints the counters.  What it reports is\n"
		"exactly what the program would have counted on a live interface: sequence state\n"
		"(PSN, message order, MSN) is kept across the frames of the capture.\n\n"
		"Options:\n"
		"  -j, --json          one JSON object on stdout: frames, roce, icrc_ok, icrc_bad,\n"
		"                      icrc_unchecked, icrc_skipped, dropped, trace_samples,\n"
		"                      trace_skipped, \"rules\" with every rule id (zeros too) and\n"
		"                      \"flows\": per (source, destination, DestQP) its addresses,\n"
		"                      packets, bytes, violations and non-zero rule counts, sorted\n"
		"                      by violations then packets\n"
		"  -t, --top N         at most N flows in the output (default 20)\n"
		"  -f, --flows N       flow table entries (default 65536); when the capture has more\n"
		"                      flows the oldest are evicted and counted in flow_evicted\n"
		"  -m, --pmtu N        the path MTU the senders use (settings: pmtu)\n"
		"  -k, --pkey LIST     allowed P_Keys, comma-separated (settings: pkeys)\n"
		"  -p, --port N        also validate UDP port N as RoCEv2 (repeatable, up to 4)\n"
		"  -s, --set KEY=VAL   any run-time setting, as 'roceval config' takes them\n\n"
		"Exit status: 0 when the capture was read whole, 1 when BPF failed, 2 for a bad\n"
		"option, an unreadable or non-Ethernet file, or a capture damaged part way (the\n"
		"counters for the frames before the damage are still printed).\n\n"
		"Example:\n"
		"  roceval replay --json --pmtu 1024 rc-send-ack-ipv4.pcap\n",
	.run = do_replay,
};
