// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Seeds: a valid frame for a transport/opcode pair, every field the spec leaves free drawn at random. */
#include <string.h>

#include "datapath.h"
#include "roceval_cm.h"
#include "wire.h"

int nseeds;
struct seed seeds[512];

static uint32_t ip_csum(const uint8_t *p, uint32_t n)
{
	uint32_t s = 0;

	for (uint32_t i = 0; i < n; i += 2)
		s += get16(p + i);
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return ~s & 0xFFFF;
}

static uint32_t pick_payload(const struct roce_op *op, uint32_t pmtu)
{
	switch (op->payload) {
	case PL_PMTU:
		return pmtu;
	case PL_LAST:
		return 1 + rnd_below(chance(50) ? 64 : pmtu);
	case PL_ONLY:
		return rnd_below(chance(50) ? 64 : pmtu + 1);
	case PL_EIGHT:
		return 8;
	default:
		return 0;
	}
}

/* Ethernet and the seed's VLAN tags; where the IP header goes. */
static uint8_t *seed_l2(uint8_t *p, const struct seed *sd)
{
	/* destination and source MAC */
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	p += 12;
	for (int i = 0; i < sd->nvlan; i++) {
		put16(p, sd->nvlan == 2 && i == 0 ? 0x88A8 : 0x8100);
		put16(p + 2, rnd_below(4096));
		p += 4;
	}
	put16(p, sd->ipv6 ? 0x86DD : 0x0800);
	return p + 2;
}

