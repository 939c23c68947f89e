// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval gen: spec-valid RoCEv2 conversations with faults injected at
 * known rates, so a capture or a live run can be checked against exact
 * expected counters.
 *
 * The traffic is planned first, one list of packets per connection (PSNs,
 * MSNs, ACKs and READ responses worked out in order), then the lists are
 * interleaved at random and each packet is built, maybe faulted, and
 * written.  Every random choice comes from the seed through separate
 * streams (plan, interleaving, packet contents, faults), so the same seed
 * gives the same conversation with or without faults.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "pktgen.h"
#include "roceval_cm.h"
#include "wire.h"

extern const struct command cmd_gen;

/* Faults, in the order the summary lists them. */
#define GEN_FAULTS(X)                                                                        \
	X(CORRUPT_ICRC, "corrupt-icrc", "corrupt_icrc", RULE_ICRC)                           \
	X(FLIP, "flip-invariant", "flip_invariant", RULE_ICRC)                               \
	X(MUTATE, "mutate-variant", "mutate_variant", -1)                                    \
	X(DROP, "drop", "drop", RULE_PSN_GAP)                                                \
	X(DUP, "duplicate", "duplicate", RULE_PSN_DUPLICATE)                                 \
	X(BAD_OPCODE, "bad-opcode", "bad_opcode", RULE_OPCODE)                               \
	X(BAD_PAD, "bad-pad", "bad_pad", RULE_PAD)                                           \
	X(SE, "se-misuse", "se_misuse", RULE_SE)                                             \
	X(START_PSN, "wrong-start-psn", "wrong_start_psn", RULE_CM_START_PSN)                \
	X(CM_PMTU, "mismatched-pmtu", "mismatched_pmtu", RULE_PAYLOAD_LENGTH)

enum fault {
#define FAULT_ENUM(e, opt, json, rule) F_##e,
	GEN_FAULTS(FAULT_ENUM)
#undef FAULT_ENUM
	F__COUNT,
	F_NONE = F__COUNT,
};

#define FAULT_FIELD(e, opt, json, rule) { opt, json, rule },
static const struct {
	const char *opt, *json;
	int rule; /* what roceval counts for it, -1 for nothing */
} faults[F__COUNT] = { GEN_FAULTS(FAULT_FIELD) };

/* What --mutate-variant changes: only fields the ICRC masks. */
#define GEN_MUTATIONS(X) \
	X(TTL, "ttl") X(DSCP, "dscp") X(ECN_CE, "ecn_ce") X(UDP_CSUM, "udp_checksum") \
	X(FECN, "fecn") X(BECN, "becn") X(FLOW_LABEL, "flow_label")

enum mutation {
#define MUT_ENUM(e, name) M_##e,
	GEN_MUTATIONS(MUT_ENUM)
#undef MUT_ENUM
	M__COUNT
};

#define MUT_NAME(e, name) name,
static const char *const mutation_names[M__COUNT] = { GEN_MUTATIONS(MUT_NAME) };

/* --traffic kinds */
enum kind { K_SEND, K_WRITE, K_READ, K_ATOMIC, K_UC, K_UD, K_CNP, K__COUNT };
static const char *const kind_names[K__COUNT] = { "send", "write", "read", "atomic", "uc", "ud", "cnp" };

/* The plan is held in memory (32 bytes a packet) so flows' first and last requests are known. */
#define GEN_MAX_FRAMES 10000000u

#define DF_SE 0x01
#define DF_ACKREQ 0x02
#define DF_REQUEST 0x04	  /* requester-to-responder packet on RC/UC */
#define DF_FIRST_REQ 0x08 /* first request of its flow */
#define DF_LAST_REQ 0x10  /* last request of its flow */
#define DF_CM 0x20	  /* an RDMA CM MAD (d->cm_attr) on QP1 */
#define DF_CM_REJECTED 0x40 /* of the connection attempt --cm has rejected */

/* With --cm: RDMA CM names every RC connection as NVMe-oF's (TCP port 4420). */
#define GEN_CM_SERVICE_ID (0x0000000001ULL << 24 | 0x06 << 16 | 4420)
#define GEN_CM_REJ_REASON 28 /* consumer reject */

/* One planned packet; the bytes are made when it is sent. */
struct desc {
	uint64_t idx; /* plan order: seeds the packet's contents */
	uint32_t psn, len, dmalen, aeth;
	uint8_t side; /* sender: 0 is host A, 1 host B */
	uint8_t opcode;
	uint8_t flags;
	uint8_t cm_attr; /* with DF_CM: the CM attribute id */
};

struct conn {
	unsigned int transport;
	bool ipv6;
	uint32_t qpn[2];
	uint16_t sport[2];
	uint32_t flow_label[2];
	uint32_t psn[2];	  /* next request PSN of each side */
	uint32_t msn[2];	  /* each side's MSN as a responder */
	uint32_t ack_owed[2];	  /* each side owes an ACK for messages up to this PSN */
	bool ack_pending[2];
	uint32_t qkey;
	/* RDMA CM (--cm, RC only) */
	uint32_t psn0[2];	/* each side's first request PSN: what the other side announces */
	uint32_t comm[2];	/* each side's Local Communication ID */
	uint32_t cm_pmtu;	/* PMTU the REQ announced, once it is sent */
	bool gets_request[2];	/* the side receives at least one request */
	/* the planned packets, and how far sending has got */
	struct desc *d;
	size_t n, cap, next;
	/* while sending: the state of each side's request flow, for --drop */
	bool prev_dropped[2], prev_read[2];
};

struct gen {
	/* options */
	uint64_t seed;
	uint64_t count, messages;
	uint32_t pmtu, max_size, nqps, kinds, pkey;
	bool cm; /* RDMA CM handshakes around the RC conversations */
	int family; /* 4, 6 or 0 for mixed */
	int vlan;
	uint8_t mac[2][6];
	uint8_t addr4[2][16], addr6[2][16];
	double rate[F__COUNT];
	/* state */
	uint64_t plan_rng, merge_rng, fault_rng;
	uint64_t ndesc;
	struct conn *conns;
	uint32_t next_bad_qpn;
	uint16_t ip_id[2];
	/* results */
	uint64_t cnp, first_last_drops;
	uint64_t cm_mads, cm_established, cm_rej;
	uint64_t pmtu_breaks; /* frames the --mismatched-pmtu announcements make illegal */
	uint64_t pkey_breaks; /* --flip-invariant P_Key flips on a CM-learned connection */
	uint64_t injected[F__COUNT];
	uint64_t mutated[M__COUNT];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* splitmix64: small, fast, and good enough to make traffic from a seed. */
static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in 0 .. n-1 (n > 0). */
static uint32_t rnd_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)(((rnd(state) >> 32) * n) >> 32);
}

static double rnd_unit(uint64_t *state)
{
	return (rnd(state) >> 11) * (1.0 / 9007199254740992.0);
}

static int push(struct gen *g, struct conn *c, uint8_t side, uint8_t opcode, uint32_t psn,
		uint32_t len, uint8_t flags)
{
	struct desc *d;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct desc *nd = realloc(c->d, cap * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		c->d = nd;
		c->cap = cap;
	}
	d = &c->d[c->n++];
	memset(d, 0, sizeof(*d));
	d->idx = g->ndesc++;
	d->side = side;
	d->opcode = opcode;
	d->psn = psn & ROCE_PSN_MASK;
	d->len = len;
	d->flags = flags;
	return 0;
}

static struct desc *last(struct conn *c)
{
	return &c->d[c->n - 1];
}

/* The responder `side` acknowledges everything up to its owed PSN. */
static int ack(struct gen *g, struct conn *c, int side)
{
	int err;

	if (!c->ack_pending[side])
		return 0;
	err = push(g, c, side, (c->transport << 5) | 0x11, c->ack_owed[side], 0, 0);
	if (err)
		return err;
	last(c)->aeth = 0x1F << 24 | (c->msn[side] & ROCE_PSN_MASK); /* ACK, unlimited credit */
	c->ack_pending[side] = false;
	return 0;
}

