/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every part of the validator shares about the frame being judged:
 * how to read it in either context, what was learned of it (frame_info),
 * the per-CPU scratch it is judged in, the counters and settings maps, and
 * violate(), which records a broken rule in exactly the scratch and
 * counters it is given.
 */
#ifndef ROCEVAL_FRAME_BPF_H
#define ROCEVAL_FRAME_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "roceval.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPV6_NEXTHDR_FRAGMENT 44

/*
 * Bytes past ROCEVAL_L2L4_MAX the load helper brings of a frame that
 * follows a mirrored one (roceval_scratch.spare): the outer headers of the
 * usual mirrors (ERSPAN II and III, VXLAN, over IPv4 or IPv6,
 * two VLAN tags) fit, so their inner frame needs no second helper call.
 */
#define ROCEVAL_MIRROR_SPARE 96

/* A flows slot no table has: a lookup there finds nothing. */
#define ROCEVAL_NO_SLOT 0xFFFFFFFFu

/*
 * One frame body for both contexts: frame_body() is inlined into one global
 * function per context with `tc` a constant, so each keeps only the helper
 * its program type may call, and the validation cannot differ between them.
 */
static __always_inline long frame_load(void *ctx, bool tc, __u32 off, void *to, __u32 len)
{
	return tc ? bpf_skb_load_bytes(ctx, off, to, len) : bpf_xdp_load_bytes(ctx, off, to, len);
}

/* The linear head's first and end byte, the first moved to the frame at `base`; false past a batch. */
static __always_inline bool frame_head_bounds(void *ctx, bool tc, __u64 base, __u8 **data, __u8 **end)
{
	if (tc) {
		*data = (__u8 *)(long)((struct __sk_buff *)ctx)->data;
		*end = (__u8 *)(long)((struct __sk_buff *)ctx)->data_end;
	} else {
		*data = (__u8 *)(long)((struct xdp_md *)ctx)->data;
		*end = (__u8 *)(long)((struct xdp_md *)ctx)->data_end;
	}
	/* one register: otherwise clang bounds one copy of base and adds another, and the verifier refuses */
	barrier_var(base);
	if (base > ROCEVAL_BATCH_BYTES)
		return false;
	*data += base;
	return true;
}

enum { HEAD_NOT_HELD, HEAD_COPIED, HEAD_SHORT };

/*
 * The first `n` bytes of the frame at `base` (a replay batch's record; a
 * live frame is at 0) from the linear head, where the program may read them
 * in place, when n is the whole copy: one bound for every word.  Inline
 * loads cost less than a call to the load helper (docs/performance.md).
 * HEAD_SHORT: a shorter frame the head may hold, for frame_head_short();
 * HEAD_NOT_HELD: the head holds fewer (a tc frame split across pages, a
 * batch's records past its first page), for the helper.  Only the copy is
 * read in place: the verifier forgets what a packet pointer was proven to
 * reach as soon as a variable offset (a VLAN tag, the IHL, an xTH) is added
 * to it.
 */
static __always_inline int frame_head_copy(void *ctx, bool tc, __u32 base, __u8 *to, __u32 n)
{
	__u8 *data, *end;

	if (!frame_head_bounds(ctx, tc, base, &data, &end))
		return HEAD_NOT_HELD;
	if (n == ROCEVAL_L2L4_MAX && data + ROCEVAL_L2L4_MAX <= end) {
#pragma unroll
		for (int i = 0; i < ROCEVAL_L2L4_MAX / 8; i++)
			((__u64 *)to)[i] = *(__u64 *)(data + 8 * i);
		return HEAD_COPIED;
	}
	return n < ROCEVAL_L2L4_MAX && data + ETH_HLEN <= end ? HEAD_SHORT : HEAD_NOT_HELD;
}

