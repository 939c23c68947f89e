// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The oracle: an independent reading of the wire format and of the ICRC's masking (IBA A17.4.2). */
#include <string.h>
#include <zlib.h>

#include "datapath.h"
#include "wire.h"

/* The ICRC of the datagram at l3 (IBA A17.4.2; a RoCEv1 GRH masked as IPv6 is, IBA A16). */
static uint32_t oracle_icrc(const uint8_t *l3, const struct expect *e)
{
	static uint8_t buf[8 + 65536];
	uint8_t *ip = buf + 8, *udp = ip + e->iphl;

	memset(buf, 0xFF, 8);
	memcpy(ip, l3, e->dlen);
	if (e->ipv6) {
		ip[0] |= 0x0F;
		ip[1] = ip[2] = ip[3] = 0xFF;
		ip[7] = 0xFF;
	} else {
		ip[1] = ip[8] = ip[10] = ip[11] = 0xFF;
	}
	if (e->v1) {
		ip[40 + 4] = 0xFF;
	} else {
		udp[6] = udp[7] = 0xFF;
		udp[8 + 4] = 0xFF;
	}
	return crc32(0, buf, 8 + e->dlen - 4);
}

/* IPv4 at off carrying UDP: the UDP header's offset, else 0. */
static uint32_t expect_ipv4(const uint8_t *d, uint32_t len, uint32_t off, struct expect *e, uint32_t *iplen)
{
	if (off + 20 > len || d[off] >> 4 != 4 || (d[off] & 15) < 5 || d[off + 9] != 17)
		return 0;
	if (get16(d + off + 6) & 0x1FFF)
		return 0; /* a later fragment has no UDP header */
	e->iphl = (d[off] & 15) * 4;
	e->fragment = get16(d + off + 6) & 0x2000;
	e->ce = (d[off + 1] & 3) == 3;
	*iplen = get16(d + off + 2);
	return off + e->iphl;
}

/* IPv6 at off, UDP after the fixed header or a first-fragment header: as expect_ipv4(). */
static uint32_t expect_ipv6(const uint8_t *d, uint32_t len, uint32_t off, struct expect *e, uint32_t *iplen)
{
	uint32_t l4 = off + 40;
	uint8_t nh;

	if (off + 40 > len || d[off] >> 4 != 6)
		return 0;
	e->ipv6 = true;
	e->iphl = 40;
	nh = d[off + 6];
	e->ce = ((d[off + 1] >> 4) & 3) == 3;
	*iplen = 40 + get16(d + off + 4);
	if (nh == 44) {
		if (l4 + 16 > len || (get16(d + l4 + 2) & 0xFFF8))
			return 0;
		nh = d[l4];
		l4 += 8;
		e->fragment = true;
	}
	return nh == 17 ? l4 : 0;
}

/*
 * Lengths are judged against what the frame had on the wire (`wire`, from
 * off on); a datagram the frame holds less of than they say is snapped.
 */
static bool whole(uint32_t len, uint32_t off, struct expect *e)
{
	e->snapped = e->dlen > len - off;
	return !e->snapped;
}

/* A RoCEv1 GRH at off; true when its lengths let the ICRC be checked. */
static bool expect_grh(const uint8_t *d, uint32_t len, uint32_t wire, uint32_t off, struct expect *e)
{
	uint32_t iplen;

	if (off + 40 > len || d[off] >> 4 != 6 || d[off + 6] != 0x1B)
		return false;
	e->roce = e->ipv6 = e->v1 = true;
	e->iphl = 40;
	iplen = 40 + get16(d + off + 4);
	if (iplen > wire - off || iplen - 40 < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		e->length_bad = true;
		return false;
	}
	e->dlen = iplen;
	return whole(len, off, e);
}

/* UDP at l4: RoCEv2 when to its port; true when the lengths let the ICRC be checked. */
static bool expect_udp(const uint8_t *d, uint32_t len, uint32_t wire, uint32_t off, uint32_t l4, uint32_t iplen,
		       struct expect *e)
{
	uint32_t udplen;

	if (l4 + 8 > len || get16(d + l4 + 2) != ROCE_UDP_PORT)
		return false;
	e->roce = true;
	if (e->fragment)
		return false;
	udplen = get16(d + l4 + 4);
	if (iplen > wire - off || iplen < e->iphl + 8 || udplen < 8 || udplen > iplen - e->iphl ||
	    udplen - 8 < ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		e->length_bad = true;
		return false;
	}
	e->dlen = e->iphl + udplen;
	return whole(len, off, e);
}

