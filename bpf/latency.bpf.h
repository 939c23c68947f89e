/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Latency histograms (the kinds and buckets are in roceval.h).  Times are
 * held in 32 bits of 16 ns, so a flow's slots stay small; a latency spans
 * at most 68 s, far past any transport timer worth measuring.
 */
#ifndef ROCEVAL_LATENCY_BPF_H
#define ROCEVAL_LATENCY_BPF_H

#include "frame.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAT__COUNT);
	__type(key, __u32);
	__type(value, struct roceval_latency_hist);
} latency SEC(".maps");

/* Global, so the verifier walks its loop once, not at every sample. */
__noinline __u64 roceval_latency_bucket(__u64 ns)
{
	return roceval_lat_bucket(ns);
}

/* Whether `ticks` is a time difference backwards (see ROCEVAL_LAT_BUCKETS). */
static __always_inline bool latency_backwards(__u32 ticks)
{
	return ticks & 0x80000000u;
}

/*
 * Counts `ticks` (16 ns) of latency of `kind`; returns its bucket, for the
 * flow's own histogram, or ROCEVAL_LAT_BUCKETS when it is not counted.
 */
static __always_inline __u32 latency_record(__u32 kind, __u32 ticks)
{
	__u64 ns = (__u64)ticks << ROCEVAL_LAT_TIME_SHIFT;
	struct roceval_latency_hist *h;
	__u64 b;

	if (latency_backwards(ticks))
		return ROCEVAL_LAT_BUCKETS;
	h = bpf_map_lookup_elem(&latency, &kind);
	b = roceval_latency_bucket(ns);

	/* clang knows the bound from the function's body; the verifier does not */
	barrier_var(b);
	if (b >= ROCEVAL_LAT_BUCKETS)
		b = ROCEVAL_LAT_BUCKETS - 1;
	if (h) {
		h->bucket[b]++;
		h->sum_ns += ns;
	}
	return b;
}

#endif /* ROCEVAL_LATENCY_BPF_H */
