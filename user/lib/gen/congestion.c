// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The generator's congestion faults: data and CNPs in the wrong traffic
 * class, data sent Not-ECT, a burst of two CNPs, a CE-marked request no
 * CNP answers in time, and PFC pause frames; and what roceval counts for
 * them, under the settings gen_cc_settings lists.
 *
 * CNP pacing and CE are judged by the frames' times, which only a capture
 * fixes (a microsecond a frame, and the waits): into an interface those
 * counts are not predicted.
 */
#include <string.h>

#include "generator.h"
#include "wire.h"

const char *const gen_cc_settings[] = { "dscp=26", "cnp_dscp=48", "ect=required", "cnp_gap=4us", "cnp_delay=50us",
					NULL };

bool gen_cc_fault(int f)
{
	return f == F_DSCP || f == F_CNP_DSCP || f == F_NOT_ECT || f == F_CNP_BURST || f == F_CE_UNANSWERED;
}

/*
 * A CE mark waits for its CNP unless one from its destination to its
 * sender (a READ response's: its responder) came within the window a CNP covers (the longer of cnp_gap and
 * cnp_delay): then none is owed, and nothing would be counted.
 */
static bool ce_owes_a_cnp(const struct gen *g, const struct conn *c, const struct desc *d)
{
	uint64_t last = g->last_cnp_to[d->side][c->ipv6], covered = GEN_CNP_DELAY_NS > GEN_CNP_GAP_NS ? GEN_CNP_DELAY_NS
												  : GEN_CNP_GAP_NS;

	return !last || g->now_ns - (last - 1) >= covered;
}

/*
 * Whether the receiver, as a notification point, answers a CE mark on d
 * with a CNP to d's sender: requests of RC, UC and UD (but CM MADs), and
 * READ responses, whose sender is the responder.
 */
bool gen_cc_np_answers(const struct desc *d)
{
	unsigned int transport = d->opcode >> 5;

	if (d->flags & DF_CM)
		return false;
	if ((d->flags & DF_REQUEST) || transport == ROCE_TR_UD)
		return true;
	return transport == ROCE_TR_RC && roce_ops[d->opcode & 0x1F].family == FAM_READ_RESP;
}

bool gen_cc_eligible(const struct gen *g, const struct conn *c, const struct desc *d, int f)
{
	bool cnp = d->opcode == ROCE_OPCODE_CNP;

	switch (f) {
	case F_DSCP:
	case F_NOT_ECT:
		return !cnp;
	case F_CNP_DSCP:
	case F_CNP_BURST:
		return cnp;
	case F_CE_UNANSWERED:
		return gen_cc_np_answers(d) && ce_owes_a_cnp(g, c, d);
	case F_PFC:
		return true;
	}
	return false;
}

void gen_cc_spec(int f, struct pkt_spec *s)
{
	if (f == F_DSCP || f == F_CNP_DSCP)
		s->tos &= 3; /* the default class, DSCP 0 */
	else if (f == F_NOT_ECT)
		s->tos &= ~3;
	else if (f == F_CE_UNANSWERED)
		s->tos |= 3;
}

void gen_cc_cnp(struct gen *g, struct conn *c, uint8_t side)
{
	uint64_t now = g->now_ns, last = c->last_cnp[side];

	g->cnp++;
	if (last && now - (last - 1) < GEN_CNP_GAP_NS)
		g->cnp_gaps++;
	c->last_cnp[side] = now + 1;
	g->last_cnp_to[!side][c->ipv6] = now + 1;
}

/* A CNP from `side` to the other side's QP, written now. */
static int send_cnp(struct gen *g, struct gen_out *o, struct conn *c, uint8_t side)
{
	static uint8_t frame[PKT_MAX_FRAME];
	struct desc d = { .side = side, .opcode = ROCE_OPCODE_CNP };
	struct pkt_layout lay;
	struct pkt_spec s = {};

	memcpy(s.src_mac, g->mac[side], 6);
	memcpy(s.dst_mac, g->mac[!side], 6);
	s.vlan = g->vlan;
	s.ipv6 = c->ipv6;
	memcpy(s.saddr, c->ipv6 ? g->addr6[side] : g->addr4[side], 16);
	memcpy(s.daddr, c->ipv6 ? g->addr6[!side] : g->addr4[!side], 16);
	s.tos = GEN_CNP_DSCP << 2;
	s.ttl = 64;
	s.ip_id = g->ip_id[side]++;
	s.flow_label = c->flow_label[side];
	s.sport = c->sport[side];
	s.opcode = d.opcode;
	s.becn = true;
	s.pkey = g->pkey;
	s.dqpn = c->qpn[!side];
	s.padcnt = s.pad_bytes = -1;
	g->now_ns = gen_out_time(o);
	gen_cc_cnp(g, c, side);
	return gen_out_frame(o, frame, pkt_build(&s, frame, sizeof(frame), &lay));
}

int gen_cc_after(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d, int f,
		 const uint8_t *frame, size_t len)
{
	if (f == F_CNP_BURST) {
		/* the same CNP again at once: a microsecond later in a capture */
		g->now_ns = gen_out_time(o);
		gen_cc_cnp(g, c, d->side);
		return gen_out_frame(o, frame, len);
	}
	if (f != F_CE_UNANSWERED)
		return 0;
	/* the NP (a READ response's requester) answers, but a microsecond past cnp_delay: ce_unanswered,
	 * counted on that CNP */
	gen_out_wait(o, GEN_CNP_DELAY_NS + 1000);
	return send_cnp(g, o, c, !d->side);
}

int gen_cc_pfc(struct gen *g, struct gen_out *o, uint8_t side)
{
	uint8_t frame[60] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
	uint16_t vector = 0;

	memcpy(frame + 6, g->mac[side], 6);
	put16(frame + 12, ETH_P_MAC_CONTROL);
	put16(frame + 14, MAC_CONTROL_PFC);
	/* one to three priorities; a quarter of them resumed (XON) */
	for (uint32_t n = 1 + rnd_below(&g->fault_rng, 3); n; n--)
		vector |= 1u << rnd_below(&g->fault_rng, ROCEVAL_PFC_PRIOS);
	put16(frame + 16, vector);
	for (int p = 0; p < ROCEVAL_PFC_PRIOS; p++) {
		uint16_t quanta = rnd_below(&g->fault_rng, 4) ? 1 + rnd_below(&g->fault_rng, 0xFFFF) : 0;

		if (!(vector & (1u << p)))
			continue;
		put16(frame + 18 + 2 * p, quanta);
		g->pfc[p].frames++;
		g->pfc[p].xoff += quanta != 0;
		g->pfc[p].xon += quanta == 0;
		g->pfc[p].quanta += quanta;
	}
	g->pfc_frames++;
	return gen_out_frame(o, frame, sizeof(frame));
}
