/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Everything both the BPF program and userspace compile: map value layouts,
 * settings, the trace event.  Fixed-width types only, no padding holes, so
 * the layout is the same on both sides.
 */
#ifndef ROCEVAL_H
#define ROCEVAL_H

#include "roceval_rules.h"
#include "roceval_proto.h"
#include "roceval_settings.h"
#include "roceval_cc.h"
#include "roceval_mirror.h"

/*
 * Per-CPU scratch that holds one IP datagram for the ICRC: 8 bytes of 0xFF
 * (the absent LRH), then the datagram.  A power of two so offsets can be
 * masked into range for the verifier, plus slack so a masked offset plus a
 * whole CRC block never runs past the end.
 */
#define ROCEVAL_SCRATCH_SIZE 16384
#define ROCEVAL_SCRATCH_MASK (ROCEVAL_SCRATCH_SIZE - 1)
#define ROCEVAL_SCRATCH_SLACK 512
#define ROCEVAL_MAX_DATAGRAM (ROCEVAL_SCRATCH_SIZE - ROCE_LRH_MASK_LEN)
/* Datagram bytes copied when the ICRC is not checked: IP options, UDP, BTH and the largest xTH chain. */
#define ROCEVAL_HDR_COPY 192
/* Where the IP header (RoCEv1: the GRH) may start: after two VLAN tags. */
#define ROCEVAL_L2_MAX 22
/*
 * Bytes of a frame copied first, for the L2-L4 parser (2 VLAN tags, IPv4 with
 * options or IPv6 + fragment header, UDP): enough to also hold the datagram
 * bytes a frame whose ICRC is not checked is judged on, so that it needs no
 * second copy (a helper call: about 30 ns a frame here).  Rounded up to 8.
 */
#define ROCEVAL_L2L4_MAX ((ROCEVAL_L2_MAX + ROCEVAL_HDR_COPY + 7) & ~7)

/*
 * Replay batches: records of the captured length and the wire length (4
 * bytes little-endian each) and the capture time (8 bytes, nanoseconds
 * since the epoch) followed by the captured bytes, many per
 * BPF_PROG_TEST_RUN call, because one call costs ~0.9 us.  A wire length
 * above the captured one marks a frame the capture cut (snapped);
 * ROCEVAL_WIRE_UNKNOWN says it was cut at an unknown length.  The time
 * lets a replay age connections as the capture did, not as the replay runs.
 */
#define ROCEVAL_REC_HDR 16
#define ROCEVAL_WIRE_UNKNOWN 0xFFFFFFFFu
#define ROCEVAL_BATCH_MAX_FRAMES 2048
#define ROCEVAL_BATCH_BYTES (60 * 1024)

/*
 * How far reordered packets came behind the newest PSN of their flow
 * (psn_reorder): bucket b counts distances of at most 2^b PSNs and more
 * than half that (bucket 0: 1), the last up to ROCEVAL_REORDER_MAX.
 */
#define ROCEVAL_REORDER_BUCKETS 8

struct roceval_counters {
	__u64 total[TOTAL__COUNT];
	__u64 rule[RULE__COUNT];
	__u64 reorder[ROCEVAL_REORDER_BUCKETS]; /* the psn_reorder packets by distance */
	__u64 reorder_sum;			 /* their distances, summed */
};

static inline unsigned int roceval_reorder_bucket(unsigned int d)
{
	unsigned int b = 0;

	for (int i = 0; i < ROCEVAL_REORDER_BUCKETS - 1 && (1u << b) < d; i++)
		b++;
	return b;
}

/*
 * Latencies, each a histogram per interface: the one definition the BPF
 * program, the JSON, Prometheus and the docs take their kinds from.
 * Times are the frames' own: a capture's timestamps in a replay, the
 * kernel's clock at the XDP hook live.  X(ENUM, id, description)
 */
#define ROCEVAL_LATENCIES(X)                                                                 \
	X(ACK, "ack", "request to the first ACK that covers it (a coalesced ACK covers every request up to its PSN)") \
	X(READ, "read", "RDMA READ request to its first response")                           \
	X(NAK_RETX, "nak_retx", "NAK to the first retransmission it asks for (PSN sequence error NAK)") \
	X(RNR_RETRY, "rnr_retry", "RNR NAK to the retry it asks for")                          \
	X(CE_CNP, "ce_cnp", "CE-marked request to the CNP its destination answers it with (cnp_delay)")

enum roceval_latency {
#define ROCEVAL_LAT_ENUM(e, id, desc) LAT_##e,
	ROCEVAL_LATENCIES(ROCEVAL_LAT_ENUM)
#undef ROCEVAL_LAT_ENUM
	LAT__COUNT
};