/*
 * frame_head_copy() of a frame shorter than the copy: word by word, each
 * read proven against the head's end as the verifier requires, the bytes
 * after the last whole word as one word ending at the n-th (n is at least
 * ETH_HLEN); false when the head holds fewer.  64-bit counters, as the
 * pointers they are compared with: no extension of n for every word.
 */
static __always_inline bool frame_head_short(void *ctx, bool tc, __u64 base, __u8 *to, __u64 n)
{
	__u8 *data, *end;
	__u64 i, done, tail;

	if (!frame_head_bounds(ctx, tc, base, &data, &end))
		return false;
#pragma unroll
	for (i = 0; i < ROCEVAL_L2L4_MAX / 8; i++) {
		if (8 * (i + 1) > n || data + 8 * (i + 1) > end)
			break;
		((__u64 *)to)[i] = *(__u64 *)(data + 8 * i);
	}
	done = 8 * i;
	if (done == n)
		return true;
	/* Stopped short of n by the head's end, not by n: the head holds fewer. */
	if (done + 8 <= n)
		return false;
	/* The last bytes as one word ending at the n-th, overlapping the words before it. */
	tail = n - 8;
	barrier_var(tail);
	if (tail > ROCEVAL_L2L4_MAX - 8 || data + tail + 8 > end)
		return false;
	*(__u64 *)(to + tail) = *(__u64 *)(data + tail);
	return true;
}

static __always_inline __u32 frame_ifindex(void *ctx, bool tc)
{
	return tc ? ((struct __sk_buff *)ctx)->ifindex : ((struct xdp_md *)ctx)->ingress_ifindex;
}

/* What the flow table and the trace need of a validated frame, filled as it is parsed. */
struct frame_info {
	/* the flow table's key as the frame fills it in, so the lookup reads it without a copy */
	union {
		struct roceval_flow_key key;
		struct {
			__u8 saddr[16]; /* IPv4 addresses use the first 4 bytes */
			__u8 daddr[16];
			__u32 flow_qpn; /* the flow's QP: DestQP, or for mlx5 DC requests the sending DCI */
			__u8 ipv6;	/* 16-byte addresses: IPv6, or the GIDs of a RoCEv1 GRH */
		};
	};
	__u32 dqpn;
	__u32 psn;
	__u32 payload; /* bytes between the headers and the pad */
	__u32 dmalen;  /* RETH DMALen, when the opcode has a RETH */
	__u32 aeth;    /* AETH syndrome << 24 | MSN, when the opcode has an AETH */
	__u8 opcode;
	__u16 hdr_end;	 /* frame offset where the parsed headers end: a headers-only trace stops here */
	__u8 has_bth;	 /* the fields above are from a parsed BTH */
	__u8 headers_ok; /* opcode defined for its transport and all its headers present */
	__u8 has_reth;
	__u8 has_aeth;
	__u8 icrc_checked;
	__u8 dc;	 /* an RD-range opcode parsed as mlx5 DC */
	__u8 ackreq;
	__u8 icrc_known; /* icrc_found holds the frame's ICRC (checked or not) */
	__u32 icrc_expected;
	__u32 icrc_found;
	/* what a retransmission may change in the ICRC's coverage (retx.bpf.h) */
	__u16 ip_id;
	__u16 sport;
	__u32 tlen;	 /* transport length, BTH to ICRC */
	__u32 retx_from; /* a retransmitted request's episode, as roceval_flow.retx_from; else 0 */
	__u32 pmtu_conf; /* the PMTU its connection negotiated (RDMA CM), else the setting's; 0 if neither */
	__u8 conn_fresh; /* CONN_FRESH_*: the first of its kind on a newly learned CM connection */
	__u32 src_qpn;	 /* the sender's QP where the headers name it: UD's DETH SrcQP, the DC header's */
};

/* A CM connection's first request, or first response, to this end: its flow's space starts afresh. */
#define CONN_FRESH_REQ 0x01
#define CONN_FRESH_RESP 0x02

