/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * CNP pacing and CE answered by CNPs, per pacing scope (congestion.bpf.h).
 *
 * A CE-marked request goes from the reaction point A (QP a) to B's QP b; B,
 * the notification point, answers with a CNP from B to QP a.  CNPs name a,
 * so a CE-marked request is kept where its CNP will be looked for: under a
 * when roceval knows a is b's peer (RDMA CM, or an earlier CNP to a on the
 * flow whose ACKs answered A's requests to b), else under the IP pair,
 * which every CNP from B to A answers.  With cnp_pacing=ip every scope is
 * the IP pair.
 *
 * A CE-marked READ response from B to A's QP a waits where A's CNP to b
 * is looked for: under b when CM or the requests it answers (the ACK
 * pairing of answer.bpf.h) name b, else under the IP pair.  UD requests
 * name their sender's QP in the DETH, mlx5 DC requests the DCI and DC READ
 * responses the DCT in the DC header.
 *
 * A CE mark inside the window a CNP of its scope already covers (cnp_gap,
 * or cnp_delay if longer: the NP may not send another sooner) needs no CNP
 * of its own; the first one after it waits for one.  When a frame comes
 * more than cnp_delay after the one waiting, that window went unanswered:
 * ce_unanswered counts it once, on that frame if it is the scope's next CE
 * mark or CNP or a frame of a flow of the scope, else when the timer that
 * sweeps the reorder windows finds it overdue (live), or at the end of a
 * replay.  The flows of a scope are the CE mark's, and the one from the NP
 * to the RP's QP when that is known: each carries a flag, cc_wait, which
 * is all their frames test while nothing waits.
 */
#ifndef ROCEVAL_CNP_BPF_H
#define ROCEVAL_CNP_BPF_H

#include "congestion.bpf.h"
#include "reaction.bpf.h"
#include "reorder.bpf.h"

/* The request flow whose requests the frame's flow f answered (answer.bpf.h), the frame's way back. */
static __always_inline struct roceval_flow *cc_answered(struct roceval_scratch *s, struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	struct roceval_flow *r;
	__u32 slot;

	if (!f || !f->answered_window)
		return 0;
	slot = f->answered_slot;
	r = flow_at(slot);
	if (!r || r->key.ipv6 != fi->ipv6 || !addr_eq(r->key.saddr, fi->daddr) || !addr_eq(r->key.daddr, fi->saddr))
		return 0;
	return r;
}

/*
 * The request flow a CNP slows: the one from its destination A to the QP
 * b whose peer is the CNP's QP a, by RDMA CM, or by the ACKs on the CNP's
 * own flow (the responses to A's requests), answer.bpf.h's pairing.
 * `by_cm` says which; x->req holds its key.
 */
static __always_inline struct roceval_flow *cc_requester(struct roceval_scratch *s, struct cc_scratch *x,
							 struct roceval_flow *f, bool *by_cm)
{
	const struct frame_info *fi = &s->fi;
	const struct roceval_cm_end *e;
	struct roceval_flow *r;

	*by_cm = false;
	if (cm_active) {
		cm_end_key_set(&x->end, fi->daddr, fi->dqpn, fi->ipv6);
		e = cm_end_get(&x->end);
		if (e && e->state < CM_STATE_CLOSED && addr_eq(e->peer, fi->saddr)) {
			__builtin_memcpy(x->req.saddr, fi->daddr, 16);
			__builtin_memcpy(x->req.daddr, fi->saddr, 16);
			x->req.dqpn = e->peer_qpn;
			x->req.ipv6 = fi->ipv6;
			x->req.pad = 0;
			x->req.session = fi->key.session;
			*by_cm = true;
			return flow_find_rare(&x->req);
		}
	}
	r = cc_answered(s, f);
	if (r)
		x->req = r->key;
	return r;
}

