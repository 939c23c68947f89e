// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* roceval replay: the live XDP object, run offline over a capture. */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "cooked.h"
#include "counters.h"
#include "cm.h"
#include "flows.h"
#include "json.h"
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

/*
 * The length of the frame as its L3 header tells it: Ethernet, up to two
 * VLAN tags, then the IP total length (IPv4), 40 + payload length (IPv6) or
 * 40 + PayLen (a RoCEv1 GRH).  0 when the captured bytes do not say.
 */
static __u32 claimed_len(const unsigned char *d, __u32 caplen)
{
	__u32 off = 12;
	__u16 proto;

	for (int i = 0; i < 3; i++) {
		if (off + 2 > caplen)
			return 0;
		proto = d[off] << 8 | d[off + 1];
		if (proto != 0x8100 && proto != 0x88A8)
			break;
		off += 4;
	}
	off += 2;
	if (proto == 0x0800 && off + 4 <= caplen)
		return off + (d[off + 2] << 8 | d[off + 3]);
	if ((proto == 0x86DD || proto == ROCE_ETH_P_ROCEV1) && off + 6 <= caplen)
		return off + 40 + (d[off + 4] << 8 | d[off + 5]);
	return 0;
}

/*
 * Some capture paths cut frames and record the cut length as the wire
 * length too, so the record alone says the frame was short on the wire.
 * One such record may be a frame really cut on the way; but when a
 * capture's longest records all stop at one length, many times over, while
 * their IP lengths say more, that length is a snap length the capture did
 * not record.  Returns that length, or 0.
 */
#define SNAP_UNRECORDED_MIN 8

