// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>

#include "icrc.h"
#include "pktgen.h"
#include "roceval_proto.h"
#include "wire.h"


/* The opcode's extended headers, laid out as the opcode table places them. */
static void put_xth(const struct pkt_spec *s, const struct roce_op *op, uint8_t *x)
{
	memset(x, 0, op->xth_len);
	if (op->reth_off != ROCE_NO_HDR) {
		put64(x + op->reth_off, s->va);
		put32(x + op->reth_off + 8, s->rkey);
		put32(x + op->reth_off + 12, s->dmalen);
	}
	if (op->aeth_off != ROCE_NO_HDR) {
		put32(x + op->aeth_off, s->aeth);
		if (op->family == FAM_ATOMIC_ACK)
			put64(x + op->aeth_off + ROCE_AETH_LEN, s->orig);
	}
	if (op->atomic_off != ROCE_NO_HDR) {
		put64(x + op->atomic_off, s->va);
		put32(x + op->atomic_off + 8, s->rkey);
		put64(x + op->atomic_off + 12, s->swap_add);
		put64(x + op->atomic_off + 20, s->compare);
	}
	/* ImmDt and IETH are always the last 4 bytes (WRITE_ONLY_WITH_IMMEDIATE: after the RETH) */
	if (op->flags & (OPF_IMM | OPF_IETH))
		put32(x + op->xth_len - 4, s->imm);
}

/* Ethernet and the optional 802.1Q tag; the offset of the IP header. */
static uint32_t put_l2(const struct pkt_spec *s, uint8_t *frame)
{
	uint32_t off = 12;

	memcpy(frame, s->dst_mac, 6);
	memcpy(frame + 6, s->src_mac, 6);
	if (s->vlan >= 0) {
		put16(frame + off, 0x8100);
		put16(frame + off + 2, s->vlan & 0x0FFF);
		off += VLAN_HLEN;
	}
	put16(frame + off, s->ipv6 ? 0x86DD : 0x0800);
	return off + 2;
}

/* The IP header for a UDP datagram of `udplen` bytes; its length.  The IPv4 checksum is pkt_finish()'s. */
static uint32_t put_ip(const struct pkt_spec *s, uint8_t *p, uint32_t udplen)
{
	if (s->ipv6) {
		put32(p, 6u << 28 | (uint32_t)s->tos << 20 | (s->flow_label & 0xFFFFF));
		put16(p + 4, udplen);
		p[6] = 17;
		p[7] = s->ttl;
		memcpy(p + 8, s->saddr, 16);
		memcpy(p + 24, s->daddr, 16);
		return IPV6_HLEN;
	}
	p[0] = 0x45;
	p[1] = s->tos;
	put16(p + 2, IPV4_HLEN + udplen);
	put16(p + 4, s->ip_id);
	put16(p + 6, 0x4000); /* DF: RoCEv2 is never fragmented */
	p[8] = s->ttl;
	p[9] = 17;
	put16(p + 10, 0);
	memcpy(p + 12, s->saddr, 4);
	memcpy(p + 16, s->daddr, 4);
	return IPV4_HLEN;
}

/* The UDP header, its checksum zero (RoCEv2 leaves it unused), then the BTH. */
static void put_udp_bth(const struct pkt_spec *s, uint8_t *p, uint32_t udplen, uint32_t padcnt)
{
	put16(p, s->sport);
	put16(p + 2, ROCE_UDP_PORT);
	put16(p + 4, udplen);
	put16(p + 6, 0);
	p += UDP_HLEN;
	p[0] = s->opcode;
	p[1] = s->se << 7 | s->migreq << 6 | (padcnt & 3) << 4;
	put16(p + 2, s->pkey);
	p[4] = s->fecn << 7 | s->becn << 6;
	put24(p + 5, s->dqpn);
	p[8] = s->ackreq << 7;
	put24(p + 9, s->psn);
}