/* The QP of the frame's sender by RDMA CM: the peer of its destination's end; ROCEVAL_CC_ANY_QP if unknown. */
static __always_inline __u32 cc_cm_sender(struct roceval_scratch *s, struct cc_scratch *x)
{
	const struct frame_info *fi = &s->fi;
	const struct roceval_cm_end *e;

	if (!cm_active)
		return ROCEVAL_CC_ANY_QP;
	cm_end_key_set(&x->end, fi->daddr, fi->dqpn, fi->ipv6);
	e = cm_end_get(&x->end);
	return e && e->state < CM_STATE_CLOSED && addr_eq(e->peer, fi->saddr) ? e->peer_qpn : ROCEVAL_CC_ANY_QP;
}

/*
 * The QP a CE-marked frame's sender has, which the NP's CNP names; false
 * for frames no NP answers: ACKs, CM MADs, and what roceval does not
 * follow (RD).  f is the frame's flow.
 */
static __always_inline bool cc_ce_sender(struct roceval_scratch *s, struct cc_scratch *x, struct roceval_flow *f,
					 __u32 *qpn)
{
	const struct frame_info *fi = &s->fi;
	const struct roce_op *op = &roce_ops[fi->opcode & 0x1F];
	__u8 transport = fi->opcode >> 5;
	struct roceval_flow *r;
	const __u32 *paired;

	if (fi->dc) {
		/* the DCI on requests, the DCT on responses */
		*qpn = fi->src_qpn;
		return (op->flags & OPF_REQUEST) || op->family == FAM_READ_RESP;
	}
	if (transport == ROCE_TR_UD) {
		*qpn = fi->src_qpn;
		return fi->dqpn != ROCE_GSI_QPN;
	}
	if (transport != ROCE_TR_RC && transport != ROCE_TR_UC && transport != ROCE_TR_XRC)
		return false;
	if (!(op->flags & OPF_REQUEST) && op->family != FAM_READ_RESP)
		return false;
	*qpn = cc_cm_sender(s, x);
	if (*qpn != ROCEVAL_CC_ANY_QP)
		return true;
	if (op->flags & OPF_REQUEST) {
		paired = cc_pair_of(&fi->key);
		if (paired)
			*qpn = *paired;
	} else {
		/* a READ response: its responder's QP is the one A's requests went to */
		r = cc_answered(s, f);
		if (r)
			*qpn = r->key.dqpn;
	}
	return true;
}

/* A CNP answers the CE-marked request waiting in its scope, if any: the delay, and whether it was late. */
static __always_inline void cc_answer(struct roceval_scratch *s, struct roceval_counters *cnt,
				      const struct roceval_settings *cfg, struct roceval_cc_scope *e, __u64 now,
				      struct roceval_flow *f)
{
	__u64 delay;

	if (!e->ce_ns)
		return;
	delay = cc_since(now, e->ce_ns);
	e->ce_ns = 0;
	if (delay == ~0ULL)
		return;
	roceval_latency_record(LAT_CE_CNP, (__u32)(delay >> ROCEVAL_LAT_TIME_SHIFT));
	if (delay > (__u64)cfg->cnp_delay * 1000)
		cc_violate(s, cnt, f, RULE_CE_UNANSWERED);
}