/*
 * SEND or WRITE of `size` bytes from `side`, split at the PMTU; `imm` picks
 * the with-immediate (or, for SEND on RC, with-invalidate) last packet.
 */
static int plan_send_write(struct gen *g, struct conn *c, int side, bool write, uint32_t size)
{
	unsigned int tr = c->transport << 5;
	uint32_t npkts = size ? (size + g->pmtu - 1) / g->pmtu : 1;
	uint32_t variant = rnd_below(&g->plan_rng, 4); /* 0,1 plain, 2 immediate, 3 invalidate */
	bool se = false;
	int err;

	if (variant == 3 && (write || c->transport != ROCE_TR_RC))
		variant = 2;
	for (uint32_t i = 0; i < npkts; i++) {
		uint32_t len = i + 1 < npkts ? g->pmtu : size - i * g->pmtu;
		uint8_t op, flags = DF_REQUEST;

		if (npkts == 1)
			op = write ? (variant == 2 ? 0x0B : 0x0A) : (variant == 2 ? 0x05 : variant == 3 ? 0x17 : 0x04);
		else if (i == 0)
			op = write ? 0x06 : 0x00;
		else if (i + 1 < npkts)
			op = write ? 0x07 : 0x01;
		else
			op = write ? (variant == 2 ? 0x09 : 0x08) : (variant == 2 ? 0x03 : variant == 3 ? 0x16 : 0x02);
		if (i + 1 == npkts && (roce_ops[op].flags & OPF_SE_OK) && (!write || variant == 2))
			se = rnd_below(&g->plan_rng, 4) == 0;
		if (i + 1 == npkts && se)
			flags |= DF_SE;
		err = push(g, c, side, tr | op, c->psn[side]++, len, flags);
		if (err)
			return err;
		if (write && (op == 0x06 || op == 0x0A || op == 0x0B))
			last(c)->dmalen = size;
	}
	if (c->transport != ROCE_TR_RC)
		return 0;
	/* the responder completes the message, then ACKs now or coalesces it with later ones */
	c->msn[!side]++;
	c->ack_owed[!side] = c->psn[side] - 1;
	c->ack_pending[!side] = true;
	if (rnd_below(&g->plan_rng, 2)) {
		last(c)->flags |= DF_ACKREQ;
		return ack(g, c, !side);
	}
	return 0;
}

static int plan_read(struct gen *g, struct conn *c, int side, uint32_t size)
{
	uint32_t npkts = size ? (size + g->pmtu - 1) / g->pmtu : 1, psn = c->psn[side];
	int err, resp = !side;

	err = push(g, c, side, 0x0C, psn, 0, DF_REQUEST | DF_ACKREQ);
	if (err)
		return err;
	last(c)->dmalen = size;
	c->psn[side] += npkts; /* a READ takes one PSN per response packet */
	/* the responses acknowledge everything before: no separate ACK is owed any more */
	c->msn[resp]++;
	c->ack_pending[resp] = false;
	for (uint32_t i = 0; i < npkts; i++) {
		uint32_t len = i + 1 < npkts ? g->pmtu : size - i * g->pmtu;
		uint8_t op = npkts == 1 ? 0x10 : i == 0 ? 0x0D : i + 1 < npkts ? 0x0E : 0x0F;

		err = push(g, c, resp, op, psn + i, len, 0);
		if (err)
			return err;
		last(c)->aeth = 0x1F << 24 | (c->msn[resp] & ROCE_PSN_MASK);
	}
	return 0;
}

static int plan_atomic(struct gen *g, struct conn *c, int side)
{
	uint32_t psn = c->psn[side]++;
	int err, resp = !side;

	err = push(g, c, side, rnd_below(&g->plan_rng, 2) ? 0x13 : 0x14, psn, 0, DF_REQUEST | DF_ACKREQ);
	if (err)
		return err;
	c->msn[resp]++;
	c->ack_pending[resp] = false;
	err = push(g, c, resp, 0x12, psn, 0, 0);
	if (!err)
		last(c)->aeth = 0x1F << 24 | (c->msn[resp] & ROCE_PSN_MASK);
	return err;
}

/* Plans one message on a random connection; returns its packet count or -errno. */
static int plan_message(struct gen *g)
{
	struct conn *c = &g->conns[rnd_below(&g->plan_rng, g->nqps)];
	enum kind cand[K__COUNT];
	int ncand = 0, side = rnd_below(&g->plan_rng, 4) == 0; /* mostly A to B */
	size_t before = c->n;
	enum kind k;
	uint32_t size;
	int err = 0;

	switch (c->transport) {
	case ROCE_TR_RC:
		for (int k = K_SEND; k <= K_ATOMIC; k++)
			if (g->kinds & (1u << k))
				cand[ncand++] = k;
		break;
	case ROCE_TR_UC:
		cand[ncand++] = K_SEND;
		cand[ncand++] = K_WRITE;
		break;
	default:
		cand[ncand++] = K_UD;
	}

	size = rnd_below(&g->plan_rng, g->max_size + 1);
	k = cand[rnd_below(&g->plan_rng, ncand)];
	/* CNPs are a few percent of the frames, as on a lightly congested fabric */
	if ((g->kinds & (1u << K_CNP)) && rnd_below(&g->plan_rng, 16) == 0)
		k = K_CNP;
	switch (k) {
	case K_SEND:
	case K_WRITE:
		err = plan_send_write(g, c, side, k == K_WRITE, size);
		break;
	case K_READ:
		err = plan_read(g, c, side, size);
		break;
	case K_ATOMIC:
		err = plan_atomic(g, c, side);
		break;
	case K_UD:
		size %= g->pmtu + 1;
		err = push(g, c, side, (ROCE_TR_UD << 5) | (rnd_below(&g->plan_rng, 2) ? 0x04 : 0x05),
			   c->psn[side]++, size, rnd_below(&g->plan_rng, 4) == 0 ? DF_SE : 0);
		break;
	case K_CNP:
		/* the side that saw congestion marks tells the sender's QP to slow down */
		err = push(g, c, side, ROCE_OPCODE_CNP, 0, 0, 0);
		break;
	default:
		break;
	}
	return err ? err : (int)(c->n - before);
}

/* ---- output: pcap, pcapng or an interface ---- */

#define TS_BASE 1767225600ULL /* 2026-01-01 00:00 UTC: fixed so a seed repeats byte for byte */

struct out {
	FILE *f;
	bool pcapng;
	int fd; /* AF_PACKET socket, or -1 */
	int ifindex;
	const char *ifname;
	unsigned int mtu;
	uint64_t pps; /* 0: as fast as possible */
	struct timespec start, last_progress;
	bool progress;
	uint64_t n;
	uint64_t tx_dropped0;
};