static __u32 unrecorded_snaplen(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const unsigned char *data;
	unsigned long long cut = 0;
	bool whole = false;
	__u32 longest = 0;
	struct to_ether conv;
	pcap_t *pcap = pcap_open_offline(path, errbuf);

	if (!pcap)
		return 0;
	to_ether_init(&conv, pcap_datalink(pcap));
	while (pcap_next_ex(pcap, &hdr, &data) == 1) {
		__u32 caplen = hdr->caplen, wire = hdr->len;

		data = to_ether_frame(&conv, data, &caplen, &wire);
		if (!data)
			break;
		if (caplen > longest) {
			longest = caplen;
			cut = 0;
			whole = false;
		}
		if (caplen != longest)
			continue;
		if (wire == caplen && claimed_len(data, caplen) > caplen)
			cut++;
		else
			whole = true;
	}
	to_ether_free(&conv);
	pcap_close(pcap);
	return cut >= SNAP_UNRECORDED_MIN && !whole ? longest : 0;
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
	struct to_ether conv;
	struct replay *r = NULL;
	struct flow_entry *flows = NULL;
	__u32 top = 20, flow_entries = ROCEVAL_DEFAULT_FLOWS;
	int nflows = 0, conns_fd, ends_fd, rej_fd;
	bool json = false;
	const char *path;
	pcap_t *pcap;
	int opt, ret, err = 0;
	unsigned long long nframes = 0, nunrecorded = 0;
	__u32 snap_unrecorded;

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
	if (!to_ether_supported(pcap_datalink(pcap))) {
		pr_warn("%s: link type %s is not Ethernet; roceval reads Ethernet and Linux cooked "
			"(LINUX_SLL, LINUX_SLL2) captures only",
			path, pcap_datalink_val_to_name(pcap_datalink(pcap)) ?: "unknown");
		pcap_close(pcap);
		return EXIT_USAGE;
	}
	if (require_caps(false)) {
		pcap_close(pcap);
		return 1;
	}
	/* standard input cannot be read twice */
	snap_unrecorded = strcmp(path, "-") ? unrecorded_snaplen(path) : 0;
	roceval_set_flow_entries(flow_entries);
	r = replay_new(&cfg);
	if (!r) {
		pcap_close(pcap);
		return 1;
	}
	to_ether_init(&conv, pcap_datalink(pcap));
	while ((ret = pcap_next_ex(pcap, &hdr, &data)) == 1) {
		__u32 caplen = hdr->caplen, wire = hdr->len;

		data = to_ether_frame(&conv, data, &caplen, &wire);
		if (!data) {
			pr_warn("Couldn't allocate a frame buffer: %s", strerror(ENOMEM));
			err = -ENOMEM;
			break;
		}
		if (snap_unrecorded && caplen == snap_unrecorded && wire == caplen &&
		    claimed_len(data, caplen) > caplen) {
			wire = ROCEVAL_WIRE_UNKNOWN;
			nunrecorded++;
		}
		err = replay_frame(r, data, caplen, wire,
				   hdr->ts.tv_sec * 1000000000ULL + hdr->ts.tv_usec * 1000ULL);
		if (err)
			break;
		nframes++;
	}
	to_ether_free(&conv);
	if (!err)
		err = replay_flush(r);
	if (!err)
		err = replay_counters(r, &c);
	if (!err) {
		replay_cm_fds(r, &conns_fd, &ends_fd, &rej_fd);
		nflows = flows_collect(replay_flows_fd(r), &flows);
		if (nflows < 0) {
			pr_warn("Couldn't read the flow table: %s", strerror(-nflows));
			err = nflows;
		} else {
			cm_annotate(ends_fd, flows, nflows);
		}
	}
	if (!err) {
		/* one flow of the two hosts, for the note */
		const struct flow_entry *both_ways = icrc_bad_both_ways(&c, flows, nflows);

		if (json) {
			struct json_writer w;

			json_init(&w, stdout);
			json_object_begin(&w, NULL);
			counters_json(&w, &c);
			json_bool(&w, "icrc_all_bad_both_directions", both_ways);
			cm_rej_json(&w, rej_fd);
			cm_connections_json(&w, conns_fd);
			flows_json(&w, flows, nflows, top);
			json_object_end(&w);
			json_end(&w);
		} else {
			char hosts[2 * INET6_ADDRSTRLEN + 8];

			printf("%s: %llu frames, %d flows\n", path, nframes, nflows);
			if (both_ways)
				printf("note: all %llu ICRCs checked failed, both ways between %s: usually a capture "
				       "taken before the NIC inserts the ICRC, or a capture path that rewrites "
				       "frames; the bytes in the file are bad, the fabric may be fine\n",
				       (unsigned long long)c.total[TOTAL_ICRC_BAD],
				       flow_hosts(&both_ways->key, hosts, sizeof(hosts)));
			if (c.total[TOTAL_SNAPPED])
				printf("snapped: %llu of the %llu frames were cut by the capture, not on the wire:"
				       " judged on the bytes kept, ICRC not checked\n",
				       (unsigned long long)c.total[TOTAL_SNAPPED], nframes);
			if (nunrecorded)
				printf("snapped: %llu frames stop at %u bytes, the capture's longest, though their"
				       " IP lengths say more: the capture cut them and recorded the cut as their"
				       " wire length\n",
				       nunrecorded, snap_unrecorded);
			putchar('\n');
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
	.help = "Runs every frame of FILE through the roceval XDP object with BPF_PROG_TEST_RUN,\n"
		"in capture order, and prints the counters.  What it reports is exactly what the\n"
		"program would have counted on a live interface: sequence state (PSN, message\n"
		"order, MSN) is kept across the frames of the capture.\n\n"
		"FILE is Ethernet, or Linux cooked as `tcpdump -i any` writes it (LINUX_SLL2, or\n"
		"LINUX_SLL): a cooked frame gets an Ethernet header with the cooked protocol as\n"
		"EtherType and the sender's MAC when the cooked address is one, else zeros.\n\n"
		"Frames the capture cut (captured length below the wire length) are snapped: judged\n"
		"on the bytes kept, their ICRC unchecked, never truncated; one line says how many\n"
		"there were.\n\n"
		"Options:\n"
		"  -j, --json          one JSON object on stdout: every total (frames, roce, rocev1,\n"
		"                      rocev2_ipv4, rocev2_ipv6, icrc_ok, icrc_bad, icrc_unchecked,\n"
		"                      icrc_skipped, snapped, ...), \"rules\" with every rule id\n"
		"                      (zeros too), \"icrc_all_bad_both_directions\" (true when every ICRC\n"
		"                      checked failed, both ways between two hosts: a capture-path\n"
		"                      artefact, also said in a note in the table form),\n"
		"                      \"cm_rej_reasons\" (RDMA CM rejections per reason),\n"
		"                      \"connections\" (each RDMA CM connection learned: state,\n"
		"                      service, both sides' address, QPN and Starting PSN, PMTU,\n"
		"                      P_Key, retry counts, ACK timeout) and \"flows\": per (source,\n"
		"                      destination, DestQP) its addresses, packets, bytes,\n"
		"                      violations and non-zero rule counts, and for a CM-learned\n"
		"                      flow its \"service\" and \"peer_qpn\", sorted by violations\n"
		"                      then packets\n"
		"  -t, --top N         at most N flows in the output (default 20)\n"
		"  -f, --flows N       flow table entries (default 65536); when the capture has more\n"
		"                      flows the oldest are evicted and counted in flow_evicted;\n"
		"                      the RDMA CM connection table holds as many connections\n"
		"                      (oldest open ones evicted are counted in conn_evicted)\n"
		"  -m, --pmtu N        the path MTU the senders use (settings: pmtu)\n"
		"  -k, --pkey LIST     allowed P_Keys, comma-separated (settings: pkeys)\n"
		"  -p, --port N        also validate UDP port N as RoCEv2 (repeatable, up to 4)\n"
		"  -s, --set KEY=VAL   any run-time setting, as 'roceval config' takes them\n\n"
		"Exit status: 0 when the capture was read whole, 1 when BPF failed, 2 for a bad\n"
		"option, an unreadable file or one of another link type, or a capture damaged\n"
		"part way (the counters for the frames before the damage are still printed).\n\n"
		"Example:\n"
		"  roceval replay --json --pmtu 1024 rc-send-ack-ipv4.pcap\n",
	.run = do_replay,
};
