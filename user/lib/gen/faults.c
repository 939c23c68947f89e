// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The generator's packets and faults: each planned packet is built from
 * its description and the seed, gets at most one fault (drawn from the
 * fault stream, among the faults it is eligible for, so that every fault
 * is exactly one count of its rule), and is written.
 */
#include <errno.h>
#include <string.h>

#include "generator.h"
#include "pktgen.h"
#include "roceval_cm.h"
#include "wire.h"

#define FAULT_FIELD(e, opt, json, rule) { opt, json, rule },
const struct gen_fault gen_faults[F__COUNT] = { GEN_FAULTS(FAULT_FIELD) };
#undef FAULT_FIELD

#define MUT_NAME(e, name) name,
const char *const gen_mutation_names[M__COUNT] = { GEN_MUTATIONS(MUT_NAME) };
#undef MUT_NAME

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

/* A CM MAD gets only the faults of what it announces. */
static bool cm_fault_eligible(const struct conn *c, const struct desc *d, int f)
{
	int conn = !!(d->flags & DF_CM_AGAIN);

	if (d->flags & DF_CM_REJECTED)
		return false;
	if (f == F_START_PSN) /* counted by the first request to the side it announces for */
		return (d->cm_attr == CM_ATTR_REQ && c->gets_request[conn][0]) ||
		       (d->cm_attr == CM_ATTR_REP && c->gets_request[conn][1]);
	return f == F_CM_PMTU && d->cm_attr == CM_ATTR_REQ && !c->read_before_pmtu[conn];
}

/* F_NAK_WRONG and F_GO_BACK_0: a loss the responder NAKs. */
static bool nak_fault_eligible(const struct conn *c, const struct desc *d, const struct roce_op *op, int f)
{
	/*
	 * A single-packet SEND or WRITE lost on the way: its side's next
	 * request (there is one) opens the gap the NAK answers.  Not
	 * after another loss, so the gap is this one alone.
	 */
	if (!(d->flags & DF_REQUEST) || (d->flags & (DF_FIRST_REQ | DF_LAST_REQ)) || op->position != POS_ONLY ||
	    d->opcode >> 5 != ROCE_TR_RC || (op->family != FAM_SEND && op->family != FAM_WRITE) ||
	    c->prev_dropped[d->side] || c->holding[d->side])
		return false;
	/*
	 * A --drop loss is never resent: roceval holds its gap open for 1024
	 * PSNs (RETX_NAK_REACH) and would judge this NAK against it.  After a
	 * READ whose response count it cannot know yet, it does not see the
	 * gap at all.
	 */
	if ((c->dropped_once[d->side] && ((d->psn - c->drop_psn[d->side]) & ROCE_PSN_MASK) <= 1100) ||
	    roce_ops[c->last_req[d->side].opcode & 0x1F].family == FAM_READ_REQ)
		return false;
	/* go-back-0 resends the request packet before it too: a SEND or WRITE packet, sent as planned */
	return f == F_NAK_WRONG ||
	       (c->last_req_ok[d->side] && c->last_req[d->side].psn == ((d->psn - 1) & ROCE_PSN_MASK));
}

/*
 * --reorder: how many requests after d (c's next packets) it may be swapped
 * with, up to D: requests of the same side in a row, none a READ (a READ
 * takes as many PSNs as it has responses), so that the span has
 * consecutive PSNs and nothing of the other side's between.  d is neither
 * a READ nor its flow's first request (which only sets expectations).
 */
static uint32_t reorder_span(const struct gen *g, const struct conn *c, const struct desc *d)
{
	uint32_t k = 0;

	if (!(d->flags & DF_REQUEST) || (d->flags & DF_FIRST_REQ) || roce_ops[d->opcode & 0x1F].family == FAM_READ_REQ ||
	    (d->opcode >> 5 != ROCE_TR_RC && d->opcode >> 5 != ROCE_TR_UC))
		return 0;
	while (k < g->reorder_depth && c->next + k < c->n) {
		const struct desc *e = &c->d[c->next + k];

		if (e->side != d->side || !(e->flags & DF_REQUEST) || roce_ops[e->opcode & 0x1F].family == FAM_READ_REQ)
			break;
		k++;
	}
	return k;
}