static double now_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int write_all(struct out *o, const void *p, size_t n)
{
	if (fwrite(p, 1, n, o->f) != n) {
		pr_warn("Couldn't write the capture: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

static int out_header(struct out *o)
{
	if (o->pcapng) {
		uint32_t shb[7] = { 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0xFFFFFFFF, 0xFFFFFFFF, 28 };
		uint32_t idb[5] = { 1, 20, 1 /* LINKTYPE_ETHERNET, reserved 0 */, 0, 20 };
		int err;

		shb[3] = 1; /* major 1, minor 0 */
		err = write_all(o, shb, sizeof(shb));
		return err ? err : write_all(o, idb, sizeof(idb));
	} else {
		uint32_t hdr[6] = { 0xA1B2C3D4, 0x00040002, 0, 0, 65535, 1 };

		return write_all(o, hdr, sizeof(hdr));
	}
}

/* Interface statistics through netlink (getifaddrs), so they come from our network namespace. */
static uint64_t if_tx_dropped(const char *ifname)
{
	struct ifaddrs *ifa, *i;
	uint64_t v = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET && i->ifa_data &&
		    !strcmp(i->ifa_name, ifname))
			v = ((struct rtnl_link_stats *)i->ifa_data)->tx_dropped;
	freeifaddrs(ifa);
	return v;
}

static int out_open_iface(struct out *o, const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = {};
	int sndbuf = 4 << 20;

	o->ifname = ifname;
	o->ifindex = if_nametoindex(ifname);
	if (!o->ifindex) {
		pr_warn("%s: no such interface", ifname);
		return -ENODEV;
	}
	/* protocol 0: this socket only sends, it never receives a copy of anything */
	o->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (o->fd < 0) {
		pr_warn("Couldn't open an AF_PACKET socket: %s", strerror(errno));
		return -errno;
	}
	sll.sll_ifindex = o->ifindex;
	if (bind(o->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		pr_warn("%s: couldn't bind the AF_PACKET socket: %s", ifname, strerror(errno));
		return -errno;
	}
	setsockopt(o->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(o->fd, SIOCGIFMTU, &ifr) == 0)
		o->mtu = ifr.ifr_mtu;
	o->tx_dropped0 = if_tx_dropped(ifname);
	return 0;
}

static void out_progress(struct out *o, bool final)
{
	double t = now_since(&o->start);

	if (!o->progress)
		return;
	if (!final && now_since(&o->last_progress) < 0.25)
		return;
	clock_gettime(CLOCK_MONOTONIC, &o->last_progress);
	if (final)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\rroceval gen: %llu frames, %.1f s, %.0f frames/s\033[K",
			(unsigned long long)o->n, t, t > 0 ? o->n / t : 0);
}

static int out_frame(struct out *o, const uint8_t *frame, size_t len)
{
	if (o->fd >= 0) {
		if (o->pps) {
			double due = (double)o->n / o->pps, t = now_since(&o->start);

			if (due > t) {
				struct timespec ts = { .tv_sec = (time_t)(due - t),
						       .tv_nsec = (long)(((due - t) - (time_t)(due - t)) * 1e9) };

				nanosleep(&ts, NULL);
			}
		}
		if (o->mtu && len - 14 > o->mtu + (len > 18 && frame[12] == 0x81 && frame[13] == 0x00 ? 4 : 0)) {
			pr_warn("%s: a %zu-byte frame does not fit the MTU of %u; lower --pmtu or raise the MTU",
				o->ifname, len, o->mtu);
			return -EMSGSIZE;
		}
		for (;;) {
			if (send(o->fd, frame, len, 0) == (ssize_t)len)
				break;
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				if (stop)
					return -EINTR;
				usleep(50); /* the device queue is full: wait, never drop */
				continue;
			}
			pr_warn("%s: couldn't send a frame: %s", o->ifname, strerror(errno));
			return -errno;
		}
	} else {
		uint64_t us = o->n; /* one frame per microsecond of capture time */
		int err;

		if (o->pcapng) {
			uint32_t pad = (4 - (len & 3)) & 3, tot = 32 + len + pad;
			uint64_t ts = TS_BASE * 1000000ULL + us;
			uint32_t h[7] = { 6, tot, 0, ts >> 32, (uint32_t)ts, len, len };
			static const uint8_t zeros[4];

			err = write_all(o, h, sizeof(h));
			if (!err)
				err = write_all(o, frame, len);
			if (!err)
				err = write_all(o, zeros, pad);
			if (!err)
				err = write_all(o, &tot, 4);
		} else {
			uint32_t h[4] = { TS_BASE + us / 1000000, us % 1000000, len, len };

			err = write_all(o, h, sizeof(h));
			if (!err)
				err = write_all(o, frame, len);
		}
		if (err)
			return err;
	}
	o->n++;
	if (o->pps || (o->n & 255) == 0) /* paced runs are slow enough to look at the clock each frame */
		out_progress(o, false);
	return 0;
}

/* ---- building, faulting and sending each planned packet ---- */

static void fill_spec(struct gen *g, const struct conn *c, const struct desc *d, struct pkt_spec *s,
		      uint8_t *payload, uint64_t *drng)
{
	int side = d->side;
	bool cnp = d->opcode == ROCE_OPCODE_CNP;

	memset(s, 0, sizeof(*s));
	memcpy(s->src_mac, g->mac[side], 6);
	memcpy(s->dst_mac, g->mac[!side], 6);
	s->vlan = g->vlan;
	s->ipv6 = c->ipv6;
	memcpy(s->saddr, c->ipv6 ? g->addr6[side] : g->addr4[side], 16);
	memcpy(s->daddr, c->ipv6 ? g->addr6[!side] : g->addr4[!side], 16);
	/* DSCP 26 and ECT(0) for data; CNPs on their own class, not ECN-capable */
	s->tos = cnp ? 48 << 2 : 26 << 2 | 2;
	s->ttl = 64;
	s->ip_id = g->ip_id[side]++;
	s->flow_label = c->flow_label[side];
	s->sport = c->sport[side];
	s->opcode = d->opcode;
	s->se = d->flags & DF_SE;
	s->ackreq = d->flags & DF_ACKREQ;
	s->migreq = !cnp && c->transport != ROCE_TR_UD;
	s->becn = cnp;
	s->pkey = g->pkey;
	s->dqpn = c->qpn[!side];
	s->psn = d->psn;
	s->qkey = c->qkey;
	s->src_qp = c->qpn[side];
	s->va = rnd(drng) & ~7ULL; /* AtomicETH needs 8-byte alignment; RETH takes any */
	s->rkey = (uint32_t)rnd(drng);
	s->dmalen = d->dmalen;
	s->aeth = d->aeth;
	s->swap_add = rnd(drng);
	s->compare = rnd(drng);
	s->orig = rnd(drng);
	s->imm = (uint32_t)rnd(drng);
	for (uint32_t i = 0; i < d->len; i += 8) {
		uint64_t v = rnd(drng);

		memcpy(payload + i, &v, d->len - i < 8 ? d->len - i : 8);
	}
	s->payload = payload;
	s->payload_len = d->len;
	s->padcnt = -1;
	s->pad_bytes = -1;
}

static bool fault_eligible(const struct gen *g, const struct conn *c, const struct desc *d, int f)
{
	const struct roce_op *op = &roce_ops[d->opcode & 0x1F];
	bool cnp = d->opcode == ROCE_OPCODE_CNP;

	if (d->flags & DF_CM) {
		/* a CM MAD gets only the faults of what it announces */
		if (d->flags & DF_CM_REJECTED)
			return false;
		if (f == F_START_PSN) /* counted by the first request to the side it announces for */
			return (d->cm_attr == CM_ATTR_REQ && c->gets_request[0]) ||
			       (d->cm_attr == CM_ATTR_REP && c->gets_request[1]);
		return f == F_CM_PMTU && d->cm_attr == CM_ATTR_REQ;
	}
	switch (f) {
	case F_START_PSN:
	case F_CM_PMTU:
		return false;
	case F_DROP:
		/*
		 * One lost SEND/WRITE packet is exactly one psn_gap: the flow's
		 * first request only sets expectations, after its last one
		 * nothing would notice, and a loss right after another loss
		 * would merge into one gap.
		 */
		return (d->flags & DF_REQUEST) && !(d->flags & (DF_FIRST_REQ | DF_LAST_REQ)) &&
		       (op->family == FAM_SEND || op->family == FAM_WRITE) && !c->prev_dropped[d->side];
	case F_DUP:
		/* a repeated ONLY is one psn_duplicate and keeps every message well formed */
		return (d->flags & DF_REQUEST) && op->position == POS_ONLY;
	case F_BAD_OPCODE:
		return !cnp;
	case F_BAD_PAD:
		return !cnp && (d->len & 3);
	case F_SE:
		return !cnp && !(op->flags & OPF_SE_OK);
	default:
		return true;
	}
}

/* A bit the ICRC protects and no other check reads: what a bad link or buffer would flip. */
static void flip_invariant(uint8_t *fr, const struct pkt_layout *lay, uint8_t opcode, uint64_t *rng)
{
	struct { uint32_t off, len; uint8_t mask; } r[8];
	const struct roce_op *op = &roce_ops[opcode & 0x1F];
	uint32_t n = 0, total = 0, pick;

	if (!lay->ipv6)
		r[n++] = (typeof(r[0])){ lay->l3 + 4, 2, 0xFF }; /* IPv4 identification */
	r[n++] = (typeof(r[0])){ lay->l4, 2, 0xFF };		   /* UDP source port */
	r[n++] = (typeof(r[0])){ lay->bth + 1, 1, 0x40 };	   /* MigReq */
	r[n++] = (typeof(r[0])){ lay->bth + 2, 2, 0xFF };	   /* P_Key: one flip keeps it valid */
	r[n++] = (typeof(r[0])){ lay->bth + 8, 1, 0x80 };	   /* AckReq */
	if (opcode != ROCE_OPCODE_CNP) {
		if (op->reth_off != ROCE_NO_HDR) /* RETH VA and R_Key, not the DMA length */
			r[n++] = (typeof(r[0])){ lay->xth + op->reth_off, 12, 0xFF };
		if (op->atomic_off != ROCE_NO_HDR) /* R_Key and operands, not the VA's alignment */
			r[n++] = (typeof(r[0])){ lay->xth + op->atomic_off + 8, 20, 0xFF };
		if (lay->icrc > lay->payload) /* payload and pad */
			r[n++] = (typeof(r[0])){ lay->payload, lay->icrc - lay->payload, 0xFF };
	}
	for (uint32_t i = 0; i < n; i++)
		total += r[i].len;
	pick = rnd_below(rng, total);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t bits[8];
		int nb = 0;

		if (pick >= r[i].len) {
			pick -= r[i].len;
			continue;
		}
		for (int b = 0; b < 8; b++)
			if (r[i].mask & (1u << b))
				bits[nb++] = 1u << b;
		fr[r[i].off + pick] ^= bits[rnd_below(rng, nb)];
		return;
	}
}

static enum mutation mutate_variant(uint8_t *fr, const struct pkt_layout *lay, bool cnp, uint64_t *rng)
{
	enum mutation cand[M__COUNT];
	int n = 0;
	uint8_t *ip = fr + lay->l3, *udp = fr + lay->l4, *bth = fr + lay->bth;
	enum mutation m;

	cand[n++] = M_TTL;
	cand[n++] = M_DSCP;
	if (!cnp) /* routers mark CE only on ECN-capable packets */
		cand[n++] = M_ECN_CE;
	cand[n++] = M_UDP_CSUM;
	cand[n++] = M_FECN;
	if (!cnp) /* a CNP has BECN set already */
		cand[n++] = M_BECN;
	if (lay->ipv6)
		cand[n++] = M_FLOW_LABEL;
	m = cand[rnd_below(rng, n)];

	switch (m) {
	case M_TTL: /* a few routed hops */
		ip[lay->ipv6 ? 7 : 8] -= 1 + rnd_below(rng, 8);
		break;
	case M_DSCP: {
		uint8_t tc = lay->ipv6 ? (ip[0] << 4 | ip[1] >> 4) : ip[1];
		uint8_t dscp = ((tc >> 2) + 1 + rnd_below(rng, 63)) & 63;

		tc = dscp << 2 | (tc & 3);
		if (lay->ipv6) {
			ip[0] = (ip[0] & 0xF0) | tc >> 4;
			ip[1] = (ip[1] & 0x0F) | (tc & 0x0F) << 4;
		} else {
			ip[1] = tc;
		}
		break;
	}
	case M_ECN_CE:
		if (lay->ipv6)
			ip[1] |= 0x30;
		else
			ip[1] |= 0x03;
		break;
	case M_UDP_CSUM: {
		uint16_t v = (udp[6] << 8 | udp[7]) + 1 + rnd_below(rng, 0xFFFE);

		udp[6] = v >> 8;
		udp[7] = v;
		break;
	}
	case M_FECN:
		bth[4] |= 0x80;
		break;
	case M_BECN:
		bth[4] |= 0x40;
		break;
	case M_FLOW_LABEL:
		ip[3] ^= 1 + rnd_below(rng, 255);
		break;
	default:
		break;
	}
	pkt_ipv4_csum(fr, lay); /* as the router that made the change would */
	return m;
}

static int send_reserved_opcode(struct gen *g, struct out *o, const struct conn *c, const struct desc *d,
				uint8_t *frame, uint8_t *payload, uint64_t *rng)
{
	unsigned int tr = d->opcode >> 5;
	struct desc bad = *d;
	struct conn alone = *c;
	struct pkt_spec s;
	struct pkt_layout lay;
	uint32_t op;
	size_t len;

	do /* a reserved operation of this transport, as the opcode table defines it */
		op = rnd_below(rng, 32);
	while (roce_ops[op].transports & (1u << tr));
	bad.opcode = tr << 5 | op;
	bad.len = 4 * rnd_below(rng, 17);
	bad.flags = 0;
	/*
	 * On a QP of its own: the stateful rules judge nothing on a flow's
	 * first packet, so this frame breaks `opcode` and nothing else.
	 */
	alone.qpn[!d->side] = g->next_bad_qpn++ & ROCE_PSN_MASK;
	fill_spec(g, &alone, &bad, &s, payload, rng);
	s.psn = (uint32_t)rnd(rng) & ROCE_PSN_MASK;
	len = pkt_build(&s, frame, PKT_MAX_FRAME, &lay);
	return out_frame(o, frame, len);
}

/* What roceval's payload rule says of `len` bytes under `pmtu` (rocev2.md section 3). */
static bool payload_breaks_pmtu(const struct roce_op *op, uint32_t len, uint32_t pmtu)
{
	switch (op->payload) {
	case PL_PMTU:
		return len != pmtu;
	case PL_LAST:
		return len == 0 || len > pmtu;
	case PL_ONLY:
		return len > pmtu;
	default:
		return false;
	}
}

static uint8_t cm_mtu_code(uint32_t pmtu)
{
	uint8_t code = 1;

	while ((128u << code) < pmtu)
		code++;
	return code;
}

/* A CM MAD (IBA ch. 12) on UD QP1, with the fault `f` in what it announces. */
static int send_cm(struct gen *g, struct out *o, struct conn *c, const struct desc *d, int f,
		   uint64_t *drng)
{
	static uint8_t frame[PKT_MAX_FRAME], mad[CM_MAD_LEN];
	uint8_t *m = mad + CM_MAD_HDR_LEN;
	/* the rejected attempt has its own communication id */
	uint32_t comm = c->comm[0] ^ (d->flags & DF_CM_REJECTED ? 0x80000000u : 0);
	uint32_t psn, pmtu = g->pmtu;
	struct pkt_layout lay;
	struct pkt_spec s;
	size_t len;

	fill_spec(g, c, d, &s, mad, drng);
	memset(mad, 0, sizeof(mad));
	mad[CM_MAD_BASE_VERSION] = 1;
	mad[CM_MAD_CLASS] = CM_MGMT_CLASS;
	mad[2] = 2; /* class version */
	mad[3] = 3; /* Send */
	/* connecting is one transaction, disconnecting another */
	put64(mad + CM_MAD_TID, (uint64_t)comm << 1 | (d->cm_attr >= CM_ATTR_DREQ));
	put16(mad + CM_MAD_ATTR, d->cm_attr);
	switch (d->cm_attr) {
	case CM_ATTR_REQ:
		psn = c->psn0[1];
		if (f == F_START_PSN)
			psn += 1 + rnd_below(&g->fault_rng, 1000);
		if (f == F_CM_PMTU)
			pmtu = g->pmtu > 256 ? g->pmtu / 2 : 512;
		if (!(d->flags & DF_CM_REJECTED))
			c->cm_pmtu = pmtu;
		put32(m + CM_LOCAL_COMM_ID, comm);
		put64(m + CM_REQ_SERVICE_ID, GEN_CM_SERVICE_ID);
		put32(m + CM_REQ_LOCAL_QPN, c->qpn[0] << 8 | 1);
		put32(m + CM_REQ_START_PSN, (psn & ROCE_PSN_MASK) << 8 | 0x16 << 3 | 7);
		put16(m + CM_REQ_PKEY, g->pkey);
		m[CM_REQ_MTU_RNR] = cm_mtu_code(pmtu) << 4 | 7;
		m[CM_REQ_MTU_RNR + 1] = 0xF0; /* max CM retries */
		m[CM_REQ_ACK_TIMEOUT] = 0x13 << 3;
		break;
	case CM_ATTR_REP:
		psn = c->psn0[0];
		if (f == F_START_PSN)
			psn += 1 + rnd_below(&g->fault_rng, 1000);
		put32(m + CM_LOCAL_COMM_ID, c->comm[1]);
		put32(m + CM_REMOTE_COMM_ID, comm);
		put32(m + CM_REP_LOCAL_QPN, c->qpn[1] << 8);
		put32(m + CM_REP_START_PSN, (psn & ROCE_PSN_MASK) << 8);
		m[CM_REP_START_PSN + 4] = 1; /* responder resources */
		m[CM_REP_START_PSN + 5] = 1; /* initiator depth */
		m[CM_REP_START_PSN + 7] = 7 << 5; /* RNR retry count */
		break;
	case CM_ATTR_REJ:
		put32(m + CM_REMOTE_COMM_ID, comm);
		put16(m + CM_REJ_REASON, GEN_CM_REJ_REASON);
		g->cm_rej++;
		break;
	case CM_ATTR_RTU:
		g->cm_established++;
		/* fall through */
	case CM_ATTR_DREQ:
		put32(m + CM_LOCAL_COMM_ID, comm);
		put32(m + CM_REMOTE_COMM_ID, c->comm[1]);
		if (d->cm_attr == CM_ATTR_DREQ)
			put32(m + CM_DREQ_REMOTE_QPN, c->qpn[1] << 8);
		break;
	case CM_ATTR_DREP:
		put32(m + CM_LOCAL_COMM_ID, c->comm[1]);
		put32(m + CM_REMOTE_COMM_ID, comm);
		break;
	}
	s.dqpn = s.src_qp = ROCE_GSI_QPN;
	s.qkey = 0x80010000; /* the GSI's well-known Q_Key */
	s.psn = 0;
	len = pkt_build(&s, frame, sizeof(frame), &lay);
	g->cm_mads++;
	return out_frame(o, frame, len);
}

static int send_desc(struct gen *g, struct out *o, struct conn *c, const struct desc *d)
{
	static uint8_t frame[PKT_MAX_FRAME], payload[ROCE_PMTU_MAX + 8];
	uint64_t drng = g->seed ^ (d->idx + 1) * 0xD1B54A32D192ED03ULL;
	const struct roce_op *op = &roce_ops[d->opcode & 0x1F];
	struct pkt_layout lay;
	struct pkt_spec s;
	int f = F_NONE, err;
	double u = rnd_unit(&g->fault_rng), acc = 0;
	size_t len;

	for (int i = 0; i < F__COUNT; i++) {
		if (!g->rate[i] || !fault_eligible(g, c, d, i))
			continue;
		acc += g->rate[i];
		if (u < acc) {
			f = i;
			break;
		}
	}
	if (d->flags & DF_REQUEST)
		c->prev_dropped[d->side] = f == F_DROP;
	if (f != F_NONE)
		g->injected[f]++;
	if (f == F_DROP) {
		if (op->position == POS_FIRST || op->position == POS_LAST)
			g->first_last_drops++;
		return 0;
	}

	if (d->flags & DF_CM)
		return send_cm(g, o, c, d, f, &drng);
	/* a PMTU announced smaller or larger than the traffic's makes some payloads illegal */
	if (c->cm_pmtu && c->cm_pmtu != g->pmtu && d->opcode >> 5 == ROCE_TR_RC &&
	    payload_breaks_pmtu(op, d->len, c->cm_pmtu))
		g->pmtu_breaks += f == F_DUP ? 2 : 1;
	fill_spec(g, c, d, &s, payload, &drng);
	if (f == F_BAD_PAD) /* the pad left out: the transport length is no multiple of 4 */
		s.padcnt = s.pad_bytes = 0;
	len = pkt_build(&s, frame, sizeof(frame), &lay);
	switch (f) {
	case F_CORRUPT_ICRC: {
		uint32_t x = 1 + rnd_below(&g->fault_rng, 0xFFFFFFFE);

		for (int i = 0; i < 4; i++)
			frame[lay.icrc + i] ^= x >> (8 * i);
		break;
	}
	case F_FLIP:
		flip_invariant(frame, &lay, d->opcode, &g->fault_rng);
		/* a connection's P_Key was negotiated: a flip in its partition bits breaks cm_pkey too */
		if (c->cm_pmtu && d->opcode >> 5 == ROCE_TR_RC &&
		    ((get16(frame + lay.bth + 2) ^ g->pkey) & 0x7FFF))
			g->pkey_breaks++;
		break;
	case F_MUTATE:
		g->mutated[mutate_variant(frame, &lay, d->opcode == ROCE_OPCODE_CNP, &g->fault_rng)]++;
		break;
	case F_SE:
		frame[lay.bth + 1] |= 0x80;
		pkt_finish(frame, &lay);
		break;
	default:
		break;
	}
	if (d->opcode == ROCE_OPCODE_CNP)
		g->cnp++;
	err = out_frame(o, frame, len);
	if (!err && f == F_DUP)
		err = out_frame(o, frame, len);
	if (!err && f == F_BAD_OPCODE)
		err = send_reserved_opcode(g, o, c, d, frame, payload, &g->fault_rng);
	return err;
}

/* ---- options, planning and the summary ---- */

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
		for (k = 0; k < K__COUNT && strcmp(tok, kind_names[k]); k++)
			;
		if (k == K__COUNT)
			return -EINVAL;
		*out |= 1u << k;
	}
	return *out ? 0 : -EINVAL;
}

