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
#include "reorder.bpf.h"

/*
 * In the set that has taken fewer flows, in its oldest slot.  Two CPUs
 * creating flows in one set at once take different slots (the atomic
 * count); two creating the same flow leave it in two slots, of which
 * lookups find the first and the other ages out.
 */
static __always_inline struct roceval_flow *flow_create(struct roceval_scratch *s,
							struct roceval_counters *cnt)
{
	struct roceval_flow_place p = roceval_flow_place(&s->fi.key, flow_seed, flow_set_count);
	struct roceval_flow_set *a = bpf_map_lookup_elem(&flow_sets, &p.set[0]);
	struct roceval_flow_set *b = bpf_map_lookup_elem(&flow_sets, &p.set[1]);
	struct roceval_flow_cold *cold;
	struct roceval_flow *f;
	__u32 si = p.set[0], w, slot;

	if (!a || !b)
		return 0;
	if (b->created < a->created) {
		a = b;
		si = p.set[1];
	}
	w = __sync_fetch_and_add(&a->created, 1) % ROCEVAL_FLOW_WAYS;
	slot = si * ROCEVAL_FLOW_WAYS + w;
	f = bpf_map_lookup_elem(&flows, &slot);
	cold = bpf_map_lookup_elem(&flow_cold, &slot);
	if (!f || !cold)
		return 0;
	/* Counted on the totals only: the eviction is not the new flow's doing. */
	if (a->tag[w]) {
		cnt->rule[RULE_FLOW_EVICTED]++;
		/* what its reorder window held is settled: its holes were lost, as far as anyone will know */
		if (f->req.state & SPACE_WINDOW)
			roceval_reorder_settle_all(slot);
	}
	/* unfindable while it changes hands */
	a->tag[w] = 0;
	__builtin_memset(cold, 0, sizeof(*cold));
	__builtin_memset(f, 0, sizeof(*f));
	f->key = s->fi.key;
	f->cold = slot;
	a->tag[w] = p.tag;
	return f;
}

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
 * response) on the flow in `slot`: matched to the requests it answers
 * (answer.bpf.h), a NAK judged against them.  Not inlined: the frame's
 * stack is full.  Global, so the verifier checks it once, not once for
 * each way a frame comes here (its loop over the requests awaiting an
 * answer cost 30k instructions on every frame program).
 */
__noinline int roceval_flow_answer(__u32 slot)
{
	struct retx_scratch *x = retx_scratch_get();
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct roceval_flow *f = flow_at(slot), *r;
	const struct frame_info *fi;
	const struct roce_op *op;
	int by_cm;

	if (!x || !s || !cnt || !f)
		return 0;
	fi = &s->fi;
	op = &roce_ops[fi->opcode & 0x1F];
	s->timed = false;
	s->clocked = false;
	r = answer_remembered(fi, f);
	by_cm = 0;
	if (!r || !answer_plausible(fi, r)) {
		by_cm = answer_pair(fi, f, x);
		if (by_cm < 0)
			return 0;
		r = flow_find_rare(&x->req);
		if (!r || (!by_cm && !answer_plausible(fi, r)))
			return 0;
		if (!by_cm) {
			f->answered_window = ANSWER_WINDOW(fi->psn);
			f->answered_slot = r->cold;
		}
	}
	/* a NAK of either kind makes the requester go back: judge_op counted it */
	if (rule_set_has(&s->rules, RULE_NAK_PSN) || rule_set_has(&s->rules, RULE_NAK_RNR)) {
		answer_clock(s, cnt);
		retx_nak(s, cnt, r, by_cm);
		return 0;
	}
	if (op->family == FAM_READ_RESP) {
		answer_read(s, cnt, r);
		answer_read_stream(r, fi->psn, op->position);
	}
	if (fi->has_aeth && !(fi->aeth >> 29)) /* syndrome 000xxxxx: an ACK */
		answer_ack(s, cnt, r, op->family == FAM_READ_RESP);
	return 0;
}

