/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data-path fuzzer's parts: seed frames (seeds.c), mutations
 * (mutate.c), the oracle that says what the program must count for a frame
 * (oracle.c), and the runner that pushes frames and checks (datapath.c).
 *
 * The frame builder and the oracle are deliberately independent of
 * user/lib's gen/pktgen.c and icrc.c: a misreading of the spec shared by the
 * validator and its test would otherwise pass unnoticed.
 */
#ifndef ROCEVAL_FUZZ_DATAPATH_H
#define ROCEVAL_FUZZ_DATAPATH_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "roceval.h"


#define MAX_FRAME 24576 /* beyond ROCEVAL_MAX_DATAGRAM, to reach the unchecked path */

/* Everything random comes from one stream seeded by -S, so a reported frame can be reproduced. */
extern uint64_t rng_state;

static inline uint64_t rnd(void)
{
	/* xorshift64*: deterministic across platforms, good enough to mutate frames */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static inline bool chance(uint32_t percent)
{
	return rnd_below(100) < percent;
}

struct frame {
	uint8_t d[MAX_FRAME];
	uint32_t len;
	char how[256]; /* the mutations applied, for the report */
};

/* Appends to the frame's list of mutations. */
void note(struct frame *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * mirror.c: the outer headers of a frame a switch mirrored, as
 * mirrors-and-congestion.md and docs/collector.md describe them.
 */
#define MIRROR_READ_BAD (-1)
struct mirror_read {
	int encap; /* enum roceval_mirror_encap; MIRROR_NONE, or MIRROR_READ_BAD for malformed */
	uint32_t l3, l4; /* the outer IP header and its GRE or UDP header */
	uint32_t at, end; /* the inner frame, and the outer datagram's end */
	bool v6, udp, has_seq, truncated;
	uint32_t seq, session;
	uint8_t source[16];
};

/*
 * What the outer headers at l3 (after the Ethernet header and its tags, `proto`
 * the EtherType) of a frame that is no RoCE say; `wire` its length on the
 * wire (UINT32_MAX unknown).
 */
int mirror_read(const uint8_t *d, uint32_t len, uint32_t wire, uint32_t l3, struct mirror_read *m);

/* oracle.c: what the program must count for a frame, read independently of it. */
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
	int mac_control; /* the total a MAC control frame moves (TOTAL_PFC_FRAMES...), else -1 */
	bool snapped; /* the lengths say more than the frame holds, whose length on the wire is unknown */
	/*
	 * A mirrored frame: the fields above are its inner frame's, `base` bytes
	 * in and `len` long; outer.encap MIRROR_NONE for a bare frame (base 0,
	 * len the frame's).  The mirror totals the frame moves, but for the
	 * session's, which mirror_session() tells.
	 */
	struct mirror_read outer;
	uint32_t base, len;
	bool mirror_malformed, mirror_nested;
};

void expect_frame(const uint8_t *d, uint32_t len, struct expect *e);
/*
 * The session of a mirrored frame the program has just counted, as its
 * table follows it: the frames its sequence numbers skipped, or *full when
 * the table had no room for it.
 */
void mirror_session(const struct expect *e, uint64_t *lost, bool *full);

/* Rewrites the ICRC of a frame from the lengths its headers claim, when they are usable. */
void fix_icrc(struct frame *f);

/* seeds.c: a valid frame for each transport/opcode pair. */
struct seed {
	uint8_t opcode;
	bool cm; /* a UD SEND_ONLY to QP1 carrying an RDMA CM MAD */
	bool pfc; /* not RoCE: a PFC pause frame (MAC control, IEEE 802.1Qbb) */
	bool ipv6;
	int nvlan;
	uint32_t pmtu;
	int encap; /* wrapped in a mirror (enum roceval_mirror_encap), 0 bare */
	bool outer_v6;
};

extern int nseeds;
extern struct seed seeds[512];
void make_seeds(void);
void build_seed(struct frame *f, const struct seed *sd);
/* mirror.c: f, a built seed, wrapped as a mirror session sends it (sd->encap). */
void mirror_wrap(struct frame *f, const struct seed *sd);

/* mutate.c: one random mutation of the frame. */
void mutate(struct frame *f);

#endif