static int setup_conns(struct gen *g)
{
	unsigned int trs[3], ntr = 0;

	if (g->kinds & ((1u << K_SEND) | (1u << K_WRITE) | (1u << K_READ) | (1u << K_ATOMIC)))
		trs[ntr++] = ROCE_TR_RC;
	if (g->kinds & (1u << K_UC))
		trs[ntr++] = ROCE_TR_UC;
	if (g->kinds & (1u << K_UD))
		trs[ntr++] = ROCE_TR_UD;
	if (!ntr)
		return -EINVAL;
	g->conns = calloc(g->nqps, sizeof(*g->conns));
	if (!g->conns)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nqps; i++) {
		struct conn *c = &g->conns[i];

		c->transport = trs[i % ntr];
		c->ipv6 = g->family == 6 || (g->family == 0 && (i & 1));
		c->qkey = (uint32_t)rnd(&g->plan_rng) & 0x7FFFFFFF;
		for (int side = 0; side < 2; side++) {
			bool unique;

			do { /* QPs of the generated conversations stay below the reserved-opcode QPs */
				c->qpn[side] = 0x10 + rnd_below(&g->plan_rng, 0x7FFFF0);
				unique = true;
				for (uint32_t j = 0; j <= i; j++)
					for (int s2 = 0; s2 < 2; s2++)
						if ((j < i || s2 < side) &&
						    g->conns[j].qpn[s2] == c->qpn[side])
							unique = false;
			} while (!unique);
			c->sport[side] = 49152 + rnd_below(&g->plan_rng, 16384);
			c->flow_label[side] = rnd_below(&g->plan_rng, 1u << 20);
			/* the first connection starts just short of the wrap, so 2^24-1 -> 0 is exercised */
			c->psn[side] = i == 0 ? ROCE_PSN_MASK - rnd_below(&g->plan_rng, 32)
					      : rnd_below(&g->plan_rng, ROCE_PSN_MASK + 1);
			c->psn0[side] = c->psn[side];
			/* from the seed but not the plan's stream, so --cm leaves the plan as it was */
			c->comm[side] = (uint32_t)((g->seed + 1) * 0x9E3779B97F4A7C15ULL >> 32) + 2 * i + side;
		}
	}
	g->next_bad_qpn = 0xF00000;
	return 0;
}