_Static_assert(__builtin_offsetof(struct frame_info, flow_qpn) == __builtin_offsetof(struct roceval_flow_key, dqpn) &&
		       __builtin_offsetof(struct frame_info, ipv6) == __builtin_offsetof(struct roceval_flow_key, ipv6),
	       "frame_info's addresses, QP and family are its flow key's");

/* What the L2-L4 parse learned about a RoCE frame. */
struct l4info {
	__u32 l3;	/* offset of the IP header (RoCEv1: the GRH) from the frame start */
	__u32 l4;	/* offset of the UDP header (RoCEv1: the BTH) */
	__u32 iphl;	/* IP header length (IPv4 with options, or 40; the GRH is 40) */
	__u32 iplen;	/* datagram length the IP header (or the GRH's PayLen) claims */
	__u32 udplen;
	__u8 ipv6;	/* 16-byte addresses: IPv6 or a GRH */
	__u8 ecn;
	__u8 fragment;
	__u8 v1;	/* RoCEv1: no UDP, the BTH follows the GRH */
};

struct roceval_scratch {
	struct frame_info fi;
	/* in map memory, not on the stack: the frame's stack and the deepest call must fit in 512 bytes */
	struct l4info li;
	union {
		/*
		 * The first copy.  A frame read with the load helper brings
		 * ROCEVAL_MIRROR_SPARE bytes more, over the start of buf, so
		 * that a mirrored frame's inner frame, within that many bytes of
		 * its start, is in it whole; buf is not used before the inner
		 * frame's copy has taken them (mirror_inner_kept()).
		 */
		__u8 l2l4[ROCEVAL_L2L4_MAX + ROCEVAL_MIRROR_SPARE];
		struct {
			__u8 l2l4_first[ROCEVAL_L2L4_MAX];
			/* 8 x 0xFF, then the IP datagram: the ICRC's input, byte for byte */
			__u8 buf[ROCEVAL_SCRATCH_SIZE + ROCEVAL_SCRATCH_SLACK] __attribute__((aligned(8)));
		};
	};
	struct roceval_rule_set rules; /* rules the current frame broke */
	__u32 icrc_tick; /* icrc_sample countdown, per CPU */
	__u32 wire;	 /* the frame's length on the wire, once known */
	__u32 icrc_at;	 /* datagram offset of the ICRC when buf holds the whole datagram, else 0 */
	__u32 hdrs;	 /* the transport's own header bytes (judge_op) */
	__u32 now_t;	 /* a reliable request's or response's time, ns >> ROCEVAL_LAT_TIME_SHIFT */
	bool timed;	 /* now_t holds the frame's time (frame_clock) */
	bool clocked;	 /* a response's time was read (answer_clock) */
	__u32 latency_tick; /* latency_sample countdown, per CPU */
	__u64 nic_stamp; /* the NIC's receive timestamp of the frame (roceval_xdp_nic), 0 if none */
	__u32 last_flow; /* the flows slot this CPU's last lookup found (flow_lookup), or ROCEVAL_NO_SLOT */
	/* a duplicate request after fills of the reorder window: the go-back it shows (roceval_reorder_behind) */
	__u32 goback;	    /* its first PSN | ROCEVAL_RETX_HELD, 0 if none */
	__u32 goback_fills; /* with goback: the requests before this one in it, first seen as fills */
	/* mirrors (mirror.bpf.h), after everything a bare frame touches */
	struct roceval_mirror_key mkey;	 /* the session of the frame being taken apart */
	struct roceval_mirror_key mlast; /* this CPU's last session, whose slot is mlast_slot */
	__u32 mlast_slot;
	__u32 inner_at;	     /* the inner frame: its offset in the outer one, */
	__u32 inner_len;     /* the bytes captured of it, */
	__u32 inner_wire;    /* its length on the wire (ROCEVAL_WIRE_UNKNOWN: the switch cut it) */
	__u32 inner_session; /* and its session: slot + 1, or ROCEVAL_MIRROR_UNLISTED */
	__u32 inner_kept;    /* its first copy is at l2l4's start, moved there (mirror_inner_kept) */
	__u32 held;	     /* the frame's bytes l2l4 holds when read with the helper, else 0 (frame_head) */
	/*
	 * The last frame was a mirrored one: the next one the helper reads
	 * brings ROCEVAL_MIRROR_SPARE bytes more.  A mirror port's frames are
	 * all mirrored and a host's none, so the frame before tells which
	 * this one is; a guess gone wrong costs a mirrored frame a second
	 * read of its inner frame, never a verdict.
	 */
	__u32 spare;
};

