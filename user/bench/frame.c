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

unsigned int erspan2_outer(unsigned char *h, bool ipv6, unsigned int session, const unsigned char *frame, __u32 len)
{
	struct gen_encap e = { .kind = MIRROR_ERSPAN2, .family = ipv6 ? 6 : 4, .session = session };
	unsigned char *out = malloc(GEN_ENCAP_ROOM + len);
	unsigned int outer_len;

	if (!out)
		return 0;
	outer_len = gen_encap_wrap(&e, frame, len, out, 0) - len;
	memcpy(h, out, outer_len);
	free(out);
	return outer_len;
}

int frame_wrap_erspan2(struct frame *f, unsigned int session)
{
	unsigned char outer[ERSPAN2_OVERHEAD];

	if (f->len + ERSPAN2_OVERHEAD > sizeof(f->data))
		return -1;
	if (erspan2_outer(outer, false, session, f->data, f->len) != ERSPAN2_OVERHEAD)
		return -1;
	memmove(f->data + ERSPAN2_OVERHEAD, f->data, f->len);
	memcpy(f->data, outer, ERSPAN2_OVERHEAD);
	f->len += ERSPAN2_OVERHEAD;
	return 0;
}
