// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Data-path fuzzer: pushes mutated frames through the roceval XDP object
 * with BPF_PROG_TEST_RUN and checks, on every frame, what must hold whatever
 * arrives on the wire:
 *
 *  - the live program (roceval_xdp, one frame per call) returns XDP_PASS in
 *    observe mode, and in enforce mode drops exactly the RoCEv2 frames that
 *    broke an error-severity rule;
 *  - `frames` grows by one per frame; `roce` by one exactly when an
 *    independent parser here says the frame is RoCE (RoCEv2 or RoCEv1);
 *  - each RoCEv2 frame lands in exactly one of icrc_ok, icrc_bad,
 *    icrc_unchecked, icrc_skipped, the one that a CRC computed here with
 *    zlib predicts, and an unchecked ICRC is explained by a rule;
 *  - no rule counts twice for a frame; a frame that is not RoCEv2 moves no
 *    counter but `frames`;
 *  - the batch program (roceval_replay via user/replay.c) fed the same
 *    frames ends each round with the same counters;
 *  - the flow table, when the object has one, never holds more entries than
 *    its size.
 *
 * RoCEv1 frames (EtherType 0x8915, GRH, BTH) count as RoCE too; mutations
 * reach them by rewriting the EtherType.
 *
 * Seeds are valid frames of every opcode of every transport (built from
 * roce_ops[]; the RD range laid out as mlx5 DC, the default), IPv4 and
 * IPv6, 0-2 VLAN tags.  Everything is derived from
 * the seed given with -S, so a reported frame can be reproduced.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "common.h"
#include "counters.h"
#include "flows.h"
#include "loader.h"
#include "replay.h"
#include "roceval_cm.h"
#include "settings.h"
#include "wire.h"

#define MAX_FRAME 24576 /* beyond ROCEVAL_MAX_DATAGRAM, to reach the unchecked path */
#define MAX_MUTATIONS 4
#define MAX_REPORTS 20

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic across platforms, good enough to mutate frames */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(uint32_t percent)
{
	return rnd_below(100) < percent;
}

struct frame {
	uint8_t d[MAX_FRAME];
	uint32_t len;
	char how[256]; /* the mutations applied, for the report */
};