/*
 * Per-CPU counters need no atomics: XDP runs with migration disabled, so a
 * CPU's slot is only ever written by the program instance running on it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roceval_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roceval_settings);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct roceval_scratch);
} scratch SEC(".maps");

/*
 * The frame's maps for what is off its common path: one lookup site each,
 * however many functions reach them.  The kernel patches every lookup site
 * in at load by copying the whole program (docs/performance.md); the common
 * path looks them up itself, where a call would cost.
 */
/* The key of the one-entry maps, read-only map memory: the getters take no stack. */
static const __u32 map_zero;

/*
 * The lookups of what few frames need (a connection's MADs and tables,
 * congestion's, the reorder window's, a mirror session learned, a trace's
 * samples), all made here: the kernel inlines a lookup site that sees one
 * map, patched in at load by a copy of the whole program and its
 * per-instruction data (docs/performance.md), and leaves this one, which
 * sees many, a call of the map's own lookup.  The common path looks its
 * maps up itself, where a call would cost.
 */
static __noinline void *rare_lookup(void *map, const void *key)
{
	return bpf_map_lookup_elem(map, key);
}

static __noinline struct roceval_counters *counters_get(void)
{
	return bpf_map_lookup_elem(&counters, &map_zero);
}

static __noinline struct roceval_settings *settings_get(void)
{
	return bpf_map_lookup_elem(&settings, &map_zero);
}

static __noinline struct roceval_scratch *scratch_get(void)
{
	return bpf_map_lookup_elem(&scratch, &map_zero);
}

/*
 * Big-endian fields, each read as one load and a byte swap.  clang splits
 * a load it cannot prove aligned into single bytes, and a header field at
 * an offset that depends on the frame (a VLAN tag, the IHL) never is; the
 * verifier lets a program load map memory or a packet at any offset where
 * the CPU reads unaligned words cheaply (x86-64, arm64: see the README).
 */
static __always_inline __u16 rd16(const __u8 *p)
{
	return bpf_ntohs(*(const __u16 *)p);
}

static __always_inline __u32 rd24(const __u8 *p)
{
	return (__u32)rd16(p) << 8 | p[2];
}

static __always_inline __u32 rd32(const __u8 *p)
{
	return bpf_ntohl(*(const __u32 *)p);
}

/* PSN b is ahead of PSN a: (b - a) mod 2^24 in 1 .. 2^23 - 1 (IBA 9.7.1). */
static __always_inline bool psn_ahead(__u32 b, __u32 a)
{
	__u32 d = (b - a) & ROCE_PSN_MASK;

	return d != 0 && d < ROCE_PSN_WINDOW;
}

/*
 * The rules a frame broke are collected in the scratch map, not in a local:
 * a local bit mask is a known constant on every path, so each combination
 * of violations would be a distinct verifier state and nothing would prune.
 * A rule counts frames: one frame breaking it in two ways (PadCnt beyond
 * the payload and a length not a multiple of 4) counts once.
 */
static __always_inline void violate(struct roceval_scratch *s, struct roceval_counters *cnt,
				    enum roceval_rule r)
{
	if (!rule_set_has(&s->rules, r)) {
		rule_set_add(&s->rules, r);
		cnt->rule[r]++;
	}
}

#endif /* ROCEVAL_FRAME_BPF_H */
