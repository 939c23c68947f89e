/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * CRC-32 (the Ethernet/zlib polynomial) over the per-CPU scratch buffer,
 * slicing-by-8 over 8-byte-aligned 64-bit words.  The bulk runs in a
 * bpf_loop() callback so the verifier checks the block once instead of once
 * per iteration, which keeps 9000-byte frames well inside its budget.
 */
#ifndef ROCEVAL_CRC_BPF_H
#define ROCEVAL_CRC_BPF_H

#include "crc32_table.h"

#define CRC_BLOCK 64

typedef const __u32 crc_table_t[256];

/*
 * t is crc32_slice passed through a variable clang cannot see through:
 * otherwise it re-materialises the table's 64-bit address (ld_imm64) for
 * every one of the eight lookups.
 */
static __always_inline __u32 crc32_word(crc_table_t *t, __u32 crc, __u64 w)
{
	__u32 lo = crc ^ (__u32)w;
	__u32 hi = w >> 32;

	return t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
	       t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
}

static __always_inline crc_table_t *crc_tables(void)
{
	crc_table_t *t = crc32_slice;

	barrier_var(t);
	return t;
}

struct crc_state {
	const __u8 *buf;
	__u32 crc;
};

static long crc_block_cb(__u32 i, struct crc_state *st)
{
	/* Masking with a power of two minus one bounds the offset without changing it. */
	__u32 off = (i * CRC_BLOCK) & ROCEVAL_SCRATCH_MASK;
	const __u64 *w = (const __u64 *)(st->buf + off);
	crc_table_t *t = crc_tables();
	__u32 crc = st->crc;

#pragma unroll
	for (int k = 0; k < CRC_BLOCK / 8; k++) {
		crc = crc32_word(t, crc, w[k]);
		/* Stops clang hoisting every load of the block up front, which
		 * runs out of BPF's ten registers and spills to the stack. */
		asm volatile("" ::: "memory");
	}
	st->crc = crc;
	return 0;
}

/* buf is 8-byte aligned; len <= ROCEVAL_SCRATCH_SIZE. Returns what zlib's crc32(0, buf, len) does. */
static __always_inline __u32 roceval_crc32(const __u8 *buf, __u32 len)
{
	struct crc_state st = { .buf = buf, .crc = 0xFFFFFFFFu };
	__u32 nblocks = (len & ROCEVAL_SCRATCH_MASK) / CRC_BLOCK;
	crc_table_t *t = crc_tables();
	__u32 off, words, rem, crc;

	bpf_loop(nblocks, crc_block_cb, &st, 0);
	crc = st.crc;
	off = nblocks * CRC_BLOCK;
	/*
	 * The rest is under one block: whole words in steps of 4, 2 and 1,
	 * then 4, 2 and 1 bytes.  Straight-line steps rather than loops, so the
	 * verifier sees a handful of paths instead of one per remaining length.
	 */
	words = ((len - off) / 8) & (CRC_BLOCK / 8 - 1);
	if (words & 4) {
		const __u64 *w = (const __u64 *)(buf + (off & ROCEVAL_SCRATCH_MASK));

		crc = crc32_word(t, crc, w[0]);
		crc = crc32_word(t, crc, w[1]);
		crc = crc32_word(t, crc, w[2]);
		crc = crc32_word(t, crc, w[3]);
		off += 32;
	}
	if (words & 2) {
		const __u64 *w = (const __u64 *)(buf + (off & ROCEVAL_SCRATCH_MASK));

		crc = crc32_word(t, crc, w[0]);
		crc = crc32_word(t, crc, w[1]);
		off += 16;
	}
	if (words & 1) {
		crc = crc32_word(t, crc, *(const __u64 *)(buf + (off & ROCEVAL_SCRATCH_MASK)));
		off += 8;
	}
	rem = len & 7;
	if (rem & 4) {
		__u32 c = crc ^ *(const __u32 *)(buf + (off & ROCEVAL_SCRATCH_MASK));

		crc = t[3][c & 0xff] ^ t[2][(c >> 8) & 0xff] ^
		      t[1][(c >> 16) & 0xff] ^ t[0][c >> 24];
		off += 4;
	}
	if (rem & 2) {
		crc = t[0][(crc ^ buf[off & ROCEVAL_SCRATCH_MASK]) & 0xff] ^ (crc >> 8);
		crc = t[0][(crc ^ buf[(off + 1) & ROCEVAL_SCRATCH_MASK]) & 0xff] ^ (crc >> 8);
		off += 2;
	}
	if (rem & 1)
		crc = t[0][(crc ^ buf[off & ROCEVAL_SCRATCH_MASK]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* The stored ICRC: least-significant byte first. */
static __always_inline __u32 roceval_load_le32(const __u8 *buf, __u32 off)
{
	const __u8 *p = buf + (off & ROCEVAL_SCRATCH_MASK);

	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24;
}

#endif /* ROCEVAL_CRC_BPF_H */