/*
 * log2 buckets: bucket b counts latencies of at most 2^(ROCEVAL_LAT_SHIFT + b)
 * ns and more than half that (bucket 0: up to 1.024 us).  Times are held in
 * 16 ns units in 32 bits, and a difference of 2^31 units or more is taken
 * for a frame timed before the one it answers (a capture merged from two
 * interfaces, two CPUs' clocks) and not counted: a latency spans at most
 * 34.4 s, the last bucket's bound.
 */
#define ROCEVAL_LAT_SHIFT 10
#define ROCEVAL_LAT_BUCKETS 26
#define ROCEVAL_LAT_TIME_SHIFT 4 /* times are held as ns >> 4 */

static inline unsigned int roceval_lat_bucket(unsigned long long ns)
{
	unsigned long long v = ns ? (ns - 1) >> ROCEVAL_LAT_SHIFT : 0;
	unsigned int b = 0;

	for (int i = 0; i < 64 && v; i++) {
		b++;
		v >>= 1;
	}
	return b < ROCEVAL_LAT_BUCKETS ? b : ROCEVAL_LAT_BUCKETS - 1;
}

/* One latency histogram; per CPU in the "latency" map, one entry per kind. */
struct roceval_latency_hist {
	__u64 bucket[ROCEVAL_LAT_BUCKETS];
	__u64 sum_ns;
};

/*
 * Settings that change at run time live in the single-entry "settings" array
 * map: what no user sets, which every frame reads, first, so that those
 * words stay in the first cache line however many rows the table grows,
 * then every row of roceval_settings.h.
 */
struct roceval_settings {
	/*
	 * Trace: a bit per running `roceval trace` (its slot in trace_filters),
	 * 0 when none runs, so sampling costs nothing otherwise.
	 */
	__u32 trace_on;
	/* ROCEVAL_CC_* (roceval_cc.h): what the congestion settings switch on, derived from them */
	__u32 cc_on;
	ROCEVAL_SETTINGS_FIELDS
};

#define ROCEVAL_ANY_QPN 0xFFFFFFFFu

/*
 * Traces that can run on one interface at once, as tcpdump allows: each has
 * a slot with its own filters (trace_filters) and its own ring buffer
 * (trace_rbs, created by the trace and put in the slot).
 */
#define ROCEVAL_MAX_TRACES 4
#define ROCEVAL_TRACE_RB_BYTES (512 * 1024)

struct roceval_trace_filter {
	__u32 owner;	   /* pid of the trace holding the slot, 0 when free */
	__u32 snaplen;	   /* bytes of the frame in a sample; 0: its headers, never payload */
	struct roceval_rule_set rules; /* bit per rule; empty = any violation */
	__u32 qpn;	   /* DestQP to sample, or ROCEVAL_ANY_QPN */
	__u32 addr_family; /* 0 any, 4 or 6 */
	__u8 addr[16];	   /* source or destination address to sample */
};

/*
 * The flow table: one entry per (source IP, destination IP, DestQP), in an
 * array of slots grouped in sets of ROCEVAL_FLOW_WAYS.  A flow may live in
 * either of two sets picked by a hash of its key, and goes in the one that
 * has taken fewer flows; when that set is full, its oldest flow goes and
 * flow_evicted counts it.  An array the verifier inlines, where a kernel
 * hash costs a helper call and a bucket; two choices of set, so that sets
 * fill evenly: sized for `flows=N` (--flows on replay) with half as many
 * slots again, N flows fit without a set overflowing.
 */
#define ROCEVAL_DEFAULT_FLOWS 65536
#define ROCEVAL_FLOW_WAYS 8

/* Sets for a table sized for `flows` flows: 1.5 slots a flow, at least one set. */
static inline unsigned int roceval_flow_sets(unsigned int flows)
{
	unsigned long long slots = (unsigned long long)flows * 3 / 2;

	return slots <= ROCEVAL_FLOW_WAYS ? 1 : (unsigned int)((slots + ROCEVAL_FLOW_WAYS - 1) / ROCEVAL_FLOW_WAYS);
}

