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
#include "latency.bpf.h"
#include "reorder.bpf.h"

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
 * Per-CPU room for the keys a response looks up: the CM end it goes to, the
 * hint for its PSN window, and the flow of the requests it answers.
 */
struct retx_scratch {
	struct roceval_cm_end_key end;
	struct roceval_hint_key hint;
	struct roceval_flow_key req;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retx_scratch);
} retx_scratch SEC(".maps");

/* One lookup site (frame.bpf.h's counters_get). */
static __noinline struct retx_scratch *retx_scratch_get(void)
{
	return bpf_map_lookup_elem(&retx_scratch, &map_zero);
}

/*
 * How many PSNs past the first missing one a requester can have sent by the
 * time the NAK for it is seen: its window in flight, which at 100 Gb/s and
 * tens of microseconds is some hundreds of packets.  A gap older than this
 * was most likely the capture's loss, not the wire's (the requester never
 * resends what the responder got), and is neither kept nor judged against.
 * It is also as far behind the requests as an answer is looked for.
 */
#define RETX_NAK_REACH 1024

static __always_inline bool retx_gap_open(const struct roceval_flow *f)
{
	return (f->retx_missing & ROCEVAL_RETX_HELD) &&
	       ((f->req.next_psn - f->retx_missing) & ROCE_PSN_MASK) <= RETX_NAK_REACH;
}

/* A request PSN ahead of the expected one: the first one missing is remembered until resent. */
static __always_inline void retx_gap(struct roceval_flow *f, __u32 expected)
{
	if (!retx_gap_open(f))
		f->retx_missing = expected | ROCEVAL_RETX_HELD;
}

static __always_inline bool psn_within(__u32 p, __u32 from, __u32 to)
{
	return ((p - from) & ROCE_PSN_MASK) <= ((to - from) & ROCE_PSN_MASK);
}

/*
 * A go-back after a NAK that started past the NAK's PSN waits for that PSN:
 * retransmissions take the paths first transmissions took, and come out of
 * order as they do.  How far past it the newest retransmission is, when
 * one awaits it (retx_nak, no longer HELD).
 */
static __always_inline __u32 retx_go_back_awaited(const struct roceval_flow *f)
{
	return (f->retx_nak & ROCEVAL_RETX_HELD) ? 0 : f->retx_nak >> ROCEVAL_RETX_LATE_SHIFT;
}

/*
 * The NAK's PSN awaited by the flow in `slot` never came back before new
 * requests, another NAK or the replay's end: the go-back skipped it.
 * Global, so verified once, not in every path of a new request's frame.
 */
__noinline int roceval_go_back_skipped(__u32 slot)
{
	struct roceval_counters *cnt = counters_get();
	struct roceval_flow *f = flow_at(slot);

	if (!cnt || !f || !retx_go_back_awaited(f))
		return 0;
	f->retx_nak = 0;
	flow_settled(cnt, f, RULE_GO_BACK_LATE, 1, true);
	return 0;
}

/*
 * A retransmission (at `psn`) while the flow in `slot` awaits the NAK's
 * PSN: that PSN is the go-back reordered, its start after all; one further
 * past it than reorder_window leaves it skipped.  Global, so verified once.
 */
__noinline int roceval_go_back_resent(__u32 slot, __u32 psn)
{
	__u32 from, d, past;
	struct roceval_counters *cnt = counters_get();
	const struct roceval_settings *cfg = settings_get();
	struct roceval_flow *f = flow_at(slot);

	if (!cnt || !cfg || !f)
		return 0;
	from = f->retx_nak & ROCE_PSN_MASK;
	d = retx_go_back_awaited(f);
	past = (psn - from) & ROCE_PSN_MASK;
	if (psn == from) {
		f->retx_nak = 0;
		f->retx_from = from | ROCEVAL_RETX_HELD | ROCEVAL_RETX_AFTER_NAK;
		reorder_count(cnt, f, d, 1);
	} else if (past > d && past < ROCE_PSN_WINDOW) {
		if (past > reorder_win(cfg))
			roceval_go_back_skipped(slot);
		else
			f->retx_nak = from | past << ROCEVAL_RETX_LATE_SHIFT;
	}
	return 0;
}

