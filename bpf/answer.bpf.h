/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Responses matched to the requests they answer, on reliable connections:
 * ACKs (coalesced ones cover every request up to their PSN), READ
 * responses and NAKs, and the latencies between them.
 *
 * A response goes from the responder B to the requester's QP a on host A;
 * the requests it answers went from A to B's QP b, which no header of the
 * response names.  With CM, b is the peer of the end (A, a), exactly.
 * Without, it is inferred: the hints name, per (A, B, PSN window of 4096),
 * the flow from A to B that last sent PSNs in that window, and the pairing
 * is kept only when the response's PSN is one that flow sent recently
 * (within RETX_NAK_REACH behind its next PSN).  PSNs start at random in
 * 2^24, so two QPs between the same hosts share a window about once in 4096
 * pairs; then the later one holds the hint and the other's answers go
 * unmatched, unless its PSNs also fall in the later one's recent range.
 */
#ifndef ROCEVAL_ANSWER_BPF_H
#define ROCEVAL_ANSWER_BPF_H

#include "flow_table.bpf.h"
#include "frame.bpf.h"
#include "cm.bpf.h"
#include "retx.bpf.h"
#include "latency.bpf.h"

/*
 * Written when a request flow's PSNs enter a new window; sized with the flow
 * table by the loader.  An LRU: a lost hint costs answers unmatched, no alarm.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, struct roceval_hint_key);
	__type(value, __u32);
} req_hints SEC(".maps");

#define ANSWER_WINDOW(psn) ((__u16)(((psn) >> ROCEVAL_HINT_SHIFT) | 0x8000))

static __always_inline void hint_key_set(struct roceval_hint_key *k, const __u8 *requester, const __u8 *responder,
					 __u8 ipv6, __u16 window)
{
	__builtin_memcpy(k->requester, requester, 16);
	__builtin_memcpy(k->responder, responder, 16);
	k->ipv6 = ipv6;
	k->pad = 0;
	k->window = window;
}

/*
 * A request whose PSN starts a window for its flow (in `slot`): the flow is
 * the one answers in it go to.  Global: checked once, not on every path.
 */
__noinline int roceval_answer_hint(__u32 slot)
{
	struct retx_scratch *x = retx_scratch_get();
	struct roceval_scratch *s = scratch_get();
	struct roceval_flow *f = flow_at(slot);
	const struct frame_info *fi;

	if (!x || !s || !f)
		return 0;
	fi = &s->fi;
	f->hint_window = ANSWER_WINDOW(fi->psn);
	hint_key_set(&x->hint, fi->saddr, fi->daddr, fi->ipv6, f->hint_window);
	bpf_map_update_elem(&req_hints, &x->hint, &fi->flow_qpn, BPF_ANY);
	return 0;
}

/*
 * Responses in a row in one PSN window whose requests were not found, after
 * which that window is not looked up again: a one-way mirror sees ACKs whose
 * requests it never sees, and must not pay a lookup for each.  More than
 * one, because a single miss is often a capture that lost the first request
 * of the window, whose later requests are found.
 */
#define ANSWER_MISSES 16

static __always_inline bool answer_given_up(const struct roceval_flow *f, __u16 window)
{
	return f->miss_window == window && f->misses >= ANSWER_MISSES;
}

/*
 * The key of the request flow the response in `fi` answers, in x->req: 1
 * when CM named it, 0 when inferred (to be checked against the flow's
 * PSNs), -1 when unknown.  `f` is the response's flow.
 */
static __always_inline int answer_pair(const struct frame_info *fi, struct roceval_flow *f, struct retx_scratch *x)
{
	const struct roceval_cm_end *e = 0;
	__u16 window = ANSWER_WINDOW(fi->psn);
	const __u32 *qpn = 0;
	int by_cm = 0;

	if (cm_active) {
		cm_end_key_set(&x->end, fi->daddr, fi->dqpn, fi->ipv6);
		e = cm_end_get(&x->end);
		by_cm = e && e->state < CM_STATE_CLOSED && addr_eq(e->peer, fi->saddr);
	}
	if (!by_cm) {
		if (answer_given_up(f, window))
			return -1;
		hint_key_set(&x->hint, fi->daddr, fi->saddr, fi->ipv6, window);
		qpn = bpf_map_lookup_elem(&req_hints, &x->hint);
		if (f->miss_window != window) {
			f->miss_window = window;
			f->misses = 0;
		}
		if (!qpn) {
			f->misses++;
			return -1;
		}
		f->misses = 0;
	}
	__builtin_memcpy(x->req.saddr, fi->daddr, 16);
	__builtin_memcpy(x->req.daddr, fi->saddr, 16);
	x->req.dqpn = by_cm && e ? e->peer_qpn : (qpn ? *qpn : 0);
	x->req.ipv6 = fi->ipv6;
	x->req.session = fi->key.session;
	return by_cm;
}

/*
 * An inferred pairing holds when the response's PSN is one the request flow
 * sent lately.  After a READ whose PSN count is not known yet (no PMTU
 * learned), next_psn is the READ's own PSN and its responses run on past it.
 */
