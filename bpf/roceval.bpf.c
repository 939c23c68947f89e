// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval XDP program: validates every RoCEv2 frame it sees and counts what
 * is wrong.  The same object runs live at the driver hook (roceval_xdp) and
 * offline over a capture (roceval_replay, fed batches of frames through
 * BPF_PROG_TEST_RUN), so a capture is judged exactly as live traffic is.
 *
 * A frame's first ROCEVAL_L2L4_MAX bytes, Ethernet to past the transport
 * headers, are copied by direct packet access where the linear area holds
 * them (frame_head_copy()): inline loads cost less than a call to the load
 * helper (docs/performance.md), and a frame whose ICRC is not checked is
 * judged from that copy alone.  bpf_xdp_load_bytes(), which works the same on
 * linear and multi-buffer frames and at any offset of a replay batch, reads
 * the rest: a head the linear area does not hold (a replay batch's records
 * past its first pages), the datagram the ICRC covers, a CM MAD and the bytes
 * a trace keeps.
 *
 * Where another program holds an interface's XDP hook and cannot share it,
 * roceval_tc runs the same validation at tc ingress (tcx), reading the
 * socket buffer the same way, with bpf_skb_load_bytes() as its helper.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "roceval.h"
#include "roceval_crc.bpf.h"
#include "frame.bpf.h"
#include "kfuncs.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "parse.bpf.h"
#include "bth.bpf.h"
#include "flow.bpf.h"
#include "trace.bpf.h"
#include "batch.bpf.h"
#include "mirror.bpf.h"
#include "cm.bpf.h"
#include "qos.bpf.h"
#include "cnp.bpf.h"
#include "pfc.bpf.h"

/*
 * IBA A17.4.2: the variant fields become all ones.  The LRH slot
 * gets 00 00 00 00 FF FF FF FF, not eight 0xFF: the CRC starts from 0 where
 * the ICRC's starts from ~0 (see roceval_crc.bpf.h).  A RoCEv1 GRH is
 * masked as an IPv6 header is (IBA A16: TClass, FlowLabel, HopLmt), and
 * there is no UDP header.
 */
static __always_inline void icrc_mask(__u8 *buf, __u32 iphl, bool ipv6, bool v1)
{
	const __u32 ip = ROCE_LRH_MASK_LEN;
	__u32 udp = ip + (iphl & 63);
	__u32 bth = v1 ? ip + ROCE_GRH_LEN : udp + UDP_HLEN;

	buf[4] = 0xFF;
	buf[5] = 0xFF;
	buf[6] = 0xFF;
	buf[7] = 0xFF;
	if (ipv6) {
		buf[ip] |= 0x0F; /* traffic class high nibble */
		buf[ip + 1] = 0xFF;
		buf[ip + 2] = 0xFF;
		buf[ip + 3] = 0xFF; /* traffic class low nibble and flow label */
		buf[ip + 7] = 0xFF; /* hop limit */
	} else {
		buf[ip + 1] = 0xFF; /* TOS */
		buf[ip + 8] = 0xFF; /* TTL */
		buf[ip + 10] = 0xFF;
		buf[ip + 11] = 0xFF; /* header checksum */
	}
	if (!v1) {
		buf[udp + 6] = 0xFF;
		buf[udp + 7] = 0xFF; /* UDP checksum */
	}
	buf[(bth & 127) + 4] = 0xFF; /* BTH FECN, BECN, Resv6 */
}

/* Starts a frame's judgement: counted, no rule broken yet, nothing learned. */
static __always_inline void frame_begin(struct roceval_scratch *s, struct roceval_counters *cnt, __u32 len,
					__u32 session)
{
	struct frame_info *fi = &s->fi;

	cnt->total[TOTAL_FRAMES]++;
	cnt->total[TOTAL_BYTES] += len;
	s->rules = (struct roceval_rule_set){};
	__builtin_memset(&s->li, 0, sizeof(s->li));
	fi->has_bth = 0;
	fi->hdr_end = 0;
	fi->headers_ok = 0;
	fi->icrc_checked = 0;
	fi->icrc_known = 0;
	fi->retx_from = 0;
	fi->conn_fresh = 0;
	fi->dc = 0;
	fi->key.session = session;
	s->icrc_at = 0;
}