/*
 * A NAK to requests whose flow is `r`.  A PSN sequence error NAK must name
 * the first request PSN missing, as far as this observer saw.  Its PSN is
 * where the requester must go back to (an RNR NAK's too).  When the pairing
 * was inferred, a PSN sequence error NAK is trusted only when it names a
 * PSN of the gap open on the flow: PSNs start at random, so another QP's
 * NAK falls there about once in 2^24 divided by the gap's width.
 */
static __always_inline void retx_nak(struct roceval_scratch *s, struct roceval_counters *cnt, struct roceval_flow *r,
				     bool by_cm)
{
	const struct frame_info *fi = &s->fi;
	bool seq_err = rule_set_has(&s->rules, RULE_NAK_PSN);
	bool gap = retx_gap_open(r);
	__u32 missing = r->retx_missing & ROCE_PSN_MASK;

	if (!by_cm && seq_err && !(gap && psn_within(fi->psn, missing, r->req.next_psn)))
		return;
	if (seq_err && gap && fi->psn != missing)
		violate(s, cnt, RULE_NAK_PSN_WRONG);
	roceval_go_back_skipped(r->cold);
	r->retx_nak = fi->psn | ROCEVAL_RETX_HELD;
	r->nak_t = s->now_t;
	r->nak_rnr = (seq_err ? 0 : ROCEVAL_NAK_RNR | ((fi->aeth >> 24) & 0x1F)) | (s->timed ? 0 : ROCEVAL_NAK_UNTIMED);
	/*
	 * A hole filled after a NAK is no reordering: every hole is a loss, and
	 * the request that fills it a retransmission.
	 */
	if (seq_err && (r->req.state & SPACE_WINDOW))
		roceval_reorder_settle_all(r->cold);
}

/*
 * A timeout-driven retransmission sooner after the request's previous
 * transmission than the ACK timeout the connection's REQ announced.  The
 * requester's timer starts no earlier than that transmission, so however
 * far the observer sits from the requester, an earlier retransmission is
 * early.  Only the initiator's requests: the REQ announces its timeout.
 */
static __always_inline void retx_timeout_early(struct roceval_scratch *s, struct roceval_counters *cnt,
					       const struct roceval_retx_slot *held)
{
	const struct frame_info *fi = &s->fi;
	const struct roceval_cm_end *e;
	struct retx_scratch *x;
	__u64 waited;

	if (!cm_active || !s->timed || (held->psn_bits & (ROCE_PSN_MASK | ROCEVAL_RETX_TIMED)) != (fi->psn | ROCEVAL_RETX_TIMED))
		return;
	x = retx_scratch_get();
	if (!x)
		return;
	cm_end_key_set(&x->end, fi->daddr, fi->dqpn, fi->ipv6);
	e = cm_end_get(&x->end);
	if (!e || e->state >= CM_STATE_CLOSED || e->initiator || !e->ack_timeout || !addr_eq(e->peer, fi->saddr))
		return;
	waited = (__u64)(s->now_t - held->sent_t) << ROCEVAL_LAT_TIME_SHIFT;
	if (!latency_backwards(s->now_t - held->sent_t) && waited < (4096ULL << (e->ack_timeout & 0x1F)))
		violate(s, cnt, RULE_RETX_TIMEOUT_EARLY);
}

/*
 * A READ re-request that starts an episode without a NAK must start where
 * the READ's responses stopped: the PSN after the last one received in
 * order (answer.bpf.h), while that is a PSN the requester sent and no ACK
 * has gone past it.  Judged when it re-requests that READ: from its own
 * PSN to the one after the last response received (asking again), and on
 * to the PSN of its LAST response once that was seen (skipping data); past
 * a LAST not seen it may be another READ's, whose length the responses do
 * not tell.  Responses the observer saw may still be lost after it, and
 * responses it missed may have reached the requester: judged right where
 * the responses were seen, at the requester's side, on a whole capture.
 */