static int push_cm(struct gen *g, struct conn *c, uint8_t side, uint8_t attr, uint8_t flags)
{
	int err = push(g, c, side, ROCE_OPCODE_UD_SEND_ONLY, 0, CM_MAD_LEN, DF_CM | flags);

	if (!err)
		last(c)->cm_attr = attr;
	return err;
}

/*
 * --cm: host A connects every RC connection through RDMA CM (REQ, REP, RTU)
 * before its first message and disconnects it (DREQ, DREP) after its last;
 * the first RC connection is rejected once (REQ, REJ) before it succeeds.
 */
static int plan_cm(struct gen *g, bool open)
{
	bool first = true;
	int err = 0;

	for (uint32_t i = 0; i < g->nqps && !err; i++) {
		struct conn *c = &g->conns[i];

		if (c->transport != ROCE_TR_RC)
			continue;
		if (!open) {
			err = push_cm(g, c, 0, CM_ATTR_DREQ, 0) ?: push_cm(g, c, 1, CM_ATTR_DREP, 0);
			continue;
		}
		if (first)
			err = push_cm(g, c, 0, CM_ATTR_REQ, DF_CM_REJECTED) ?:
			      push_cm(g, c, 1, CM_ATTR_REJ, DF_CM_REJECTED);
		first = false;
		err = err ?: push_cm(g, c, 0, CM_ATTR_REQ, 0) ?: push_cm(g, c, 1, CM_ATTR_REP, 0) ?:
			      push_cm(g, c, 0, CM_ATTR_RTU, 0);
	}
	return err;
}