static __always_inline void count_roce(struct roceval_counters *cnt, const struct l4info *li, __u32 len)
{
	cnt->total[TOTAL_ROCE]++;
	cnt->total[TOTAL_ROCE_BYTES] += len;
	if (li->v1)
		cnt->total[TOTAL_ROCEV1]++;
	else if (li->ipv6)
		cnt->total[TOTAL_ROCEV2_IPV6]++;
	else
		cnt->total[TOTAL_ROCEV2_IPV4]++;
}

/*
 * Lengths come from IP and UDP (RoCEv1: the GRH), never from the frame:
 * Ethernet pads short frames.  They are judged against `avail`, what the
 * frame had on the wire from the IP header on; a capture may hold less.
 * Sets the IP+UDP header length and the transport length (BTH to ICRC);
 * false when the datagram is truncated.
 */
static __always_inline bool datagram_lengths(const struct l4info *li, __u32 avail, __u32 *xhl, __u32 *tlen)
{
	if (li->v1) {
		if (li->iplen > avail || li->iplen - ROCE_GRH_LEN < ROCE_BTH_LEN + ROCE_ICRC_LEN)
			return false;
		*tlen = li->iplen - ROCE_GRH_LEN;
		*xhl = ROCE_GRH_LEN;
		return true;
	}
	if (li->iplen > avail || li->iplen < li->iphl + UDP_HLEN || li->udplen < UDP_HLEN ||
	    li->udplen > li->iplen - li->iphl || li->udplen - UDP_HLEN < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	*tlen = li->udplen - UDP_HLEN;
	*xhl = li->iphl + UDP_HLEN;
	return true;
}

/* Whether this frame's ICRC is checked: whole in the capture, small enough, and due by icrc_sample. */
static __always_inline bool icrc_due(struct roceval_scratch *s, struct roceval_counters *cnt,
				     const struct roceval_settings *cfg, __u32 dlen, bool snapped)
{
	bool check = dlen <= ROCEVAL_MAX_DATAGRAM && !snapped;

	if (snapped) {
		cnt->total[TOTAL_SNAPPED]++;
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
	} else if (check && cfg->icrc_sample != 1) {
		/* icrc_sample=off is 0: never due */
		if (!cfg->icrc_sample || ++s->icrc_tick < cfg->icrc_sample) {
			check = false;
			cnt->total[TOTAL_ICRC_SKIPPED]++;
		} else {
			s->icrc_tick = 0;
		}
	} else if (!check) {
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
	}
	return check;
}

/* The addresses from the IP header (RoCEv1: the GIDs) at `ip`. */
static __always_inline void frame_addresses(struct frame_info *fi, const __u8 *ip, bool ipv6)
{
	fi->ipv6 = ipv6;
	fi->ip_id = ipv6 ? 0 : rd16(ip + 4);
	/* word by word: a memcpy from an offset clang cannot prove aligned is byte by byte (rd16) */
	if (ipv6) {
		((__u64 *)fi->saddr)[0] = *(const __u64 *)(ip + 8);
		((__u64 *)fi->saddr)[1] = *(const __u64 *)(ip + 16);
		((__u64 *)fi->daddr)[0] = *(const __u64 *)(ip + 24);
		((__u64 *)fi->daddr)[1] = *(const __u64 *)(ip + 32);
	} else {
		((__u32 *)fi->saddr)[0] = *(const __u32 *)(ip + 12);
		((__u32 *)fi->saddr)[1] = 0;
		((__u64 *)fi->saddr)[1] = 0;
		((__u32 *)fi->daddr)[0] = *(const __u32 *)(ip + 16);
		((__u32 *)fi->daddr)[1] = 0;
		((__u64 *)fi->daddr)[1] = 0;
	}
}

/*
 * The CRC of this CPU's scratch buffer's first `len` bytes (roceval_icrc).
 * Global: the verifier checks its two loops once, not once for each way a
 * frame comes to its ICRC (6.5k instructions on every frame program); the
 * call is nothing beside the CRC of a datagram.
 */
__noinline int roceval_icrc_scratch(__u32 len)
{
	__u32 zero = 0;
	struct roceval_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s || len < CRC_LANE || len > ROCEVAL_SCRATCH_SIZE)
		return 0;
	return roceval_icrc(s->buf, len);
}