static void note(struct frame *f, const char *fmt, ...)
{
	size_t used = strlen(f->how);
	va_list ap;

	if (used + 2 >= sizeof(f->how))
		return;
	if (used)
		f->how[used++] = ' ';
	va_start(ap, fmt);
	vsnprintf(f->how + used, sizeof(f->how) - used, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* The oracle: an independent reading of rocev2.md sections 1 and 5.         */

struct expect {
	bool roce;
	bool fragment;
	bool length_bad; /* IP/UDP lengths inconsistent with the frame */
	bool too_big;	 /* datagram larger than the ICRC scratch */
	bool ce;
	bool icrc_ok;	 /* meaningful when the ICRC can be checked */
	uint32_t l3, iphl, dlen;
	bool ipv6;
	bool v1; /* RoCEv1: a GRH, no UDP */
};

/* The ICRC of the datagram at l3 as rocev2.md section 5 (RoCEv1: section 7) defines it. */
static uint32_t oracle_icrc(const uint8_t *l3, const struct expect *e)
{
	static uint8_t buf[8 + 65536];
	uint8_t *ip = buf + 8, *udp = ip + e->iphl;

	memset(buf, 0xFF, 8);
	memcpy(ip, l3, e->dlen);
	if (e->ipv6) {
		ip[0] |= 0x0F;
		ip[1] = ip[2] = ip[3] = 0xFF;
		ip[7] = 0xFF;
	} else {
		ip[1] = ip[8] = ip[10] = ip[11] = 0xFF;
	}
	if (e->v1) {
		ip[40 + 4] = 0xFF;
	} else {
		udp[6] = udp[7] = 0xFF;
		udp[8 + 4] = 0xFF;
	}
	return crc32(0, buf, 8 + e->dlen - 4);
}

static void expect_frame(const uint8_t *d, uint32_t len, struct expect *e)
{
	uint32_t off = 14, l4, proto, iplen, udplen;

	memset(e, 0, sizeof(*e));
	if (len < 14)
		return;
	proto = get16(d + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8); i++) {
		if (off + 4 > len)
			return;
		proto = get16(d + off + 2);
		off += 4;
	}
	e->l3 = off;
	if (proto == 0x0800) {
		if (off + 20 > len || d[off] >> 4 != 4 || (d[off] & 15) < 5 || d[off + 9] != 17)
			return;
		if (get16(d + off + 6) & 0x1FFF)
			return; /* a later fragment has no UDP header */
		e->iphl = (d[off] & 15) * 4;
		l4 = off + e->iphl;
		e->fragment = get16(d + off + 6) & 0x2000;
		e->ce = (d[off + 1] & 3) == 3;
		iplen = get16(d + off + 2);
	} else if (proto == 0x86DD) {
		uint8_t nh;

		if (off + 40 > len || d[off] >> 4 != 6)
			return;
		e->ipv6 = true;
		e->iphl = 40;
		nh = d[off + 6];
		l4 = off + 40;
		e->ce = ((d[off + 1] >> 4) & 3) == 3;
		iplen = 40 + get16(d + off + 4);
		if (nh == 44) {
			if (l4 + 16 > len || (get16(d + l4 + 2) & 0xFFF8))
				return;
			nh = d[l4];
			l4 += 8;
			e->fragment = true;
		}
		if (nh != 17)
			return;
	} else if (proto == 0x8915) {
		if (off + 40 > len || d[off] >> 4 != 6 || d[off + 6] != 0x1B)
			return;
		e->roce = e->ipv6 = e->v1 = true;
		e->iphl = 40;
		iplen = 40 + get16(d + off + 4);
		if (iplen > len - off || iplen - 40 < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
			e->length_bad = true;
			return;
		}
		e->dlen = iplen;
		goto icrc;
	} else {
		return;
	}
	if (l4 + 8 > len || get16(d + l4 + 2) != ROCE_UDP_PORT)
		return;
	e->roce = true;
	if (e->fragment)
		return;
	udplen = get16(d + l4 + 4);
	if (iplen > len - off || iplen < e->iphl + 8 || udplen < 8 || udplen > iplen - e->iphl ||
	    udplen - 8 < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		e->length_bad = true;
		return;
	}
	e->dlen = e->iphl + udplen;
icrc:
	if (e->dlen > ROCEVAL_MAX_DATAGRAM) {
		e->too_big = true;
		return;
	}
	{
		const uint8_t *ic = d + off + e->dlen - 4;
		uint32_t found = ic[0] | ic[1] << 8 | ic[2] << 16 | (uint32_t)ic[3] << 24;

		e->icrc_ok = oracle_icrc(d + off, e) == found;
	}
}

/* Rewrites the ICRC of a frame from the lengths its headers claim, when they are usable. */
static void fix_icrc(struct frame *f)
{
	struct expect e;
	uint32_t crc;
	uint8_t *ic;

	expect_frame(f->d, f->len, &e);
	if (!e.roce || e.fragment || e.length_bad || e.too_big)
		return;
	crc = oracle_icrc(f->d + e.l3, &e);
	ic = f->d + e.l3 + e.dlen - 4;
	ic[0] = crc;
	ic[1] = crc >> 8;
	ic[2] = crc >> 16;
	ic[3] = crc >> 24;
	note(f, "+icrc");
}

/* ------------------------------------------------------------------------ */
/* Seeds: a valid frame for a transport/opcode pair.                         */

struct seed {
	uint8_t opcode;
	bool cm; /* a UD SEND_ONLY to QP1 carrying an RDMA CM MAD */
	bool ipv6;
	int nvlan;
	uint32_t pmtu;
};

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

static void build_seed(struct frame *f, const struct seed *sd)
{
	uint8_t *p = f->d, *ip, *udp, *bth, *x;
	uint32_t transport = sd->opcode >> 5, payload = 0, pad = 0, hdrs = 0, xth = 0, tlen;
	const struct roce_op *op = NULL;

	memset(f->d, 0, 256);
	f->how[0] = '\0';
	/* destination and source MAC */
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	p += 12;
	for (int i = 0; i < sd->nvlan; i++) {
		put16(p, sd->nvlan == 2 && i == 0 ? 0x88A8 : 0x8100);
		put16(p + 2, rnd_below(4096));
		p += 4;
	}
	put16(p, sd->ipv6 ? 0x86DD : 0x0800);
	p += 2;
	ip = p;

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
		udp = ip + 40;
	} else {
		ip[0] = 0x45;
		ip[1] = rnd() & 0xFE; /* random DSCP, ECN 0-2 */
		put16(ip + 2, 20 + 8 + tlen);
		put16(ip + 4, rnd());
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 1 + rnd_below(255);
		ip[9] = 17;
		memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
		put16(ip + 10, ip_csum(ip, 20));
		udp = ip + 20;
	}
	put16(udp, 49152 + rnd_below(16384));
	put16(udp + 2, ROCE_UDP_PORT);
	put16(udp + 4, 8 + tlen);
	put16(udp + 6, rnd());

	bth = udp + 8;
	bth[0] = sd->opcode;
	bth[1] = (chance(50) ? 0x40 : 0) | pad << 4; /* MigReq as real senders set it */
	if (op && (op->flags & OPF_SE_OK) && chance(50))
		bth[1] |= 0x80;
	put16(bth + 2, chance(70) ? 0xFFFF : 0x8000 | (1 + rnd_below(0x7FFF)));
	bth[4] = sd->opcode == ROCE_OPCODE_CNP ? 0x40 : (rnd() & 0xC0); /* FECN/BECN vary on the path */
	put24(bth + 5, sd->cm ? ROCE_GSI_QPN : rnd() & 0xFFFFFF);
	bth[8] = chance(50) ? 0x80 : 0;
	put24(bth + 9, rnd() & 0xFFFFFF);
	x = bth + ROCE_BTH_LEN;

	if (op) {
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
		for (uint32_t i = 0; i < xth; i++)
			x[i] = rnd();
		if (op->reth_off != ROCE_NO_HDR)
			put32(x + op->reth_off + 12, (op->flags & OPF_DMALEN) ? payload : rnd());
		if (op->aeth_off != ROCE_NO_HDR) {
			static const uint8_t syndromes[] = { 0x00, 0x1F, 0x20, 0x60, 0x61, 0x62, 0x63, 0x64 };

			x[op->aeth_off] = syndromes[rnd_below(sizeof(syndromes))];
		}
		if (op->atomic_off != ROCE_NO_HDR)
			x[op->atomic_off + 7] &= 0xF8;
		x += xth;
		for (uint32_t i = 0; i < payload; i++)
			x[i] = rnd();
		if (sd->cm) {
			/* any CM message, naming one of a few connections so they meet */
			x[CM_MAD_BASE_VERSION] = 1;
			x[CM_MAD_CLASS] = CM_MGMT_CLASS;
			put16(x + CM_MAD_ATTR, CM_ATTR_REQ + rnd_below(CM_ATTR_APR - CM_ATTR_REQ + 1));
			put32(x + CM_MAD_HDR_LEN + CM_LOCAL_COMM_ID, rnd_below(4));
			put32(x + CM_MAD_HDR_LEN + CM_REMOTE_COMM_ID, rnd_below(4));
		}
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

static int nseeds;
static struct seed seeds[512];

static void make_seeds(void)
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
}

/* ------------------------------------------------------------------------ */
/* Mutations                                                                 */

static void insert_bytes(struct frame *f, uint32_t at, uint32_t n)
{
	if (f->len + n > MAX_FRAME || at > f->len)
		return;
	memmove(f->d + at + n, f->d + at, f->len - at);
	for (uint32_t i = 0; i < n; i++)
		f->d[at + i] = rnd();
	f->len += n;
}

static void remove_bytes(struct frame *f, uint32_t at, uint32_t n)
{
	if (at >= f->len)
		return;
	if (n > f->len - at)
		n = f->len - at;
	memmove(f->d + at, f->d + at + n, f->len - at - n);
	f->len -= n;
}

/* Offset of the L3 header and of UDP for the unmutated layout; 0 when not IP. */
static void layout(const struct frame *f, uint32_t *l3, uint32_t *l4, bool *v6)
{
	uint32_t off = 14, proto;

	*l3 = *l4 = 0;
	*v6 = false;
	if (f->len < 14)
		return;
	proto = get16(f->d + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8) && off + 4 <= f->len; i++) {
		proto = get16(f->d + off + 2);
		off += 4;
	}
	if (proto == 0x0800 && off + 20 <= f->len) {
		*l3 = off;
		*l4 = off + (f->d[off] & 15) * 4;
	} else if (proto == 0x86DD && off + 40 <= f->len) {
		*l3 = off;
		*l4 = off + 40;
		*v6 = true;
	}
}