/* Whether op breaks the message order of a space whose open message is `open`: FIRST MIDDLE* LAST, or ONLY. */
static __always_inline bool sequence_would_break(__u8 open, const struct roce_op *op)
{
	switch (op->position) {
	case POS_FIRST:
	case POS_ONLY:
		return open != FAM_NONE;
	case POS_MIDDLE:
	case POS_LAST:
		return open != op->family;
	}
	return false;
}

/* Where a message stands after op. */
static __always_inline __u8 sequence_after(const struct roce_op *op)
{
	return op->position == POS_FIRST || op->position == POS_MIDDLE ? op->family : FAM_NONE;
}

/* Message sequence in one space, moved on by op. */
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

/* Sets where a space stands from the first packet seen of it (or the first after a hole): never a violation. */
static __always_inline void space_learn(struct roceval_flow_space *sp, const struct roce_op *op)
{
	sp->state |= SPACE_SEEN;
	sp->open_family = sequence_after(op);
}

/* The next request is expected at psn + n; n 0: after a READ whose PSN count is not known. */
static __always_inline void space_expect(struct roceval_flow_space *sp, __u32 psn, __u32 n)
{
	sp->next_psn = (psn + n) & ROCE_PSN_MASK;
	sp->state = (sp->state & ~SPACE_PSN_VALID) | (n ? SPACE_PSN_VALID : 0);
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
/*
 * The index of x's lowest set bit (x not 0), by de Bruijn's multiply: clang
 * 14 cannot emit __builtin_ctzll for BPF.
 */
static const __u8 debruijn64[64] = {
	0,  1,	56, 2,	57, 49, 28, 3,	61, 58, 42, 50, 38, 29, 17, 4,	62, 47, 59, 36, 45, 43,
	51, 22, 53, 39, 33, 30, 24, 18, 12, 5,	63, 55, 48, 27, 60, 41, 37, 16, 46, 35, 44, 21,
	52, 32, 23, 11, 54, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,  7,  6,
};

static __always_inline __u32 lowest_bit(__u64 x)
{
	return debruijn64[((x & -x) * 0x03F79D71B4CA8B09ULL) >> 58];
}

/*
 * The rules the frame broke, added to the flow in `slot`: one for each set
 * bit of the two rule words, not a test of every rule, so a frame pays for
 * the rules it broke rather than for the table.  Global: its loops are
 * checked once.
 */
__noinline int roceval_flow_rules(__u32 slot)
{
	const struct roceval_scratch *s = scratch_get();
	struct roceval_flow_cold *cold = flow_cold_at(slot);

	if (!s || !cold)
		return 0;
	if (rule_set_meets(&s->rules, ~ROCEVAL_INFO_MASK0, ~ROCEVAL_INFO_MASK1))
		__sync_fetch_and_add(&cold->violations, 1);
	for (int k = 0; k < ROCEVAL_RULE_WORDS; k++) {
		__u64 bits = s->rules.w[k];

		for (int j = 0; j < 64 && bits; j++) {
			__u32 r = k * 64 + lowest_bit(bits);

			bits &= bits - 1;
			/* so that the test bounds the very register the access uses */
			barrier_var(r);
			if (r < RULE__COUNT)
				__sync_fetch_and_add(&cold->rule[r], 1);
		}
	}
	return 0;
}

static __always_inline void flow_account(const struct roceval_scratch *s, struct roceval_flow *f, __u32 frame_len)
{
	__sync_fetch_and_add(&f->packets, 1);
	__sync_fetch_and_add(&f->bytes, frame_len);
	if (rule_set_empty(&s->rules))
		return;
	roceval_flow_rules(f->cold);
}

#define REQ_NEW 0  /* a request not seen before, in order or ahead */
#define REQ_DUP 1  /* a PSN seen before: a retransmission or a duplicate */
#define REQ_FILL 2 /* it filled a hole of the reorder window: its verdict waits (reorder.bpf.h) */

/*
 * A request ahead of the expected PSN: with reorder_window 0 a psn_gap at
 * once; else the PSNs jumped over are holes, and its message order is
 * judged only if they turn out lost (reorder.bpf.h).  The first one missing
 * is remembered for the NAK that should name it (retx.bpf.h).
 */
static __always_inline int request_jump(struct roceval_scratch *s, struct roceval_counters *cnt,
					struct roceval_flow *f, const struct roce_op *op, bool reliable, __u32 n,
					__u32 win)
{
	struct roceval_flow_space *sp = &f->req;
	__u32 psn = s->fi.psn;

	if (reliable)
		retx_gap(f, sp->next_psn);
	/*
	 * A READ whose PSN count is not known yet takes no PSN of the window,
	 * whose newest PSN must be one seen: the holes before it are judged at
	 * once, as without a window, and what the window held is settled.
	 */
	if (win && !n && (sp->state & SPACE_WINDOW))
		roceval_reorder_settle_all(f->cold);
	if (!win || !n) {
		violate(s, cnt, RULE_PSN_GAP);
		if (sequence_broken(sp, op))
			violate(s, cnt, RULE_OPCODE_SEQUENCE);
	} else {
		roceval_reorder_age(f->cold);
		roceval_reorder_ahead(f->cold, (psn - sp->next_psn) & ROCE_PSN_MASK, n,
				      sequence_would_break(sp->open_family, op));
		space_learn(sp, op);
	}
	space_expect(sp, psn, n);
	return REQ_NEW;
}

/*
 * A request behind the expected PSN: a hole filled, or a PSN seen again; a
 * duplicate neither moves the expectation back nor reopens its message.
 */
static __always_inline int request_behind(struct roceval_scratch *s, struct roceval_counters *cnt,
					  struct roceval_flow *f, __u32 n, bool reliable, __u32 win)
{
	s->goback = 0;
	s->goback_fills = 0;
	if (win && (f->req.state & SPACE_WINDOW)) {
		int v = roceval_reorder_behind(f->cold, n, reliable);

		if (v > 0) {
			if (reliable)
				retx_filled(s, f);
			return REQ_FILL;
		}
		s->goback_fills = -v;
	}
	violate(s, cnt, RULE_PSN_DUPLICATE);
	return REQ_DUP;
}

/*
 * A request not behind the PSN of a READ whose PSN count was not known
 * (next_psn holds it).  The READ's responses tell where it ended (its LAST
 * or ONLY seen: -1, the request is then judged as any other) or how far it
 * went at least (the PSN after its last response in order: a request
 * before that reuses a PSN the READ consumed); with neither, the request
 * is psn_unjudged and only sets the expectation.  Inlined into
 * roceval_request_ooo, its only caller: a call of its own would put one
 * more frame on the deepest call chain (replay, the frame, this,
 * roceval_reorder_ahead), which the 512-byte stack has no room for.
 */
static __always_inline int request_after_read(struct roceval_scratch *s, struct roceval_counters *cnt,
					 struct roceval_flow *f, const struct roce_op *op, __u32 n)
{
	struct roceval_flow_space *sp = &f->req;
	__u32 rp = sp->next_psn, psn = s->fi.psn, upto;
	bool answered = f->read_from == rp && (f->read_next & ROCEVAL_RETX_HELD);

	if (answered && (f->read_end & ROCEVAL_RETX_HELD) &&
	    psn_within(f->read_end & ROCE_PSN_MASK, rp, (rp + RETX_NAK_REACH) & ROCE_PSN_MASK)) {
		upto = (f->read_end + 1 - rp) & ROCE_PSN_MASK;
		if (sp->state & SPACE_WINDOW)
			roceval_reorder_ahead(f->cold, 0, upto, false);
		space_expect(sp, rp, upto);
		return -1;
	}
	if (answered && psn_within(psn, rp, (f->read_next - 1) & ROCE_PSN_MASK)) {
		violate(s, cnt, RULE_PSN_DUPLICATE);
		s->goback = 0;
		s->goback_fills = 0;
		return REQ_DUP;
	}
	if (!answered)
		violate(s, cnt, RULE_PSN_UNJUDGED);
	upto = (psn + n - rp) & ROCE_PSN_MASK;
	if ((sp->state & SPACE_WINDOW) && upto)
		roceval_reorder_ahead(f->cold, 0, upto, false);
	if (sequence_broken(sp, op))
		violate(s, cnt, RULE_OPCODE_SEQUENCE);
	space_expect(sp, psn, n);
	return REQ_NEW;
}

/*
 * A request not in order on a flow whose window is closed: its flow's
 * first, one after a READ whose PSN count is unknown, ahead of or behind
 * the expected PSN, or while the reorder window is open.  `nr` is the PSNs
 * it consumes, | REQ_RELIABLE on a reliable connection.  A global function
 * taking the flow's slot: the frames in order never come here, and the
 * verifier checks it once rather than for each state of the frame reaching
 * its two calls (10k of the frame's checked instructions).
 */
#define REQ_RELIABLE 0x80000000u
__noinline int roceval_request_ooo(__u32 slot, __u32 nr)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	const struct roceval_settings *cfg = settings_get();
	struct roceval_flow *f = flow_at(slot);
	__u32 n = nr & ~REQ_RELIABLE;
	bool reliable = nr & REQ_RELIABLE, behind;
	const struct roce_op *op;
	struct roceval_flow_space *sp;
	const struct frame_info *fi;
	__u32 win;

	if (!s || !cnt || !cfg || !f)
		return REQ_NEW;
	fi = &s->fi;
	sp = &f->req;
	op = &roce_ops[fi->opcode & 0x1F];
	win = reorder_win(cfg);
	behind = fi->psn != sp->next_psn && !psn_ahead(fi->psn, sp->next_psn);
	if (!(sp->state & SPACE_SEEN)) {
		space_learn(sp, op);
		space_expect(sp, fi->psn, n);
		return REQ_NEW;
	}
	if (!(sp->state & SPACE_PSN_VALID) && !behind) {
		int v = request_after_read(s, cnt, f, op, n);

		if (v >= 0)
			return v;
		behind = fi->psn != sp->next_psn && !psn_ahead(fi->psn, sp->next_psn);
	}
	if (behind)
		return request_behind(s, cnt, f, n, reliable, win);
	if (fi->psn != sp->next_psn)
		return request_jump(s, cnt, f, op, reliable, n, win);
	if (sp->state & SPACE_WINDOW)
		roceval_reorder_ahead(f->cold, 0, n, false);
	if (sequence_broken(sp, op))
		violate(s, cnt, RULE_OPCODE_SEQUENCE);
	space_expect(sp, fi->psn, n);
	return REQ_NEW;
}

