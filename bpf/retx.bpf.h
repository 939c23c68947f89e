/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Retransmissions on reliable connections (IBA 9.7.1, 9.9.2): episodes,
 * whether a resent request is the request first sent, and NAKs: whether a
 * PSN sequence error NAK names the first PSN missing, and whether the
 * requester goes back to where a NAK said.
 *
 * A requester that resends a PSN must resend the same request.  Comparing
 * the two transmissions' bytes would mean keeping them; comparing their
 * ICRCs costs four bytes a PSN, and the ICRC covers everything invariant.
 * Three covered fields may legitimately differ between the transmissions:
 * AckReq, the IPv4 Identification and the UDP source port.  CRC-32 is
 * linear, so what a change of those fields does to the ICRC can be worked
 * out from the fields alone (icrc_delta), without the rest of the frame:
 * two transmissions are the same request exactly when their ICRCs differ by
 * that much.  A wrong ICRC on either transmission reads as a changed
 * request too; the ICRC rule says which, when that frame was checked.
 */
#ifndef ROCEVAL_RETX_BPF_H
#define ROCEVAL_RETX_BPF_H

#include "frame.bpf.h"
#include "cm.bpf.h"

#define CRC32_POLY_REFLECTED 0xEDB88320u
#define RETX_SHIFT_BITS 14 /* the datagram bytes a shift can span: ROCEVAL_MAX_DATAGRAM < 2^14 */

/* x^(8 * 2^k) modulo the CRC-32 polynomial, bit-reflected as zlib keeps a CRC. */
static const __u32 crc_x8_pow2[RETX_SHIFT_BITS] = {
	0x00800000, 0x00008000, 0xedb88320, 0xb1e6b092, 0xa06a2517, 0xed627dae, 0x88d14467,
	0xd7bbfe6a, 0xec447f11, 0x8e7ea170, 0x6427800e, 0x4d47bae0, 0x09fe548f, 0x83852d0f,
};

/*
 * Multiplications by 0 or 1, not masks by 0 or -1: the verifier follows a
 * mask of a 0/-1 value as two states, which doubles per bit.  Global, so
 * it is verified once, not once per use.
 */
__noinline __u32 roceval_crc_mulmod(__u32 a, __u32 b)
{
	__u32 p = 0;

	for (int i = 31; i >= 0; i--) {
		p ^= b * ((a >> i) & 1);
		b = (b >> 1) ^ CRC32_POLY_REFLECTED * (b & 1);
	}
	return p;
}

/* The CRC register `c` after `n` more zero bytes. */
static __always_inline __u32 crc_zero_bytes(__u32 c, __u32 n)
{
	for (int k = 0; k < RETX_SHIFT_BITS; k++)
		if ((n >> k) & 1)
			c = roceval_crc_mulmod(crc_x8_pow2[k], c);
	return c;
}

static __always_inline __u32 crc_byte(__u32 c, __u32 byte)
{
	c ^= byte & 0xFF;
	for (int i = 0; i < 8; i++)
		c = (c >> 1) ^ CRC32_POLY_REFLECTED * (c & 1);
	return c;
}

/*
 * How far two ICRCs of a datagram differ when only its IPv4 Identification
 * (by `d_id`), UDP source port (by `d_sport`) and BTH byte 8 (by `d_ack`)
 * differ: the CRC, from zero, of a datagram that is zero except there.
 * Global, so the verifier walks its loops once, not once per caller; it runs
 * only for a retransmission whose resendable fields changed.
 */
__noinline __u32 roceval_icrc_delta(__u32 d_id, __u32 d_sport, __u32 d_ack, __u32 iphl, __u32 tlen)
{
	__u32 c;

	if (iphl < 6 || tlen < 13)
		return 0;
	c = crc_byte(crc_byte(0, d_id >> 8), d_id);
	c = crc_zero_bytes(c, iphl - 6); /* from past the Identification to the UDP header */
	c = crc_byte(crc_byte(c, d_sport >> 8), d_sport);
	c = crc_zero_bytes(c, 6 + 8); /* the rest of UDP and BTH bytes 0-7 */
	c = crc_byte(c, d_ack);
	return crc_zero_bytes(c, tlen - 9 - ROCE_ICRC_LEN);
}

