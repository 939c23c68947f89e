/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * On-demand samples of violating frames for `roceval trace`.
 *
 * Off unless settings.trace_on: the hook in roceval_frame() tests that one
 * word first, so a host nobody is tracing pays nothing.  Each running trace
 * has a slot: its filters in trace_filters, its own ring buffer in trace_rbs,
 * its own per-CPU token bucket, so several traces on one interface each get
 * every frame that matches their filters and one ending does not stop the
 * others.  A bucket keeps a storm of bad frames from flooding the host; what
 * a bucket or a full ring turns away is counted in trace_skipped.
 */
#ifndef ROCEVAL_TRACE_BPF_H
#define ROCEVAL_TRACE_BPF_H

#include "frame.bpf.h"

#define TRACE_NSEC 1000000000ULL
/* Idle longer than this and the bucket is simply full: keeps elapsed * rate in 64 bits. */
#define TRACE_IDLE_FULL (1000 * TRACE_NSEC)

struct trace_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, ROCEVAL_TRACE_RB_BYTES);
};

/* Slot i: the ring buffer of the trace in slot i, put there by that trace. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, ROCEVAL_MAX_TRACES);
	__type(key, __u32);
	__array(values, struct trace_ring);
} trace_rbs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_MAX_TRACES);
	__type(key, __u32);
	__type(value, struct roceval_trace_filter);
} trace_filters SEC(".maps");

/* Tokens are kept in units of 1/1e9 token so refill needs no division. */
struct trace_bucket {
	__u64 tokens;
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCEVAL_MAX_TRACES);
	__type(key, __u32);
	__type(value, struct trace_bucket);
} trace_tb SEC(".maps");

/* An event is assembled here: the snap length is variable, the stack too small. */
struct trace_buf {
	struct roceval_trace_event ev;
	__u8 data[ROCEVAL_MAX_SNAPLEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} trace_buf SEC(".maps");

/*
 * The trace's filters.  DestQP and addresses are only known once the BTH
 * was parsed; a frame cut short before it cannot match a QP or address filter.
 */
static __always_inline bool trace_match(const struct roceval_scratch *s,
					const struct roceval_trace_filter *flt)
{
	const struct frame_info *fi = &s->fi;
	__u32 fam = flt->addr_family;

	if (!rule_set_empty(&flt->rules) && !rule_set_meets(&s->rules, flt->rules.w[0], flt->rules.w[1]))
		return false;
	if (flt->qpn == ROCEVAL_ANY_QPN && !fam)
		return true;
	if (!fi->has_bth)
		return false;
	if (flt->qpn != ROCEVAL_ANY_QPN && fi->dqpn != flt->qpn)
		return false;
	if (fam) {
		__u32 want[4], src[4], dst[4];
		bool v6 = fam == 6;

		if (v6 != !!fi->ipv6)
			return false;
		__builtin_memcpy(want, flt->addr, 16);
		__builtin_memcpy(src, fi->saddr, 16);
		__builtin_memcpy(dst, fi->daddr, 16);
		/* IPv4 addresses are in the first word, the rest zero on both sides */
		if ((src[0] != want[0] || (v6 && (src[1] != want[1] || src[2] != want[2] || src[3] != want[3]))) &&
		    (dst[0] != want[0] || (v6 && (dst[1] != want[1] || dst[2] != want[2] || dst[3] != want[3]))))
			return false;
	}
	return true;
}

/* One token, or false when the bucket is empty; refilled at trace_rate per second. */
static __always_inline bool trace_take_token(struct trace_bucket *tb,
					     const struct roceval_settings *cfg)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cap = (__u64)cfg->trace_burst * TRACE_NSEC;
	__u64 elapsed = now - tb->last_ns;
	__u64 tokens;

	tokens = elapsed >= TRACE_IDLE_FULL ? cap : tb->tokens + elapsed * cfg->trace_rate;
	if (tokens > cap)
		tokens = cap;
	tb->last_ns = now;
	if (tokens < TRACE_NSEC) {
		tb->tokens = tokens;
		return false;
	}
	tb->tokens = tokens - TRACE_NSEC;
	return true;
}

/* One trace's sample of the frame, if its filters take it. */
static __always_inline void trace_sample_one(void *ctx, bool tc, __u32 base, __u32 len, __u32 wire,
					     struct roceval_scratch *s,
					     const struct roceval_settings *cfg,
					     struct roceval_counters *cnt, __u32 slot)
{
	const struct roceval_trace_filter *flt;
	struct trace_bucket *tb;
	struct trace_buf *tbuf;
	void *rb;
	__u32 zero = 0;
	__u64 cap;

	flt = rare_lookup(&trace_filters, &slot);
	if (!flt || !trace_match(s, flt))
		return;
	tb = rare_lookup(&trace_tb, &slot);
	tbuf = rare_lookup(&trace_buf, &zero);
	rb = rare_lookup(&trace_rbs, &slot);
	if (!tb || !tbuf || !rb)
		return;
	if (!trace_take_token(tb, cfg)) {
		cnt->total[TOTAL_TRACE_SKIPPED]++;
		return;
	}

	/* snaplen 0: the headers the program parsed, never payload */
	cap = flt->snaplen ? flt->snaplen : s->fi.hdr_end;
	if (cap > len)
		cap = len;
	barrier_var(cap);
	if (cap > ROCEVAL_MAX_SNAPLEN)
		cap = ROCEVAL_MAX_SNAPLEN;
	if (cap && frame_load(ctx, tc, base, tbuf->data, cap))
		cap = 0;
	tbuf->ev.ts_ns = bpf_ktime_get_ns();
	tbuf->ev.rules = s->rules;
	tbuf->ev.ifindex = frame_ifindex(ctx, tc);
	tbuf->ev.frame_len = wire;
	tbuf->ev.cap_len = cap;
	tbuf->ev.flags = s->fi.icrc_checked ? ROCEVAL_EV_ICRC_CHECKED : 0;
	tbuf->ev.icrc_expected = s->fi.icrc_checked ? s->fi.icrc_expected : 0;
	tbuf->ev.icrc_found = s->fi.icrc_checked ? s->fi.icrc_found : 0;
	tbuf->ev.retx_from = s->fi.retx_from;
	if (bpf_ringbuf_output(rb, tbuf, sizeof(tbuf->ev) + cap, 0))
		cnt->total[TOTAL_TRACE_SKIPPED]++;
	else
		cnt->total[TOTAL_TRACE_SAMPLES]++;
}

/*
 * Global functions, one per context type: the frame calls one only when a
 * trace runs and the frame broke a rule, and the verifier checks the
 * samples once rather than in every state of the frame that reaches them.
 */
static __always_inline int trace_sample(void *ctx, bool tc, __u32 base, __u32 len, __u32 wire)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	const struct roceval_settings *cfg = settings_get();

	if (!ctx || !s || !cnt || !cfg)
		return 0;
	for (__u32 slot = 0; slot < ROCEVAL_MAX_TRACES; slot++)
		if (cfg->trace_on & (1u << slot))
			trace_sample_one(ctx, tc, base, len, wire, s, cfg, cnt, slot);
	return 0;
}

__noinline int roceval_trace(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire)
{
	return trace_sample(ctx, false, base, len, wire);
}

__noinline int roceval_trace_skb(struct __sk_buff *skb, __u32 base, __u32 len, __u32 wire)
{
	return trace_sample(skb, true, base, len, wire);
}

#endif /* ROCEVAL_TRACE_BPF_H */