static __always_inline void retx_read_rerequest(struct roceval_scratch *s, struct roceval_counters *cnt,
						const struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	__u32 next = f->read_next & ROCE_PSN_MASK;
	__u32 last = (f->req.next_psn - 1) & ROCE_PSN_MASK;

	if (roce_ops[fi->opcode & 0x1F].family != FAM_READ_REQ || !(f->read_next & ROCEVAL_RETX_HELD))
		return;
	if (!psn_within(next, (last - RETX_NAK_REACH) & ROCE_PSN_MASK, last) || fi->psn == next)
		return;
	/* asks again for responses received, or skips one not received */
	if (psn_within(fi->psn, f->read_from, next) ||
	    ((f->read_end & ROCEVAL_RETX_HELD) && psn_within(next, f->read_from, f->read_end & ROCE_PSN_MASK) &&
	     psn_within(fi->psn, next, f->read_end & ROCE_PSN_MASK)))
		violate(s, cnt, RULE_READ_REREQUEST);
}

/* The first retransmission after a NAK: how long the requester took, and for an RNR NAK whether it waited enough. */
static __always_inline void retx_after_nak(struct roceval_scratch *s, struct roceval_counters *cnt,
					   const struct roceval_flow *f)
{
	__u32 waited = s->now_t - f->nak_t;

	if (!s->timed || (f->nak_rnr & ROCEVAL_NAK_UNTIMED))
		return;
	if (!(f->nak_rnr & ROCEVAL_NAK_RNR)) {
		roceval_latency_record(LAT_NAK_RETX, waited);
		return;
	}
	roceval_latency_record(LAT_RNR_RETRY, waited);
	if (!latency_backwards(waited) &&
	    ((__u64)waited << ROCEVAL_LAT_TIME_SHIFT) < roce_rnr_timer_10us[f->nak_rnr & 0x1F] * 10000ULL)
		violate(s, cnt, RULE_RNR_RETRY_EARLY);
}

/*
 * An episode opens at `start`: after a NAK, where the NAK said (a start
 * past it within `win`, reorder_window, awaits the NAK's PSN); without
 * one, a timeout.  The holes of the reorder window it goes back over are
 * losses.  `late`: it started with requests seen as fills of the window
 * (s->goback), gone now, so nothing of the first one is judged.
 */
static __always_inline void retx_episode(struct roceval_scratch *s, struct roceval_counters *cnt,
					 struct roceval_flow *f, const struct roceval_retx_slot *held, __u32 start,
					 bool late, __u32 win)
{
	f->req.state |= SPACE_IN_RETX;
	f->retx_from = start | ROCEVAL_RETX_HELD;
	violate(s, cnt, RULE_RETX_EPISODE);
	if (!(f->retx_nak & ROCEVAL_RETX_HELD)) {
		violate(s, cnt, RULE_RETX_TIMEOUT);
		if (!late) {
			retx_timeout_early(s, cnt, held);
			retx_read_rerequest(s, cnt, f);
		}
		f->retx_nak = 0;
	} else {
		__u32 nak = f->retx_nak & ROCE_PSN_MASK, past = (start - nak) & ROCE_PSN_MASK;

		retx_after_nak(s, cnt, f);
		f->retx_from |= ROCEVAL_RETX_AFTER_NAK;
		if (psn_ahead(nak, start))
			violate(s, cnt, RULE_GO_BACK_EARLY);
		else if (past > win)
			violate(s, cnt, RULE_GO_BACK_LATE);
		/* started past it, within reorder_window: the NAK's PSN may yet come, overtaken */
		f->retx_nak = past && past <= win ? nak | past << ROCEVAL_RETX_LATE_SHIFT : 0;
		/* a replay's end judges it if the capture ends first */
		if (f->retx_nak)
			slot_marked(f->cold);
	}
	if (!late && (f->req.state & SPACE_WINDOW))
		roceval_reorder_settle_from(f->cold, start);
}

/*
 * A resent request on a reliable connection: opens an episode if none is
 * open and is compared with what was held for its PSN.  READ re-requests
 * may legitimately ask for less (the PSN after the last response
 * received), so they are never compared.  Its answer is not timed: which
 * transmission an answer is to cannot be told.  The fills of a go-back the
 * reorder window saw late are retransmissions too, never compared (their
 * first transmissions were lost).  Not inlined: retransmissions are rare
 * and the frame's stack has no room for it.  Global, on the flow in `slot`:
 * the verifier checks it once, not once for each way a frame comes here.
 */