/* 8-byte aligned: hashed and compared as five 64-bit words */
struct roceval_flow_key {
	__u8 saddr[16]; /* IPv4 addresses use the first 4 bytes, the rest zero; RoCEv1: the GIDs */
	__u8 daddr[16];
	__u32 dqpn;	/* DestQP; for mlx5 DC requests the sending DCI, whose PSN space it is */
	__u8 ipv6;	/* 16-byte addresses: IPv6, or RoCEv1 GIDs */
	__u8 pad;
	/*
	 * The mirror session the frame came in (its slot in mirror_stats + 1;
	 * ROCEVAL_MIRROR_BARE, ROCEVAL_MIRROR_UNLISTED): a packet mirrored by two
	 * switches on its path is two flows' packet, never its own duplicate.
	 */
	__u16 session;
} __attribute__((aligned(8)));

struct roceval_flow_set {
	__u16 tag[ROCEVAL_FLOW_WAYS]; /* per slot: bits of its flow's hash, never 0; 0 = empty */
	__u64 created;		      /* flows ever created here: the next goes in slot created % WAYS */
} __attribute__((aligned(32)));

/*
 * Where a key may live: the hash's top bits pick the first set, its low
 * half the second, its bottom 16 bits the tag.  `seed` keys the hash:
 * random for a live table, so that nobody on the wire can aim flows at one
 * set; fixed for replay, so that a capture replays the same way each time.
 */
struct roceval_flow_place {
	__u32 set[2];
	__u16 tag;
};

static inline struct roceval_flow_place roceval_flow_place(const struct roceval_flow_key *k, __u64 seed,
							   __u32 sets)
{
	const __u64 *w = (const __u64 *)k;
	struct roceval_flow_place p;
	__u64 h = seed;

	for (int i = 0; i < (int)(sizeof(*k) / 8); i++)
		h = (h ^ w[i]) * 0x9E3779B97F4A7C15ULL;
	h ^= h >> 29;
	p.set[0] = (__u32)(((h >> 32) * sets) >> 32);
	p.set[1] = (__u32)(((h & 0xFFFFFFFFULL) * sets) >> 32);
	p.tag = (__u16)(h | 1);
	return p;
}

#define ROCEVAL_WINDOW_WORDS 2 /* a window's bitmaps: the PSNs behind the newest, up to reorder_window */

/*
 * Sequence state of one PSN space.  A flow carries the requests of one side
 * and the responses to the other side's requests, so it has two.  Requests:
 * next_psn is the PSN expected next; responses: the one after the newest
 * response (their PSNs jump where ACKs are coalesced), and `recent` says
 * which of the 16 response PSNs before the newest were seen, so that one
 * seen again is told from one reordered.
 */
struct roceval_flow_space {
	__u32 next_psn;
	__u8 open_family; /* enum roce_family of the open multi-packet message, 0 if none */
	__u8 state;	  /* SPACE_* */
	__u16 recent;	  /* responses: bit i, PSN next_psn - 2 - i was seen */
};

#define SPACE_SEEN 0x01	     /* a packet of this space was seen: the first only sets expectations */
#define SPACE_PSN_VALID 0x02 /* requests: next_psn is known (not after a READ of unknown length) */
#define SPACE_IN_RETX 0x04   /* requests: a retransmission episode is open, no new request since */
#define SPACE_WINDOW 0x08    /* requests: the flow's reorder window holds holes or fills to settle */
#define SPACE_OLD_HOLES 0x10 /* responses: a PSN never seen is further behind than `recent` holds */
#define SPACE_RECENT_PSNS 16

/*
 * Responses' PSNs never seen further behind the newest than `recent`
 * holds, up to reorder_window (resp_holes, one slot a flow, the flow's cold
 * slot): bit i is PSN next_psn - 2 - SPACE_RECENT_PSNS - i.  Reached only
 * while one is there (SPACE_OLD_HOLES): responses in order, each PSN
 * answered, never do; coalesced ACKs, which skip PSNs, do.
 */
struct roceval_resp_holes {
	__u64 missing[ROCEVAL_WINDOW_WORDS];
};

/*
 * A request flow's reorder window (reorder_window), kept apart from the
 * flow in an array of its own (flow_window, one slot a flow, the flow's
 * cold slot) and reached only while its requests are out of order.  Bit i
 * of the bitmaps is PSN next_psn - 2 - i, i + 1 behind the newest.
 * `missing`: PSNs never seen (holes), with one bit past the window saying
 * whether the PSN just beyond it was a hole (so a run of holes leaving the
 * window in two steps counts once); `seq`, on the newest hole of a run a
 * request jumped over: whether that request's message order would be
 * broken were the run lost.  Requests that filled holes
 * are not judged at once: the request after them tells whether they were
 * reordered or the first of a go-back (the NAK unseen).
 *
 * Each hole ages from when it opened.  A request ahead opens holes newer
 * than every hole open, so the holes' ages follow their PSNs: the window
 * keeps two, that of its oldest holes (old_ns) and that of the holes at
 * bits 0 .. young_top, opened by later requests.  A request that jumps
 * while both are open joins the young ones at their age, which is older
 * than its own: a hole is never taken for younger than it is.
 */
