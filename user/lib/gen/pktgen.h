/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_PKTGEN_H
#define ROCEVAL_PKTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Builds one RoCEv2 frame: Ethernet, an optional 802.1Q tag, IPv4 or IPv6,
 * UDP to 4791, the BTH and the extended headers the opcode table
 * (roceval_proto.h) says the opcode carries, payload, pad and ICRC.
 */
struct pkt_spec {
	uint8_t src_mac[6], dst_mac[6];
	int vlan; /* VLAN id, or -1 for an untagged frame */
	bool ipv6;
	uint8_t saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	uint8_t tos;		      /* DSCP << 2 | ECN; the IPv6 traffic class */
	uint8_t ttl;		      /* or hop limit */
	uint16_t ip_id;
	uint32_t flow_label;
	uint16_t sport;

	uint8_t opcode;
	bool se, migreq, fecn, becn, ackreq;
	uint16_t pkey;
	uint32_t dqpn, psn;

	uint32_t qkey, src_qp;		/* DETH */
	uint64_t va;			/* RETH or AtomicETH */
	uint32_t rkey, dmalen;		/* RETH (rkey also AtomicETH) */
	uint32_t aeth;			/* syndrome << 24 | MSN */
	uint64_t swap_add, compare;	/* AtomicETH */
	uint64_t orig;			/* AtomicAckETH */
	uint32_t imm;			/* ImmDt or IETH */

	const uint8_t *payload;
	uint32_t payload_len;
	int padcnt;	/* -1: what the payload needs */
	int pad_bytes;	/* -1: as many as padcnt says */
};

/* Where the parts of a built frame are, for faults that edit it afterwards. */
struct pkt_layout {
	uint32_t l3, l4, bth, xth; /* xth: after the transport's RDETH/DETH/XRCETH */
	uint32_t tr_hdrs;	   /* bytes of RDETH/DETH/XRCETH */
	uint32_t xth_len;	   /* operation-specific extended header bytes */
	uint32_t payload, payload_len, pad;
	uint32_t icrc, len;
	bool ipv6;
};

#define PKT_MAX_FRAME (14 + 4 + 40 + 8 + 12 + 8 + 28 + 4096 + 3 + 4 + 64)

/* The frame length, or 0 when it does not fit in cap bytes. */
size_t pkt_build(const struct pkt_spec *s, uint8_t *frame, size_t cap, struct pkt_layout *lay);
/* Recomputes the IPv4 header checksum, then the ICRC, then the UDP checksum (IPv6 only). */
void pkt_finish(uint8_t *frame, const struct pkt_layout *lay);
/* The IPv4 header checksum alone: what a router updates after changing TTL or DSCP. */
void pkt_ipv4_csum(uint8_t *frame, const struct pkt_layout *lay);
/* The UDP checksum over the pseudo-header and the datagram (IPv6 requires one). */
uint16_t pkt_udp_csum(const uint8_t *frame, const struct pkt_layout *lay);

#endif