/*
 * A request's PSN and place in its message judged against its flow's
 * expectations, which it then moves on (the flow's first request only sets
 * them): REQ_*.  In order or behind on a flow whose window is closed, here.
 */
static __always_inline int request_judge(struct roceval_scratch *s, struct roceval_counters *cnt,
					 struct roceval_flow *f, const struct roce_op *op, bool reliable, __u32 pmtu)
{
	const struct frame_info *fi = &s->fi;
	struct roceval_flow_space *sp = &f->req;
	__u32 n = psns_consumed(fi, op, pmtu);

	if ((sp->state & (SPACE_SEEN | SPACE_PSN_VALID | SPACE_WINDOW)) != (SPACE_SEEN | SPACE_PSN_VALID))
		return roceval_request_ooo(f->cold, n | (reliable ? REQ_RELIABLE : 0));
	if (fi->psn == sp->next_psn) {
		if (sequence_broken(sp, op))
			violate(s, cnt, RULE_OPCODE_SEQUENCE);
		space_expect(sp, fi->psn, n);
		return REQ_NEW;
	}
	if (psn_ahead(fi->psn, sp->next_psn))
		return roceval_request_ooo(f->cold, n | (reliable ? REQ_RELIABLE : 0));
	/* behind, with no hole to fill: a duplicate */
	s->goback = 0;
	violate(s, cnt, RULE_PSN_DUPLICATE);
	return REQ_DUP;
}

