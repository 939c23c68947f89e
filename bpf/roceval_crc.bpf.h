/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The ICRC's CRC-32 (the Ethernet/zlib polynomial) in BPF, which has no CRC
 * helper.  Slicing-by-8 over 64-bit words in three independent streams,
 * combined with zero-advance tables (CRC is linear, as in zlib's
 * crc32_combine), so the CPU overlaps three dependency chains.
 *
 * The input is laid out so there is no tail to handle.  With the register
 * starting at 0 instead of ~0, leading zero bytes change nothing, and
 * starting at ~0 equals starting at 0 with the first four message bytes
 * inverted.  The ICRC message starts with eight 0xFF bytes, so
 *   ICRC = ~crc0(00 00 00 00 FF FF FF FF datagram) = ~crc0(zeros, FF x 4, datagram)
 * and the datagram is copied where its end (without the ICRC) falls on a
 * CRC_LANE boundary, after enough zeros to start on one: the CRC then runs
 * over whole 64-byte lanes only.  icrc_layout() below computes the place.
 *
 * The bulk runs in bpf_loop() callbacks so the verifier checks a block once
 * instead of once per iteration: 9000-byte frames stay well inside its
 * budget.
 */
#ifndef ROCEVAL_CRC_BPF_H
#define ROCEVAL_CRC_BPF_H

#include "crc32_table.h"

#define CRC_LANE 64	/* bytes one stream handles per step */
#define CRC_ROW 1024	/* bytes per table row in crc32_tables */
#define CRC_ROW_SHIFT1 8  /* rows advancing a register over CRC_LANE zero bytes */
#define CRC_ROW_SHIFT2 12 /* ... over 2 * CRC_LANE */
/* Zeroed ahead of the datagram: the largest lead-in, CRC_LANE - 1 + 4 bytes, in words. */
#define CRC_LEAD_WORDS 9

_Static_assert(CRC32_TABLE_LANE == CRC_LANE, "user/gen_crc_tables.c LANE differs from CRC_LANE");

/*
 * One table lookup: entry (x_ >> shift_) & 0xff of row row_.  Assembly
 * because BPF has no base + index addressing and clang, left alone, keeps
 * every row's address in a register of its own, runs out of BPF's ten
 * and spills.  These are the five instructions a lookup needs: the index
 * comes out pre-scaled by the entry size (shift 2 less, mask 0xff << 2)
 * and every row is a constant load offset from one base register.
 */
#define crc_look(tab_, x_, shift_, row_)                                                         \
	({                                                                                   \
		__u64 __v;                                                                   \
		if ((shift_) >= 2)                                                            \
			asm("%[v] = %[x]; %[v] >>= %[s]; %[v] &= 1020; %[v] += %[t];"        \
			    "%[v] = *(u32 *)(%[v] + %[o])"                                   \
			    : [v] "=&r"(__v)                                                 \
			    : [x] "r"(x_), [t] "r"(tab_), [s] "i"((shift_) - 2),                 \
			      [o] "i"((row_) * CRC_ROW));                                     \
		else                                                                         \
			asm("%[v] = %[x]; %[v] <<= 2; %[v] &= 1020; %[v] += %[t];"            \
			    "%[v] = *(u32 *)(%[v] + %[o])"                                   \
			    : [v] "=&r"(__v)                                                 \
			    : [x] "r"(x_), [t] "r"(tab_), [o] "i"((row_) * CRC_ROW));           \
		(__u32)__v;                                                                  \
	})

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "crc_word() XORs the register into the data as a little-endian word"
#endif

/* One lookup of slicing-by-8 from a data byte in memory: entry p[off] of row `row`. */
#define CRC_LOOK_MEM(dst, off, row)                                                       \
	"%[" dst "] = *(u8 *)(%[p] + %[" off "]); %[" dst "] <<= 2; %[" dst "] += %[t];"  \
	"%[" dst "] = *(u32 *)(%[" dst "] + " #row " * 1024);"

/*
 * Feeds the 8 bytes at p + off to register crc.  The register is XORed
 * into the first four bytes in place (the scratch copy is ours to change),
 * so that every index is a byte load: four instructions and an XOR per
 * byte, where extracting it from a register takes five and an XOR.  The
 * CPU forwards the 4-byte store to the byte loads.
 */
