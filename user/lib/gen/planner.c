// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The generator's planner: the connections, then every packet of every
 * conversation in order, each side's PSNs and MSNs, the ACKs (some
 * coalesced) and READ responses, and with --cm the handshakes around them.
 * Nothing here makes a byte of a frame: faults.c does, when it sends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"
#include "roceval_cm.h"

const char *const gen_kind_names[K__COUNT] = { "send", "write", "read", "atomic", "uc", "ud", "cnp" };

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

int gen_setup_conns(struct gen *g)
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

/* A CM MAD; a REQ or REP holds, as its PSN, the Starting PSN it announces. */
static int push_cm(struct gen *g, struct conn *c, uint8_t side, uint8_t attr, uint8_t flags)
{
	uint32_t psn = attr == CM_ATTR_REQ ? c->psn0[1] : attr == CM_ATTR_REP ? c->psn0[0] : 0;
	int err = push(g, c, side, ROCE_OPCODE_UD_SEND_ONLY, psn, CM_MAD_LEN,
		       DF_CM | flags | (g->reconnected ? DF_CM_AGAIN : 0));

	if (!err)
		last(c)->cm_attr = attr;
	return err;
}

/*
 * --reconnect: every RC connection, its ACKs owed sent, is closed (DREQ,
 * DREP) and connected again on the same QPNs, as rxe and many NICs reuse
 * them, each side's requests starting over at a new Starting PSN behind
 * where the closed connection's left off, its MSNs from 0.
 */
static int plan_reconnect(struct gen *g)
{
	int err = 0;

	for (uint32_t i = 0; i < g->nqps && !err; i++) {
		struct conn *c = &g->conns[i];

		if (c->transport == ROCE_TR_RC)
			err = ack(g, c, 0) ?: ack(g, c, 1) ?: push_cm(g, c, 0, CM_ATTR_DREQ, 0) ?:
			      push_cm(g, c, 1, CM_ATTR_DREP, 0);
	}
	g->reconnected = true;
	for (uint32_t i = 0; i < g->nqps && !err; i++) {
		struct conn *c = &g->conns[i];

		if (c->transport != ROCE_TR_RC)
			continue;
		for (int side = 0; side < 2; side++) {
			/* from the seed but not the plan's stream, as the communication ids */
			uint32_t back = 1000 + (uint32_t)(((g->seed + 3 + 2 * i + side) * 0x9E3779B97F4A7C15ULL) >> 52);

			c->psn[side] = (c->psn[side] - back) & ROCE_PSN_MASK;
			c->psn0[side] = c->psn[side];
			c->msn[side] = 0;
		}
		err = push_cm(g, c, 0, CM_ATTR_REQ, 0) ?: push_cm(g, c, 1, CM_ATTR_REP, 0) ?:
		      push_cm(g, c, 0, CM_ATTR_RTU, 0);
	}
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

/* A reconnection's REQ: what follows belongs to the connection made again. */
static bool starts_again(const struct desc *d)
{
	return (d->flags & DF_CM_AGAIN) && d->cm_attr == CM_ATTR_REQ;
}

/* Each connection's first and last request of each side, and whether the side receives one. */
static void mark_first_last(struct conn *c)
{
	for (int conn = 0; conn < 2; conn++) {
		for (int side = 0; side < 2; side++) {
			struct desc *first = NULL, *lastd = NULL;
			int at = 0;

			for (size_t j = 0; j < c->n; j++) {
				at += starts_again(&c->d[j]);
				if (at != conn || c->d[j].side != side || !(c->d[j].flags & DF_REQUEST))
					continue;
				if (!first)
					first = &c->d[j];
				lastd = &c->d[j];
			}
			if (first) {
				first->flags |= DF_FIRST_REQ;
				lastd->flags |= DF_LAST_REQ;
				c->gets_request[conn][!side] = true;
			}
		}
	}
}

static void mark_read_before_pmtu(struct conn *c)
{
	bool shown[2] = { false, false };
	int conn = 0;

	for (size_t j = 0; j < c->n; j++) {
		const struct roce_op *op = &roce_ops[c->d[j].opcode & 0x1F];

		/* a new connection's flows start afresh, PMTU and all */
		if (starts_again(&c->d[j])) {
			conn = 1;
			shown[0] = shown[1] = false;
		}
		if ((c->d[j].flags & DF_CM) || c->d[j].opcode >> 5 != ROCE_TR_RC)
			continue;
		if (op->payload == PL_PMTU)
			shown[c->d[j].side] = true;
		else if (op->family == FAM_READ_REQ && !shown[c->d[j].side])
			c->read_before_pmtu[conn] = true;
	}
}

int gen_plan(struct gen *g)
{
	uint64_t frames = 0, msgs = 0;
	int err = g->cm ? plan_cm(g, true) : 0;

	if (err)
		return err;

	while (g->messages ? msgs < g->messages : frames < g->count) {
		int n;

		if (g->reconnect && !g->reconnected && (g->messages ? 2 * msgs >= g->messages : 2 * frames >= g->count)) {
			err = plan_reconnect(g);
			if (err)
				return err;
		}
		n = plan_message(g);

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
			int err = c->transport == ROCE_TR_RC ? ack(g, c, side) : 0;

			if (err)
				return err;
		}
		mark_first_last(c);
		mark_read_before_pmtu(c);
	}
	return g->cm ? plan_cm(g, false) : 0;
}