static __always_inline bool answer_plausible(const struct frame_info *fi, const struct roceval_flow *r)
{
	__u32 next = r->req.next_psn;
	__u32 ahead = (r->req.state & SPACE_PSN_VALID) ? 0 : 1u << ROCEVAL_HINT_SHIFT;

	return (r->req.state & SPACE_SEEN) && psn_within(fi->psn, (next - RETX_NAK_REACH) & ROCE_PSN_MASK,
					 (next - 1 + ahead) & ROCE_PSN_MASK);
}

/*
 * A response's time, read once and only when it answers a timed request (or
 * is a NAK): live it is a helper call, and on a one-way mirror most
 * responses answer nothing roceval saw.
 */
static __always_inline void answer_clock(struct roceval_scratch *s, struct roceval_counters *cnt)
{
	if (s->clocked)
		return;
	s->clocked = true;
	frame_clock(s, cnt);
}

static __always_inline void answer_count(struct roceval_flow *r, __u32 kind, __u32 ticks)
{
	__u64 b = roceval_latency_record(kind, ticks);
	struct roceval_flow_cold *cold;

	if (b >= ROCEVAL_LAT_BUCKETS)
		return;
	cold = flow_cold_at(r->cold);
	if (!cold)
		return;
	if (cold->latency[b] == 0xFFFF)
		for (int i = 0; i < ROCEVAL_LAT_BUCKETS; i++)
			cold->latency[i] >>= 1;
	cold->latency[b]++;
}

/*
 * An ACK (or a READ response's AETH) acknowledges every request up to its
 * PSN: each still waiting in the flow's slots is answered now.  READ
 * requests are answered by their first response, not timed here.  A READ
 * response stream an ACK (not a READ response) goes past is no longer where
 * a re-request starts.
 */
static __always_inline void answer_ack(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *r,
				       bool read_resp)
{
	__u32 psn = s->fi.psn;

	if (!read_resp && (r->read_next & ROCEVAL_RETX_HELD) && !psn_ahead(r->read_next & ROCE_PSN_MASK, psn))
		r->read_next = 0;

	for (int i = 0; i < ROCEVAL_RETX_SLOTS; i++) {
		struct roceval_retx_slot *slot = &r->retx[i];
		__u32 bits = slot->psn_bits;

		if (!(bits & ROCEVAL_RETX_WAITING) || psn_ahead(bits & ROCE_PSN_MASK, psn))
			continue;
		slot->psn_bits = bits & ~ROCEVAL_RETX_WAITING;
		if (bits & ROCEVAL_RETX_READ)
			continue;
		/* the first request this ACK answers reads the clock; the rest share its time */
		answer_clock(s, cnt);
		if (s->timed)
			answer_count(r, LAT_ACK, s->now_t - slot->sent_t);
	}
}

/*
 * The first response of a READ: FIRST or ONLY carries the READ's own PSN,
 * which is all the slot matches (a LAST carries a PSN the READ consumed).
 */
static __always_inline void answer_read(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *r)
{
	struct roceval_retx_slot *slot = &r->retx[s->fi.psn & (ROCEVAL_RETX_SLOTS - 1)];
	__u32 want = s->fi.psn | ROCEVAL_RETX_WAITING | ROCEVAL_RETX_READ;

	if ((slot->psn_bits & (ROCE_PSN_MASK | ROCEVAL_RETX_WAITING | ROCEVAL_RETX_READ)) != want)
		return;
	slot->psn_bits &= ~ROCEVAL_RETX_WAITING;
	answer_clock(s, cnt);
	if (s->timed)
		answer_count(r, LAT_READ, s->now_t - slot->sent_t);
}

/*
 * READ responses in order: a READ's first (FIRST or ONLY) sets where its
 * stream stands, each next one in order moves it on, and one out of order
 * (a response lost before the observer) leaves it at the first one
 * missing: where the requester must re-request from (retx.bpf.h).  The
 * LAST, in order or not, tells where the READ ends: a re-request past the
 * first missing response and up to there skips data.
 */
static __always_inline void answer_read_stream(struct roceval_flow *r, __u32 psn, __u8 position)
{
	if (position == POS_FIRST || position == POS_ONLY) {
		r->read_from = psn;
		/* an ONLY is the whole READ, its end: nothing to skip, and the next request's PSN known */
		r->read_end = position == POS_ONLY ? psn | ROCEVAL_RETX_HELD : 0;
	} else {
		if (position == POS_LAST && (r->read_next & ROCEVAL_RETX_HELD) &&
		    (psn_ahead(psn, r->read_next & ROCE_PSN_MASK) || psn == (r->read_next & ROCE_PSN_MASK)))
			r->read_end = psn | ROCEVAL_RETX_HELD;
		if (r->read_next != (psn | ROCEVAL_RETX_HELD))
			return;
	}
	r->read_next = ((psn + 1) & ROCE_PSN_MASK) | ROCEVAL_RETX_HELD;
}

#endif /* ROCEVAL_ANSWER_BPF_H */
