/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How a sender's rate follows a CNP (cnp_reaction=T, a measurement, not a
 * rule): its rate over the T after the CNP against its rate before it, a
 * ratio in the cnp_reaction histogram.  DCQCN's reaction point cuts its
 * rate on a CNP, so a ratio near 1 is a sender that ignores them.
 *
 * The window after a CNP is exact: the bytes the flow sent from the CNP to
 * its first frame at or past T later, over T.  The one before is the span
 * since a checkpoint of the flow's byte count: every request moves the
 * newer of two checkpoints on once it is T old, so at a CNP one of them is
 * between T and 2T back while the flow sends without pause.  A CNP inside
 * the window after an earlier one is not measured apart (reaction_within).
 */
#ifndef ROCEVAL_REACTION_BPF_H
#define ROCEVAL_REACTION_BPF_H

#include "congestion.bpf.h"

/* The flow's key hashed, never 0: whether a slot's record is still this flow's. */
static __always_inline __u32 cc_flow_id(const struct roceval_flow_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = 0;

	for (int i = 0; i < (int)(sizeof(*k) / 8); i++)
		h = (h ^ w[i]) * 0x9E3779B97F4A7C15ULL;
	return (__u32)(h >> 32) | 1;
}

/*
 * The flow's record, started afresh (then NULL: nothing to measure yet)
 * when the flow had none or its slot held another flow's.  Its lookup is
 * rare_lookup's (frame.bpf.h).
 */
static __noinline struct roceval_cc_rate *cc_rate_of(struct cc_scratch *x, const struct roceval_flow *f,
						       __u32 bytes)
{
	__u32 slot = f->cold, id = cc_flow_id(&f->key);
	struct roceval_cc_rate *r = rare_lookup(&cc_rate, &slot);

	if (r && r->id == id)
		return r;
	if (!r) {
		r = &x->rate;
		__builtin_memset(r, 0, sizeof(*r));
	}
	r->id = id;
	r->before = 0;
	r->cp_ns[0] = r->cp_ns[1] = x->now;
	r->cp_bytes[0] = r->cp_bytes[1] = bytes;
	if (r == &x->rate)
		bpf_map_update_elem(&cc_rate, &slot, r, BPF_NOEXIST);
	return 0;
}

/*
 * The window after the CNP closed with `bytes` sent up to its end: one
 * sample of after over before.  One copy: each division by a register is a
 * site the kernel patches at load.
 */
static __noinline void cc_sample(struct roceval_cc_rate *r, __u32 bytes, __u64 window)
{
	struct roceval_congestion *c = congestion_get();
	__u64 after = ((__u64)(bytes - r->cnp_bytes) << 10) / window;
	__u64 ratio = after * ROCEVAL_REACTION_ONE / r->before, b = (ratio + 7) / 8;

	r->before = 0;
	if (!c)
		return;
	b = b ? b - 1 : 0;
	if (b >= ROCEVAL_REACTION_BUCKETS)
		b = ROCEVAL_REACTION_BUCKETS - 1;
	c->reaction[b]++;
	c->reaction_sum += ratio;
}

/* A request of flow f, `frame_len` bytes, counted on it already: the window and checkpoints move on. */
static __always_inline void cc_follow(const struct roceval_settings *cfg, struct cc_scratch *x,
				      struct roceval_flow *f, __u32 frame_len)
{
	__u64 window = (__u64)cfg->cnp_reaction * 1000, now = x->now;
	__u32 bytes = (__u32)f->bytes - frame_len;
	struct roceval_cc_rate *r = cc_rate_of(x, f, bytes);

	if (!r)
		return;
	if (r->before && cc_since(now, r->cnp_ns) >= window && cc_since(now, r->cnp_ns) != ~0ULL)
		cc_sample(r, bytes, window);
	if (cc_since(now, r->cp_ns[1]) >= window && cc_since(now, r->cp_ns[1]) != ~0ULL) {
		r->cp_ns[0] = r->cp_ns[1];
		r->cp_bytes[0] = r->cp_bytes[1];
		r->cp_ns[1] = now;
		r->cp_bytes[1] = bytes;
	}
}

/* A CNP to request flow f's sender: the rate before it, and the window after it opened. */
static __always_inline void cc_react(struct cc_scratch *x, const struct roceval_settings *cfg,
				     struct roceval_flow *f)
{
	struct roceval_congestion *c = congestion_get();
	__u64 window = (__u64)cfg->cnp_reaction * 1000, now = x->now, span;
	__u32 bytes = (__u32)f->bytes, i;
	struct roceval_cc_rate *r;

	if (!c)
		return;
	r = cc_rate_of(x, f, bytes);
	if (!r) {
		c->reaction_unmeasured++;
		return;
	}
	if (r->before) {
		/* no request since the window after the last CNP ended: it closes now */
		if (cc_since(now, r->cnp_ns) < window) {
			c->reaction_within++;
			return;
		}
		cc_sample(r, bytes, window);
	}
	i = cc_since(now, r->cp_ns[1]) >= window && cc_since(now, r->cp_ns[1]) != ~0ULL ? 1 : 0;
	span = cc_since(now, r->cp_ns[i]);
	if (span < window || span == ~0ULL || !(bytes - r->cp_bytes[i])) {
		c->reaction_unmeasured++;
		return;
	}
	r->before = (__u32)((((__u64)(bytes - r->cp_bytes[i])) << 10) / span);
	if (!r->before) {
		c->reaction_unmeasured++;
		return;
	}
	r->cnp_ns = now;
	r->cnp_bytes = bytes;
}

#endif /* ROCEVAL_REACTION_BPF_H */
