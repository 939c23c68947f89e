/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The state behind what DCQCN lives on (docs/congestion.md): the
 * pacing scopes CNPs are judged in (cnp.bpf.h), the sending rate around
 * each CNP (reaction.bpf.h), and the report of both and of PFC (pfc.bpf.h).
 *
 * A CE-marked request goes from the reaction point A (QP a) to B's QP b; B,
 * the notification point, answers with a CNP from B to QP a.  A scope is
 * the NP, the RP and the RP's QP, or the IP pair (ROCEVAL_CC_ANY_QP): CNPs
 * name a, so a CE-marked request is kept where its CNP will be looked for,
 * under a when roceval knows the pairing of b and a (RDMA CM, or an earlier
 * CNP of the flow whose ACKs answered A's requests to b), else under the
 * IP pair, which every CNP from B to A answers.  A CNP answers what is
 * pending under its QP and under its IP pair.
 *
 * CE on a READ response is the same with the roles turned: the requester
 * is the NP, the responder the RP, its QP the one the CNP names.  UD and
 * mlx5 DC requests name their sender's QP themselves (DETH SrcQP, the DCI).
 *
 * Judged by the frames' own times (frame_time_ns): a window left
 * unanswered is counted by the first frame of a flow of its scope past
 * cnp_delay, or by the timer that sweeps the reorder windows (live) or the
 * end of a replay when none comes.  The state is in maps of its own: a
 * scope forgotten costs a missed judgement, never a false one.  No lock:
 * a CE mark and its CNP may be judged on two CPUs at once, and a lock would
 * not order them either.
 */
#ifndef ROCEVAL_CONGESTION_BPF_H
#define ROCEVAL_CONGESTION_BPF_H

#include "cm.bpf.h"
#include "clock.bpf.h"
#include "flow_table.bpf.h"
#include "frame.bpf.h"
#include "latency.bpf.h"

/* Sized by the loader: scopes and pairs with the flow table, rates a slot of it each. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, struct roceval_cc_key);
	__type(value, struct roceval_cc_scope);
} cc_scopes SEC(".maps");

/* A request flow (A, B, b) -> the QP a its sender is, learned from a CNP paired through ACKs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, struct roceval_flow_key);
	__type(value, __u32);
} cc_pairs SEC(".maps");

/* Off the frame's common path: rare_lookup (frame.bpf.h). */
static __noinline __u32 *cc_pair_of(const struct roceval_flow_key *k)
{
	return rare_lookup(&cc_pairs, k);
}

/*
 * A flow's rate record, under its slot in the flow table: allocated as
 * flows are followed, so that it takes no memory until cnp_reaction is on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_cc_rate);
} cc_rate SEC(".maps");

/*
 * The scope a flow flagged cc_wait is of, under the flow's slot: the flow
 * of a CE mark and, when the RP's QP is known, the one from the NP to it.
 * Allocated only as windows wait; sized by the loader with the flow table.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_cc_key);
} cc_waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roceval_congestion);
} congestion SEC(".maps");

/* Off the frame's common path: rare_lookup (frame.bpf.h). */
static __noinline struct roceval_congestion *congestion_get(void)
{
	return rare_lookup(&congestion, &map_zero);
}

/* Keys built in map memory: the deepest call chain leaves this function little stack. */
struct cc_scratch {
	struct roceval_cc_key key;
	struct roceval_cc_scope fresh;
	struct roceval_cc_rate rate;
	struct roceval_flow_key req;
	struct roceval_cm_end_key end;
	__u64 now;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cc_scratch);
} cc_scratch SEC(".maps");

/*
 * The frame's time, as the latencies take it, in ns: the capture's, the
 * NIC's stamp, or the kernel's clock; 0 when the NIC stamps others but not
 * this one (another time base).
 */
static __always_inline __u64 cc_time(const struct roceval_scratch *s)
{
	if (replay_clock)
		return batch_hdr.time_ns;
	if (s->nic_stamp) {
		if (!nic_clock)
			nic_clock = true;
		return s->nic_stamp;
	}
	return nic_clock ? 0 : bpf_ktime_get_ns();
}

/* Now, between frames (a timer, a replay's end): 0 while the NIC stamps frames, another time base. */
static __always_inline __u64 cc_clock(void)
{
	if (replay_clock)
		return batch_hdr.time_ns;
	return nic_clock ? 0 : bpf_ktime_get_ns();
}

/* The flow in the slot of this CPU's last lookup, if it is the frame's (flow_update() left it there). */
static __always_inline struct roceval_flow *cc_flow_is(struct roceval_scratch *s, struct roceval_flow *f)
{
	return f && flow_key_equal(&f->key, &s->fi.key) ? f : 0;
}

/* The frame's flow, where flow_update() left this CPU's last lookup; none for a flow it made. */
static __always_inline struct roceval_flow *cc_flow(struct roceval_scratch *s)
{
	__u32 slot = s->last_flow;

	return cc_flow_is(s, flow_at(slot));
}

/*
 * A rule broken after flow_update() has counted the frame on its flow: it
 * goes on the flow's books here (flow_account's, for the rules before).
 * This and cc_scope are one copy each: their lookups are sites the kernel
 * patches at load once, not once for every rule and scope judged.
 */
static __noinline void cc_violate(struct roceval_scratch *s, struct roceval_counters *cnt,
				  struct roceval_flow *f, enum roceval_rule r)
{
	bool counted = rule_set_meets(&s->rules, ~ROCEVAL_INFO_MASK0, ~ROCEVAL_INFO_MASK1);
	struct roceval_flow_cold *cold;

	if (rule_set_has(&s->rules, r))
		return;
	violate(s, cnt, r);
	cold = f ? flow_cold_at(f->cold) : 0;
	if (!cold)
		return;
	if (!counted)
		__sync_fetch_and_add(&cold->violations, 1);
	__sync_fetch_and_add(&cold->rule[r], 1);
}

/* x->key: the scope from NP np to RP rp, for QP qpn or the IP pair (one copy: cm.bpf.h's cm_key_set). */
static __noinline void cc_key_set(struct cc_scratch *x, const __u8 *np, const __u8 *rp, __u32 qpn, __u8 ipv6)
{
	__builtin_memcpy(x->key.np, np, 16);
	__builtin_memcpy(x->key.rp, rp, 16);
	x->key.qpn = qpn;
	x->key.ipv6 = ipv6;
	x->key.pad[0] = x->key.pad[1] = x->key.pad[2] = 0;
}

/* Off the frame's common path: rare_lookup (frame.bpf.h). */
static __noinline struct roceval_cc_scope *cc_scope_find(const struct roceval_cc_key *k)
{
	return rare_lookup(&cc_scopes, k);
}

/* The scope in x->key, made with what x->fresh holds when it is new (then NULL: nothing to judge). */
static __noinline struct roceval_cc_scope *cc_scope(struct cc_scratch *x)
{
	struct roceval_cc_scope *e = cc_scope_find(&x->key);

	if (!e)
		bpf_map_update_elem(&cc_scopes, &x->key, &x->fresh, BPF_NOEXIST);
	return e;
}

/* later - earlier, or ~0 when later is not later: a time the frames' order contradicts is not judged. */
static __always_inline __u64 cc_since(__u64 later, __u64 earlier)
{
	return later >= earlier ? later - earlier : ~0ULL;
}

#endif /* ROCEVAL_CONGESTION_BPF_H */
