/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Ethernet to UDP: which frames are RoCE at all.  A frame this parse turns
 * away is counted as a frame and otherwise left alone.
 */
#ifndef ROCEVAL_PARSE_BPF_H
#define ROCEVAL_PARSE_BPF_H

#include "frame.bpf.h"

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

/* IPv4 at `off`; the UDP header's offset, or 0 when the datagram is not UDP to look at. */
static __always_inline __u32 parse_ipv4(const __u8 *h, __u32 n, __u32 off, struct l4info *li)
{
	__u8 vihl, ihl;
	__u16 frag;
	__u32 l4;

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
	return l4;
}

/* IPv6 at `off`, as parse_ipv4(). */
static __always_inline __u32 parse_ipv6(const __u8 *h, __u32 n, __u32 off, struct l4info *li)
{
	__u32 l4;
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
	return l4;
}

/* A RoCEv1 GRH at `off`: it has IPv6's layout, and NxtHdr 0x1B says a BTH follows. */
static __always_inline int parse_grh(const __u8 *h, __u32 n, __u32 off, struct l4info *li)
{
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
}

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

	if (proto == ETH_P_IP)
		l4 = parse_ipv4(h, n, off, li);
	else if (proto == ETH_P_IPV6)
		l4 = parse_ipv6(h, n, off, li);
	else if (proto == ROCE_ETH_P_ROCEV1)
		return parse_grh(h, n, off, li);
	else
		return 0;
	if (!l4 || !is_roce_port(cfg, rd16(h + l4 + 2)))
		return 0;
	li->l4 = l4;
	li->udplen = rd16(h + l4 + 4);
	return 1;
}

#endif /* ROCEVAL_PARSE_BPF_H */