#define RESP_IN_ORDER 0 /* its message order and MSN are judged */
#define RESP_JUMPED 1	/* past PSNs not seen: its message order is learned, the missing may come late */
#define RESP_BEHIND 2	/* behind the newest response: came late, neither is judged */

/*
 * Responses' PSNs never seen further behind than the 16 `recent` holds
 * (roceval.h); sized with the flow table by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_resp_holes);
} resp_holes SEC(".maps");

/* Off the frame's common path: rare_lookup (frame.bpf.h). */
static __noinline struct roceval_resp_holes *resp_holes_at(__u32 slot)
{
	return rare_lookup(&resp_holes, &slot);
}

static __always_inline void response_holes_set(struct roceval_flow *f, struct roceval_resp_holes *h, struct bits m)
{
	h->missing[0] = m.lo;
	h->missing[1] = m.hi;
	f->resp.state = (f->resp.state & ~SPACE_OLD_HOLES) | (m.lo | m.hi ? SPACE_OLD_HOLES : 0);
}

/*
 * The newest response of the flow in `slot` moved d PSNs on: what `recent`
 * (as it was) held never seen, and the PSNs jumped over, that are now
 * further behind than it holds join the older holes, kept up to `win`
 * behind.  Global, so verified once: only responses past PSNs never seen
 * come here.
 */