/*
 * The datagram's `dlen` bytes are in the scratch buffer, `lead` bytes in
 * (icrc_layout); its ICRC is recomputed over the masked copy.
 */
static __always_inline void icrc_check(struct roceval_scratch *s, struct roceval_counters *cnt, __u8 *buf,
				       __u32 lead, __u32 dlen)
{
	/* a multiple of CRC_LANE; the stored ICRC follows */
	__u64 crc_len = lead + ROCE_LRH_MASK_LEN + dlen - ROCE_ICRC_LEN;
	struct frame_info *fi = &s->fi;
	struct l4info *li = &s->li;
	__u32 found, expected;

	barrier_var(crc_len);
	if (crc_len > ROCEVAL_SCRATCH_SIZE) /* never: for the verifier */
		return;
	found = roceval_load_le32(s->buf + crc_len);
	icrc_mask(buf, li->iphl, li->ipv6, li->v1);
	expected = roceval_icrc_scratch(crc_len);
	fi->icrc_checked = 1;
	fi->icrc_known = 1;
	fi->icrc_expected = expected;
	fi->icrc_found = found;
	if (expected == found) {
		cnt->total[TOTAL_ICRC_OK]++;
	} else {
		cnt->total[TOTAL_ICRC_BAD]++;
		violate(s, cnt, RULE_ICRC);
	}
}

/*
 * The ICRC a request was sent with, when it was not checked but its
 * datagram was copied whole (a small one): a retransmission of its PSN is
 * compared with it (retx.bpf.h decides which requests that is).  Reading a
 * larger frame's ICRC for this would cost a helper call on every request,
 * as much again as the rest of the retransmission logic; those go
 * uncompared under icrc_sample.
 */
static __always_inline void icrc_held(struct roceval_scratch *s, const __u8 *buf)
{
	struct frame_info *fi = &s->fi;
	__u32 at = s->icrc_at;

	if (!fi->has_bth || !at || !(roce_ops[fi->opcode & 0x1F].flags & OPF_REQUEST))
		return;
	barrier_var(at);
	if (at > ROCEVAL_HDR_COPY)
		return;
	fi->icrc_found = roceval_load_le32(buf + ROCE_LRH_MASK_LEN + at);
	fi->icrc_known = 1;
}

/* What happens after the judgement: CM learning, the flow, a trace sample, and the verdict. */
static __always_inline int frame_verdict(void *ctx, bool tc, bool rx_meta, struct roceval_scratch *s,
					 struct roceval_counters *cnt, const struct roceval_settings *cfg,
					 __u32 base, __u32 len, __u32 wire)
{
	const struct l4info *li = &s->li;

	/* RDMA CM (cm.bpf.h): learns connections from QP1 MADs. */
	cm_verdict(ctx, tc, s, base + li->l4 + (li->v1 ? 0 : UDP_HLEN), base + len);
	if (s->fi.has_bth) {
		/* congestion and QoS (qos.bpf.h, cnp.bpf.h): one word says whether any of it is on */
		if (cfg->cc_on & ROCEVAL_CC_QOS)
			qos_judge(ctx, tc, rx_meta, s, cnt, cfg);
		flow_update(s, cnt, cfg, len);
		if (cfg->cc_on & ROCEVAL_CC_STATE)
			roceval_congestion(len);
	}
	if (cfg->trace_on && !rule_set_empty(&s->rules)) {
		if (wire == ROCEVAL_WIRE_UNKNOWN)
			wire = len;
		if (tc)
			roceval_trace_skb(ctx, base, len, wire);
		else
			roceval_trace(ctx, base, len, wire);
	}
	if (cfg->enforce && rule_set_meets(&s->rules, ROCEVAL_ERROR_MASK0, ROCEVAL_ERROR_MASK1)) {
		cnt->total[TOTAL_DROPPED]++;
		return XDP_DROP;
	}
	return XDP_PASS;
}

/*
 * The datagram's extended header and transport lengths (datagram_lengths),
 * with the frame's length on the wire kept for the verdict; false for an IP
 * fragment or a truncated frame, which are counted and judged no further.
 */
