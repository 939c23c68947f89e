// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval XDP program: validates every RoCEv2 frame it sees and counts what
 * is wrong.  The same object runs live at the driver hook (roceval_xdp) and
 * offline over a capture (roceval_replay, fed batches of frames through
 * BPF_PROG_TEST_RUN), so a capture is judged exactly as live traffic is.
 *
 * Every frame is read with bpf_xdp_load_bytes() rather than direct packet
 * access: it works the same on linear and multi-buffer frames and on a frame
 * at any offset of a replay batch, and costs one small copy per frame.
 *
 * Where another program holds an interface's XDP hook and cannot share it,
 * roceval_tc runs the same validation at tc ingress (tcx), reading the
 * socket buffer with bpf_skb_load_bytes() instead.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "roceval.h"
#include "roceval_crc.bpf.h"
#include "frame.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline bool is_roce_port(const struct roceval_settings *cfg, __u16 dport)
{
	if (dport == ROCE_UDP_PORT)
		return true;
#pragma unroll
	for (int i = 0; i < ROCEVAL_MAX_PORTS; i++)
		if (cfg->ports[i] && cfg->ports[i] == dport)
			return true;
	return false;
}

static __always_inline bool pkey_allowed(const struct roceval_settings *cfg, __u16 pkey)
{
	__u32 n = cfg->n_pkeys;

	if (!(pkey & 0x7FFF))
		return false;
	if (!n)
		return true;
#pragma unroll
	for (int i = 0; i < ROCEVAL_MAX_PKEYS; i++)
		if (i < n && (cfg->pkeys[i] & 0x7FFF) == (pkey & 0x7FFF))
			return true;
	return false;
}

#include "flow.bpf.h"
#include "trace.bpf.h"
#include "batch.bpf.h"
#include "cm.bpf.h"


/*
 * Ethernet, up to two VLAN tags, then IPv4/IPv6 and UDP, or a RoCEv1 GRH.
 * Returns 1 for a frame to a RoCEv2 port or a RoCEv1 frame, 0 for anything
 * else (which roceval leaves alone).
 */
static __always_inline int parse_l2l4(const __u8 *h, __u32 n, const struct roceval_settings *cfg,
				      struct l4info *li)
{
	__u32 off = ETH_HLEN;
	__u16 proto = rd16(h + 12);
	__u32 l4;

#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		if (off + 4 > n)
			return 0;
		proto = rd16(h + off + 2);
		off += 4;
	}
	li->l3 = off;

	if (proto == ETH_P_IP) {
		__u8 vihl, ihl;
		__u16 frag;

		if (off + IPV4_HLEN > n)
			return 0;
		vihl = h[off];
		ihl = vihl & 0x0F;
		if ((vihl >> 4) != 4 || ihl < 5 || h[off + 9] != IPPROTO_UDP_NR)
			return 0;
		frag = rd16(h + off + 6);
		if (frag & 0x1FFF) /* a later fragment: no UDP header to look at */
			return 0;
		li->iphl = ihl * 4;
		l4 = off + li->iphl;
		if (l4 + UDP_HLEN > n)
			return 0;
		li->ipv6 = 0;
		li->ecn = h[off + 1] & 3;
		li->iplen = rd16(h + off + 2);
		li->fragment = (frag & 0x2000) != 0;
	} else if (proto == ETH_P_IPV6) {
		__u8 nh;

		if (off + IPV6_HLEN > n)
			return 0;
		if ((h[off] >> 4) != 6)
			return 0;
		nh = h[off + 6];
		li->iphl = IPV6_HLEN;
		li->ipv6 = 1;
		li->ecn = (h[off + 1] >> 4) & 3;
		li->iplen = IPV6_HLEN + rd16(h + off + 4);
		li->fragment = 0;
		l4 = off + IPV6_HLEN;
		if (nh == IPV6_NEXTHDR_FRAGMENT) {
			/* RoCEv2 has UDP right after the fixed header; a fragment
			 * header means fragmentation, which NICs cannot validate. */
			if (l4 + 8 + UDP_HLEN > n)
				return 0;
			if (rd16(h + l4 + 2) & 0xFFF8) /* offset != 0 */
				return 0;
			nh = h[l4];
			l4 += 8;
			li->fragment = 1;
		}
		if (nh != IPPROTO_UDP_NR || l4 + UDP_HLEN > n)
			return 0;
	} else if (proto == ROCE_ETH_P_ROCEV1) {
		/* The GRH has IPv6's layout; NxtHdr 0x1B says a BTH follows. */
		if (off + ROCE_GRH_LEN > n || (h[off] >> 4) != 6 || h[off + 6] != ROCE_GRH_NXTHDR_BTH)
			return 0;
		li->iphl = ROCE_GRH_LEN;
		li->ipv6 = 1;
		li->v1 = 1;
		li->ecn = 0; /* RoCEv1 has no IP ECN: the TClass is the GRH's */
		li->iplen = ROCE_GRH_LEN + rd16(h + off + 4);
		li->fragment = 0;
		li->l4 = off + ROCE_GRH_LEN;
		return 1;
	} else {
		return 0;
	}

	if (!is_roce_port(cfg, rd16(h + l4 + 2)))
		return 0;
	li->l4 = l4;
	li->udplen = rd16(h + l4 + 4);
	return 1;
}

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

