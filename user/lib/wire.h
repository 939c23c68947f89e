/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Big-endian (network order) field access for building and decoding frames. */
#ifndef ROCEVAL_WIRE_H
#define ROCEVAL_WIRE_H

#include <stdint.h>

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)p[0] << 8 | p[1];
}

static inline uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

#endif
