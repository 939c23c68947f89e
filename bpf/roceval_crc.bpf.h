/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The ICRC's CRC-32 (the Ethernet/zlib polynomial) in BPF, which has no CRC
 * helper or kfunc.  Table lookups cost BPF about five instructions each (no
 * scaled-index addressing), so the bulk uses none: it is table-free, after
 * the Chorba method (Sam Russell, 2024), and only the last five words go
 * through slicing-by-8 tables.
 *
 * Chorba: Q(x) = x^300 + x^155 + x^117 + x^89 + 1 is a multiple of the
 * CRC-32 polynomial, so adding Q times any power of x to the message leaves
 * its CRC unchanged.  Chosen to cancel one 64-bit word, that addition clears
 * the word and flips the bits 145, 183, 211 and 300 bits further on (bit
 * order as the reflected CRC reads them: little-endian words, LSB first).
 * Going front to back, every word but the last five is cleared so, with
 * the pending flips of the next five words held in registers: 22
 * instructions of loads, shifts and XORs per 8 bytes, and no stores.
 *
 * The input is laid out so there is no tail to handle.  With the register
 * starting at 0 instead of ~0, leading zero bytes change nothing, and
 * starting at ~0 equals starting at 0 with the first four message bytes
 * inverted.  The ICRC message starts with eight 0xFF bytes, so
 *   ICRC = ~crc0(00 00 00 00 FF FF FF FF datagram) = ~crc0(zeros, FF x 4, datagram)
 * and the datagram is copied where its end (without the ICRC) falls on a
 * CRC_LANE boundary, after enough zeros to start on one: the CRC then runs
 * over whole 64-byte lanes only.  icrc_layout() below computes the place.
 * With init 0 the CRC is linear in the message, which Chorba needs: the
 * cleared words are leading zeros, so the CRC of the message is that of
 * its last five words as the flips left them.
 *
 * The bulk runs in bpf_loop() callbacks of 512-byte blocks, so the
 * verifier checks a block once instead of once per iteration: 9000-byte
 * frames stay well inside its budget.  One more callback does the 0-7
 * lanes after the last block and the last lane.
 */
#ifndef ROCEVAL_CRC_BPF_H
#define ROCEVAL_CRC_BPF_H

#include "crc32_table.h"

#define CRC_LANE 64	/* the layout's unit: the CRC runs over whole lanes */
#define CRC_LANE_WORDS (CRC_LANE / 8)
#define CRC_BLOCK_LANES 8 /* per crc_block_cb() */
/* Words the Chorba pass leaves for the tables: the reach of its farthest flip, 300 bits. */
#define CRC_TAIL_WORDS 5
/* Zeroed ahead of the datagram: the largest lead-in, CRC_LANE - 1 + 4 bytes, in words. */
#define CRC_LEAD_WORDS 9

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the CRC reads the message as little-endian words"
#endif

/* One lookup of slicing-by-8 from a data byte in memory: entry p[off] of row `row`. */
#define CRC_LOOK_MEM(dst, off, row)                                                       \
	"%[" dst "] = *(u8 *)(%[p] + %[" off "]); %[" dst "] <<= 2; %[" dst "] += %[t];"  \
	"%[" dst "] = *(u32 *)(%[" dst "] + " #row " * 1024);"

/*
 * Feeds the 8 bytes at p + off to register crc with slicing-by-8.  The
 * register is XORed into the first four bytes in place (the scratch copy
 * is ours to change), so that every index is a byte load: four
 * instructions and an XOR per byte, where extracting it from a register
 * takes five and an XOR.  Assembly because BPF has no base + index
 * addressing and clang, left alone, keeps every row's address in a
 * register of its own and spills.
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

/* Flips pending on the next CRC_TAIL_WORDS words: a[0] on the word read next. */
struct chorba {
	__u64 a[CRC_TAIL_WORDS];
};

/*
 * Clears the word at p + off of the message: XORs it, with the flips
 * pending on it, into the bits 145, 183, 211 and 300 further on, and moves
 * the pending flips on by a word.  Assembly so that two pairs of shifts
 * each share one, (w << 17) ^ (w << 55) = (w ^ w << 38) << 17 and the
 * same rightwards, which clang undoes: 22 instructions a word, not 24.
 */
