/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The traffic class a RoCE frame travels in, judged against the settings:
 * the DSCP and the outer VLAN tag's priority of data and of CNPs, and ECN
 * capability of data (docs/congestion.md).  Data is every frame
 * with a BTH but CNPs and the RDMA CM MADs on QP1, which real hosts send
 * in the default class (rdma_cm's MADs at DSCP 0 and Not-ECT beside data
 * at DSCP 26 or ECT(1) in the ConnectX and NVMe-oF captures).
 */
#ifndef ROCEVAL_QOS_BPF_H
#define ROCEVAL_QOS_BPF_H

#include "frame.bpf.h"
#include "roceval_cm.h"
#include "kfuncs.bpf.h"

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
 * Set by the loader where the kernel has bpf_xdp_metadata_rx_vlan_tag (6.8): elsewhere the
 * verifier drops the call as dead code, which a kernel without it needs,
 * since libbpf leaves the unresolved call for the verifier to refuse.
 */
const volatile bool rx_vlan_offered;

/*
 * The outer VLAN tag's priority | ROCEVAL_PCP_TAGGED, or 0 for an untagged
 * frame.  A NIC that strips tags in hardware hands the outer one to its
 * driver beside the frame: at tc ingress the stack has put it in the
 * socket buffer (as it does with a tag the frame still carried), and XDP
 * bound to the device (rx_meta: roceval_xdp_nic) asks the driver for it;
 * other XDP sees only the frame's bytes, where a stripped tag is not.  A
 * tag beside the frame is the outer one, before any the frame carries.
 */
static __always_inline __u32 qos_pcp(void *ctx, bool tc, bool rx_meta, const struct roceval_scratch *s)
{
	__be16 proto;
	__u16 tci;

	if (tc && ((struct __sk_buff *)ctx)->vlan_present)
		return ROCEVAL_PCP_TAGGED | ((struct __sk_buff *)ctx)->vlan_tci >> 13;
	if (rx_meta && rx_vlan_offered && !bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci))
		return ROCEVAL_PCP_TAGGED | tci >> 13;
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
 * frame's first copy here rather than by the parse, which every frame runs;
 * the priority only when a setting asks for one (it may cost a driver call).
 */
static __always_inline void qos_judge(void *ctx, bool tc, bool rx_meta, struct roceval_scratch *s,
				      struct roceval_counters *cnt, const struct roceval_settings *cfg)
{
	const struct l4info *li = &s->li;
	bool cnp = s->fi.opcode == ROCE_OPCODE_CNP;
	__u32 pcp, want;
	__u8 dscp;

	if (!cnp && s->fi.dqpn == ROCE_GSI_QPN)
		return;
	want = cnp ? cfg->cnp_pcp : cfg->pcp;
	if (want != ROCEVAL_SETTING_ANY) {
		pcp = qos_pcp(ctx, tc, rx_meta, s);
		if ((pcp & ROCEVAL_PCP_TAGGED) && (pcp & 7) != want)
			violate(s, cnt, cnp ? RULE_CNP_PCP : RULE_PCP);
	}
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
