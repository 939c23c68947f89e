/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The transport headers of a RoCE datagram: the BTH, the extended headers
 * its opcode brings (roce_ops in roceval_proto.h), the payload size and the
 * AETH syndrome.  Everything here reads the datagram as copied into the
 * scratch buffer, where it starts ROCE_LRH_MASK_LEN bytes in; offsets are
 * masked so the verifier can bound them, and they are already in range.
 */
#ifndef ROCEVAL_BTH_BPF_H
#define ROCEVAL_BTH_BPF_H

#include "frame.bpf.h"
#include "cm.bpf.h"

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

/* Checks on the payload size for the opcode's payload rule; returns true if broken. */
static __always_inline bool payload_size_bad(const struct roce_op *op, __u32 payload, __u32 pmtu_cfg,
					     const struct frame_info *fi, bool dc)
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
		return (op->flags & OPF_DMALEN) && fi->has_reth && fi->dmalen != payload;
	case PL_EIGHT:
		return payload != 8;
	}
	return false;
}

/* IBA 9.3.5: the rule an AETH syndrome counts under, or -1 for an ACK. */
static __always_inline int aeth_rule(__u8 syn)
{
	switch (syn >> 5) {
	case 0:
		return -1;
	case 1:
		return RULE_NAK_RNR;
	case 3:
		switch (syn & 0x1F) {
		case 0:
			return RULE_NAK_PSN;
		case 1:
		case 4:
			return RULE_NAK_INVALID;
		case 2:
			return RULE_NAK_ACCESS;
		case 3:
			return RULE_NAK_OPERATIONAL;
		}
	}
	return RULE_AETH_SYNDROME;
}

/* A CNP (IBA A17.9.3): a BTH, 16 reserved bytes, no payload, no pad. */
static __always_inline void judge_cnp(struct roceval_scratch *s, struct roceval_counters *cnt,
				      const __u8 *buf, __u32 bth, __u8 b1, __u32 xhl, __u32 tlen, __u64 copy)
{
	violate(s, cnt, RULE_CNP);
	if (b1 & 0x80)
		violate(s, cnt, RULE_SE);
	if ((b1 >> 4) & 3)
		violate(s, cnt, RULE_PAD);
	if (tlen != ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN + ROCE_ICRC_LEN) {
		violate(s, cnt, RULE_PAYLOAD_LENGTH);
		if (tlen < ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN + ROCE_ICRC_LEN)
			return;
	}
	if (xhl + ROCE_BTH_LEN + ROCE_CNP_RESERVED_LEN > copy)
		return;
	s->fi.hdr_end += ROCE_CNP_RESERVED_LEN;
	/* two words, not 16 bytes: unaligned loads are cheap where roceval runs (rd16()) */
	if (*(const __u64 *)(buf + bth + ROCE_BTH_LEN) | *(const __u64 *)(buf + bth + ROCE_BTH_LEN + 8))
		violate(s, cnt, RULE_RESERVED);
}

/*
 * The transport's own headers at `x`: Resv8 in RDETH, DETH and XRCETH.
 * The DC header's fields are not public, so none of them is judged; its
 * first word carries the sender's QP number (docs/protocol.md, "mlx5 DC").
 */
static __always_inline void judge_transport_hdrs(struct roceval_scratch *s, struct roceval_counters *cnt,
						 const __u8 *buf, __u32 x, const struct roce_op *op,
						 __u8 transport, __u32 hdrs, bool dc)
{
	if (dc) {
		s->fi.src_qpn = rd24(buf + x + 1);
		if (op->flags & OPF_REQUEST)
			s->fi.flow_qpn = s->fi.src_qpn;
	} else if (transport == ROCE_TR_RD) {
		if (buf[x] || ((op->flags & OPF_REQUEST) && buf[x + ROCE_RDETH_LEN + 4]))
			violate(s, cnt, RULE_RESERVED);
	} else if (transport == ROCE_TR_UD) {
		s->fi.src_qpn = rd24(buf + x + 5);
		if (buf[x + 4])
			violate(s, cnt, RULE_RESERVED);
	} else if (transport == ROCE_TR_XRC && hdrs) {
		if (buf[x])
			violate(s, cnt, RULE_RESERVED);
	}
}

_Static_assert(ROCE_DC_HDR_LEN + ROCE_DC_CONNECT_LEN <= 63 && ROCE_RDETH_LEN + ROCE_DETH_LEN <= 63,
	       "judge_op bounds a transport's header length by 63");