#define chorba_word(c_, p_, off_)                                                          \
	({                                                                                 \
		__u64 __w, __t;                                                            \
		asm("%[w] = *(u64 *)(%[p] + %[o]); %[w] ^= %[a0];"                         \
		    "%[t] = %[w]; %[t] <<= 38; %[t] ^= %[w]; %[t] <<= 17; %[a2] ^= %[t];"  \
		    "%[t] = %[w]; %[t] >>= 38; %[t] ^= %[w]; %[t] >>= 9; %[a3] ^= %[t];"   \
		    "%[t] = %[w]; %[t] <<= 19; %[a3] ^= %[t];"                             \
		    "%[t] = %[w]; %[t] >>= 45; %[a4] ^= %[t];"                             \
		    "%[t] = %[w]; %[t] <<= 44; %[a4] ^= %[t];"                             \
		    "%[w] >>= 20;"                                                         \
		    : [w] "=&r"(__w), [t] "=&r"(__t), [a2] "+r"((c_).a[2]),                \
		      [a3] "+r"((c_).a[3]), [a4] "+r"((c_).a[4])                           \
		    : [a0] "r"((c_).a[0]), [p] "r"(p_), [o] "i"(off_)                      \
		    : "memory");                                                           \
		(c_).a[0] = (c_).a[1];                                                     \
		(c_).a[1] = (c_).a[2];                                                     \
		(c_).a[2] = (c_).a[3];                                                     \
		(c_).a[3] = (c_).a[4];                                                     \
		(c_).a[4] = __w;                                                           \
	})

struct crc_state {
	__u8 *buf;
	__u32 blocks; /* bytes in whole blocks, from the start */
	__u32 lanes;  /* lanes after them, the last included (1-8) */
	struct chorba c;
	__u32 crc;
};

/* Block i of CRC_BLOCK_LANES lanes: the Chorba pass alone. */
static long crc_block_cb(__u32 i, struct crc_state *st)
{
	const __u8 *p = st->buf + ((i * CRC_BLOCK_LANES * CRC_LANE) & ROCEVAL_SCRATCH_MASK);
	struct chorba c = st->c;

#pragma unroll
	for (int k = 0; k < CRC_BLOCK_LANES * CRC_LANE_WORDS; k++)
		chorba_word(c, p, k * 8);
	st->c = c;
	return 0;
}

/*
 * What follows the blocks: 0-7 lanes through the Chorba pass, then the
 * last lane, whose last CRC_TAIL_WORDS words, with the flips pending on
 * them, go through the tables from a register of 0.
 */
static long crc_tail_cb(__u32 i, struct crc_state *st)
{
	__u8 *p = st->buf + (st->blocks & ROCEVAL_SCRATCH_MASK);
	const __u8 *tab = crc_tables();
	struct chorba c = st->c;
	__u32 n = st->lanes;
	__u64 crc = 0;

#pragma unroll
	for (int l = 0; l < CRC_BLOCK_LANES - 1; l++) {
		if (l + 1 >= n)
			break;
#pragma unroll
		for (int k = 0; k < CRC_LANE_WORDS; k++)
			chorba_word(c, p, k * 8);
		p += CRC_LANE;
	}
#pragma unroll
	for (int k = 0; k < CRC_LANE_WORDS - CRC_TAIL_WORDS; k++)
		chorba_word(c, p, k * 8);
#pragma unroll
	for (int k = 0; k < CRC_TAIL_WORDS; k++)
		((__u64 *)p)[CRC_LANE_WORDS - CRC_TAIL_WORDS + k] ^= c.a[k];
#pragma unroll
	for (int k = CRC_LANE_WORDS - CRC_TAIL_WORDS; k < CRC_LANE_WORDS; k++)
		crc_word(tab, p, k * 8, crc);
	st->crc = crc;
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
 * prepared in area[0, len); len is a multiple of CRC_LANE, at least one
 * lane.  Leaves the message changed.
 */
static __always_inline __u32 roceval_icrc(__u8 *area, __u32 len)
{
	__u32 blocks = (len - CRC_LANE) / (CRC_BLOCK_LANES * CRC_LANE);
	struct crc_state st = {
		.buf = area,
		.blocks = blocks * CRC_BLOCK_LANES * CRC_LANE,
		.lanes = len / CRC_LANE - blocks * CRC_BLOCK_LANES,
	};

	bpf_loop(blocks, crc_block_cb, &st, 0);
	bpf_loop(1, crc_tail_cb, &st, 0);
	return ~st.crc;
}

/* The stored ICRC: least-significant byte first. */
static __always_inline __u32 roceval_load_le32(const __u8 *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return *(const __u32 *)p;
#else
	return __builtin_bswap32(*(const __u32 *)p);
#endif
}

#endif /* ROCEVAL_CRC_BPF_H */