/* Checks on the payload size for the opcode's payload rule; returns true if broken. */
static __always_inline bool payload_size_bad(const struct roce_op *op, __u32 payload, __u32 pmtu_cfg,
					     const __u8 *reth, bool dc)
{
	__u32 limit = pmtu_cfg ? pmtu_cfg : ROCE_PMTU_MAX;

	switch (op->payload) {
	case PL_NONE:
		/* a DC ACK may carry 8 bytes after its AETH (roceval_proto.h) */
		if (dc && op->family == FAM_ACK && payload == ROCE_DC_ACK_EXTRA_LEN)
			return false;
		return payload != 0;
	case PL_PMTU:
		return pmtu_cfg ? payload != pmtu_cfg : !ROCE_PMTU_IS_LEGAL(payload);
	case PL_LAST:
		return payload == 0 || payload > limit;
	case PL_ONLY:
		if (payload > limit)
			return true;
		return (op->flags & OPF_DMALEN) && reth && rd32(reth + 12) != payload;
	case PL_EIGHT:
		return payload != 8;
	}
	return false;
}

/*
 * Validates one frame of `len` bytes starting at `base`; XDP_PASS or XDP_DROP.
 * `wire` is the frame's length on the wire: above `len` when a capture kept
 * only the start of it (a snapped frame), which is then judged on the bytes
 * present and never called truncated.
 */
