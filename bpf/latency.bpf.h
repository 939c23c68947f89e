/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Latency histograms (the kinds and buckets are in roceval.h).  Times are
 * held in 32 bits of 16 ns, so a flow's slots stay small; a latency spans
 * at most 68 s, far past any transport timer worth measuring.
 */
#ifndef ROCEVAL_LATENCY_BPF_H
#define ROCEVAL_LATENCY_BPF_H

#include "frame.bpf.h"
#include "clock.bpf.h"

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

/*
 * Set once the NIC has stamped one of this interface's frames: from then on
 * its frames are timed by the NIC's clock alone.  The kernel's clock is
 * another time base, so a frame the NIC did not stamp is then not timed at
 * all rather than timed by a clock its partner frames were not.
 */
bool nic_clock;

/*
 * The frame's time for latencies and retransmission timers into s->now_t,
 * and s->timed saying whether it has one: the capture's time in a replay,
 * else the NIC's receive timestamp where roceval_xdp_nic got one, else the
 * kernel's clock.  Read only where a time is kept or compared.
 */
static __always_inline void frame_clock(struct roceval_scratch *s, struct roceval_counters *cnt)
{
	__u64 ns;

	s->timed = true;
	if (replay_clock) {
		ns = batch_hdr.time_ns;
		cnt->total[TOTAL_TIMED_CAPTURE]++;
	} else if (s->nic_stamp) {
		ns = s->nic_stamp;
		if (!nic_clock)
			nic_clock = true;
		cnt->total[TOTAL_TIMED_NIC]++;
	} else if (nic_clock) {
		s->timed = false;
		cnt->total[TOTAL_UNTIMED]++;
		return;
	} else {
		ns = bpf_ktime_get_ns();
		cnt->total[TOTAL_TIMED_KERNEL]++;
	}
	s->now_t = ns >> ROCEVAL_LAT_TIME_SHIFT;
}

/*
 * Whether the flow's last timed request still awaits its answer: its retx
 * slot still holds it (8 requests later another has taken the slot, so a
 * request never answered, on a one-way mirror, stops holding the flow's
 * timing after 8) and no answer has covered it.
 */
static __always_inline bool timed_in_flight(const struct roceval_flow *f)
{
	__u32 held = ROCEVAL_RETX_WAITING | ROCEVAL_RETX_TIMED;
	__u8 slot = f->timed_slot;

	return slot && (f->retx[(slot - 1) & (ROCEVAL_RETX_SLOTS - 1)].psn_bits & held) == held;
}

/*
 * Whether a new request of flow f is timed: always where its time costs
 * nothing (a replay's capture time, the NIC's stamp), else one in
 * latency_sample per CPU, or with latency_sample=flow when none of the
 * flow's timed requests awaits its answer (TCP samples its RTT so): the
 * kernel's clock is a helper call a request.  One not timed is held as
 * untimed (s->timed false): its answer gives no latency.
 */
static __always_inline bool latency_due(struct roceval_scratch *s, struct roceval_counters *cnt,
					const struct roceval_settings *cfg, const struct roceval_flow *f)
{
	bool due;

	if (replay_clock || s->nic_stamp || nic_clock || cfg->latency_sample <= 1)
		return true;
	if (cfg->latency_sample == ROCEVAL_LATENCY_PER_FLOW) {
		due = !timed_in_flight(f);
	} else {
		due = ++s->latency_tick >= cfg->latency_sample;
		if (due)
			s->latency_tick = 0;
	}
	if (!due) {
		s->timed = false;
		cnt->total[TOTAL_LATENCY_SKIPPED]++;
	}
	return due;
}

/* Whether `ticks` is a time difference backwards (see ROCEVAL_LAT_BUCKETS). */
static __always_inline bool latency_backwards(__u32 ticks)
{
	return ticks & 0x80000000u;
}

/*
 * Counts `ticks` (16 ns) of latency of `kind`; returns its bucket, for the
 * flow's own histogram, or ROCEVAL_LAT_BUCKETS when it is not counted.
 * Global: one lookup site however many judgements count a latency, and
 * checked once; 64 bits, so that a caller's test bounds the register its
 * access uses.
 */
__noinline long roceval_latency_record(__u32 kind, __u32 ticks)
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
