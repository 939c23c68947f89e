/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The ICRC's CRC-32 (the Ethernet/zlib polynomial) in BPF, which has no CRC
 * helper.  Slicing-by-8 over 64-bit words in four independent streams,
 * combined with zero-advance tables (CRC is linear, as in zlib's
 * crc32_combine), so the CPU overlaps four dependency chains: one stream
 * alone is twice as slow, and the per-byte instruction count, not the
 * number of streams, is what limits four.
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
 * The bulk runs in bpf_loop() callbacks of 512-byte blocks (each stream
 * two lanes) so the verifier checks a block once instead of once per
 * iteration: 9000-byte frames stay well inside its budget.  The 1-7 lanes
 * in front of the first block go first, in one callback.
 */
#ifndef ROCEVAL_CRC_BPF_H
#define ROCEVAL_CRC_BPF_H

#include "crc32_table.h"

#define CRC_LANE 64	/* the layout's unit: the CRC runs over whole lanes */
#define CRC_ROW 1024	/* bytes per table row in crc32_tables */
/* Rows advancing a register over n x CRC_LANE zero bytes (user/gen_crc_tables.c). */
#define CRC_ROW_ADV1 8
#define CRC_ROW_ADV2 12
#define CRC_ROW_ADV3 16
#define CRC_ROW_ADV4 20
#define CRC_ROW_ADV6 24
#define CRC_BLOCK_LANES 8 /* per crc_block_cb(): four streams of two lanes */
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

/* The register c after the zero bytes of rows `row` (one of CRC_ROW_ADV*). */
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
	__u32 off; /* bytes before the first block */
	__u32 crc;
};

/* n (1-4) lanes at p as n streams, continuing from register crc. */
#define crc_lanes(tab, p, n, crc)                                                          \
	({                                                                                 \
		__u64 __a = (crc), __b = 0, __c = 0, __d = 0;                              \
		_Pragma("unroll") for (int k = 0; k < CRC_LANE; k += 8)                    \
		{                                                                          \
			crc_word(tab, p, k, __a);                                          \
			if ((n) > 1)                                                       \
				crc_word(tab, p, k + CRC_LANE, __b);                       \
			if ((n) > 2)                                                       \
				crc_word(tab, p, k + 2 * CRC_LANE, __c);                   \
			if ((n) > 3)                                                       \
				crc_word(tab, p, k + 3 * CRC_LANE, __d);                   \
		}                                                                          \
		(n) == 1 ? __a                                                             \
		: (n) == 2 ? crc_advance(tab, __a, CRC_ROW_ADV1) ^ __b                     \
		: (n) == 3 ? crc_advance(tab, __a, CRC_ROW_ADV2) ^                         \
				     crc_advance(tab, __b, CRC_ROW_ADV1) ^ __c             \
			   : crc_advance(tab, __a, CRC_ROW_ADV3) ^                         \
				     crc_advance(tab, __b, CRC_ROW_ADV2) ^                 \
				     crc_advance(tab, __c, CRC_ROW_ADV1) ^ __d;            \
	})

/*
 * The 1-7 lanes in front of the first block (st->off bytes of them, at the
 * start), as up to four streams at a time: 5 lanes go as 2 then 3, so only
 * a frame of one lane has a lone stream.
 */
static long crc_head_cb(__u32 i, struct crc_state *st)
{
	__u8 *p = st->buf;
	const __u8 *tab = crc_tables();
	__u32 n = st->off / CRC_LANE;
	__u32 crc;

	if (n == 1)
		crc = crc_lanes(tab, p, 1, 0);
	else if (n == 2 || n == 5)
		crc = crc_lanes(tab, p, 2, 0);
	else if (n == 3 || n == 6)
		crc = crc_lanes(tab, p, 3, 0);
	else
		crc = crc_lanes(tab, p, 4, 0);
	if (n > 4)
		crc = crc_lanes(tab, p + ((n - 3) & 7) * CRC_LANE, 3, crc);
	st->crc = crc;
	return 0;
}

/*
 * One block of CRC_BLOCK_LANES lanes: four streams over two lanes each,
 * then crc(A B C D) = adv6(crc(A)) ^ adv4(crc0(B)) ^ adv2(crc0(C)) ^ crc0(D).
 */
static long crc_block_cb(__u32 i, struct crc_state *st)
{
	__u8 *p = st->buf + ((st->off + i * CRC_BLOCK_LANES * CRC_LANE) & ROCEVAL_SCRATCH_MASK);
	const __u8 *tab = crc_tables();
	__u64 a = st->crc, b = 0, c = 0, d = 0;

#pragma unroll
	for (int k = 0; k < 2 * CRC_LANE; k += 8) {
		crc_word(tab, p, k, a);
		crc_word(tab, p, k + 2 * CRC_LANE, b);
		crc_word(tab, p, k + 4 * CRC_LANE, c);
		crc_word(tab, p, k + 6 * CRC_LANE, d);
	}
	st->crc = crc_advance(tab, a, CRC_ROW_ADV6) ^ crc_advance(tab, b, CRC_ROW_ADV4) ^
		  crc_advance(tab, c, CRC_ROW_ADV2) ^ d;
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
	struct crc_state st = { .buf = area, .off = lanes % CRC_BLOCK_LANES * CRC_LANE };

	bpf_loop(st.off != 0, crc_head_cb, &st, 0);
	bpf_loop(lanes / CRC_BLOCK_LANES, crc_block_cb, &st, 0);
	return ~st.crc;
}

/* The stored ICRC: least-significant byte first. */
static __always_inline __u32 roceval_load_le32(const __u8 *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24;
}

#endif /* ROCEVAL_CRC_BPF_H */