static __always_inline int frame_body(void *ctx, bool tc, __u32 base, __u32 len, __u32 wire)
{
	__u32 zero = 0;
	struct roceval_counters *cnt = bpf_map_lookup_elem(&counters, &zero);
	struct roceval_settings *cfg = bpf_map_lookup_elem(&settings, &zero);
	struct roceval_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct l4info *li;
	__u64 n, copy;
	__u32 avail, cap, dlen, tlen, xhl, bth, hdrs, area, payload, need, lead = 0;
	bool check_icrc, snapped, dc = false;
	const struct roce_op *op = 0;
	__u8 opcode, b1, transport, padcnt;
	struct frame_info *fi;
	__u8 *buf;

	if (!ctx || !cnt || !cfg || !s)
		return XDP_PASS;
	cnt->total[TOTAL_FRAMES]++;
	cnt->total[TOTAL_BYTES] += len;
	s->rules = 0;
	fi = &s->fi;
	li = &s->li;
	__builtin_memset(li, 0, sizeof(*li));
	fi->has_bth = 0;
	fi->hdr_end = 0;
	fi->headers_ok = 0;
	fi->icrc_checked = 0;
	fi->dc = 0;

	n = len < ROCEVAL_L2L4_MAX ? len : ROCEVAL_L2L4_MAX;
	/* Make clang bounds-check the very register the helper receives. */
	barrier_var(n);
	if (n < ETH_HLEN || n > ROCEVAL_L2L4_MAX)
		return XDP_PASS;
	if (frame_load(ctx, tc, base, s->l2l4, n))
		return XDP_PASS;
	if (!parse_l2l4(s->l2l4, n, cfg, li))
		return XDP_PASS;

	cnt->total[TOTAL_ROCE]++;
	cnt->total[TOTAL_ROCE_BYTES] += len;
	if (li->v1)
		cnt->total[TOTAL_ROCEV1]++;
	else if (li->ipv6)
		cnt->total[TOTAL_ROCEV2_IPV6]++;
	else
		cnt->total[TOTAL_ROCEV2_IPV4]++;
	fi->hdr_end = li->l4 + (li->v1 ? 0 : UDP_HLEN);
	if (li->ecn == 3)
		violate(s, cnt, RULE_ECN_CE);
	if (li->fragment) {
		violate(s, cnt, RULE_IP_FRAGMENT);
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
		goto verdict;
	}

	/*
	 * Lengths come from IP and UDP (RoCEv1: the GRH), never from the frame:
	 * Ethernet pads short frames.  They are judged against the length the
	 * frame had on the wire; a capture may hold less of it.
	 */
	if (wire < len)
		wire = len;
	avail = wire - li->l3;
	cap = len - li->l3;
	if (li->v1) {
		if (li->iplen > avail || li->iplen - ROCE_GRH_LEN < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
			violate(s, cnt, RULE_TRUNCATED);
			cnt->total[TOTAL_ICRC_UNCHECKED]++;
			goto verdict;
		}
		tlen = li->iplen - ROCE_GRH_LEN;
		xhl = ROCE_GRH_LEN;
	} else {
		if (li->iplen > avail || li->iplen < li->iphl + UDP_HLEN || li->udplen < UDP_HLEN ||
		    li->udplen > li->iplen - li->iphl ||
		    li->udplen - UDP_HLEN < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
			violate(s, cnt, RULE_TRUNCATED);
			cnt->total[TOTAL_ICRC_UNCHECKED]++;
			goto verdict;
		}
		tlen = li->udplen - UDP_HLEN;
		xhl = li->iphl + UDP_HLEN;
	}
	dlen = xhl + tlen;
	/* Whole on the wire, cut in the capture: what needs the missing bytes is not judged. */
	snapped = dlen > cap;

	check_icrc = dlen <= ROCEVAL_MAX_DATAGRAM && !snapped;
	if (snapped) {
		cnt->total[TOTAL_SNAPPED]++;
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
	} else if (check_icrc && cfg->icrc_sample > 1) {
		if (++s->icrc_tick < cfg->icrc_sample) {
			check_icrc = false;
			cnt->total[TOTAL_ICRC_SKIPPED]++;
		} else {
			s->icrc_tick = 0;
		}
	} else if (!check_icrc) {
		cnt->total[TOTAL_ICRC_UNCHECKED]++;
	}

	copy = check_icrc ? dlen : (dlen < ROCEVAL_HDR_COPY ? dlen : ROCEVAL_HDR_COPY);
	if (copy > cap)
		copy = cap;
	barrier_var(copy);
	if (copy < 1 || copy > ROCEVAL_MAX_DATAGRAM)
		goto verdict;
	if (check_icrc)
		lead = icrc_layout(s->buf, dlen);
	buf = s->buf + (lead & (CRC_LANE - 1));
	if (frame_load(ctx, tc, base + li->l3, buf + ROCE_LRH_MASK_LEN, copy))
		goto verdict;
	fi->ipv6 = li->ipv6;
	if (li->ipv6) {
		__builtin_memcpy(fi->saddr, buf + ROCE_LRH_MASK_LEN + 8, 16);
		__builtin_memcpy(fi->daddr, buf + ROCE_LRH_MASK_LEN + 24, 16);
	} else {
		__builtin_memset(fi->saddr, 0, 16);
		__builtin_memset(fi->daddr, 0, 16);
		__builtin_memcpy(fi->saddr, buf + ROCE_LRH_MASK_LEN + 12, 4);
		__builtin_memcpy(fi->daddr, buf + ROCE_LRH_MASK_LEN + 16, 4);
	}

	/*
	 * Offsets below are masked so the verifier can bound them; they are
	 * already in range.  A snapped frame may end before a header: from
	 * there on nothing is judged (`copy` is what the capture holds).
	 */
	if (xhl + ROCE_BTH_LEN > copy)
		goto verdict;
	bth = (ROCE_LRH_MASK_LEN + xhl) & 127;
	opcode = buf[bth];
	b1 = buf[bth + 1];
	fi->opcode = opcode;
	fi->dqpn = rd24(buf + bth + 5);
	fi->flow_qpn = fi->dqpn;
	fi->psn = rd24(buf + bth + 9);
	fi->has_bth = 1;
	fi->hdr_end += ROCE_BTH_LEN;
	padcnt = (b1 >> 4) & 3;
	transport = opcode >> 5;

	if (b1 & 0x0F)
		violate(s, cnt, RULE_TVER);
	if (!pkey_allowed(cfg, rd16(buf + bth + 2)))
		violate(s, cnt, RULE_PKEY);
	if ((cfg->check_resv6 && (buf[bth + 4] & 0x3F)) || (buf[bth + 8] & 0x7F))
		violate(s, cnt, RULE_RESERVED);
	if (tlen & 3)
		violate(s, cnt, RULE_PAD);

	if (transport >= ROCE_TR_VENDOR6) {
		violate(s, cnt, RULE_OPCODE_VENDOR);
		goto icrc;
	}
	if (transport == ROCE_TR_CNP) {
		if (opcode != ROCE_OPCODE_CNP) {
			violate(s, cnt, RULE_OPCODE);
			goto icrc;
		}
		violate(s, cnt, RULE_CNP);
		if (b1 & 0x80)
			violate(s, cnt, RULE_SE);
		if (padcnt)
			violate(s, cnt, RULE_PAD);
		if (tlen != ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN + ROCE_ICRC_LEN) {
			violate(s, cnt, RULE_PAYLOAD_LENGTH);
			if (tlen < ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN + ROCE_ICRC_LEN)
				goto icrc;
		}
		if (xhl + ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN > copy)
			goto icrc;
		fi->hdr_end += ROCE_CNP_RESERVED_LEN;
		{
			__u8 rv = 0;

			for (int i = 0; i < ROCE_CNP_RESERVED_LEN; i++)
				rv |= buf[bth + ROCE_BTH_LEN + i];
			if (rv)
				violate(s, cnt, RULE_RESERVED);
		}
		goto icrc;
	}

	op = &roce_ops[opcode & 0x1F];
	if (!(op->transports & (1u << transport))) {
		op = 0;
		violate(s, cnt, RULE_OPCODE);
		goto icrc;
	}

	dc = transport == ROCE_TR_RD && !cfg->rd_strict;
	hdrs = roce_transport_hdr_len(transport, opcode, op->flags, dc);
	need = ROCE_BTH_LEN + hdrs + op->xth_len + ROCE_ICRC_LEN;
	if (tlen < need) {
		violate(s, cnt, RULE_TRUNCATED);
		goto icrc;
	}
	if (xhl + need - ROCE_ICRC_LEN > copy)
		goto icrc;
	fi->hdr_end += hdrs + op->xth_len;
	fi->dc = dc;
	/*
	 * The transport's own headers: Resv8 in RDETH, DETH and XRCETH.  The
	 * DC header's fields are not public, so none of them is judged; its
	 * first word carries the sender's QP number (README, "mlx5 DC").
	 */
	{
		__u32 x = (bth + ROCE_BTH_LEN) & 255;

		if (dc) {
			if (op->flags & OPF_REQUEST)
				fi->flow_qpn = rd24(buf + x + 1);
		} else if (transport == ROCE_TR_RD) {
			if (buf[x] || ((op->flags & OPF_REQUEST) && buf[x + ROCE_RDETH_LEN + 4]))
				violate(s, cnt, RULE_RESERVED);
		} else if (transport == ROCE_TR_UD) {
			if (buf[x + 4])
				violate(s, cnt, RULE_RESERVED);
		} else if (transport == ROCE_TR_XRC && hdrs) {
			if (buf[x])
				violate(s, cnt, RULE_RESERVED);
		}
	}

	area = tlen - need;
	if (padcnt > area) {
		violate(s, cnt, RULE_PAD);
		payload = 0;
	} else {
		payload = area - padcnt;
	}
	if (padcnt && (op->payload == PL_NONE || op->payload == PL_PMTU))
		violate(s, cnt, RULE_PAD);

	{
		__u32 xth = (bth + ROCE_BTH_LEN + hdrs) & 255;
		const __u8 *reth = op->reth_off != ROCE_NO_HDR ? buf + ((xth + op->reth_off) & 255) : 0;

		fi->payload = payload;
		fi->has_reth = reth != 0;
		fi->dmalen = reth ? rd32(reth + 12) : 0;
		fi->has_aeth = op->aeth_off != ROCE_NO_HDR;
		fi->aeth = fi->has_aeth ? rd32(buf + ((xth + op->aeth_off) & 255)) : 0;
		fi->headers_ok = 1;
		/* RDMA CM (cm.bpf.h): a learned connection's PMTU overrides the setting. */
		if (payload_size_bad(op, payload, cm_data_pmtu(fi, cfg, rd16(buf + bth + 2), cfg->pmtu), reth, dc))
			violate(s, cnt, RULE_PAYLOAD_LENGTH);
		if ((b1 & 0x80) && !(op->flags & OPF_SE_OK))
			violate(s, cnt, RULE_SE);
		if (op->atomic_off != ROCE_NO_HDR && (buf[((xth + op->atomic_off) & 255) + 7] & 7))
			violate(s, cnt, RULE_ATOMIC_ALIGN);
		if (op->aeth_off != ROCE_NO_HDR) {
			__u8 syn = buf[(xth + op->aeth_off) & 255];

			switch (syn >> 5) {
			case 0: /* ACK */
				break;
			case 1:
				violate(s, cnt, RULE_NAK_RNR);
				break;
			case 3:
				switch (syn & 0x1F) {
				case 0:
					violate(s, cnt, RULE_NAK_PSN);
					break;
				case 1:
				case 4:
					violate(s, cnt, RULE_NAK_INVALID);
					break;
				case 2:
					violate(s, cnt, RULE_NAK_ACCESS);
					break;
				case 3:
					violate(s, cnt, RULE_NAK_OPERATIONAL);
					break;
				default:
					violate(s, cnt, RULE_AETH_SYNDROME);
				}
				break;
			default:
				violate(s, cnt, RULE_AETH_SYNDROME);
			}
		}
	}

icrc:
	if (check_icrc) {
		/* a multiple of CRC_LANE; the stored ICRC follows */
		__u64 crc_len = lead + ROCE_LRH_MASK_LEN + dlen - ROCE_ICRC_LEN;
		__u32 found, expected;

		barrier_var(crc_len);
		if (crc_len > ROCEVAL_SCRATCH_SIZE) /* never: for the verifier */
			goto verdict;
		found = roceval_load_le32(s->buf + crc_len);
		icrc_mask(buf, li->iphl, li->ipv6, li->v1);
		expected = roceval_icrc(s->buf, crc_len);
		fi->icrc_checked = 1;
		fi->icrc_expected = expected;
		fi->icrc_found = found;
		if (expected == found) {
			cnt->total[TOTAL_ICRC_OK]++;
		} else {
			cnt->total[TOTAL_ICRC_BAD]++;
			violate(s, cnt, RULE_ICRC);
		}
	}

verdict:
	/* RDMA CM (cm.bpf.h): learns connections from QP1 MADs. */
	cm_verdict(ctx, tc, s, base + li->l4 + (li->v1 ? 0 : UDP_HLEN));
	if (fi->has_bth)
		flow_update(s, cnt, cfg, len);
	if (cfg->trace_on && s->rules)
		trace_sample(ctx, tc, base, len, wire == ROCEVAL_WIRE_UNKNOWN ? len : wire, s, cfg, cnt);
	if (cfg->enforce && (s->rules & ROCEVAL_ERROR_MASK)) {
		cnt->total[TOTAL_DROPPED]++;
		return XDP_DROP;
	}
	return XDP_PASS;
}

/*
 * Global functions: the verifier checks each once, not once per caller, and
 * the replay program calls roceval_frame in a loop.
 */
__noinline int roceval_frame(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire)
{
	return frame_body(ctx, false, base, len, wire);
}

__noinline int roceval_frame_skb(struct __sk_buff *skb, __u32 len)
{
	return frame_body(skb, true, 0, len, len);
}

SEC("xdp")
int roceval_xdp(struct xdp_md *ctx)
{
	__u32 len = bpf_xdp_get_buff_len(ctx);

	return roceval_frame(ctx, 0, len, len);
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
	return roceval_frame_skb(skb, skb->len) == XDP_DROP ? TCX_DROP : TCX_NEXT;
}

/*
 * Offline replay: the input is a batch (batch.bpf.h; BPF_PROG_TEST_RUN wants
 * at least 14 bytes, so a batch may carry padding after its records).
 * Returns how many frames it validated so userspace can tell a malformed
 * batch from a complete one.
 */
SEC("xdp.frags")
int roceval_replay(struct xdp_md *ctx)
{
	return batch_walk(ctx, roceval_frame);
}