static __always_inline bool retx_same_request(const struct roceval_retx_slot *held, const struct frame_info *fi,
					      __u32 iphl)
{
	__u32 d_ack = ((held->psn_bits & ROCEVAL_RETX_ACKREQ) ? 1 : 0) ^ fi->ackreq;
	__u32 d_id = held->ip_id ^ fi->ip_id;
	__u32 d_sport = held->sport ^ fi->sport;

	/* another length moves the ICRC by more than the delta: no length check of its own */
	if (!(d_ack | d_id | d_sport))
		return held->icrc == fi->icrc_found;
	return (held->icrc ^ fi->icrc_found) == roceval_icrc_delta(d_id, d_sport, d_ack << 7, iphl, fi->tlen);
}

/*
 * Where a NAK's requests are.  A NAK goes from the responder B to the
 * requester's QP a on host A; the requests it answers went from A to B's
 * QP b, which the NAK does not name.  With CM, b is the peer of the end
 * (A, a).  Without, it is inferred: the requester QP from A to B that last
 * had a PSN gap, which a NAK is the answer to (retx_gaps).
 */
struct retx_scratch {
	struct roceval_cm_end_key end;
	struct roceval_retx_pair pair;
	struct roceval_flow_key req; /* the NAK's request flow */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retx_scratch);
} retx_scratch SEC(".maps");

/*
 * Written only when a flow's gap opens, read only for a NAK.  An LRU: a
 * lost entry costs a NAK judged no more, never a false alarm.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct roceval_retx_pair);
	__type(value, __u32);
} retx_gaps SEC(".maps");

static __always_inline void retx_pair_set(struct roceval_retx_pair *k, const __u8 *requester, const __u8 *responder,
					  __u8 ipv6)
{
	__builtin_memcpy(k->requester, requester, 16);
	__builtin_memcpy(k->responder, responder, 16);
	k->ipv6 = ipv6;
	k->pad[0] = k->pad[1] = k->pad[2] = 0;
}

/*
 * How many PSNs past the first missing one a requester can have sent by the
 * time the NAK for it is seen: its window in flight, which at 100 Gb/s and
 * tens of microseconds is some hundreds of packets.  A gap older than this
 * was most likely the capture's loss, not the wire's (the requester never
 * resends what the responder got), and is neither kept nor judged against.
 */
#define RETX_NAK_REACH 1024

static __always_inline bool retx_gap_open(const struct roceval_flow *f)
{
	return (f->retx_missing & ROCEVAL_RETX_HELD) &&
	       ((f->req.next_psn - f->retx_missing) & ROCE_PSN_MASK) <= RETX_NAK_REACH;
}

/* A request PSN ahead of the expected one: the first one missing is remembered until resent. */
static __noinline void retx_gap(const struct frame_info *fi, struct roceval_flow *f, __u32 expected)
{
	__u32 zero = 0;
	struct retx_scratch *x = bpf_map_lookup_elem(&retx_scratch, &zero);

	if (retx_gap_open(f))
		return;
	f->retx_missing = expected | ROCEVAL_RETX_HELD;
	if (!x)
		return;
	retx_pair_set(&x->pair, fi->saddr, fi->daddr, fi->ipv6);
	bpf_map_update_elem(&retx_gaps, &x->pair, &fi->flow_qpn, BPF_ANY);
}

/*
 * The key of the request flow a NAK answers, in x->req; 1 when CM named
 * it, 0 when inferred, -1 when unknown.
 */
static __always_inline int retx_nak_requests(const struct frame_info *fi, struct retx_scratch *x)
{
	const struct roceval_cm_end *e = 0;
	const __u32 *qpn = 0;
	int by_cm = 0;

	if (cm_active) {
		cm_end_key_set(&x->end, fi->daddr, fi->dqpn, fi->ipv6);
		e = bpf_map_lookup_elem(&cm_ends, &x->end);
		by_cm = e && e->state < CM_STATE_CLOSED && addr_eq(e->peer, fi->saddr);
	}
	if (!by_cm) {
		retx_pair_set(&x->pair, fi->daddr, fi->saddr, fi->ipv6);
		qpn = bpf_map_lookup_elem(&retx_gaps, &x->pair);
		if (!qpn)
			return -1;
	}
	__builtin_memcpy(x->req.saddr, fi->daddr, 16);
	__builtin_memcpy(x->req.daddr, fi->saddr, 16);
	x->req.dqpn = by_cm && e ? e->peer_qpn : (qpn ? *qpn : 0);
	x->req.ipv6 = fi->ipv6;
	return by_cm;
}