__noinline int roceval_resp_holes_on(__u32 slot, __u32 d, __u32 recent, __u32 win)
{
	struct roceval_flow *f = flow_at(slot);
	struct roceval_resp_holes *h = resp_holes_at(slot);
	struct bits m = {}, out = { ~recent & 0xFFFF, 0 };

	if (!f || !h)
		return 0;
	if (f->resp.state & SPACE_OLD_HOLES)
		m = (struct bits){ h->missing[0], h->missing[1] };
	/* recent's bit i is now i + 1 + d behind: bit i + d - 16 here */
	out = d >= SPACE_RECENT_PSNS ? bits_shl(out, d - SPACE_RECENT_PSNS)
				     : (struct bits){ out.lo >> (SPACE_RECENT_PSNS - d), 0 };
	m = bits_or(bits_shl(m, d), out);
	/* jumped over, 17 .. d - 1 behind; the newest before, d behind, was seen */
	if (d > SPACE_RECENT_PSNS + 1)
		m = bits_or(m, bits_below(d - SPACE_RECENT_PSNS - 1));
	response_holes_set(f, h, bits_and(m, bits_below(win - SPACE_RECENT_PSNS)));
	return 0;
}

/* Whether the response d PSNs behind the newest (further than `recent` holds) is one never seen, seen now. */
static __always_inline bool response_hole_filled(struct roceval_flow *f, __u32 d)
{
	__u32 slot = f->cold, i = d - SPACE_RECENT_PSNS - 1;
	struct roceval_resp_holes *h;
	struct bits m;

	if (!(f->resp.state & SPACE_OLD_HOLES))
		return false;
	h = resp_holes_at(slot);
	if (!h)
		return false;
	m = (struct bits){ h->missing[0], h->missing[1] };
	if (!bits_test(m, i))
		return false;
	response_holes_set(f, h, bits_and(m, bits_not(bits_shl((struct bits){ 1, 0 }, i))));
	return true;
}

/*
 * The frame's response, of the flow in `slot`, d PSNs behind the newest
 * within the window: reordered when its PSN was never seen, and seen from
 * now on.  Global, so verified once: rare, and the frame's code stays small.
 */
__noinline int roceval_resp_behind(__u32 slot, __u32 d)
{
	__u32 bit = 1u << ((d - 1) & (SPACE_RECENT_PSNS - 1));
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct roceval_flow *f = flow_at(slot);

	if (!s || !cnt || !f)
		return 0;
	if (d <= SPACE_RECENT_PSNS) {
		if (f->resp.recent & bit)
			return 0;
		f->resp.recent |= bit;
	} else if (!response_hole_filled(f, d)) {
		return 0;
	}
	violate(s, cnt, RULE_PSN_REORDER);
	cnt->reorder[roceval_reorder_bucket(d)]++;
	cnt->reorder_sum += d;
	return 0;
}