__noinline int roceval_retx_resent(__u32 slot)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	const struct roceval_settings *cfg = settings_get();
	struct roceval_flow *f = flow_at(slot);
	struct roceval_retx_slot *held;
	struct frame_info *fi;
	__u32 win;
	bool late;

	if (!s || !cnt || !cfg || !f)
		return 0;
	fi = &s->fi;
	held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];
	late = s->goback & ROCEVAL_RETX_HELD;
	win = reorder_win(cfg);
	cnt->total[TOTAL_RETX_PACKETS]++;
	if (late) {
		cnt->total[TOTAL_RETX_PACKETS] += s->goback_fills;
		flow_settled(cnt, f, RULE_RETX_UNCOMPARED, s->goback_fills, false);
	}
	if (!(f->req.state & SPACE_IN_RETX))
		retx_episode(s, cnt, f, held, late ? s->goback & ROCE_PSN_MASK : fi->psn, late, win);
	else if (retx_go_back_awaited(f))
		roceval_go_back_resent(f->cold, fi->psn);
	/* a trace sample of it says which episode it belongs to */
	fi->retx_from = f->retx_from;
	if ((f->retx_missing & ROCEVAL_RETX_HELD) && fi->psn == (f->retx_missing & ROCE_PSN_MASK))
		f->retx_missing = 0;
	if (!fi->icrc_known || roce_ops[fi->opcode & 0x1F].family == FAM_READ_REQ ||
	    (held->psn_bits & (ROCE_PSN_MASK | ROCEVAL_RETX_HELD)) != (fi->psn | ROCEVAL_RETX_HELD))
		violate(s, cnt, RULE_RETX_UNCOMPARED);
	else if (!retx_same_request(held, fi, s->li.iphl))
		violate(s, cnt, RULE_RETX_CHANGED);
	if ((held->psn_bits & ROCE_PSN_MASK) == fi->psn) {
		held->psn_bits &= ~(ROCEVAL_RETX_WAITING | ROCEVAL_RETX_TIMED);
		held->psn_bits |= s->timed ? ROCEVAL_RETX_TIMED : 0;
		held->sent_t = s->now_t;
	}
	return 0;
}

/*
 * A new request on a reliable connection ends any episode, is held for
 * comparison and waits for its answer (answer.bpf.h).
 */
static __always_inline void retx_sent(const struct roceval_scratch *s, struct roceval_counters *cnt,
				      struct roceval_flow *f, bool read)
{
	const struct frame_info *fi = &s->fi;
	struct roceval_retx_slot *held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];
	__u32 bits = fi->psn | (s->timed ? ROCEVAL_RETX_TIMED | ROCEVAL_RETX_WAITING : 0) | (read ? ROCEVAL_RETX_READ : 0);

	if (__builtin_expect(f->req.state & SPACE_IN_RETX, 0) && retx_go_back_awaited(f))
		roceval_go_back_skipped(f->cold);
	f->req.state &= ~SPACE_IN_RETX;
	if (fi->icrc_known)
		bits |= ROCEVAL_RETX_HELD | (fi->ackreq ? ROCEVAL_RETX_ACKREQ : 0);
	held->psn_bits = bits;
	held->icrc = fi->icrc_found;
	held->ip_id = fi->ip_id;
	held->sport = fi->sport;
	held->sent_t = s->now_t;
	if (s->timed)
		f->timed_slot = (fi->psn & (ROCEVAL_RETX_SLOTS - 1)) + 1;
}

/*
 * A request that filled a hole of the reorder window is held for comparison
 * like a new one, when its slot holds no newer request; it is not timed
 * (which of its transmissions an answer is to cannot be told).
 */
static __always_inline void retx_filled(const struct roceval_scratch *s, struct roceval_flow *f)
{
	const struct frame_info *fi = &s->fi;
	struct roceval_retx_slot *held = &f->retx[fi->psn & (ROCEVAL_RETX_SLOTS - 1)];

	if (!fi->icrc_known || !psn_ahead(fi->psn, held->psn_bits & ROCE_PSN_MASK))
		return;
	held->psn_bits = fi->psn | ROCEVAL_RETX_HELD | (fi->ackreq ? ROCEVAL_RETX_ACKREQ : 0);
	held->icrc = fi->icrc_found;
	held->ip_id = fi->ip_id;
	held->sport = fi->sport;
}

#endif /* ROCEVAL_RETX_BPF_H */