static bool fault_eligible(const struct gen *g, const struct conn *c, const struct desc *d, int f)
{
	const struct roce_op *op = &roce_ops[d->opcode & 0x1F];
	bool cnp = d->opcode == ROCE_OPCODE_CNP;

	if (d->flags & DF_CM)
		return cm_fault_eligible(c, d, f);
	if (gen_cc_fault(f) || f == F_PFC)
		return gen_cc_eligible(g, c, d, f);
	/*
	 * Until its flow has shown the PMTU, a READ's PSN count is unknown to
	 * roceval replaying without --pmtu: the request after it sets the
	 * expectation afresh, so a repeat of the READ or a loss right after it
	 * would go unseen there.
	 */
	bool after_unknown_read = !c->pmtu_shown[d->side] &&
				  roce_ops[c->last_req[d->side].opcode & 0x1F].family == FAM_READ_REQ;

	switch (f) {
	case F_START_PSN:
	case F_CM_PMTU:
		return false;
	case F_DROP:
	case F_MIRROR_LOSS:
		/*
		 * One lost SEND/WRITE packet is exactly one psn_gap: the flow's
		 * first request only sets expectations, after its last one
		 * nothing would notice, and a loss right after another loss
		 * would merge into one gap.  A copy the mirror lost is that to
		 * the collector, and one sequence number skipped: never before
		 * the session's first frame or after its last, so each is one
		 * mirror_lost.
		 */
		return (d->flags & DF_REQUEST) && !(d->flags & (DF_FIRST_REQ | DF_LAST_REQ)) &&
		       (op->family == FAM_SEND || op->family == FAM_WRITE) && !c->prev_dropped[d->side] &&
		       !after_unknown_read;
	case F_DUP:
		/* a repeated ONLY is one psn_duplicate and keeps every message well formed */
		return (d->flags & DF_REQUEST) && op->position == POS_ONLY &&
		       (op->family != FAM_READ_REQ || c->pmtu_shown[d->side]);
	case F_NAK_WRONG:
	case F_GO_BACK_0:
		return nak_fault_eligible(c, d, op, f);
	case F_RNR_EARLY:
		/* a single-packet RC SEND or WRITE: the NAK and the retry leave its message whole */
		return (d->flags & DF_REQUEST) && op->position == POS_ONLY && d->opcode >> 5 == ROCE_TR_RC &&
		       (op->family == FAM_SEND || op->family == FAM_WRITE);
	case F_RETX_CHANGED:
		/* a reliable request with payload, so the retry can carry other data */
		return (d->flags & DF_REQUEST) && op->position == POS_ONLY && d->opcode >> 5 == ROCE_TR_RC &&
		       (op->family == FAM_SEND || op->family == FAM_WRITE) && d->len;
	case F_REORDER:
		return reorder_span(g, c, d) > 0;
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

/*
 * The request sent again, as a requester retrying it may: with AckReq set
 * and a new IPv4 Identification, which leave it the same request.  A
 * `changed` retry carries one other payload byte, its ICRC made to match.
 * Without a NAK before it, an RC retry on a CM connection waits out the ACK
 * timeout the REQ announced.
 */
static int resend(struct gen *g, struct gen_out *o, const struct desc *d, uint8_t *frame, uint32_t len,
		  const struct pkt_layout *lay, bool changed, bool after_nak)
{
	if (g->cm && d->opcode >> 5 == ROCE_TR_RC && !after_nak)
		gen_out_wait(o, GEN_RETX_WAIT_NS);
	frame[lay->bth + 8] |= 0x80;
	if (!lay->ipv6)
		put16(frame + lay->l3 + 4, g->ip_id[d->side]++);
	if (changed)
		frame[lay->payload + rnd_below(&g->fault_rng, d->len)] ^= 1 + rnd_below(&g->fault_rng, 255);
	pkt_finish(frame, lay);
	if (d->opcode >> 5 == ROCE_TR_RC && roce_ops[d->opcode & 0x1F].family == FAM_READ_REQ)
		g->retx_uncompared++;
	return gen_out_frame(o, frame, len);
}

/* One retransmission episode on an RC connection, as roceval counts them. */
static void count_episode(struct gen *g, const struct desc *d, bool after_nak)
{
	if (d->opcode >> 5 == ROCE_TR_RC) {
		g->retx_episodes++;
		g->retx_after_nak += after_nak;
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

/* ce: a CE mark may be made (not on a CNP, nor where a CNP would be owed, see damage()). */
static enum mutation mutate_variant(uint8_t *fr, const struct pkt_layout *lay, bool cnp, bool ce, uint64_t *rng)
{
	enum mutation cand[M__COUNT];
	int n = 0;
	uint8_t *ip = fr + lay->l3, *udp = fr + lay->l4, *bth = fr + lay->bth;
	enum mutation m;

	cand[n++] = M_TTL;
	cand[n++] = M_DSCP;
	if (!cnp && ce) /* routers mark CE only on ECN-capable packets */
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

static int send_reserved_opcode(struct gen *g, struct gen_out *o, const struct conn *c, const struct desc *d,
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
	return gen_out_frame(o, frame, len);
}

/* What roceval's payload rule (roce_ops[].payload, include/roceval_proto.h) says of `len` bytes under `pmtu`. */
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
static int send_cm(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d, int f,
		   uint64_t *drng)
{
	static uint8_t frame[PKT_MAX_FRAME], mad[CM_MAD_LEN];
	uint8_t *m = mad + CM_MAD_HDR_LEN;
	/* the rejected attempt, and a connection made again, have communication ids of their own */
	uint32_t again = d->flags & DF_CM_AGAIN ? 0x40000000u : 0;
	uint32_t comm = c->comm[0] ^ (d->flags & DF_CM_REJECTED ? 0x80000000u : 0) ^ again;
	uint32_t comm_rsp = c->comm[1] ^ again;
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
		psn = d->psn;
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
		m[CM_REQ_ACK_TIMEOUT] = GEN_CM_ACK_TIMEOUT << 3;
		break;
	case CM_ATTR_REP:
		psn = d->psn;
		if (f == F_START_PSN)
			psn += 1 + rnd_below(&g->fault_rng, 1000);
		put32(m + CM_LOCAL_COMM_ID, comm_rsp);
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
		put32(m + CM_REMOTE_COMM_ID, comm_rsp);
		if (d->cm_attr == CM_ATTR_DREQ)
			put32(m + CM_DREQ_REMOTE_QPN, c->qpn[1] << 8);
		break;
	case CM_ATTR_DREP:
		put32(m + CM_LOCAL_COMM_ID, comm_rsp);
		put32(m + CM_REMOTE_COMM_ID, comm);
		break;
	}
	s.dqpn = s.src_qp = ROCE_GSI_QPN;
	s.qkey = 0x80010000; /* the GSI's well-known Q_Key */
	s.psn = 0;
	len = pkt_build(&s, frame, sizeof(frame), &lay);
	g->cm_mads++;
	return gen_out_frame(o, frame, len);
}

/* The random stream a packet's contents come from: its plan index's, so a retry rebuilds the same packet. */
static uint64_t desc_rng(const struct gen *g, const struct desc *d)
{
	return g->seed ^ (d->idx + 1) * 0xD1B54A32D192ED03ULL;
}

/* The responder's NAK (AETH syndrome `syndrome`) naming `psn` to d's side, with its last MSN. */
static int send_nak(struct gen *g, struct gen_out *o, const struct conn *c, const struct desc *d, uint32_t syndrome,
		    uint32_t psn)
{
	static uint8_t frame[PKT_MAX_FRAME];
	struct desc nak = { .idx = d->idx, .psn = psn & ROCE_PSN_MASK, .side = !d->side,
			    .opcode = ROCE_TR_RC << 5 | 0x11 };
	uint64_t drng = g->seed ^ d->idx;
	struct pkt_layout lay;
	struct pkt_spec s;

	nak.aeth = syndrome << 24 | (c->msn_sent[nak.side] & ROCE_PSN_MASK);
	fill_spec(g, c, &nak, &s, NULL, &drng);
	return gen_out_frame(o, frame, pkt_build(&s, frame, sizeof(frame), &lay));
}

/* A request sent again as it was first built (its payload comes from its plan index), as a retry. */
static int resend_desc(struct gen *g, struct gen_out *o, const struct conn *c, const struct desc *d)
{
	static uint8_t frame[PKT_MAX_FRAME], payload[ROCE_PMTU_MAX + 8];
	uint64_t drng = desc_rng(g, d);
	struct pkt_layout lay;
	struct pkt_spec s;
	size_t len;

	fill_spec(g, c, d, &s, payload, &drng);
	len = pkt_build(&s, frame, sizeof(frame), &lay);
	return resend(g, o, d, frame, len, &lay, false, true);
}

/*
 * The side's next request after a held (lost) one came: the responder NAKs
 * the gap, and the requester goes back.  --nak-wrong-psn: the NAK names the
 * PSN after the lost one, and the requester resends from the lost one.
 * --go-back-0: the NAK is right, and the requester resends from the request
 * before the lost one.  Either way the lost request and this one follow.
 */
static int nak_and_go_back(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *e, uint8_t *frame,
			   uint32_t len, const struct pkt_layout *lay)
{
	const struct desc *lost = &c->held[e->side];
	bool wrong = c->held_fault[e->side] == F_NAK_WRONG;
	int err;

	c->holding[e->side] = false;
	err = send_nak(g, o, c, e, ROCE_AETH_NAK_PSN_SEQ, lost->psn + (wrong ? 1 : 0));
	if (!err && !wrong)
		err = resend_desc(g, o, c, &c->last_req[e->side]);
	if (!err)
		err = resend_desc(g, o, c, lost);
	if (!err)
		err = resend(g, o, e, frame, len, lay, false, true);
	count_episode(g, e, true);
	g->retx_uncompared++; /* the lost request was never seen: its retry has nothing to compare with */
	return err;
}

/* The fault d gets, by the rates given, among those it is eligible for; F_NONE for none. */
static int pick_fault(struct gen *g, const struct conn *c, const struct desc *d)
{
	double u = rnd_unit(&g->fault_rng), acc = 0;

	/* the request after a held one is sent as planned: the NAK and the go-back follow it */
	for (int i = 0; i < F__COUNT && !((d->flags & DF_REQUEST) && c->holding[d->side]); i++) {
		if (!g->rate[i] || !fault_eligible(g, c, d, i))
			continue;
		acc += g->rate[i];
		if (u < acc)
			return i;
	}
	return F_NONE;
}

/* Fault f applied to the built frame, for the faults that are a change of its bytes. */
static void damage(struct gen *g, const struct conn *c, const struct desc *d, uint8_t *frame,
		   const struct pkt_layout *lay, int f)
{
	switch (f) {
	case F_CORRUPT_ICRC: {
		uint32_t x = 1 + rnd_below(&g->fault_rng, 0xFFFFFFFE);

		for (int i = 0; i < 4; i++)
			frame[lay->icrc + i] ^= x >> (8 * i);
		break;
	}
	case F_FLIP:
		flip_invariant(frame, lay, d->opcode, &g->fault_rng);
		/* a connection's P_Key was negotiated: a flip in its partition bits breaks cm_pkey too */
		if (c->cm_pmtu && d->opcode >> 5 == ROCE_TR_RC &&
		    ((get16(frame + lay->bth + 2) ^ g->pkey) & 0x7FFF))
			g->pkey_breaks++;
		break;
	case F_MUTATE: {
		bool cnp = d->opcode == ROCE_OPCODE_CNP;
		/* under the congestion settings a CE mark an NP answers owes a CNP: --ce-unanswered makes them alone */
		bool ce = !(g->qos && gen_cc_np_answers(d));
		enum mutation m = mutate_variant(frame, lay, cnp, ce, &g->fault_rng);

		g->mutated[m]++;
		g->dscp_mutated[cnp] += m == M_DSCP;
		break;
	}
	case F_SE:
		frame[lay->bth + 1] |= 0x80;
		pkt_finish(frame, lay);
		break;
	default:
		break;
	}
}

/* d, built and written with the fault f (or F_NONE), and what the fault adds. */
static int send_desc(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d, int f)
{
	static uint8_t frame[PKT_MAX_FRAME], payload[ROCE_PMTU_MAX + 8];
	uint64_t drng = desc_rng(g, d);
	const struct roce_op *op = &roce_ops[d->opcode & 0x1F];
	struct pkt_layout lay;
	struct pkt_spec s;
	size_t len;
	int err;

	g->now_ns = gen_out_time(o);
	if (d->flags & DF_REQUEST)
		c->prev_dropped[d->side] = f == F_DROP || f == F_MIRROR_LOSS || f == F_NAK_WRONG || f == F_GO_BACK_0;
	if (f != F_NONE)
		g->injected[f]++;
	if (f == F_NAK_WRONG || f == F_GO_BACK_0) {
		c->holding[d->side] = true;
		c->held_fault[d->side] = f;
		c->held[d->side] = *d;
		c->last_req_ok[d->side] = false;
		return 0;
	}
	if (f == F_DROP || f == F_MIRROR_LOSS) {
		if (op->position == POS_FIRST || op->position == POS_LAST)
			g->first_last_drops++;
		o->encap.seq += f == F_MIRROR_LOSS;
		c->dropped_once[d->side] = true;
		c->drop_psn[d->side] = d->psn;
		return 0;
	}

	if (f == F_PFC && (err = gen_cc_pfc(g, o, d->side)))
		return err;
	if (d->flags & DF_CM)
		return send_cm(g, o, c, d, f, &drng);
	/* a PMTU announced smaller or larger than the traffic's makes some payloads illegal */
	if (c->cm_pmtu && c->cm_pmtu != g->pmtu && d->opcode >> 5 == ROCE_TR_RC &&
	    payload_breaks_pmtu(op, d->len, c->cm_pmtu))
		g->pmtu_breaks += f == F_DUP || f == F_RETX_CHANGED || f == F_RNR_EARLY ? 2 : 1;
	fill_spec(g, c, d, &s, payload, &drng);
	if (f == F_BAD_PAD) /* the pad left out: the transport length is no multiple of 4 */
		s.padcnt = s.pad_bytes = 0;
	gen_cc_spec(f, &s);
	len = pkt_build(&s, frame, sizeof(frame), &lay);
	damage(g, c, d, frame, &lay, f);
	if (d->opcode == ROCE_OPCODE_CNP) {
		g->now_ns = gen_out_time(o);
		gen_cc_cnp(g, c, d->side);
	}
	if (op->aeth_off != ROCE_NO_HDR)
		c->msn_sent[d->side] = d->aeth & ROCE_PSN_MASK;
	/* a late ACK: the responder held it back (--ack-delay) */
	if (g->ack_delay_ns && d->opcode == (ROCE_TR_RC << 5 | 0x11))
		gen_out_wait(o, g->ack_delay_ns);
	err = gen_out_frame(o, frame, len);
	if (!err && (d->flags & DF_REQUEST) && c->holding[d->side])
		err = nak_and_go_back(g, o, c, d, frame, len, &lay);
	if (op->payload == PL_PMTU)
		c->pmtu_shown[d->side] = true;
	if (d->flags & DF_REQUEST) {
		c->last_req[d->side] = *d;
		c->last_req_ok[d->side] = f == F_NONE && (op->family == FAM_SEND || op->family == FAM_WRITE);
	}
	if (!err && f == F_RNR_EARLY)
		err = send_nak(g, o, c, d, ROCE_AETH_RNR_NAK | GEN_RNR_TIMER, d->psn);
	if (!err && (f == F_DUP || f == F_RETX_CHANGED || f == F_RNR_EARLY)) {
		err = resend(g, o, d, frame, len, &lay, f == F_RETX_CHANGED, f == F_RNR_EARLY);
		count_episode(g, d, f == F_RNR_EARLY);
	}
	if (!err && f == F_BAD_OPCODE)
		err = send_reserved_opcode(g, o, c, d, frame, payload, &g->fault_rng);
	if (!err && (f == F_CNP_BURST || f == F_CE_UNANSWERED))
		err = gen_cc_after(g, o, c, d, f, frame, len);
	return err;
}

/*
 * --reorder: d and the k requests after it go as one burst, the last of
 * them first and d last, each a microsecond after the one before: the
 * first jumps k PSNs ahead, and the k others fill the holes it left, k to 1
 * PSNs behind the newest.  roceval counts each psn_reorder, none lost.
 */
static int send_reordered(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d)
{
	uint32_t k = 1 + rnd_below(&g->fault_rng, reorder_span(g, c, d));
	size_t first = c->next;
	int err;

	c->next += k;
	err = send_desc(g, o, c, &c->d[first + k - 1], F_NONE);
	for (uint32_t i = 0; i + 1 < k && !err; i++)
		err = send_desc(g, o, c, &c->d[first + i], F_NONE);
	if (!err)
		err = send_desc(g, o, c, d, F_NONE);
	for (uint32_t dist = 1; dist <= k; dist++)
		g->reorder[roceval_reorder_bucket(dist)]++;
	g->reorder_packets += k;
	g->reorder_sum += (uint64_t)k * (k + 1) / 2;
	return err;
}

int gen_send(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d)
{
	int f;

	g->now_ns = gen_out_time(o);
	f = pick_fault(g, c, d);

	if (f == F_REORDER) {
		g->injected[f]++;
		return send_reordered(g, o, c, d);
	}
	return send_desc(g, o, c, d, f);
}
