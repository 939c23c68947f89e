/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Stateful validation per queue pair (IBA 9.7, 9.8.3): PSN order,
 * message sequence, MSN, PMTU consistency, each frame's flow found or made
 * in the table (flow_table.bpf.h).
 *
 * The table evicts one flow at a time, the oldest of a full
 * set, and counts it in flow_evicted: the kernel's LRU hash evicts silently
 * and in batches, so nobody could say how many flows lost their state, and
 * roceval must.  A busy flow evicted this way comes back on its next packet
 * as a new flow, which only sets expectations, so eviction costs missed
 * detections, never false alarms.
 */
#ifndef ROCEVAL_FLOW_BPF_H
#define ROCEVAL_FLOW_BPF_H

#include "answer.bpf.h"
#include "clock.bpf.h"
#include "flow_table.bpf.h"
#include "frame.bpf.h"

/* PSNs a request consumes: a READ one per response packet it asks for. 0 = cannot tell yet. */
static __always_inline __u32 psns_consumed(const struct frame_info *fi, const struct roce_op *op,
					   __u32 pmtu)
{
	__u32 n;

	if (op->family != FAM_READ_REQ)
		return 1;
	if (!pmtu)
		return 0;
	n = (fi->dmalen + pmtu - 1) / pmtu;
	return n ? n : 1;
}

/*
 * The request flow a response answers, as found for the last response of
 * its flow in the same PSN window: a response flow answers one request
 * flow, so after the first of a window the hint and the table are not
 * looked up again (37 ns less an answered ACK here).  The slot is checked to
 * still hold a flow between the same hosts and to have sent the response's PSN
 * lately (answer_plausible), else the hint is asked: what else could have
 * taken the slot, another QP between the same hosts, is what the hint can
 * name too.  With CM the pairing is exact and looked up each time.
 */
static __always_inline struct roceval_flow *answer_remembered(const struct frame_info *fi, const struct roceval_flow *f)
{
	__u32 slot = f->answered_slot;
	struct roceval_flow *r;

	if (cm_active || f->answered_window != ANSWER_WINDOW(fi->psn))
		return 0;
	r = bpf_map_lookup_elem(&flows, &slot);
	if (!r || r->key.ipv6 != fi->ipv6 || !addr_eq(r->key.saddr, fi->daddr) || !addr_eq(r->key.daddr, fi->saddr))
		return 0;
	return r;
}

/*
 * A response on a reliable connection (an ACK, NAK, atomic ACK or READ
 * response): matched to the requests it answers (answer.bpf.h), a NAK
 * judged against them.  Not inlined: the frame's stack is full.
 */
static __noinline void flow_answer(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *f)
{
	__u32 zero = 0;
	struct retx_scratch *x = bpf_map_lookup_elem(&retx_scratch, &zero);
	const struct frame_info *fi = &s->fi;
	const struct roce_op *op = &roce_ops[fi->opcode & 0x1F];
	struct roceval_flow *r;
	int by_cm;

	if (!x)
		return;
	s->timed = false;
	s->clocked = false;
	r = answer_remembered(fi, f);
	by_cm = 0;
	if (!r || !answer_plausible(fi, r)) {
		by_cm = answer_pair(fi, f, x);
		if (by_cm < 0)
			return;
		r = flow_find(&x->req);
		if (!r || (!by_cm && !answer_plausible(fi, r)))
			return;
		if (!by_cm) {
			f->answered_window = ANSWER_WINDOW(fi->psn);
			f->answered_slot = r->cold;
		}
	}
	/* a NAK of either kind makes the requester go back: judge_op counted it */
	if (rule_set_has(&s->rules, RULE_NAK_PSN) || rule_set_has(&s->rules, RULE_NAK_RNR)) {
		answer_clock(s, cnt);
		retx_nak(s, cnt, r, by_cm);
		return;
	}
	if (op->family == FAM_READ_RESP) {
		answer_read(s, cnt, r);
		answer_read_stream(r, fi->psn, op->position);
	}
	if (fi->has_aeth && !(fi->aeth >> 29)) /* syndrome 000xxxxx: an ACK */
		answer_ack(s, cnt, r, op->family == FAM_READ_RESP);
}

/* Message sequence in one space: FIRST MIDDLE* LAST, or ONLY. */
static __always_inline bool sequence_broken(struct roceval_flow_space *sp, const struct roce_op *op)
{
	bool broken = false;

	switch (op->position) {
	case POS_FIRST:
		broken = sp->open_family != FAM_NONE;
		sp->open_family = op->family;
		break;
	case POS_MIDDLE:
		broken = sp->open_family != op->family;
		sp->open_family = op->family;
		break;
	case POS_LAST:
		broken = sp->open_family != op->family;
		sp->open_family = FAM_NONE;
		break;
	case POS_ONLY:
		broken = sp->open_family != FAM_NONE;
		sp->open_family = FAM_NONE;
		break;
	}
	return broken;
}

/* Sets where a space stands from the first packet seen of it: never a violation. */
static __always_inline void space_learn(struct roceval_flow_space *sp, const struct roce_op *op)
{
	sp->seen = 1;
	sp->open_family = (op->position == POS_FIRST || op->position == POS_MIDDLE) ? op->family : FAM_NONE;
}

/* The responder's MSN never goes back (IBA 9.7.5.1). */
static __always_inline void msn_check(struct roceval_scratch *s, struct roceval_counters *cnt,
				      struct roceval_flow *f)
{
	__u32 msn = s->fi.aeth & ROCE_PSN_MASK;

