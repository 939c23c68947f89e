/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* roceval bench: the frames it times, and what its per-frame runs and its live run share. */
#ifndef ROCEVAL_BENCH_FRAME_H
#define ROCEVAL_BENCH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "gen/generator.h"

#define OP_RC_SEND_ONLY 0x04
#define OP_RC_ACKNOWLEDGE 0x11
#define OP_RC_RDMA_WRITE_ONLY 0x0A
#define FRAME_MAX 8192
#define NCURVE 4 /* icrc_sample values on the cost curve */
#define BENCH_DSCP 26

/*
 * Single-frame runs (duplicate path), then the steady path with the
 * icrc_sample curve, its header path with every congestion setting on,
 * and the header path of the frame's ERSPAN II copies.
 */
enum { BASELINE, HEADERS, FULL, ZLIB, S_BASELINE, S_HEADERS, S_CURVE, S_CC = S_CURVE + NCURVE, S_M_BASELINE,
       S_M_HEADERS, NMEASURE };

struct frame {
	unsigned int payload;
	bool ipv6;
	size_t len;		/* Ethernet header to ICRC */
	struct pkt_layout lay;
	size_t icrc_len;	/* bytes the ICRC covers */
	unsigned char data[FRAME_MAX];
	unsigned char icrc_in[FRAME_MAX]; /* 8 x 0xFF and the masked datagram */
	double ns[NMEASURE];
	/* its ERSPAN II copies: their length, and what their session counted */
	size_t mirrored_len;
	__u64 mirrored_frames, mirrored_lost;
	bool mirrored_numbered;
};

/*
 * A valid frame the program takes its longest path through: RC SEND_ONLY
 * with `payload` bytes, or an RC ACK for payload 0 (the commonest frame
 * without one), with a correct ICRC.
 */
void frame_build(struct frame *f, unsigned int payload, bool ipv6, unsigned int seed);
/* The same with any opcode: a WRITE gets a RETH for its payload. */
void frame_build_op(struct frame *f, unsigned char opcode, unsigned int payload, bool ipv6, unsigned int seed);
/* An ERSPAN II mirror's outer headers: Ethernet, IPv4, GRE with its sequence number, ERSPAN II. */
#define ERSPAN2_OVERHEAD (14 + 20 + 8 + 8)
/* Where the GRE sequence number is in the wrapped frame. */
#define ERSPAN2_SEQ_AT (14 + 20 + 4)
/*
 * Writes at h the outer headers `roceval gen --encap erspan2` puts before the
 * len-byte frame: Ethernet, IPv4 or IPv6, GRE with its sequence number (0
 * until the copy is numbered), the ERSPAN II header of `session`.  Returns
 * their length, 0 when out of memory.
 */
unsigned int erspan2_outer(unsigned char *h, bool ipv6, unsigned int session, const unsigned char *frame, __u32 len);
/* Wraps the frame (IPv4 outer headers) as an ERSPAN II mirror of `session` sends it; -1 when it would not fit. */
int frame_wrap_erspan2(struct frame *f, unsigned int session);
/* Keeps the thread on one CPU, so its figures are one core's. */
void pin_cpu(void);
double median(double *v, int n);

#endif