/* The IP header of a datagram carrying `tlen` bytes of BTH to ICRC; where UDP goes. */
static uint8_t *seed_ip(uint8_t *ip, const struct seed *sd, uint32_t tlen)
{
	if (sd->ipv6) {
		ip[0] = 0x60 | (rnd() & 0x0F);
		ip[1] = rnd() & 0xCF; /* random traffic class and flow label, ECN not CE */
		ip[2] = rnd();
		ip[3] = rnd();
		put16(ip + 4, 8 + tlen);
		ip[6] = 17;
		ip[7] = 1 + rnd_below(255);
		memcpy(ip + 8, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(ip + 24, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		return ip + 40;
	}
	ip[0] = 0x45;
	ip[1] = rnd() & 0xFE; /* random DSCP, ECN 0-2 */
	put16(ip + 2, 20 + 8 + tlen);
	put16(ip + 4, rnd());
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 1 + rnd_below(255);
	ip[9] = 17;
	memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	put16(ip + 10, ip_csum(ip, 20));
	return ip + 20;
}

/* UDP and the BTH; where the transport's headers go. */
static uint8_t *seed_udp_bth(uint8_t *udp, const struct seed *sd, const struct roce_op *op, uint32_t tlen,
			     uint32_t pad)
{
	uint8_t *bth = udp + 8;

	put16(udp, 49152 + rnd_below(16384));
	put16(udp + 2, ROCE_UDP_PORT);
	put16(udp + 4, 8 + tlen);
	put16(udp + 6, rnd());
	bth[0] = sd->opcode;
	bth[1] = (chance(50) ? 0x40 : 0) | pad << 4; /* MigReq as real senders set it */
	if (op && (op->flags & OPF_SE_OK) && chance(50))
		bth[1] |= 0x80;
	put16(bth + 2, chance(70) ? 0xFFFF : 0x8000 | (1 + rnd_below(0x7FFF)));
	bth[4] = sd->opcode == ROCE_OPCODE_CNP ? 0x40 : (rnd() & 0xC0); /* FECN/BECN vary on the path */
	put24(bth + 5, sd->cm ? ROCE_GSI_QPN : rnd() & 0xFFFFFF);
	bth[8] = chance(50) ? 0x80 : 0;
	put24(bth + 9, rnd() & 0xFFFFFF);
	return bth + ROCE_BTH_LEN;
}

/* The transport's own header (RDETH or DC, DETH, XRCETH) and the operation's; where the payload goes. */
static uint8_t *seed_xth(uint8_t *x, const struct roce_op *op, uint32_t transport, uint32_t hdrs, uint32_t payload)
{
	if (transport == ROCE_TR_RD) {
		put24(x + 1, rnd());
		if (op->flags & OPF_REQUEST) {
			put32(x + 4, rnd());
			put24(x + 9, rnd());
		}
	} else if (transport == ROCE_TR_UD) {
		put32(x, rnd());
		put24(x + 5, rnd());
	} else if (hdrs) {
		put24(x + 1, rnd());
	}
	x += hdrs;
	for (uint32_t i = 0; i < op->xth_len; i++)
		x[i] = rnd();
	if (op->reth_off != ROCE_NO_HDR)
		put32(x + op->reth_off + 12, (op->flags & OPF_DMALEN) ? payload : rnd());
	if (op->aeth_off != ROCE_NO_HDR) {
		static const uint8_t syndromes[] = { 0x00, 0x1F, 0x20, 0x60, 0x61, 0x62, 0x63, 0x64 };

		x[op->aeth_off] = syndromes[rnd_below(sizeof(syndromes))];
	}
	if (op->atomic_off != ROCE_NO_HDR)
		x[op->atomic_off + 7] &= 0xF8;
	return x + op->xth_len;
}

/* Random payload bytes; a CM seed's are a MAD naming one of a few connections, so they meet. */
static void seed_payload(uint8_t *x, const struct seed *sd, uint32_t payload)
{
	for (uint32_t i = 0; i < payload; i++)
		x[i] = rnd();
	if (!sd->cm)
		return;
	x[CM_MAD_BASE_VERSION] = 1;
	x[CM_MAD_CLASS] = CM_MGMT_CLASS;
	put16(x + CM_MAD_ATTR, CM_ATTR_REQ + rnd_below(CM_ATTR_APR - CM_ATTR_REQ + 1));
	put32(x + CM_MAD_HDR_LEN + CM_LOCAL_COMM_ID, rnd_below(4));
	put32(x + CM_MAD_HDR_LEN + CM_REMOTE_COMM_ID, rnd_below(4));
}

/* A PFC frame: some priorities paused for random times, some resumed (0), the rest not named. */
static void build_pfc(struct frame *f, const struct seed *sd)
{
	uint8_t *p;

	memset(f->d, 0, 64);
	f->how[0] = '\0';
	p = seed_l2(f->d, sd);
	memcpy(f->d, "\x01\x80\xc2\x00\x00\x01", 6);
	put16(p - 2, 0x8808);
	put16(p, 0x0101);
	put16(p + 2, rnd() & 0xFF);
	for (int i = 0; i < 8; i++)
		put16(p + 4 + 2 * i, chance(30) ? 0 : rnd());
	f->len = 60 + 4 * sd->nvlan;
}

static void build_roce(struct frame *f, const struct seed *sd)
{
	uint32_t transport = sd->opcode >> 5, payload = 0, pad = 0, hdrs = 0, xth = 0, tlen;
	const struct roce_op *op = NULL;
	uint8_t *ip, *x;

	memset(f->d, 0, 256);
	f->how[0] = '\0';
	ip = seed_l2(f->d, sd);
	if (sd->opcode == ROCE_OPCODE_CNP) {
		xth = ROCE_CNP_RESERVED_LEN;
	} else {
		op = &roce_ops[sd->opcode & 0x1F];
		hdrs = roce_transport_hdr_len(transport, sd->opcode, op->flags, 1); /* rd=dc, the default */
		xth = op->xth_len;
		payload = sd->cm ? CM_MAD_LEN : pick_payload(op, sd->pmtu);
		pad = (4 - payload % 4) % 4;
	}
	tlen = ROCE_BTH_LEN + hdrs + xth + payload + pad + ROCE_ICRC_LEN;
	x = seed_udp_bth(seed_ip(ip, sd, tlen), sd, op, tlen, pad);
	if (op) {
		x = seed_xth(x, op, transport, hdrs, payload);
		seed_payload(x, sd, payload);
		x += payload;
		memset(x, 0, pad);
		x += pad;
	} else {
		memset(x, 0, xth);
		x += xth;
	}
	f->len = x + ROCE_ICRC_LEN - f->d;
	fix_icrc(f);
	f->how[0] = '\0';
	/* Short frames are padded on the wire to Ethernet's 60 bytes, which the program must ignore. */
	if (f->len < 60) {
		memset(f->d + f->len, 0, 60 - f->len);
		f->len = 60;
	}
}

void build_seed(struct frame *f, const struct seed *sd)
{
	if (sd->pfc)
		build_pfc(f, sd);
	else
		build_roce(f, sd);
	if (sd->encap)
		mirror_wrap(f, sd);
}

/*
 * Mirrored seeds: a RoCE request, an ACK, a CM MAD and a PFC frame in each
 * encapsulation gen and the collectors' switches send, over IPv4 and IPv6;
 * every fifth round a mirror's, so that a short run meets them all.
 */
static void add_mirror_seeds(void)
{
	static const int encaps[] = { MIRROR_ERSPAN1, MIRROR_ERSPAN2, MIRROR_ERSPAN3, MIRROR_GRE, MIRROR_VXLAN };
	struct seed bare[sizeof(seeds) / sizeof(seeds[0])], mirror[5 * 8] = {};
	int nbare = nseeds, m = 0, b = 0;

	memcpy(bare, seeds, nbare * sizeof(*seeds));
	for (int i = 0; i < 5 * 8; i++) {
		struct seed *sd = &mirror[i];
		int kind = (i % 8) >> 1;

		sd->encap = encaps[i / 8];
		sd->outer_v6 = i & 1;
		sd->ipv6 = kind & 1;
		sd->nvlan = i % 3;
		sd->pmtu = 1024;
		/* RC SEND_ONLY, RC ACKNOWLEDGE, a UD SEND_ONLY carrying a CM MAD, a PFC frame */
		sd->opcode = kind == 0 ? 0x04 : kind == 1 ? 0x11 : ROCE_OPCODE_UD_SEND_ONLY;
		sd->cm = kind == 2;
		sd->pfc = kind == 3;
	}
	for (nseeds = 0; b < nbare || m < 5 * 8; nseeds++)
		seeds[nseeds] = (nseeds % 5 == 4 && m < 5 * 8) || b == nbare ? mirror[m++] : bare[b++];
}

void make_seeds(void)
{
	static const uint32_t pmtus[] = { 256, 512, 1024, 2048, 4096 };

	for (int t = ROCE_TR_RC; t <= ROCE_TR_XRC; t++) {
		for (int o = 0; o < 32; o++) {
			if (t == ROCE_TR_CNP) {
				if (o)
					continue;
			} else if (!(roce_ops[o].transports & (1u << t))) {
				continue;
			}
			for (int v = 0; v < 2; v++) {
				struct seed *sd = &seeds[nseeds++];

				sd->opcode = t == ROCE_TR_CNP ? ROCE_OPCODE_CNP : t << 5 | o;
				sd->ipv6 = v;
				sd->nvlan = nseeds % 3;
				sd->pmtu = pmtus[nseeds % 5];
			}
		}
	}
	for (int i = 0; i < 8; i++) {
		struct seed *sd = &seeds[nseeds++];

		sd->opcode = ROCE_OPCODE_UD_SEND_ONLY;
		sd->cm = true;
		sd->ipv6 = i & 1;
		sd->nvlan = i % 3;
		sd->pmtu = 4096;
	}
	for (int i = 0; i < 3; i++) {
		struct seed *sd = &seeds[nseeds++];

		sd->pfc = true;
		sd->nvlan = i;
	}
	add_mirror_seeds();
}