static int plan(struct gen *g)
{
	uint64_t frames = 0, msgs = 0;
	int err = g->cm ? plan_cm(g, true) : 0;

	if (err)
		return err;

	while (g->messages ? msgs < g->messages : frames < g->count) {
		int n = plan_message(g);

		if (n < 0)
			return n;
		frames += n;
		msgs++;
		if (frames > 2ULL * GEN_MAX_FRAMES)
			return -E2BIG;
	}
	for (uint32_t i = 0; i < g->nqps; i++) {
		struct conn *c = &g->conns[i];

		for (int side = 0; side < 2; side++) {
			struct desc *first = NULL, *lastd = NULL;
			int err = c->transport == ROCE_TR_RC ? ack(g, c, side) : 0;

			if (err)
				return err;
			for (size_t j = 0; j < c->n; j++) {
				if (c->d[j].side != side || !(c->d[j].flags & DF_REQUEST))
					continue;
				if (!first)
					first = &c->d[j];
				lastd = &c->d[j];
			}
			if (first) {
				first->flags |= DF_FIRST_REQ;
				lastd->flags |= DF_LAST_REQ;
				c->gets_request[!side] = true;
			}
		}
	}
	return g->cm ? plan_cm(g, false) : 0;
}

static int expected_rules(const struct gen *g, uint64_t exp[RULE__COUNT], bool known[RULE__COUNT])
{
	for (int r = 0; r < RULE__COUNT; r++) {
		exp[r] = 0;
		known[r] = true;
	}
	for (int f = 0; f < F__COUNT; f++)
		if (faults[f].rule >= 0 && f != F_CM_PMTU)
			exp[faults[f].rule] += g->injected[f];
	exp[RULE_PAYLOAD_LENGTH] += g->pmtu_breaks;
	exp[RULE_CM_PKEY] = g->pkey_breaks;
	exp[RULE_CM] = g->cm_mads;
	exp[RULE_CM_ESTABLISHED] = g->cm_established;
	exp[RULE_CM_REJ] = g->cm_rej;
	known[RULE_CONN_EVICTED] = false; /* depends on the table's size */
	exp[RULE_ECN_CE] = g->mutated[M_ECN_CE];
	exp[RULE_CNP] = g->cnp;
	/* how a lost FIRST or LAST echoes through the message depends on the validator's state machine */
	known[RULE_OPCODE_SEQUENCE] = !g->first_last_drops;
	known[RULE_FLOW_EVICTED] = false; /* depends on the flow table's size */
	return (int)exp[RULE_ICRC];
}

/* The CM faults exist only with --cm: without it the summary stays as it always was. */
static bool fault_shown(const struct gen *g, int f)
{
	return g->cm || (f != F_START_PSN && f != F_CM_PMTU);
}

