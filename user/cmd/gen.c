// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval gen: the options and the run.  The planner, the faults, the
 * output and the summary are the generator's own (user/lib/gen/).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "gen/generator.h"
#include "log.h"
#include "numbers.h"
#include "version.h"

extern const struct command cmd_gen;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '%' && !end[1]) {
		v /= 100;
		end++;
	}
	if (errno || end == s || *end || !(v >= 0 && v <= 1))
		return -EINVAL;
	*out = v;
	return 0;
}

/* --reorder RATE[:D] */
static int reorder_option(struct gen *g, const char *arg)
{
	char rate[64], *colon;

	snprintf(rate, sizeof(rate), "%s", arg);
	colon = strchr(rate, ':');
	if (colon)
		*colon++ = 0;
	g->reorder_depth = GEN_REORDER_DEPTH;
	if (parse_rate(rate, &g->rate[F_REORDER]) ||
	    (colon && (!parse_u32(colon, GEN_REORDER_DEPTH_MAX, &g->reorder_depth) || !g->reorder_depth)))
		return command_usage_error(&cmd_gen, "--reorder wants a rate from 0 to 1 (or 0%% to 100%%), and "
					   "after a colon how many requests later at most, 1 to %u: '%s'",
					   GEN_REORDER_DEPTH_MAX, arg);
	return 0;
}

/* "A,B": two endpoint values of one kind. */
static int parse_pair(const char *s, int (*one)(const char *, uint8_t *), uint8_t out[2][16])
{
	char buf[128], *comma;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf) || !(comma = strchr(buf, ',')))
		return -EINVAL;
	*comma = 0;
	return one(buf, out[0]) || one(comma + 1, out[1]) ? -EINVAL : 0;
}

static int one_ipv4(const char *s, uint8_t *out)
{
	return inet_pton(AF_INET, s, out) == 1 ? 0 : -EINVAL;
}

static int one_ipv6(const char *s, uint8_t *out)
{
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -EINVAL;
}

static int one_mac(const char *s, uint8_t *out)
{
	unsigned int m[6];
	char tail;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 255)
			return -EINVAL;
		out[i] = m[i];
	}
	return 0;
}

static int parse_kinds(const char *s, uint32_t *out)
{
	char buf[256], *tok, *save;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		if (!strcmp(tok, "all")) {
			*out |= (1u << K__COUNT) - 1;
			continue;
		}
		for (k = 0; k < K__COUNT && strcmp(tok, gen_kind_names[k]); k++)
			;
		if (k == K__COUNT)
			return -EINVAL;
		*out |= 1u << k;
	}
	return *out ? 0 : -EINVAL;
}

enum {
	OPT_MAX_SIZE = OPT_LONG,
	OPT_ADDR,
	OPT_ADDR6,
	OPT_MAC,
	OPT_VLAN,
	OPT_PKEY,
	OPT_QUIET,
	OPT_CM,
	OPT_RECONNECT,
	OPT_ACK_DELAY,
	OPT_ENCAP,
	OPT_ENCAP_FAMILY,
	OPT_SESSION,
	OPT_FAULT, /* + enum fault */
};


/* What the command line asks of the run itself, beside the traffic. */
struct gen_cli {
	const char *wpath, *ifname;
	bool json, quiet, seeded;
};

#define NOT_MINE (-1)