	if (f->msn_valid && psn_ahead(f->last_msn, msn))
		violate(s, cnt, RULE_MSN_REGRESS);
	else
		f->last_msn = msn;
	f->msn_valid = 1;
}

/* The flow's traffic and the rules its frames broke. */
static __always_inline void flow_account(const struct roceval_scratch *s, struct roceval_flow *f, __u32 frame_len)
{
	struct roceval_flow_cold *cold;

	__sync_fetch_and_add(&f->packets, 1);
	__sync_fetch_and_add(&f->bytes, frame_len);
	if (rule_set_empty(&s->rules))
		return;
	cold = flow_cold_of(f);
	if (!cold)
		return;
	if (rule_set_meets(&s->rules, ~ROCEVAL_INFO_MASK0, ~ROCEVAL_INFO_MASK1))
		__sync_fetch_and_add(&cold->violations, 1);
#pragma unroll
	for (int i = 0; i < RULE__COUNT; i++)
		if (rule_set_has(&s->rules, i))
			__sync_fetch_and_add(&cold->rule[i], 1);
}

/*
 * A frame's PSN and place in its message judged against its space's
 * expectations, which it then moves on (a first frame only sets them);
 * true for a request behind the expected PSN, a retransmission.
 */
static __always_inline bool space_judge(struct roceval_scratch *s, struct roceval_counters *cnt,
					struct roceval_flow *f, struct roceval_flow_space *sp,
					const struct roce_op *op, __u8 transport, __u32 pmtu)
{
	const struct frame_info *fi = &s->fi;
	bool duplicate = false;

	if (!sp->seen) {
		space_learn(sp, op);
		if (op->flags & OPF_REQUEST) {
			__u32 n = psns_consumed(fi, op, pmtu);

			sp->psn_valid = n != 0;
			sp->next_psn = (fi->psn + n) & ROCE_PSN_MASK;
		}
	} else if (op->flags & OPF_REQUEST) {
		__u32 n = psns_consumed(fi, op, pmtu);

		if (sp->psn_valid && fi->psn != sp->next_psn) {
			if (psn_ahead(fi->psn, sp->next_psn)) {
				violate(s, cnt, RULE_PSN_GAP);
				if (transport != ROCE_TR_UC)
					retx_gap(f, sp->next_psn);
			} else {
				/* A duplicate neither moves the expectation back nor reopens its message. */
				violate(s, cnt, RULE_PSN_DUPLICATE);
				duplicate = true;
			}
		}
		if (!duplicate) {
			if (sequence_broken(sp, op))
				violate(s, cnt, RULE_OPCODE_SEQUENCE);
			sp->psn_valid = n != 0;
			sp->next_psn = (fi->psn + n) & ROCE_PSN_MASK;
		}
	} else if (op->position != POS_NONE) {
		/* READ responses: sequence only; their PSNs follow the other side's READs. */
		if (sequence_broken(sp, op))
			violate(s, cnt, RULE_OPCODE_SEQUENCE);
	}
	return duplicate;
}

static __always_inline void flow_update(struct roceval_scratch *s, struct roceval_counters *cnt,
					const struct roceval_settings *cfg, __u32 frame_len)
{
	struct frame_info *fi = &s->fi;
	const struct roce_op *op = &roce_ops[fi->opcode & 0x1F];
	__u8 transport = fi->opcode >> 5;
	bool duplicate = false;
	struct roceval_flow *f;

	f = flow_lookup(s);
	if (!f) {
		f = flow_create(s, cnt);
		if (!f)
			return;
	}
	/*
	 * UD has no sequence; CNPs and vendor opcodes have no rules of their
	 * own here.  mlx5 DC is reliable and connected like RC, one PSN space
	 * per DCI (so its requests are keyed by the DCI, see flow_qpn); strict
	 * RD sequences per EE context, which roceval does not track.
	 */
	if (fi->headers_ok && (transport == ROCE_TR_RC || transport == ROCE_TR_UC ||
			       transport == ROCE_TR_XRC || fi->dc)) {
		__u32 pmtu = cfg->pmtu ? cfg->pmtu : f->pmtu;
		struct roceval_flow_space *sp = (op->flags & OPF_REQUEST) ? &f->req : &f->resp;

		f->transport = transport;
		if (op->payload == PL_PMTU) {
			if (!f->pmtu)
				f->pmtu = fi->payload;
			else if (f->pmtu != fi->payload && sp->seen)
				violate(s, cnt, RULE_PMTU_INCONSISTENT);
			if (!pmtu)
				pmtu = f->pmtu;
		}

		duplicate = space_judge(s, cnt, f, sp, op, transport, pmtu);

		if ((op->flags & OPF_REQUEST) && transport != ROCE_TR_UC) {
			/* read only where a time is kept or compared: live it is a helper call */
			if (duplicate || latency_due(s, cnt, cfg, f))
				frame_clock(s, cnt);
			if (duplicate) {
				retx_resent(s, cnt, f);
			} else {
				retx_sent(s, f, op->family == FAM_READ_REQ);
				if (f->hint_window != ANSWER_WINDOW(fi->psn))
					answer_hint(fi, f);
			}
		}
		if (fi->has_aeth)
			msn_check(s, cnt, f);
		/* a window given up on (answer_pair): not the call either */
		if ((fi->has_aeth || op->family == FAM_READ_RESP) && transport != ROCE_TR_UC &&
		    (cm_active || !answer_given_up(f, ANSWER_WINDOW(fi->psn))))
			flow_answer(s, cnt, f);
	}

	flow_account(s, f, frame_len);
}

#endif /* ROCEVAL_FLOW_BPF_H */