/* The CNP in s, sent at x->now; f is its flow (from B to a, with the ACKs to A's requests). */
static __always_inline void cc_cnp(struct roceval_scratch *s, struct roceval_counters *cnt,
				   const struct roceval_settings *cfg, struct cc_scratch *x, struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	bool ip = cfg->cnp_pacing_ip, ce = cfg->cc_on & ROCEVAL_CC_CE, gap = cfg->cc_on & ROCEVAL_CC_GAP, by_cm;
	struct roceval_cc_scope *e;
	struct roceval_flow *r;

	x->fresh.cnp_ns = x->now;
	x->fresh.ce_ns = 0;
	/* its QP's scope, paced (qp) or holding what CM or ACKs paired (cnp_delay) */
	if (!ip && (gap || ce)) {
		cc_key_set(x, fi->saddr, fi->daddr, fi->dqpn, fi->ipv6);
		e = cc_scope(x);
		if (e) {
			if (gap && cc_since(x->now, e->cnp_ns) < (__u64)cfg->cnp_gap * 1000)
				cc_violate(s, cnt, f, RULE_CNP_GAP);
			if (ce)
				cc_answer(s, cnt, cfg, e, x->now, f);
			e->cnp_ns = x->now;
		}
	}
	/* the IP pair's, paced (ip) or holding what nothing paired */
	if ((ip && gap) || ce) {
		cc_key_set(x, fi->saddr, fi->daddr, ROCEVAL_CC_ANY_QP, fi->ipv6);
		e = cc_scope(x);
		if (e) {
			if (ip && gap && cc_since(x->now, e->cnp_ns) < (__u64)cfg->cnp_gap * 1000)
				cc_violate(s, cnt, f, RULE_CNP_GAP);
			if (ce)
				cc_answer(s, cnt, cfg, e, x->now, f);
			e->cnp_ns = x->now;
		}
	}
	if (!(cfg->cc_on & (ROCEVAL_CC_CE | ROCEVAL_CC_REACTION)))
		return;
	r = cc_requester(s, x, f, &by_cm);
	if (!r) {
		if (cfg->cc_on & ROCEVAL_CC_REACTION) {
			struct roceval_congestion *c = congestion_get();

			if (c)
				c->reaction_unpaired++;
		}
		return;
	}
	/* paired through ACKs: kept for the CE-marked requests of r to come */
	if (!by_cm && ce) {
		const __u32 *had = cc_pair_of(&x->req);

		if (!had || *had != fi->dqpn)
			bpf_map_update_elem(&cc_pairs, &x->req, &fi->dqpn, BPF_ANY);
	}
	if (cfg->cc_on & ROCEVAL_CC_REACTION)
		cc_react(x, cfg, r);
}

/* Flow f is of the scope in x->key, where a window waits: its frames judge it. */
static __always_inline void cc_wait_on(struct cc_scratch *x, struct roceval_flow *f)
{
	__u32 slot;

	if (!f || f->cc_wait)
		return;
	slot = f->cold;
	if (bpf_map_update_elem(&cc_waits, &slot, &x->key, BPF_ANY))
		return;
	f->cc_wait = 1;
	slot_marked(slot);
	sweep_arm();
}

#define CC_NONE 0 /* nothing waits: the flag is cleared */
#define CC_WAITS 1
#define CC_LATE 2 /* it waited past cnp_delay, now not any more: count it */

/*
 * Whether the window flow f (in `slot`) is flagged for still waits at
 * `now`.  Two judges of one window (a frame and the timer) count it once.
 * One copy, called; its lookups are rare_lookup's (frame.bpf.h).
 */
static __noinline int cc_wait_judge(const struct roceval_settings *cfg, struct roceval_flow *f, __u32 slot,
				 __u64 now)
{
	struct roceval_cc_key *k = rare_lookup(&cc_waits, &slot);
	struct roceval_cc_scope *e = k ? cc_scope_find(k) : 0;
	__u64 ce = e ? e->ce_ns : 0, since = cc_since(now, ce);

	if (!ce || !(cfg->cc_on & ROCEVAL_CC_CE)) {
		f->cc_wait = 0;
		return CC_NONE;
	}
	if (since == ~0ULL || since <= (__u64)cfg->cnp_delay * 1000)
		return CC_WAITS;
	f->cc_wait = 0;
	return __sync_val_compare_and_swap(&e->ce_ns, ce, 0) == ce ? CC_LATE : CC_NONE;
}

/*
 * The window the flow in `slot` is flagged for, judged by the clock when no
 * frame of its scope came: live from the reorder windows' sweep, and at the
 * end of a replay.  1 while it waits.
 */
__noinline int roceval_cc_idle(__u32 slot)
{
	struct roceval_counters *cnt = counters_get();
	struct roceval_settings *cfg = settings_get();
	struct roceval_flow *f = flow_at(slot);
	__u64 now = cc_clock();
	int v;

	if (!cnt || !cfg || !f || !f->cc_wait || !now)
		return 0;
	v = cc_wait_judge(cfg, f, slot, now);
	if (v == CC_LATE)
		flow_settled(cnt, f, RULE_CE_UNANSWERED, 1, true);
	return v == CC_WAITS;
}

/* A frame of flow f, which cc_wait flags. */
static __always_inline void cc_wait_frame(struct roceval_scratch *s, struct roceval_counters *cnt,
					  const struct roceval_settings *cfg, struct roceval_flow *f)
{
	__u64 now = cc_time(s);

	if (now && cc_wait_judge(cfg, f, f->cold, now) == CC_LATE)
		cc_violate(s, cnt, f, RULE_CE_UNANSWERED);
}