/*
 * Where a response came.  Responses run on from the newest (ACK PSNs jump
 * where they are coalesced).  With a reorder window, one behind the newest
 * by up to reorder_window PSNs came late: reordered (psn_reorder) when its
 * PSN was not seen (the 16 before the newest in `recent`, older ones never
 * seen in resp_holes), else unknown (a duplicate request's ACK, a
 * re-requested READ's responses come again too); and a READ response past
 * PSNs not seen is not judged for its message order, as those may come
 * late.
 */
static __always_inline int response_place(struct roceval_scratch *s, struct roceval_counters *cnt,
					  struct roceval_flow *f, __u32 win)
{
	struct roceval_flow_space *sp = &f->resp;
	__u32 psn = s->fi.psn, newest = (sp->next_psn - 1) & ROCE_PSN_MASK, d, recent = sp->recent;

	if (psn == newest)
		return RESP_IN_ORDER;
	/* the next PSN with none missing: the seen-bits stay all ones, and nothing else changes */
	if (psn == ((newest + 1) & ROCE_PSN_MASK) && recent == 0xFFFF && !(sp->state & SPACE_OLD_HOLES)) {
		sp->next_psn = (psn + 1) & ROCE_PSN_MASK;
		return RESP_IN_ORDER;
	}
	if (psn_ahead(psn, newest)) {
		d = (psn - newest) & ROCE_PSN_MASK;
		sp->recent = d > SPACE_RECENT_PSNS ? 0 : (__u16)(recent << d | 1u << (d - 1));
		sp->next_psn = (psn + 1) & ROCE_PSN_MASK;
		/* PSNs never seen, or jumped over, going further back than recent holds */
		if (win > SPACE_RECENT_PSNS &&
		    ((sp->state & SPACE_OLD_HOLES) || d > SPACE_RECENT_PSNS + 1 ||
		     (~recent & 0xFFFF) >> (d < SPACE_RECENT_PSNS ? SPACE_RECENT_PSNS - d : 0)))
			roceval_resp_holes_on(f->cold, d, recent, win);
		return win && d > 1 ? RESP_JUMPED : RESP_IN_ORDER;
	}
	d = (newest - psn) & ROCE_PSN_MASK;
	if (!win || d > win)
		return RESP_IN_ORDER;
	roceval_resp_behind(f->cold, d);
	return RESP_BEHIND;
}

/* A response's place: the first only sets expectations; in order, its message order and MSN. */
static __always_inline void response_judge(struct roceval_scratch *s, struct roceval_counters *cnt,
					   const struct roceval_settings *cfg, struct roceval_flow *f,
					   const struct roce_op *op)
{
	struct roceval_flow_space *sp = &f->resp;
	int place = RESP_IN_ORDER;

	if (!(sp->state & SPACE_SEEN)) {
		space_learn(sp, op);
		sp->next_psn = (s->fi.psn + 1) & ROCE_PSN_MASK;
		/* what came before the first is not known missing: no hole to keep for it */
		sp->recent = 0xFFFF;
	} else {
		place = response_place(s, cnt, f, reorder_win(cfg));
		/* READ responses: sequence only; their PSNs follow the other side's READs */
		if (place == RESP_JUMPED && op->position != POS_NONE)
			space_learn(sp, op);
		else if (place == RESP_IN_ORDER && op->position != POS_NONE && sequence_broken(sp, op))
			violate(s, cnt, RULE_OPCODE_SEQUENCE);
	}
	if (s->fi.has_aeth && place != RESP_BEHIND)
		msn_check(s, cnt, f);
}

/*
 * The first request or response of a newly learned CM connection to this
 * end, on the flow in `slot`: whatever an earlier connection on the same
 * QPN left (its holes count as losses) is forgotten, and the space starts
 * afresh.  Global: checked once, not on every path of the frame to it.
 */