/* A NAK of either kind that makes a requester go back: judge_op counted it. */
#define RETX_NAK_RULES ((1ULL << RULE_NAK_PSN) | (1ULL << RULE_NAK_RNR))

static __always_inline bool psn_within(__u32 p, __u32 from, __u32 to)
{
	return ((p - from) & ROCE_PSN_MASK) <= ((to - from) & ROCE_PSN_MASK);
}

/*
 * A NAK to requests whose flow is `r`.  A PSN sequence error NAK must name
 * the first request PSN missing, as far as this observer saw.  Its PSN is
 * where the requester must go back to (an RNR NAK's too).  An inferred
 * pairing is trusted only when the NAK names a PSN of the gap open on it:
 * PSNs start at random, so another QP's NAK falls there about once in 2^24
 * divided by the gap's width.
 */
static __always_inline void retx_nak(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *r,
				     bool by_cm)
{
	const struct frame_info *fi = &s->fi;
	bool seq_err = s->rules & (1ULL << RULE_NAK_PSN);
	bool gap = retx_gap_open(r);
	__u32 missing = r->retx_missing & ROCE_PSN_MASK;

	if (!by_cm && !(seq_err && gap && psn_within(fi->psn, missing, r->req.next_psn)))
		return;
	if (seq_err && gap && fi->psn != missing)
		violate(s, cnt, RULE_NAK_PSN_WRONG);
	r->retx_nak = fi->psn | ROCEVAL_RETX_HELD;
}

/*
 * A resent request on a reliable connection: opens an episode if none is
 * open and is compared with what was held for its PSN.  READ re-requests
 * may legitimately ask for less (the PSN after the last response
 * received), so they are never compared.  Not inlined: retransmissions are
 * rare and the frame's stack has no room for it.
 */
static __noinline void retx_resent(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *f)
{
	struct frame_info *fi = &s->fi;
	const struct roceval_retx_slot *held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];

	if (!f->req.in_retx) {
		f->req.in_retx = 1;
		f->retx_from = fi->psn | ROCEVAL_RETX_HELD;
		violate(s, cnt, RULE_RETX_EPISODE);
		if (!(f->retx_nak & ROCEVAL_RETX_HELD))
			violate(s, cnt, RULE_RETX_TIMEOUT);
		else if (fi->psn != (f->retx_nak & ROCE_PSN_MASK))
			violate(s, cnt, psn_ahead(f->retx_nak, fi->psn) ? RULE_GO_BACK_EARLY : RULE_GO_BACK_LATE);
		if (f->retx_nak & ROCEVAL_RETX_HELD)
			f->retx_from |= ROCEVAL_RETX_AFTER_NAK;
		f->retx_nak = 0;
	}
	/* a trace sample of it says which episode it belongs to */
	fi->retx_from = f->retx_from;
	if ((f->retx_missing & ROCEVAL_RETX_HELD) && fi->psn == (f->retx_missing & ROCE_PSN_MASK))
		f->retx_missing = 0;
	if (!fi->icrc_known || roce_ops[fi->opcode & 0x1F].family == FAM_READ_REQ ||
	    (held->psn_bits & ~ROCEVAL_RETX_ACKREQ) != (fi->psn | ROCEVAL_RETX_HELD))
		violate(s, cnt, RULE_RETX_UNCOMPARED);
	else if (!retx_same_request(held, fi, s->li.iphl))
		violate(s, cnt, RULE_RETX_CHANGED);
}

/* A new request on a reliable connection ends any episode and is held for comparison. */
static __always_inline void retx_sent(const struct frame_info *fi, struct roceval_flow *f)
{
	struct roceval_retx_slot *held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];

	f->req.in_retx = 0;
	held->psn_bits = fi->icrc_known ? fi->psn | ROCEVAL_RETX_HELD | (fi->ackreq ? ROCEVAL_RETX_ACKREQ : 0) : 0;
	held->icrc = fi->icrc_found;
	held->ip_id = fi->ip_id;
	held->sport = fi->sport;
}

#endif /* ROCEVAL_RETX_BPF_H */