/* A CE-marked frame in s, sent at x->now, on flow f (NULL when it made the flow). */
static __always_inline void cc_ce(struct roceval_scratch *s, struct roceval_counters *cnt,
				  const struct roceval_settings *cfg, struct cc_scratch *x, struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	__u64 delay = (__u64)cfg->cnp_delay * 1000, gap = (__u64)cfg->cnp_gap * 1000, now = x->now;
	__u64 covered = gap > delay ? gap : delay;
	struct roceval_cc_scope *e;
	__u32 qpn;

	if (!f)
		f = flow_find_rare(&fi->key);
	if (!cc_ce_sender(s, x, f, &qpn))
		return;
	cc_key_set(x, fi->daddr, fi->saddr, cfg->cnp_pacing_ip ? ROCEVAL_CC_ANY_QP : qpn, fi->ipv6);
	x->fresh.cnp_ns = 0;
	x->fresh.ce_ns = now;
	e = cc_scope(x);
	if (e) {
		if (e->ce_ns && now >= e->ce_ns && now - e->ce_ns > delay) {
			cc_violate(s, cnt, f, RULE_CE_UNANSWERED);
			e->ce_ns = 0;
		}
		if (!e->ce_ns && cc_since(now, e->cnp_ns) >= covered)
			e->ce_ns = now;
		if (!e->ce_ns)
			return;
	}
	cc_wait_on(x, f);
	/* the flow from the NP to the RP's QP: the ACKs of a request, the requests of a READ response */
	if (x->key.qpn == ROCEVAL_CC_ANY_QP)
		return;
	__builtin_memcpy(x->req.saddr, x->key.np, 16);
	__builtin_memcpy(x->req.daddr, x->key.rp, 16);
	x->req.dqpn = x->key.qpn;
	x->req.ipv6 = fi->ipv6;
	x->req.pad = 0;
	x->req.session = fi->key.session;
	cc_wait_on(x, flow_find_rare(&x->req));
}

/*
 * Everything that keeps state between frames, for a frame flow_update()
 * has just counted.  Global: verified once, whichever program calls it.
 */
__noinline int roceval_congestion(__u32 frame_len)
{
	__u32 zero = 0;
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct roceval_settings *cfg = settings_get();
	struct cc_scratch *x = rare_lookup(&cc_scratch, &zero);
	struct roceval_flow *last, *f;
	__u32 slot;
	bool ce, follow;
	__u8 transport;

	if (!s || !cnt || !cfg || !x)
		return 0;
	if (s->fi.opcode == ROCE_OPCODE_CNP) {
		x->now = cc_time(s);
		if (x->now)
			cc_cnp(s, cnt, cfg, x, cc_flow(s));
		return 0;
	}
	/* one byte of the flow flow_update() has just read: whether a window waits in a scope it is of */
	slot = s->last_flow;
	last = flow_at(slot);
	if (last && last->cc_wait && (f = cc_flow_is(s, last)))
		cc_wait_frame(s, cnt, cfg, f);
	if (!s->fi.headers_ok)
		return 0;
	ce = (cfg->cc_on & ROCEVAL_CC_CE) && s->li.ecn == 3;
	/* requests of the connected transports: flows with one sender QP */
	transport = s->fi.opcode >> 5;
	follow = (cfg->cc_on & ROCEVAL_CC_REACTION) && !s->fi.dc &&
		 (roce_ops[s->fi.opcode & 0x1F].flags & OPF_REQUEST) &&
		 (transport == ROCE_TR_RC || transport == ROCE_TR_UC || transport == ROCE_TR_XRC);
	if (!ce && !follow)
		return 0;
	x->now = cc_time(s);
	if (!x->now)
		return 0;
	f = cc_flow_is(s, last);
	if (ce)
		cc_ce(s, cnt, cfg, x, f);
	if (follow && f)
		cc_follow(cfg, x, f, frame_len);
	return 0;
}

#endif /* ROCEVAL_CNP_BPF_H */