/* An option that shapes the conversations: 0, EXIT_USAGE, or NOT_MINE. */
static int traffic_option(struct gen *g, struct gen_cli *cli, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'c':
		if (!parse_u64(arg, GEN_MAX_FRAMES, &g->count) || !g->count)
			return command_usage_error(&cmd_gen, "--count wants 1 to %u: '%s'", GEN_MAX_FRAMES, arg);
		return 0;
	case 'n':
		if (!parse_u64(arg, GEN_MAX_FRAMES, &g->messages) || !g->messages)
			return command_usage_error(&cmd_gen, "--messages wants 1 to %u: '%s'", GEN_MAX_FRAMES, arg);
		return 0;
	case 's':
		if (!parse_u64(arg, UINT64_MAX, &g->seed))
			return command_usage_error(&cmd_gen, "--seed wants an unsigned number: '%s'", arg);
		cli->seeded = true;
		return 0;
	case 'm':
		if (!parse_u64(arg, ROCE_PMTU_MAX, &v) || !ROCE_PMTU_IS_LEGAL(v))
			return command_usage_error(&cmd_gen, "--pmtu must be 256, 512, 1024, 2048 or 4096: '%s'", arg);
		g->pmtu = v;
		return 0;
	case 'q':
		if (!parse_u64(arg, 4096, &v) || !v)
			return command_usage_error(&cmd_gen, "--qps wants 1 to 4096: '%s'", arg);
		g->nqps = v;
		return 0;
	case 't':
		if (parse_kinds(arg, &g->kinds))
			return command_usage_error(&cmd_gen, "--traffic takes a list of send, write, read, atomic, uc, ud, cnp or all: '%s'", arg);
		return 0;
	case 'f':
		if (strcmp(arg, "4") && strcmp(arg, "6") && strcmp(arg, "mixed"))
			return command_usage_error(&cmd_gen, "--family is 4, 6 or mixed: '%s'", arg);
		g->family = arg[0] == 'm' ? 0 : arg[0] - '0';
		return 0;
	case '4':
	case '6':
		g->family = opt - '0';
		return 0;
	case OPT_MAX_SIZE:
		if (!parse_u64(arg, 1u << 30, &v))
			return command_usage_error(&cmd_gen, "--max-size wants 0 to 1073741824 bytes: '%s'", arg);
		g->max_size = v;
		return 0;
	case OPT_CM:
		g->cm = true;
		return 0;
	case OPT_RECONNECT:
		g->reconnect = true;
		return 0;
	case OPT_ACK_DELAY:
		if (!parse_u64(arg, 10000000, &v))
			return command_usage_error(&cmd_gen, "--ack-delay wants 0 to 10000000 microseconds: '%s'", arg);
		g->ack_delay_ns = v * 1000;
		return 0;
	}
	return NOT_MINE;
}

/* An option that names the two hosts or their link: 0, EXIT_USAGE, or NOT_MINE. */
static int host_option(struct gen *g, int opt, const char *arg)
{
	uint8_t m[2][16];
	uint64_t v;

	switch (opt) {
	case OPT_ADDR:
		if (parse_pair(arg, one_ipv4, g->addr4))
			return command_usage_error(&cmd_gen, "--addr wants two IPv4 addresses A,B: '%s'", arg);
		return 0;
	case OPT_ADDR6:
		if (parse_pair(arg, one_ipv6, g->addr6))
			return command_usage_error(&cmd_gen, "--addr6 wants two IPv6 addresses A,B: '%s'", arg);
		return 0;
	case OPT_MAC:
		if (parse_pair(arg, one_mac, m))
			return command_usage_error(&cmd_gen, "--mac wants two MAC addresses A,B: '%s'", arg);
		memcpy(g->mac[0], m[0], 6);
		memcpy(g->mac[1], m[1], 6);
		return 0;
	case OPT_VLAN:
		if (!parse_u64(arg, 4094, &v) || !v)
			return command_usage_error(&cmd_gen, "--vlan wants a VLAN id, 1 to 4094: '%s'", arg);
		g->vlan = v;
		return 0;
	case OPT_PKEY:
		if (!parse_u64(arg, 0xFFFF, &v) || !(v & 0x7FFF))
			return command_usage_error(&cmd_gen, "--pkey wants a valid P_Key (low 15 bits not all zero): '%s'", arg);
		g->pkey = v;
		return 0;
	}
	return NOT_MINE;
}

/* An option of the mirror encapsulation: 0, EXIT_USAGE, or NOT_MINE. */
static int mirror_option(struct gen_encap *e, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case OPT_ENCAP:
		e->kind = gen_encap_kind(arg);
		if (e->kind < 0)
			return command_usage_error(&cmd_gen, "--encap is erspan1, erspan2, erspan3, gre or vxlan: '%s'", arg);
		return 0;
	case OPT_ENCAP_FAMILY:
		if (strcmp(arg, "4") && strcmp(arg, "6"))
			return command_usage_error(&cmd_gen, "--encap-family is 4 or 6: '%s'", arg);
		e->family = arg[0] - '0';
		return 0;
	case OPT_SESSION:
		if (!parse_u64(arg, UINT32_MAX, &v))
			return command_usage_error(&cmd_gen, "--session wants 0 to 4294967295: '%s'", arg);
		e->session = v;
		return 0;
	}
	return NOT_MINE;
}