static uint32_t interesting16(uint32_t cur)
{
	static const uint32_t vals[] = { 0, 1, 7, 8, 19, 20, 27, 28, 36, 0x7FFF, 0x8000, 0xFFFF };

	switch (rnd_below(4)) {
	case 0:
		return vals[rnd_below(sizeof(vals) / sizeof(vals[0]))];
	case 1:
		return (cur + 1 + rnd_below(16)) & 0xFFFF;
	case 2:
		return (cur - 1 - rnd_below(16)) & 0xFFFF;
	default:
		return rnd() & 0xFFFF;
	}
}

static void mutate(struct frame *f)
{
	uint32_t l3, l4, bth, n;
	bool v6;

	layout(f, &l3, &l4, &v6);
	bth = l4 ? l4 + 8 : 0;
	switch (rnd_below(17)) {
	case 0: /* bit flips anywhere */
		n = 1 + rnd_below(8);
		for (uint32_t i = 0; i < n && f->len; i++)
			f->d[rnd_below(f->len)] ^= 1 << rnd_below(8);
		note(f, "flip%u", n);
		break;
	case 1: /* bit flips in the headers */
		n = 1 + rnd_below(4);
		for (uint32_t i = 0; i < n && f->len; i++)
			f->d[rnd_below(f->len < 128 ? f->len : 128)] ^= 1 << rnd_below(8);
		note(f, "hflip%u", n);
		break;
	case 2: /* truncation */
		f->len = rnd_below(f->len + 1);
		note(f, "trunc@%u", f->len);
		break;
	case 3: /* IP length lies */
		if (!l3)
			break;
		n = interesting16(get16(f->d + l3 + (v6 ? 4 : 2)));
		put16(f->d + l3 + (v6 ? 4 : 2), n);
		note(f, "iplen=%u", n);
		break;
	case 4: /* UDP length lies */
		if (!l4 || l4 + 8 > f->len)
			break;
		n = interesting16(get16(f->d + l4 + 4));
		put16(f->d + l4 + 4, n);
		note(f, "udplen=%u", n);
		break;
	case 5: /* any opcode */
		if (!bth || bth >= f->len)
			break;
		f->d[bth] = rnd();
		note(f, "op=0x%02x", f->d[bth]);
		break;
	case 6: /* PadCnt */
		if (!bth || bth + 1 >= f->len)
			break;
		f->d[bth + 1] = (f->d[bth + 1] & 0xCF) | (rnd_below(4) << 4);
		note(f, "pad=%u", (f->d[bth + 1] >> 4) & 3);
		break;
	case 7: /* fragments */
		if (!l3)
			break;
		if (!v6) {
			n = (rnd_below(2) << 13) | (chance(50) ? 0 : rnd_below(0x2000));
			put16(f->d + l3 + 6, n);
			note(f, "frag4=0x%04x", n);
		} else if (l3 + 40 <= f->len) {
			uint8_t nh = f->d[l3 + 6];

			insert_bytes(f, l3 + 40, 8);
			if (f->d[l3 + 6] != nh)
				break;
			f->d[l3 + 6] = 44;
			f->d[l3 + 40] = nh;
			f->d[l3 + 41] = 0;
			n = chance(50) ? 1 : rnd() & 0xFFF9;
			put16(f->d + l3 + 42, n);
			put16(f->d + l3 + 4, get16(f->d + l3 + 4) + 8);
			note(f, "frag6=0x%04x", n);
		}
		break;
	case 8: /* a byte set to an edge value */
		if (f->len) {
			static const uint8_t edge[] = { 0x00, 0xFF, 0x7F, 0x80, 0x01, 0xC0 };

			n = rnd_below(f->len < 160 ? f->len : 160);
			f->d[n] = edge[rnd_below(sizeof(edge))];
			note(f, "b%u=0x%02x", n, f->d[n]);
		}
		break;
	case 9: /* trailing bytes beyond what IP claims */
		n = 1 + rnd_below(chance(80) ? 64 : 8192);
		insert_bytes(f, f->len, n);
		note(f, "tail+%u", n);
		break;
	case 10: /* IPv4 IHL: options, or a header shorter than allowed */
		if (!l3 || v6)
			break;
		n = rnd_below(16);
		if (n > 5 && chance(70)) {
			insert_bytes(f, l3 + 20, (n - 5) * 4);
			put16(f->d + l3 + 2, get16(f->d + l3 + 2) + (n - 5) * 4);
		}
		f->d[l3] = 0x40 | n;
		note(f, "ihl=%u", n);
		break;
	case 11: /* TVer, reserved bits, P_Key */
		if (!bth || bth + 12 > f->len)
			break;
		n = rnd_below(4);
		if (n == 0)
			f->d[bth + 1] |= 1 + rnd_below(15);
		else if (n == 1)
			f->d[bth + 8] |= 1 + rnd_below(127);
		else if (n == 2)
			put16(f->d + bth + 2, interesting16(0));
		else
			f->d[bth + 4] = rnd();
		note(f, "bthfield%u", n);
		break;
	case 12: /* bytes removed or inserted in the middle */
		n = 1 + rnd_below(16);
		if (chance(50))
			remove_bytes(f, rnd_below(f->len + 1), n);
		else
			insert_bytes(f, rnd_below(f->len + 1), n);
		note(f, "splice%u", n);
		break;
	case 13: /* VLAN tags and ethertypes */
		if (f->len < 14)
			break;
		if (chance(50)) {
			insert_bytes(f, 12, 4);
			put16(f->d + 12, chance(50) ? 0x8100 : 0x88A8);
			note(f, "+vlan");
		} else {
			static const uint16_t types[] = { 0x8100, 0x88A8, 0x0800, 0x86DD, 0x0806, 0x8915 };

			put16(f->d + 12, types[rnd_below(6)]);
			note(f, "ethertype");
		}
		break;
	case 14: /* a bigger payload with consistent lengths: multi-buffer and beyond the scratch */
		if (!l3 || !l4 || l4 + 8 > f->len)
			break;
		n = 4 * (1 + rnd_below(chance(80) ? 1100 : 5000));
		if (f->len + n > MAX_FRAME)
			break;
		insert_bytes(f, l4 + 8 + 12, n);
		put16(f->d + l3 + (v6 ? 4 : 2), (get16(f->d + l3 + (v6 ? 4 : 2)) + n) & 0xFFFF);
		put16(f->d + l4 + 4, (get16(f->d + l4 + 4) + n) & 0xFFFF);
		note(f, "grow%u", n);
		break;
	case 15: /* other UDP ports and protocols */
		if (!l4 || l4 + 4 > f->len)
			break;
		if (chance(50)) {
			put16(f->d + l4 + 2, chance(50) ? 4792 : rnd());
			note(f, "dport");
		} else {
			f->d[l3 + (v6 ? 6 : 9)] = chance(50) ? 6 : rnd();
			note(f, "proto");
		}
		break;
	default: /* ECN CE */
		if (!l3)
			break;
		if (v6)
			f->d[l3 + 1] |= 0x30;
		else
			f->d[l3 + 1] |= 3;
		note(f, "ce");
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* Running frames and checking the invariants                               */

enum mode { MODE_OBSERVE, MODE_ENFORCE, MODE_SAMPLE, MODE__COUNT };
static const char *const mode_names[] = { "observe", "enforce", "icrc_sample=3" };

static struct roceval_bpf *live;
static struct replay *batch;
static int live_prog_fd, live_counters_fd, flows_fd;
static __u32 flow_entries = 64; /* small, so that eviction runs all the time */
static unsigned long long pushed, pushed_base, violations, per_mode[MODE__COUNT], oversized;
/* bytes of the frames under 14 bytes, which only the batch program sees */
static unsigned long long short_bytes, short_bytes_base;
static struct roceval_counters live_now, batch_base, live_base;
static struct roceval_counters last; /* counter deltas of the last frame */
static bool quiet;

static void dump_frame(const struct frame *f)
{
	fprintf(stderr, "  frame (%u bytes):", f->len);
	for (uint32_t i = 0; i < f->len && i < 4096; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n    ", f->d[i]);
	if (f->len > 4096)
		fprintf(stderr, "\n    ... (%u more bytes)", f->len - 4096);
	fputc('\n', stderr);
}

static void violation(const struct frame *f, enum mode mode, const char *fmt, ...)
{
	va_list ap;

	violations++;
	if (violations > MAX_REPORTS)
		return;
	fprintf(stderr, "VIOLATION (%s, mutations: %s): ", mode_names[mode], f && *f->how ? f->how : "none");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (f)
		dump_frame(f);
}

static void set_mode(enum mode mode)
{
	struct roceval_settings cfg;
	int err;

	settings_defaults(&cfg);
	cfg.enforce = mode == MODE_ENFORCE;
	cfg.icrc_sample = mode == MODE_SAMPLE ? 3 : 1;
	err = roceval_settings_write(bpf_map__fd(live->maps.settings), &cfg);
	if (!err)
		err = roceval_settings_write(bpf_map__fd(replay_skel(batch)->maps.settings), &cfg);
	if (err) {
		fprintf(stderr, "datapath: Couldn't write the settings: %s\n", strerror(-err));
		exit(1);
	}
}

static __u64 error_rules(const struct roceval_counters *d)
{
	__u64 mask = 0;

	for (int i = 0; i < RULE__COUNT; i++)
		if (d->rule[i])
			mask |= 1ULL << i;
	return mask & ROCEVAL_ERROR_MASK;
}

static void push(const struct frame *f, enum mode mode)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct roceval_counters prev = live_now, *d = &last;
	__u64 icrc_sum;
	struct expect e;
	int err;

	memset(d, 0, sizeof(*d));
	expect_frame(f->d, f->len, &e);
	err = replay_frame(batch, f->d, f->len, f->len, 0);
	if (err) {
		violation(f, mode, "the batch program refused the frame: %s", strerror(-err));
		return;
	}
	pushed++;
	per_mode[mode]++;
	/* BPF_PROG_TEST_RUN refuses frames shorter than an Ethernet header; the batch still sees them. */
	if (f->len < 14) {
		short_bytes += f->len;
		return;
	}
	opts.data_in = f->d;
	opts.data_size_in = f->len;
	opts.repeat = 1;
	if (bpf_prog_test_run_opts(live_prog_fd, &opts)) {
		violation(f, mode, "BPF_PROG_TEST_RUN failed: %s", strerror(errno));
		return;
	}
	err = counters_read(live_counters_fd, &live_now);
	if (err) {
		fprintf(stderr, "datapath: Couldn't read the counters: %s\n", strerror(-err));
		exit(1);
	}
	for (int i = 0; i < TOTAL__COUNT; i++)
		d->total[i] = live_now.total[i] - prev.total[i];
	for (int i = 0; i < RULE__COUNT; i++)
		d->rule[i] = live_now.rule[i] - prev.rule[i];

	if (d->total[TOTAL_FRAMES] != 1)
		violation(f, mode, "frames grew by %llu", (unsigned long long)d->total[TOTAL_FRAMES]);
	if (d->total[TOTAL_BYTES] != f->len)
		violation(f, mode, "bytes grew by %llu, the frame has %u", (unsigned long long)d->total[TOTAL_BYTES],
			  f->len);
	if (d->total[TOTAL_ROCE_BYTES] != (e.roce ? f->len : 0))
		violation(f, mode, "roce_bytes grew by %llu", (unsigned long long)d->total[TOTAL_ROCE_BYTES]);
	if (d->total[TOTAL_ROCE] != e.roce)
		violation(f, mode, "roce grew by %llu, expected %d", (unsigned long long)d->total[TOTAL_ROCE],
			  e.roce);
	if (!e.roce) {
		for (int i = 0; i < TOTAL__COUNT; i++)
			if (i != TOTAL_FRAMES && i != TOTAL_BYTES && d->total[i])
				violation(f, mode, "not RoCEv2 but %s grew", total_ids[i]);
		for (int i = 0; i < RULE__COUNT; i++)
			if (d->rule[i])
				violation(f, mode, "not RoCEv2 but rule %s counted", rule_ids[i]);
		if (opts.retval != XDP_PASS)
			violation(f, mode, "not RoCEv2 but verdict %u", opts.retval);
		return;
	}
	icrc_sum = d->total[TOTAL_ICRC_OK] + d->total[TOTAL_ICRC_BAD] + d->total[TOTAL_ICRC_UNCHECKED] +
		   d->total[TOTAL_ICRC_SKIPPED];
	if (icrc_sum != 1)
		violation(f, mode, "icrc_ok+icrc_bad+icrc_unchecked+icrc_skipped grew by %llu",
			  (unsigned long long)icrc_sum);
	if (e.fragment || e.length_bad || e.too_big) {
		if (!d->total[TOTAL_ICRC_UNCHECKED])
			violation(f, mode, "ICRC cannot be checked but icrc_unchecked did not grow");
	} else if (d->total[TOTAL_ICRC_SKIPPED]) {
		if (mode != MODE_SAMPLE)
			violation(f, mode, "icrc_skipped grew with icrc_sample=1");
	} else if (d->total[e.icrc_ok ? TOTAL_ICRC_OK : TOTAL_ICRC_BAD] != 1) {
		violation(f, mode, "ICRC is %s but icrc_ok/bad/unchecked grew by %llu/%llu/%llu",
			  e.icrc_ok ? "valid" : "invalid", (unsigned long long)d->total[TOTAL_ICRC_OK],
			  (unsigned long long)d->total[TOTAL_ICRC_BAD],
			  (unsigned long long)d->total[TOTAL_ICRC_UNCHECKED]);
	}
	if (d->total[TOTAL_ICRC_UNCHECKED] && !d->rule[RULE_TRUNCATED] && !d->rule[RULE_IP_FRAGMENT]) {
		/*
		 * A datagram larger than the ICRC scratch (jumbo MTUs beyond 16 KiB,
		 * possible on veth and lo) is not checked; icrc_unchecked's description
		 * says so.  Counted and reported; anything else here is a violation.
		 */
		if (e.too_big)
			oversized++;
		else
			violation(f, mode, "icrc_unchecked grew with neither truncated nor ip_fragment");
	}
	if (d->rule[RULE_ICRC] != d->total[TOTAL_ICRC_BAD])
		violation(f, mode, "rule icrc (%llu) differs from icrc_bad (%llu)",
			  (unsigned long long)d->rule[RULE_ICRC], (unsigned long long)d->total[TOTAL_ICRC_BAD]);
	if (d->rule[RULE_IP_FRAGMENT] != e.fragment)
		violation(f, mode, "ip_fragment grew by %llu, expected %d",
			  (unsigned long long)d->rule[RULE_IP_FRAGMENT], e.fragment);
	if (e.length_bad && !d->rule[RULE_TRUNCATED])
		violation(f, mode, "IP/UDP lengths do not fit the frame but truncated did not grow");
	if (d->rule[RULE_ECN_CE] != e.ce)
		violation(f, mode, "ecn_ce grew by %llu, expected %d", (unsigned long long)d->rule[RULE_ECN_CE],
			  e.ce);
	for (int i = 0; i < RULE__COUNT; i++)
		if (d->rule[i] > 1 && i != RULE_FLOW_EVICTED)
			violation(f, mode, "rule %s grew by %llu for one frame", rule_ids[i],
				  (unsigned long long)d->rule[i]);
	if (mode == MODE_ENFORCE) {
		bool drop = error_rules(d) != 0;

		if (opts.retval != (drop ? XDP_DROP : XDP_PASS))
			violation(f, mode, "verdict %u, expected %s", opts.retval, drop ? "XDP_DROP" : "XDP_PASS");
		if (d->total[TOTAL_DROPPED] != drop)
			violation(f, mode, "dropped grew by %llu", (unsigned long long)d->total[TOTAL_DROPPED]);
	} else {
		if (opts.retval != XDP_PASS)
			violation(f, mode, "verdict %u in observe mode", opts.retval);
		if (d->total[TOTAL_DROPPED])
			violation(f, mode, "dropped grew in observe mode");
	}
}

/* The batch program saw the same frames: its counters must have moved exactly as the live one's. */
static void compare_batch(enum mode mode)
{
	struct roceval_counters b;
	int err = replay_flush(batch);

	if (!err)
		err = replay_counters(batch, &b);
	if (err) {
		violation(NULL, mode, "the batch program failed: %s", strerror(-err));
		return;
	}
	if (b.total[TOTAL_FRAMES] - batch_base.total[TOTAL_FRAMES] != pushed - pushed_base)
		violation(NULL, mode, "batch counted %llu frames of %llu sent",
			  (unsigned long long)(b.total[TOTAL_FRAMES] - batch_base.total[TOTAL_FRAMES]),
			  pushed - pushed_base);
	/* Frames under 14 bytes reach only the batch program. */
	for (int i = 0; i < TOTAL__COUNT; i++) {
		__u64 db = b.total[i] - batch_base.total[i], dl = live_now.total[i] - live_base.total[i];

		if (i == TOTAL_BYTES)
			dl += short_bytes - short_bytes_base;
		if (i != TOTAL_FRAMES && db != dl)
			violation(NULL, mode, "batch counted %s %llu, live %llu", total_ids[i],
				  (unsigned long long)db, (unsigned long long)dl);
	}
	for (int i = 0; i < RULE__COUNT; i++) {
		__u64 db = b.rule[i] - batch_base.rule[i], dl = live_now.rule[i] - live_base.rule[i];

		if (db != dl)
			violation(NULL, mode, "batch counted rule %s %llu, live %llu", rule_ids[i],
				  (unsigned long long)db, (unsigned long long)dl);
	}
	batch_base = b;
	live_base = live_now;
	pushed_base = pushed;
	short_bytes_base = short_bytes;
}

/*
 * Frames run one at a time on one CPU, so the flow table's books must
 * balance exactly: every flow created is either in the table or was
 * evicted, and the table never holds more than its capacity.
 */
static void check_flows(void)
{
	struct roceval_flow_key key, next;
	__u64 created = live->bss->flow_ring_head, evicted = live_now.rule[RULE_FLOW_EVICTED];
	__u64 expect = created < flow_entries ? created : flow_entries;
	void *prev = NULL;
	__u64 n = 0;

	while (!bpf_map_get_next_key(flows_fd, prev, &next) && n <= flow_entries) {
		key = next;
		prev = &key;
		n++;
	}
	if (n > flow_entries)
		violation(NULL, MODE_OBSERVE, "flow table holds more than its %u entries", flow_entries);
	else if (n != expect || evicted != created - expect)
		violation(NULL, MODE_OBSERVE,
			  "flow table: %llu flows created, %llu in the table, %llu evicted (expected %llu, %llu)",
			  (unsigned long long)created, (unsigned long long)n, (unsigned long long)evicted,
			  (unsigned long long)expect, (unsigned long long)(created - expect));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: datapath [-s SECONDS] [-n FRAMES] [-S SEED] [-F ENTRIES] [-q]\n\n"
		   "Pushes mutated RoCEv2 frames through the roceval XDP object with\n"
		   "BPF_PROG_TEST_RUN and checks the counter and verdict invariants on every frame.\n\n"
		   "  -s SECONDS  run this long (default 10)\n"
		   "  -n FRAMES   stop at the end of the round (about 2300 frames) that reaches FRAMES\n"
		   "  -S SEED     random seed (default 1); the same seed pushes the same frames\n"
		   "  -F ENTRIES  flow table size (default 64, so that flows are evicted often)\n"
		   "  -q          print only the summary and violations\n\n"
		   "Exit status: 0 no violation, 1 a violation or a BPF failure, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	static struct frame f, base;
	unsigned long long max_frames = 0, seed = 1;
	double seconds = 10, start, elapsed;
	unsigned long rounds = 0;
	struct roceval_settings cfg;
	cpu_set_t cpus;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:S:F:qh")) != -1) {
		switch (opt) {
		case 'F':
			if (!parse_flow_entries(optarg, &flow_entries)) {
				usage(stderr);
				return 2;
			}
			break;
		case 's':
			seconds = strtod(optarg, NULL);
			break;
		case 'n':
			max_frames = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || seconds <= 0) {
		usage(stderr);
		return 2;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;

	/* Per-CPU state (the icrc_sample countdown) must be the same for both programs. */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	if (require_caps(false))
		return 1;
	roceval_set_flow_entries(flow_entries);
	live = roceval_load(LOAD_LIVE, true);
	if (!live)
		return 1;
	settings_defaults(&cfg);
	batch = replay_new(&cfg);
	if (!batch)
		return 1;
	live_prog_fd = bpf_program__fd(live->progs.roceval_xdp);
	live_counters_fd = bpf_map__fd(live->maps.counters);
	flows_fd = bpf_map__fd(live->maps.flows);
	make_seeds();
	if (!quiet)
		printf("datapath: seed %llu, %d seed frames, %u flow entries, up to %.0f s\n", seed, nseeds,
		       flow_entries, seconds);

	start = now();
	do {
		enum mode mode = rounds % MODE__COUNT;
		const struct seed *sd = &seeds[rounds % nseeds];
		uint32_t stride;

		set_mode(mode);
		build_seed(&base, sd);
		push(&base, mode);
		/* A seed is valid: whatever else is wrong with a mutant comes from its mutations. */
		if (error_rules(&last) || (mode != MODE_SAMPLE && last.total[TOTAL_ICRC_OK] != 1))
			violation(&base, mode, "seed frame (opcode 0x%02x) broke an error rule or its ICRC",
				  sd->opcode);
		/* Truncation at every offset of the headers, then sparser through the payload. */
		stride = base.len > 256 ? base.len / 64 : 1;
		for (uint32_t cut = 0; cut < base.len; cut += cut < 256 ? 1 : stride) {
			f = base;
			f.len = cut;
			snprintf(f.how, sizeof(f.how), "trunc@%u", cut);
			push(&f, mode);
		}
		for (int i = 0; i < 2000; i++) {
			int nmut = 1 + rnd_below(MAX_MUTATIONS);

			f = base;
			f.how[0] = '\0';
			for (int m = 0; m < nmut; m++)
				mutate(&f);
			if (chance(50))
				fix_icrc(&f);
			push(&f, mode);
		}
		compare_batch(mode);
		check_flows();
		rounds++;
		elapsed = now() - start;
	} while (elapsed < seconds && (!max_frames || pushed < max_frames));

	printf("datapath: %llu frames pushed in %.1f s (observe %llu, enforce %llu, icrc_sample=3 %llu), "
	       "%lu rounds, seed %llu, %llu violations\n",
	       pushed, elapsed, per_mode[MODE_OBSERVE], per_mode[MODE_ENFORCE], per_mode[MODE_SAMPLE], rounds,
	       seed, violations);
	if (oversized)
		printf("datapath: %llu frames with a datagram over %u bytes (beyond the ICRC buffer) counted in "
		       "icrc_unchecked, as documented\n", oversized, ROCEVAL_MAX_DATAGRAM);
	replay_free(batch);
	roceval_bpf__destroy(live);
	return violations ? 1 : 0;
}
