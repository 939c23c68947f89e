// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "wire.h"
#include "icrc.h"
#include "roceval.h"

void frame_build(struct frame *f, unsigned int payload, bool ipv6, unsigned int seed)
{
	frame_build_op(f, payload ? OP_RC_SEND_ONLY : OP_RC_ACKNOWLEDGE, payload, ipv6, seed);
}

void frame_build_op(struct frame *f, unsigned char opcode, unsigned int payload, bool ipv6, unsigned int seed)
{
	static unsigned char bytes[ROCE_PMTU_MAX];
	struct pkt_spec s = {
		.src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 }, .vlan = -1,
		.ipv6 = ipv6, .ttl = 64, .sport = 49152,
		.tos = BENCH_DSCP << 2 | 2, /* ECT(0): in the class set_congestion() names */
		.opcode = opcode,
		.va = 0x10000, .rkey = 0x1234, .dmalen = payload, /* a WRITE's RETH */
		.migreq = true, /* as ConnectX sends it */
		.pkey = 0xFFFF,
		.dqpn = seed, /* a DestQP per frame: one flow each, no PSN repeats across them */
		.psn = 1,
		.payload = bytes, .payload_len = payload, .padcnt = -1, .pad_bytes = -1,
	}; /* an ACK's AETH is all zeros: ACK, MSN 0 */
	static const unsigned char v4[2][4] = { { 192, 0, 2, 1 }, { 192, 0, 2, 2 } };
	static const unsigned char v6[2][16] = { { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
						 { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 } };

	memcpy(s.saddr, ipv6 ? v6[0] : v4[0], ipv6 ? 16 : 4);
	memcpy(s.daddr, ipv6 ? v6[1] : v4[1], ipv6 ? 16 : 4);
	srand(seed);
	for (unsigned int i = 0; i < payload; i++)
		bytes[i] = rand();
	memset(f, 0, sizeof(*f));
	f->payload = payload;
	f->ipv6 = ipv6;
	f->len = pkt_build(&s, f->data, sizeof(f->data), &f->lay);
	/* zlib's side runs over the same bytes the program's CRC covers */
	f->icrc_len = roce_icrc_input(f->data + f->lay.l3, f->len - f->lay.l3, f->icrc_in, sizeof(f->icrc_in));
}

/*
 * The thread stays on one CPU: the program's icrc_sample countdown is per
 * CPU, and the flows are meant to be those of one CPU's traffic.
 */
void pin_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	if (cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 16-bit ones' complement sum of an IPv4 header, folded. */
static __u16 ipv4_csum(const unsigned char *h)
{
	__u32 sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return ~sum;
}

/* The mirror's addresses: the switch's, which names the session, and the collector's. */
static const unsigned char mirror_v4[2][4] = { { 198, 51, 100, 1 }, { 198, 51, 100, 2 } };
static const unsigned char mirror_v6[2][16] = { { 0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 0x10 },
						{ 0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 1 } };

unsigned int erspan2_outer(unsigned char *h, bool ipv6, unsigned int session, __u32 inner_len)
{
	static const unsigned char eth[12] = { 2, 0, 0, 0, 0, 0x12, 2, 0, 0, 0, 0, 0x11 };
	unsigned int outer_len = ipv6 ? ERSPAN2_OVERHEAD + 20 : ERSPAN2_OVERHEAD;
	/* GRE with its sequence number and the ERSPAN II header, then the frame */
	__u32 l4 = 8 + 8 + inner_len;

	memset(h, 0, outer_len);
	memcpy(h, eth, sizeof(eth));
	put16(h + 12, ipv6 ? 0x86DD : 0x0800);
	h += 14;
	if (ipv6) {
		h[0] = 0x60;
		put16(h + 4, l4);
		h[6] = 47; /* GRE */
		h[7] = 64;
		memcpy(h + 8, mirror_v6, sizeof(mirror_v6));
		h += 40;
	} else {
		h[0] = 0x45;
		put16(h + 2, 20 + l4);
		h[6] = 0x40; /* DF */
		h[8] = 64;
		h[9] = 47; /* GRE */
		memcpy(h + 12, mirror_v4, sizeof(mirror_v4));
		put16(h + 10, ipv4_csum(h));
		h += 20;
	}
	put16(h, 0x1000); /* S: the sequence number follows, 0 until the copy is numbered */
	put16(h + 2, 0x88BE);
	put16(h + 8, 1 << 12); /* ERSPAN version 1, VLAN 0 */
	put16(h + 10, session & 0x3FF);
	return outer_len;
}

int frame_wrap_erspan2(struct frame *f, unsigned int session)
{
	if (f->len + ERSPAN2_OVERHEAD > sizeof(f->data))
		return -1;
	memmove(f->data + ERSPAN2_OVERHEAD, f->data, f->len);
	f->len += erspan2_outer(f->data, false, session, f->len);
	return 0;
}