static __always_inline bool frame_lengths(struct roceval_scratch *s, struct roceval_counters *cnt,
					  const struct l4info *li, __u32 len, __u32 wire, __u32 *xhl, __u32 *tlen)
{
	if (li->fragment) {
		s->wire = wire;
		violate(s, cnt, RULE_IP_FRAGMENT);
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
		return false;
	}
	if (wire < len)
		wire = len;
	s->wire = wire;
	if (!datagram_lengths(li, wire - li->l3, xhl, tlen)) {
		violate(s, cnt, RULE_TRUNCATED);
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
		return false;
	}
	return true;
}

/*
 * frame_head_short() in a function of its own: there its word loop keeps
 * what it needs in registers, where inlined in the frame every word spilled
 * and reloaded the frame's values; the verifier checks it once.
 */
__noinline int roceval_head_short(struct xdp_md *ctx, struct roceval_scratch *s, __u64 base, __u64 n)
{
	return ctx && s && frame_head_short(ctx, false, base, s->l2l4, n);
}

__noinline int roceval_head_short_skb(struct __sk_buff *skb, struct roceval_scratch *s, __u64 base, __u64 n)
{
	return skb && s && frame_head_short(skb, true, base, s->l2l4, n);
}

/*
 * The frame's first n bytes into the scratch: already there when its outer
 * frame's copy held them (roceval_mirror() moved them down), else read in
 * place, else with the helper, which brings ROCEVAL_MIRROR_SPARE bytes
 * more when the frame before was a mirrored one (its inner frame then taken
 * from this copy: mirror_inner_kept()).  The bytes of the frame the helper brought
 * in held, 0 when it was read in place: its inner frame is in place too,
 * and a read in place of it costs less than the move.  False when it
 * could not be read.
 */
static __always_inline bool frame_head(void *ctx, bool tc, struct roceval_scratch *s, __u32 base, __u32 len,
				       __u32 n, __u32 session)
{
	__u64 more = n;
	int head;

	if (session && s->inner_kept)
		return true;
	head = frame_head_copy(ctx, tc, base, s->l2l4, n);
	if (head == HEAD_SHORT)
		head = tc ? roceval_head_short_skb(ctx, s, base, n) : roceval_head_short(ctx, s, base, n);
	if (head) {
		s->held = 0;
		return true;
	}
	if (s->spare && !session) {
		more = len < ROCEVAL_L2L4_MAX + ROCEVAL_MIRROR_SPARE ? len : ROCEVAL_L2L4_MAX + ROCEVAL_MIRROR_SPARE;
		s->spare = 0;
	}
	barrier_var(more);
	if (more < 1 || more > ROCEVAL_L2L4_MAX + ROCEVAL_MIRROR_SPARE || frame_load(ctx, tc, base, s->l2l4, more))
		return false;
	s->held = more;
	return true;
}

/*
 * Validates one frame of `len` bytes starting at `base`; XDP_PASS or XDP_DROP.
 * `wire` is the frame's length on the wire: above `len` when a capture kept
 * only the start of it (a snapped frame), which is then judged on the bytes
 * present and never called truncated.  `rx_meta`: XDP bound to its device,
 * which may ask the driver what it took out of the frame (qos_pcp).
 */