/* The options of the run and the faults: 0, EXIT_USAGE, or NOT_MINE. */
static int run_option(struct gen *g, struct gen_out *o, struct gen_cli *cli, int opt, const char *arg)
{
	switch (opt) {
	case 'w':
		cli->wpath = arg;
		return 0;
	case 'i':
		cli->ifname = arg;
		return 0;
	case 'r':
		if (!parse_u64(arg, 100000000, &o->pps) || !o->pps)
			return command_usage_error(&cmd_gen, "--rate wants frames per second, 1 or more: '%s'", arg);
		return 0;
	case 'j':
		cli->json = true;
		return 0;
	case OPT_QUIET:
		cli->quiet = true;
		return 0;
	}
	if (opt < OPT_FAULT || opt >= OPT_FAULT + F__COUNT)
		return NOT_MINE;
	if (opt == OPT_FAULT + F_REORDER)
		return reorder_option(g, arg);
	if (parse_rate(arg, &g->rate[opt - OPT_FAULT]))
		return command_usage_error(&cmd_gen, "--%s wants a rate from 0 to 1 (or 0%% to 100%%): '%s'",
					   gen_faults[opt - OPT_FAULT].opt, arg);
	g->qos |= gen_cc_fault(opt - OPT_FAULT);
	return 0;
}

/* What no single option can judge alone. */
static int check_options(const struct gen *g, struct gen_out *o, const struct gen_cli *cli)
{
	const char *encap_wrong = gen_encap_settle(&o->encap, g->rate[F_MIRROR_LOSS]);
	double total_rate = 0;

	if (!cli->wpath == !cli->ifname)
		return command_usage_error(&cmd_gen, "give one of -w FILE or -i IFACE");
	if (o->pps && !cli->ifname)
		return command_usage_error(&cmd_gen, "--rate applies to -i IFACE only");
	for (int i = 0; i < F__COUNT; i++)
		total_rate += g->rate[i];
	if (g->reconnect && !g->cm)
		return command_usage_error(&cmd_gen, "--reconnect makes the RDMA CM connections again: add --cm");
	if ((g->rate[F_START_PSN] || g->rate[F_CM_PMTU]) && !g->cm)
		return command_usage_error(&cmd_gen, "--%s and --%s fault RDMA CM messages: add --cm",
					   gen_faults[F_START_PSN].opt, gen_faults[F_CM_PMTU].opt);
	if (encap_wrong)
		return command_usage_error(&cmd_gen, "%s", encap_wrong);
	if (total_rate > 1)
		return command_usage_error(&cmd_gen, "the fault rates add up to more than 1 (each frame gets one fault at most)");
	return 0;
}

/* What the options fill in. */
struct gen_opts {
	struct gen *g;
	struct gen_out *o;
	struct gen_cli *cli;
};

static int gen_option(void *ctx, int opt, const char *arg)
{
	struct gen_opts *x = ctx;
	int ret = traffic_option(x->g, x->cli, opt, arg);

	if (ret == NOT_MINE)
		ret = host_option(x->g, opt, arg);
	if (ret == NOT_MINE)
		ret = mirror_option(&x->o->encap, opt, arg);
	if (ret == NOT_MINE)
		ret = run_option(x->g, x->o, x->cli, opt, arg);
	return ret == NOT_MINE ? 0 : ret;
}

static int parse_options(int argc, char **argv, struct gen *g, struct gen_out *o, struct gen_cli *cli)
{
	struct gen_opts x = { g, o, cli };
	int ret = command_options(&cmd_gen, argc, argv, gen_option, &x);

	if (ret)
		return ret;
	if (optind != argc)
		return command_usage_error(&cmd_gen, "unexpected argument '%s'", argv[optind]);
	return check_options(g, o, cli);
}

/* The seed (from the clock unless given) and the random streams drawn from it. */
static void seed_streams(struct gen *g, bool seeded)
{
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		g->seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ (uint64_t)getpid() << 32;
	}
	g->plan_rng = g->seed;
	g->merge_rng = g->seed ^ 0x6D657267656D6572ULL;
	g->fault_rng = g->seed ^ 0x6661756C74666175ULL;
}