#define crc_word(tab_, p_, off_, crc_)                                                     \
	({                                                                                 \
		__u64 __v;                                                                 \
		asm volatile("%[v] = *(u32 *)(%[p] + %[o0]); %[v] ^= %[c];"                \
			     "*(u32 *)(%[p] + %[o0]) = %[v];"                              \
			     CRC_LOOK_MEM("c", "o0", 7)                                    \
			     CRC_LOOK_MEM("v", "o1", 6) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o2", 5) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o3", 4) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o4", 3) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o5", 2) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o6", 1) "%[c] ^= %[v];"                    \
			     CRC_LOOK_MEM("v", "o7", 0) "%[c] ^= %[v];"                    \
			     : [c] "+r"(crc_), [v] "=&r"(__v)                              \
			     : [p] "r"(p_), [t] "r"(tab_), [o0] "i"(off_), [o1] "i"((off_) + 1), \
			       [o2] "i"((off_) + 2), [o3] "i"((off_) + 3), [o4] "i"((off_) + 4), \
			       [o5] "i"((off_) + 5), [o6] "i"((off_) + 6), [o7] "i"((off_) + 7) \
			     : "memory");                                                  \
	})

/* The register c after further zero bytes: CRC_LANE of them from row CRC_ROW_SHIFT1, 2 x from CRC_ROW_SHIFT2. */
#define crc_advance(tab, c, row)                                                       \
	(crc_look(tab, c, 0, row) ^ crc_look(tab, c, 8, (row) + 1) ^                      \
	 crc_look(tab, c, 16, (row) + 2) ^ crc_look(tab, c, 24, (row) + 3))

/*
 * crc32_tables through a variable clang cannot see through: otherwise it
 * re-materialises the table's 64-bit address (ld_imm64) at every lookup.
 */
static __always_inline const __u8 *crc_tables(void)
{
	const __u8 *t = (const __u8 *)crc32_tables;

	barrier_var(t);
	return t;
}

struct crc_state {
	__u8 *buf;
	__u32 off; /* bytes before the first triple of lanes */
	__u32 crc;
};

/*
 * The one or two lanes in front of the first triple (st->off bytes of
 * them, at the start), as that many streams.
 */
static long crc_head_cb(__u32 i, struct crc_state *st)
{
	__u8 *p = st->buf;
	const __u8 *tab = crc_tables();
	__u64 a = 0, b = 0;

	if (st->off == CRC_LANE) {
#pragma unroll
		for (int k = 0; k < CRC_LANE; k += 8)
			crc_word(tab, p, k, a);
		st->crc = a;
		return 0;
	}
#pragma unroll
	for (int k = 0; k < CRC_LANE; k += 8) {
		crc_word(tab, p, k, a);
		crc_word(tab, p, k + CRC_LANE, b);
	}
	st->crc = crc_advance(tab, a, CRC_ROW_SHIFT1) ^ b;
	return 0;
}

/* Three lanes as three streams, then crc(A B C) = adv2(crc(A)) ^ adv1(crc0(B)) ^ crc0(C). */
static long crc_lanes_cb(__u32 i, struct crc_state *st)
{
	__u8 *p = st->buf + ((st->off + i * 3 * CRC_LANE) & ROCEVAL_SCRATCH_MASK);
	const __u8 *tab = crc_tables();
	__u64 a = st->crc, b = 0, c = 0;

#pragma unroll
	for (int k = 0; k < CRC_LANE; k += 8) {
		crc_word(tab, p, k, a);
		crc_word(tab, p, k + CRC_LANE, b);
		crc_word(tab, p, k + 2 * CRC_LANE, c);
	}
	st->crc = crc_advance(tab, a, CRC_ROW_SHIFT2) ^ crc_advance(tab, b, CRC_ROW_SHIFT1) ^ c;
	return 0;
}

/*
 * Where the ICRC input goes in `area` (8-byte aligned) for a datagram of
 * dlen bytes: returns the offset of its 8-byte LRH slot, and zeroes what
 * precedes the datagram there.  The caller copies the datagram 8 bytes
 * after the returned offset and calls icrc_mask().
 */
static __always_inline __u32 icrc_layout(__u8 *area, __u32 dlen)
{
	__u64 *z = (__u64 *)area;

#pragma unroll
	for (int i = 0; i < CRC_LEAD_WORDS; i++)
		z[i] = 0;
	/* so that the LRH slot and the datagram without its ICRC end on a lane */
	return -(ROCE_LRH_MASK_LEN + dlen - ROCE_ICRC_LEN) & (CRC_LANE - 1);
}

/*
 * zlib's crc32(0, msg, n) of the message icrc_layout() and icrc_mask()
 * prepared in area[0, len); len is a multiple of CRC_LANE.  Leaves the
 * message changed.
 */
static __always_inline __u32 roceval_icrc(__u8 *area, __u32 len)
{
	__u32 lanes = len / CRC_LANE;
	struct crc_state st = { .buf = area, .off = lanes % 3 * CRC_LANE };

	bpf_loop(st.off != 0, crc_head_cb, &st, 0);
	bpf_loop(lanes / 3, crc_lanes_cb, &st, 0);
	return ~st.crc;
}

/* The stored ICRC: least-significant byte first. */
static __always_inline __u32 roceval_load_le32(const __u8 *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24;
}

#endif /* ROCEVAL_CRC_BPF_H */