static __always_inline int frame_body(void *ctx, bool tc, bool rx_meta, __u32 base, __u32 len, __u32 wire,
				      __u32 session)
{
	__u32 zero = 0;
	struct roceval_counters *cnt = bpf_map_lookup_elem(&counters, &zero);
	struct roceval_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
	struct roceval_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u32 cap, dlen, tlen, xhl, l3, lead = 0;
	struct l4info *li;
	bool check_icrc;
	__u64 n, copy;
	__u8 *buf;

	if (!ctx || !cnt || !cfg || !s)
		return XDP_PASS;
	frame_begin(s, cnt, len, session);
	li = &s->li;
	n = len < ROCEVAL_L2L4_MAX ? len : ROCEVAL_L2L4_MAX;
	/* Make clang bounds-check the very register the helper receives. */
	barrier_var(n);
	if (n < ETH_HLEN || n > ROCEVAL_L2L4_MAX)
		return XDP_PASS;
	if (!frame_head(ctx, tc, s, base, len, n, session))
		return XDP_PASS;
	if (!parse_l2l4(s->l2l4, n, cfg, li)) {
		if (mac_control(s))
			roceval_mac_control(n); /* PFC (pfc.bpf.h) */
		else if (roceval_mirror(s, cnt, cfg, len, wire))
			return ROCEVAL_MIRRORED;
		return XDP_PASS;
	}

	count_roce(cnt, li, len);
	s->fi.hdr_end = li->l4 + (li->v1 ? 0 : UDP_HLEN);
	if (li->ecn == 3)
		violate(s, cnt, RULE_ECN_CE);
	if (!frame_lengths(s, cnt, li, len, wire, &xhl, &tlen))
		goto verdict;
	dlen = xhl + tlen;
	cap = len - li->l3;
	/* Whole on the wire, cut in the capture: what needs the missing bytes is not judged. */
	check_icrc = icrc_due(s, cnt, cfg, dlen, dlen > cap);

	copy = check_icrc ? dlen : (dlen < ROCEVAL_HDR_COPY ? dlen : ROCEVAL_HDR_COPY);
	if (copy > cap)
		copy = cap;
	s->icrc_at = copy >= dlen ? dlen - ROCE_ICRC_LEN : 0;
	barrier_var(copy);
	if (copy < 1 || copy > ROCEVAL_MAX_DATAGRAM)
		goto verdict;
	l3 = li->l3;
	barrier_var(l3);
	if (!check_icrc && l3 >= ROCE_LRH_MASK_LEN && l3 <= ROCEVAL_L2_MAX && l3 + copy <= n) {
		/*
		 * The first copy holds the headers: read them there, laid out as in
		 * the datagram buffer (the IP header ROCE_LRH_MASK_LEN bytes in).
		 * The mask only tells the verifier what the test above did.
		 */
		buf = s->l2l4 + ((l3 - ROCE_LRH_MASK_LEN) & 31);
	} else {
		if (check_icrc)
			lead = icrc_layout(s->buf, dlen);
		buf = s->buf + (lead & (CRC_LANE - 1));
		if (frame_load(ctx, tc, base + li->l3, buf + ROCE_LRH_MASK_LEN, copy))
			goto verdict;
	}
	frame_addresses(&s->fi, buf + ROCE_LRH_MASK_LEN, li->ipv6);
	judge_transport(s, cnt, cfg, buf, xhl, tlen, copy);
	if (check_icrc)
		icrc_check(s, cnt, buf, lead, dlen);
	else
		icrc_held(s, buf);
verdict:
	return frame_verdict(ctx, tc, rx_meta, s, cnt, cfg, base, len, s->wire);
}

/*
 * Global functions: the verifier checks each once, not once per caller, and
 * the replay program calls roceval_frame in a loop.  roceval_frame_meta is
 * roceval_frame for roceval_xdp_nic alone: a kfunc call would keep the
 * others from loading on kernels without it, and from replaying a capture.
 * Each takes base and wire as arguments, constants to roceval_xdp_nic's and
 * roceval_tc's calls: folded into the body they cost the verifier 76k more
 * instructions (bpftool loadall: roceval_tc 252k with them, 176k without).
 * `session`: the mirror session of an inner frame (mirror.bpf.h), in its
 * flow key; ROCEVAL_MIRROR_BARE for a frame as it came.
 */
__noinline int roceval_frame(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire, __u32 session)
{
	return frame_body(ctx, false, false, base, len, wire, session);
}

__noinline int roceval_frame_meta(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire, __u32 session)
{
	return frame_body(ctx, false, true, base, len, wire, session);
}

__noinline int roceval_frame_skb(struct __sk_buff *skb, __u32 base, __u32 len, __u32 wire, __u32 session)
{
	return frame_body(skb, true, false, base, len, wire, session);
}

MIRROR_DECAP(frame_decap, roceval_frame, struct xdp_md)
MIRROR_DECAP(frame_decap_meta, roceval_frame_meta, struct xdp_md)
MIRROR_DECAP(frame_decap_skb, roceval_frame_skb, struct __sk_buff)