__noinline int roceval_flow_fresh(__u32 slot, __u32 fresh)
{
	struct roceval_flow *f = flow_at(slot);

	if (!f)
		return 0;
	if (fresh & CONN_FRESH_REQ) {
		roceval_reorder_settle_all(f->cold);
		__builtin_memset(&f->req, 0, sizeof(f->req));
		__builtin_memset(f->retx, 0, sizeof(f->retx));
		f->pmtu = 0;
		f->nak_rnr = 0;
		f->retx_missing = f->retx_nak = f->retx_from = f->nak_t = 0;
		f->read_from = f->read_next = f->read_end = 0;
		f->hint_window = 0;
		f->timed_slot = 0;
	}
	if (fresh & CONN_FRESH_RESP) {
		__builtin_memset(&f->resp, 0, sizeof(f->resp));
		f->last_msn = 0;
		f->msn_valid = 0;
		f->misses = 0;
		f->miss_window = 0;
		f->answered_slot = 0;
		f->answered_window = 0;
	}
	return 0;
}

/* A request on a reliable connection: timed, held, or compared with what was held (retx.bpf.h). */
static __always_inline void request_retx(struct roceval_scratch *s, struct roceval_counters *cnt,
					 const struct roceval_settings *cfg, struct roceval_flow *f, int v,
					 const struct roce_op *op)
{
	const struct frame_info *fi = &s->fi;

	if (v == REQ_FILL)
		return;
	/* read only where a time is kept or compared: live it is a helper call */
	if (v == REQ_DUP || latency_due(s, cnt, cfg, f))
		frame_clock(s, cnt);
	if (v == REQ_DUP) {
		roceval_retx_resent(f->cold);
		return;
	}
	retx_sent(s, cnt, f, op->family == FAM_READ_REQ);
	if (f->hint_window != ANSWER_WINDOW(fi->psn))
		roceval_answer_hint(f->cold);
}

static __always_inline void flow_update(struct roceval_scratch *s, struct roceval_counters *cnt,
					const struct roceval_settings *cfg, __u32 frame_len)
{
	struct frame_info *fi = &s->fi;
	const struct roce_op *op = &roce_ops[fi->opcode & 0x1F];
	__u8 transport = fi->opcode >> 5;
	struct roceval_flow *f;

	f = flow_lookup(s);
	if (!f) {
		f = flow_create(s, cnt);
		/*
		 * The cache then points at no slot: what is judged after the
		 * flow's books (roceval_congestion(), cc_flow()) takes the flow
		 * it finds there for one the frame was counted on before, and a
		 * flow the frame made is none.  Left as it was, a flow made in
		 * the cached slot (slot 0 of a fresh table, or the flow it
		 * evicted) was taken for one, in a small table often.
		 */
		s->last_flow = ROCEVAL_NO_SLOT;
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
		bool request = op->flags & OPF_REQUEST, reliable = transport != ROCE_TR_UC;
		struct roceval_flow_space *sp = request ? &f->req : &f->resp;

		if (__builtin_expect(fi->conn_fresh, 0))
			roceval_flow_fresh(f->cold, fi->conn_fresh);
		f->transport = transport;
		if (op->payload == PL_PMTU) {
			if (!f->pmtu)
				f->pmtu = fi->payload;
			else if (f->pmtu != fi->payload && (sp->state & SPACE_SEEN))
				violate(s, cnt, RULE_PMTU_INCONSISTENT);
		}
		if (request) {
			/*
			 * A READ's PSN count: the PMTU the flow's own FIRST/MIDDLE
			 * packets show the sender splitting at, else the one its
			 * connection negotiated or the setting gives, else its
			 * responses tell (request_after_read).  Where what was
			 * announced and what is sent differ, payload_length counts
			 * it, and the READs follow what is sent.
			 */
			__u32 pmtu = f->pmtu ? f->pmtu : fi->pmtu_conf;
			int v = request_judge(s, cnt, f, op, reliable, pmtu);

			if (reliable)
				request_retx(s, cnt, cfg, f, v, op);
		} else {
			response_judge(s, cnt, cfg, f, op);
		}
		/* a window given up on (answer_pair): not the call either */
		if ((fi->has_aeth || op->family == FAM_READ_RESP) && reliable &&
		    (cm_active || !answer_given_up(f, ANSWER_WINDOW(fi->psn))))
			roceval_flow_answer(f->cold);
	}

	flow_account(s, f, frame_len);
}

#endif /* ROCEVAL_FLOW_BPF_H */