size_t pkt_build(const struct pkt_spec *s, uint8_t *frame, size_t cap, struct pkt_layout *lay)
{
	unsigned int transport = s->opcode >> 5;
	const struct roce_op *op = &roce_ops[s->opcode & 0x1F];
	bool defined = transport < ROCE_TR_CNP || transport == ROCE_TR_XRC;
	uint32_t off, tr_hdrs = 0, xth_len = 0, padcnt, pad_bytes, udplen;

	if (s->opcode == ROCE_OPCODE_CNP) {
		op = NULL;
		xth_len = ROCE_CNP_RESERVED_LEN; /* zeros */
	} else if (defined && (op->transports & (1u << transport))) {
		tr_hdrs = roce_transport_hdr_len(transport, s->opcode, op->flags, 0); /* gen writes no DC */
		xth_len = op->xth_len;
	} else {
		op = NULL; /* reserved: a BTH and payload, nothing the table describes */
	}
	padcnt = s->padcnt >= 0 ? (uint32_t)s->padcnt : (4 - (s->payload_len & 3)) & 3;
	pad_bytes = s->pad_bytes >= 0 ? (uint32_t)s->pad_bytes : padcnt;
	udplen = UDP_HLEN + ROCE_BTH_LEN + tr_hdrs + xth_len + s->payload_len + pad_bytes + ROCE_ICRC_LEN;
	if (ETH_HLEN + VLAN_HLEN + IPV6_HLEN + (size_t)udplen > cap)
		return 0;

	memset(lay, 0, sizeof(*lay));
	lay->ipv6 = s->ipv6;
	lay->l3 = put_l2(s, frame);
	lay->l4 = lay->l3 + put_ip(s, frame + lay->l3, udplen);
	lay->bth = lay->l4 + UDP_HLEN;
	put_udp_bth(s, frame + lay->l4, udplen, padcnt);
	off = lay->bth + ROCE_BTH_LEN;

	/* the transport's own headers: DETH on UD, nothing else is generated */
	memset(frame + off, 0, tr_hdrs);
	if (op && transport == ROCE_TR_UD) {
		put32(frame + off, s->qkey);
		put24(frame + off + 5, s->src_qp);
	}
	off += tr_hdrs;
	lay->xth = off;
	if (op)
		put_xth(s, op, frame + off);
	else
		memset(frame + off, 0, xth_len);
	off += xth_len;

	lay->payload = off;
	if (s->payload_len)
		memcpy(frame + off, s->payload, s->payload_len);
	off += s->payload_len;
	lay->pad = off;
	memset(frame + off, 0, pad_bytes);
	off += pad_bytes;
	lay->icrc = off;
	off += ROCE_ICRC_LEN;

	lay->tr_hdrs = tr_hdrs;
	lay->xth_len = xth_len;
	lay->payload_len = s->payload_len;
	lay->len = off;
	pkt_finish(frame, lay);
	return off;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return ~sum;
}

void pkt_ipv4_csum(uint8_t *frame, const struct pkt_layout *lay)
{
	uint8_t *ip = frame + lay->l3;

	if (lay->ipv6)
		return;
	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, IPV4_HLEN)));
}

uint16_t pkt_udp_csum(const uint8_t *frame, const struct pkt_layout *lay)
{
	const uint8_t *ip = frame + lay->l3, *udp = frame + lay->l4;
	uint32_t udplen = (uint32_t)udp[4] << 8 | udp[5], sum;
	uint8_t tail[2] = { 0, 17 };
	uint16_t c;

	sum = lay->ipv6 ? csum_add(0, ip + 8, 32) : csum_add(0, ip + 12, 8);
	sum = csum_add(sum, tail, 2);
	sum += udplen;
	sum = csum_add(sum, udp, 6); /* everything but the checksum itself */
	sum = csum_add(sum, udp + 8, udplen - UDP_HLEN);
	c = csum_fold(sum);
	return c ? c : 0xFFFF; /* 0 means "no checksum" */
}

void pkt_finish(uint8_t *frame, const struct pkt_layout *lay)
{
	uint8_t *udp = frame + lay->l4;

	pkt_ipv4_csum(frame, lay);
	roce_icrc_fill(frame + lay->l3, lay->len - lay->l3);
	/* IPv4 RoCEv2 senders leave it 0; IPv6 forbids a zero UDP checksum */
	put16(udp + 6, lay->ipv6 ? pkt_udp_csum(frame, lay) : 0);
}