/* The connections and every packet of their conversations; 0, EXIT_USAGE or -errno. */
static int plan_traffic(struct gen *g)
{
	int err = gen_setup_conns(g);

	if (err == -EINVAL)
		return command_usage_error(&cmd_gen, "--traffic needs one of send, write, read, atomic, uc or ud");
	if (err) {
		pr_warn("Couldn't allocate the connections: %s", strerror(-err));
		return err;
	}
	err = gen_plan(g);
	if (err == -E2BIG)
		return command_usage_error(&cmd_gen, "more than %u frames planned: lower --messages or --max-size",
					   2 * GEN_MAX_FRAMES);
	if (err)
		pr_warn("Couldn't plan the traffic: %s", strerror(-err));
	return err;
}

/* Opens the interface or the capture; `dest` names it in the summary, which goes to `*sumf`. */
static int open_output(struct gen_out *o, const struct gen_cli *cli, const char **dest, FILE **sumf)
{
	const char *path = cli->wpath;
	size_t l;
	FILE *f;

	if (cli->ifname) {
		*dest = cli->ifname;
		return gen_out_open_iface(o, cli->ifname);
	}
	l = strlen(path);
	if (!strcmp(path, "-")) {
		f = stdout;
		*sumf = stderr;
		*dest = "stdout";
	} else {
		f = fopen(path, "wb");
		if (!f) {
			pr_warn("%s: %s", path, strerror(errno));
			return -ENOENT;
		}
		*dest = path;
	}
	if (capture_start(&o->cap, f, l > 7 && !strcmp(path + l - 7, ".pcapng"), "roceval " ROCEVAL_VERSION " gen",
			  (const char *const[]){ "gen" }, 1)) {
		pr_warn("Couldn't write the capture: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Interleaves the connections' packets at random and sends each. */
static int send_all(struct gen *g, struct gen_out *o)
{
	uint32_t *active = calloc(g->nqps, sizeof(*active)), nactive = 0;
	int err = 0;

	if (!active)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nqps; i++)
		if (g->conns[i].n)
			active[nactive++] = i;
	while (nactive && !stop && !err) {
		uint32_t k = rnd_below(&g->merge_rng, nactive);
		struct conn *c = &g->conns[active[k]];

		err = gen_send(g, o, c, &c->d[c->next++]);
		if (c->next == c->n)
			active[k] = active[--nactive];
	}
	free(active);
	return err;
}

/* After the run: an interruption, and the frames the device dropped, reported. */
static int finish(const struct gen_out *o, const struct gen_cli *cli, int err)
{
	if (stop) {
		pr_warn("interrupted after %llu frames: the expected counts cover those frames only",
			(unsigned long long)o->n);
		err = err ?: -EINTR;
	}
	if (cli->ifname && !err) {
		uint64_t lost = gen_if_tx_dropped(cli->ifname) - o->tx_dropped0;

		if (lost) {
			pr_warn("%s dropped %llu frames on transmit (tx_dropped): the receiver saw fewer; lower --rate",
				cli->ifname, (unsigned long long)lost);
			err = -EIO;
		}
	}
	return err;
}

static int do_gen(int argc, char **argv)
{
	struct gen g = {
		.count = 1000, .pmtu = 1024, .nqps = 4, .family = 4, .vlan = -1, .pkey = 0xFFFF,
		.kinds = (1u << K__COUNT) - 1,
		.mac = { { 0x02, 0, 0, 0, 0, 0x01 }, { 0x02, 0, 0, 0, 0, 0x02 } },
		.max_size = UINT32_MAX, /* unset: follows --pmtu */
	};
	struct gen_out o = { .fd = -1, .stop = &stop, .encap.session = -1 };
	struct gen_cli cli = {};
	const char *dest = NULL;
	FILE *sumf = stdout;
	int err;

	one_ipv4("192.0.2.1", g.addr4[0]);
	one_ipv4("192.0.2.2", g.addr4[1]);
	one_ipv6("2001:db8::1", g.addr6[0]);
	one_ipv6("2001:db8::2", g.addr6[1]);
	err = parse_options(argc, argv, &g, &o, &cli);
	if (err)
		return err;
	if (g.max_size == UINT32_MAX)
		g.max_size = 4 * g.pmtu;
	seed_streams(&g, cli.seeded);
	err = plan_traffic(&g) ?: open_output(&o, &cli, &dest, &sumf);
	if (err)
		goto out;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	o.progress = !cli.quiet && isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &o.start);
	o.last_progress = o.start;
	err = send_all(&g, &o);
	gen_out_progress(&o, true);
	if (o.cap.f && fflush(o.cap.f)) {
		pr_warn("Couldn't write %s: %s", dest, strerror(errno));
		err = -EIO;
	}
	if (cli.json)
		gen_summary_json(sumf, &g, &o);
	else
		gen_summary_text(sumf, &g, &o, dest);
	err = finish(&o, &cli, err);
out:
	if (o.cap.f && o.cap.f != stdout)
		fclose(o.cap.f);
	if (o.fd >= 0)
		close(o.fd);
	for (uint32_t i = 0; g.conns && i < g.nqps; i++)
		free(g.conns[i].d);
	free(g.conns);
	if (err == EXIT_USAGE)
		return EXIT_USAGE;
	return err ? 1 : 0;
}

/* A --FAULT RATE option: its name and enum fault (GEN_FAULTS) */
#define FAULT(opt, e) .name = opt, .key = OPT_FAULT + F_##e, .arg = required_argument, .meta = "RATE"
static const struct cmd_opt gen_opts[] = {
	{ .heading = "Output (one of):" },
	{ .name = "write", .key = 'w', .arg = required_argument, .meta = "FILE",
	  .help = "a capture: pcapng when FILE ends in .pcapng, else pcap; '-' is\n"
		  "pcap on stdout (the summary then goes to stderr)" },
	{ .name = "interface", .key = 'i', .arg = required_argument, .meta = "IFACE",
	  .help = "send through an AF_PACKET socket, waiting when the device queue\n"
		  "is full; frames the device still drops are reported (exit 1)" },
	{ .name = "rate", .key = 'r', .arg = required_argument, .meta = "PPS",
	  .help = "with -i: frames per second (default: as fast as the device takes)" },
	{ .heading = "\n"
		     "Traffic:" },
	{ .name = "count", .key = 'c', .arg = required_argument, .meta = "N",
	  .help = "plan at least N frames (default 1000); the last message is\n"
		  "completed and owed ACKs are sent, so a few more may follow.  Faults\n"
		  "change the total: drops remove frames, duplicates and reserved\n"
		  "opcodes add them" },
	{ .name = "messages", .key = 'n', .arg = required_argument, .meta = "N",
	  .help = "plan N messages instead (a CNP counts as one); either is at\n"
		  "most 10000000: run again with another seed for more" },
	{ .name = "seed", .key = 's', .arg = required_argument, .meta = "N",
	  .help = "repeat a run byte for byte (default: from the clock; printed)" },
	{ .name = "pmtu", .key = 'm', .arg = required_argument, .meta = "N",
	  .help = "256, 512, 1024 (default), 2048 or 4096" },
	{ .name = "max-size", .key = OPT_MAX_SIZE, .arg = required_argument, .meta = "BYTES",
	  .help = "largest SEND, WRITE or READ (default 4 x PMTU); UD sends at most\n"
		  "one PMTU" },
	{ .name = "qps", .key = 'q', .arg = required_argument, .meta = "N",
	  .help = "connections (default 4), given RC, UC and UD in turn" },
	{ .name = "traffic", .key = 't', .arg = required_argument, .meta = "LIST",
	  .help = "comma-separated: send, write, read, atomic (RC), uc, ud, cnp, or\n"
		  "all (default)" },
	{ .name = "family", .key = 'f', .arg = required_argument, .meta = "4|6|mixed", .col = 26,
	  .help = "IP version of the connections (default 4; mixed alternates)" },
	{ .key = '4', .arg = no_argument },
	{ .key = '6', .arg = no_argument },
	{ .left = "-4, -6", .col = 26,
	  .help = "same as --family 4 or 6" },
	{ .name = "addr", .key = OPT_ADDR, .arg = required_argument, .meta = "A,B",
	  .help = "IPv4 addresses of the two hosts (default 192.0.2.1,192.0.2.2)" },
	{ .name = "addr6", .key = OPT_ADDR6, .arg = required_argument, .meta = "A,B",
	  .help = "IPv6 addresses (default 2001:db8::1,2001:db8::2)" },
	{ .name = "mac", .key = OPT_MAC, .arg = required_argument, .meta = "A,B",
	  .help = "MAC addresses (default 02:00:00:00:00:01,02:00:00:00:00:02)" },
	{ .name = "vlan", .key = OPT_VLAN, .arg = required_argument, .meta = "ID",
	  .help = "one 802.1Q tag on every frame" },
	{ .name = "pkey", .key = OPT_PKEY, .arg = required_argument, .meta = "P",
	  .help = "BTH P_Key (default 0xFFFF)" },
	{ .name = "cm", .key = OPT_CM, .arg = no_argument,
	  .help = "connect every RC connection with RDMA CM first (REQ, REP,\n"
		  "RTU as NVMe-oF, tcp/4420) and disconnect it after (DREQ,\n"
		  "DREP); the first is rejected once (REQ, REJ, reason 28\n"
		  "consumer) before it connects.  These MADs come on top of\n"
		  "--count and get no fault but the two below.  The REQ\n"
		  "announces an ACK timeout of 4.2 ms (t = 10); a resent RC\n"
		  "request waits 5 ms first, as a requester's timer would\n"
		  "make it (into a capture: its timestamps move on)" },
	{ .name = "reconnect", .key = OPT_RECONNECT, .arg = no_argument,
	  .help = "(with --cm) half way through, close every RC connection\n"
		  "(DREQ, DREP) and connect it again on the same QPNs, each\n"
		  "side's requests starting at a new Starting PSN behind where\n"
		  "they left off, as rxe and many NICs reuse a closed QP's\n"
		  "number: the new connection is judged afresh" },
	{ .name = "ack-delay", .key = OPT_ACK_DELAY, .arg = required_argument, .meta = "USEC",
	  .help = "every RC ACK comes USEC microseconds late: live, gen waits;\n"
		  "in a capture, frames are a microsecond apart and each ACK\n"
		  "that much more (replay's \"ack\" latency shows it)" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "the summary as one JSON object: seed, frames, injected,\n"
		  "mutations, and \"expected\" in the replay schema (frames, roce,\n"
		  "icrc_ok, icrc_bad, rules) with every rule it can predict" },
	{ .name = "quiet", .key = OPT_QUIET, .arg = no_argument,
	  .help = "no progress line (one is shown on a terminal for long runs)" },
	{ .heading = "\n"
		     "Mirror encapsulation: the frames as one mirror session of a switch or a cloud sends them to\n"
		     "a collector, from 198.51.100.1 to 198.51.100.2 (2001:db8:ffff::1 to ::2), MACs\n"
		     "02:00:00:00:00:fe to 02:00:00:00:00:ff.  The summary predicts the mirror totals\n"
		     "(mirror_frames, mirror_lost) and the session as replay lists it (\"mirrors\"); every other\n"
		     "count is what the same frames give bare:", .no_short = true },
	{ .name = "encap", .key = OPT_ENCAP, .arg = required_argument, .meta = "KIND",
	  .help = "wrap every frame, each fault's too: erspan1 (GRE 0x88BE, no\n"
		  "sequence number or ERSPAN header), erspan2 (GRE 0x88BE with\n"
		  "sequence numbers from 0, ERSPAN II header), erspan3 (GRE 0x22EB\n"
		  "with sequence numbers, ERSPAN III header timed in 100 ns\n"
		  "units), gre (GRE-TEB 0x6558 with key and sequence numbers) or\n"
		  "vxlan (UDP to 4789, no checksum over IPv4)" },
	{ .name = "encap-family", .key = OPT_ENCAP_FAMILY, .arg = required_argument, .meta = "4|6",
	  .help = "IP version of the outer header (default 4, whatever --family\n"
		  "says: a collector's address family is its own)" },
	{ .name = "session", .key = OPT_SESSION, .arg = required_argument, .meta = "ID",
	  .help = "the ERSPAN session ID (0 to 1023), GRE key or VXLAN VNI (0 to\n"
		  "16777215); default 1; erspan1 carries none" },
	{ FAULT("mirror-loss", MIRROR_LOSS),
	  .help = "(erspan2, erspan3, gre) a copy lost between the switch\n"
		  "and the collector: its sequence number skipped; a\n"
		  "SEND/WRITE packet as --drop takes (also psn_gap); a\n"
		  "fault, its rate part of the faults' sum below     -> mirror_lost" },
	{ .heading = "\n"
		     "Faults: RATE is the probability that an eligible frame gets it, from 0 to 1 or as a\n"
		     "percentage (0.01 or 1%); the rates must add up to 1 at most, as a frame gets one fault:", .no_short = true },
	{ FAULT("corrupt-icrc", CORRUPT_ICRC),
	  .help = "wrong ICRC                                        -> icrc" },
	{ FAULT("flip-invariant", FLIP),
	  .help = "one bit flipped where the ICRC protects and no other\n"
		  "check looks (IPv4 ID, UDP source port, MigReq, P_Key,\n"
		  "AckReq, RETH/AtomicETH fields, payload, pad)      -> icrc" },
	{ FAULT("mutate-variant", MUTATE),
	  .help = "what the network may change: TTL, DSCP, ECN CE, UDP\n"
		  "checksum, FECN, BECN, IPv6 flow label             -> nothing\n"
		  "(ECN CE marks still count under the info counter ecn_ce)" },
	{ FAULT("drop", DROP),
	  .help = "a SEND/WRITE packet of RC or UC lost; never a flow's\n"
		  "first or last request, one right after a loss, or\n"
		  "one right after a READ before the flow has shown its\n"
		  "PMTU (a FIRST or MIDDLE packet)                   -> psn_gap" },
	{ FAULT("duplicate", DUP),
	  .help = "an RC/UC ONLY request sent twice in a row, the retry\n"
		  "with AckReq set and a new IPv4 ID (on RC also\n"
		  "retx_episode and retx_timeout, as no NAK came; a\n"
		  "READ's also retx_uncompared; a READ only once its\n"
		  "flow has shown its PMTU)                          -> psn_duplicate\n"
		  "(so the counts hold whether or not replay is given\n"
		  "--pmtu: without it, a READ's PSN count is unknown\n"
		  "until then)" },
	{ FAULT("retx-changed", RETX_CHANGED),
	  .help = "an RC SEND/WRITE ONLY request sent twice, the retry\n"
		  "carrying one other payload byte (also\n"
		  "psn_duplicate, retx_episode, retx_timeout)        -> retx_changed" },
	{ FAULT("rnr-early", RNR_EARLY),
	  .help = "an RC SEND/WRITE ONLY request answered by an RNR NAK\n"
		  "(timer code 0, 655.36 ms) and retried at once (also\n"
		  "nak_rnr, psn_duplicate, retx_episode)             -> rnr_retry_early" },
	{ FAULT("nak-wrong-psn", NAK_WRONG),
	  .help = "an RC SEND/WRITE ONLY request lost; after the next\n"
		  "request the responder NAKs the PSN after the lost\n"
		  "one, and the requester resends the lost one and the\n"
		  "next (also psn_gap, nak_psn, 2 psn_duplicate,\n"
		  "retx_episode, retx_uncompared, go_back_early)     -> nak_psn_wrong" },
	{ FAULT("go-back-0", GO_BACK_0),
	  .help = "as above, the NAK naming the lost PSN, and the\n"
		  "requester resends from the packet before it (also\n"
		  "psn_gap, nak_psn, 3 psn_duplicate, retx_episode,\n"
		  "retx_uncompared)                                  -> go_back_early" },
	{ .name = "reorder", .key = OPT_FAULT + F_REORDER, .arg = required_argument, .meta = "RATE[:D]",
	  .help = "an RC/UC request (not a READ, not its flow's first)\n"
		  "swapped with one of the next D of its flow (default\n"
		  "3, at most 127; requests of one side in a row, no\n"
		  "READ), sent a microsecond apart: the first jumps, the\n"
		  "others come 1 to k PSNs behind it (\"expected\" gives\n"
		  "their distances as replay's \"reorder\"; sent live,\n"
		  "only if each swap arrives within reorder_time)    -> psn_reorder" },
	{ FAULT("bad-opcode", BAD_OPCODE),
	  .help = "adds a frame with an opcode reserved for the\n"
		  "transport, on a QP of its own                     -> opcode" },
	{ FAULT("bad-pad", BAD_PAD),
	  .help = "a LAST/ONLY packet sent without its pad bytes     -> pad" },
	{ FAULT("se-misuse", SE),
	  .help = "SE set where only LAST/ONLY SEND or WRITE with\n"
		  "immediate may have it                             -> se" },
	{ FAULT("wrong-start-psn", START_PSN),
	  .help = "(with --cm) a REQ or REP announces a Starting PSN\n"
		  "its side's first request will not carry           -> cm_start_psn" },
	{ FAULT("mismatched-pmtu", CM_PMTU),
	  .help = "(with --cm) a REQ announces half the traffic's PMTU\n"
		  "(512 for 256): every frame it makes too long      -> payload_length" },
	{ .heading = "\n"
		     "Congestion faults.  Data goes at DSCP 26 and ECT(0), CNPs at DSCP 48 Not-ECT; with any of\n"
		     "the first five, the summary predicts the counts replay makes with the settings dscp=26,\n"
		     "cnp_dscp=48, ect=required, cnp_gap=4us and cnp_delay=50us (its \"settings\"), cnp_gap\n"
		     "and ce_unanswered for a capture only, whose times gen fixes:", .no_short = true },
	{ FAULT("dscp", DSCP),
	  .help = "a data frame sent at DSCP 0                       -> dscp" },
	{ FAULT("cnp-dscp", CNP_DSCP),
	  .help = "a CNP sent at DSCP 0                              -> cnp_dscp" },
	{ FAULT("not-ect", NOT_ECT),
	  .help = "a data frame sent Not-ECT                         -> not_ect" },
	{ FAULT("cnp-burst", CNP_BURST),
	  .help = "a CNP sent twice, a microsecond apart (CNPs of the\n"
		  "traffic closer than 4 us to their QP's last count too) -> cnp_gap" },
	{ FAULT("ce-unanswered", CE_UNANSWERED),
	  .help = "an RC/UC/UD request or a READ response CE-marked,\n"
		  "then 51 us later a CNP to its sender (also ecn_ce,\n"
		  "cnp); only where no CNP to its host came in the\n"
		  "50 us before, as that one would answer it; with\n"
		  "any congestion fault --mutate-variant marks none\n"
		  "of those CE                                       -> ce_unanswered" },
	{ FAULT("pfc", PFC),
	  .help = "adds a PFC pause frame before the frame: 1 to 3 of\n"
		  "the 8 priorities, a quarter of them resumed (XON);\n"
		  "on a NIC's link it pauses the peer              -> pfc_frames" },
	CMD_OPT_END,
};

const struct command cmd_gen = {
	.name = "gen",
	.args = "(-w FILE | -i IFACE [--rate PPS]) [options] [--FAULT RATE]...",
	.summary = "generate spec-valid RoCEv2 traffic with faults injected at known rates",
	.help =
		"Plans complete conversations between two hosts A and B - RC SEND, RDMA WRITE and READ of\n"
		"any size split at the PMTU with their ACKs (some coalesced; AETH MSN counting completed\n"
		"messages) and READ responses, RC atomics with ATOMIC_ACKNOWLEDGE, UC SEND and WRITE, UD\n"
		"SEND, and CNPs - on several QPs interleaved at random, then writes them to a capture or\n"
		"sends them on an interface.  Faults are injected at the rates given and counted; on exit\n"
		"a summary says exactly how many of each were injected and which counters 'roceval replay'\n"
		"or a live attachment must show for the frames written.\n\n",
	.opts = gen_opts,
	.col = 24,
	.more = "A dropped FIRST or LAST packet also breaks its message (opcode_sequence); the summary\n"
		"says how many such drops there were and leaves opcode_sequence out of its prediction.\n\n"
		"Exit status: 0 when every frame was written or sent, 1 on a failure (including frames\n"
		"the interface dropped on transmit, or an interruption), 2 for bad usage.\n\n"
		"Examples:\n"
		"  roceval gen -w mixed.pcapng --count 10000 --seed 7 -f mixed\n"
		"  roceval gen -w faults.pcap --seed 1 --drop 1% --corrupt-icrc 0.5% --json\n"
		"  roceval gen -i veth0 --rate 10000 --count 100000 --se-misuse 0.001\n"
		"  roceval gen -w mirror.pcap --seed 1 --encap erspan2 --encap-family 6 --mirror-loss 1%\n",
	.run = do_gen,
};
