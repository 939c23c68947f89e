/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The traffic class a RoCE frame travels in, judged against the settings:
 * the DSCP and the outer VLAN tag's priority of data and of CNPs, and ECN
 * capability of data (README, "Congestion and QoS").  Data is every frame
 * with a BTH but CNPs and the RDMA CM MADs on QP1, which real hosts send
 * in the default class (rdma_cm's MADs at DSCP 0 and Not-ECT beside data
 * at DSCP 26 or ECT(1) in the ConnectX and NVMe-oF captures).
 */
#ifndef ROCEVAL_QOS_BPF_H
#define ROCEVAL_QOS_BPF_H

#include "frame.bpf.h"
#include "roceval_cm.h"

static __always_inline bool dscp_allowed(const struct roceval_settings *cfg, __u8 dscp)
{
	__u32 n = cfg->n_dscp;

#pragma unroll
	for (int i = 0; i < ROCEVAL_MAX_DSCPS; i++)
		if (i < n && cfg->dscp[i] == dscp)
			return true;
	return false;
}

/*
 * The outer VLAN tag's priority | ROCEVAL_PCP_TAGGED, or 0 for an untagged
 * frame.  At tc ingress the stack has taken the outer tag out of the frame
 * into the socket buffer; XDP on a NIC that strips tags in hardware sees
 * none, and an untagged frame has no priority to judge.
 */
static __always_inline __u32 qos_pcp(void *ctx, bool tc, const struct roceval_scratch *s)
{
	if (tc && ((struct __sk_buff *)ctx)->vlan_present)
		return ROCEVAL_PCP_TAGGED | ((struct __sk_buff *)ctx)->vlan_tci >> 13;
	/* a tag between the MAC addresses and the IP header: its TCI right after them */
	return s->li.l3 > ETH_HLEN ? ROCEVAL_PCP_TAGGED | s->l2l4[ETH_HLEN] >> 5 : 0;
}

/* The DSCP of the IP header the parse found (the IPv6 traffic class straddles its first two bytes). */
static __always_inline __u8 qos_dscp(const struct roceval_scratch *s)
{
	const __u8 *ip = s->l2l4 + (s->li.l3 & 31);

	return s->li.ipv6 ? (ip[0] & 0x0F) << 2 | ip[1] >> 6 : ip[1] >> 2;
}

/*
 * Only with one of the QoS settings on (ROCEVAL_CC_QOS): read from the
 * frame's first copy here rather than by the parse, which every frame runs.
 */
static __always_inline void qos_judge(void *ctx, bool tc, struct roceval_scratch *s, struct roceval_counters *cnt,
				      const struct roceval_settings *cfg)
{
	const struct l4info *li = &s->li;
	bool cnp = s->fi.opcode == ROCE_OPCODE_CNP;
	__u32 pcp, want;
	__u8 dscp;

	if (!cnp && s->fi.dqpn == ROCE_GSI_QPN)
		return;
	pcp = qos_pcp(ctx, tc, s);
	want = cnp ? cfg->cnp_pcp : cfg->pcp;
	if ((pcp & ROCEVAL_PCP_TAGGED) && want != ROCEVAL_SETTING_ANY && (pcp & 7) != want)
		violate(s, cnt, cnp ? RULE_CNP_PCP : RULE_PCP);
	/* RoCEv1 has no IP header: its GRH's traffic class is not DSCP and ECN */
	if (li->v1)
		return;
	dscp = qos_dscp(s);
	if (cnp) {
		if (cfg->cnp_dscp != ROCEVAL_SETTING_ANY && dscp != cfg->cnp_dscp)
			violate(s, cnt, RULE_CNP_DSCP);
		return;
	}
	if (cfg->ect_required && !li->ecn)
		violate(s, cnt, RULE_NOT_ECT);
	if (cfg->n_dscp && !dscp_allowed(cfg, dscp))
		violate(s, cnt, RULE_DSCP);
}

#endif /* ROCEVAL_QOS_BPF_H */