static void summary_json(FILE *f, const struct gen *g, const struct out *o)
{
	uint64_t exp[RULE__COUNT];
	bool known[RULE__COUNT];
	uint64_t bad = expected_rules(g, exp, known);
	const char *sep = "";

	fprintf(f, "{\"seed\": %llu, \"frames\": %llu, \"injected\": {", (unsigned long long)g->seed,
		(unsigned long long)o->n);
	for (int i = 0; i < F__COUNT; i++)
		if (fault_shown(g, i))
			fprintf(f, "%s\"%s\": %llu", i ? ", " : "", faults[i].json, (unsigned long long)g->injected[i]);
	fprintf(f, "}, \"mutations\": {");
	for (int i = 0; i < M__COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", mutation_names[i], (unsigned long long)g->mutated[i]);
	fprintf(f, "}, \"dropped_first_or_last\": %llu, ", (unsigned long long)g->first_last_drops);
	fprintf(f, "\"expected\": {\"frames\": %llu, \"roce\": %llu, \"icrc_ok\": %llu, \"icrc_bad\": %llu, "
		   "\"icrc_unchecked\": 0, \"rules\": {",
		(unsigned long long)o->n, (unsigned long long)o->n, (unsigned long long)(o->n - bad),
		(unsigned long long)bad);
	for (int r = 0; r < RULE__COUNT; r++) {
		if (!known[r])
			continue;
		fprintf(f, "%s\"%s\": %llu", sep, rule_ids[r], (unsigned long long)exp[r]);
		sep = ", ";
	}
	fprintf(f, "}}}\n");
}

static void summary_text(FILE *f, const struct gen *g, const struct out *o, const char *dest)
{
	uint64_t exp[RULE__COUNT];
	bool known[RULE__COUNT];
	uint64_t bad = expected_rules(g, exp, known);
	const char *sep = "";

	fprintf(f, "%llu frames to %s (seed %llu)\n\n%-16s %8s  %s\n", (unsigned long long)o->n, dest,
		(unsigned long long)g->seed, "FAULT", "INJECTED", "COUNTED AS");
	for (int i = 0; i < F__COUNT; i++) {
		if (!fault_shown(g, i))
			continue;
		fprintf(f, "%-16s %8llu  ", faults[i].opt, (unsigned long long)g->injected[i]);
		if (i == F_CM_PMTU) {
			fprintf(f, "%s (%llu frames)\n", rule_ids[faults[i].rule], (unsigned long long)g->pmtu_breaks);
			continue;
		}
		if (faults[i].rule >= 0) {
			fprintf(f, "%s\n", rule_ids[faults[i].rule]);
			continue;
		}
		fprintf(f, "no violation");
		for (int m = 0, first = 1; m < M__COUNT; m++) {
			if (!g->mutated[m])
				continue;
			fprintf(f, "%s%s %llu", first ? " (" : ", ", mutation_names[m], (unsigned long long)g->mutated[m]);
			first = 0;
		}
		fprintf(f, "%s\n", g->injected[i] ? ")" : "");
	}
	fprintf(f, "\nExpected: frames %llu, roce %llu, icrc_ok %llu, icrc_bad %llu\n", (unsigned long long)o->n,
		(unsigned long long)o->n, (unsigned long long)(o->n - bad), (unsigned long long)bad);
	fprintf(f, "Expected rules: ");
	for (int r = 0; r < RULE__COUNT; r++) {
		if (!known[r] || !exp[r])
			continue;
		fprintf(f, "%s%s %llu", sep, rule_ids[r], (unsigned long long)exp[r]);
		sep = ", ";
	}
	fprintf(f, "%severy other rule 0", *sep ? "; " : "");
	if (!known[RULE_OPCODE_SEQUENCE])
		fprintf(f, " except opcode_sequence (%llu dropped FIRST/LAST packets break their messages)",
			(unsigned long long)g->first_last_drops);
	fprintf(f, "\n");
}

enum {
	OPT_MAX_SIZE = 256,
	OPT_ADDR,
	OPT_ADDR6,
	OPT_MAC,
	OPT_VLAN,
	OPT_PKEY,
	OPT_QUIET,
	OPT_CM,
	OPT_FAULT, /* + enum fault */
};

static int do_gen(int argc, char **argv)
{
	struct option opts[] = {
		{ "write", required_argument, NULL, 'w' },
		{ "interface", required_argument, NULL, 'i' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "messages", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "pmtu", required_argument, NULL, 'm' },
		{ "qps", required_argument, NULL, 'q' },
		{ "traffic", required_argument, NULL, 't' },
		{ "family", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "addr", required_argument, NULL, OPT_ADDR },
		{ "addr6", required_argument, NULL, OPT_ADDR6 },
		{ "mac", required_argument, NULL, OPT_MAC },
		{ "vlan", required_argument, NULL, OPT_VLAN },
		{ "pkey", required_argument, NULL, OPT_PKEY },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "cm", no_argument, NULL, OPT_CM },
#define FAULT_OPT(e, opt, json, rule) { opt, required_argument, NULL, OPT_FAULT + F_##e },
		GEN_FAULTS(FAULT_OPT)
#undef FAULT_OPT
		{ NULL, 0, NULL, 0 },
	};
	struct gen g = {
		.count = 1000, .pmtu = 1024, .nqps = 4, .family = 4, .vlan = -1, .pkey = 0xFFFF,
		.kinds = (1u << K__COUNT) - 1,
		.mac = { { 0x02, 0, 0, 0, 0, 0x01 }, { 0x02, 0, 0, 0, 0, 0x02 } },
	};
	struct out o = { .fd = -1 };
	const char *wpath = NULL, *ifname = NULL, *dest;
	bool json = false, quiet = false, seeded = false;
	FILE *sumf = stdout;
	uint64_t v;
	double total_rate = 0;
	int opt, err = 0;

	one_ipv4("192.0.2.1", g.addr4[0]);
	one_ipv4("192.0.2.2", g.addr4[1]);
	one_ipv6("2001:db8::1", g.addr6[0]);
	one_ipv6("2001:db8::2", g.addr6[1]);
	g.max_size = UINT32_MAX; /* unset: follows --pmtu */
	optind = 1;
	while ((opt = getopt_long(argc, argv, "w:i:r:c:n:s:m:q:t:f:j46", opts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			wpath = optarg;
			break;
		case 'i':
			ifname = optarg;
			break;
		case 'r':
			if (!parse_u64(optarg, 100000000, &o.pps) || !o.pps)
				return command_usage_error(&cmd_gen, "--rate wants frames per second, 1 or more: '%s'", optarg);
			break;
		case 'c':
			if (!parse_u64(optarg, GEN_MAX_FRAMES, &g.count) || !g.count)
				return command_usage_error(&cmd_gen, "--count wants 1 to %u: '%s'", GEN_MAX_FRAMES, optarg);
			break;
		case 'n':
			if (!parse_u64(optarg, GEN_MAX_FRAMES, &g.messages) || !g.messages)
				return command_usage_error(&cmd_gen, "--messages wants 1 to %u: '%s'", GEN_MAX_FRAMES, optarg);
			break;
		case 's':
			if (!parse_u64(optarg, UINT64_MAX, &g.seed))
				return command_usage_error(&cmd_gen, "--seed wants an unsigned number: '%s'", optarg);
			seeded = true;
			break;
		case 'm':
			if (!parse_u64(optarg, ROCE_PMTU_MAX, &v) || !ROCE_PMTU_IS_LEGAL(v))
				return command_usage_error(&cmd_gen, "--pmtu must be 256, 512, 1024, 2048 or 4096: '%s'", optarg);
			g.pmtu = v;
			break;
		case 'q':
			if (!parse_u64(optarg, 4096, &v) || !v)
				return command_usage_error(&cmd_gen, "--qps wants 1 to 4096: '%s'", optarg);
			g.nqps = v;
			break;
		case 't':
			if (parse_kinds(optarg, &g.kinds))
				return command_usage_error(&cmd_gen, "--traffic takes a list of send, write, read, atomic, uc, ud, cnp or all: '%s'", optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "4") || !strcmp(optarg, "6"))
				g.family = optarg[0] - '0';
			else if (!strcmp(optarg, "mixed"))
				g.family = 0;
			else
				return command_usage_error(&cmd_gen, "--family is 4, 6 or mixed: '%s'", optarg);
			break;
		case '4':
		case '6':
			g.family = opt - '0';
			break;
		case 'j':
			json = true;
			break;
		case OPT_MAX_SIZE:
			if (!parse_u64(optarg, 1u << 30, &v))
				return command_usage_error(&cmd_gen, "--max-size wants 0 to 1073741824 bytes: '%s'", optarg);
			g.max_size = v;
			break;
		case OPT_ADDR:
			if (parse_pair(optarg, one_ipv4, g.addr4))
				return command_usage_error(&cmd_gen, "--addr wants two IPv4 addresses A,B: '%s'", optarg);
			break;
		case OPT_ADDR6:
			if (parse_pair(optarg, one_ipv6, g.addr6))
				return command_usage_error(&cmd_gen, "--addr6 wants two IPv6 addresses A,B: '%s'", optarg);
			break;
		case OPT_MAC: {
			uint8_t m[2][16];

			if (parse_pair(optarg, one_mac, m))
				return command_usage_error(&cmd_gen, "--mac wants two MAC addresses A,B: '%s'", optarg);
			memcpy(g.mac[0], m[0], 6);
			memcpy(g.mac[1], m[1], 6);
			break;
		}
		case OPT_VLAN:
			if (!parse_u64(optarg, 4094, &v) || !v)
				return command_usage_error(&cmd_gen, "--vlan wants a VLAN id, 1 to 4094: '%s'", optarg);
			g.vlan = v;
			break;
		case OPT_PKEY:
			if (!parse_u64(optarg, 0xFFFF, &v) || !(v & 0x7FFF))
				return command_usage_error(&cmd_gen, "--pkey wants a valid P_Key (low 15 bits not all zero): '%s'", optarg);
			g.pkey = v;
			break;
		case OPT_QUIET:
			quiet = true;
			break;
		case OPT_CM:
			g.cm = true;
			break;
		default:
			if (opt >= OPT_FAULT && opt < OPT_FAULT + F__COUNT) {
				if (parse_rate(optarg, &g.rate[opt - OPT_FAULT]))
					return command_usage_error(&cmd_gen, "--%s wants a rate from 0 to 1 (or 0%% to 100%%): '%s'",
								   faults[opt - OPT_FAULT].opt, optarg);
				break;
			}
			return command_bad_option(&cmd_gen, argv);
		}
	}
	if (optind != argc)
		return command_usage_error(&cmd_gen, "unexpected argument '%s'", argv[optind]);
	if (!wpath == !ifname)
		return command_usage_error(&cmd_gen, "give one of -w FILE or -i IFACE");
	if (o.pps && !ifname)
		return command_usage_error(&cmd_gen, "--rate applies to -i IFACE only");
	for (int i = 0; i < F__COUNT; i++)
		total_rate += g.rate[i];
	if ((g.rate[F_START_PSN] || g.rate[F_CM_PMTU]) && !g.cm)
		return command_usage_error(&cmd_gen, "--%s and --%s fault RDMA CM messages: add --cm",
					   faults[F_START_PSN].opt, faults[F_CM_PMTU].opt);
	if (total_rate > 1)
		return command_usage_error(&cmd_gen, "the fault rates add up to more than 1 (each frame gets one fault at most)");
	if (g.max_size == UINT32_MAX)
		g.max_size = 4 * g.pmtu;
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		g.seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ (uint64_t)getpid() << 32;
	}
	g.plan_rng = g.seed;
	g.merge_rng = g.seed ^ 0x6D657267656D6572ULL;
	g.fault_rng = g.seed ^ 0x6661756C74666175ULL;

	err = setup_conns(&g);
	if (err == -EINVAL) {
		command_usage_error(&cmd_gen, "--traffic needs one of send, write, read, atomic, uc or ud");
		goto out;
	} else if (err) {
		pr_warn("Couldn't allocate the connections: %s", strerror(-err));
		goto out;
	}

	err = plan(&g);
	if (err == -E2BIG) {
		err = -EINVAL;
		command_usage_error(&cmd_gen, "more than %u frames planned: lower --messages or --max-size",
				    2 * GEN_MAX_FRAMES);
		goto out;
	} else if (err) {
		pr_warn("Couldn't plan the traffic: %s", strerror(-err));
		goto out;
	}

	if (ifname) {
		err = out_open_iface(&o, ifname);
		if (err)
			goto out;
		dest = ifname;
	} else if (!strcmp(wpath, "-")) {
		o.f = stdout;
		sumf = stderr;
		dest = "stdout";
	} else {
		size_t l = strlen(wpath);

		o.f = fopen(wpath, "wb");
		if (!o.f) {
			pr_warn("%s: %s", wpath, strerror(errno));
			err = -EINVAL;
			goto out;
		}
		o.pcapng = l > 7 && !strcmp(wpath + l - 7, ".pcapng");
		dest = wpath;
	}
	if (o.f) {
		err = out_header(&o);
		if (err)
			goto out;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	o.progress = !quiet && isatty(STDERR_FILENO);
	clock_gettime(CLOCK_MONOTONIC, &o.start);
	o.last_progress = o.start;
	{
		uint32_t *active = calloc(g.nqps, sizeof(*active)), nactive = 0;

		if (!active) {
			err = -ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < g.nqps; i++)
			if (g.conns[i].n)
				active[nactive++] = i;
		while (nactive && !stop && !err) {
			uint32_t k = rnd_below(&g.merge_rng, nactive);
			struct conn *c = &g.conns[active[k]];

			err = send_desc(&g, &o, c, &c->d[c->next++]);
			if (c->next == c->n)
				active[k] = active[--nactive];
		}
		free(active);
	}
	out_progress(&o, true);
	if (o.f && fflush(o.f)) {
		pr_warn("Couldn't write %s: %s", dest, strerror(errno));
		err = -EIO;
	}
	if (json)
		summary_json(sumf, &g, &o);
	else
		summary_text(sumf, &g, &o, dest);
	if (stop) {
		pr_warn("interrupted after %llu frames: the expected counts cover those frames only",
			(unsigned long long)o.n);
		err = err ?: -EINTR;
	}
	if (ifname && !err) {
		uint64_t lost = if_tx_dropped(ifname) - o.tx_dropped0;

		if (lost) {
			pr_warn("%s dropped %llu frames on transmit (tx_dropped): the receiver saw fewer; lower --rate",
				ifname, (unsigned long long)lost);
			err = -EIO;
		}
	}
out:
	if (o.f && o.f != stdout)
		fclose(o.f);
	if (o.fd >= 0)
		close(o.fd);
	for (uint32_t i = 0; g.conns && i < g.nqps; i++)
		free(g.conns[i].d);
	free(g.conns);
	if (err == -EINVAL)
		return EXIT_USAGE;
	return err ? 1 : 0;
}

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
		"or a live attachment must show for the frames written.\n\n"
		"Output (one of):\n"
		"  -w, --write FILE      a capture: pcapng when FILE ends in .pcapng, else pcap; '-' is\n"
		"                        pcap on stdout (the summary then goes to stderr)\n"
		"  -i, --interface IFACE send through an AF_PACKET socket, waiting when the device queue\n"
		"                        is full; frames the device still drops are reported (exit 1)\n"
		"  -r, --rate PPS        with -i: frames per second (default: as fast as the device takes)\n\n"
		"Traffic:\n"
		"  -c, --count N         plan at least N frames (default 1000); the last message is\n"
		"                        completed and owed ACKs are sent, so a few more may follow.  Faults\n"
		"                        change the total: drops remove frames, duplicates and reserved\n"
		"                        opcodes add them\n"
		"  -n, --messages N      plan N messages instead (a CNP counts as one); either is at\n"
		"                        most 10000000: run again with another seed for more\n"
		"  -s, --seed N          repeat a run byte for byte (default: from the clock; printed)\n"
		"  -m, --pmtu N          256, 512, 1024 (default), 2048 or 4096\n"
		"      --max-size BYTES  largest SEND, WRITE or READ (default 4 x PMTU); UD sends at most\n"
		"                        one PMTU\n"
		"  -q, --qps N           connections (default 4), given RC, UC and UD in turn\n"
		"  -t, --traffic LIST    comma-separated: send, write, read, atomic (RC), uc, ud, cnp, or\n"
		"                        all (default)\n"
		"  -f, --family 4|6|mixed  IP version of the connections (default 4; mixed alternates)\n"
		"  -4, -6                  same as --family 4 or 6\n"
		"      --addr A,B        IPv4 addresses of the two hosts (default 192.0.2.1,192.0.2.2)\n"
		"      --addr6 A,B       IPv6 addresses (default 2001:db8::1,2001:db8::2)\n"
		"      --mac A,B         MAC addresses (default 02:00:00:00:00:01,02:00:00:00:00:02)\n"
		"      --vlan ID         one 802.1Q tag on every frame\n"
		"      --pkey P          BTH P_Key (default 0xFFFF)\n"
		"      --cm              connect every RC connection with RDMA CM first (REQ, REP,\n"
		"                        RTU as NVMe-oF, tcp/4420) and disconnect it after (DREQ,\n"
		"                        DREP); the first is rejected once (REQ, REJ, reason 28\n"
		"                        consumer) before it connects.  These MADs come on top of\n"
		"                        --count and get no fault but the two below\n"
		"  -j, --json            the summary as one JSON object: seed, frames, injected,\n"
		"                        mutations, and \"expected\" in the replay schema (frames, roce,\n"
		"                        icrc_ok, icrc_bad, rules) with every rule it can predict\n"
		"      --quiet           no progress line (one is shown on a terminal for long runs)\n\n"
		"Faults: RATE is the probability that an eligible frame gets it, from 0 to 1 or as a\n"
		"percentage (0.01 or 1%); the rates must add up to 1 at most, as a frame gets one fault:\n"
		"  --corrupt-icrc RATE   wrong ICRC                                        -> icrc\n"
		"  --flip-invariant RATE one bit flipped where the ICRC protects and no other\n"
		"                        check looks (IPv4 ID, UDP source port, MigReq, P_Key,\n"
		"                        AckReq, RETH/AtomicETH fields, payload, pad)      -> icrc\n"
		"  --mutate-variant RATE what the network may change: TTL, DSCP, ECN CE, UDP\n"
		"                        checksum, FECN, BECN, IPv6 flow label             -> nothing\n"
		"                        (ECN CE marks still count under the info counter ecn_ce)\n"
		"  --drop RATE           a SEND/WRITE packet of RC or UC lost; never a flow's\n"
		"                        first or last request or one right after a loss   -> psn_gap\n"
		"  --duplicate RATE      an RC/UC ONLY request sent twice in a row         -> psn_duplicate\n"
		"  --bad-opcode RATE     adds a frame with an opcode reserved for the\n"
		"                        transport, on a QP of its own                     -> opcode\n"
		"  --bad-pad RATE        a LAST/ONLY packet sent without its pad bytes     -> pad\n"
		"  --se-misuse RATE      SE set where only LAST/ONLY SEND or WRITE with\n"
		"                        immediate may have it                             -> se\n"
		"  --wrong-start-psn RATE (with --cm) a REQ or REP announces a Starting PSN\n"
		"                        its side's first request will not carry           -> cm_start_psn\n"
		"  --mismatched-pmtu RATE (with --cm) a REQ announces half the traffic's PMTU\n"
		"                        (512 for 256): every frame it makes too long      -> payload_length\n"
		"A dropped FIRST or LAST packet also breaks its message (opcode_sequence); the summary\n"
		"says how many such drops there were and leaves opcode_sequence out of its prediction.\n\n"
		"Exit status: 0 when every frame was written or sent, 1 on a failure (including frames\n"
		"the interface dropped on transmit, or an interruption), 2 for bad usage.\n\n"
		"Examples:\n"
		"  roceval gen -w mixed.pcapng --count 10000 --seed 7 -f mixed\n"
		"  roceval gen -w faults.pcap --seed 1 --drop 1% --corrupt-icrc 0.5% --json\n"
		"  roceval gen -i veth0 --rate 10000 --count 100000 --se-misuse 0.001\n",
	.run = do_gen,
};
