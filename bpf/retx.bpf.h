/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Retransmissions on reliable connections (IBA 9.7.1, 9.9.2): episodes,
 * and whether a resent request is the request first sent.
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
 * A resent request on a reliable connection: opens an episode if none is
 * open and is compared with what was held for its PSN.  READ re-requests
 * may legitimately ask for less (the PSN after the last response
 * received), so they are never compared.  Not inlined: retransmissions are
 * rare and the frame's stack has no room for it.
 */
static __noinline void retx_resent(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	const struct roceval_retx_slot *held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];

	if (!f->req.in_retx) {
		f->req.in_retx = 1;
		violate(s, cnt, RULE_RETX_EPISODE);
	}
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
