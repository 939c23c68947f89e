/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_ICRC_H
#define ROCEVAL_ICRC_H

#include <stddef.h>
#include <stdint.h>

/*
 * The RoCEv2 ICRC in userspace (IBA Annex A17.4.2), an implementation
 * independent of the BPF one so each checks the other: zlib's crc32() over
 * 8 bytes of 0xFF, the IP and UDP headers and the BTH with their variant
 * fields set to all ones, then the rest of the datagram.
 *
 * `ip` is a whole IP datagram as its IP header sizes it: IPv4 (options
 * allowed) or IPv6 with UDP right after the fixed header, the ICRC in its
 * last 4 bytes.  The version nibble says which.
 */

/* The value zlib's crc32() returns, or -EINVAL when `ip` is not a datagram the ICRC covers. */
int roce_icrc(const uint8_t *ip, size_t len, uint32_t *icrc);
/*
 * What the ICRC is zlib's crc32() of, as one buffer: 8 bytes of 0xFF, then
 * the datagram without its ICRC, variant fields masked.  Its length, or
 * -EINVAL (not a datagram the ICRC covers, or `cap` too small).
 */
long roce_icrc_input(const uint8_t *ip, size_t len, uint8_t *out, size_t cap);
/* Computes the ICRC and stores it in the last 4 bytes of the datagram. */
int roce_icrc_fill(uint8_t *ip, size_t len);

/* The ICRC travels least-significant byte first. */
static inline void roce_icrc_store(uint8_t *p, uint32_t icrc)
{
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
}

static inline uint32_t roce_icrc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
