/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The flow table (roceval.h, docs/sequence.md):
 * its maps, a flow's key found in its two sets or in the slot this CPU last
 * found one in, and each flow's cold part.  What the flows are judged by,
 * and a new flow placed (what an evicted one held settled first), is
 * flow.bpf.h's: the table knows nothing of what is kept beside it.
 */
#ifndef ROCEVAL_FLOW_TABLE_BPF_H
#define ROCEVAL_FLOW_TABLE_BPF_H

#include "frame.bpf.h"

/* Set by the loader with the maps' sizes (roceval_flow_sets()). */
const volatile __u32 flow_set_count = 1;
const volatile __u64 flow_seed;

/*
 * Mappable arrays start their values on a page, so a 256-byte flow and a
 * 32-byte set never straddle a cache line more than they must: at 64k flows
 * each frame's lookup misses the caches, and each line it reaches costs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_FLOW_WAYS);
	__type(key, __u32);
	__type(value, struct roceval_flow);
	__uint(map_flags, BPF_F_MMAPABLE);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roceval_flow_set);
	__uint(map_flags, BPF_F_MMAPABLE);
} flow_sets SEC(".maps");

/* Each flow's cold part (roceval.h), in the slot of the flow ring its key went to (flow_table.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_flow_cold);
} flow_cold SEC(".maps");

/* A flow by its slot, off the frame's common path: one lookup site (frame.bpf.h's counters_get). */
static __noinline struct roceval_flow *flow_at(__u32 slot)
{
	return bpf_map_lookup_elem(&flows, &slot);
}

/* The tally's own lookup: a call there would put one more frame on the deepest call chain. */
static __always_inline struct roceval_flow_cold *flow_cold_of(const struct roceval_flow *f)
{
	__u32 slot = f->cold;

	return bpf_map_lookup_elem(&flow_cold, &slot);
}

/* A flow's cold part by its slot, everywhere else: one lookup site. */
static __noinline struct roceval_flow_cold *flow_cold_at(__u32 slot)
{
	return bpf_map_lookup_elem(&flow_cold, &slot);
}

static __always_inline bool flow_key_equal(const struct roceval_flow_key *a, const struct roceval_flow_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4]));
}

/*
 * Loops, not unrolled: each unrolled way was a lookup site the kernel
 * patches at load by copying the whole program (docs/performance.md), and
 * only a frame off the last-flow cache comes here.
 */
static __always_inline struct roceval_flow *flow_find(const struct roceval_flow_key *k)
{
	struct roceval_flow_place p = roceval_flow_place(k, flow_seed, flow_set_count);

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 2; i++) {
		__u32 si = i ? p.set[1] : p.set[0];
		struct roceval_flow_set *set = bpf_map_lookup_elem(&flow_sets, &si);

		if (!set)
			return 0;
#pragma clang loop unroll(disable)
		for (__u32 w = 0; w < ROCEVAL_FLOW_WAYS; w++) {
			__u32 slot = si * ROCEVAL_FLOW_WAYS + w;
			struct roceval_flow *f;

			if (set->tag[w] != p.tag)
				continue;
			f = bpf_map_lookup_elem(&flows, &slot);
			if (f && flow_key_equal(&f->key, k))
				return f;
		}
	}
	return 0;
}

/*
 * flow_find for what is off the frame's common path (an answer's request,
 * congestion): the slot of the flow keyed k, or -1.  Global: the verifier
 * walks flow_find's loops once, not at each caller.
 */
__noinline int roceval_flow_slot(const struct roceval_flow_key *k)
{
	struct roceval_flow *f;

	if (!k)
		return -1;
	f = flow_find(k);
	return f ? (int)f->cold : -1;
}

static __always_inline struct roceval_flow *flow_find_rare(const struct roceval_flow_key *k)
{
	int found = roceval_flow_slot(k);
	__u32 slot = found;

	return found < 0 ? 0 : flow_at(slot);
}

/*
 * The frame's flow, tried first in the slot where this CPU last found one:
 * a message's packets arrive in a row and RSS keeps a QP on one CPU, so on
 * a hit the hash and the sets are not read, and the entry is in the cache
 * either way.  A slot emptied for a new flow counts no packets until that
 * flow's first frame is counted, so an all-zero key never matches one.
 */
static __always_inline struct roceval_flow *flow_lookup(struct roceval_scratch *s)
{
	__u32 slot = s->last_flow;
	struct roceval_flow *f = bpf_map_lookup_elem(&flows, &slot);

	/* the QP first: where the last flow was another, this is what usually tells */
	if (f && f->key.dqpn == s->fi.key.dqpn && f->packets && flow_key_equal(&f->key, &s->fi.key))
		return f;
	f = flow_find_rare(&s->fi.key);
	if (f)
		s->last_flow = f->cold;
	return f;
}

#endif /* ROCEVAL_FLOW_TABLE_BPF_H */