#define ROCEVAL_WINDOW_ONE_AGE 0xFF /* young_top: every hole open opened at old_ns */
#define ROCEVAL_WINDOW_TIME_SHIFT 10 /* young_t, fill_t: ns >> 10 after old_ns */
struct roceval_flow_window {
	__u64 missing[ROCEVAL_WINDOW_WORDS];
	__u64 seq[ROCEVAL_WINDOW_WORDS];
	__u64 old_ns;	  /* when the oldest holes open opened (frame time) */
	__u32 young_t;	  /* when those at bits 0 .. young_top did, after old_ns */
	__u32 fill_t;	  /* when the last fill came, after old_ns */
	__u32 fill_from;  /* the fills awaiting their verdict: the first's PSN */
	__u32 fill_next;  /* and the PSN after the last */
#ifdef __bpf__
	struct bpf_spin_lock lock; /* the live sweep settles windows from another CPU */
#else
	__u32 lock;
#endif
	__u16 fills;	  /* how many: 0 for none */
	__u8 young_top;	  /* ROCEVAL_WINDOW_ONE_AGE: none younger */
	__u8 pad;
} __attribute__((aligned(64)));

_Static_assert(ROCEVAL_REORDER_MAX < 64 * ROCEVAL_WINDOW_WORDS, "the window's bitmaps hold the bit past it");
_Static_assert(sizeof(struct roceval_flow_window) == 64, "a window is one cache line");

/*
 * What a reliable connection's request looked like when first sent, to
 * compare a retransmission of its PSN with: the sender's ICRC and the
 * covered fields a sender may legitimately change when it resends.  A
 * flow holds the last ROCEVAL_RETX_SLOTS request PSNs, by PSN modulo.
 */
#define ROCEVAL_RETX_SLOTS 8
#define ROCEVAL_RETX_HELD 0x80000000u	/* psn_bits: the slot holds the request's ICRC */
#define ROCEVAL_RETX_ACKREQ 0x40000000u /* psn_bits: it was sent with AckReq */
#define ROCEVAL_RETX_WAITING 0x20000000u /* psn_bits: first sent at sent_t, no answer seen yet */
#define ROCEVAL_RETX_READ 0x10000000u	/* psn_bits: a READ request, answered by its responses */
#define ROCEVAL_RETX_TIMED 0x08000000u	/* psn_bits: sent_t holds when this PSN was last sent (it had a time) */
#define ROCEVAL_NAK_RNR 0x80	/* nak_rnr: an RNR NAK, its timer code in the low 5 bits */
#define ROCEVAL_NAK_UNTIMED 0x40 /* nak_rnr: the NAK had no time (see frame_clock) */
#define ROCEVAL_RETX_AFTER_NAK 0x40000000u /* retx_from: the episode followed a NAK */
#define ROCEVAL_RETX_LATE_SHIFT 24 /* retx_nak, no longer HELD: how far past the NAK's PSN its go-back started */

struct roceval_retx_slot {
	__u32 psn_bits; /* PSN | ROCEVAL_RETX_* */
	__u32 icrc;	/* the trailing 4 bytes read little-endian */
	__u16 ip_id;	/* IPv4 Identification, 0 otherwise */
	__u16 sport;	/* UDP source port, 0 for RoCEv1 */
	__u32 sent_t;	/* when it was last sent, ns >> ROCEVAL_LAT_TIME_SHIFT */
};

/*
 * Which of a requester's flows to a responder sent PSNs in a window of 4096:
 * how a response finds the requests it answers when no CM named the
 * connection (BTH names only the destination QP, never the source).
 */
#define ROCEVAL_HINT_SHIFT 12
struct roceval_hint_key {
	__u8 requester[16];
	__u8 responder[16];
	__u8 ipv6;
	__u8 pad;
	__u16 window; /* PSN >> ROCEVAL_HINT_SHIFT */
};

/*
 * A flow's state in two parts, so that a frame with nothing to count
 * touches as few cache lines as it can: at tens of thousands of flows the
 * table outgrows the CPU's caches, and each frame's cost follows the bytes
 * it reaches.  The hot part (the flow table's value) holds what every frame
 * reads or writes; the cold part, an array slot of the flow's own, holds
 * what only a violation or an answer timed touches.
 *
 * No lock: the counters are atomic adds, so they stay exact when two CPUs
 * see one QP (RSS not pinning it); the sequence state is then judged in
 * whatever order the CPUs get to it, which a lock would not fix either.
 */
