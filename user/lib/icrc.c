// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "icrc.h"
#include "roceval_proto.h"

/* The IP header's length when `ip` is a datagram the ICRC covers, else 0. */
static size_t datagram_iphl(const uint8_t *ip, size_t len)
{
	size_t iphl;

	if (len < 1)
		return 0;
	switch (ip[0] >> 4) {
	case 4:
		iphl = (ip[0] & 0x0F) * 4u;
		if (iphl < 20 || len < iphl || ip[9] != IPPROTO_UDP_NR)
			return 0;
		break;
	case 6:
		iphl = IPV6_HLEN;
		if (len < iphl || ip[6] != IPPROTO_UDP_NR)
			return 0;
		break;
	default:
		return 0;
	}
	return len < iphl + UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN ? 0 : iphl;
}

/* Sets the variant fields of the IP, UDP and BTH headers at `hdr` to all ones. */
static void mask_variant(uint8_t *hdr, size_t iphl)
{
	if (iphl == IPV6_HLEN) {
		hdr[0] |= 0x0F; /* traffic class and flow label */
		hdr[1] = hdr[2] = hdr[3] = 0xFF;
		hdr[7] = 0xFF; /* hop limit */
	} else {
		hdr[1] = 0xFF; /* TOS: DSCP and ECN */
		hdr[8] = 0xFF; /* TTL */
		hdr[10] = hdr[11] = 0xFF; /* header checksum */
	}
	hdr[iphl + 6] = hdr[iphl + 7] = 0xFF;	 /* UDP checksum */
	hdr[iphl + UDP_HLEN + 4] = 0xFF;	 /* BTH FECN, BECN, Resv6 */
}

int roce_icrc(const uint8_t *ip, size_t len, uint32_t *icrc)
{
	/* IPv4 with the longest options, UDP, BTH: the part that has masked fields */
	uint8_t hdr[60 + UDP_HLEN + ROCE_BTH_LEN];
	static const uint8_t lrh[ROCE_LRH_MASK_LEN] = { 0xFF, 0xFF, 0xFF, 0xFF,
							0xFF, 0xFF, 0xFF, 0xFF };
	size_t iphl = datagram_iphl(ip, len), hlen = iphl + UDP_HLEN + ROCE_BTH_LEN;
	uLong crc;

	if (!iphl)
		return -EINVAL;
	memcpy(hdr, ip, hlen);
	mask_variant(hdr, iphl);
	crc = crc32(0L, Z_NULL, 0);
	crc = crc32(crc, lrh, sizeof(lrh));
	crc = crc32(crc, hdr, hlen);
	crc = crc32(crc, ip + hlen, len - hlen - ROCE_ICRC_LEN);
	*icrc = (uint32_t)crc;
	return 0;
}

long roce_icrc_input(const uint8_t *ip, size_t len, uint8_t *out, size_t cap)
{
	size_t iphl = datagram_iphl(ip, len), n = ROCE_LRH_MASK_LEN + len - ROCE_ICRC_LEN;

	if (!iphl || n > cap)
		return -EINVAL;
	memset(out, 0xFF, ROCE_LRH_MASK_LEN);
	memcpy(out + ROCE_LRH_MASK_LEN, ip, len - ROCE_ICRC_LEN);
	mask_variant(out + ROCE_LRH_MASK_LEN, iphl);
	return n;
}

int roce_icrc_fill(uint8_t *ip, size_t len)
{
	uint32_t icrc;
	int err = roce_icrc(ip, len, &icrc);

	if (!err)
		roce_icrc_store(ip + len - ROCE_ICRC_LEN, icrc);
	return err;
}
