/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the reorder window (reorder.bpf.h), the go-back (retx.bpf.h) and a CE
 * window (cnp.bpf.h) settle later than its frame: counted on the totals and
 * the flow, not as a rule the frame broke (docs/sequence.md, "Reordering").
 */
#ifndef ROCEVAL_TALLY_BPF_H
#define ROCEVAL_TALLY_BPF_H

#include "flow_table.bpf.h"
#include "frame.bpf.h"

/*
 * n more of rule r for flow f, settled now for earlier frames: on the totals
 * and the flow's counters, as a violation of the flow when r is one.  Not
 * inlined: its flow_cold lookup is one site the kernel patches at load, not
 * one for each caller (docs/performance.md).
 */
static __noinline void flow_settled(struct roceval_counters *cnt, struct roceval_flow *f, __u32 r, __u32 n,
				    bool violation)
{
	struct roceval_flow_cold *cold;

	if (!n || r >= RULE__COUNT)
		return;
	cnt->rule[r] += n;
	cold = flow_cold_of(f);
	if (!cold)
		return;
	__sync_fetch_and_add(&cold->rule[r], n);
	if (violation)
		__sync_fetch_and_add(&cold->violations, n);
}

/* n packets reordered by lo .. lo + n - 1 PSNs, one each, into the histogram. */
static __always_inline void reorder_count(struct roceval_counters *cnt, struct roceval_flow *f, __u32 lo, __u32 n)
{
	__u32 hi = lo + n - 1;

	if (!n || !lo || hi > ROCEVAL_REORDER_MAX)
		return;
	flow_settled(cnt, f, RULE_PSN_REORDER, n, false);
	cnt->reorder_sum += (__u64)n * (lo + hi) / 2;
#pragma unroll
	for (__u32 b = 0; b < ROCEVAL_REORDER_BUCKETS; b++) {
		__u32 from = b ? (1u << (b - 1)) + 1 : 1, to = 1u << b;

		from = from > lo ? from : lo;
		to = to < hi ? to : hi;
		if (from <= to)
			cnt->reorder[b] += to - from + 1;
	}
}

/*
 * Counts what a window settled, its lock let go: rn is the requests settled
 * reordered, by lo .. lo + n - 1 PSNs, as lo | n << 8.  Global: checked once,
 * not for each entry point that calls it (the histogram's buckets made it
 * 20k of the replay program's checked instructions as a static function);
 * four arguments live across its calls, so it needs no stack of its own on
 * the deepest call chain.
 */
__noinline int roceval_reorder_tally(__u32 slot, __u32 gaps, __u32 seqs, __u32 rn)
{
	struct roceval_flow *f = flow_at(slot);
	struct roceval_counters *cnt = counters_get();

	if (!cnt || !f)
		return 0;
	flow_settled(cnt, f, RULE_PSN_GAP, gaps, true);
	flow_settled(cnt, f, RULE_OPCODE_SEQUENCE, seqs, true);
	reorder_count(cnt, f, rn & 0xFF, rn >> 8);
	return 0;
}

#endif /* ROCEVAL_TALLY_BPF_H */