struct roceval_flow {
	struct roceval_flow_key key;
	__u32 pmtu;		   /* learned from FIRST/MIDDLE payloads, 0 until then */
	struct roceval_flow_space req;
	struct roceval_flow_space resp;
	__u32 last_msn;
	__u8 msn_valid;
	__u8 transport;
	__u8 nak_rnr;	    /* the last NAK to these requests: ROCEVAL_NAK_* | an RNR NAK's timer code */
	__u8 misses;	    /* responses in miss_window whose requests were not found, in a row */
	__u32 retx_missing; /* first request PSN missing since a psn_gap | ROCEVAL_RETX_HELD */
	__u32 retx_nak;	    /* PSN of the last NAK to these requests | ROCEVAL_RETX_HELD, until resent; then, */
			    /* while a go-back that started past it awaits it, | how far << ROCEVAL_RETX_LATE_SHIFT */
	__u32 retx_from;    /* the last episode's first PSN | ROCEVAL_RETX_HELD | ROCEVAL_RETX_AFTER_NAK */
	__u32 nak_t;	    /* when that NAK was seen, ns >> ROCEVAL_LAT_TIME_SHIFT */
	__u16 hint_window;  /* the PSN window last put in the hints for these requests | 0x8000 */
	__u16 miss_window;  /* responses: the PSN window of the last whose requests were not found | 0x8000 */
	__u32 cold;	    /* its slot, in this array and in flow_cold */
	__u32 answered_slot; /* responses: the slot of the request flow they answered in answered_window */
	__u64 packets;
	__u64 bytes; /* frame bytes */
	struct roceval_retx_slot retx[ROCEVAL_RETX_SLOTS];
	/* the READ response stream: the PSN of its READ (its first response), the PSN after
	 * the last response in order | ROCEVAL_RETX_HELD, and its LAST's PSN once seen
	 * | ROCEVAL_RETX_HELD (the READ's end, in or out of order) */
	__u32 read_from;
	__u32 read_next;
	__u32 read_end;
	__u16 answered_window; /* responses: the PSN window of answered_slot | 0x8000, 0 if none */
	/*
	 * 1 + the retx slot of its last timed request, 0 if none: whether one
	 * awaits its answer (latency_sample=flow).  Written on every timed
	 * request, whatever the mode: testing the mode first measured no cheaper.
	 */
	__u8 timed_slot;
	/* a CE window waits in the congestion scope cc_waits holds under its slot (cnp.bpf.h) */
	__u8 cc_wait;
};

/* Four whole cache lines a flow, one a set (the maps start them on a page): see flow.bpf.h. */
_Static_assert(sizeof(struct roceval_flow) == 256, "a flow is four cache lines");
_Static_assert(sizeof(struct roceval_flow_set) == 32, "two sets to a cache line");

struct roceval_flow_cold {
	__u64 violations; /* frames that broke a warning- or error-severity rule */
	__u32 rule[RULE__COUNT];
	/*
	 * Latencies of the answers to these requests (ACK and READ kinds), in the
	 * latency map's buckets; every bucket is halved when one would pass 65535,
	 * so p50 and p99 follow recent traffic in 2 bytes a bucket.  Not atomic:
	 * two CPUs answering one flow at once may lose a sample here, never in the
	 * latency map.
	 */
	__u16 latency[ROCEVAL_LAT_BUCKETS];
};

#define ROCEVAL_DEFAULT_SNAPLEN 0 /* headers only */
#define ROCEVAL_MAX_SNAPLEN 9216

/* One sampled frame on the trace ring buffer, followed by cap_len frame bytes. */
struct roceval_trace_event {
	__u64 ts_ns; /* bpf_ktime_get_ns() */
	struct roceval_rule_set rules; /* every rule the frame broke */
	__u32 ifindex;
	__u32 frame_len; /* length on the wire (a replayed capture's record: as it records it) */
	__u32 cap_len;	 /* bytes that follow */
	__u32 icrc_expected; /* computed over the masked fields, as zlib's crc32() returns it */
	__u32 icrc_found;    /* the 4 trailing bytes read little-endian */
	__u32 flags;	     /* ROCEVAL_EV_* */
	/* a retransmitted request's episode: its first PSN | ROCEVAL_RETX_HELD | ROCEVAL_RETX_AFTER_NAK, else 0 */
	__u32 retx_from;
	__u32 pad;
};

#define ROCEVAL_EV_ICRC_CHECKED 0x1

#endif /* ROCEVAL_H */