SEC("xdp")
int roceval_xdp(struct xdp_md *ctx)
{
	__u32 len = bpf_xdp_get_buff_len(ctx);

	return frame_decap(ctx, 0, len, len);
}

/*
 * roceval_xdp with the NIC's receive timestamp of each frame, for the
 * latencies, and the VLAN tag the NIC stripped, for the priority (qos_pcp,
 * kernel 6.8+, asked only of a frame judged for it): native mode only,
 * loaded bound to its device (kernel 6.3+), which is what lets it ask the
 * driver.  A driver stamps frames only while its receive timestamping is on
 * (hwstamp_ctl -r 1, ptp4l); the call costs one indirect call a frame into
 * the driver.  "?": not loaded unless asked
 * for, since it loads only bound to a device (tools loading every program
 * of the object, bpftool's loadall, pass it by).
 */
SEC("?xdp")
int roceval_xdp_nic(struct xdp_md *ctx)
{
	__u32 len = bpf_xdp_get_buff_len(ctx);
	__u32 zero = 0;
	struct roceval_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	__u64 stamp;

	if (!s)
		return XDP_PASS;
	if (bpf_xdp_metadata_rx_timestamp(ctx, &stamp))
		stamp = 0;
	s->nic_stamp = stamp;
	return frame_decap_meta(ctx, 0, len, len);
}

/*
 * tc ingress through a tcx link, beside whatever holds the XDP hook: it sees
 * the frames that program passed on, VLAN tags already taken out of the
 * frame by the stack.  TCX_NEXT hands each frame on to the next program, as
 * XDP_PASS does; only enforce drops.
 */
SEC("tc")
int roceval_tc(struct __sk_buff *skb)
{
	return frame_decap_skb(skb, 0, skb->len, skb->len) == XDP_DROP ? TCX_DROP : TCX_NEXT;
}

/*
 * Offline replay: the input is a batch (batch.bpf.h; BPF_PROG_TEST_RUN wants
 * at least 14 bytes, so a batch may carry padding after its records).
 * Returns how many frames it validated so userspace can tell a malformed
 * batch from a complete one.
 */
static long replay_step(__u64 i, void *w)
{
	return batch_step(w, roceval_frame);
}

SEC("xdp.frags")
int roceval_replay(struct xdp_md *ctx)
{
	return batch_walk(ctx, replay_step);
}

/* A word of window_open, at the replay's end: which of its 64 slots opened a window. */
struct end_word {
	__u64 bits;
	__u32 word;
};

static long replay_end_slot(__u64 b, void *ctx)
{
	struct end_word *e = ctx;
	__u32 slot = e->word * 64 + (b & 63);
	struct roceval_flow *f;

	if (!(e->bits >> (b & 63)))
		return 1;
	if (!((e->bits >> (b & 63)) & 1))
		return 0;
	f = bpf_map_lookup_elem(&flows, &slot);
	if (!f || !f->packets)
		return 0;
	if (f->req.state & SPACE_WINDOW)
		roceval_reorder_settle_all(slot);
	if (retx_go_back_awaited(f))
		roceval_go_back_skipped(slot);
	if (f->cc_wait)
		roceval_cc_idle(slot);
	return 0;
}

static long replay_end_word(__u64 i, void *ctx)
{
	struct end_word e = { .word = i };
	__u32 k = i;
	__u64 *word = bpf_map_lookup_elem(&window_open, &k);

	if (!word || !*word)
		return 0;
	e.bits = *word;
	bpf_loop(64, replay_end_slot, &e, 0);
	return 0;
}

/*
 * The end of a replay (run once after its last batch): no request can fill
 * a hole any more, so every hole still open in a reorder window is a
 * psn_gap and every request awaiting its verdict was reordered; a CE
 * window the capture goes on past cnp_delay after went unanswered; a
 * go-back that started past its NAK's PSN and never resent it skipped it.
 * Only the slots whose bit in window_open is set ever opened a window or
 * waited so (a replay never clears the bits), so the end reads a few KB
 * rather than the flow table: a replay of many small files pays it for each.
 */
SEC("xdp")
int roceval_replay_end(struct xdp_md *ctx)
{
	bpf_loop(window_words, replay_end_word, 0, 0);
	return XDP_PASS;
}