static void expect_icrc(const uint8_t *d, uint32_t off, struct expect *e)
{
	const uint8_t *ic = d + off + e->dlen - 4;
	uint32_t found = ic[0] | ic[1] << 8 | ic[2] << 16 | (uint32_t)ic[3] << 24;

	if (e->dlen > ROCEVAL_MAX_DATAGRAM)
		e->too_big = true;
	else
		e->icrc_ok = oracle_icrc(d + off, e) == found;
}

/*
 * A MAC control frame (EtherType 0x8808) with its opcode at off: PFC when the
 * opcode is 0x0101 and the class-enable vector's reserved high byte is 0,
 * malformed when too short for its opcode (2 bytes; PFC's 20), else another
 * opcode (mirrors-and-congestion.md, IEEE 802.1Qbb).
 */
static int expect_mac_control(const uint8_t *d, uint32_t len, uint32_t off)
{
	if (off + 2 > len)
		return TOTAL_MAC_CONTROL_MALFORMED;
	if (get16(d + off) != 0x0101)
		return TOTAL_MAC_CONTROL_OTHER;
	if (off + 20 > len || d[off + 2])
		return TOTAL_MAC_CONTROL_MALFORMED;
	return TOTAL_PFC_FRAMES;
}

/* A frame of `len` bytes, `wire` on the wire, as a bare one: RoCE, MAC control or neither. */
static void expect_bare(const uint8_t *d, uint32_t len, uint32_t wire, struct expect *e)
{
	uint32_t off = 14, l4, proto, iplen = 0;

	memset(e, 0, sizeof(*e));
	e->mac_control = -1;
	e->len = len;
	if (len < 14)
		return;
	proto = get16(d + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8); i++) {
		if (off + 4 > len)
			return;
		proto = get16(d + off + 2);
		off += 4;
	}
	e->l3 = off;
	if (proto == 0x8808) {
		e->mac_control = expect_mac_control(d, len, off);
		return;
	}
	if (proto == 0x8915) {
		if (expect_grh(d, len, wire, off, e))
			expect_icrc(d, off, e);
		return;
	}
	if (proto == 0x0800)
		l4 = expect_ipv4(d, len, off, e, &iplen);
	else if (proto == 0x86DD)
		l4 = expect_ipv6(d, len, off, e, &iplen);
	else
		return;
	if (l4 && expect_udp(d, len, wire, off, l4, iplen, e))
		expect_icrc(d, off, e);
}

/* A frame no RoCE and no MAC control: the mirror it may be, read from its outer headers. */
static int expect_outer(const uint8_t *d, uint32_t wire, const struct expect *e, struct mirror_read *m)
{
	if (e->roce || e->mac_control >= 0 || !e->l3)
		return MIRROR_NONE;
	return mirror_read(d, e->len, wire, e->l3, m);
}

/*
 * A mirrored frame is judged by its inner frame, taken apart once: one that
 * is itself a mirror's is nested (or malformed), and no RoCE.  A frame the
 * switch cut (T bit) has an unknown length on the wire.
 */
void expect_frame(const uint8_t *d, uint32_t len, struct expect *e)
{
	struct mirror_read m, nested;
	uint32_t kept;

	expect_bare(d, len, len, e);
	switch (expect_outer(d, len, e, &m)) {
	case MIRROR_NONE:
		return;
	case MIRROR_READ_BAD:
		e->mirror_malformed = true;
		e->outer = m;
		return;
	}
	kept = m.end < len ? m.end : len;
	expect_bare(d + m.at, kept - m.at, m.truncated ? UINT32_MAX : m.end - m.at, e);
	switch (expect_outer(d + m.at, m.truncated ? UINT32_MAX : m.end - m.at, e, &nested)) {
	case MIRROR_NONE:
		break;
	case MIRROR_READ_BAD:
		e->mirror_malformed = true;
		break;
	default:
		e->mirror_nested = true;
	}
	e->outer = m;
	e->base = m.at;
}

void fix_icrc(struct frame *f)
{
	struct expect e;
	uint32_t crc;
	uint8_t *ic;

	expect_frame(f->d, f->len, &e);
	if (!e.roce || e.fragment || e.length_bad || e.too_big || e.snapped)
		return;
	crc = oracle_icrc(f->d + e.base + e.l3, &e);
	ic = f->d + e.base + e.l3 + e.dlen - 4;
	ic[0] = crc;
	ic[1] = crc >> 8;
	ic[2] = crc >> 16;
	ic[3] = crc >> 24;
	note(f, "+icrc");
}