/* The extended headers and the payload of an opcode its transport defines. */
static __always_inline void judge_op(struct roceval_scratch *s, struct roceval_counters *cnt,
				     const struct roceval_settings *cfg, const __u8 *buf, __u32 bth,
				     const struct roce_op *op, __u32 xhl, __u32 tlen, __u64 copy)
{
	struct frame_info *fi = &s->fi;
	__u8 opcode = buf[bth], b1 = buf[bth + 1], padcnt = (b1 >> 4) & 3, transport = opcode >> 5;
	bool dc = transport == ROCE_TR_RD && !cfg->rd_strict;
	__u32 hdrs = roce_transport_hdr_len(transport, opcode, op->flags, dc), need;
	__u32 xth, area, payload;
	int aeth;

	/*
	 * Through map memory, so that the verifier takes the length for any of
	 * them: as the constant each transport gives, the paths after it
	 * differed in every offset and never met again.
	 */
	s->hdrs = hdrs;
	hdrs = *(volatile __u32 *)&s->hdrs & 63;
	need = ROCE_BTH_LEN + hdrs + op->xth_len + ROCE_ICRC_LEN;
	if (tlen < need) {
		violate(s, cnt, RULE_TRUNCATED);
		return;
	}
	if (xhl + need - ROCE_ICRC_LEN > copy)
		return;
	fi->hdr_end += hdrs + op->xth_len;
	fi->dc = dc;
	judge_transport_hdrs(s, cnt, buf, (bth + ROCE_BTH_LEN) & 255, op, transport, hdrs, dc);

	area = tlen - need;
	if (padcnt > area) {
		violate(s, cnt, RULE_PAD);
		payload = 0;
	} else {
		payload = area - padcnt;
	}
	if (padcnt && (op->payload == PL_NONE || op->payload == PL_PMTU))
		violate(s, cnt, RULE_PAD);

	xth = (bth + ROCE_BTH_LEN + hdrs) & 255;
	fi->payload = payload;
	/* a flag and the length, not a pointer or none: the paths after meet again */
	fi->has_reth = op->reth_off != ROCE_NO_HDR;
	fi->dmalen = fi->has_reth ? rd32(buf + ((xth + op->reth_off) & 255) + 12) : 0;
	fi->has_aeth = op->aeth_off != ROCE_NO_HDR;
	fi->aeth = fi->has_aeth ? rd32(buf + ((xth + op->aeth_off) & 255)) : 0;
	fi->headers_ok = 1;
	/* RDMA CM (cm.bpf.h): a learned connection's PMTU overrides the setting. */
	fi->pmtu_conf = cm_data_pmtu(fi, cfg, rd16(buf + bth + 2), cfg->pmtu);
	if (payload_size_bad(op, payload, fi->pmtu_conf, fi, dc))
		violate(s, cnt, RULE_PAYLOAD_LENGTH);
	if ((b1 & 0x80) && !(op->flags & OPF_SE_OK))
		violate(s, cnt, RULE_SE);
	if (op->atomic_off != ROCE_NO_HDR && (buf[((xth + op->atomic_off) & 255) + 7] & 7))
		violate(s, cnt, RULE_ATOMIC_ALIGN);
	if (op->aeth_off != ROCE_NO_HDR) {
		aeth = aeth_rule(buf[(xth + op->aeth_off) & 255]);
		if (aeth >= 0)
			violate(s, cnt, aeth);
	}
}

/*
 * The BTH and everything after it, in a datagram whose IP and UDP headers
 * (RoCEv1: the GRH) take `xhl` bytes and whose transport payload (BTH to
 * ICRC) takes `tlen`; `buf` holds the first `copy` bytes of it.  A snapped
 * frame may end before a header: from there on nothing is judged.
 */
static __always_inline void judge_transport(struct roceval_scratch *s, struct roceval_counters *cnt,
					    const struct roceval_settings *cfg, const __u8 *buf, __u32 xhl,
					    __u32 tlen, __u64 copy)
{
	struct frame_info *fi = &s->fi;
	__u32 bth = (ROCE_LRH_MASK_LEN + xhl) & 127;
	__u8 opcode, b1, transport;
	const struct roce_op *op;

	if (xhl + ROCE_BTH_LEN > copy)
		return;
	opcode = buf[bth];
	b1 = buf[bth + 1];
	transport = opcode >> 5;
	fi->opcode = opcode;
	fi->dqpn = rd24(buf + bth + 5);
	fi->flow_qpn = fi->dqpn;
	fi->psn = rd24(buf + bth + 9);
	fi->ackreq = buf[bth + 8] >> 7;
	fi->sport = s->li.v1 ? 0 : rd16(buf + ((bth - UDP_HLEN) & 127));
	fi->tlen = tlen;
	fi->has_bth = 1;
	fi->hdr_end += ROCE_BTH_LEN;

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
		return;
	}
	if (transport == ROCE_TR_CNP) {
		if (opcode != ROCE_OPCODE_CNP)
			violate(s, cnt, RULE_OPCODE);
		else
			judge_cnp(s, cnt, buf, bth, b1, xhl, tlen, copy);
		return;
	}
	op = &roce_ops[opcode & 0x1F];
	if (!(op->transports & (1u << transport))) {
		violate(s, cnt, RULE_OPCODE);
		return;
	}
	judge_op(s, cnt, cfg, buf, bth, op, xhl, tlen, copy);
}

#endif /* ROCEVAL_BTH_BPF_H */
